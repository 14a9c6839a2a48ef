//! Job activation shared by `ActivateJobs` (long polling) and `StreamActivatedJobs` (push):
//! one pass over the partitions in turn, delivering what each partition activates as soon as
//! it answers, handing back jobs no client took, and waiting for jobs to become available.
//!
//! A waiting call wakes on a jobs-available notification for its type (the partitions'
//! `job_notifications`, forwarded to [`Dispatcher::jobs_available`]), on the probe interval
//! (a fallback), at its deadline, when the client goes away, or when the gateway shuts down.

use std::future::Future;
use std::time::Duration;

use beeline_protocol::Record;
use beeline_protocol::intent::{JobBatchIntent, JobIntent};
use beeline_protocol::key::{self, NO_KEY};
use beeline_protocol::value::{JobBatchRecord, JobRecord};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::ActivatedJob;
use crate::proto::activated_job::{JobKind, ListenerEventType};
use crate::rpc::{document_text, value_of};

/// How many times one partition is asked again in a pass when its batch was truncated.
const MAX_POLLS_PER_PARTITION: usize = 8;

/// Zeebe's reason for a job that was activated but could not be sent.
pub(crate) const NOT_SENT: &str = "Failed to send activated jobs to client";

/// Where activated jobs go.
pub(crate) trait JobSink: Send {
    /// Hands `jobs` to the client; `Err` gives back those it could not take (it went away).
    fn deliver(
        &mut self,
        jobs: Vec<ActivatedJob>,
    ) -> impl Future<Output = Result<(), Vec<ActivatedJob>>> + Send;
}

/// What one pass over the partitions did.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    pub activated: usize,
    /// Some partition was over its limit.
    pub exhausted: bool,
    /// The client went away (what it did not take was handed back).
    pub gone: bool,
}

/// The job as a worker receives it.
pub(crate) fn activated_job(key: i64, job: &JobRecord) -> ActivatedJob {
    ActivatedJob {
        key,
        r#type: job.r#type.clone(),
        process_instance_key: job.process_instance_key,
        bpmn_process_id: job.bpmn_process_id.clone(),
        process_definition_version: job.process_definition_version,
        process_definition_key: job.process_definition_key,
        element_id: job.element_id.clone(),
        element_instance_key: job.element_instance_key,
        custom_headers: serde_json::to_string(&job.custom_headers)
            .unwrap_or_else(|_| "{}".to_owned()),
        worker: job.worker.clone(),
        retries: job.retries,
        deadline: job.deadline,
        variables: document_text(&job.variables),
        tenant_id: job.tenant_id.clone(),
        user_task: None,
        kind: JobKind::from_str_name(&job.job_kind).unwrap_or(JobKind::BpmnElement) as i32,
        // Zero would read as ASSIGNING: say UNSPECIFIED unless the job names its event.
        listener_event_type: ListenerEventType::from_str_name(&job.job_listener_event_type)
            .unwrap_or(ListenerEventType::Unspecified) as i32,
        tags: Vec::new(),
    }
}

