use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;

use super::job_in_state;
use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext};
use crate::state::values::JobLifecycle;

/// `JOB YIELD`: a pushed job the receiving stream could not take goes back to activatable,
/// without costing a retry.
pub(crate) struct JobYieldProcessor;

impl CommandProcessor for JobYieldProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let Some(job) = job_in_state(ctx, command, "yield", &[JobLifecycle::Activated])? else {
            return Ok(());
        };
        let mut yielded = job.record();
        yielded.deadline = -1;
        yielded.worker = String::new();
        let event = ctx.append_event(command.key, JobIntent::Yielded, yielded)?;
        ctx.respond(event);
        Ok(())
    }
}
