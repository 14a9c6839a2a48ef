//! Range functions of DMN 1.4+ (`before`, `after`, `meets`, `overlaps`, `includes`, ...)
//! and DMN 1.5's `range(from)`.
//!
//! Each relation takes points or ranges; a point is treated as the degenerate closed range
//! `[p..p]` where the spec's formulas allow it, and an open side of a range (`< 10`) is an
//! infinite end.

use std::cmp::Ordering;

use super::{Builtin, fail, sig};
use crate::ast::Kind;
use crate::error::EvalError;
use crate::eval::{EvalContext, Evaluator, compare::compare};
use crate::parser::{ParseOptions, parse_expression};
use crate::value::{Bound, Range, Value};

type R = Result<Value, EvalError>;

const RELATION_SIGS: &[super::Sig] = &[
    sig(&["point1", "point2"]),
    sig(&["point", "range"]),
    sig(&["range", "point"]),
    sig(&["range1", "range2"]),
];

const RANGE_SIGS: &[super::Sig] = &[sig(&["range1", "range2"])];

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "before",
        sigs: RELATION_SIGS,
        f: before,
    },
    Builtin {
        name: "after",
        sigs: RELATION_SIGS,
        f: after,
    },
    Builtin {
        name: "meets",
        sigs: RANGE_SIGS,
        f: meets,
    },
    Builtin {
        name: "met by",
        sigs: RANGE_SIGS,
        f: met_by,
    },
    Builtin {
        name: "overlaps",
        sigs: RANGE_SIGS,
        f: overlaps,
    },
    Builtin {
        name: "overlaps before",
        sigs: RANGE_SIGS,
        f: overlaps_before,
    },
    Builtin {
        name: "overlaps after",
        sigs: RANGE_SIGS,
        f: overlaps_after,
    },
    Builtin {
        name: "finishes",
        sigs: &[sig(&["point", "range"]), sig(&["range1", "range2"])],
        f: finishes,
    },
    Builtin {
        name: "finished by",
        sigs: &[sig(&["range", "point"]), sig(&["range1", "range2"])],
        f: finished_by,
    },
    Builtin {
        name: "includes",
        sigs: &[sig(&["range", "point"]), sig(&["range1", "range2"])],
        f: includes,
    },
    Builtin {
        name: "during",
        sigs: &[sig(&["point", "range"]), sig(&["range1", "range2"])],
        f: during,
    },
    Builtin {
        name: "starts",
        sigs: &[sig(&["point", "range"]), sig(&["range1", "range2"])],
        f: starts,
    },
    Builtin {
        name: "started by",
        sigs: &[sig(&["range", "point"]), sig(&["range1", "range2"])],
        f: started_by,
    },
    Builtin {
        name: "coincides",
        sigs: &[sig(&["point1", "point2"]), sig(&["range1", "range2"])],
        f: coincides,
    },
    Builtin {
        name: "range",
        sigs: &[sig(&["from"])],
        f: range_fn,
    },
];

/// A range end: a value with its inclusion, or infinity on an open side.
#[derive(Clone)]
enum End {
    Inf,
    At(Value, bool),
}

/// A range or a point, in the shape the relations need.
struct Span {
    start: End,
    end: End,
    is_point: bool,
}

fn span(v: &Value) -> Option<Span> {
    match v {
        Value::Null => None,
        Value::Range(r) if r.unary == Some(crate::ast::CmpOp::Ne) => None,
        Value::Range(r) => {
            let end = |b: &Bound| match b {
                Bound::Unbounded => End::Inf,
                Bound::Open(v) => End::At(v.clone(), false),
                Bound::Closed(v) => End::At(v.clone(), true),
            };
            Some(Span {
                start: end(&r.start),
                end: end(&r.end),
                is_point: false,
            })
        }
        Value::List(_) | Value::Context(_) | Value::Function(_) | Value::Bool(_) => None,
        p => Some(Span {
            start: End::At(p.clone(), true),
            end: End::At(p.clone(), true),
            is_point: true,
        }),
    }
}

/// Compares two ends; `lower_a` / `lower_b` say whether an infinite end is -inf (a start)
/// or +inf (an end). `None` if the values are not comparable.
fn cmp_end(a: &End, lower_a: bool, b: &End, lower_b: bool) -> Option<Ordering> {
    match (a, b) {
        (End::Inf, End::Inf) => Some(if lower_a == lower_b {
            Ordering::Equal
        } else if lower_a {
            Ordering::Less
        } else {
            Ordering::Greater
        }),
        (End::Inf, _) => Some(if lower_a {
            Ordering::Less
        } else {
            Ordering::Greater
        }),
        (_, End::Inf) => Some(if lower_b {
            Ordering::Greater
        } else {
            Ordering::Less
        }),
        (End::At(x, _), End::At(y, _)) => compare(x, y),
    }
}

fn incl(e: &End) -> bool {
    matches!(e, End::At(_, true))
}

