use beeline_protocol::intent::{IncidentIntent, ProcessInstanceIntent};
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::bpmn::BpmnElementContext;
use crate::processing::user_task::transition::{self, Transition};
use crate::processing::{CommandProcessor, ProcessingContext};
use crate::state::values::{ElementLifecycle, JobLifecycle};

/// `INCIDENT RESOLVE`: a person fixed the cause. A job's incident makes the job activatable
/// again (when it has retries); an element's incident retries the step that failed.
pub(crate) struct IncidentResolveProcessor;

impl CommandProcessor for IncidentResolveProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        // An incident of a tenant the caller may not act for is not there for it.
        let incident = ctx.state().incidents().get(command.key)?;
        let Some(incident) = incident.filter(|i| command.is_authorized_for(&i.tenant_id)) else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to resolve incident with key '{}', but no such incident was found",
                    command.key
                ),
            );
            return Ok(());
        };
        if incident.job_key > 0
            && let Some(job) = ctx.state().jobs().get(incident.job_key)?
            && job.lifecycle()? == JobLifecycle::Failed
            && job.record().retries <= 0
        {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to resolve incident with key '{}', but the job with key '{}' has no retries left; update the job's retries first",
                    command.key, incident.job_key
                ),
            );
            return Ok(());
        }
        let event = ctx.append_event(command.key, IncidentIntent::Resolved, incident.clone())?;
        ctx.respond(event);
        if incident.job_key > 0 {
            return Ok(());
        }
        // Retry what failed: the element continues from the state the incident stopped it in.
        if let Some(element) = ctx
            .state()
            .element_instances()
            .get(incident.element_instance_key)?
        {
            if element.user_task_key > 0
                && let Some(task) = ctx.state().user_tasks().get(element.user_task_key)?
                && let Some(transition) = task.lifecycle().and_then(Transition::of)
            {
                // A task listener's type or retries failed: the transition's listeners run
                // again from the first.
                let mut bpmn = BpmnElementContext::of_instance(ctx, command, &element)?;
                let step = transition::restart(&mut bpmn, transition, element.user_task_key);
                return bpmn.settle(step);
            }
            let intent = if element.is(ElementLifecycle::Activating) {
                Some(ProcessInstanceIntent::ActivateElement)
            } else if element.is(ElementLifecycle::Activated)
                || element.is(ElementLifecycle::Completing)
            {
                Some(ProcessInstanceIntent::CompleteElement)
            } else {
                None
            };
            if let Some(intent) = intent {
                ctx.append_command(element.key, intent, element.record());
            }
        }
        Ok(())
    }
}
