//! FEEL values. Cheap to clone: big payloads sit behind `Arc`, so passing a list or a
//! context around never copies it.

use std::fmt;
use std::sync::Arc;

use crate::ast::FunctionDef;
use crate::builtins::Builtin;
use crate::number::Number;
use crate::temporal::{Date, DateTime, DayTimeDuration, Time, YearMonthDuration};

/// Names (variables, context keys) are shared strings: compiled expressions and values
/// hand them around a lot.
pub type Name = Arc<str>;

#[derive(Clone, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Arc<str>),
    Date(Date),
    Time(Time),
    DateTime(DateTime),
    DayTimeDuration(DayTimeDuration),
    YearMonthDuration(YearMonthDuration),
    List(Arc<Vec<Value>>),
    Context(Arc<Context>),
    Range(Arc<Range>),
    Function(Arc<Function>),
}

impl Value {
    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    pub fn number(n: i64) -> Value {
        Value::Number(Number::from_i64(n))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    pub fn context(c: Context) -> Value {
        Value::Context(Arc::new(c))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The FEEL type name, as used in messages and by `instance of`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "Null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Date(_) => "date",
            Value::Time(_) => "time",
            Value::DateTime(_) => "date and time",
            Value::DayTimeDuration(_) => "days and time duration",
            Value::YearMonthDuration(_) => "years and months duration",
            Value::List(_) => "list",
            Value::Context(_) => "context",
            Value::Range(_) => "range",
            Value::Function(_) => "function",
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<Number> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn as_context(&self) -> Option<&Context> {
        match self {
            Value::Context(c) => Some(c),
            _ => None,
        }
    }
}

/// A FEEL context: ordered entries with unique keys. Small contexts dominate (mappings,
/// decision outputs), where a vector with linear search beats hashing.
#[derive(Clone, Default, Debug)]
pub struct Context {
    entries: Vec<(Name, Value)>,
}

impl Context {
    pub fn new() -> Context {
        Context::default()
    }

    pub fn with_capacity(n: usize) -> Context {
        Context {
            entries: Vec::with_capacity(n),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| &**k == key)
    }

    /// Inserts or replaces (a replaced entry keeps its position).
    pub fn insert(&mut self, key: impl Into<Name>, value: Value) {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Appends without checking for a duplicate key; for builders that know keys are new.
    pub(crate) fn push_unchecked(&mut self, key: Name, value: Value) {
        self.entries.push((key, value));
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.entries.iter().position(|(k, _)| &**k == key)?;
        Some(self.entries.remove(i).1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Name, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Name> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl FromIterator<(Name, Value)> for Context {
    fn from_iter<T: IntoIterator<Item = (Name, Value)>>(iter: T) -> Context {
        let mut c = Context::new();
        for (k, v) in iter {
            c.insert(k, v);
        }
        c
    }
}

/// One end of a range.
#[derive(Clone, Debug)]
pub enum Bound {
    Unbounded,
    Open(Value),
    Closed(Value),
}

impl Bound {
    pub fn value(&self) -> Option<&Value> {
        match self {
            Bound::Unbounded => None,
            Bound::Open(v) | Bound::Closed(v) => Some(v),
        }
    }

    pub fn is_closed(&self) -> bool {
        matches!(self, Bound::Closed(_))
    }
}

#[derive(Clone, Debug)]
pub struct Range {
    pub start: Bound,
    pub end: Bound,
    /// Set for ranges written as unary comparisons (`< 10`, `= 5`, `!= 5`): DMN 1.5 keeps
    /// them distinct from the equivalent interval (`(< 10) != (null..10)`), and `!= 5` is
    /// no interval at all (both bounds hold 5).
    pub unary: Option<crate::ast::CmpOp>,
}

impl Range {
    pub fn interval(start: Bound, end: Bound) -> Range {
        Range {
            start,
            end,
            unary: None,
        }
    }
}

/// A function a host (the DMN evaluator) implements in Rust: a business knowledge model, a
/// decision service.
pub trait NativeFunction: Send + Sync {
    fn params(&self) -> &[Name];
    fn call(
        &self,
        args: Vec<Value>,
        ev: &mut crate::eval::Evaluator<'_>,
    ) -> Result<Value, crate::EvalError>;
}

pub enum Function {
    Builtin(&'static Builtin),
    /// A FEEL `function(...) body` with the local bindings it closed over.
    User {
        def: Arc<FunctionDef>,
        captured: Arc<Vec<crate::eval::Frame>>,
    },
    Native(Arc<dyn NativeFunction>),
}

impl Function {
    pub fn param_names(&self) -> Vec<Name> {
        match self {
            Function::Builtin(b) => b
                .sigs
                .first()
                .map(|s| s.params.iter().map(|p| Name::from(*p)).collect())
                .unwrap_or_default(),
            Function::User { def, .. } => def.params.iter().map(|p| p.name.clone()).collect(),
            Function::Native(n) => n.params().to_vec(),
        }
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Function::Builtin(b) => write!(f, "builtin {}", b.name),
            Function::User { def, .. } => {
                let names: Vec<&str> = def.params.iter().map(|p| &*p.name).collect();
                write!(f, "function({})", names.join(", "))
            }
            Function::Native(n) => write!(f, "native function({})", n.params().join(", ")),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::String(s) => write!(f, "{s:?}"),
            other => write!(f, "{other}"),
        }
    }
}

/// The text FEEL's `string()` gives, except that strings inside lists and contexts are
/// quoted as in feel-scala (`["a", 1]`, `{a:"b"}`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::String(s) => f.write_str(s),
            Value::Date(d) => write!(f, "{d}"),
            Value::Time(t) => write!(f, "{t}"),
            Value::DateTime(d) => write!(f, "{d}"),
            Value::DayTimeDuration(d) => write!(f, "{d}"),
            Value::YearMonthDuration(d) => write!(f, "{d}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_nested(f, v)?;
                }
                f.write_str("]")
            }
            Value::Context(c) => {
                f.write_str("{")?;
                for (i, (k, v)) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}:")?;
                    write_nested(f, v)?;
                }
                f.write_str("}")
            }
            Value::Range(r) if r.unary.is_some() => {
                let op = match r.unary {
                    Some(crate::ast::CmpOp::Lt) => "<",
                    Some(crate::ast::CmpOp::Le) => "<=",
                    Some(crate::ast::CmpOp::Gt) => ">",
                    Some(crate::ast::CmpOp::Ge) => ">=",
                    Some(crate::ast::CmpOp::Eq) => "=",
                    _ => "!=",
                };
                let v = r
                    .start
                    .value()
                    .or(r.end.value())
                    .cloned()
                    .unwrap_or_default();
                write!(f, "{op} ")?;
                write_nested(f, &v)
            }
            Value::Range(r) => {
                match &r.start {
                    Bound::Unbounded => {}
                    Bound::Open(v) => {
                        f.write_str("(")?;
                        write_nested(f, v)?;
                    }
                    Bound::Closed(v) => {
                        f.write_str("[")?;
                        write_nested(f, v)?;
                    }
                }
                f.write_str("..")?;
                match &r.end {
                    Bound::Unbounded => Ok(()),
                    Bound::Open(v) => {
                        write_nested(f, v)?;
                        f.write_str(")")
                    }
                    Bound::Closed(v) => {
                        write_nested(f, v)?;
                        f.write_str("]")
                    }
                }
            }
            Value::Function(func) => write!(f, "{func:?}"),
        }
    }
}

fn write_nested(f: &mut fmt::Formatter<'_>, v: &Value) -> fmt::Result {
    match v {
        Value::String(s) => write!(f, "\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
        other => write!(f, "{other}"),
    }
}