/// Evaluates a relation over two spans, turning incomparable ends into null.
fn relation(
    ev: &mut Evaluator<'_>,
    name: &str,
    a: &[Value],
    f: fn(&Span, &Span) -> Option<bool>,
) -> R {
    let (Some(x), Some(y)) = (span(&a[0]), span(&a[1])) else {
        if a[0].is_null() || a[1].is_null() {
            return Ok(Value::Null);
        }
        return Ok(fail(ev, name, || "expected points or ranges".into()));
    };
    Ok(match f(&x, &y) {
        Some(b) => Value::Bool(b),
        None => fail(ev, name, || "the arguments are not comparable".into()),
    })
}

// Shorthands over ends. `s` = start (lower), `e` = end (upper).
fn lt(a: &End, la: bool, b: &End, lb: bool) -> Option<bool> {
    Some(cmp_end(a, la, b, lb)? == Ordering::Less)
}
fn gt(a: &End, la: bool, b: &End, lb: bool) -> Option<bool> {
    Some(cmp_end(a, la, b, lb)? == Ordering::Greater)
}
fn eq(a: &End, la: bool, b: &End, lb: bool) -> Option<bool> {
    if matches!(a, End::Inf) || matches!(b, End::Inf) {
        return Some(false);
    }
    Some(cmp_end(a, la, b, lb)? == Ordering::Equal)
}

const S: bool = true;
const E: bool = false;

fn before_rel(x: &Span, y: &Span) -> Option<bool> {
    if x.is_point && y.is_point {
        return lt(&x.start, S, &y.start, S);
    }
    Some(
        lt(&x.end, E, &y.start, S)?
            || ((!incl(&x.end) || !incl(&y.start)) && eq(&x.end, E, &y.start, S)?),
    )
}

fn before(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "before", &a, before_rel)
}

fn after(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "after", &a, |x, y| before_rel(y, x))
}

fn both_ranges(x: &Span, y: &Span) -> bool {
    !x.is_point && !y.is_point
}

fn meets(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "meets", &a, |x, y| {
        if !both_ranges(x, y) {
            return None;
        }
        Some(incl(&x.end) && incl(&y.start) && eq(&x.end, E, &y.start, S)?)
    })
}

fn met_by(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "met by", &a, |x, y| {
        if !both_ranges(x, y) {
            return None;
        }
        Some(incl(&x.start) && incl(&y.end) && eq(&x.start, S, &y.end, E)?)
    })
}

fn overlaps(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "overlaps", &a, |x, y| {
        if !both_ranges(x, y) {
            return None;
        }
        let left = gt(&x.end, E, &y.start, S)?
            || (eq(&x.end, E, &y.start, S)? && incl(&x.end) && incl(&y.start));
        let right = lt(&x.start, S, &y.end, E)?
            || (eq(&x.start, S, &y.end, E)? && incl(&x.start) && incl(&y.end));
        Some(left && right)
    })
}

fn overlaps_before_rel(x: &Span, y: &Span) -> Option<bool> {
    if !both_ranges(x, y) {
        return None;
    }
    let a = lt(&x.start, S, &y.start, S)?
        || (eq(&x.start, S, &y.start, S)? && incl(&x.start) && !incl(&y.start));
    let b = gt(&x.end, E, &y.start, S)?
        || (eq(&x.end, E, &y.start, S)? && incl(&x.end) && incl(&y.start));
    let c =
        lt(&x.end, E, &y.end, E)? || (eq(&x.end, E, &y.end, E)? && (!incl(&x.end) || incl(&y.end)));
    Some(a && b && c)
}

fn overlaps_before(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "overlaps before", &a, overlaps_before_rel)
}

fn overlaps_after(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "overlaps after", &a, |x, y| {
        if !both_ranges(x, y) {
            return None;
        }
        let a = lt(&y.start, S, &x.start, S)?
            || (eq(&y.start, S, &x.start, S)? && incl(&y.start) && !incl(&x.start));
        let b = gt(&y.end, E, &x.start, S)?
            || (eq(&y.end, E, &x.start, S)? && incl(&y.end) && incl(&x.start));
        let c = lt(&y.end, E, &x.end, E)?
            || (eq(&y.end, E, &x.end, E)? && (!incl(&y.end) || incl(&x.end)));
        Some(a && b && c)
    })
}

fn finishes(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "finishes", &a, |x, y| {
        if y.is_point {
            return None;
        }
        if x.is_point {
            return Some(incl(&y.end) && eq(&y.end, E, &x.start, S)?);
        }
        Some(
            incl(&x.end) == incl(&y.end)
                && eq(&x.end, E, &y.end, E)?
                && (gt(&x.start, S, &y.start, S)?
                    || (eq(&x.start, S, &y.start, S)? && (!incl(&x.start) || incl(&y.start)))),
        )
    })
}

