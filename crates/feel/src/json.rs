//! Conversion between FEEL values and JSON, as Zeebe does it.
//!
//! In: JSON numbers become exact decimals (a `0.1` stays `0.1`), strings stay strings (no
//! guessing of dates), objects become contexts.
//!
//! Out (Zeebe's `FeelToMessagePackTransformer`): a whole number is an integer, any other
//! number a double; dates, times and durations become ISO-8601 strings in the forms
//! `java.time` prints (`LocalDate`, `LocalTime`, `ISO_OFFSET_DATE_TIME` without the zone
//! id, ...); contexts become objects; ranges and functions become `null`.

use std::fmt::Write;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::number::Number;
use crate::temporal::{Date, DateTime, LocalTime, Time};
use crate::value::{Context, Name, Value};

/// Nesting beyond this is cut off (null) on output; FEEL-built values never get close.
const MAX_DEPTH: usize = 1_000;

/// Most JSON nodes one conversion writes.
pub const MAX_JSON_NODES: usize = 10_000_000;

impl Value {
    /// Converts a JSON value (e.g. a process variable) to a FEEL value.
    pub fn from_json(json: &Json) -> Value {
        from_json(json, 0)
    }

    /// Converts to JSON the way Zeebe writes FEEL results to variables. Values share
    /// structure, so one can stand for a tree too big to write out: past
    /// [`MAX_JSON_NODES`] nodes, what is left becomes `null`.
    pub fn to_json(&self) -> Json {
        let mut budget = MAX_JSON_NODES;
        to_json(self, 0, &mut budget)
    }
}

impl From<&Json> for Value {
    fn from(json: &Json) -> Value {
        Value::from_json(json)
    }
}

impl From<&Value> for Json {
    fn from(v: &Value) -> Json {
        v.to_json()
    }
}

fn from_json(json: &Json, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Number(Number::from_i64(i))
            } else if let Some(u) = n.as_u64() {
                Value::Number(Number::from_u64(u))
            } else {
                n.as_f64()
                    .and_then(Number::from_f64)
                    .map(Value::Number)
                    .unwrap_or(Value::Null)
            }
        }
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(items) => Value::List(Arc::new(
            items.iter().map(|i| from_json(i, depth + 1)).collect(),
        )),
        Json::Object(map) => {
            let mut c = Context::with_capacity(map.len());
            for (k, v) in map {
                c.push_unchecked(Name::from(k.as_str()), from_json(v, depth + 1));
            }
            Value::context(c)
        }
    }
}

fn to_json(v: &Value, depth: usize, budget: &mut usize) -> Json {
    if depth > MAX_DEPTH || *budget == 0 {
        return Json::Null;
    }
    *budget -= 1;
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => number_to_json(*n),
        Value::String(s) => Json::String(s.to_string()),
        Value::Date(d) => Json::String(java_date(*d)),
        Value::Time(t) => Json::String(time_string(*t)),
        Value::DateTime(dt) => Json::String(java_date_time(*dt)),
        Value::DayTimeDuration(d) => Json::String(d.to_string()),
        Value::YearMonthDuration(d) => Json::String(d.to_string()),
        Value::List(items) => Json::Array(
            items
                .iter()
                .map(|i| to_json(i, depth + 1, budget))
                .collect(),
        ),
        Value::Context(c) => Json::Object(
            c.iter()
                .map(|(k, v)| (k.to_string(), to_json(v, depth + 1, budget)))
                .collect(),
        ),
        Value::Range(_) | Value::Function(_) => Json::Null,
    }
}

/// Whole numbers as integers, others as doubles (Zeebe: `isWhole ? long : double`). Whole
/// numbers above the `i64` range but within MessagePack's unsigned 64 bits stay integers
/// (a variable of 18446744073709551615 copied by a mapping keeps its digits), and beyond
/// that become doubles, where Java's `longValue` would silently wrap.
fn number_to_json(n: Number) -> Json {
    if n.is_integer() {
        if let Some(i) = n.to_i64() {
            return Json::from(i);
        }
        if let Some(u) = n.to_u64() {
            return Json::from(u);
        }
    }
    serde_json::Number::from_f64(n.to_f64())
        .map(Json::Number)
        .unwrap_or(Json::Null)
}

