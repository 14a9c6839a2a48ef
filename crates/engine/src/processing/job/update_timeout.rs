use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;
use beeline_protocol::{Record, RejectionType};

use super::job_in_state;
use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::JobLifecycle;

/// `JOB UPDATE_TIMEOUT`: an activated job belongs to its worker for `timeout` ms from now.
pub(crate) struct JobUpdateTimeoutProcessor;

impl CommandProcessor for JobUpdateTimeoutProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let timeout = value_of::<JobRecord>(command)?.timeout;
        if timeout < 0 {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!("Expected to update the timeout of job with key '{}' to a positive value, but got {timeout}", command.key),
            );
            return Ok(());
        }
        let Some(job) = job_in_state(
            ctx,
            command,
            "update the timeout of",
            &[JobLifecycle::Activated],
        )?
        else {
            return Ok(());
        };
        let mut updated = job.record();
        updated.timeout = timeout;
        updated.deadline = ctx.now().saturating_add(timeout);
        let event = ctx.append_event(command.key, JobIntent::TimeoutUpdated, updated)?;
        ctx.respond(event);
        Ok(())
    }
}