fn finished_by(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "finished by", &a, |x, y| {
        if x.is_point {
            return None;
        }
        if y.is_point {
            return Some(incl(&x.end) && eq(&x.end, E, &y.start, S)?);
        }
        Some(
            incl(&x.end) == incl(&y.end)
                && eq(&x.end, E, &y.end, E)?
                && (lt(&x.start, S, &y.start, S)?
                    || (eq(&x.start, S, &y.start, S)? && (incl(&x.start) || !incl(&y.start)))),
        )
    })
}

fn includes_rel(x: &Span, y: &Span) -> Option<bool> {
    if x.is_point {
        return None;
    }
    if y.is_point {
        let p = &y.start;
        return Some(
            (lt(&x.start, S, p, S)? && gt(&x.end, E, p, S)?)
                || (eq(&x.start, S, p, S)? && incl(&x.start))
                || (eq(&x.end, E, p, S)? && incl(&x.end)),
        );
    }
    let a = lt(&x.start, S, &y.start, S)?
        || (eq(&x.start, S, &y.start, S)? && (incl(&x.start) || !incl(&y.start)));
    let b =
        gt(&x.end, E, &y.end, E)? || (eq(&x.end, E, &y.end, E)? && (incl(&x.end) || !incl(&y.end)));
    Some(a && b)
}

fn includes(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "includes", &a, includes_rel)
}

fn during(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "during", &a, |x, y| includes_rel(y, x))
}

fn starts(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "starts", &a, |x, y| {
        if y.is_point {
            return None;
        }
        if x.is_point {
            return Some(eq(&y.start, S, &x.start, S)? && incl(&y.start));
        }
        Some(
            eq(&x.start, S, &y.start, S)?
                && incl(&x.start) == incl(&y.start)
                && (lt(&x.end, E, &y.end, E)?
                    || (eq(&x.end, E, &y.end, E)? && (!incl(&x.end) || incl(&y.end)))),
        )
    })
}

fn started_by(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "started by", &a, |x, y| {
        if x.is_point {
            return None;
        }
        if y.is_point {
            return Some(eq(&x.start, S, &y.start, S)? && incl(&x.start));
        }
        Some(
            eq(&x.start, S, &y.start, S)?
                && incl(&x.start) == incl(&y.start)
                && (lt(&y.end, E, &x.end, E)?
                    || (eq(&y.end, E, &x.end, E)? && (!incl(&y.end) || incl(&x.end)))),
        )
    })
}

fn coincides(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    relation(ev, "coincides", &a, |x, y| {
        if x.is_point != y.is_point {
            return None;
        }
        let same = |p: &End, lp: bool, q: &End, lq: bool| -> Option<bool> {
            match (p, q) {
                (End::Inf, End::Inf) => Some(lp == lq),
                (End::At(a, ia), End::At(b, ib)) => {
                    Some(ia == ib && compare(a, b)? == Ordering::Equal)
                }
                _ => Some(false),
            }
        };
        Some(same(&x.start, S, &y.start, S)? && same(&x.end, E, &y.end, E)?)
    })
}

/// `range("[1..10)")`: parses a range literal whose ends are literals or temporal
/// constructors applied to string literals. Ends must both exist and be ascending.
fn range_fn(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Value::String(text) = &a[0] else {
        if a[0].is_null() {
            return Ok(Value::Null);
        }
        return Ok(fail(ev, "range", || "expected a string".into()));
    };
    let parsed = match parse_expression(text, &ParseOptions::default()) {
        Ok(n) => n,
        Err(e) => {
            return Ok(fail(ev, "range", || {
                format!("'{text}' is not a range: {e}")
            }));
        }
    };
    let Kind::Range {
        start: Some(s),
        start_closed,
        end: Some(e),
        end_closed,
    } = &parsed.kind
    else {
        return Ok(fail(ev, "range", || {
            format!("'{text}' is not a range literal")
        }));
    };
    if !is_endpoint_literal(s) || !is_endpoint_literal(e) {
        return Ok(fail(ev, "range", || "range ends must be literals".into()));
    }
    let ctx = EvalContext::new(&());
    let mut inner = Evaluator::new(&ctx);
    let (Ok(sv), Ok(evv)) = (inner.eval(s), inner.eval(e)) else {
        return Ok(Value::Null);
    };
    match compare(&sv, &evv) {
        Some(Ordering::Greater) | None => {
            return Ok(fail(ev, "range", || "range ends are not ascending".into()));
        }
        _ => {}
    }
    let bound = |v: Value, closed: bool| {
        if closed {
            Bound::Closed(v)
        } else {
            Bound::Open(v)
        }
    };
    Ok(Value::Range(std::sync::Arc::new(Range::interval(
        bound(sv, *start_closed),
        bound(evv, *end_closed),
    ))))
}

fn is_endpoint_literal(n: &crate::ast::Node) -> bool {
    match &n.kind {
        Kind::Literal(v) => !v.is_null(),
        Kind::CallBuiltin(b, _, crate::ast::Args::Positional(args)) => {
            matches!(b.name, "date" | "time" | "date and time" | "duration")
                && args.len() == 1
                && matches!(args[0].kind, Kind::Literal(Value::String(_)))
        }
        _ => false,
    }
}
