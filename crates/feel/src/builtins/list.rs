//! List functions of DMN 1.5 plus Camunda's `and`, `or`, `is empty`, `duplicate values`,
//! `partition`.

use std::cmp::Ordering;
use std::sync::Arc;

use super::{Builtin, fail, integer, list, list_or_varargs, number, sig, var};
use crate::error::EvalError;
use crate::eval::Evaluator;
use crate::eval::compare::{compare, equals};
use crate::number::Number;
use crate::value::{Function, List, Value};

type R = Result<Value, EvalError>;

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "list contains",
        sigs: &[sig(&["list", "element"])],
        f: list_contains,
    },
    Builtin {
        name: "count",
        sigs: &[sig(&["list"])],
        f: count,
    },
    Builtin {
        name: "min",
        sigs: &[sig(&["list"]), var(&["c"])],
        f: min,
    },
    Builtin {
        name: "max",
        sigs: &[sig(&["list"]), var(&["c"])],
        f: max,
    },
    Builtin {
        name: "sum",
        sigs: &[sig(&["list"]), var(&["n"])],
        f: sum,
    },
    Builtin {
        name: "mean",
        sigs: &[sig(&["list"]), var(&["n"])],
        f: mean,
    },
    Builtin {
        name: "product",
        sigs: &[sig(&["list"]), var(&["n"])],
        f: product,
    },
    Builtin {
        name: "median",
        sigs: &[sig(&["list"]), var(&["n"])],
        f: median,
    },
    Builtin {
        name: "stddev",
        sigs: &[sig(&["list"]), var(&["n"])],
        f: stddev,
    },
    Builtin {
        name: "mode",
        sigs: &[sig(&["list"]), var(&["n"])],
        f: mode,
    },
    Builtin {
        name: "all",
        sigs: &[sig(&["list"]), var(&["b"])],
        f: all,
    },
    Builtin {
        name: "and",
        sigs: &[sig(&["list"]), var(&["b"])],
        f: all,
    },
    Builtin {
        name: "any",
        sigs: &[sig(&["list"]), var(&["b"])],
        f: any,
    },
    Builtin {
        name: "or",
        sigs: &[sig(&["list"]), var(&["b"])],
        f: any,
    },
    Builtin {
        name: "sublist",
        sigs: &[
            sig(&["list", "start position"]),
            sig(&["list", "start position", "length"]),
        ],
        f: sublist,
    },
    Builtin {
        name: "append",
        sigs: &[var(&["list", "item"])],
        f: append,
    },
    Builtin {
        name: "concatenate",
        sigs: &[var(&["lists"])],
        f: concatenate,
    },
    Builtin {
        name: "insert before",
        sigs: &[sig(&["list", "position", "newItem"])],
        f: insert_before,
    },
    Builtin {
        name: "remove",
        sigs: &[sig(&["list", "position"])],
        f: remove,
    },
    Builtin {
        name: "reverse",
        sigs: &[sig(&["list"])],
        f: reverse,
    },
    Builtin {
        name: "index of",
        sigs: &[sig(&["list", "match"])],
        f: index_of,
    },
    Builtin {
        name: "union",
        sigs: &[var(&["lists"])],
        f: union,
    },
    Builtin {
        name: "distinct values",
        sigs: &[sig(&["list"])],
        f: distinct_values,
    },
    Builtin {
        name: "duplicate values",
        sigs: &[sig(&["list"])],
        f: duplicate_values,
    },
    Builtin {
        name: "flatten",
        sigs: &[sig(&["list"])],
        f: flatten,
    },
    Builtin {
        name: "sort",
        sigs: &[sig(&["list"]), sig(&["list", "precedes"])],
        f: sort,
    },
    Builtin {
        name: "list replace",
        sigs: &[
            sig(&["list", "position", "newItem"]),
            sig(&["list", "match", "newItem"]),
        ],
        f: list_replace,
    },
    Builtin {
        name: "is empty",
        sigs: &[sig(&["list"])],
        f: is_empty,
    },
    Builtin {
        name: "partition",
        sigs: &[sig(&["list", "size"])],
        f: partition,
    },
];

