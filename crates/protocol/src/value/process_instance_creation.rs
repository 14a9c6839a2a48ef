use serde::Serialize;

/// A request to start a process instance (Zeebe's `ProcessInstanceCreationRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInstanceCreationRecord {
    #[prost(string, tag = "1")]
    pub bpmn_process_id: String,
    #[prost(int64, tag = "2")]
    pub process_definition_key: i64,
    /// -1 for the latest version.
    #[prost(int32, tag = "3")]
    pub version: i32,
    #[prost(bytes = "vec", tag = "4")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(int64, tag = "5")]
    pub process_instance_key: i64,
    /// For creation with result: the variables to answer with (all when empty).
    #[prost(string, repeated, tag = "6")]
    pub fetch_variables: Vec<String>,
    #[prost(message, repeated, tag = "7")]
    pub start_instructions: Vec<StartInstruction>,
    #[prost(string, tag = "8")]
    pub tenant_id: String,
    #[prost(string, repeated, tag = "9")]
    pub tags: Vec<String>,
}

/// Start the instance at this element instead of the none start event.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartInstruction {
    #[prost(string, tag = "1")]
    pub element_id: String,
}

/// The answer to a creation with result: the instance's variables when it completed
/// (Zeebe's `ProcessInstanceResultRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInstanceResultRecord {
    #[prost(string, tag = "1")]
    pub bpmn_process_id: String,
    #[prost(int64, tag = "2")]
    pub process_definition_key: i64,
    #[prost(int32, tag = "3")]
    pub version: i32,
    #[prost(bytes = "vec", tag = "4")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(int64, tag = "5")]
    pub process_instance_key: i64,
    #[prost(string, tag = "6")]
    pub tenant_id: String,
    #[prost(string, repeated, tag = "7")]
    pub tags: Vec<String>,
}
