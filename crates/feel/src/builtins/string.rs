//! String functions of DMN 1.5 plus Camunda's `extract`, `trim`, `is blank` and the
//! four-argument `string join`. Positions and lengths count Unicode code points, as FEEL
//! specifies (Java's UTF-16 units would split emoji).

use super::{Builtin, fail, integer, sig, string, xpath_regex};
use crate::error::EvalError;
use crate::eval::Evaluator;
use crate::value::Value;

type R = Result<Value, EvalError>;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "substring",
        sigs: &[
            sig(&["string", "start position"]),
            sig(&["string", "start position", "length"]),
        ],
        f: substring,
    },
    Builtin {
        name: "string length",
        sigs: &[sig(&["string"])],
        f: string_length,
    },
    Builtin {
        name: "upper case",
        sigs: &[sig(&["string"])],
        f: upper_case,
    },
    Builtin {
        name: "lower case",
        sigs: &[sig(&["string"])],
        f: lower_case,
    },
    Builtin {
        name: "substring before",
        sigs: &[sig(&["string", "match"])],
        f: substring_before,
    },
    Builtin {
        name: "substring after",
        sigs: &[sig(&["string", "match"])],
        f: substring_after,
    },
    Builtin {
        name: "contains",
        sigs: &[sig(&["string", "match"])],
        f: contains,
    },
    Builtin {
        name: "starts with",
        sigs: &[sig(&["string", "match"])],
        f: starts_with,
    },
    Builtin {
        name: "ends with",
        sigs: &[sig(&["string", "match"])],
        f: ends_with,
    },
    Builtin {
        name: "matches",
        sigs: &[
            sig(&["input", "pattern"]),
            sig(&["input", "pattern", "flags"]),
        ],
        f: matches,
    },
    Builtin {
        name: "replace",
        sigs: &[
            sig(&["input", "pattern", "replacement"]),
            sig(&["input", "pattern", "replacement", "flags"]),
        ],
        f: replace,
    },
    Builtin {
        name: "split",
        sigs: &[sig(&["string", "delimiter"])],
        f: split,
    },
    Builtin {
        name: "extract",
        sigs: &[sig(&["input", "pattern"])],
        f: extract,
    },
    Builtin {
        name: "uuid",
        sigs: &[sig(&[])],
        f: uuid,
    },
    Builtin {
        name: "to base64",
        sigs: &[sig(&["value"])],
        f: to_base64,
    },
    Builtin {
        name: "string join",
        sigs: &[
            sig(&["list"]),
            sig(&["list", "delimiter"]),
            sig(&["list", "delimiter", "prefix", "suffix"]),
        ],
        f: string_join,
    },
    Builtin {
        name: "trim",
        sigs: &[sig(&["string"])],
        f: trim,
    },
    Builtin {
        name: "is blank",
        sigs: &[sig(&["string"])],
        f: is_blank,
    },
];

fn substring(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let (Some(s), Some(start)) = (
        string(ev, "substring", &a[0]),
        integer(ev, "substring", &a[1]),
    ) else {
        return Ok(Value::Null);
    };
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as i64;
    let from = if start > 0 {
        start - 1
    } else if start < 0 {
        (len + start).max(0)
    } else {
        0
    };
    let count = match a.get(2) {
        Some(v) if !v.is_null() => match integer(ev, "substring", v) {
            Some(n) if n >= 0 => n,
            Some(_) => {
                return Ok(fail(ev, "substring", || {
                    "length must not be negative".into()
                }));
            }
            None => return Ok(Value::Null),
        },
        Some(_) => return Ok(Value::Null),
        None => len,
    };
    if from >= len {
        return Ok(Value::string(""));
    }
    let end = from.saturating_add(count).min(len);
    Ok(Value::string(
        chars[from as usize..end as usize]
            .iter()
            .collect::<String>(),
    ))
}

fn string_length(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match string(ev, "string length", &a[0]) {
        Some(s) => Value::number(s.chars().count() as i64),
        None => Value::Null,
    })
}

