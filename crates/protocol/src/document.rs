//! Variable documents: JSON objects carried inside record values as their UTF-8 text.
//!
//! Records keep the text rather than a parsed tree: most records pass documents through
//! unchanged, and text is what both the log encoding and the JSON export want.

use serde::Serializer;
use serde_json::value::RawValue;

/// Checks that `text` is a JSON object (or empty, meaning no variables) and returns it
/// normalised: empty becomes `{}`.
pub fn validate(text: &str) -> Result<Vec<u8>, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(b"{}".to_vec());
    }
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(serde_json::Value::Object(_)) => Ok(trimmed.as_bytes().to_vec()),
        Ok(other) => Err(format!(
            "expected a JSON object of variables, but got {}",
            json_kind(&other)
        )),
        Err(e) => Err(format!("invalid JSON ({e})")),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Serializes document bytes inline as a JSON object (`{}` when empty or not valid JSON).
pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    let text = std::str::from_utf8(bytes).unwrap_or("{}");
    let text = if text.trim().is_empty() { "{}" } else { text };
    match RawValue::from_string(text.to_owned()) {
        Ok(raw) => serde::Serialize::serialize(&raw, serializer),
        Err(_) => serde::ser::SerializeMap::end(serializer.serialize_map(Some(0))?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_objects_are_documents() {
        assert_eq!(validate("").unwrap(), b"{}".to_vec());
        assert_eq!(validate(r#" {"a":1} "#).unwrap(), br#"{"a":1}"#.to_vec());
        assert!(validate("[1]").unwrap_err().contains("an array"));
        assert!(validate("{").unwrap_err().contains("invalid JSON"));
    }
}
