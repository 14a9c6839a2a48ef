//! Temporal functions: `now`, `today` (from the caller's clock, never the wall clock),
//! `day of year`, `day of week`, `month of year`, `week of year`, Camunda's
//! `last day of month`, and `is`.

use super::{Builtin, fail, sig};
use crate::error::{EvalError, WarningKind};
use crate::eval::Evaluator;
use crate::eval::compare::equals;
use crate::temporal::Date;
use crate::value::Value;

type R = Result<Value, EvalError>;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "now",
        sigs: &[sig(&[])],
        f: now,
    },
    Builtin {
        name: "today",
        sigs: &[sig(&[])],
        f: today,
    },
    Builtin {
        name: "day of year",
        sigs: &[sig(&["date"])],
        f: day_of_year,
    },
    Builtin {
        name: "day of week",
        sigs: &[sig(&["date"])],
        f: day_of_week,
    },
    Builtin {
        name: "month of year",
        sigs: &[sig(&["date"])],
        f: month_of_year,
    },
    Builtin {
        name: "week of year",
        sigs: &[sig(&["date"])],
        f: week_of_year,
    },
    Builtin {
        name: "last day of month",
        sigs: &[sig(&["date"])],
        f: last_day_of_month,
    },
    Builtin {
        name: "is",
        sigs: &[sig(&["value1", "value2"])],
        f: is,
    },
];

fn now(ev: &mut Evaluator<'_>, _: Vec<Value>) -> R {
    Ok(match ev.clock().and_then(|c| c.now()) {
        Some(dt) => Value::DateTime(dt),
        None => {
            ev.warn(WarningKind::FunctionInvocationFailure, || {
                "now() needs a clock, and none was given to the evaluation".into()
            });
            Value::Null
        }
    })
}

fn today(ev: &mut Evaluator<'_>, _: Vec<Value>) -> R {
    Ok(match ev.clock().and_then(|c| c.now()) {
        Some(dt) => Value::Date(dt.date),
        None => {
            ev.warn(WarningKind::FunctionInvocationFailure, || {
                "today() needs a clock, and none was given to the evaluation".into()
            });
            Value::Null
        }
    })
}

fn date_of(ev: &mut Evaluator<'_>, name: &str, v: &Value) -> Option<Date> {
    match v {
        Value::Date(d) => Some(*d),
        Value::DateTime(dt) => Some(dt.date),
        Value::Null => None,
        other => {
            fail(ev, name, || format!("expected a date but found '{other}'"));
            None
        }
    }
}

fn day_of_year(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match date_of(ev, "day of year", &a[0]) {
        Some(d) => Value::number(i64::from(d.day_of_year())),
        None => Value::Null,
    })
}

const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn day_of_week(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match date_of(ev, "day of week", &a[0]) {
        Some(d) => Value::string(DAYS[(d.weekday() - 1) as usize % 7]),
        None => Value::Null,
    })
}

fn month_of_year(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match date_of(ev, "month of year", &a[0]) {
        Some(d) => Value::string(MONTHS[(d.month() - 1) as usize % 12]),
        None => Value::Null,
    })
}

fn week_of_year(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match date_of(ev, "week of year", &a[0]) {
        Some(d) => Value::number(i64::from(d.iso_week())),
        None => Value::Null,
    })
}

fn last_day_of_month(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match date_of(ev, "last day of month", &a[0]) {
        Some(d) => Value::number(i64::from(d.last_day_of_month())),
        None => Value::Null,
    })
}

/// `is`: same type and same value, where temporal values must also agree on their zone
/// (so `@"10:00+01:00"` is not `@"09:00Z"` although they are `=`).
fn is(_ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(Value::Bool(match (&a[0], &a[1]) {
        (Value::Time(x), Value::Time(y)) => x == y,
        (Value::DateTime(x), Value::DateTime(y)) => x == y,
        (x, y) if std::mem::discriminant(x) == std::mem::discriminant(y) => {
            equals(x, y) == Some(true)
        }
        _ => false,
    }))
}