fn upper_case(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match string(ev, "upper case", &a[0]) {
        Some(s) => Value::string(s.to_uppercase()),
        None => Value::Null,
    })
}

fn lower_case(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match string(ev, "lower case", &a[0]) {
        Some(s) => Value::string(s.to_lowercase()),
        None => Value::Null,
    })
}

fn two_strings(ev: &mut Evaluator<'_>, name: &str, a: &[Value]) -> Option<(String, String)> {
    let s = string(ev, name, &a[0]);
    let m = string(ev, name, &a[1]);
    Some((s?.to_string(), m?.to_string()))
}

fn substring_before(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match two_strings(ev, "substring before", &a) {
        Some((s, m)) => Value::string(s.find(&m).map(|i| &s[..i]).unwrap_or("")),
        None => Value::Null,
    })
}

fn substring_after(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match two_strings(ev, "substring after", &a) {
        Some((s, m)) => Value::string(s.find(&m).map(|i| &s[i + m.len()..]).unwrap_or("")),
        None => Value::Null,
    })
}

fn contains(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match two_strings(ev, "contains", &a) {
        Some((s, m)) => Value::Bool(s.contains(&m)),
        None => Value::Null,
    })
}

fn starts_with(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match two_strings(ev, "starts with", &a) {
        Some((s, m)) => Value::Bool(s.starts_with(&m)),
        None => Value::Null,
    })
}

fn ends_with(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match two_strings(ev, "ends with", &a) {
        Some((s, m)) => Value::Bool(s.ends_with(&m)),
        None => Value::Null,
    })
}

/// The optional flags argument: absent or null means none.
fn flags(ev: &mut Evaluator<'_>, name: &str, v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Null) => Some(String::new()),
        Some(v) => string(ev, name, v).map(|s| s.to_string()),
    }
}

fn regex_for(
    ev: &mut Evaluator<'_>,
    name: &str,
    pattern: &str,
    flags: &str,
) -> Option<fancy_regex::Regex> {
    let r = xpath_regex::compile(pattern, flags);
    if r.is_none() {
        fail(ev, name, || {
            format!("invalid regular expression '{pattern}' (flags '{flags}')")
        });
    }
    r
}

fn matches(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some((input, pattern)) = two_strings(ev, "matches", &a) else {
        return Ok(Value::Null);
    };
    let Some(flags) = flags(ev, "matches", a.get(2)) else {
        return Ok(Value::Null);
    };
    let Some(re) = regex_for(ev, "matches", &pattern, &flags) else {
        return Ok(Value::Null);
    };
    Ok(match re.is_match(&input) {
        Ok(b) => Value::Bool(b),
        Err(e) => fail(ev, "matches", || e.to_string()),
    })
}

fn replace(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some((input, pattern)) = two_strings(ev, "replace", &a) else {
        return Ok(Value::Null);
    };
    let Some(repl) = string(ev, "replace", &a[2]) else {
        return Ok(Value::Null);
    };
    let Some(flags) = flags(ev, "replace", a.get(3)) else {
        return Ok(Value::Null);
    };
    let Some(re) = regex_for(ev, "replace", &pattern, &flags) else {
        return Ok(Value::Null);
    };
    let repl = if flags.contains('q') {
        Some(repl.replace('$', "$$"))
    } else {
        xpath_regex::replacement(&repl)
    };
    let Some(repl) = repl else {
        return Ok(fail(ev, "replace", || "invalid replacement string".into()));
    };
    // XPath forbids patterns that match the empty string (FORX0003).
    if re.is_match("").unwrap_or(false) {
        return Ok(fail(ev, "replace", || {
            "the pattern matches a zero-length string".into()
        }));
    }
    // Expanded match by match so a small input cannot grow past the string limit.
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_iter(input.as_str()) {
        let caps = match caps {
            Ok(c) => c,
            Err(e) => return Ok(fail(ev, "replace", || e.to_string())),
        };
        let Some(whole) = caps.get(0) else {
            continue;
        };
        out.push_str(&input[last..whole.start()]);
        caps.expand(&repl, &mut out);
        last = whole.end();
        ev.check_string_len(out.len())?;
    }
    out.push_str(&input[last..]);
    Ok(Value::string(out))
}

