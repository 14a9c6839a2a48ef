//! Conversion functions: `date`, `time`, `date and time`, `duration`,
//! `years and months duration`, `number`, `string`.

use super::{Builtin, fail, integer, number, sig};
use crate::error::EvalError;
use crate::eval::{Evaluator, TIME_ZONE_REFERENCE_SECS};
use crate::number::{Number, RoundMode};
use crate::temporal::{
    self, Date, DateTime, Duration, LocalTime, NANOS_PER_SECOND, Time, YearMonthDuration, Zone,
};
use crate::value::Value;

type R = Result<Value, EvalError>;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "date",
        sigs: &[sig(&["from"]), sig(&["year", "month", "day"])],
        f: date,
    },
    Builtin {
        name: "date and time",
        sigs: &[
            sig(&["from"]),
            sig(&["date", "time"]),
            sig(&["date", "timezone"]),
        ],
        f: date_and_time,
    },
    Builtin {
        name: "time",
        sigs: &[
            sig(&["from"]),
            sig(&["hour", "minute", "second"]),
            sig(&["hour", "minute", "second", "offset"]),
        ],
        f: time,
    },
    Builtin {
        name: "duration",
        sigs: &[sig(&["from"])],
        f: duration,
    },
    Builtin {
        name: "years and months duration",
        sigs: &[sig(&["from", "to"])],
        f: years_and_months_duration,
    },
    Builtin {
        name: "number",
        sigs: &[
            sig(&["from"]),
            sig(&["from", "grouping separator"]),
            sig(&["from", "grouping separator", "decimal separator"]),
        ],
        f: number_fn,
    },
    Builtin {
        name: "string",
        sigs: &[sig(&["from"])],
        f: string_fn,
    },
];

fn date(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    if a.len() == 3 {
        let (Some(y), Some(m), Some(d)) = (
            integer(ev, "date", &a[0]),
            integer(ev, "date", &a[1]),
            integer(ev, "date", &a[2]),
        ) else {
            return Ok(Value::Null);
        };
        return Ok(match Date::new(y, m, d) {
            Some(d) => Value::Date(d),
            None => fail(ev, "date", || format!("{y}-{m}-{d} is not a valid date")),
        });
    }
    Ok(match &a[0] {
        Value::String(s) => match temporal::parse_date(s) {
            Some(d) => Value::Date(d),
            None => fail(ev, "date", || format!("'{s}' is not a valid date")),
        },
        Value::Date(d) => Value::Date(*d),
        Value::DateTime(dt) => Value::Date(dt.date),
        Value::Null => Value::Null,
        other => fail(ev, "date", || format!("can't convert '{other}' to a date")),
    })
}

fn date_and_time(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    if a.len() == 2
        && let Value::String(zone_id) = &a[1]
    {
        // Camunda: the same instant in another time zone.
        let Value::DateTime(dt) = &a[0] else {
            return Ok(Value::Null);
        };
        let (Some(tz), Some(instant)) =
            (temporal::zone::parse_zone_id(zone_id), dt.instant_nanos())
        else {
            return Ok(fail(ev, "date and time", || {
                format!("can't move '{}' to the time zone '{zone_id}'", a[0])
            }));
        };
        let zone = Zone {
            offset: 0,
            id: Some(tz),
        };
        return Ok(DateTime::at_instant(instant, zone)
            .map(Value::DateTime)
            .unwrap_or_default());
    }
    if a.len() == 2 {
        let date = match &a[0] {
            Value::Date(d) => *d,
            Value::DateTime(dt) => dt.date,
            Value::Null => return Ok(Value::Null),
            other => {
                return Ok(fail(ev, "date and time", || {
                    format!("expected a date but found '{other}'")
                }));
            }
        };
        let time = match &a[1] {
            Value::Time(t) => *t,
            Value::Null => return Ok(Value::Null),
            other => {
                return Ok(fail(ev, "date and time", || {
                    format!("expected a time but found '{other}'")
                }));
            }
        };
        return Ok(match DateTime::resolve(date, time.local, time.zone) {
            Some(dt) => Value::DateTime(dt),
            None => Value::Null,
        });
    }
    Ok(match &a[0] {
        Value::String(s) => match temporal::parse_date_time(s, 0) {
            Some(dt) => Value::DateTime(dt),
            None => fail(ev, "date and time", || {
                format!("'{s}' is not a valid date and time")
            }),
        },
        Value::DateTime(dt) => Value::DateTime(*dt),
        Value::Date(d) => Value::DateTime(DateTime::local(*d, LocalTime::MIDNIGHT)),
        Value::Null => Value::Null,
        other => fail(ev, "date and time", || {
            format!("can't convert '{other}' to a date and time")
        }),
    })
}

