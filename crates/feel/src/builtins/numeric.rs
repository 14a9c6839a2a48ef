//! Numeric functions: rounding (with scale), `abs`, `modulo`, `sqrt`, `log`, `exp`,
//! `odd`, `even`.

use super::{Builtin, fail, integer, number, sig};
use crate::error::EvalError;
use crate::eval::Evaluator;
use crate::number::{Number, RoundMode};
use crate::temporal::{DayTimeDuration, YearMonthDuration};
use crate::value::Value;

type R = Result<Value, EvalError>;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "decimal",
        sigs: &[sig(&["n", "scale"])],
        f: decimal,
    },
    Builtin {
        name: "floor",
        sigs: &[sig(&["n"]), sig(&["n", "scale"])],
        f: floor,
    },
    Builtin {
        name: "ceiling",
        sigs: &[sig(&["n"]), sig(&["n", "scale"])],
        f: ceiling,
    },
    Builtin {
        name: "round up",
        sigs: &[sig(&["n"]), sig(&["n", "scale"])],
        f: round_up,
    },
    Builtin {
        name: "round down",
        sigs: &[sig(&["n"]), sig(&["n", "scale"])],
        f: round_down,
    },
    Builtin {
        name: "round half up",
        sigs: &[sig(&["n"]), sig(&["n", "scale"])],
        f: round_half_up,
    },
    Builtin {
        name: "round half down",
        sigs: &[sig(&["n"]), sig(&["n", "scale"])],
        f: round_half_down,
    },
    Builtin {
        name: "abs",
        sigs: &[sig(&["n"])],
        f: abs,
    },
    Builtin {
        name: "modulo",
        sigs: &[sig(&["dividend", "divisor"])],
        f: modulo,
    },
    Builtin {
        name: "sqrt",
        sigs: &[sig(&["number"])],
        f: sqrt,
    },
    Builtin {
        name: "log",
        sigs: &[sig(&["number"])],
        f: log,
    },
    Builtin {
        name: "exp",
        sigs: &[sig(&["number"])],
        f: exp,
    },
    Builtin {
        name: "odd",
        sigs: &[sig(&["number"])],
        f: odd,
    },
    Builtin {
        name: "even",
        sigs: &[sig(&["number"])],
        f: even,
    },
    Builtin {
        name: "random number",
        sigs: &[sig(&[])],
        f: random_number,
    },
];

/// A number in [0, 1) from the evaluation's seeded generator (see `EvalContext::seed`).
fn random_number(ev: &mut Evaluator<'_>, _: Vec<Value>) -> R {
    let Some(r) = ev.next_random() else {
        return Ok(fail(ev, "random number", || {
            "no seed was given to the evaluation".into()
        }));
    };
    // 53 random bits as a fraction, like a double in [0, 1).
    let n = Number::from_u64(r >> 11).checked_div(Number::from_u64(1 << 53));
    Ok(n.map(Value::Number).unwrap_or(Value::Null))
}

fn rounded(ev: &mut Evaluator<'_>, name: &str, a: &[Value], mode: RoundMode) -> R {
    let Some(n) = number(ev, name, &a[0]) else {
        return Ok(Value::Null);
    };
    let scale = match a.get(1) {
        None => 0,
        Some(v) => match integer(ev, name, v) {
            Some(s) => s,
            None => return Ok(Value::Null),
        },
    };
    Ok(match n.round(scale, mode) {
        Some(r) => Value::Number(r),
        None => fail(ev, name, || format!("scale {scale} is out of range")),
    })
}

fn decimal(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "decimal", &a, RoundMode::HalfEven)
}

fn floor(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "floor", &a, RoundMode::Floor)
}

fn ceiling(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "ceiling", &a, RoundMode::Ceiling)
}

fn round_up(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "round up", &a, RoundMode::Up)
}

fn round_down(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "round down", &a, RoundMode::Down)
}

fn round_half_up(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "round half up", &a, RoundMode::HalfUp)
}

fn round_half_down(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    rounded(ev, "round half down", &a, RoundMode::HalfDown)
}

fn abs(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match &a[0] {
        Value::Number(n) => Value::Number(n.abs()),
        Value::DayTimeDuration(d) => Value::DayTimeDuration(DayTimeDuration(d.0.abs())),
        Value::YearMonthDuration(d) => Value::YearMonthDuration(YearMonthDuration(d.0.abs())),
        Value::Null => Value::Null,
        other => fail(ev, "abs", || {
            format!("expected a number but found '{other}'")
        }),
    })
}

fn modulo(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let (Some(x), Some(y)) = (number(ev, "modulo", &a[0]), number(ev, "modulo", &a[1])) else {
        return Ok(Value::Null);
    };
    Ok(match x.modulo(y) {
        Some(r) => Value::Number(r),
        None => fail(ev, "modulo", || "division by zero".into()),
    })
}

fn unary(ev: &mut Evaluator<'_>, name: &str, a: &[Value], f: fn(Number) -> Option<Number>) -> R {
    let Some(n) = number(ev, name, &a[0]) else {
        return Ok(Value::Null);
    };
    Ok(match f(n) {
        Some(r) => Value::Number(r),
        None => fail(ev, name, || format!("undefined for '{n}'")),
    })
}

fn sqrt(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    unary(ev, "sqrt", &a, Number::sqrt)
}

fn log(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    unary(ev, "log", &a, Number::ln)
}

fn exp(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    unary(ev, "exp", &a, Number::exp)
}

fn parity(ev: &mut Evaluator<'_>, name: &str, a: &[Value], want_odd: bool) -> R {
    let Some(n) = number(ev, name, &a[0]) else {
        return Ok(Value::Null);
    };
    if !n.is_integer() {
        return Ok(Value::Bool(false));
    }
    Ok(match n.modulo(Number::from_i64(2)) {
        Some(r) => Value::Bool(r.is_zero() != want_odd),
        None => Value::Null,
    })
}

fn odd(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    parity(ev, "odd", &a, true)
}

fn even(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    parity(ev, "even", &a, false)
}