/// A list argument; a single non-list value counts as a one-item list (DMN's implicit
/// conversion), null stays null.
fn list_arg(v: &Value) -> Option<Arc<List>> {
    match v {
        Value::List(l) => Some(l.clone()),
        Value::Null => None,
        other => Some(Arc::new(List(vec![other.clone()]))),
    }
}

fn list_contains(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list(ev, "list contains", &a[0]) else {
        return Ok(Value::Null);
    };
    Ok(Value::Bool(
        l.iter().any(|v| equals(v, &a[1]) == Some(true)),
    ))
}

fn count(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match list(ev, "count", &a[0]) {
        Some(l) => Value::number(l.len() as i64),
        None => Value::Null,
    })
}

fn extreme(ev: &mut Evaluator<'_>, name: &str, a: Vec<Value>, want: Ordering) -> R {
    if a.len() == 1 && a[0].is_null() {
        return Ok(Value::Null);
    }
    let items = list_or_varargs(a);
    let Some(mut best) = items.first().cloned() else {
        return Ok(Value::Null);
    };
    for v in items.iter().skip(1) {
        match compare(v, &best) {
            Some(o) if o == want => best = v.clone(),
            Some(_) => {}
            None => {
                return Ok(fail(ev, name, || {
                    format!("'{v}' and '{best}' are not comparable")
                }));
            }
        }
    }
    if items.len() == 1 && compare(&best, &best).is_none() {
        return Ok(fail(ev, name, || format!("'{best}' is not comparable")));
    }
    Ok(best)
}

fn min(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    extreme(ev, "min", a, Ordering::Less)
}

fn max(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    extreme(ev, "max", a, Ordering::Greater)
}

/// All items as numbers, or `None` (with a warning) if any is not a number.
fn numbers(ev: &mut Evaluator<'_>, name: &str, a: Vec<Value>) -> Option<Vec<Number>> {
    if a.len() == 1 && a[0].is_null() {
        return None;
    }
    let items = list_or_varargs(a);
    let mut out = Vec::with_capacity(items.len());
    for v in items.iter() {
        match v {
            Value::Number(n) => out.push(*n),
            other => {
                fail(ev, name, || format!("expected numbers but found '{other}'"));
                return None;
            }
        }
    }
    Some(out)
}

fn sum(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(ns) = numbers(ev, "sum", a) else {
        return Ok(Value::Null);
    };
    if ns.is_empty() {
        return Ok(Value::Null);
    }
    let mut total = Number::ZERO;
    for n in ns {
        match total.checked_add(n) {
            Some(t) => total = t,
            None => return Ok(Value::Null),
        }
    }
    Ok(Value::Number(total))
}

fn mean(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(ns) = numbers(ev, "mean", a) else {
        return Ok(Value::Null);
    };
    if ns.is_empty() {
        return Ok(Value::Null);
    }
    let count = Number::from_i64(ns.len() as i64);
    let total = ns
        .iter()
        .try_fold(Number::ZERO, |acc, n| acc.checked_add(*n));
    Ok(total
        .and_then(|t| t.checked_div(count))
        .map(Value::Number)
        .unwrap_or(Value::Null))
}

fn product(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(ns) = numbers(ev, "product", a) else {
        return Ok(Value::Null);
    };
    if ns.is_empty() {
        return Ok(Value::Null);
    }
    Ok(ns
        .iter()
        .try_fold(Number::ONE, |acc, n| acc.checked_mul(*n))
        .map(Value::Number)
        .unwrap_or(Value::Null))
}

