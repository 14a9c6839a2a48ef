use serde::Serialize;

/// A timer waiting to trigger a catch event (Zeebe's `TimerRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerRecord {
    /// The element instance the timer belongs to (an intermediate catch event, the activity of
    /// a boundary event, the scope of an event sub-process), `-1` for a timer start event.
    #[prost(int64, tag = "1")]
    pub element_instance_key: i64,
    /// `-1` for a timer start event until it triggers.
    #[prost(int64, tag = "2")]
    pub process_instance_key: i64,
    /// When the timer is due, in milliseconds since the epoch.
    #[prost(int64, tag = "3")]
    pub due_date: i64,
    /// The catch event the timer triggers.
    #[prost(string, tag = "4")]
    pub target_element_id: String,
    /// Triggers left for a cycle (`-1`: without end); 1 for durations and dates.
    #[prost(int32, tag = "5")]
    pub repetitions: i32,
    #[prost(int64, tag = "6")]
    pub process_definition_key: i64,
    #[prost(string, tag = "7")]
    pub tenant_id: String,
}
