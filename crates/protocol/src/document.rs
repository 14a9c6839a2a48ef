//! Variable documents: JSON objects carried inside record values as their UTF-8 text.
//!
//! Records keep the text rather than a parsed tree: most records pass documents through
//! unchanged, and text is what both the log encoding and the JSON export want. A command
//! carries the text the client sent, checked; the engine reads it into canonical text
//! (`beeline_json`) for the variables it sets.

use serde::Serializer;
use serde_json::value::RawValue;

/// Serializes document bytes inline as a JSON object (`{}` when empty or not valid JSON).
pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    let text = std::str::from_utf8(bytes).unwrap_or("{}");
    let text = if text.trim().is_empty() { "{}" } else { text };
    match RawValue::from_string(text.to_owned()) {
        Ok(raw) => serde::Serialize::serialize(&raw, serializer),
        Err(_) => serde::ser::SerializeMap::end(serializer.serialize_map(Some(0))?),
    }
}
