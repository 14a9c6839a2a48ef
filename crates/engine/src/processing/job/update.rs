use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::JobLifecycle;

/// Zeebe's names of a job's attributes in an update's changeset.
const RETRIES: &str = "retries";
const TIMEOUT: &str = "timeout";

/// `JOB UPDATE`: changes the attributes its changeset names (retries, timeout) at once, all or
/// nothing: every change is checked before any is written. Each change is written as its own
/// event (`RETRIES_UPDATED`, `TIMEOUT_UPDATED`), then `UPDATED` answers the request.
pub(crate) struct JobUpdateProcessor;

impl CommandProcessor for JobUpdateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<JobRecord>(command)?;
        let changes = |attribute: &str| request.changed_attributes.iter().any(|a| a == attribute);
        let job = ctx.state().jobs().get(command.key)?;
        let Some(job) = job.filter(|job| super::job_authorized(command, job)) else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to update job with key '{}', but no such job was found",
                    command.key
                ),
            );
            return Ok(());
        };
        let mut errors = Vec::new();
        if changes(RETRIES) && request.retries < 1 {
            errors.push(format!(
                "Expected to update retries of job with key '{}' with a positive amount of retries, but got {}",
                command.key, request.retries
            ));
        }
        if changes(TIMEOUT) {
            if request.timeout < 0 {
                errors.push(format!(
                    "Expected to update the timeout of job with key '{}' to a positive value, but got {}",
                    command.key, request.timeout
                ));
            } else if job.lifecycle()? != JobLifecycle::Activated {
                errors.push(format!(
                    "Expected to update the timeout of job with key '{}', but it is in state '{}'",
                    command.key,
                    job.lifecycle()?.name()
                ));
            }
        }
        if !changes(RETRIES) && !changes(TIMEOUT) {
            errors.push(format!(
                "Expected to update job with key '{}' with a changeset of retries or timeout, but it names neither",
                command.key
            ));
        }
        if !errors.is_empty() {
            ctx.reject(command, RejectionType::InvalidArgument, errors.join(", "));
            return Ok(());
        }
        let mut updated = job.record();
        if changes(RETRIES) {
            updated.retries = request.retries;
            ctx.append_event(command.key, JobIntent::RetriesUpdated, updated.clone())?;
        }
        if changes(TIMEOUT) {
            updated.timeout = request.timeout;
            updated.deadline = ctx.now().saturating_add(request.timeout);
            ctx.append_event(command.key, JobIntent::TimeoutUpdated, updated.clone())?;
        }
        updated.changed_attributes = request.changed_attributes.clone();
        let event = ctx.append_event(command.key, JobIntent::Updated, updated)?;
        ctx.respond(event);
        Ok(())
    }
}
