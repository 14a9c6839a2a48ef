use beeline_protocol::intent::JobIntent;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext};
use crate::state::values::JobLifecycle;

/// `JOB RECUR_AFTER_BACKOFF` (from the scheduler): a failed job's back-off is over; it is
/// activatable again.
pub(crate) struct JobRecurProcessor;

impl CommandProcessor for JobRecurProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let job = ctx.state().jobs().get(command.key)?;
        match job {
            Some(job) if job.lifecycle()? == JobLifecycle::Failed && job.record().recurring_time > 0 => {
                let mut recurred = job.record();
                recurred.recurring_time = -1;
                ctx.append_event(command.key, JobIntent::RecurredAfterBackoff, recurred)?;
            }
            _ => ctx.reject(
                command,
                RejectionType::NotFound,
                format!("Expected to recur failed job with key '{}' after its back-off, but no such job was found", command.key),
            ),
        }
        Ok(())
    }
}
