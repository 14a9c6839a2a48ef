use serde::Serialize;
use serde::ser::Serializer;

use crate::intent::{Intent, ValueType};
use crate::value::RecordValue;

/// A command sent from one partition to others, tracked until every one acknowledged it
/// (Zeebe's `CommandDistributionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandDistributionRecord {
    /// The partition the command goes to (or came from, for an acknowledgement).
    #[prost(int32, tag = "1")]
    pub partition_id: i32,
    #[prost(string, tag = "2")]
    pub queue_id: String,
    #[prost(int32, tag = "3")]
    #[serde(serialize_with = "value_type_name")]
    pub value_type: i32,
    #[prost(int32, tag = "4")]
    #[serde(skip)]
    pub intent: i32,
    /// The distributed command's value, in the log's value encoding.
    #[prost(bytes = "vec", tag = "5")]
    #[serde(skip)]
    pub command_value: Vec<u8>,
}

fn value_type_name<S: Serializer>(value_type: &i32, serializer: S) -> Result<S::Ok, S::Error> {
    let name = u8::try_from(*value_type)
        .ok()
        .and_then(ValueType::from_value)
        .map_or("NULL_VAL", ValueType::name);
    serializer.serialize_str(name)
}

impl CommandDistributionRecord {
    /// Wraps a command for distribution.
    pub fn new(partition_id: u16, intent: Intent, value: &RecordValue) -> Self {
        let mut command_value = Vec::new();
        value.encode(&mut command_value);
        Self {
            partition_id: i32::from(partition_id),
            queue_id: String::new(),
            value_type: i32::from(intent.value_type().value()),
            intent: i32::from(intent.value()),
            command_value,
        }
    }

    /// The distributed command's intent and value, if they decode.
    pub fn command(&self) -> Option<(Intent, RecordValue)> {
        let value_type = ValueType::from_value(u8::try_from(self.value_type).ok()?)?;
        let intent = Intent::from_parts(value_type, u8::try_from(self.intent).ok()?)?;
        let value = RecordValue::decode(value_type, &self.command_value).ok()?;
        Some((intent, value))
    }
}
