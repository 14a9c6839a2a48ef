//! `POST /v2/jobs/activation` (long polling; all activated jobs in one body, bounded by the
//! maximum message size), `POST /v2/jobs/{jobKey}/completion`, `/failure`, `/error` and
//! `PATCH /v2/jobs/{jobKey}`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::json::{self, Key, document, raw};
use super::problem::Problem;
use super::{Call, Gateway, PathParam, Reply, answer, keyed_command};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::jobs::{self, ActivatedJob, JobSink};
use crate::operations::activate_jobs::{self, ActivateJobs};
use crate::operations::complete_job::{self, CompleteJob, CompletionResult, Corrections};
use crate::operations::fail_job::{self, FailJob};
use crate::operations::throw_error::{self, ThrowError};
use crate::operations::update_job::{self, UpdateJob};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActivationRequest {
    r#type: String,
    #[serde(default)]
    worker: Option<String>,
    #[serde(deserialize_with = "json::integer")]
    timeout: i64,
    #[serde(deserialize_with = "json::integer")]
    max_jobs_to_activate: i32,
    #[serde(default)]
    fetch_variable: Option<Vec<String>>,
    #[serde(default, deserialize_with = "json::optional_integer")]
    request_timeout: Option<i64>,
    #[serde(default)]
    tenant_ids: Option<Vec<String>>,
}

/// A job as a REST worker receives it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    r#type: String,
    process_definition_id: String,
    process_definition_version: i32,
    element_id: String,
    custom_headers: BTreeMap<String, String>,
    worker: String,
    retries: i32,
    deadline: i64,
    variables: Box<RawValue>,
    tenant_id: String,
    job_key: Key,
    process_instance_key: Key,
    process_definition_key: Key,
    element_instance_key: Key,
    kind: String,
    listener_event_type: String,
    tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_task: Option<UserTask>,
}

/// The user task a user task listener's job is about.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UserTask {
    action: Option<String>,
    assignee: Option<String>,
    candidate_groups: Vec<String>,
    candidate_users: Vec<String>,
    changed_attributes: Vec<String>,
    due_date: Option<String>,
    follow_up_date: Option<String>,
    form_key: Option<Key>,
    priority: Option<i32>,
    user_task_key: Option<Key>,
}

fn job(activated: ActivatedJob) -> Job {
    let user_task = activated.listener_user_task().map(|task| UserTask {
        action: task.action,
        assignee: task.assignee,
        candidate_groups: task.candidate_groups,
        candidate_users: task.candidate_users,
        changed_attributes: task.changed_attributes,
        due_date: task.due_date,
        follow_up_date: task.follow_up_date,
        form_key: task.form_key.map(Key),
        priority: task.priority,
        user_task_key: task.user_task_key.map(Key),
    });
    let ActivatedJob { key, job } = activated;
    Job {
        user_task,
        kind: if job.job_kind.is_empty() {
            "BPMN_ELEMENT".to_owned()
        } else {
            job.job_kind
        },
        listener_event_type: if job.job_listener_event_type.is_empty() {
            "UNSPECIFIED".to_owned()
        } else {
            job.job_listener_event_type
        },
        r#type: job.r#type,
        process_definition_id: job.bpmn_process_id,
        process_definition_version: job.process_definition_version,
        element_id: job.element_id,
        custom_headers: job.custom_headers,
        worker: job.worker,
        retries: job.retries,
        deadline: job.deadline,
        variables: raw(job.variables),
        tenant_id: job.tenant_id,
        job_key: Key(key),
        process_instance_key: Key(job.process_instance_key),
        process_definition_key: Key(job.process_definition_key),
        element_instance_key: Key(job.element_instance_key),
        tags: Vec::new(),
    }
}

/// `{"jobs":[` ... `]}` around the jobs.
const BODY_FRAME: usize = 11;

/// Collects activated jobs into one response body of at most the maximum message size; a job
/// that does not fit is handed back, as a gRPC response that would be too large is.
struct BodySink {
    d: Arc<Dispatcher>,
    body: Vec<u8>,
    /// The key and retries of each job in the body, to hand them back if it is not sent.
    taken: Vec<ActivatedJob>,
}

impl BodySink {
    fn new(d: Arc<Dispatcher>) -> Self {
        let mut body = Vec::with_capacity(1024);
        body.extend_from_slice(b"{\"jobs\":[");
        Self {
            d,
            body,
            taken: Vec::new(),
        }
    }

    fn finish(mut self) -> (Vec<u8>, Vec<ActivatedJob>) {
        self.body.extend_from_slice(b"]}");
        (self.body, self.taken)
    }
}

