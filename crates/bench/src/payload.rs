//! The variables the tool sends: a payload of a chosen size, and the few variables of its own
//! that let a worker attribute a job to a run, a phase and an intended start time.

use serde::Deserialize;

/// Characters of one payload field's value; a payload is many such fields, as business data is.
const FIELD_VALUE_LEN: usize = 100;

/// A JSON object of `p000`, `p001`, ... string fields whose serialized length is exactly
/// `size` bytes when `size >= 2` (`{}` below that). The content is fixed pseudo-random
/// letters, so it compresses about as badly as real data.
pub fn payload(size: u64) -> String {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    if size <= 2 {
        return "{}".to_string();
    }
    let mut out = String::with_capacity(size);
    out.push('{');
    let mut seed: u32 = 0x9e37_79b9;
    let mut next_char = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        char::from(b'a' + (seed % 26) as u8)
    };
    let mut field = 0usize;
    // Remaining bytes for fields, keeping one for the closing brace.
    loop {
        let remaining = size - out.len() - 1;
        let comma = usize::from(field > 0);
        let key = format!("p{field:03}");
        // `"key":""` plus the comma.
        let overhead = comma + key.len() + 5;
        if remaining < overhead {
            // Too little left for a field: pad the last value (or, with no field yet, the
            // object with spaces, which JSON allows).
            if field == 0 {
                out.extend(std::iter::repeat_n(' ', remaining));
            } else {
                out.pop(); // the closing quote of the last value
                out.extend((0..remaining).map(|_| next_char()));
                out.push('"');
            }
            break;
        }
        let value_len = (remaining - overhead).min(FIELD_VALUE_LEN);
        if comma == 1 {
            out.push(',');
        }
        out.push('"');
        out.push_str(&key);
        out.push_str("\":\"");
        out.extend((0..value_len).map(|_| next_char()));
        out.push('"');
        field += 1;
        if size - out.len() == 1 {
            break;
        }
    }
    out.push('}');
    out
}

/// `{"benchJobT":T, ...payload}`: the variables a worker completes a job with.
pub fn with_fields(fields: &[(&str, String)], payload: &str) -> String {
    let mut out = String::with_capacity(payload.len() + 32 * fields.len() + 2);
    out.push('{');
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(name);
        out.push_str("\":");
        out.push_str(value);
    }
    let inner = payload
        .trim()
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or("")
        .trim();
    if !inner.is_empty() {
        if !fields.is_empty() {
            out.push(',');
        }
        out.push_str(inner);
    }
    out.push('}');
    out
}

/// The tool's own variables, read back from an activated job. Other variables (the payload)
/// are skipped.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct BenchVars {
    /// The run that started the instance; jobs of other runs are completed but not measured.
    #[serde(rename = "benchRun")]
    pub run: Option<u64>,
    /// Which phase (find-max step) started it.
    #[serde(rename = "benchPhase")]
    pub phase: Option<usize>,
    /// Intended start time, µs after the run's origin.
    #[serde(rename = "benchT")]
    pub intended_us: Option<u64>,
    /// When the request that made the current job was sent (the creation or the previous
    /// job's completion), µs after the run's origin.
    #[serde(rename = "benchJobT")]
    pub job_t_us: Option<u64>,
}

impl BenchVars {
    pub fn parse(variables: &str) -> BenchVars {
        serde_json::from_str(variables).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_has_the_requested_size_and_is_a_json_object() {
        for size in [
            0u64, 1, 2, 3, 5, 9, 10, 11, 12, 50, 100, 108, 109, 110, 111, 1024, 4096, 10_000,
        ] {
            let p = payload(size);
            let value: serde_json::Value = serde_json::from_str(&p).unwrap();
            assert!(value.is_object(), "{size}: {p}");
            if size >= 2 {
                assert_eq!(p.len() as u64, size, "{p}");
            } else {
                assert_eq!(p, "{}");
            }
        }
        let p = payload(1024);
        let fields =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&p).unwrap();
        assert!(fields.len() >= 9, "{}", fields.len());
    }

    #[test]
    fn fields_merge_into_the_payload() {
        let merged = with_fields(&[("benchJobT", "42".into())], &payload(200));
        let value: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(value["benchJobT"], 42);
        assert!(value["p000"].is_string());
        assert_eq!(with_fields(&[("a", "1".into())], "{}"), r#"{"a":1}"#);
        assert_eq!(with_fields(&[], "{}"), "{}");
        let vars = BenchVars::parse(&with_fields(
            &[
                ("benchRun", "7".into()),
                ("benchPhase", "1".into()),
                ("benchT", "1000".into()),
            ],
            &payload(300),
        ));
        assert_eq!(
            vars,
            BenchVars {
                run: Some(7),
                phase: Some(1),
                intended_us: Some(1000),
                job_t_us: None
            }
        );
        assert_eq!(BenchVars::parse("not json"), BenchVars::default());
    }
}
