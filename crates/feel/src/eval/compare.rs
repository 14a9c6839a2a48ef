//! Equality and ordering between FEEL values.
//!
//! `None` means "not comparable", which the evaluator turns into `null`: FEEL never says
//! `1 = "1"` is false, it says it is undefined.

use std::cmp::Ordering;

use crate::temporal::{DateTime, Time};
use crate::value::{Bound, Range, Value};

/// Values share structure (`{a: [1, 1], b: [a, a], c: [b, b], ...}` builds a tree of 2^n
/// leaves in n steps), so equality walks at most this many nodes; beyond it the values
/// count as not comparable (null) rather than keeping the evaluation busy for ever.
const EQUALITY_BUDGET: u32 = 1_000_000;

/// FEEL `=`. `null = null` is true and `null = x` is false.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    let mut budget = EQUALITY_BUDGET;
    equals_within(a, b, &mut budget, 0)
}

/// Nesting compared before giving up (not comparable).
const EQUALITY_DEPTH: usize = 512;

fn equals_within(a: &Value, b: &Value, budget: &mut u32, depth: usize) -> Option<bool> {
    *budget = budget.checked_sub(1)?;
    if depth > EQUALITY_DEPTH {
        return None;
    }
    Some(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Date(x), Value::Date(y)) => x == y,
        (Value::Time(x), Value::Time(y)) => return time_cmp(x, y).map(|o| o == Ordering::Equal),
        (Value::DateTime(x), Value::DateTime(y)) => {
            return date_time_cmp(x, y).map(|o| o == Ordering::Equal);
        }
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => x == y,
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => x == y,
        // The same shared value is equal to itself (equality is reflexive for every type).
        (Value::List(x), Value::List(y)) if std::sync::Arc::ptr_eq(x, y) => true,
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (p, q) in x.iter().zip(y.iter()) {
                if !equals_within(p, q, budget, depth + 1)? {
                    return Some(false);
                }
            }
            true
        }
        (Value::Context(x), Value::Context(y)) if std::sync::Arc::ptr_eq(x, y) => true,
        (Value::Context(x), Value::Context(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (k, v) in x.iter() {
                match y.get(k) {
                    Some(w) => {
                        if !equals_within(v, w, budget, depth + 1)? {
                            return Some(false);
                        }
                    }
                    None => return Some(false),
                }
            }
            true
        }
        (Value::Range(x), Value::Range(y)) => {
            x.unary == y.unary
                && bound_eq(&x.start, &y.start, budget, depth)?
                && bound_eq(&x.end, &y.end, budget, depth)?
        }
        (Value::Function(x), Value::Function(y)) => std::sync::Arc::ptr_eq(x, y),
        _ => return None,
    })
}

fn bound_eq(a: &Bound, b: &Bound, budget: &mut u32, depth: usize) -> Option<bool> {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Some(true),
        (Bound::Open(x), Bound::Open(y)) | (Bound::Closed(x), Bound::Closed(y)) => {
            equals_within(x, y, budget, depth + 1)
        }
        _ => Some(false),
    }
}

/// FEEL `<`, `>`, ... ordering, for the types that have one.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Some(x.cmp(y)),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Date(x), Value::Date(y)) => Some(x.cmp(y)),
        (Value::Time(x), Value::Time(y)) => time_cmp(x, y),
        (Value::DateTime(x), Value::DateTime(y)) => date_time_cmp(x, y),
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => Some(x.cmp(y)),
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Zoned times compare on UTC, local times on the clock; a local time and a zoned time do
/// not compare (as in feel-scala, where `LocalTime` and `ZonedTime` are different types).
fn time_cmp(x: &Time, y: &Time) -> Option<Ordering> {
    match (x.zone, y.zone) {
        (Some(_), Some(_)) | (None, None) => Some(x.comparable_nanos().cmp(&y.comparable_nanos())),
        _ => None,
    }
}

/// Zoned date-times compare as instants, local ones on their fields; mixing both kinds is
/// not comparable.
fn date_time_cmp(x: &DateTime, y: &DateTime) -> Option<Ordering> {
    match (x.instant_nanos(), y.instant_nanos()) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        (None, None) => Some(x.local_nanos().cmp(&y.local_nanos())),
        _ => None,
    }
}

/// Whether `v` lies in the range. `None` when `v` is not comparable with the endpoints.
pub fn in_range(v: &Value, r: &Range) -> Option<bool> {
    if r.unary == Some(crate::ast::CmpOp::Ne) {
        return equals(v, r.start.value()?).map(|b| !b);
    }
    let lower_ok = match &r.start {
        Bound::Unbounded => true,
        Bound::Open(s) => compare(v, s)? == Ordering::Greater,
        Bound::Closed(s) => compare(v, s)? != Ordering::Less,
    };
    let upper_ok = match &r.end {
        Bound::Unbounded => true,
        Bound::Open(e) => compare(v, e)? == Ordering::Less,
        Bound::Closed(e) => compare(v, e)? != Ordering::Greater,
    };
    Some(lower_ok && upper_ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::Number;

    fn n(i: i64) -> Value {
        Value::Number(Number::from_i64(i))
    }

    #[test]
    fn null_and_mixed_types() {
        assert_eq!(equals(&Value::Null, &Value::Null), Some(true));
        assert_eq!(equals(&n(1), &Value::Null), Some(false));
        assert_eq!(equals(&n(1), &Value::string("1")), None);
        assert_eq!(compare(&n(1), &Value::string("1")), None);
    }

    #[test]
    fn lists_compare_element_wise() {
        let a = Value::list(vec![n(1), n(2)]);
        let b = Value::list(vec![n(1), n(2)]);
        let c = Value::list(vec![n(1), Value::string("x")]);
        assert_eq!(equals(&a, &b), Some(true));
        assert_eq!(equals(&a, &c), None);
    }

    #[test]
    fn ranges() {
        let r = Range::interval(Bound::Closed(n(1)), Bound::Open(n(10)));
        assert_eq!(in_range(&n(1), &r), Some(true));
        assert_eq!(in_range(&n(10), &r), Some(false));
        assert_eq!(in_range(&Value::string("a"), &r), None);
    }
}