impl JobSink for BodySink {
    async fn deliver(&mut self, jobs: Vec<ActivatedJob>) -> Result<(), Vec<ActivatedJob>> {
        let max = self.d.config.max_message_size;
        let mut too_large = Vec::new();
        for activated in jobs {
            let handle = ActivatedJob {
                key: activated.key,
                job: beeline_protocol::value::JobRecord {
                    retries: activated.job.retries,
                    ..Default::default()
                },
            };
            let bytes = json::to_vec(&job(activated));
            let separator = usize::from(!self.taken.is_empty());
            if self.body.len() + separator + bytes.len() + BODY_FRAME > max {
                too_large.push(handle);
                continue;
            }
            if separator == 1 {
                self.body.push(b',');
            }
            self.body.extend_from_slice(&bytes);
            self.taken.push(handle);
        }
        if !too_large.is_empty() {
            let reason =
                format!("the response is bigger than the maximum allowed message size {max}");
            tracing::info!(jobs = too_large.len(), %reason, "handing back jobs too large to send");
            jobs::hand_back(&self.d, too_large, &reason, false).await;
        }
        Ok(())
    }
}

pub(super) async fn activate(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "ActivateJobs", &call.path, async {
        let body: ActivationRequest = json::body(&call.body)?;
        let activation = activate_jobs::prepare(
            &d,
            &ActivateJobs {
                job_type: body.r#type,
                worker: body.worker.unwrap_or_default(),
                timeout: body.timeout,
                max_jobs_to_activate: body.max_jobs_to_activate,
                fetch_variables: body.fetch_variable.unwrap_or_default(),
                request_timeout: body.request_timeout,
                tenant_ids: body.tenant_ids.unwrap_or_default(),
            },
        )?;
        // The long poll runs on its own: a client that goes away drops this handler, and the
        // jobs activated for it go back to their partitions instead of waiting out their
        // timeout.
        let (mut done, result) = oneshot::channel::<Result<Vec<u8>, GatewayError>>();
        let poll = d.clone();
        tokio::spawn(
            async move {
                let mut sink = BodySink::new(poll.clone());
                let run = activate_jobs::run(&poll, activation, &mut sink, done.closed()).await;
                let (body, taken) = sink.finish();
                let unsent = match run {
                    Ok(()) => done.send(Ok(body)).is_err(),
                    Err(error) => {
                        let _ = done.send(Err(error));
                        false
                    }
                };
                if unsent && !taken.is_empty() {
                    jobs::hand_back(&poll, taken, jobs::NOT_SENT, false).await;
                }
            }
            .in_current_span(),
        );
        match result.await {
            Ok(body) => Ok(Reply::Json(body?)),
            Err(_) => Err(Problem::from(GatewayError::Internal(
                "the job activation ended without an answer".into(),
            ))),
        }
    })
    .await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CompletionRequest {
    variables: Option<Box<RawValue>>,
    result: Option<CompletionResultBody>,
}

/// `result` of a job completion: a user task listener's (`"type": "userTask"`, the default)
/// or an ad-hoc sub-process's.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CompletionResultBody {
    r#type: Option<String>,
    denied: Option<bool>,
    denied_reason: Option<String>,
    corrections: Option<CorrectionsBody>,
    activate_elements: Option<serde_json::Value>,
    is_completion_condition_fulfilled: Option<bool>,
    is_cancel_remaining_instances: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CorrectionsBody {
    assignee: Option<String>,
    due_date: Option<String>,
    follow_up_date: Option<String>,
    candidate_users: Option<Vec<String>>,
    candidate_groups: Option<Vec<String>>,
    priority: Option<i32>,
}

fn completion_result(body: CompletionResultBody) -> CompletionResult {
    let ad_hoc = body.r#type.as_deref() == Some("adHocSubProcess")
        || body.activate_elements.is_some()
        || body.is_completion_condition_fulfilled.is_some()
        || body.is_cancel_remaining_instances.is_some();
    if ad_hoc {
        return CompletionResult::AdHocSubProcess;
    }
    let corrections = body.corrections.unwrap_or_default();
    CompletionResult::UserTask {
        denied: body.denied.unwrap_or(false),
        denied_reason: body.denied_reason.unwrap_or_default(),
        corrections: Corrections {
            assignee: corrections.assignee,
            due_date: corrections.due_date,
            follow_up_date: corrections.follow_up_date,
            candidate_users: corrections.candidate_users,
            candidate_groups: corrections.candidate_groups,
            priority: corrections.priority,
        },
    }
}

