use serde::Serialize;

/// A message subscription on the partition of the message's correlation key (Zeebe's
/// `MessageSubscriptionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSubscriptionRecord {
    #[prost(int64, tag = "1")]
    pub process_instance_key: i64,
    /// The element instance that waits (the catch event, the activity of a boundary event,
    /// the scope of an event sub-process, the event-based gateway).
    #[prost(int64, tag = "2")]
    pub element_instance_key: i64,
    #[prost(string, tag = "3")]
    pub bpmn_process_id: String,
    /// The message being correlated, `-1` while none is.
    #[prost(int64, tag = "4")]
    pub message_key: i64,
    #[prost(string, tag = "5")]
    pub message_name: String,
    #[prost(string, tag = "6")]
    pub correlation_key: String,
    /// Whether correlating closes the subscription.
    #[prost(bool, tag = "7")]
    pub interrupting: bool,
    #[prost(bytes = "vec", tag = "8")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "9")]
    pub tenant_id: String,
    #[prost(int64, tag = "10")]
    pub process_definition_key: i64,
}

/// A message subscription on the partition of the process instance (Zeebe's
/// `ProcessMessageSubscriptionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMessageSubscriptionRecord {
    /// The partition of the message's correlation key, where its counterpart lives.
    #[prost(int32, tag = "1")]
    pub subscription_partition_id: i32,
    #[prost(int64, tag = "2")]
    pub process_instance_key: i64,
    #[prost(int64, tag = "3")]
    pub element_instance_key: i64,
    #[prost(int64, tag = "4")]
    pub message_key: i64,
    #[prost(string, tag = "5")]
    pub message_name: String,
    #[prost(bytes = "vec", tag = "6")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(bool, tag = "7")]
    pub interrupting: bool,
    #[prost(string, tag = "8")]
    pub bpmn_process_id: String,
    #[prost(string, tag = "9")]
    pub correlation_key: String,
    /// The catch event the message triggers.
    #[prost(string, tag = "10")]
    pub element_id: String,
    #[prost(string, tag = "11")]
    pub tenant_id: String,
    #[prost(int64, tag = "12")]
    pub process_definition_key: i64,
}

/// A message start event of the latest version of a process (Zeebe's
/// `MessageStartEventSubscriptionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageStartEventSubscriptionRecord {
    #[prost(int64, tag = "1")]
    pub process_definition_key: i64,
    #[prost(string, tag = "2")]
    pub bpmn_process_id: String,
    #[prost(string, tag = "3")]
    pub start_event_id: String,
    #[prost(string, tag = "4")]
    pub message_name: String,
    /// Set when a message correlates: the instance it created.
    #[prost(int64, tag = "5")]
    pub process_instance_key: i64,
    #[prost(string, tag = "6")]
    pub correlation_key: String,
    #[prost(int64, tag = "7")]
    pub message_key: i64,
    #[prost(bytes = "vec", tag = "8")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "9")]
    pub tenant_id: String,
}
