//! Arithmetic on numbers, strings and temporal values. `None` means the operation is not
//! defined for these operands (or overflowed), which becomes `null`.

use crate::number::Number;
use crate::temporal::{
    Date, DateTime, DayTimeDuration, LocalTime, NANOS_PER_DAY, YearMonthDuration,
};
use crate::value::Value;

pub fn add(a: &Value, b: &Value) -> Option<Value> {
    Some(match (a, b) {
        (Value::Number(x), Value::Number(y)) => Value::Number(x.checked_add(*y)?),
        (Value::String(x), Value::String(y)) => {
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            Value::string(s)
        }
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => {
            Value::YearMonthDuration(YearMonthDuration(x.0.checked_add(y.0)?))
        }
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => {
            Value::DayTimeDuration(DayTimeDuration(x.0.checked_add(y.0)?))
        }
        (Value::Date(d), Value::YearMonthDuration(m))
        | (Value::YearMonthDuration(m), Value::Date(d)) => Value::Date(d.plus_months(m.0)?),
        (Value::Date(d), Value::DayTimeDuration(x))
        | (Value::DayTimeDuration(x), Value::Date(d)) => Value::Date(date_plus_nanos(*d, x.0)?),
        (Value::DateTime(dt), Value::YearMonthDuration(m))
        | (Value::YearMonthDuration(m), Value::DateTime(dt)) => {
            Value::DateTime(dt.plus_months(m.0)?)
        }
        (Value::DateTime(dt), Value::DayTimeDuration(x))
        | (Value::DayTimeDuration(x), Value::DateTime(dt)) => Value::DateTime(dt.plus_nanos(x.0)?),
        (Value::Time(t), Value::DayTimeDuration(x))
        | (Value::DayTimeDuration(x), Value::Time(t)) => Value::Time(t.plus_nanos(x.0)),
        _ => return None,
    })
}

pub fn sub(a: &Value, b: &Value) -> Option<Value> {
    Some(match (a, b) {
        (Value::Number(x), Value::Number(y)) => Value::Number(x.checked_sub(*y)?),
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => {
            Value::YearMonthDuration(YearMonthDuration(x.0.checked_sub(y.0)?))
        }
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => {
            Value::DayTimeDuration(DayTimeDuration(x.0.checked_sub(y.0)?))
        }
        (Value::Date(d), Value::YearMonthDuration(m)) => {
            Value::Date(d.plus_months(m.0.checked_neg()?)?)
        }
        (Value::Date(d), Value::DayTimeDuration(x)) => {
            Value::Date(date_plus_nanos(*d, x.0.checked_neg()?)?)
        }
        (Value::DateTime(dt), Value::YearMonthDuration(m)) => {
            Value::DateTime(dt.plus_months(m.0.checked_neg()?)?)
        }
        (Value::DateTime(dt), Value::DayTimeDuration(x)) => {
            Value::DateTime(dt.plus_nanos(x.0.checked_neg()?)?)
        }
        (Value::Time(t), Value::DayTimeDuration(x)) => {
            Value::Time(t.plus_nanos(x.0.checked_neg()?))
        }
        (Value::Time(x), Value::Time(y)) => match (x.zone, y.zone) {
            (Some(_), Some(_)) | (None, None) => Value::DayTimeDuration(DayTimeDuration(
                i128::from(x.comparable_nanos()) - i128::from(y.comparable_nanos()),
            )),
            _ => return None,
        },
        (Value::DateTime(x), Value::DateTime(y)) => Value::DayTimeDuration(date_time_diff(x, y)?),
        // A date against a zoned date-time counts as midnight UTC; against a local one
        // the difference is undefined.
        (Value::DateTime(x), Value::Date(y)) if x.zone.is_some() => {
            Value::DayTimeDuration(date_time_diff(x, &utc_midnight(*y))?)
        }
        (Value::Date(x), Value::DateTime(y)) if y.zone.is_some() => {
            Value::DayTimeDuration(date_time_diff(&utc_midnight(*x), y)?)
        }
        (Value::Date(x), Value::Date(y)) => Value::DayTimeDuration(DayTimeDuration(
            i128::from(x.epoch_days() - y.epoch_days()) * i128::from(NANOS_PER_DAY),
        )),
        _ => return None,
    })
}

