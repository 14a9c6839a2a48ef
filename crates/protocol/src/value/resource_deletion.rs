use serde::Serialize;

/// A request to delete a deployed resource: a process definition, a decision requirements
/// graph (with its decisions) or a form (Zeebe's `ResourceDeletionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDeletionRecord {
    #[prost(int64, tag = "1")]
    pub resource_key: i64,
    #[prost(string, tag = "2")]
    pub tenant_id: String,
}