/// One pass: each partition in turn, until `max` jobs are activated.
pub(crate) async fn activate_pass<S: JobSink>(
    d: &Dispatcher,
    batch: &JobBatchRecord,
    max: i32,
    sink: &mut S,
    prefer_yield: bool,
) -> Result<Pass, GatewayError> {
    let mut pass = Pass::default();
    let mut remaining = max;
    for partition in d.job_activation.order(d.partition_count()) {
        for _ in 0..MAX_POLLS_PER_PARTITION {
            if remaining <= 0 {
                return Ok(pass);
            }
            let mut request = batch.clone();
            request.max_jobs_to_activate = remaining;
            let command = Record::command(NO_KEY, JobBatchIntent::Activate, request);
            let activated = match d.execute(partition, command).await {
                Ok(event) => value_of::<JobBatchRecord>(&event)?.clone(),
                Err(e) if e.is_resource_exhausted() => {
                    pass.exhausted = true;
                    break;
                }
                Err(e @ GatewayError::Rejected { .. }) => return Err(e),
                Err(e) => {
                    tracing::warn!(partition, job_type = %batch.r#type, error = %e, "failed to activate jobs");
                    break;
                }
            };
            let jobs: Vec<ActivatedJob> = activated
                .job_keys
                .iter()
                .zip(&activated.jobs)
                .map(|(key, job)| activated_job(*key, job))
                .collect();
            let count = jobs.len();
            if count > 0 {
                if let Err(undelivered) = sink.deliver(jobs).await {
                    hand_back(d, undelivered, NOT_SENT, prefer_yield).await;
                    pass.gone = true;
                    return Ok(pass);
                }
                pass.activated += count;
                remaining -= count as i32;
            }
            if !activated.truncated || count == 0 {
                break;
            }
        }
    }
    Ok(pass)
}

/// Makes activated jobs activatable again: YIELD for pushed jobs when the engine has it (the
/// job keeps its retries and error), else FAIL with unchanged retries and no back-off, as
/// Zeebe's gateway does for jobs it could not send.
pub(crate) async fn hand_back(
    d: &Dispatcher,
    jobs: Vec<ActivatedJob>,
    reason: &str,
    prefer_yield: bool,
) {
    for job in jobs {
        let Some(partition) = key::partition_of(job.key) else {
            continue;
        };
        let command = if prefer_yield && d.supports(JobIntent::Yield) {
            Record::command(job.key, JobIntent::Yield, JobRecord::default())
        } else if d.supports(JobIntent::Fail) {
            Record::command(
                job.key,
                JobIntent::Fail,
                JobRecord {
                    retries: job.retries,
                    error_message: reason.to_owned(),
                    retry_backoff: 0,
                    variables: b"{}".to_vec(),
                    ..JobRecord::default()
                },
            )
        } else {
            tracing::warn!(
                job = job.key,
                "cannot hand back an undelivered job; it stays activated until it times out"
            );
            continue;
        };
        if let Err(error) = d.execute(partition, command).await {
            tracing::info!(job = job.key, %error, "failed to hand back an undelivered job");
        }
    }
}

/// Why a waiting call woke up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Look again: a notification for the type, or the probe interval passed.
    Retry,
    Deadline,
    ClientGone,
    ShuttingDown,
}

/// Waits until jobs of `job_type` may be available (or the call should end).
pub(crate) async fn wait_for_jobs(
    d: &Dispatcher,
    job_type: &str,
    notifications: &mut broadcast::Receiver<String>,
    deadline: Option<Instant>,
    client_gone: impl Future<Output = ()>,
) -> Wake {
    let mut stopping = d.stopping.clone();
    let probe = tokio::time::sleep(d.config.job_probe_interval.max(Duration::from_millis(10)));
    let deadline = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    let notified = async {
        loop {
            match notifications.recv().await {
                // An empty type: notifications were lost, every type may have jobs.
                Ok(available) if available == job_type || available.is_empty() => return,
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(_)) => return,
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    };
    tokio::select! {
        _ = stopping.wait_for(|stopping| *stopping) => Wake::ShuttingDown,
        _ = client_gone => Wake::ClientGone,
        _ = deadline => Wake::Deadline,
        _ = notified => Wake::Retry,
        _ = probe => Wake::Retry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn jobs_become_activated_jobs() {
        let job = JobRecord {
            r#type: "pay".into(),
            worker: "w1".into(),
            retries: 3,
            deadline: 1_700_000_060_000,
            custom_headers: BTreeMap::from([("a".to_owned(), "b".to_owned())]),
            variables: br#"{"x":1}"#.to_vec(),
            bpmn_process_id: "order".into(),
            process_definition_version: 2,
            process_definition_key: 10,
            process_instance_key: 11,
            element_id: "task".into(),
            element_instance_key: 12,
            tenant_id: "<default>".into(),
            job_kind: "EXECUTION_LISTENER".into(),
            job_listener_event_type: "START".into(),
            ..JobRecord::default()
        };
        let activated = activated_job(99, &job);
        assert_eq!(activated.key, 99);
        assert_eq!(activated.r#type, "pay");
        assert_eq!(activated.custom_headers, r#"{"a":"b"}"#);
        assert_eq!(activated.variables, r#"{"x":1}"#);
        assert_eq!(activated.kind(), JobKind::ExecutionListener);
        assert_eq!(activated.listener_event_type(), ListenerEventType::Start);
        assert_eq!(activated.deadline, 1_700_000_060_000);
        assert_eq!(activated.element_instance_key, 12);
    }

    #[test]
    fn plain_jobs_say_bpmn_element_and_unspecified() {
        let activated = activated_job(1, &JobRecord::default());
        assert_eq!(activated.kind(), JobKind::BpmnElement);
        assert_eq!(
            activated.listener_event_type(),
            ListenerEventType::Unspecified
        );
        assert_eq!(activated.custom_headers, "{}");
        assert_eq!(activated.variables, "{}");
    }
}
