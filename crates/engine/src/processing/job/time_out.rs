use beeline_protocol::intent::JobIntent;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext};
use crate::state::values::JobLifecycle;

/// `JOB TIME_OUT` (from the scheduler): the worker kept an activated job past its deadline; it
/// becomes activatable for others.
pub(crate) struct JobTimeOutProcessor;

impl CommandProcessor for JobTimeOutProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let job = ctx.state().jobs().get(command.key)?;
        match job {
            Some(job)
                if job.lifecycle()? == JobLifecycle::Activated
                    && job.record().deadline <= ctx.now() =>
            {
                let mut timed_out = job.record();
                timed_out.deadline = -1;
                timed_out.worker = String::new();
                ctx.append_event(command.key, JobIntent::TimedOut, timed_out)?;
            }
            _ => ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to time out activated job with key '{}', but no such job was found",
                    command.key
                ),
            ),
        }
        Ok(())
    }
}
