//! Cursors: the base64 (standard, padded) of a JSON array of the row's sort values, its key
//! last. Clients treat them as opaque.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::rows::Value;

pub fn encode(values: &[Value]) -> String {
    let json: Vec<serde_json::Value> = values
        .iter()
        .map(|v| match v {
            Value::Null => serde_json::Value::Null,
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Text(s) => serde_json::Value::from(s.as_str()),
        })
        .collect();
    STANDARD.encode(serde_json::Value::Array(json).to_string())
}

/// The values of a cursor, `expected` of them; `None` for anything else.
pub fn decode(cursor: &str, expected: usize) -> Option<Vec<Value>> {
    let bytes = STANDARD.decode(cursor).ok()?;
    let json: Vec<serde_json::Value> = serde_json::from_slice(&bytes).ok()?;
    if json.len() != expected {
        return None;
    }
    json.into_iter()
        .map(|v| match v {
            serde_json::Value::Null => Some(Value::Null),
            serde_json::Value::Number(n) => n.as_i64().map(Value::Int),
            serde_json::Value::String(s) => Some(Value::Text(s)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_what_is_not_one() {
        let values = vec![Value::text("ACTIVE"), Value::Int(2251799813687102)];
        assert_eq!(decode(&encode(&values), 2), Some(values));
        assert_eq!(decode(&encode(&[Value::Int(1)]), 2), None);
        assert_eq!(decode("not base64!", 1), None);
        assert_eq!(decode(&STANDARD.encode("{}"), 1), None);
    }
}
