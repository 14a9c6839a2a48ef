use serde::Serialize;

/// A change to a running process instance: elements to activate and element instances to
/// terminate (Zeebe's `ProcessInstanceModificationRecord`). The MODIFIED event carries each
/// activation's flow scope instances in `ancestor_scope_keys`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInstanceModificationRecord {
    #[prost(int64, tag = "1")]
    pub process_instance_key: i64,
    #[prost(message, repeated, tag = "2")]
    pub terminate_instructions: Vec<TerminateInstruction>,
    #[prost(message, repeated, tag = "3")]
    pub activate_instructions: Vec<ActivateInstruction>,
    /// The flow scope instances of every activation (Zeebe keeps this deprecated union).
    #[prost(int64, repeated, tag = "4")]
    pub ancestor_scope_keys: Vec<i64>,
    #[prost(string, tag = "5")]
    pub tenant_id: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminateInstruction {
    #[prost(int64, tag = "1")]
    pub element_instance_key: i64,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivateInstruction {
    #[prost(string, tag = "1")]
    pub element_id: String,
    /// The flow scope instance to activate in, or an ancestor of it (-1: the engine chooses).
    #[prost(int64, tag = "2")]
    pub ancestor_scope_key: i64,
    #[prost(message, repeated, tag = "3")]
    pub variable_instructions: Vec<VariableInstruction>,
    /// The flow scope instances the activation used or created.
    #[prost(int64, repeated, tag = "4")]
    pub ancestor_scope_keys: Vec<i64>,
}

/// Variables set local in the instance of `element_id` (empty: the process instance) before
/// the element is activated.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariableInstruction {
    #[prost(bytes = "vec", tag = "1")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "2")]
    pub element_id: String,
}
