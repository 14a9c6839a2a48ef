use serde::Serialize;

/// The partition's clock (Zeebe's `ClockRecord`): pinned at `time` (ms since the epoch), or
/// reset to the system clock (`time` 0).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClockRecord {
    #[prost(int64, tag = "1")]
    pub time: i64,
}
