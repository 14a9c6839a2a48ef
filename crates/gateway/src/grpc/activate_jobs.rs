//! `ActivateJobs` (server streaming, long polling) and `StreamActivatedJobs` (push), and the job
//! as a gRPC worker receives it.

use std::sync::Arc;

use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tracing::Instrument;

use super::status::status;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::jobs;
use crate::operations::activate_jobs::{self, ActivateJobs, ActivatedJob, JobSink};
use crate::operations::document_text;
use crate::operations::stream_jobs::{self, StreamJobs};
use crate::proto;
use crate::proto::activated_job::{JobKind, ListenerEventType};
use crate::proto::{ActivateJobsRequest, ActivateJobsResponse, StreamActivatedJobsRequest};

pub(crate) type Stream = ReceiverStream<Result<ActivateJobsResponse, Status>>;

pub(crate) type PushStream =
    std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<proto::ActivatedJob, Status>> + Send>>;

/// Bytes of framing a response adds around its jobs (tag and length per job), kept free below
/// the maximum message size.
const RESPONSE_SLACK: usize = 64;

/// The job as a worker receives it.
pub(crate) fn activated_job(activated: ActivatedJob) -> proto::ActivatedJob {
    let user_task = activated
        .listener_user_task()
        .map(|task| proto::UserTaskProperties {
            action: task.action,
            assignee: task.assignee,
            candidate_groups: task.candidate_groups,
            candidate_users: task.candidate_users,
            changed_attributes: task.changed_attributes,
            due_date: task.due_date,
            follow_up_date: task.follow_up_date,
            form_key: task.form_key,
            priority: task.priority,
            user_task_key: task.user_task_key,
        });
    let ActivatedJob { key, job } = activated;
    proto::ActivatedJob {
        key,
        custom_headers: serde_json::to_string(&job.custom_headers)
            .unwrap_or_else(|_| "{}".to_owned()),
        variables: document_text(&job.variables).to_owned(),
        kind: JobKind::from_str_name(&job.job_kind).unwrap_or(JobKind::BpmnElement) as i32,
        // Zero would read as ASSIGNING: say UNSPECIFIED unless the job names its event.
        listener_event_type: ListenerEventType::from_str_name(&job.job_listener_event_type)
            .unwrap_or(ListenerEventType::Unspecified) as i32,
        r#type: job.r#type,
        process_instance_key: job.process_instance_key,
        bpmn_process_id: job.bpmn_process_id,
        process_definition_version: job.process_definition_version,
        process_definition_key: job.process_definition_key,
        element_id: job.element_id,
        element_instance_key: job.element_instance_key,
        worker: job.worker,
        retries: job.retries,
        deadline: job.deadline,
        tenant_id: job.tenant_id,
        user_task,
        tags: Vec::new(),
    }
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
        let converted = activated_job(job);
        let len = converted.encoded_len() + 8;
        if len > budget {
            too_large.push(handed_back(converted));
            continue;
        }
        if size + len > budget && !current.jobs.is_empty() {
            responses.push(std::mem::take(&mut current));
            size = 0;
        }
        size += len;
        current.jobs.push(converted);
    }
    if !current.jobs.is_empty() {
        responses.push(current);
    }
    (responses, too_large)
}

/// What handing a job back needs of it: its key and retries.
fn handed_back(job: proto::ActivatedJob) -> ActivatedJob {
    ActivatedJob {
        key: job.key,
        job: beeline_protocol::value::JobRecord {
            retries: job.retries,
            ..Default::default()
        },
    }
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
                let mut undelivered: Vec<ActivatedJob> = unsent
                    .0
                    .map(|r| r.jobs)
                    .unwrap_or_default()
                    .into_iter()
                    .map(handed_back)
                    .collect();
                undelivered.extend(responses.flat_map(|r| r.jobs).map(handed_back));
                return Err(undelivered);
            }
        }
        Ok(())
    }
}