pub(super) async fn complete(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    keyed_command(
        &d,
        "CompleteJob",
        "jobKey",
        &key,
        &call,
        |job_key, body: CompletionRequest| {
            complete_job::run(
                &d,
                CompleteJob {
                    job_key,
                    variables: document(body.variables),
                    result: body.result.map(completion_result),
                },
            )
        },
    )
    .await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct FailRequest {
    #[serde(deserialize_with = "json::optional_integer")]
    retries: Option<i32>,
    error_message: Option<String>,
    #[serde(deserialize_with = "json::optional_integer")]
    retry_back_off: Option<i64>,
    variables: Option<Box<RawValue>>,
}

pub(super) async fn fail(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    keyed_command(
        &d,
        "FailJob",
        "jobKey",
        &key,
        &call,
        |job_key, body: FailRequest| {
            fail_job::run(
                &d,
                FailJob {
                    job_key,
                    retries: body.retries.unwrap_or(0),
                    error_message: body.error_message.unwrap_or_default(),
                    retry_back_off: body.retry_back_off.unwrap_or(0),
                    variables: document(body.variables),
                },
            )
        },
    )
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ErrorRequest {
    error_code: String,
    #[serde(default)]
    error_message: Option<String>,
    #[serde(default)]
    variables: Option<Box<RawValue>>,
}

pub(super) async fn throw_error(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    keyed_command(
        &d,
        "ThrowError",
        "jobKey",
        &key,
        &call,
        |job_key, body: ErrorRequest| {
            throw_error::run(
                &d,
                ThrowError {
                    job_key,
                    error_code: body.error_code,
                    error_message: body.error_message.unwrap_or_default(),
                    variables: document(body.variables),
                },
            )
        },
    )
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateRequest {
    changeset: Changeset,
    #[serde(default, deserialize_with = "json::optional_integer")]
    operation_reference: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Changeset {
    #[serde(deserialize_with = "json::optional_integer")]
    retries: Option<i32>,
    #[serde(deserialize_with = "json::optional_integer")]
    timeout: Option<i64>,
}

pub(super) async fn update(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    keyed_command(
        &d,
        "UpdateJob",
        "jobKey",
        &key,
        &call,
        |job_key, body: UpdateRequest| {
            update_job::run(
                &d,
                UpdateJob {
                    job_key,
                    retries: body.changeset.retries,
                    timeout: body.changeset.timeout,
                    operation_reference: body.operation_reference,
                },
            )
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::JobRecord;

    #[test]
    fn a_job_as_a_rest_worker_reads_it() {
        let activated = ActivatedJob {
            key: 2_251_799_813_685_251,
            job: JobRecord {
                r#type: "pay".into(),
                worker: "w".into(),
                retries: 3,
                deadline: 1_700_000_060_000,
                custom_headers: BTreeMap::from([("a".to_owned(), "b".to_owned())]),
                variables: br#"{"id":0.12496785020850265}"#.to_vec(),
                bpmn_process_id: "order".into(),
                process_definition_version: 2,
                process_definition_key: 2_251_799_813_685_249,
                process_instance_key: 2_251_799_813_685_250,
                element_id: "task".into(),
                element_instance_key: 2_251_799_813_685_252,
                tenant_id: "<default>".into(),
                ..JobRecord::default()
            },
        };
        let text = String::from_utf8(json::to_vec(&job(activated))).unwrap();
        // The variables are the text the job carries, unchanged.
        assert!(
            text.contains(r#""variables":{"id":0.12496785020850265}"#),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "type": "pay",
                "processDefinitionId": "order",
                "processDefinitionVersion": 2,
                "elementId": "task",
                "customHeaders": {"a": "b"},
                "worker": "w",
                "retries": 3,
                "deadline": 1_700_000_060_000i64,
                "variables": json["variables"],
                "tenantId": "<default>",
                "jobKey": "2251799813685251",
                "processInstanceKey": "2251799813685250",
                "processDefinitionKey": "2251799813685249",
                "elementInstanceKey": "2251799813685252",
                "kind": "BPMN_ELEMENT",
                "listenerEventType": "UNSPECIFIED",
                "tags": []
            })
        );
    }

    #[test]
    fn activation_requires_type_timeout_and_maximum() {
        let detail = |text: &str| {
            json::body::<ActivationRequest>(text.as_bytes())
                .unwrap_err()
                .detail
        };
        assert_eq!(
            detail(r#"{"timeout":1,"maxJobsToActivate":1}"#),
            "No type provided"
        );
        assert_eq!(
            detail(r#"{"type":"a","maxJobsToActivate":1}"#),
            "No timeout provided"
        );
        assert_eq!(
            detail(r#"{"type":"a","timeout":1}"#),
            "No maxJobsToActivate provided"
        );
    }

    #[test]
    fn a_changeset_is_required_to_update() {
        let missing = json::body::<UpdateRequest>(b"{}").unwrap_err();
        assert_eq!(missing.detail, "No changeset provided");
        let both: UpdateRequest =
            json::body(br#"{"changeset":{"retries":2,"timeout":null}}"#).unwrap();
        assert_eq!(both.changeset.retries, Some(2));
        assert_eq!(both.changeset.timeout, None);
    }
}
