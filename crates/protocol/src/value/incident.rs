use serde::Serialize;

/// A problem a person must look at before the instance can go on (Zeebe's `IncidentRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IncidentRecord {
    /// Zeebe's `ErrorType` name, e.g. `JOB_NO_RETRIES`, `IO_MAPPING_ERROR`.
    #[prost(string, tag = "1")]
    pub error_type: String,
    #[prost(string, tag = "2")]
    pub error_message: String,
    #[prost(string, tag = "3")]
    pub bpmn_process_id: String,
    #[prost(int64, tag = "4")]
    pub process_definition_key: i64,
    #[prost(int64, tag = "5")]
    pub process_instance_key: i64,
    #[prost(string, tag = "6")]
    pub element_id: String,
    #[prost(int64, tag = "7")]
    pub element_instance_key: i64,
    /// The job whose retries ran out, or -1.
    #[prost(int64, tag = "8")]
    pub job_key: i64,
    #[prost(int64, tag = "9")]
    pub variable_scope_key: i64,
    #[prost(string, tag = "10")]
    pub tenant_id: String,
}
