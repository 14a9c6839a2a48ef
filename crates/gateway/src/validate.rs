//! Request checks that name the field at fault. Messages follow Zeebe's: its document check
//! ("Property 'variables' is invalid: ...") and the field checks of
//! Camunda's REST API ("No name provided", "The value for retries is '-1' but must be ...").

use beeline_protocol::key;

use crate::error::GatewayError;

fn invalid(message: String) -> GatewayError {
    GatewayError::InvalidArgument(message)
}

/// A variables document: empty (or `null`) means none; anything else must be a JSON object
/// that `beeline_json` keeps (no repeated key, integers within 64 bits, ...). Returns the
/// document as the record carries it (the engine reads it into canonical text).
pub fn variables(field: &str, text: &str) -> Result<Vec<u8>, GatewayError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(b"{}".to_vec());
    }
    match beeline_json::check_document(trimmed) {
        Ok(()) => Ok(trimmed.as_bytes().to_vec()),
        Err(e) => Err(invalid(match e.kind() {
            beeline_json::ErrorKind::NotAnObject(other) => format!(
                "Property '{field}' is invalid: Expected document to be a root level object, but was '{}'",
                kind(*other)
            ),
            _ if e.is_syntax() => format!(
                "Property '{field}' is invalid: expected a JSON object, but the text is not JSON ({e})"
            ),
            _ => format!("Property '{field}' is invalid: {e}"),
        })),
    }
}

/// The MessagePack type names Zeebe's message uses.
fn kind(kind: beeline_json::Kind) -> &'static str {
    match kind {
        beeline_json::Kind::Null => "NIL",
        beeline_json::Kind::Bool => "BOOLEAN",
        beeline_json::Kind::Float => "FLOAT",
        beeline_json::Kind::Integer => "INTEGER",
        beeline_json::Kind::String => "STRING",
        beeline_json::Kind::Array => "ARRAY",
        beeline_json::Kind::Object => "MAP",
    }
}

pub fn not_empty(field: &str, value: &str) -> Result<(), GatewayError> {
    if value.trim().is_empty() {
        return Err(invalid(format!("No {field} provided")));
    }
    Ok(())
}

pub fn at_least(field: &str, value: i64, min: i64) -> Result<(), GatewayError> {
    if value < min {
        let bound = match min {
            0 => "0 or greater".to_owned(),
            1 => "greater than 0".to_owned(),
            n => format!("at least {n}"),
        };
        return Err(invalid(format!(
            "The value for {field} is '{value}' but must be {bound}"
        )));
    }
    Ok(())
}

/// A key as Zeebe makes them (positive, its partition in the high bits): the partition.
pub fn key_format(field: &str, value: i64) -> Result<u16, GatewayError> {
    key::partition_of(value).ok_or_else(|| {
        invalid(format!(
            "The value for {field} is '{value}' but must be a key, a positive number as Zeebe returned it"
        ))
    })
}

/// A key from the request: the partition it belongs to, which must exist.
pub fn key(field: &str, value: i64, partition_count: u16) -> Result<u16, GatewayError> {
    match key_format(field, value)? {
        partition if partition > partition_count => Err(GatewayError::NotFound(format!(
            "Expected to find {field} '{value}', but it belongs to partition {partition} and this cluster has {partition_count} partition{}",
            if partition_count == 1 { "" } else { "s" }
        ))),
        partition => Ok(partition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(error: GatewayError) -> String {
        error.to_string()
    }

    #[test]
    fn variables_must_be_an_object() {
        assert_eq!(variables("variables", "").unwrap(), b"{}");
        assert_eq!(variables("variables", " null ").unwrap(), b"{}");
        assert_eq!(
            variables("variables", r#" {"a": [1, 0.12496785020850265, 1.50]} "#).unwrap(),
            br#"{"a": [1, 0.12496785020850265, 1.50]}"#
        );
        for (text, kind) in [
            ("[1]", "ARRAY"),
            ("1", "INTEGER"),
            ("1.5", "FLOAT"),
            ("\"x\"", "STRING"),
            ("true", "BOOLEAN"),
        ] {
            assert_eq!(
                message(variables("variables", text).unwrap_err()),
                format!(
                    "Property 'variables' is invalid: Expected document to be a root level object, but was '{kind}'"
                )
            );
        }
        for text in [
            "{not json",
            r#"{"a": 1} x"#,
            r#"{"a": "\q"}"#,
            r#"{"a" 1}"#,
            "{",
        ] {
            let error = message(variables("variables", text).unwrap_err());
            assert!(
                error.starts_with("Property 'variables' is invalid: expected a JSON object"),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn documents_zeebe_cannot_keep_are_refused_with_where() {
        for (text, said) in [
            (
                r#"{"id": 123456789012345678901234567890}"#,
                "Property 'variables' is invalid: the integer 123456789012345678901234567890 is outside the 64-bit range",
            ),
            (
                r#"{"a": {"b": 1, "b": 2}}"#,
                "Property 'variables' is invalid: an object has the key \"b\" twice, so which value it holds is ambiguous at 'a' (line 1, column 16)",
            ),
            (
                r#"{"s": "\ud800"}"#,
                "Property 'variables' is invalid: a string holds the escape \\ud800",
            ),
            (
                r#"{"x": 1e400}"#,
                "Property 'variables' is invalid: the number 1e400 is beyond the range",
            ),
        ] {
            let error = message(variables("variables", text).unwrap_err());
            assert!(error.starts_with(said), "{text}: {error}");
        }
    }

    #[test]
    fn deeply_nested_documents_are_refused_not_overflowed() {
        let deep = "[".repeat(100_000);
        let text = format!("{{\"a\":{deep}");
        assert!(variables("variables", &text).is_err());
    }

    #[test]
    fn fields_are_named() {
        assert_eq!(
            message(not_empty("name", " ").unwrap_err()),
            "No name provided"
        );
        assert_eq!(
            message(at_least("retries", -1, 0).unwrap_err()),
            "The value for retries is '-1' but must be 0 or greater"
        );
        assert_eq!(
            message(at_least("maxJobsToActivate", 0, 1).unwrap_err()),
            "The value for maxJobsToActivate is '0' but must be greater than 0"
        );
        assert!(at_least("retries", 0, 0).is_ok());
    }

    #[test]
    fn keys_name_their_partition() {
        let key = beeline_protocol::key::encode(2, 7);
        assert_eq!(super::key("jobKey", key, 2).unwrap(), 2);
        let not_found = super::key("jobKey", key, 1).unwrap_err();
        assert!(matches!(not_found, GatewayError::NotFound(_)));
        assert!(message(not_found).contains("partition 2"));
        let invalid = super::key("jobKey", 0, 1).unwrap_err();
        assert!(matches!(invalid, GatewayError::InvalidArgument(_)));
        assert!(message(invalid).contains("jobKey is '0'"));
    }
}
