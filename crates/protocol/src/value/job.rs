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