fn split(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some((s, delimiter)) = two_strings(ev, "split", &a) else {
        return Ok(Value::Null);
    };
    let Some(re) = regex_for(ev, "split", &delimiter, "") else {
        return Ok(Value::Null);
    };
    let mut parts = Vec::new();
    let mut last = 0;
    for m in re.find_iter(&s) {
        let m = match m {
            Ok(m) => m,
            Err(e) => return Ok(fail(ev, "split", || e.to_string())),
        };
        if m.end() == m.start() {
            continue;
        }
        parts.push(Value::string(&s[last..m.start()]));
        last = m.end();
    }
    parts.push(Value::string(&s[last..]));
    Ok(Value::list(parts))
}

fn extract(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some((s, pattern)) = two_strings(ev, "extract", &a) else {
        return Ok(Value::Null);
    };
    let Some(re) = regex_for(ev, "extract", &pattern, "") else {
        return Ok(Value::Null);
    };
    let mut out = Vec::new();
    for m in re.find_iter(&s) {
        match m {
            Ok(m) => out.push(Value::string(m.as_str())),
            Err(e) => return Ok(fail(ev, "extract", || e.to_string())),
        }
    }
    Ok(Value::list(out))
}

fn string_join(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let items = match &a[0] {
        Value::List(l) => l.clone(),
        Value::String(_) => std::sync::Arc::new(crate::value::List(vec![a[0].clone()])),
        Value::Null => return Ok(Value::Null),
        other => {
            return Ok(fail(ev, "string join", || {
                format!("expected a list of strings but found '{other}'")
            }));
        }
    };
    let mut opt = |i: usize| -> Option<String> {
        match a.get(i) {
            None | Some(Value::Null) => Some(String::new()),
            Some(v) => string(ev, "string join", v).map(|s| s.to_string()),
        }
    };
    let (Some(delimiter), Some(prefix), Some(suffix)) = (opt(1), opt(2), opt(3)) else {
        return Ok(Value::Null);
    };
    let mut parts = Vec::with_capacity(items.len());
    for item in items.iter() {
        match item {
            Value::String(s) => parts.push(s.to_string()),
            Value::Null => {}
            other => {
                return Ok(fail(ev, "string join", || {
                    format!("expected a list of strings but found '{other}'")
                }));
            }
        }
    }
    let len = parts.iter().map(String::len).sum::<usize>()
        + delimiter.len() * parts.len().saturating_sub(1)
        + prefix.len()
        + suffix.len();
    ev.check_string_len(len)?;
    Ok(Value::string(format!(
        "{prefix}{}{suffix}",
        parts.join(&delimiter)
    )))
}

fn trim(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match string(ev, "trim", &a[0]) {
        Some(s) => Value::string(s.trim()),
        None => Value::Null,
    })
}

fn is_blank(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match string(ev, "is blank", &a[0]) {
        Some(s) => Value::Bool(s.trim().is_empty()),
        None => Value::Null,
    })
}

/// A version-4 style UUID from the evaluation's seeded generator (see
/// `EvalContext::seed`); feel-scala draws a time-based random one, which an event-sourced
/// engine cannot replay.
fn uuid(ev: &mut Evaluator<'_>, _: Vec<Value>) -> R {
    let (Some(hi), Some(lo)) = (ev.next_random(), ev.next_random()) else {
        return Ok(fail(ev, "uuid", || {
            "no seed was given to the evaluation".into()
        }));
    };
    let hi = (hi & !0xF000) | 0x4000;
    let lo = (lo & !(0b11 << 62)) | (0b10 << 62);
    Ok(Value::string(format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )))
}

fn to_base64(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(s) = string(ev, "to base64", &a[0]) else {
        return Ok(Value::Null);
    };
    Ok(Value::string(base64(s.as_bytes())))
}

/// Standard base64 with padding (RFC 4648), as `java.util.Base64.getEncoder()`.
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64("FEEL ✓".as_bytes()), "RkVFTCDinJM=");
    }
}
