use serde::Serialize;

/// The record of an unexpected processing failure, which bans the process instance
/// (Zeebe's `ErrorRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorRecord {
    #[prost(string, tag = "1")]
    pub exception_message: String,
    #[prost(string, tag = "2")]
    pub stacktrace: String,
    /// Position of the command whose processing failed.
    #[prost(int64, tag = "3")]
    pub error_event_position: i64,
    /// The banned instance, or -1.
    #[prost(int64, tag = "4")]
    pub process_instance_key: i64,
}
