//! Context functions: `get value` (with Camunda's key-path form), `get entries`,
//! `context`, `context put` (with Camunda's nested form), `context merge`.

use std::sync::Arc;

use super::{Builtin, context, fail, sig, string};
use crate::error::EvalError;
use crate::eval::Evaluator;
use crate::value::{Context, Name, Value};

type R = Result<Value, EvalError>;

/// Longest key path `context put` follows (it builds one nested context per key).
const MAX_KEY_PATH: usize = 256;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "get value",
        sigs: &[sig(&["m", "key"]), sig(&["context", "keys"])],
        f: get_value,
    },
    Builtin {
        name: "get entries",
        sigs: &[sig(&["m"])],
        f: get_entries,
    },
    Builtin {
        name: "context",
        sigs: &[sig(&["entries"])],
        f: context_fn,
    },
    Builtin {
        name: "context put",
        sigs: &[
            sig(&["context", "key", "value"]),
            sig(&["context", "keys", "value"]),
        ],
        f: context_put,
    },
    Builtin {
        name: "context merge",
        sigs: &[sig(&["contexts"])],
        f: context_merge,
    },
];

fn get_value(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(c) = context(ev, "get value", &a[0]) else {
        return Ok(Value::Null);
    };
    match &a[1] {
        Value::String(k) => Ok(c.get(k).cloned().unwrap_or(Value::Null)),
        Value::List(keys) => {
            let mut current = Value::Context(c);
            for k in keys.iter() {
                let (Value::Context(ctx), Value::String(k)) = (&current, k) else {
                    return Ok(Value::Null);
                };
                current = ctx.get(k).cloned().unwrap_or(Value::Null);
            }
            Ok(current)
        }
        Value::Null => Ok(Value::Null),
        other => Ok(fail(ev, "get value", || format!("invalid key '{other}'"))),
    }
}

fn get_entries(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(c) = context(ev, "get entries", &a[0]) else {
        return Ok(Value::Null);
    };
    Ok(Value::list(
        c.iter()
            .map(|(k, v)| {
                let mut e = Context::with_capacity(2);
                e.insert("key", Value::String(k.clone()));
                e.insert("value", v.clone());
                Value::context(e)
            })
            .collect(),
    ))
}

fn context_fn(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let entries = match &a[0] {
        Value::List(l) => l.clone(),
        c @ Value::Context(_) => Arc::new(crate::value::List(vec![c.clone()])),
        Value::Null => return Ok(Value::Null),
        other => {
            return Ok(fail(ev, "context", || {
                format!("expected a list of entries but found '{other}'")
            }));
        }
    };
    let mut out = Context::with_capacity(entries.len());
    for e in entries.iter() {
        let Value::Context(e) = e else {
            return Ok(fail(ev, "context", || format!("'{e}' is not an entry")));
        };
        let (Some(Value::String(k)), Some(v)) = (e.get("key"), e.get("value")) else {
            return Ok(fail(ev, "context", || {
                format!(
                    "'{}' needs a string key and a value",
                    Value::Context(e.clone())
                )
            }));
        };
        if out.contains_key(k) {
            return Ok(fail(ev, "context", || format!("duplicate key '{k}'")));
        }
        out.insert(k.clone(), v.clone());
    }
    Ok(Value::context(out))
}

fn put_path(c: &Context, keys: &[Name], value: Value) -> Option<Context> {
    let (first, rest) = keys.split_first()?;
    let mut out = c.clone();
    if rest.is_empty() {
        out.insert(first.clone(), value);
        return Some(out);
    }
    // Deeper keys reach through existing contexts only (anything else in the way makes
    // the result null); a missing key along the way is created.
    let inner = match c.get(first) {
        Some(Value::Context(inner)) => inner.as_ref().clone(),
        None | Some(Value::Null) => Context::new(),
        Some(_) => return None,
    };
    out.insert(
        first.clone(),
        Value::context(put_path(&inner, rest, value)?),
    );
    Some(out)
}

fn context_put(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(c) = context(ev, "context put", &a[0]) else {
        return Ok(Value::Null);
    };
    // Bound by name, `key` must be one string and `keys` a list.
    let named_key = ev.signature == Some(0);
    let keys: Vec<Name> = match &a[1] {
        Value::String(k) => vec![k.clone()],
        Value::List(_) if named_key => {
            return Ok(fail(ev, "context put", || "'key' must be a string".into()));
        }
        Value::List(ks) => {
            let mut out = Vec::with_capacity(ks.len());
            for k in ks.iter() {
                match k {
                    Value::String(s) => out.push(s.clone()),
                    _ => return Ok(fail(ev, "context put", || "keys must be strings".into())),
                }
            }
            if out.is_empty() || out.len() > MAX_KEY_PATH {
                return Ok(fail(ev, "context put", || {
                    format!("keys must be a path of 1 to {MAX_KEY_PATH} names")
                }));
            }
            out
        }
        other => {
            let _ = string(ev, "context put", other);
            return Ok(Value::Null);
        }
    };
    Ok(match put_path(&c, &keys, a[2].clone()) {
        Some(c) => Value::context(c),
        None => fail(ev, "context put", || {
            "a key on the path is not a context".into()
        }),
    })
}

fn context_merge(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let items = match &a[0] {
        Value::List(l) => l.clone(),
        c @ Value::Context(_) => Arc::new(crate::value::List(vec![c.clone()])),
        Value::Null => return Ok(Value::Null),
        other => {
            return Ok(fail(ev, "context merge", || {
                format!("expected a list of contexts but found '{other}'")
            }));
        }
    };
    let mut out = Context::new();
    for item in items.iter() {
        let Value::Context(c) = item else {
            return Ok(fail(ev, "context merge", || {
                format!("'{item}' is not a context")
            }));
        };
        for (k, v) in c.iter() {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::context(out))
}