fn median(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(mut ns) = numbers(ev, "median", a) else {
        return Ok(Value::Null);
    };
    if ns.is_empty() {
        return Ok(Value::Null);
    }
    ns.sort();
    let mid = ns.len() / 2;
    Ok(if ns.len() % 2 == 1 {
        Value::Number(ns[mid])
    } else {
        ns[mid - 1]
            .checked_add(ns[mid])
            .and_then(|s| s.checked_div(Number::from_i64(2)))
            .map(Value::Number)
            .unwrap_or(Value::Null)
    })
}

/// Sample standard deviation.
fn stddev(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(ns) = numbers(ev, "stddev", a) else {
        return Ok(Value::Null);
    };
    if ns.len() < 2 {
        return Ok(Value::Null);
    }
    let n = Number::from_i64(ns.len() as i64);
    let r = (|| {
        let total = ns
            .iter()
            .try_fold(Number::ZERO, |acc, x| acc.checked_add(*x))?;
        let mean = total.checked_div(n)?;
        let sq = ns.iter().try_fold(Number::ZERO, |acc, x| {
            let d = x.checked_sub(mean)?;
            acc.checked_add(d.checked_mul(d)?)
        })?;
        sq.checked_div(n.checked_sub(Number::ONE)?)?.sqrt()
    })();
    Ok(r.map(Value::Number).unwrap_or(Value::Null))
}

fn mode(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(mut ns) = numbers(ev, "mode", a) else {
        return Ok(Value::Null);
    };
    ns.sort();
    let mut best = 0usize;
    let mut modes: Vec<Number> = Vec::new();
    let mut i = 0;
    while i < ns.len() {
        let mut j = i;
        while j < ns.len() && ns[j] == ns[i] {
            j += 1;
        }
        let run = j - i;
        if run > best {
            best = run;
            modes.clear();
        }
        if run == best {
            modes.push(ns[i]);
        }
        i = j;
    }
    Ok(Value::list(modes.into_iter().map(Value::Number).collect()))
}

fn all(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    bool_fold(ev, "all", a, false)
}

fn any(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    bool_fold(ev, "any", a, true)
}

/// `all` (decisive = false) and `any` (decisive = true): the decisive value wins, then
/// anything that is not a boolean makes the result null.
fn bool_fold(ev: &mut Evaluator<'_>, name: &str, a: Vec<Value>, decisive: bool) -> R {
    if a.len() == 1 && a[0].is_null() {
        return Ok(Value::Null);
    }
    let items = list_or_varargs(a);
    let mut undecided = false;
    for v in items.iter() {
        match v {
            Value::Bool(b) if *b == decisive => return Ok(Value::Bool(decisive)),
            Value::Bool(_) => {}
            _ => undecided = true,
        }
    }
    if undecided {
        return Ok(fail(ev, name, || "expected a list of booleans".into()));
    }
    Ok(Value::Bool(!decisive))
}

/// 1-based position to 0-based index (negative counts from the end).
fn position(pos: i64, len: usize) -> Option<usize> {
    let len = len as i64;
    let idx = if pos > 0 {
        pos - 1
    } else if pos < 0 {
        len + pos
    } else {
        return None;
    };
    (0..len).contains(&idx).then_some(idx as usize)
}

fn sublist(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let (Some(l), Some(start)) = (list(ev, "sublist", &a[0]), integer(ev, "sublist", &a[1])) else {
        return Ok(Value::Null);
    };
    let Some(from) = position(start, l.len()) else {
        return Ok(fail(ev, "sublist", || {
            format!("start position {start} is out of range")
        }));
    };
    let to = match a.get(2) {
        Some(v) => match integer(ev, "sublist", v) {
            Some(n) if n >= 0 && from as i64 + n <= l.len() as i64 => from + n as usize,
            Some(_) => return Ok(fail(ev, "sublist", || "length is out of range".into())),
            None => return Ok(Value::Null),
        },
        None => l.len(),
    };
    Ok(Value::list(l[from..to].to_vec()))
}

