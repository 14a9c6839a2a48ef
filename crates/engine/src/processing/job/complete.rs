use beeline_protocol::intent::{JobIntent, ProcessInstanceIntent};
use beeline_protocol::value::JobRecord;
use beeline_protocol::{Record, RejectionType};

use super::{WORKABLE, job_in_state};
use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::variables::check_document;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `JOB COMPLETE`: the worker is done. The element completes with the job's variables; a
/// listener's job goes back to its element's lifecycle (`COMPLETE_EXECUTION_LISTENER`).
pub(crate) struct JobCompleteProcessor;

impl CommandProcessor for JobCompleteProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<JobRecord>(command)?;
        // Read (in canonical text) when the element completes: only checked here.
        if let Err(reason) = check_document(&request.variables) {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to complete job with key '{}' with variables, but {reason}",
                    command.key
                ),
            );
            return Ok(());
        }
        let Some(job) = job_in_state(ctx, command, "complete", WORKABLE)? else {
            return Ok(());
        };
        let mut completed = job.record();
        completed.variables = if request.variables.is_empty() {
            b"{}".to_vec()
        } else {
            request.variables.clone()
        };
        let event = ctx.append_event(command.key, JobIntent::Completed, completed.clone())?;
        ctx.respond(event);
        if let Some(element) = ctx
            .state()
            .element_instances()
            .get(completed.element_instance_key)?
        {
            let intent = match completed.job_kind.as_str() {
                "EXECUTION_LISTENER" => ProcessInstanceIntent::CompleteExecutionListener,
                _ => ProcessInstanceIntent::CompleteElement,
            };
            ctx.append_command(element.key, intent, element.record());
        }
        Ok(())
    }
}
