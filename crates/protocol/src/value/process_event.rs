use serde::Serialize;

/// An event that triggered a catching element: a boundary event, an event sub-process, a
/// catch event (Zeebe's `ProcessEventRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessEventRecord {
    /// The element instance whose event it is (the activity a boundary event is attached to,
    /// the scope of an event sub-process, the catch event itself).
    #[prost(int64, tag = "1")]
    pub scope_key: i64,
    /// The element that catches it.
    #[prost(string, tag = "2")]
    pub target_element_id: String,
    #[prost(bytes = "vec", tag = "3")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(int64, tag = "4")]
    pub process_definition_key: i64,
    #[prost(int64, tag = "5")]
    pub process_instance_key: i64,
    #[prost(string, tag = "6")]
    pub tenant_id: String,
    /// Whether the catching element interrupts its scope (not part of Zeebe's exports).
    #[prost(bool, tag = "7")]
    #[serde(skip)]
    pub interrupting: bool,
}

/// An escalation thrown, and whether something caught it (Zeebe's `EscalationRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EscalationRecord {
    #[prost(int64, tag = "1")]
    pub process_instance_key: i64,
    #[prost(string, tag = "2")]
    pub escalation_code: String,
    #[prost(string, tag = "3")]
    pub throw_element_id: String,
    #[prost(string, tag = "4")]
    pub catch_element_id: String,
}