fn append(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let mut it = a.into_iter();
    let first = it.next().unwrap_or(Value::Null);
    let Some(l) = list_arg(&first) else {
        return Ok(Value::Null);
    };
    let mut out = l.to_vec();
    out.extend(it);
    ev.check_list_len(out.len())?;
    Ok(Value::list(out))
}

fn concatenate(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let mut out = Vec::new();
    for v in &a {
        match v {
            Value::List(l) => out.extend(l.iter().cloned()),
            Value::Null => return Ok(Value::Null),
            other => out.push(other.clone()),
        }
        ev.check_list_len(out.len())?;
    }
    Ok(Value::list(out))
}

fn insert_before(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let (Some(l), Some(pos)) = (
        list(ev, "insert before", &a[0]),
        integer(ev, "insert before", &a[1]),
    ) else {
        return Ok(Value::Null);
    };
    let Some(i) = position(pos, l.len()) else {
        return Ok(fail(ev, "insert before", || {
            format!("position {pos} is out of range")
        }));
    };
    let mut out = l.to_vec();
    out.insert(i, a[2].clone());
    Ok(Value::list(out))
}

fn remove(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let (Some(l), Some(pos)) = (list(ev, "remove", &a[0]), integer(ev, "remove", &a[1])) else {
        return Ok(Value::Null);
    };
    let Some(i) = position(pos, l.len()) else {
        return Ok(fail(ev, "remove", || {
            format!("position {pos} is out of range")
        }));
    };
    let mut out = l.to_vec();
    out.remove(i);
    Ok(Value::list(out))
}

fn reverse(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list(ev, "reverse", &a[0]) else {
        return Ok(Value::Null);
    };
    Ok(Value::list(l.iter().rev().cloned().collect()))
}

fn index_of(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list(ev, "index of", &a[0]) else {
        return Ok(Value::Null);
    };
    Ok(Value::list(
        l.iter()
            .enumerate()
            .filter(|(_, v)| equals(v, &a[1]) == Some(true))
            .map(|(i, _)| Value::number(i as i64 + 1))
            .collect(),
    ))
}

/// Adds `v` unless an equal value is there; charges the linear scan as work, since these
/// functions are quadratic.
fn push_distinct(ev: &mut Evaluator<'_>, out: &mut Vec<Value>, v: &Value) -> Result<(), EvalError> {
    ev.charge(out.len() as u64 + 1)?;
    if !out.iter().any(|x| equals(x, v) == Some(true)) {
        out.push(v.clone());
    }
    Ok(())
}

fn union(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let mut out = Vec::new();
    for v in &a {
        ev.step()?;
        match v {
            Value::List(l) => {
                for x in l.iter() {
                    push_distinct(ev, &mut out, x)?;
                }
            }
            Value::Null => return Ok(Value::Null),
            other => push_distinct(ev, &mut out, other)?,
        }
    }
    Ok(Value::list(out))
}

fn distinct_values(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list_arg(&a[0]) else {
        return Ok(Value::Null);
    };
    let mut out = Vec::new();
    for v in l.iter() {
        push_distinct(ev, &mut out, v)?;
    }
    Ok(Value::list(out))
}

fn duplicate_values(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list_arg(&a[0]) else {
        return Ok(Value::Null);
    };
    let mut seen = Vec::new();
    let mut dups = Vec::new();
    for v in l.iter() {
        ev.charge(seen.len() as u64 + 1)?;
        if seen.iter().any(|x| equals(x, v) == Some(true)) {
            push_distinct(ev, &mut dups, v)?;
        } else {
            seen.push(v.clone());
        }
    }
    Ok(Value::list(dups))
}

/// Flattens into `out`, stopping (false) once `out` would exceed `max` items: a shared
/// value can stand for far more leaves than memory holds.
fn flatten_into(v: &Value, out: &mut Vec<Value>, depth: usize, max: usize) -> bool {
    match v {
        Value::List(l) if depth < 512 => l.iter().all(|x| flatten_into(x, out, depth + 1, max)),
        other => {
            out.push(other.clone());
            out.len() <= max
        }
    }
}

