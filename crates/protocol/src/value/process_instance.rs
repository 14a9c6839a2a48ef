use serde::Serialize;

/// An element instance of a process instance (Zeebe's `ProcessInstanceRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInstanceRecord {
    #[prost(string, tag = "1")]
    pub bpmn_process_id: String,
    #[prost(int32, tag = "2")]
    pub version: i32,
    #[prost(int64, tag = "3")]
    pub process_definition_key: i64,
    #[prost(int64, tag = "4")]
    pub process_instance_key: i64,
    #[prost(string, tag = "5")]
    pub element_id: String,
    #[prost(int64, tag = "6")]
    pub flow_scope_key: i64,
    /// Zeebe's `BpmnElementType` name, e.g. `SERVICE_TASK`.
    #[prost(string, tag = "7")]
    pub bpmn_element_type: String,
    /// Zeebe's `BpmnEventType` name, e.g. `NONE`, `TIMER`.
    #[prost(string, tag = "8")]
    pub bpmn_event_type: String,
    #[prost(int64, tag = "9")]
    pub parent_process_instance_key: i64,
    #[prost(int64, tag = "10")]
    pub parent_element_instance_key: i64,
    #[prost(string, tag = "11")]
    pub tenant_id: String,
}
