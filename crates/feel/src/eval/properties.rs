//! Properties of non-context values reached with a path: `date.year`, `time.hour`,
//! `duration.days`, `range.start included`, ...

use crate::number::Number;
use crate::temporal::{Date, DayTimeDuration, LocalTime, Zone};
use crate::value::{Bound, Value};

fn num(n: impl Into<i64>) -> Value {
    Value::Number(Number::from_i64(n.into()))
}

fn big(n: i128) -> Value {
    Number::from_i128(n)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn date_props(d: Date, name: &str) -> Option<Value> {
    Some(match name {
        "year" => num(d.year()),
        "month" => num(d.month()),
        "day" => num(d.day()),
        "weekday" => num(d.weekday()),
        _ => return None,
    })
}

fn time_props(t: LocalTime, zone: Option<Zone>, name: &str) -> Option<Value> {
    Some(match name {
        "hour" => num(t.hour()),
        "minute" => num(t.minute()),
        "second" => num(t.second()),
        "time offset" => match zone {
            Some(z) => Value::DayTimeDuration(DayTimeDuration::from_seconds(i64::from(z.offset))),
            None => Value::Null,
        },
        "timezone" => match zone.and_then(|z| z.id) {
            Some(tz) => Value::string(tz.name()),
            None => Value::Null,
        },
        _ => return None,
    })
}

/// The property, or `None` if the value has no property of that name.
pub fn property(v: &Value, name: &str) -> Option<Value> {
    match v {
        Value::Date(d) => date_props(*d, name),
        Value::DateTime(dt) => {
            date_props(dt.date, name).or_else(|| time_props(dt.time, dt.zone, name))
        }
        Value::Time(t) => time_props(t.local, t.zone, name),
        Value::DayTimeDuration(d) => Some(match name {
            "days" => big(d.days()),
            "hours" => big(d.hours()),
            "minutes" => big(d.minutes()),
            "seconds" => big(d.seconds()),
            _ => return None,
        }),
        Value::YearMonthDuration(d) => Some(match name {
            "years" => num(d.years()),
            "months" => num(d.months()),
            _ => return None,
        }),
        Value::Range(r) => Some(match name {
            "start" => r.start.value().cloned().unwrap_or(Value::Null),
            "end" => r.end.value().cloned().unwrap_or(Value::Null),
            "start included" => Value::Bool(matches!(r.start, Bound::Closed(_))),
            "end included" => Value::Bool(matches!(r.end, Bound::Closed(_))),
            _ => return None,
        }),
        _ => None,
    }
}
