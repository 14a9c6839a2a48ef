use serde::Serialize;

/// A published message (Zeebe's `MessageRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRecord {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub correlation_key: String,
    /// Milliseconds the message stays buffered for later subscriptions.
    #[prost(int64, tag = "3")]
    pub time_to_live: i64,
    /// Optional id; while a message with the same name, correlation key and id is buffered,
    /// another is rejected.
    #[prost(string, tag = "4")]
    pub message_id: String,
    #[prost(bytes = "vec", tag = "5")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    /// When the message expires (ms since the epoch), set when it is published.
    #[prost(int64, tag = "6")]
    pub deadline: i64,
    #[prost(string, tag = "7")]
    pub tenant_id: String,
}

/// A message correlated at once and never buffered (Zeebe's `MessageCorrelationRecord`): the
/// answer names the first process instance it reached.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageCorrelationRecord {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub correlation_key: String,
    #[prost(bytes = "vec", tag = "3")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "4")]
    pub tenant_id: String,
    /// The key of the message the correlation published.
    #[prost(int64, tag = "5")]
    pub message_key: i64,
    /// The instance the message reached first (-1 until then).
    #[prost(int64, tag = "6")]
    pub process_instance_key: i64,
    #[prost(int64, tag = "7")]
    pub process_definition_key: i64,
}