fn flatten(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list_arg(&a[0]) else {
        return Ok(Value::Null);
    };
    let mut out = Vec::new();
    let max = ev.limits().max_list_len;
    if !l.iter().all(|x| flatten_into(x, &mut out, 0, max)) {
        ev.check_list_len(out.len())?;
    }
    Ok(Value::list(out))
}

fn sort(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list_arg(&a[0]) else {
        return Ok(Value::Null);
    };
    let mut items = l.to_vec();
    match a.get(1) {
        None | Some(Value::Null) => {
            if items.windows(2).any(|w| compare(&w[0], &w[1]).is_none())
                || (items.len() == 1 && compare(&items[0], &items[0]).is_none())
            {
                return Ok(fail(ev, "sort", || "the items are not comparable".into()));
            }
            items.sort_by(|x, y| compare(x, y).unwrap_or(Ordering::Equal));
            Ok(Value::list(items))
        }
        Some(Value::Function(f)) => {
            let f = f.clone();
            // Insertion sort driven by `precedes`: it tolerates inconsistent orderings and
            // lets evaluation errors surface.
            let mut sorted: Vec<Value> = Vec::with_capacity(items.len());
            for item in items {
                let mut at = sorted.len();
                for (i, existing) in sorted.iter().enumerate() {
                    let r = ev.invoke(&f, vec![item.clone(), existing.clone()])?;
                    match r {
                        Value::Bool(true) => {
                            at = i;
                            break;
                        }
                        Value::Bool(false) => {}
                        _ => {
                            return Ok(fail(ev, "sort", || {
                                "precedes must return a boolean".into()
                            }));
                        }
                    }
                }
                sorted.insert(at, item);
            }
            Ok(Value::list(sorted))
        }
        Some(other) => Ok(fail(ev, "sort", || {
            format!("expected a function but found '{other}'")
        })),
    }
}

fn list_replace(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let Some(l) = list_arg(&a[0]) else {
        return Ok(Value::Null);
    };
    let new_item = a[2].clone();
    let mut out = l.to_vec();
    match &a[1] {
        Value::Number(n) => {
            let Some(pos) = n.trunc_i64() else {
                return Ok(Value::Null);
            };
            let Some(i) = position(pos, out.len()) else {
                return Ok(fail(ev, "list replace", || {
                    format!("position {pos} is out of range")
                }));
            };
            out[i] = new_item;
        }
        Value::Function(f) => {
            if let Function::User { def, .. } = &**f
                && def.params.len() != 2
            {
                return Ok(fail(ev, "list replace", || {
                    "match must take two parameters".into()
                }));
            }
            let f = f.clone();
            for slot in out.iter_mut() {
                match ev.invoke(&f, vec![slot.clone(), new_item.clone()])? {
                    Value::Bool(true) => *slot = new_item.clone(),
                    Value::Bool(false) => {}
                    _ => {
                        return Ok(fail(ev, "list replace", || {
                            "match must return a boolean".into()
                        }));
                    }
                }
            }
        }
        other => {
            return Ok(fail(ev, "list replace", || {
                format!("expected a position or a match function but found '{other}'")
            }));
        }
    }
    Ok(Value::list(out))
}

fn is_empty(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    Ok(match list(ev, "is empty", &a[0]) {
        Some(l) => Value::Bool(l.is_empty()),
        None => Value::Null,
    })
}

fn partition(ev: &mut Evaluator<'_>, a: Vec<Value>) -> R {
    let (Some(l), Some(size)) = (list(ev, "partition", &a[0]), number(ev, "partition", &a[1]))
    else {
        return Ok(Value::Null);
    };
    let Some(size) = size.to_i64().filter(|s| *s > 0) else {
        return Ok(fail(ev, "partition", || {
            "size must be a positive integer".into()
        }));
    };
    Ok(Value::list(
        l.chunks(size as usize)
            .map(|c| Value::list(c.to_vec()))
            .collect(),
    ))
}
