//! Activate jobs, with long polling: `JOB_BATCH ACTIVATE` on each partition in turn; when no
//! partition has a job, the request waits (up to its request timeout) and looks again when
//! jobs may have become available. Jobs reach the client through a [`JobSink`] as each
//! partition answers (gRPC streams them; REST collects them into one body).

use std::time::Duration;

use beeline_protocol::intent::JobBatchIntent;
use beeline_protocol::value::JobBatchRecord;
use tokio::time::Instant;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::jobs::{self, Wake};
pub use crate::jobs::{ActivatedJob, JobSink};
use crate::tenancy;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivateJobs {
    pub job_type: String,
    pub worker: String,
    /// How long (ms) an activated job belongs to the worker.
    pub timeout: i64,
    pub max_jobs_to_activate: i32,
    /// The variables the jobs carry (empty: all).
    pub fetch_variables: Vec<String>,
    /// How long to wait for jobs: `Some(0)` or `None` is the gateway's long-polling timeout,
    /// negative is not at all (answer at once).
    pub request_timeout: Option<i64>,
    pub tenant_ids: Vec<String>,
}

/// A checked request, ready to run.
#[derive(Debug, Clone)]
pub struct Activation {
    batch: JobBatchRecord,
    max: i32,
    deadline: Option<Instant>,
}

pub(crate) fn batch(request: &ActivateJobs) -> Result<JobBatchRecord, GatewayError> {
    validate::not_empty("type", &request.job_type)?;
    validate::at_least(
        "maxJobsToActivate",
        i64::from(request.max_jobs_to_activate),
        1,
    )?;
    validate::at_least("timeout", request.timeout, 1)?;
    let tenant_ids = tenancy::tenants("ActivateJobs", &request.tenant_ids)?;
    Ok(JobBatchRecord {
        r#type: request.job_type.clone(),
        worker: request.worker.clone(),
        timeout: request.timeout,
        max_jobs_to_activate: request.max_jobs_to_activate,
        fetch_variables: request.fetch_variables.clone(),
        tenant_ids,
        ..JobBatchRecord::default()
    })
}

/// Checks the request; the long poll starts with [`run`].
pub fn prepare(d: &Dispatcher, request: &ActivateJobs) -> Result<Activation, GatewayError> {
    d.require(JobBatchIntent::Activate, "activating jobs")?;
    let batch = batch(request)?;
    let deadline = match request.request_timeout.unwrap_or(0) {
        t if t < 0 => None,
        0 => Some(Instant::now() + d.config.long_polling_timeout),
        t => Some(Instant::now() + Duration::from_millis(t as u64)),
    };
    Ok(Activation {
        batch,
        max: request.max_jobs_to_activate,
        deadline,
    })
}

/// Activates up to the request's maximum into `sink`, waiting for jobs until the deadline.
/// Ends once some jobs were delivered, at the deadline with none, when the client goes away
/// (`client_gone` completes) or when the gateway shuts down. When no job was activated and
/// some partition was over its limit, the answer is RESOURCE_EXHAUSTED.
pub async fn run<S: JobSink>(
    d: &Dispatcher,
    activation: Activation,
    sink: &mut S,
    client_gone: impl Future<Output = ()>,
) -> Result<(), GatewayError> {
    let Activation {
        batch,
        max,
        deadline,
    } = activation;
    // Subscribed before the first look, so a notification in between is not missed.
    let mut notifications = d.jobs_available.subscribe();
    let mut client_gone = std::pin::pin!(client_gone);
    loop {
        let pass = jobs::activate_pass(d, &batch, max, sink, false).await?;
        if pass.gone || pass.activated > 0 {
            return Ok(());
        }
        if pass.exhausted {
            return Err(GatewayError::JobsExhausted(batch.r#type.clone()));
        }
        if deadline.is_none_or(|deadline| Instant::now() >= deadline) {
            return Ok(());
        }
        let wake = jobs::wait_for_jobs(
            d,
            &batch.r#type,
            &mut notifications,
            deadline,
            client_gone.as_mut(),
        )
        .await;
        if wake != Wake::Retry {
            tracing::trace!(?wake, "long poll ends without jobs");
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ActivateJobs {
        ActivateJobs {
            job_type: "pay".into(),
            worker: "w".into(),
            timeout: 60_000,
            max_jobs_to_activate: 5,
            fetch_variables: vec!["a".into()],
            request_timeout: None,
            tenant_ids: Vec::new(),
        }
    }

    #[test]
    fn request_becomes_a_job_batch() {
        let batch = batch(&request()).unwrap();
        assert_eq!(batch.r#type, "pay");
        assert_eq!(batch.worker, "w");
        assert_eq!(batch.timeout, 60_000);
        assert_eq!(batch.max_jobs_to_activate, 5);
        assert_eq!(batch.fetch_variables, vec!["a"]);
        assert_eq!(batch.tenant_ids, vec!["<default>"]);
    }

    #[test]
    fn invalid_requests_name_the_field() {
        for (request, field) in [
            (
                ActivateJobs {
                    job_type: String::new(),
                    ..request()
                },
                "No type provided",
            ),
            (
                ActivateJobs {
                    max_jobs_to_activate: 0,
                    ..request()
                },
                "maxJobsToActivate is '0'",
            ),
            (
                ActivateJobs {
                    timeout: -1,
                    ..request()
                },
                "timeout is '-1'",
            ),
            (
                ActivateJobs {
                    tenant_ids: vec!["t".into()],
                    ..request()
                },
                "tenant identifier 't'",
            ),
        ] {
            let error = batch(&request).unwrap_err().to_string();
            assert!(error.contains(field), "{error}");
        }
    }
}
