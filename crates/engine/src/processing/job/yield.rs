use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;
use beeline_protocol::{Record, RejectionType};

use super::job_in_state;
use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::JobLifecycle;

/// `JOB YIELD`: a pushed job the receiving stream could not take goes back to activatable,
/// without costing a retry.
///
/// A yield may name the activation it hands back by its deadline (a deadline above 0): it is
/// refused when the job is activated with another deadline, i.e. activated again since (a
/// yield that took a while to get here, through a leader change, must not take the job from
/// the worker that holds it now).
pub(crate) struct JobYieldProcessor;

impl CommandProcessor for JobYieldProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let activation = value_of::<JobRecord>(command)?.deadline;
        let Some(job) = job_in_state(ctx, command, "yield", &[JobLifecycle::Activated])? else {
            return Ok(());
        };
        let mut yielded = job.record();
        if activation > 0 && yielded.deadline != activation {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to yield job with key '{}' activated until {activation}, but it \
                     was activated again until {}",
                    command.key, yielded.deadline
                ),
            );
            return Ok(());
        }
        yielded.deadline = -1;
        yielded.worker = String::new();
        let event = ctx.append_event(command.key, JobIntent::Yielded, yielded)?;
        ctx.respond(event);
        Ok(())
    }
}
