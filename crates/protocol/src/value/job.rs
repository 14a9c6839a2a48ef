use std::collections::BTreeMap;

use serde::Serialize;

/// A unit of work for a job worker (Zeebe's `JobRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub worker: String,
    #[prost(int32, tag = "3")]
    pub retries: i32,
    /// Until when the activated job belongs to its worker (ms since the epoch), or -1.
    #[prost(int64, tag = "4")]
    pub deadline: i64,
    /// Milliseconds to wait after a failure before the job can be activated again.
    #[prost(int64, tag = "5")]
    pub retry_backoff: i64,
    /// When a job failed with a back-off becomes activatable again, or -1.
    #[prost(int64, tag = "6")]
    pub recurring_time: i64,
    #[prost(btree_map = "string, string", tag = "7")]
    pub custom_headers: BTreeMap<String, String>,
    #[prost(bytes = "vec", tag = "8")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "9")]
    pub error_message: String,
    #[prost(string, tag = "10")]
    pub error_code: String,
    #[prost(string, tag = "11")]
    pub bpmn_process_id: String,
    #[prost(int32, tag = "12")]
    pub process_definition_version: i32,
    #[prost(int64, tag = "13")]
    pub process_definition_key: i64,
    #[prost(int64, tag = "14")]
    pub process_instance_key: i64,
    #[prost(string, tag = "15")]
    pub element_id: String,
    #[prost(int64, tag = "16")]
    pub element_instance_key: i64,
    #[prost(string, tag = "17")]
    pub tenant_id: String,
    /// For UPDATE_TIMEOUT: the new timeout in ms.
    #[prost(int64, tag = "18")]
    pub timeout: i64,
    /// `BPMN_ELEMENT`, `EXECUTION_LISTENER` or `TASK_LISTENER`.
    #[prost(string, tag = "19")]
    pub job_kind: String,
    #[prost(string, tag = "20")]
    pub job_listener_event_type: String,
    #[prost(string, repeated, tag = "21")]
    pub changed_attributes: Vec<String>,
    /// What a completed user task listener's job decided (its corrections or denial); none on
    /// other jobs. Written as Zeebe writes it: a default result when there is none.
    #[prost(message, optional, tag = "22")]
    #[serde(serialize_with = "serialize_result")]
    pub result: Option<JobResult>,
}

/// What a completed job tells the engine beyond its variables (Zeebe's `JobResult`): a user
/// task listener's corrections of the task's attributes, or its denial of the transition.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobResult {
    /// `USER_TASK` (or `AD_HOC_SUB_PROCESS`, which this engine does not run).
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(bool, tag = "2")]
    pub denied: bool,
    #[prost(string, tag = "3")]
    pub denied_reason: String,
    /// The attributes `corrections` sets, as the user task record names them (`assignee`,
    /// `candidateGroupsList`, `candidateUsersList`, `dueDate`, `followUpDate`, `priority`).
    #[prost(string, repeated, tag = "4")]
    pub corrected_attributes: Vec<String>,
    #[prost(message, optional, tag = "5")]
    #[serde(serialize_with = "serialize_corrections")]
    pub corrections: Option<JobResultCorrections>,
}

/// The corrected values of a user task's attributes (Zeebe's `JobResultCorrections`); only
/// those named in `correctedAttributes` count.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobResultCorrections {
    #[prost(string, tag = "1")]
    pub assignee: String,
    #[prost(string, tag = "2")]
    pub due_date: String,
    #[prost(string, tag = "3")]
    pub follow_up_date: String,
    #[prost(string, repeated, tag = "4")]
    pub candidate_users_list: Vec<String>,
    #[prost(string, repeated, tag = "5")]
    pub candidate_groups_list: Vec<String>,
    #[prost(int32, tag = "6")]
    pub priority: i32,
}

/// Zeebe's defaults for a result nobody gave.
fn default_result() -> JobResult {
    JobResult {
        r#type: "USER_TASK".to_string(),
        ..JobResult::default()
    }
}

fn default_corrections() -> JobResultCorrections {
    JobResultCorrections {
        priority: -1,
        ..JobResultCorrections::default()
    }
}

fn serialize_result<S: serde::Serializer>(
    result: &Option<JobResult>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Zeebe<'a> {
        #[serde(flatten)]
        result: &'a JobResult,
        activate_elements: [(); 0],
        completion_condition_fulfilled: bool,
        cancel_remaining_instances: bool,
    }
    let default = default_result();
    Zeebe {
        result: result.as_ref().unwrap_or(&default),
        activate_elements: [],
        completion_condition_fulfilled: false,
        cancel_remaining_instances: false,
    }
    .serialize(serializer)
}

fn serialize_corrections<S: serde::Serializer>(
    corrections: &Option<JobResultCorrections>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match corrections {
        Some(corrections) => corrections.serialize(serializer),
        None => default_corrections().serialize(serializer),
    }
}

/// A worker's request for jobs, and the jobs it got (Zeebe's `JobBatchRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobBatchRecord {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub worker: String,
    /// How long the activated jobs belong to the worker, in ms.
    #[prost(int64, tag = "3")]
    pub timeout: i64,
    #[prost(int32, tag = "4")]
    pub max_jobs_to_activate: i32,
    #[prost(int64, repeated, tag = "5")]
    pub job_keys: Vec<i64>,
    #[prost(message, repeated, tag = "6")]
    pub jobs: Vec<JobRecord>,
    /// The variables to hand out with each job (all visible ones when empty).
    #[prost(string, repeated, tag = "7")]
    pub fetch_variables: Vec<String>,
    /// More jobs were activatable than fitted the batch.
    #[prost(bool, tag = "8")]
    pub truncated: bool,
    #[prost(string, repeated, tag = "9")]
    pub tenant_ids: Vec<String>,
}