/// `LocalDate.toString`: years beyond 9999 carry a `+`.
fn java_date(d: Date) -> String {
    if d.year() > 9999 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// `LocalTime.toString`: seconds only when non-zero, fractions in groups of three digits.
fn java_local_time(t: LocalTime) -> String {
    let mut s = format!("{:02}:{:02}", t.hour(), t.minute());
    let nano = t.nano();
    if t.second() > 0 || nano > 0 {
        let _ = write!(s, ":{:02}", t.second());
        if nano > 0 {
            if nano.is_multiple_of(1_000_000) {
                let _ = write!(s, ".{:03}", nano / 1_000_000);
            } else if nano.is_multiple_of(1_000) {
                let _ = write!(s, ".{:06}", nano / 1_000);
            } else {
                let _ = write!(s, ".{nano:09}");
            }
        }
    }
    s
}

/// Local times print like `LocalTime.toString`; zoned times like feel-scala's
/// `ZonedTime.format` (which is FEEL's own string form).
fn time_string(t: Time) -> String {
    match t.zone {
        None => java_local_time(t.local),
        Some(_) => t.to_string(),
    }
}

/// `ISO_OFFSET_DATE_TIME` / `ISO_LOCAL_DATE_TIME`: seconds always, minimal fraction, the
/// offset but never the zone id.
fn java_date_time(dt: DateTime) -> String {
    let mut s = java_date(dt.date);
    let t = dt.time;
    let _ = write!(s, "T{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    if t.nano() > 0 {
        let digits = format!("{:09}", t.nano());
        let _ = write!(s, ".{}", digits.trim_end_matches('0'));
    }
    if let Some(z) = dt.zone {
        let _ = crate::temporal::write_offset(&mut s, z.offset);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feel(src: &str) -> Value {
        crate::Expression::parse(src)
            .unwrap()
            .evaluate(&crate::EvalContext::new(&()))
            .unwrap()
    }

    #[test]
    fn numbers_stay_exact_in_and_follow_zeebe_out() {
        let v = Value::from_json(&json!(0.1));
        assert_eq!(v.to_string(), "0.1");
        assert_eq!(
            Value::from_json(&json!(12345678901234_i64)).to_json(),
            json!(12345678901234_i64)
        );
        assert_eq!(feel("0.1 + 0.2").to_json(), json!(0.3));
        assert_eq!(feel("10 / 4 * 2").to_json(), json!(5));
        assert_eq!(feel("2.50 * 2").to_json(), json!(5));
        assert_eq!(feel("1 / 3").to_json(), json!(1.0 / 3.0));
        assert_eq!(
            Value::from_json(&json!(u64::MAX)).to_json(),
            json!(u64::MAX),
            "unsigned 64-bit integers keep their digits"
        );
        assert_eq!(
            feel("18446744073709551615 + 1").to_json(),
            json!(1.8446744073709552e19)
        );
        assert_eq!(feel("-9223372036854775808").to_json(), json!(i64::MIN));
        // A whole double is read as the decimal of its shortest text (`BigDecimal.valueOf`)
        // and written as that integer, as Zeebe writes it.
        assert_eq!(
            Value::from_json(&json!(8.931233655122751e17)).to_json(),
            json!(893_123_365_512_275_100_i64)
        );
        for double in [
            0.12496785020850265,
            0.9376180953623889,
            123456789.12345679,
            1e-7,
            1e300,
        ] {
            let text = serde_json::to_string(&double).unwrap();
            let read: Json = serde_json::from_str(&text).unwrap();
            assert_eq!(
                serde_json::to_string(&Value::from_json(&read).to_json()).unwrap(),
                text,
                "a double read into FEEL and written back unchanged"
            );
        }
    }

    #[test]
    fn temporal_values_become_iso_strings() {
        assert_eq!(feel(r#"date("2021-01-01")"#).to_json(), json!("2021-01-01"));
        assert_eq!(feel(r#"time("10:00:00")"#).to_json(), json!("10:00"));
        assert_eq!(
            feel(r#"time("10:00:30.5")"#).to_json(),
            json!("10:00:30.500")
        );
        assert_eq!(
            feel(r#"time("10:00:00+01:00")"#).to_json(),
            json!("10:00:00+01:00")
        );
        assert_eq!(
            feel(r#"date and time("2021-01-01T10:00:00@Europe/Berlin")"#).to_json(),
            json!("2021-01-01T10:00:00+01:00")
        );
        assert_eq!(
            feel(r#"date and time("2021-01-01T10:00:00")"#).to_json(),
            json!("2021-01-01T10:00:00")
        );
        assert_eq!(
            feel(r#"date and time("2021-01-01T10:00:00Z")"#).to_json(),
            json!("2021-01-01T10:00:00Z")
        );
        assert_eq!(feel(r#"duration("PT36H")"#).to_json(), json!("P1DT12H"));
        assert_eq!(feel(r#"duration("P14M")"#).to_json(), json!("P1Y2M"));
    }

    #[test]
    fn structures_and_unconvertible_values() {
        assert_eq!(
            feel(r#"{a: 1, b: [true, null, "x"], c: {d: 2.5}}"#).to_json(),
            json!({"a": 1, "b": [true, null, "x"], "c": {"d": 2.5}})
        );
        assert_eq!(feel("[1..5]").to_json(), Json::Null);
        assert_eq!(feel("function(x) x").to_json(), Json::Null);
        assert_eq!(feel("{f: function(x) x}").to_json(), json!({"f": null}));
    }

    #[test]
    fn round_trip_of_variables() {
        let input = json!({"order": {"items": [{"price": 12.5}, {"price": 7}], "tier": "gold"}});
        assert_eq!(Value::from_json(&input).to_json(), input);
    }
}
