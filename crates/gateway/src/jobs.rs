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
use crate::operations::keyed;

/// How many times one partition is asked again in a pass when its batch was truncated.
const MAX_POLLS_PER_PARTITION: usize = 8;

/// Zeebe's reason for a job that was activated but could not be sent.
pub(crate) const NOT_SENT: &str = "Failed to send activated jobs to client";

/// A job activated for a worker: its key and its record (type, variables, deadline, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct ActivatedJob {
    pub key: i64,
    pub job: JobRecord,
}

/// The user task a user task listener's job is about, as workers receive it beside the job
/// (gRPC `ActivatedJob.userTask`, REST `userTask`): read from Zeebe's reserved headers the
/// engine writes on the job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListenerUserTask {
    pub action: Option<String>,
    pub assignee: Option<String>,
    pub candidate_groups: Vec<String>,
    pub candidate_users: Vec<String>,
    pub changed_attributes: Vec<String>,
    pub due_date: Option<String>,
    pub follow_up_date: Option<String>,
    pub form_key: Option<i64>,
    pub priority: Option<i32>,
    pub user_task_key: Option<i64>,
}

impl ActivatedJob {
    /// The user task of a user task listener's job; none for other jobs.
    pub fn listener_user_task(&self) -> Option<ListenerUserTask> {
        if self.job.job_kind != "TASK_LISTENER" {
            return None;
        }
        let header = |name: &str| {
            self.job
                .custom_headers
                .get(&format!("io.camunda.zeebe:{name}"))
                .cloned()
        };
        let list = |name: &str| {
            header(name)
                .and_then(|text| serde_json::from_str::<Vec<String>>(&text).ok())
                .unwrap_or_default()
        };
        Some(ListenerUserTask {
            action: header("action"),
            assignee: header("assignee"),
            candidate_groups: list("candidateGroups"),
            candidate_users: list("candidateUsers"),
            changed_attributes: list("changedAttributes"),
            due_date: header("dueDate"),
            follow_up_date: header("followUpDate"),
            form_key: header("formKey").and_then(|text| text.parse().ok()),
            priority: header("priority").and_then(|text| text.parse().ok()),
            user_task_key: header("userTaskKey").and_then(|text| text.parse().ok()),
        })
    }
}

/// Where activated jobs go: a gRPC response stream, a REST response body.
pub trait JobSink: Send {
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
        // A partition without a leader has nothing to hand out now; waiting for one would
        // hold back the jobs of the others.
        if !d.has_healthy_leader(partition) {
            continue;
        }
        for _ in 0..MAX_POLLS_PER_PARTITION {
            if remaining <= 0 {
                return Ok(pass);
            }
            let mut request = batch.clone();
            request.max_jobs_to_activate = remaining;
            let command = Record::command(NO_KEY, JobBatchIntent::Activate, request);
            let activated = match d.execute(partition, command).await {
                Ok(event) => keyed::<JobBatchRecord>(event)?.value,
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
            let truncated = activated.truncated;
            let jobs: Vec<ActivatedJob> = activated
                .job_keys
                .into_iter()
                .zip(activated.jobs)
                .map(|(key, job)| ActivatedJob { key, job })
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
            if !truncated || count == 0 {
                break;
            }
        }
    }
    Ok(pass)
}

/// How often a hand-back that may not have been written is sent again, and how long after the
/// last.
const HAND_BACK_ROUNDS: usize = 5;
const HAND_BACK_RETRY: Duration = Duration::from_millis(500);

/// Makes activated jobs activatable again: YIELD for pushed jobs when the engine has it (the
/// job keeps its retries and error), else FAIL with unchanged retries and no back-off, as
/// Zeebe's gateway does for jobs it could not send.
///
/// A yield that ends without an answer (it may or may not have been written: the leader
/// moved, the time ran out) is sent again, a few rounds apart, until the job's deadline: it
/// names the activation by its deadline, so a second one that finds the job yielded, or
/// activated again since, is refused and changes nothing. A FAIL is sent once.
pub(crate) async fn hand_back(
    d: &Dispatcher,
    jobs: Vec<ActivatedJob>,
    reason: &str,
    prefer_yield: bool,
) {
    let yielding = prefer_yield && d.supports(JobIntent::Yield);
    let mut pending = jobs;
    for round in 0..=HAND_BACK_ROUNDS {
        let mut again = Vec::new();
        for job in pending {
            let Err(error) = hand_back_one(d, &job, reason, yielding).await else {
                continue;
            };
            let live = job.job.deadline > now_ms();
            if yielding && live && round < HAND_BACK_ROUNDS {
                tracing::debug!(job = job.key, %error, "handing back a job again");
                again.push(job);
            } else {
                tracing::info!(job = job.key, %error, "failed to hand back an undelivered job");
            }
        }
        if again.is_empty() {
            return;
        }
        tokio::time::sleep(HAND_BACK_RETRY).await;
        pending = again;
    }
}

/// Hands back one job; `Ok` also when the partition refused it (the activation it names is
/// over: the job was handed back, completed or activated again).
async fn hand_back_one(
    d: &Dispatcher,
    job: &ActivatedJob,
    reason: &str,
    yielding: bool,
) -> Result<(), GatewayError> {
    let Some(partition) = key::partition_of(job.key) else {
        return Ok(());
    };
    let command = if yielding {
        // Names the activation: a yield that arrives after the job was activated again
        // (a retry through a leader change) is refused, not taken from the new holder.
        let activation = JobRecord {
            deadline: job.job.deadline,
            ..JobRecord::default()
        };
        Record::command(job.key, JobIntent::Yield, activation)
    } else if d.supports(JobIntent::Fail) {
        Record::command(
            job.key,
            JobIntent::Fail,
            JobRecord {
                retries: job.job.retries,
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
        return Ok(());
    };
    match d.execute(partition, command).await {
        Ok(_) | Err(GatewayError::Rejected { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}

/// The wall clock in ms since the epoch, as job deadlines are.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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
