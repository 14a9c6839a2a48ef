//! Built-in functions: those of DMN 1.5 and Camunda's extensions (feel-scala), grouped by
//! the kind of value they work on. Each function declares its parameter names, so named
//! arguments (`substring(string: "a", start position: 1)`) bind like positional ones.

mod boolean;
mod context;
mod conversion;
pub mod external;
mod list;
mod numeric;
mod range;
mod string;
mod temporal;
mod xpath_regex;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::error::{EvalError, WarningKind};
use crate::eval::Evaluator;
use crate::number::Number;
use crate::value::{List, Name, Value};

pub type BuiltinFn = fn(&mut Evaluator<'_>, Vec<Value>) -> Result<Value, EvalError>;

/// One accepted parameter list. A function with optional parameters has one signature per
/// arity; a variadic signature takes any number of trailing arguments for its last
/// parameter.
pub struct Sig {
    pub params: &'static [&'static str],
    pub variadic: bool,
}

pub const fn sig(params: &'static [&'static str]) -> Sig {
    Sig {
        params,
        variadic: false,
    }
}

pub const fn var(params: &'static [&'static str]) -> Sig {
    Sig {
        params,
        variadic: true,
    }
}

pub struct Builtin {
    pub name: &'static str,
    pub sigs: &'static [Sig],
    pub f: BuiltinFn,
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "builtin '{}'", self.name)
    }
}

impl Builtin {
    pub fn accepts_arity(&self, n: usize) -> bool {
        self.signature_for_arity(n).is_some()
    }

    pub fn signature_for_arity(&self, n: usize) -> Option<usize> {
        self.sigs.iter().position(|s| {
            if s.variadic {
                // The variadic parameter takes at least one argument.
                n >= s.params.len()
            } else {
                n == s.params.len()
            }
        })
    }

    /// Orders named arguments by the signature whose parameter names match exactly, or
    /// else the shortest one that contains them all (missing ones become null).
    pub fn bind_named(&self, named: Vec<(Name, Value)>) -> Option<(usize, Vec<Value>)> {
        let fits = |s: &Sig| named.iter().all(|(k, _)| s.params.contains(&&**k));
        let (index, chosen) = self
            .sigs
            .iter()
            .enumerate()
            .find(|(_, s)| fits(s) && s.params.len() == named.len())
            .or_else(|| {
                self.sigs
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| fits(s))
                    .min_by_key(|(_, s)| s.params.len())
            })?;
        let params: Vec<Name> = chosen.params.iter().map(|p| Name::from(*p)).collect();
        let mut values = crate::eval::bind_args(&params, named).ok()?;
        if chosen.variadic {
            // A named variadic argument is passed as a list (or a single value).
            match values.pop() {
                Some(Value::List(items)) => values.extend(items.iter().cloned()),
                Some(other) => values.push(other),
                None => {}
            }
        }
        Some((index, values))
    }
}

fn registry() -> &'static HashMap<&'static str, &'static Builtin> {
    static REGISTRY: OnceLock<HashMap<&'static str, &'static Builtin>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut m = HashMap::new();
        for group in [
            conversion::BUILTINS,
            boolean::BUILTINS,
            string::BUILTINS,
            list::BUILTINS,
            numeric::BUILTINS,
            context::BUILTINS,
            temporal::BUILTINS,
            range::BUILTINS,
        ] {
            for b in group {
                m.insert(b.name, b);
            }
        }
        m
    })
}

pub fn lookup(name: &str) -> Option<&'static Builtin> {
    registry().get(name).copied()
}

/// Names of all built-in functions (for tooling and tests).
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&str> = registry().keys().copied().collect();
    v.sort_unstable();
    v
}

// ---- argument helpers shared by the groups ----

/// Records a failed invocation and yields null.
pub(crate) fn fail(ev: &mut Evaluator<'_>, name: &str, why: impl FnOnce() -> String) -> Value {
    ev.warn(WarningKind::FunctionInvocationFailure, || {
        format!("Failed to invoke function '{name}': {}", why())
    });
    Value::Null
}

macro_rules! expect_type {
    ($fn_name:ident, $variant:ident, $ty:ty, $label:literal) => {
        #[allow(unreachable_patterns)]
        pub(crate) fn $fn_name(ev: &mut Evaluator<'_>, name: &str, v: &Value) -> Option<$ty> {
            match v {
                Value::$variant(x) => Some(x.clone()),
                // DMN's implicit conversion from a singleton list to its item.
                Value::List(l) if l.len() == 1 && matches!(l[0], Value::$variant(_)) => {
                    match &l[0] {
                        Value::$variant(x) => Some(x.clone()),
                        _ => None,
                    }
                }
                Value::Null => None,
                other => {
                    fail(ev, name, || {
                        format!("expected {} but found '{}'", $label, other)
                    });
                    None
                }
            }
        }
    };
}

expect_type!(number, Number, Number, "number");
expect_type!(string, String, Arc<str>, "string");
expect_type!(list, List, Arc<List>, "list");
expect_type!(context, Context, Arc<crate::value::Context>, "context");

/// A whole number argument (positions, lengths, scales). Decimals are truncated, as
/// feel-scala's `intValue` does.
pub(crate) fn integer(ev: &mut Evaluator<'_>, name: &str, v: &Value) -> Option<i64> {
    let n = number(ev, name, v)?;
    match n.trunc_i64() {
        Some(i) => Some(i),
        None => {
            fail(ev, name, || format!("'{n}' is out of range"));
            None
        }
    }
}

/// Functions taking either one list or several arguments (`min([1,2])`, `min(1, 2)`).
pub(crate) fn list_or_varargs(args: Vec<Value>) -> Arc<List> {
    if args.len() == 1
        && let Value::List(l) = &args[0]
    {
        return l.clone();
    }
    Arc::new(List(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_has_the_spec_and_camunda_functions() {
        for name in [
            "date and time",
            "string join",
            "get value",
            "context put",
            "is defined",
            "get or else",
            "last day of month",
            "day of week",
            "list replace",
            "overlaps before",
            "round half down",
        ] {
            assert!(lookup(name).is_some(), "{name}");
        }
    }

    #[test]
    fn named_binding_picks_the_matching_signature() {
        let b = lookup("substring").unwrap();
        let (_, args) = b
            .bind_named(vec![
                (Name::from("start position"), Value::number(2)),
                (Name::from("string"), Value::string("abc")),
            ])
            .unwrap();
        assert_eq!(args.len(), 2);
        assert_eq!(args[0].as_str(), Some("abc"));
    }
}
