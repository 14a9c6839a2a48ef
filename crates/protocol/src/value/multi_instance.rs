use serde::Serialize;

/// A batch of element instance commands that re-issues itself, so that no step writes an
/// unbounded number of records: activating the inner instances of a parallel multi-instance
/// body one at a time, or terminating the children of a scope (Zeebe's
/// `ProcessInstanceBatchRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInstanceBatchRecord {
    #[prost(int64, tag = "1")]
    pub process_instance_key: i64,
    #[prost(int64, tag = "2")]
    pub process_definition_key: i64,
    /// The element instance whose children the batch activates or terminates.
    #[prost(int64, tag = "3")]
    pub batch_element_instance_key: i64,
    /// ACTIVATE: how many children are left to activate. TERMINATE: the key of the child to
    /// go on from (0 at the start).
    #[prost(int64, tag = "4")]
    pub index: i64,
}

/// The input collection of a multi-instance body, evaluated once when the body is activated
/// (Zeebe's `MultiInstanceRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiInstanceRecord {
    /// Each item as JSON text.
    #[prost(string, repeated, tag = "1")]
    pub input_collection: Vec<String>,
}
