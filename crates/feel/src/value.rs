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
    List(Arc<List>),
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
        Value::List(Arc::new(List(items)))
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

/// The items of a FEEL list. A newtype so that dropping a deeply nested value walks it
/// iteratively: values share structure and can nest far deeper than the stack allows a
/// recursive drop to go.
#[derive(Clone, Default, Debug)]
pub struct List(pub Vec<Value>);

impl std::ops::Deref for List {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl std::ops::DerefMut for List {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.0
    }
}

impl FromIterator<Value> for List {
    fn from_iter<T: IntoIterator<Item = Value>>(iter: T) -> List {
        List(iter.into_iter().collect())
    }
}

impl From<Vec<Value>> for List {
    fn from(items: Vec<Value>) -> List {
        List(items)
    }
}

impl Drop for List {
    fn drop(&mut self) {
        if self.0.iter().any(is_container) {
            drop_iteratively(std::mem::take(&mut self.0));
        }
    }
}

fn is_container(v: &Value) -> bool {
    matches!(v, Value::List(_) | Value::Context(_) | Value::Function(_))
}

/// Drops values without recursion: containers this is the last owner of are emptied onto
/// a work list instead of being dropped inside their parent's drop.
fn drop_iteratively(values: Vec<Value>) {
    let mut stack = values;
    while let Some(v) = stack.pop() {
        match v {
            Value::List(l) => {
                if let Ok(mut list) = Arc::try_unwrap(l) {
                    stack.append(&mut list.0);
                }
            }
            Value::Context(c) => {
                if let Ok(mut ctx) = Arc::try_unwrap(c) {
                    stack.extend(std::mem::take(&mut ctx.entries).into_iter().map(|(_, v)| v));
                }
            }
            Value::Function(f) => {
                if let Ok(Function::User { captured, .. }) = Arc::try_unwrap(f)
                    && let Ok(frames) = Arc::try_unwrap(captured)
                {
                    for frame in frames {
                        match frame {
                            crate::eval::Frame::Var(_, v) | crate::eval::Frame::Input(v) => {
                                stack.push(v)
                            }
                            crate::eval::Frame::Context(c) => stack.push(Value::Context(c)),
                        }
                    }
                }
            }
            other => drop(other),
        }
    }
}

/// A FEEL context: ordered entries with unique keys. Small contexts dominate (mappings,
/// decision outputs), where a vector with linear search beats hashing.
#[derive(Clone, Default, Debug)]
pub struct Context {
    entries: Vec<(Name, Value)>,
}

impl Drop for Context {
    fn drop(&mut self) {
        if self.entries.iter().any(|(_, v)| is_container(v)) {
            drop_iteratively(
                std::mem::take(&mut self.entries)
                    .into_iter()
                    .map(|(_, v)| v)
                    .collect(),
            );
        }
    }
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

/// Longest text a value renders to; values share structure, so a small expression can
/// describe one whose full text would not fit in memory. Beyond this it ends in `...`.
pub const MAX_DISPLAY_LEN: usize = 4 << 20;

/// Nesting rendered before eliding the rest.
const MAX_DISPLAY_DEPTH: usize = 512;

/// The text FEEL's `string()` gives, except that strings inside lists and contexts are
/// quoted as in feel-scala (`["a", 1]`, `{a:"b"}`). At most [`MAX_DISPLAY_LEN`] bytes.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let mut budget = MAX_DISPLAY_LEN;
        render(self, &mut out, &mut budget, 0, false);
        f.write_str(&out)
    }
}

/// Appends `text` within the budget; false once the budget is spent.
fn put(out: &mut String, budget: &mut usize, text: &str) -> bool {
    if *budget == 0 {
        return false;
    }
    if text.len() > *budget {
        let mut cut = *budget;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(&text[..cut]);
        out.push_str("...");
        *budget = 0;
        return false;
    }
    out.push_str(text);
    *budget -= text.len();
    true
}

fn render(v: &Value, out: &mut String, budget: &mut usize, depth: usize, nested: bool) -> bool {
    if depth > MAX_DISPLAY_DEPTH {
        return put(out, budget, "...");
    }
    match v {
        Value::String(s) if nested => {
            let quoted = format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
            put(out, budget, &quoted)
        }
        Value::String(s) => put(out, budget, s),
        Value::List(items) => {
            if !put(out, budget, "[") {
                return false;
            }
            for (i, item) in items.iter().enumerate() {
                if (i > 0 && !put(out, budget, ", ")) || !render(item, out, budget, depth + 1, true)
                {
                    return false;
                }
            }
            put(out, budget, "]")
        }
        Value::Context(c) => {
            if !put(out, budget, "{") {
                return false;
            }
            for (i, (k, item)) in c.iter().enumerate() {
                if (i > 0 && !put(out, budget, ", "))
                    || !put(out, budget, k)
                    || !put(out, budget, ":")
                    || !render(item, out, budget, depth + 1, true)
                {
                    return false;
                }
            }
            put(out, budget, "}")
        }
        Value::Range(r) => {
            if let Some(op) = r.unary {
                let op = match op {
                    crate::ast::CmpOp::Lt => "< ",
                    crate::ast::CmpOp::Le => "<= ",
                    crate::ast::CmpOp::Gt => "> ",
                    crate::ast::CmpOp::Ge => ">= ",
                    crate::ast::CmpOp::Eq => "= ",
                    crate::ast::CmpOp::Ne => "!= ",
                };
                let v = r
                    .start
                    .value()
                    .or(r.end.value())
                    .cloned()
                    .unwrap_or_default();
                return put(out, budget, op) && render(&v, out, budget, depth + 1, true);
            }
            let ok = match &r.start {
                Bound::Unbounded => true,
                Bound::Open(v) => put(out, budget, "(") && render(v, out, budget, depth + 1, true),
                Bound::Closed(v) => {
                    put(out, budget, "[") && render(v, out, budget, depth + 1, true)
                }
            };
            ok && put(out, budget, "..")
                && match &r.end {
                    Bound::Unbounded => true,
                    Bound::Open(v) => {
                        render(v, out, budget, depth + 1, true) && put(out, budget, ")")
                    }
                    Bound::Closed(v) => {
                        render(v, out, budget, depth + 1, true) && put(out, budget, "]")
                    }
                }
        }
        Value::Null => put(out, budget, "null"),
        Value::Bool(b) => put(out, budget, if *b { "true" } else { "false" }),
        Value::Number(n) => put(out, budget, &n.to_string()),
        Value::Date(d) => put(out, budget, &d.to_string()),
        Value::Time(t) => put(out, budget, &t.to_string()),
        Value::DateTime(d) => put(out, budget, &d.to_string()),
        Value::DayTimeDuration(d) => put(out, budget, &d.to_string()),
        Value::YearMonthDuration(d) => put(out, budget, &d.to_string()),
        Value::Function(func) => put(out, budget, &format!("{func:?}")),
    }
}
