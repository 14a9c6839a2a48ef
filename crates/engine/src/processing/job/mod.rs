//! Job commands: from workers (complete, fail, throw error, update retries and timeout, one
//! or both at once, yield) and from the scheduler (time out, recur after back-off).

mod complete;
mod fail;
mod recur;
mod throw_error;
mod time_out;
mod update;
mod update_retries;
mod update_timeout;
mod r#yield;

pub(crate) use fail::raise_job_incident;

use beeline_protocol::intent::JobIntent;
use beeline_protocol::{Record, RejectionType};

use super::{ProcessingContext, Processors};
use crate::error::ProcessingError;
use crate::state::values::{Job, JobLifecycle};

pub(super) fn register(processors: &mut Processors) {
    processors.register(JobIntent::Complete, complete::JobCompleteProcessor);
    processors.register(JobIntent::Fail, fail::JobFailProcessor);
    processors.register(JobIntent::ThrowError, throw_error::JobThrowErrorProcessor);
    processors.register(
        JobIntent::UpdateRetries,
        update_retries::JobUpdateRetriesProcessor,
    );
    processors.register(
        JobIntent::UpdateTimeout,
        update_timeout::JobUpdateTimeoutProcessor,
    );
    processors.register(JobIntent::Update, update::JobUpdateProcessor);
    processors.register(JobIntent::TimeOut, time_out::JobTimeOutProcessor);
    processors.register(JobIntent::RecurAfterBackoff, recur::JobRecurProcessor);
    processors.register(JobIntent::Yield, r#yield::JobYieldProcessor);
}

/// Whether the command's caller may act for the job's tenant.
pub(super) fn job_authorized(command: &Record, job: &Job) -> bool {
    command.authorized_tenants.is_none()
        || job
            .record
            .as_ref()
            .is_some_and(|r| command.is_authorized_for(&r.tenant_id))
}

/// The job a command is about, if it exists and is in one of `states`; otherwise the command
/// is rejected as Zeebe does (NOT_FOUND, or INVALID_STATE naming the state).
pub(super) fn job_in_state(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    action: &str,
    states: &[JobLifecycle],
) -> Result<Option<Job>, ProcessingError> {
    // A job of a tenant the caller may not act for is not there for it.
    let job = ctx.state().jobs().get(command.key)?;
    let Some(job) = job.filter(|job| job_authorized(command, job)) else {
        ctx.reject(
            command,
            RejectionType::NotFound,
            format!(
                "Expected to {action} job with key '{}', but no such job was found",
                command.key
            ),
        );
        return Ok(None);
    };
    if !states.contains(&job.lifecycle()?) {
        ctx.reject(
            command,
            RejectionType::InvalidState,
            format!(
                "Expected to {action} job with key '{}', but it is in state '{}'",
                command.key,
                job.lifecycle()?.name()
            ),
        );
        return Ok(None);
    }
    Ok(Some(job))
}

/// Jobs a worker may act on.
pub(super) const WORKABLE: &[JobLifecycle] = &[JobLifecycle::Activatable, JobLifecycle::Activated];
