use serde::Serialize;

/// One variable of one scope (Zeebe's `VariableRecord`). The value is its JSON text.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariableRecord {
    #[prost(string, tag = "1")]
    pub name: String,
    /// JSON text of the value, as Zeebe exports it (a string holding JSON).
    #[prost(string, tag = "2")]
    pub value: String,
    #[prost(int64, tag = "3")]
    pub scope_key: i64,
    #[prost(int64, tag = "4")]
    pub process_instance_key: i64,
    #[prost(int64, tag = "5")]
    pub process_definition_key: i64,
    #[prost(string, tag = "6")]
    pub bpmn_process_id: String,
    #[prost(string, tag = "7")]
    pub tenant_id: String,
}

/// Set several variables on a scope at once (Zeebe's `VariableDocumentRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariableDocumentRecord {
    #[prost(int64, tag = "1")]
    pub scope_key: i64,
    /// `PROPAGATE` (to the scope that has each variable, else the instance) or `LOCAL`.
    #[prost(string, tag = "2")]
    pub update_semantics: String,
    #[prost(bytes = "vec", tag = "3")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(int64, tag = "4")]
    pub process_instance_key: i64,
    #[prost(string, tag = "5")]
    pub tenant_id: String,
}