pub fn mul(a: &Value, b: &Value) -> Option<Value> {
    Some(match (a, b) {
        (Value::Number(x), Value::Number(y)) => Value::Number(x.checked_mul(*y)?),
        (Value::YearMonthDuration(d), Value::Number(n))
        | (Value::Number(n), Value::YearMonthDuration(d)) => {
            let months = Number::from_i64(d.0).checked_mul(*n)?.trunc_i64()?;
            Value::YearMonthDuration(YearMonthDuration(months))
        }
        (Value::DayTimeDuration(d), Value::Number(n))
        | (Value::Number(n), Value::DayTimeDuration(d)) => {
            let nanos = Number::from_i128(d.0)?.checked_mul(*n)?;
            Value::DayTimeDuration(DayTimeDuration(nanos_of(nanos)?))
        }
        _ => return None,
    })
}

pub fn div(a: &Value, b: &Value) -> Option<Value> {
    Some(match (a, b) {
        (Value::Number(x), Value::Number(y)) => Value::Number(x.checked_div(*y)?),
        (Value::YearMonthDuration(d), Value::Number(n)) => {
            let months = Number::from_i64(d.0).checked_div(*n)?.trunc_i64()?;
            Value::YearMonthDuration(YearMonthDuration(months))
        }
        (Value::DayTimeDuration(d), Value::Number(n)) => {
            let nanos = Number::from_i128(d.0)?.checked_div(*n)?;
            Value::DayTimeDuration(DayTimeDuration(nanos_of(nanos)?))
        }
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => {
            Value::Number(Number::from_i64(x.0).checked_div(Number::from_i64(y.0))?)
        }
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => {
            Value::Number(Number::from_i128(x.0)?.checked_div(Number::from_i128(y.0)?)?)
        }
        _ => return None,
    })
}

pub fn pow(a: &Value, b: &Value) -> Option<Value> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Some(Value::Number(x.pow(*y)?)),
        _ => None,
    }
}

pub fn neg(a: &Value) -> Option<Value> {
    Some(match a {
        Value::Number(n) => Value::Number(n.negated()),
        Value::DayTimeDuration(d) => Value::DayTimeDuration(DayTimeDuration(d.0.checked_neg()?)),
        Value::YearMonthDuration(d) => {
            Value::YearMonthDuration(YearMonthDuration(d.0.checked_neg()?))
        }
        _ => return None,
    })
}

fn nanos_of(n: Number) -> Option<i128> {
    let whole = n.round(0, crate::number::RoundMode::HalfEven)?;
    whole.to_string().parse::<i128>().ok()
}

/// A date plus an exact duration: the date's midnight plus the duration, date part taken.
fn date_plus_nanos(d: Date, nanos: i128) -> Option<Date> {
    Some(
        DateTime::local(d, LocalTime::MIDNIGHT)
            .plus_nanos(nanos)?
            .date,
    )
}

fn utc_midnight(d: Date) -> DateTime {
    DateTime {
        date: d,
        time: LocalTime::MIDNIGHT,
        zone: Some(crate::temporal::Zone::UTC),
    }
}

/// `x - y` for date-times: instants when both are zoned, fields when both are local.
fn date_time_diff(x: &DateTime, y: &DateTime) -> Option<DayTimeDuration> {
    match (x.instant_nanos(), y.instant_nanos()) {
        (Some(a), Some(b)) => Some(DayTimeDuration(a - b)),
        (None, None) => Some(DayTimeDuration(x.local_nanos() - y.local_nanos())),
        _ => None,
    }
}
