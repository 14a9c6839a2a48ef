use beeline_protocol::intent::{UserTaskIntent, VariableDocumentIntent};
use beeline_protocol::value::VariableDocumentRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::bpmn::BpmnElementContext;
use crate::processing::bpmn::behavior::variables::{
    Document, VariableOwner, merge_local, merge_propagating,
};
use crate::processing::user_task::transition::{self, Transition};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::{ElementInstance, UserTaskLifecycle};

/// `VARIABLE_DOCUMENT UPDATE` (SetVariables): sets variables on an active element instance,
/// locally or propagated as a job's variables are; on a Camunda user task, through the
/// task's update.
pub(crate) struct VariableDocumentUpdateProcessor;

impl CommandProcessor for VariableDocumentUpdateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let mut update = value_of::<VariableDocumentRecord>(command)?.clone();
        let variables = match Document::parse(&update.variables) {
            Ok(variables) => variables,
            Err(reason) => {
                ctx.reject(
                    command,
                    RejectionType::InvalidArgument,
                    format!("Expected to update variables with a document, but {reason}"),
                );
                return Ok(());
            }
        };
        // An element of a tenant the caller may not act for is not there for it.
        let element = ctx.state().element_instances().get(update.scope_key)?;
        let Some(element) = element.filter(|e| {
            command.authorized_tenants.is_none()
                || e.record
                    .as_ref()
                    .is_some_and(|r| command.is_authorized_for(&r.tenant_id))
        }) else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to update variables for element with key '{}', but no such element was found",
                    update.scope_key
                ),
            );
            return Ok(());
        };
        let owner = VariableOwner::of(&element.record());
        let key = ctx.next_key()?;
        if update.update_semantics.is_empty() {
            update.update_semantics = "PROPAGATE".to_string();
        }
        update.process_instance_key = owner.process_instance_key;
        update.tenant_id = owner.tenant_id.clone();
        if element.user_task_key > 0 {
            return update_user_task(ctx, command, &element, key, update);
        }
        let event = ctx.append_event(key, VariableDocumentIntent::Updated, update.clone())?;
        ctx.respond(event);
        if update.update_semantics == "LOCAL" {
            merge_local(ctx, update.scope_key, &variables, &owner)
        } else {
            merge_propagating(ctx, update.scope_key, &variables, &owner)
        }
    }
}

/// Variables set on a Camunda user task's element instance update the task: VARIABLE_DOCUMENT
/// UPDATING, USER_TASK UPDATING (changing `variables`), the task's `updating` listeners, then
/// the variables (local to the task), USER_TASK UPDATED and VARIABLE_DOCUMENT UPDATED. Only
/// a task between transitions can be updated.
fn update_user_task(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    element: &ElementInstance,
    key: i64,
    update: VariableDocumentRecord,
) -> Result<(), ProcessingError> {
    let task_key = element.user_task_key;
    let Some(stored) = ctx.state().user_tasks().get(task_key)? else {
        return Ok(());
    };
    let lifecycle = stored.lifecycle();
    if lifecycle != Some(UserTaskLifecycle::Created) {
        ctx.reject(
            command,
            RejectionType::InvalidState,
            format!(
                "Expected to trigger update transition for user task with key '{task_key}', but it is in state '{}'",
                lifecycle.map_or("UNKNOWN", UserTaskLifecycle::name)
            ),
        );
        return Ok(());
    }
    ctx.append_event(key, VariableDocumentIntent::Updating, update.clone())?;
    let mut task = stored.record();
    task.variables = update.variables;
    task.changed_attributes = vec!["variables".to_string()];
    task.action.clear();
    ctx.append_event(task_key, UserTaskIntent::Updating, task)?;
    let mut bpmn = BpmnElementContext::of_instance(ctx, command, element)?;
    let step = transition::started(&mut bpmn, Transition::Update, task_key);
    bpmn.settle(step)
}
