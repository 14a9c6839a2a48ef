use serde::Serialize;

/// A signal broadcast to every partition (Zeebe's `SignalRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignalRecord {
    #[prost(string, tag = "1")]
    pub signal_name: String,
    #[prost(bytes = "vec", tag = "2")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "3")]
    pub tenant_id: String,
}

/// A catch event or start event waiting for a signal (Zeebe's `SignalSubscriptionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignalSubscriptionRecord {
    #[prost(int64, tag = "1")]
    pub process_definition_key: i64,
    #[prost(string, tag = "2")]
    pub bpmn_process_id: String,
    /// The catch event the signal triggers.
    #[prost(string, tag = "3")]
    pub catch_event_id: String,
    /// The element instance that waits, `-1` for a signal start event.
    #[prost(int64, tag = "4")]
    pub catch_event_instance_key: i64,
    #[prost(string, tag = "5")]
    pub signal_name: String,
    #[prost(string, tag = "6")]
    pub tenant_id: String,
}