pub(super) async fn handle(
    d: Arc<Dispatcher>,
    r: ActivateJobsRequest,
) -> Result<Stream, GatewayError> {
    let activation = activate_jobs::prepare(
        &d,
        &ActivateJobs {
            job_type: r.r#type,
            worker: r.worker,
            timeout: r.timeout,
            max_jobs_to_activate: r.max_jobs_to_activate,
            fetch_variables: r.fetch_variable,
            request_timeout: Some(r.request_timeout),
            tenant_ids: r.tenant_ids,
        },
    )?;
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(
        async move {
            let closed = tx.clone();
            let mut sink = ResponseSink { d: d.clone(), tx };
            let client_gone = async move { closed.closed().await };
            if let Err(error) = activate_jobs::run(&d, activation, &mut sink, client_gone).await {
                let _ = sink.tx.send(Err(status(error))).await;
            }
        }
        .instrument(tracing::Span::current()),
    );
    Ok(ReceiverStream::new(rx))
}

pub(super) async fn handle_stream(
    d: Arc<Dispatcher>,
    r: StreamActivatedJobsRequest,
) -> Result<PushStream, GatewayError> {
    let jobs = stream_jobs::open(
        d,
        StreamJobs {
            job_type: r.r#type,
            worker: r.worker,
            timeout: r.timeout,
            fetch_variables: r.fetch_variable,
            tenant_ids: r.tenant_ids,
        },
    )?;
    Ok(Box::pin(
        jobs.map(|job| job.map(activated_job).map_err(status)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::JobRecord;
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
        let activated = activated_job(ActivatedJob { key: 99, job });
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
    fn a_task_listeners_job_carries_its_user_task() {
        let headers = [
            ("io.camunda.zeebe:action", "assign"),
            ("io.camunda.zeebe:assignee", "ann"),
            ("io.camunda.zeebe:candidateGroups", r#"["sales","ops"]"#),
            ("io.camunda.zeebe:changedAttributes", r#"["assignee"]"#),
            ("io.camunda.zeebe:priority", "50"),
            ("io.camunda.zeebe:userTaskKey", "2251799813685250"),
            ("kind", "review"),
        ];
        let job = JobRecord {
            job_kind: "TASK_LISTENER".into(),
            job_listener_event_type: "ASSIGNING".into(),
            custom_headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..JobRecord::default()
        };
        let activated = activated_job(ActivatedJob { key: 1, job });
        assert_eq!(activated.kind(), JobKind::TaskListener);
        assert_eq!(
            activated.listener_event_type(),
            ListenerEventType::Assigning
        );
        let task = activated.user_task.expect("the user task");
        assert_eq!(task.action.as_deref(), Some("assign"));
        assert_eq!(task.assignee.as_deref(), Some("ann"));
        assert_eq!(task.candidate_groups, vec!["sales", "ops"]);
        assert!(task.candidate_users.is_empty());
        assert_eq!(task.changed_attributes, vec!["assignee"]);
        assert_eq!(task.priority, Some(50));
        assert_eq!(task.user_task_key, Some(2_251_799_813_685_250));
        assert_eq!(task.due_date, None);
        assert_eq!(task.form_key, None);
    }

    #[test]
    fn plain_jobs_say_bpmn_element_and_unspecified() {
        let activated = activated_job(ActivatedJob {
            key: 1,
            job: JobRecord::default(),
        });
        assert_eq!(activated.kind(), JobKind::BpmnElement);
        assert_eq!(
            activated.listener_event_type(),
            ListenerEventType::Unspecified
        );
        assert_eq!(activated.custom_headers, "{}");
        assert_eq!(activated.variables, "{}");
        assert_eq!(activated.user_task, None);
    }

    #[test]
    fn responses_stay_below_the_message_size() {
        let job = |variables: usize| ActivatedJob {
            key: 1,
            job: JobRecord {
                variables: format!(r#"{{"x":"{}"}}"#, "x".repeat(variables)).into_bytes(),
                ..JobRecord::default()
            },
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
