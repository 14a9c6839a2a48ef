use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `JOB UPDATE_RETRIES`: a person gives a job more (or fewer) tries; resolving the job's
/// incident afterwards makes it activatable again.
pub(crate) struct JobUpdateRetriesProcessor;

impl CommandProcessor for JobUpdateRetriesProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<JobRecord>(command)?;
        if request.retries < 1 {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to update retries of job with key '{}' with a positive amount of retries, but got {}",
                    command.key, request.retries
                ),
            );
            return Ok(());
        }
        let retries = request.retries;
        let job = ctx.state().jobs().get(command.key)?;
        let Some(job) = job.filter(|job| super::job_authorized(command, job)) else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to update retries for job with key '{}', but no such job was found",
                    command.key
                ),
            );
            return Ok(());
        };
        let mut updated = job.record();
        updated.retries = retries;
        let event = ctx.append_event(command.key, JobIntent::RetriesUpdated, updated)?;
        ctx.respond(event);
        Ok(())
    }
}
