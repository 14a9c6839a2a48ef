//! `ActivateJobs` → `JOB_BATCH ACTIVATE` on each partition in turn, with long polling: when no
//! partition has a job, the call waits (up to `requestTimeout`, 0 meaning the gateway's
//! default, negative meaning not at all) and looks again when jobs may have become available.

use std::sync::Arc;

use beeline_protocol::intent::JobBatchIntent;
use beeline_protocol::value::JobBatchRecord;
use prost::Message;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tracing::Instrument;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::jobs::{self, JobSink, Wake};
use crate::proto::{ActivateJobsRequest, ActivateJobsResponse, ActivatedJob};
use crate::validate;

pub(crate) type Stream = ReceiverStream<Result<ActivateJobsResponse, Status>>;

/// Bytes of framing a response adds around its jobs (tag and length per job), kept free below
/// the maximum message size.
const RESPONSE_SLACK: usize = 64;

pub(crate) fn batch(request: &ActivateJobsRequest) -> Result<JobBatchRecord, GatewayError> {
    validate::not_empty("type", &request.r#type)?;
    validate::at_least(
        "maxJobsToActivate",
        i64::from(request.max_jobs_to_activate),
        1,
    )?;
    validate::at_least("timeout", request.timeout, 1)?;
    let tenant_ids = validate::tenants("ActivateJobs", &request.tenant_ids)?;
    Ok(JobBatchRecord {
        r#type: request.r#type.clone(),
        worker: request.worker.clone(),
        timeout: request.timeout,
        max_jobs_to_activate: request.max_jobs_to_activate,
        fetch_variables: request.fetch_variable.clone(),
        tenant_ids,
        ..JobBatchRecord::default()
    })
}

/// Splits jobs into responses below `max_size` bytes each; a job too large for any response
/// comes back separately.
pub(crate) fn responses(
    jobs: Vec<ActivatedJob>,
    max_size: usize,
) -> (Vec<ActivateJobsResponse>, Vec<ActivatedJob>) {
    let budget = max_size.saturating_sub(RESPONSE_SLACK);
    let mut responses = Vec::new();
    let mut too_large = Vec::new();
    let mut current = ActivateJobsResponse::default();
    let mut size = 0;
    for job in jobs {
        let len = job.encoded_len() + 8;
        if len > budget {
            too_large.push(job);
            continue;
        }
        if size + len > budget && !current.jobs.is_empty() {
            responses.push(std::mem::take(&mut current));
            size = 0;
        }
        size += len;
        current.jobs.push(job);
    }
    if !current.jobs.is_empty() {
        responses.push(current);
    }
    (responses, too_large)
}

struct ResponseSink {
    d: Arc<Dispatcher>,
    tx: mpsc::Sender<Result<ActivateJobsResponse, Status>>,
}

impl JobSink for ResponseSink {
    async fn deliver(&mut self, jobs: Vec<ActivatedJob>) -> Result<(), Vec<ActivatedJob>> {
        let (responses, too_large) = responses(jobs, self.d.config.max_message_size);
        if !too_large.is_empty() {
            let reason = format!(
                "the response is bigger than the maximum allowed message size {}",
                self.d.config.max_message_size
            );
            tracing::info!(jobs = too_large.len(), %reason, "handing back jobs too large to send");
            jobs::hand_back(&self.d, too_large, &reason, false).await;
        }
        let mut responses = responses.into_iter();
        while let Some(response) = responses.next() {
            if let Err(unsent) = self.tx.send(Ok(response)).await {
                let mut undelivered = unsent.0.map(|r| r.jobs).unwrap_or_default();
                undelivered.extend(responses.flat_map(|r| r.jobs));
                return Err(undelivered);
            }
        }
        Ok(())
    }
}

pub(crate) async fn handle(
    d: Arc<Dispatcher>,
    request: ActivateJobsRequest,
) -> Result<Stream, GatewayError> {
    d.require(JobBatchIntent::Activate, "activating jobs")?;
    let batch = batch(&request)?;
    let deadline = match request.request_timeout {
        t if t < 0 => None,
        0 => Some(Instant::now() + d.config.long_polling_timeout),
        t => Some(Instant::now() + std::time::Duration::from_millis(t as u64)),
    };
    let (tx, rx) = mpsc::channel(4);
    let max = request.max_jobs_to_activate;
    tokio::spawn(long_poll(d, batch, max, deadline, tx).instrument(tracing::Span::current()));
    Ok(ReceiverStream::new(rx))
}

async fn long_poll(
    d: Arc<Dispatcher>,
    batch: JobBatchRecord,
    max: i32,
    deadline: Option<Instant>,
    tx: mpsc::Sender<Result<ActivateJobsResponse, Status>>,
) {
    // Subscribed before the first look, so a notification in between is not missed.
    let mut notifications = d.jobs_available.subscribe();
    let mut sink = ResponseSink { d: d.clone(), tx };
    loop {
        match jobs::activate_pass(&d, &batch, max, &mut sink, false).await {
            Err(error) => {
                let _ = sink.tx.send(Err(error.into())).await;
                return;
            }
            Ok(pass) if pass.gone || pass.activated > 0 => return,
            Ok(pass) if pass.exhausted => {
                let error = GatewayError::JobsExhausted(batch.r#type.clone());
                let _ = sink.tx.send(Err(error.into())).await;
                return;
            }
            Ok(_) => {}
        }
        if deadline.is_none_or(|deadline| Instant::now() >= deadline) {
            return;
        }
        let wake = jobs::wait_for_jobs(
            &d,
            &batch.r#type,
            &mut notifications,
            deadline,
            sink.tx.closed(),
        )
        .await;
        if wake != Wake::Retry {
            tracing::trace!(?wake, "long poll ends without jobs");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ActivateJobsRequest {
        ActivateJobsRequest {
            r#type: "pay".into(),
            worker: "w".into(),
            timeout: 60_000,
            max_jobs_to_activate: 5,
            fetch_variable: vec!["a".into()],
            request_timeout: 0,
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
                ActivateJobsRequest {
                    r#type: String::new(),
                    ..request()
                },
                "No type provided",
            ),
            (
                ActivateJobsRequest {
                    max_jobs_to_activate: 0,
                    ..request()
                },
                "maxJobsToActivate is '0'",
            ),
            (
                ActivateJobsRequest {
                    timeout: -1,
                    ..request()
                },
                "timeout is '-1'",
            ),
            (
                ActivateJobsRequest {
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

    #[test]
    fn responses_stay_below_the_message_size() {
        let job = |variables: usize| ActivatedJob {
            key: 1,
            variables: "x".repeat(variables),
            ..ActivatedJob::default()
        };
        let (responses, too_large) =
            responses(vec![job(400), job(400), job(400), job(5000), job(10)], 1000);
        assert_eq!(too_large.len(), 1);
        assert_eq!(responses.len(), 2);
        assert_eq!(responses[0].jobs.len(), 2);
        assert_eq!(responses[1].jobs.len(), 2);
        for response in &responses {
            assert!(response.encoded_len() <= 1000);
        }
        assert!(super::responses(Vec::new(), 1000).0.is_empty());
    }
}
