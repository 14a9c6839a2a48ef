//! Boolean functions and Camunda's null helpers: `not`, `is defined` (handled by the
//! evaluator, which must see whether the argument exists), `get or else`, `assert`.

use super::{Builtin, sig};
use crate::error::EvalError;
use crate::eval::Evaluator;
use crate::value::Value;

type R = Result<Value, EvalError>;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "not",
        sigs: &[sig(&["negand"])],
        f: not,
    },
    Builtin {
        name: "is defined",
        sigs: &[sig(&["value"])],
        f: is_defined,
    },
    Builtin {
        name: "get or else",
        sigs: &[sig(&["value", "default"])],
        f: get_or_else,
    },
    Builtin {
        name: "assert",
        sigs: &[
            sig(&["value", "condition"]),
            sig(&["value", "condition", "cause"]),
        ],
        f: assert,
    },
];

fn not(_ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match a[0] {
        Value::Bool(b) => Value::Bool(!b),
        _ => Value::Null,
    })
}

/// Reached only when `is defined` is called indirectly (as a function value); the direct
/// call is answered by the evaluator.
fn is_defined(_ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(Value::Bool(!a.is_empty()))
}

fn get_or_else(_ev: &mut Evaluator<'_>, mut a: Vec<Value>) -> R {
    let default = a.pop().unwrap_or(Value::Null);
    let value = a.pop().unwrap_or(Value::Null);
    Ok(if value.is_null() { default } else { value })
}

fn assert(_ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    if a[1].as_bool() == Some(true) {
        return Ok(a[0].clone());
    }
    let cause = match a.get(2) {
        Some(Value::String(s)) => s.to_string(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => "The condition is not fulfilled".to_string(),
    };
    Err(EvalError::Assertion(cause))
}
