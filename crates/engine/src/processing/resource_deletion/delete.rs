use beeline_protocol::intent::{
    DecisionIntent, DecisionRequirementsIntent, FormIntent, ProcessIntent, ResourceDeletionIntent,
};
use beeline_protocol::value::{
    DecisionRequirementsRecord, FormRecord, ProcessRecord, ResourceDeletionRecord,
};
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::deployment::start_events;
use crate::processing::{CommandProcessor, ProcessingContext, distribution, value_of};

/// What a resource key names.
enum Resource {
    Process(ProcessRecord),
    DecisionRequirements(DecisionRequirementsRecord),
    Form(FormRecord),
}

/// `RESOURCE_DELETION DELETE`: deletes a process definition (refused while instances of it
/// run on this partition), a decision requirements graph with its decisions, or a form:
/// DELETING, the resource's own events, DELETED; then the same on every other partition
/// (command distribution), where a partition with running instances keeps refusing until
/// they have ended. Deleting the latest version of a process makes the version before it
/// the latest, with its start events; version numbers are never given again.
pub(crate) struct ResourceDeletionDeleteProcessor;

impl CommandProcessor for ResourceDeletionDeleteProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<ResourceDeletionRecord>(command)?.clone();
        let distributed = command.key > 0;
        let key = request.resource_key;
        // A resource of a tenant the caller may not act for is not there for it.
        let Some(resource) = find(ctx, key)?.filter(|resource| {
            command.is_authorized_for(match resource {
                Resource::Process(p) => &p.tenant_id,
                Resource::DecisionRequirements(d) => &d.tenant_id,
                Resource::Form(f) => &f.tenant_id,
            })
        }) else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!("Expected to delete resource but no resource found with key `{key}`"),
            );
            if distributed {
                distribution::acknowledge(ctx, command)?;
            }
            return Ok(());
        };
        let tenant_id = match &resource {
            Resource::Process(p) => p.tenant_id.clone(),
            Resource::DecisionRequirements(d) => d.tenant_id.clone(),
            Resource::Form(f) => f.tenant_id.clone(),
        };
        let value = ResourceDeletionRecord {
            resource_key: key,
            tenant_id,
        };
        let event_key = if distributed {
            command.key
        } else {
            ctx.next_key()?
        };
        let deleting =
            ctx.append_event(event_key, ResourceDeletionIntent::Deleting, value.clone())?;
        match resource {
            Resource::Process(process) => delete_process(ctx, process)?,
            Resource::DecisionRequirements(graph) => {
                for decision in ctx
                    .state()
                    .decisions()
                    .of_requirements(graph.decision_requirements_key)?
                {
                    let key = ctx.next_key()?;
                    ctx.append_event(key, DecisionIntent::Deleted, decision)?;
                }
                let key = ctx.next_key()?;
                ctx.append_event(key, DecisionRequirementsIntent::Deleted, graph)?;
            }
            Resource::Form(form) => {
                let key = ctx.next_key()?;
                ctx.append_event(key, FormIntent::Deleted, form)?;
            }
        }
        ctx.append_event(event_key, ResourceDeletionIntent::Deleted, value.clone())?;
        if distributed {
            distribution::acknowledge(ctx, command)?;
        } else {
            ctx.respond(deleting);
            distribution::distribute(ctx, event_key, ResourceDeletionIntent::Delete, value)?;
        }
        Ok(())
    }
}

fn find(ctx: &ProcessingContext<'_, '_>, key: i64) -> Result<Option<Resource>, ProcessingError> {
    let state = ctx.state();
    if let Some(process) = state.processes().get(key)? {
        return Ok(Some(Resource::Process(process)));
    }
    if let Some(graph) = state.decisions().requirements(key)? {
        return Ok(Some(Resource::DecisionRequirements(graph)));
    }
    Ok(state.forms().get(key)?.map(Resource::Form))
}

/// PROCESS DELETING; for the latest version, its start events closed and those of the
/// version before opened; PROCESS DELETED unless instances of it still run here.
fn delete_process(
    ctx: &mut ProcessingContext<'_, '_>,
    stored: ProcessRecord,
) -> Result<(), ProcessingError> {
    let definition_key = stored.process_definition_key;
    // Without the resource: the events stay small, as Zeebe's do.
    let record = ProcessRecord {
        resource: Vec::new(),
        checksum: Vec::new(),
        ..stored
    };
    let was_latest = ctx
        .state()
        .processes()
        .latest(&record.tenant_id, &record.bpmn_process_id)?
        .is_some_and(|(_, latest)| latest == definition_key);
    let key = ctx.next_key()?;
    ctx.append_event(key, ProcessIntent::Deleting, record.clone())?;
    if was_latest {
        start_events::close(ctx, definition_key)?;
        let previous = ctx
            .state()
            .processes()
            .latest(&record.tenant_id, &record.bpmn_process_id)?;
        if let Some((_, previous)) = previous
            && let Some(process) = ctx.state().processes().deployed(previous)?
        {
            start_events::open(ctx, &process)?;
        }
    }
    let mut running = false;
    for instance in ctx.state().processes().running_instances(definition_key)? {
        if !ctx.state().banned_instances().is_banned(instance)? {
            running = true;
            break;
        }
    }
    if running {
        return Err(ProcessingError::Rejected(
            RejectionType::InvalidState,
            format!(
                "Expected to delete resource with key `{definition_key}` but there are still running instances"
            ),
        ));
    }
    let key = ctx.next_key()?;
    ctx.append_event(key, ProcessIntent::Deleted, record)?;
    Ok(())
}
