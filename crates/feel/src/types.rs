//! FEEL types, for `instance of`, typed function parameters and DMN type references.

use std::fmt;
use std::sync::Arc;

use crate::value::{Bound, Function, Name, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum FeelType {
    Any,
    Null,
    Number,
    String,
    Boolean,
    Date,
    Time,
    DateTime,
    DayTimeDuration,
    YearMonthDuration,
    List(Box<FeelType>),
    /// A context with at least these typed entries (structural, as in DMN 1.4+).
    Context(Vec<(Name, FeelType)>),
    Range(Box<FeelType>),
    /// Parameter types and result type; `None` parameters mean "not declared".
    Function(Option<Vec<FeelType>>, Box<FeelType>),
    /// A DMN item definition with allowed values: the base type narrowed by unary tests.
    Constrained(Box<FeelType>, Arc<crate::UnaryTests>),
}

impl FeelType {
    /// A built-in type by name. Accepts the DMN 1.1 XML Schema-style names as well
    /// (`dayTimeDuration`, `dateTime`), which older models use in `typeRef`.
    pub fn by_name(name: &str) -> Option<FeelType> {
        let n = name.strip_prefix("feel:").unwrap_or(name);
        Some(match n {
            "Any" | "any" => FeelType::Any,
            "Null" | "null" => FeelType::Null,
            "number" | "decimal" | "integer" | "double" | "long" => FeelType::Number,
            "string" => FeelType::String,
            "boolean" => FeelType::Boolean,
            "date" => FeelType::Date,
            "time" => FeelType::Time,
            "date and time" | "dateTime" => FeelType::DateTime,
            "days and time duration" | "dayTimeDuration" => FeelType::DayTimeDuration,
            "years and months duration" | "yearMonthDuration" => FeelType::YearMonthDuration,
            "list" => FeelType::List(Box::new(FeelType::Any)),
            "context" => FeelType::Context(Vec::new()),
            "range" => FeelType::Range(Box::new(FeelType::Any)),
            "function" => FeelType::Function(None, Box::new(FeelType::Any)),
            _ => return None,
        })
    }

    /// `value instance of self`. `null` is an instance of `Null` only. Allowed values of a
    /// DMN item definition do not take part (`256 instance of t255` is true, per the TCK);
    /// [`conforms`](Self::conforms) checks them.
    pub fn is_instance(&self, value: &Value) -> bool {
        self.check(value, false)
    }

    /// Whether a value may be assigned to something of this type: an instance that also
    /// satisfies every allowed-values constraint, at any depth. `null` conforms to any type.
    pub fn conforms(&self, value: &Value) -> bool {
        value.is_null() || self.check(value, true)
    }

    fn check(&self, value: &Value, strict: bool) -> bool {
        match (self, value) {
            (FeelType::Null, Value::Null) => true,
            (_, Value::Null) => false,
            (FeelType::Any, _) => true,
            (FeelType::Number, Value::Number(_))
            | (FeelType::String, Value::String(_))
            | (FeelType::Boolean, Value::Bool(_))
            | (FeelType::Date, Value::Date(_))
            | (FeelType::Time, Value::Time(_))
            | (FeelType::DateTime, Value::DateTime(_))
            | (FeelType::DayTimeDuration, Value::DayTimeDuration(_))
            | (FeelType::YearMonthDuration, Value::YearMonthDuration(_)) => true,
            (FeelType::List(item), Value::List(items)) => {
                items.iter().all(|v| v.is_null() || item.check(v, strict))
            }
            (FeelType::Context(entries), Value::Context(c)) => entries
                .iter()
                .all(|(k, t)| c.get(k).is_some_and(|v| v.is_null() || t.check(v, strict))),
            (FeelType::Range(item), Value::Range(r)) => {
                [&r.start, &r.end].iter().all(|b| match b {
                    Bound::Unbounded => true,
                    Bound::Open(v) | Bound::Closed(v) => v.is_null() || item.check(v, strict),
                })
            }
            (FeelType::Function(params, result), Value::Function(f)) => {
                function_conforms(f, params.as_deref(), result)
            }
            (FeelType::Constrained(base, tests), v) => {
                base.check(v, strict)
                    && (!strict || crate::eval::unary_tests_match_static(tests, v))
            }
            _ => false,
        }
    }

    /// Whether every instance of `self` is an instance of `other` (type conformance, used
    /// when checking function values against function types).
    pub fn conforms_to(&self, other: &FeelType) -> bool {
        match (self, other) {
            (_, FeelType::Any) => true,
            (FeelType::Null, _) => true,
            (FeelType::List(a), FeelType::List(b)) | (FeelType::Range(a), FeelType::Range(b)) => {
                a.conforms_to(b)
            }
            (FeelType::Context(a), FeelType::Context(b)) => b
                .iter()
                .all(|(k, tb)| a.iter().any(|(ka, ta)| ka == k && ta.conforms_to(tb))),
            (FeelType::Function(pa, ra), FeelType::Function(pb, rb)) => {
                ra.conforms_to(rb)
                    && match (pa, pb) {
                        (_, None) => true,
                        (None, Some(_)) => false,
                        (Some(pa), Some(pb)) => {
                            pa.len() == pb.len() && pa.iter().zip(pb).all(|(a, b)| b.conforms_to(a))
                        }
                    }
            }
            (FeelType::Constrained(a, _), b) => a.conforms_to(b),
            (a, b) => a == b,
        }
    }
}

fn function_conforms(f: &Function, params: Option<&[FeelType]>, result: &FeelType) -> bool {
    let Some(params) = params else {
        return true;
    };
    match f {
        Function::User { def, .. } => {
            if def.params.len() != params.len() {
                return false;
            }
            // Untyped parameters accept Any; a declared parameter type must accept what
            // the target type promises to pass.
            let params_ok = def.params.iter().zip(params).all(|(p, t)| match &p.ty {
                None => true,
                Some(pt) => t.conforms_to(pt),
            });
            // Without a declared result type, only an obviously wrong body disqualifies.
            params_ok
                && (*result == FeelType::Any
                    || result_type_of(def).is_none_or(|r| r.conforms_to(result)))
        }
        _ => f.param_names().len() == params.len(),
    }
}

/// The statically known result type of a function body, when it is obvious (a literal).
fn result_type_of(def: &crate::ast::FunctionDef) -> Option<FeelType> {
    use crate::ast::Kind;
    match &def.body.kind {
        Kind::Literal(v) => Some(match v {
            Value::String(_) => FeelType::String,
            Value::Number(_) => FeelType::Number,
            Value::Bool(_) => FeelType::Boolean,
            Value::Null => FeelType::Null,
            _ => return None,
        }),
        _ => None,
    }
}

impl fmt::Display for FeelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeelType::Any => f.write_str("Any"),
            FeelType::Null => f.write_str("Null"),
            FeelType::Number => f.write_str("number"),
            FeelType::String => f.write_str("string"),
            FeelType::Boolean => f.write_str("boolean"),
            FeelType::Date => f.write_str("date"),
            FeelType::Time => f.write_str("time"),
            FeelType::DateTime => f.write_str("date and time"),
            FeelType::DayTimeDuration => f.write_str("days and time duration"),
            FeelType::YearMonthDuration => f.write_str("years and months duration"),
            FeelType::List(t) => write!(f, "list<{t}>"),
            FeelType::Context(entries) => {
                f.write_str("context<")?;
                for (i, (k, t)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {t}")?;
                }
                f.write_str(">")
            }
            FeelType::Range(t) => write!(f, "range<{t}>"),
            FeelType::Function(params, r) => {
                f.write_str("function<")?;
                if let Some(params) = params {
                    for (i, t) in params.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{t}")?;
                    }
                }
                write!(f, ">->{r}")
            }
            FeelType::Constrained(t, _) => write!(f, "{t}"),
        }
    }
}