fn time(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    if a.len() >= 3 {
        let (Some(h), Some(m), Some(s)) = (
            integer(ev, "time", &a[0]),
            integer(ev, "time", &a[1]),
            number(ev, "time", &a[2]),
        ) else {
            return Ok(Value::Null);
        };
        let whole = s.round(0, RoundMode::Floor).and_then(|w| w.to_i64());
        let nanos = s
            .checked_sub(s.round(0, RoundMode::Floor).unwrap_or(s))
            .and_then(|f| f.checked_mul(Number::from_i64(NANOS_PER_SECOND)))
            .and_then(|f| f.trunc_i64());
        let (Some(sec), Some(nanos)) = (whole, nanos) else {
            return Ok(Value::Null);
        };
        let Some(local) = LocalTime::new(h, m, sec, nanos) else {
            return Ok(fail(ev, "time", || {
                format!("{h}:{m}:{s} is not a valid time")
            }));
        };
        let zone = match a.get(3) {
            None | Some(Value::Null) => None,
            Some(Value::DayTimeDuration(d)) => {
                let secs = d.0 / i128::from(NANOS_PER_SECOND);
                match i32::try_from(secs).ok().and_then(Zone::fixed) {
                    Some(z) => Some(z),
                    None => return Ok(fail(ev, "time", || format!("invalid offset '{d}'"))),
                }
            }
            Some(other) => {
                return Ok(fail(ev, "time", || {
                    format!("expected a duration offset but found '{other}'")
                }));
            }
        };
        return Ok(Value::Time(Time { local, zone }));
    }
    Ok(match &a[0] {
        Value::String(s) => match temporal::parse_time(s, TIME_ZONE_REFERENCE_SECS) {
            Some(t) => Value::Time(t),
            None => fail(ev, "time", || format!("'{s}' is not a valid time")),
        },
        Value::Time(t) => Value::Time(*t),
        Value::DateTime(dt) => Value::Time(dt.time_value()),
        // A date is midnight UTC (DMN: "time(date) is 00:00:00Z").
        Value::Date(_) => Value::Time(Time {
            local: LocalTime::MIDNIGHT,
            zone: Some(Zone::UTC),
        }),
        Value::Null => Value::Null,
        other => fail(ev, "time", || format!("can't convert '{other}' to a time")),
    })
}

fn duration(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match &a[0] {
        Value::String(s) => match temporal::parse_duration(s) {
            Some(Duration::YearMonth(d)) => Value::YearMonthDuration(d),
            Some(Duration::DayTime(d)) => Value::DayTimeDuration(d),
            None => fail(ev, "duration", || format!("'{s}' is not a valid duration")),
        },
        v @ (Value::DayTimeDuration(_) | Value::YearMonthDuration(_)) => v.clone(),
        Value::Null => Value::Null,
        other => fail(ev, "duration", || {
            format!("can't convert '{other}' to a duration")
        }),
    })
}

fn years_and_months_duration(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let as_date = |v: &Value| match v {
        Value::Date(d) => Some(*d),
        Value::DateTime(dt) => Some(dt.date),
        _ => None,
    };
    Ok(match (as_date(&a[0]), as_date(&a[1])) {
        (Some(from), Some(to)) => Value::YearMonthDuration(YearMonthDuration::between(from, to)),
        _ if a[0].is_null() || a[1].is_null() => Value::Null,
        _ => fail(ev, "years and months duration", || {
            "expected two dates or date and time values".to_string()
        }),
    })
}

fn number_fn(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let from = match &a[0] {
        Value::String(s) => s.clone(),
        Value::Null => return Ok(Value::Null),
        other => {
            return Ok(fail(ev, "number", || {
                format!("can't convert '{other}' to a number")
            }));
        }
    };
    let sep = |v: Option<&Value>| match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.to_string())),
        Some(_) => Err(()),
    };
    let (Ok(grouping), Ok(decimal)) = (sep(a.get(1)), sep(a.get(2))) else {
        return Ok(fail(ev, "number", || {
            "separators must be strings".to_string()
        }));
    };
    if grouping
        .as_deref()
        .is_some_and(|g| !matches!(g, " " | "," | "."))
        || decimal.as_deref().is_some_and(|d| !matches!(d, "," | "."))
        || (grouping.is_some() && grouping == decimal)
    {
        return Ok(fail(ev, "number", || "invalid separators".to_string()));
    }
    let mut text = from.to_string();
    if let Some(g) = &grouping {
        text = text.replace(g.as_str(), "");
    }
    if let Some(d) = &decimal {
        text = text.replace(d.as_str(), ".");
    }
    Ok(match Number::parse(&text) {
        Some(n) if !text.contains(['e', 'E']) || grouping.is_none() => Value::Number(n),
        _ => fail(ev, "number", || format!("'{from}' is not a number")),
    })
}

fn string_fn(_ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match &a[0] {
        Value::Null => Value::Null,
        Value::String(s) => Value::String(s.clone()),
        other => Value::string(other.to_string()),
    })
}
