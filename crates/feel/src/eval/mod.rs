//! The tree-walking evaluator.
//!
//! Errors in FEEL mostly do not fail: an undefined operation, a missing variable or a bad
//! argument gives `null` and a [`Warning`] (feel-scala's "suppressed failure"), so the
//! engine can both follow Zeebe's null-friendly semantics and explain a null in an
//! incident. Only assertions and resource limits fail with an [`EvalError`].

mod arith;
mod call;
pub mod compare;
mod properties;

use std::cmp::Ordering;
use std::sync::Arc;

pub use call::bind_args;

use crate::ast::{ArithOp, CmpOp, Iteration, Kind, Node, Quantifier, UnaryTest};
use crate::error::{EvalError, Warning, WarningKind};
use crate::number::Number;
use crate::temporal::{DateTime, Zone};
use crate::value::{Bound, Context, Function, List, Name, Range, Value};

/// Times with a zone id but no date get the zone's standard offset at this instant
/// (2025-01-01T00:00:00Z). feel-scala reads the wall clock here; a fixed instant keeps the
/// engine deterministic, and standard offsets practically never change.
pub const TIME_ZONE_REFERENCE_SECS: i64 = 1_735_689_600;

/// Where variables come from. Called lazily, only for names the expression reads, so an
/// engine can fetch variables from state on demand.
pub trait Variables {
    fn get(&self, name: &str) -> Option<Value>;
}

impl Variables for () {
    fn get(&self, _: &str) -> Option<Value> {
        None
    }
}

impl Variables for Context {
    fn get(&self, name: &str) -> Option<Value> {
        Context::get(self, name).cloned()
    }
}

impl<S: std::hash::BuildHasher> Variables for std::collections::HashMap<String, Value, S> {
    fn get(&self, name: &str) -> Option<Value> {
        std::collections::HashMap::get(self, name).cloned()
    }
}

impl<F: Fn(&str) -> Option<Value>> Variables for F {
    fn get(&self, name: &str) -> Option<Value> {
        self(name)
    }
}

/// The current time for `now()` and `today()`. The engine passes the record timestamp; no
/// evaluation ever reads the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    pub instant_nanos: i128,
    /// The zone `now()` is expressed in.
    pub zone: Zone,
}

impl Clock {
    pub fn from_epoch_millis(millis: i64) -> Clock {
        Clock {
            instant_nanos: i128::from(millis) * 1_000_000,
            zone: Zone::UTC,
        }
    }

    pub fn now(&self) -> Option<DateTime> {
        DateTime::at_instant(self.instant_nanos, self.zone)
    }
}

/// Bounds on what one evaluation may do, so hostile or broken expressions cannot exhaust
/// memory or time.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Nested evaluation depth (expression nesting plus function calls).
    pub max_depth: usize,
    /// Longest list an evaluation may build.
    pub max_list_len: usize,
    /// Loop iterations, filter items and function calls in one evaluation.
    pub max_steps: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 256,
            max_list_len: 1_000_000,
            max_steps: 10_000_000,
        }
    }
}

/// What an evaluation needs from its caller.
pub struct EvalContext<'a> {
    pub variables: &'a dyn Variables,
    pub clock: Option<Clock>,
    pub limits: Limits,
    /// Seed for `uuid()` and `random number()`. Evaluation never draws on system
    /// randomness: the engine passes something unique and replayable (e.g. the record's
    /// position), so replay yields the same values. Without a seed those functions are
    /// null.
    pub seed: Option<u64>,
}

impl<'a> EvalContext<'a> {
    pub fn new(variables: &'a dyn Variables) -> EvalContext<'a> {
        EvalContext {
            variables,
            clock: None,
            limits: Limits::default(),
            seed: None,
        }
    }

    pub fn with_seed(mut self, seed: u64) -> EvalContext<'a> {
        self.seed = Some(seed);
        self
    }

    pub fn with_clock(mut self, clock: Clock) -> EvalContext<'a> {
        self.clock = Some(clock);
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> EvalContext<'a> {
        self.limits = limits;
        self
    }
}

/// A local binding on the evaluator's scope stack.
#[derive(Clone, Debug)]
pub enum Frame {
    Var(Name, Value),
    /// All entries of a context are in scope (filter items, `get entries` lambdas).
    Context(Arc<Context>),
    /// The value `?` refers to in unary tests.
    Input(Value),
}

const MAX_WARNINGS: usize = 32;
/// Longest warning message kept (they quote values, which can be large).
const MAX_WARNING_LEN: usize = 1_000;
/// Longest string an evaluation may build (concatenation, `string join`, `replace`).
pub const MAX_STRING_LEN: usize = 16 << 20;
/// Nesting of lists a path projects through (`[[{a: 1}]].a`).
const MAX_PATH_DEPTH: usize = 64;

/// Internal marker: an iteration source that cannot be iterated makes the loop null.
const NOT_ITERABLE: &str = "\u{0}not iterable";

pub struct Evaluator<'a> {
    variables: &'a dyn Variables,
    clock: Option<Clock>,
    limits: Limits,
    /// SplitMix64 state, from the context's seed.
    rng: Option<u64>,
    frames: Vec<Frame>,
    warnings: Vec<Warning>,
    depth: usize,
    steps: u64,
    /// The signature a built-in call was bound to by its named arguments (`None` for
    /// positional calls); `context put` with `key` must get one string, with `keys` a list.
    pub(crate) signature: Option<usize>,
}

type R = Result<Value, EvalError>;

impl<'a> Evaluator<'a> {
    pub fn new(ctx: &EvalContext<'a>) -> Evaluator<'a> {
        Evaluator {
            variables: ctx.variables,
            clock: ctx.clock,
            limits: ctx.limits,
            rng: ctx.seed,
            frames: Vec::new(),
            warnings: Vec::new(),
            depth: 0,
            steps: 0,
            signature: None,
        }
    }

    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    pub fn clock(&self) -> Option<Clock> {
        self.clock
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The next deterministic pseudo-random number, or `None` without a seed.
    pub fn next_random(&mut self) -> Option<u64> {
        // SplitMix64: tiny, well distributed, and fully determined by the seed.
        let state = self.rng.as_mut()?;
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Some(z ^ (z >> 31))
    }

    /// Records why something became null. The message is built only if it is kept.
    pub fn warn(&mut self, kind: WarningKind, message: impl FnOnce() -> String) {
        if self.warnings.len() < MAX_WARNINGS {
            let mut message = message();
            if message.len() > MAX_WARNING_LEN {
                let mut cut = MAX_WARNING_LEN;
                while !message.is_char_boundary(cut) {
                    cut -= 1;
                }
                message.truncate(cut);
                message.push_str("...");
            }
            self.warnings.push(Warning { kind, message });
        }
    }

    /// Charges `n` units of work (for built-ins whose cost grows faster than their input).
    pub fn charge(&mut self, n: u64) -> Result<(), EvalError> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.limits.max_steps {
            return Err(EvalError::LimitExceeded(format!(
                "more than {} evaluation steps",
                self.limits.max_steps
            )));
        }
        Ok(())
    }

    /// Fails with a limit error when a string would exceed [`MAX_STRING_LEN`].
    pub fn check_string_len(&self, len: usize) -> Result<(), EvalError> {
        if len > MAX_STRING_LEN {
            return Err(EvalError::LimitExceeded(format!(
                "string longer than {MAX_STRING_LEN} bytes"
            )));
        }
        Ok(())
    }

    /// Counts one unit of work against the step budget.
    pub fn step(&mut self) -> Result<(), EvalError> {
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(EvalError::LimitExceeded(format!(
                "more than {} evaluation steps",
                self.limits.max_steps
            )));
        }
        Ok(())
    }

    pub fn check_list_len(&self, len: usize) -> Result<(), EvalError> {
        if len > self.limits.max_list_len {
            return Err(EvalError::LimitExceeded(format!(
                "list longer than {} items",
                self.limits.max_list_len
            )));
        }
        Ok(())
    }

    /// The current local bindings, for closures built by a host (DMN boxed functions).
    pub fn capture_frames(&self) -> Vec<Frame> {
        self.frames.clone()
    }

    pub fn push_frame(&mut self, f: Frame) {
        self.frames.push(f);
    }

    pub fn frames_len(&self) -> usize {
        self.frames.len()
    }

    pub fn truncate_frames(&mut self, len: usize) {
        self.frames.truncate(len);
    }

    /// Runs `f` with extra bindings that are removed afterwards.
    pub fn with_frames<T>(
        &mut self,
        frames: impl IntoIterator<Item = Frame>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let base = self.frames.len();
        self.frames.extend(frames);
        let r = f(self);
        self.frames.truncate(base);
        r
    }

    /// Looks a name up in local bindings only.
    fn lookup_local(&self, name: &str) -> Option<Value> {
        for f in self.frames.iter().rev() {
            match f {
                Frame::Var(n, v) if &**n == name => return Some(v.clone()),
                Frame::Context(c) => {
                    if let Some(v) = c.get(name) {
                        return Some(v.clone());
                    }
                }
                _ => {}
            }
        }
        None
    }

    pub fn lookup(&self, name: &str) -> Option<Value> {
        self.lookup_local(name).or_else(|| self.variables.get(name))
    }

    fn input(&self) -> Value {
        for f in self.frames.iter().rev() {
            if let Frame::Input(v) = f {
                return v.clone();
            }
        }
        Value::Null
    }

    pub fn eval(&mut self, node: &Node) -> R {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            self.depth -= 1;
            return Err(self.too_deep());
        }
        let r = self.eval_kind(node);
        self.depth -= 1;
        r
    }

    /// Kept out of `eval` so its formatting machinery does not sit in every recursion's
    /// stack frame.
    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> EvalError {
        EvalError::LimitExceeded(format!(
            "nesting deeper than {} levels",
            self.limits.max_depth
        ))
    }

    /// Dispatches on the node kind. Every arm that needs locals lives in its own method:
    /// this function is on the stack once per nesting level, and a fat frame here (debug
    /// builds give every local of every arm its own slot) would multiply by the depth.
    fn eval_kind(&mut self, node: &Node) -> R {
        match &node.kind {
            Kind::Literal(v) => Ok(v.clone()),
            Kind::Var(name) => Ok(self.eval_var(name)),
            Kind::Input => Ok(self.input()),
            Kind::Path(target, name) => self.eval_path(node, target, name),
            Kind::Filter(target, cond) => self.eval_filter(target, cond),
            Kind::Call(callee, args) => self.call_node(callee, args),
            Kind::CallBuiltin(b, name, args) => self.call_builtin_node(b, name, args),
            Kind::Neg(inner) => self.eval_neg(inner),
            Kind::Arith(op, a, b) => self.eval_arith(*op, a, b),
            Kind::Compare(op, a, b) => self.eval_compare(*op, a, b),
            Kind::And(a, b) => self.eval_and(a, b),
            Kind::Or(a, b) => self.eval_or(a, b),
            Kind::Between(x, low, high) => self.eval_between(x, low, high),
            Kind::In(x, tests) => self.eval_in(x, tests),
            Kind::InstanceOf(x, ty) => self.eval_instance_of(x, ty),
            Kind::If(c, t, e) => self.eval_if(c, t, e),
            Kind::For {
                iterations,
                body,
                uses_partial,
            } => self.for_loop(iterations, body, *uses_partial),
            Kind::Quantified(q, iterations, body) => self.quantified(*q, iterations, body),
            Kind::List(items) => self.eval_list(items),
            Kind::Context(entries) => self.eval_context(entries),
            Kind::Range {
                start,
                start_closed,
                end,
                end_closed,
            } => self.eval_range(start.as_deref(), *start_closed, end.as_deref(), *end_closed),
            Kind::UnaryRange(op, endpoint) => self.eval_unary_range(*op, endpoint),
            Kind::Function(def) => Ok(self.closure(def)),
        }
    }

    fn closure(&self, def: &Arc<crate::ast::FunctionDef>) -> Value {
        Value::Function(Arc::new(Function::User {
            def: def.clone(),
            captured: Arc::new(self.frames.clone()),
        }))
    }

    fn eval_var(&mut self, name: &Name) -> Value {
        match self.lookup(name) {
            Some(v) => v,
            // A built-in function named as a value (`sort(xs, precedes)`, `fn(abs)`).
            None if crate::builtins::lookup(name).is_some() => builtin_function(name)
                .map(Value::Function)
                .unwrap_or_default(),
            None => {
                self.warn(WarningKind::NoVariableFound, || {
                    format!("No variable found with name '{name}'")
                });
                Value::Null
            }
        }
    }

    fn eval_path(&mut self, node: &Node, target: &Node, name: &Name) -> R {
        let before = self.warnings.len();
        let v = self.eval(target)?;
        if v.is_null()
            && let Some(full) = dotted_name(node)
            && let Some(found) = self.lookup(&full)
        {
            // A name with dots (`Person.Gender`, a DMN parameter) rather than a path:
            // only tried when the path's start does not exist.
            self.warnings.truncate(before);
            return Ok(found);
        }
        Ok(self.path(&v, name))
    }

    fn eval_filter(&mut self, target: &Node, cond: &Node) -> R {
        let v = self.eval(target)?;
        self.filter(v, cond)
    }

    fn eval_neg(&mut self, inner: &Node) -> R {
        let v = self.eval(inner)?;
        Ok(match arith::neg(&v) {
            Some(r) => r,
            None => {
                if !v.is_null() {
                    self.warn(WarningKind::InvalidType, || {
                        format!("Can't negate '{v}' of type {}", v.type_name())
                    });
                }
                Value::Null
            }
        })
    }

    fn eval_arith(&mut self, op: ArithOp, a: &Node, b: &Node) -> R {
        let x = self.eval(a)?;
        let y = self.eval(b)?;
        Ok(self.arith(op, &x, &y))
    }

    fn eval_compare(&mut self, op: CmpOp, a: &Node, b: &Node) -> R {
        let x = self.eval(a)?;
        let y = self.eval(b)?;
        Ok(self.compare_values(op, &x, &y))
    }

    fn eval_and(&mut self, a: &Node, b: &Node) -> R {
        let x = self.eval(a)?;
        if x.as_bool() == Some(false) {
            return Ok(Value::Bool(false));
        }
        let y = self.eval(b)?;
        Ok(match (x.as_bool(), y.as_bool()) {
            (_, Some(false)) => Value::Bool(false),
            (Some(true), Some(true)) => Value::Bool(true),
            _ => Value::Null,
        })
    }

    fn eval_or(&mut self, a: &Node, b: &Node) -> R {
        let x = self.eval(a)?;
        if x.as_bool() == Some(true) {
            return Ok(Value::Bool(true));
        }
        let y = self.eval(b)?;
        Ok(match (x.as_bool(), y.as_bool()) {
            (_, Some(true)) => Value::Bool(true),
            (Some(false), Some(false)) => Value::Bool(false),
            _ => Value::Null,
        })
    }

    fn eval_between(&mut self, x: &Node, low: &Node, high: &Node) -> R {
        let v = self.eval(x)?;
        let lo = self.eval(low)?;
        let hi = self.eval(high)?;
        let a = self.compare_values(CmpOp::Ge, &v, &lo);
        let b = self.compare_values(CmpOp::Le, &v, &hi);
        Ok(match (a.as_bool(), b.as_bool()) {
            (Some(false), _) | (_, Some(false)) => Value::Bool(false),
            (Some(true), Some(true)) => Value::Bool(true),
            _ => Value::Null,
        })
    }

    fn eval_in(&mut self, x: &Node, tests: &[UnaryTest]) -> R {
        let v = self.eval(x)?;
        self.in_tests(&v, tests)
    }

    fn eval_instance_of(&mut self, x: &Node, ty: &crate::types::FeelType) -> R {
        let v = self.eval(x)?;
        Ok(Value::Bool(ty.is_instance(&v)))
    }

    fn eval_if(&mut self, c: &Node, t: &Node, e: &Node) -> R {
        let cond = self.eval(c)?;
        if cond.as_bool() == Some(true) {
            self.eval(t)
        } else {
            self.eval(e)
        }
    }

    fn eval_list(&mut self, items: &[Node]) -> R {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            out.push(self.eval(item)?);
        }
        Ok(Value::list(out))
    }

    fn eval_context(&mut self, entries: &[(Name, Node)]) -> R {
        let base = self.frames.len();
        let mut ctx = Context::with_capacity(entries.len());
        let mut result = Ok(());
        for (key, expr) in entries {
            match self.eval(expr) {
                Ok(v) => {
                    // Later entries see earlier ones.
                    self.frames.push(Frame::Var(key.clone(), v.clone()));
                    ctx.push_unchecked(key.clone(), v);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.frames.truncate(base);
        result.map(|_| Value::context(ctx))
    }

    fn eval_range(&mut self, start: Option<&Node>, sc: bool, end: Option<&Node>, ec: bool) -> R {
        let s = match start {
            Some(s) => Some(self.eval(s)?),
            None => None,
        };
        let e = match end {
            Some(e) => Some(self.eval(e)?),
            None => None,
        };
        Ok(self.make_range(s, sc, e, ec))
    }

    fn eval_unary_range(&mut self, op: CmpOp, endpoint: &Node) -> R {
        let v = self.eval(endpoint)?;
        Ok(unary_range(op, v))
    }

    fn make_range(&mut self, s: Option<Value>, sc: bool, e: Option<Value>, ec: bool) -> Value {
        // Both ends must be of one comparable type (or null for an open end, DMN 1.4+).
        if let (Some(a), Some(b)) = (&s, &e)
            && !a.is_null()
            && !b.is_null()
            && compare::compare(a, b).is_none()
        {
            self.warn(WarningKind::InvalidType, || {
                format!("Range endpoints '{a}' and '{b}' are not comparable")
            });
            return Value::Null;
        }
        // A literal `null` end is kept (DMN 1.5: `(null..10)` is not `< 10`, and testing
        // membership against it is null).
        let bound = |v: Option<Value>, closed: bool| match v {
            None => Bound::Unbounded,
            Some(v) if closed => Bound::Closed(v),
            Some(v) => Bound::Open(v),
        };
        Value::Range(Arc::new(Range::interval(bound(s, sc), bound(e, ec))))
    }

    pub fn path(&mut self, v: &Value, name: &Name) -> Value {
        self.path_at(v, name, 0)
    }

    fn path_at(&mut self, v: &Value, name: &Name, depth: usize) -> Value {
        match v {
            Value::Context(c) => match c.get(name) {
                Some(x) => x.clone(),
                None => {
                    self.warn(WarningKind::NoContextEntryFound, || {
                        format!("No context entry found with key '{name}'")
                    });
                    Value::Null
                }
            },
            Value::List(_) if depth >= MAX_PATH_DEPTH => Value::Null,
            Value::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    out.push(self.path_at(item, name, depth + 1));
                }
                Value::list(out)
            }
            Value::Null => Value::Null,
            other => match properties::property(other, name) {
                Some(p) => p,
                None => {
                    self.warn(WarningKind::NoPropertyFound, || {
                        format!("No property found with name '{name}' of value '{other}'")
                    });
                    Value::Null
                }
            },
        }
    }

    fn filter(&mut self, v: Value, cond: &Node) -> R {
        let items: Arc<List> = match v {
            Value::List(l) => l,
            Value::Null => return Ok(Value::Null),
            // A filter on a single value treats it as a one-item list.
            other => Arc::new(List(vec![other])),
        };
        if items.is_empty() {
            // Nothing to bind `item` to; a numeric index into nothing is null.
            let before = self.warnings.len();
            let probe = self.eval(cond);
            self.warnings.truncate(before);
            return Ok(match probe {
                Ok(Value::Number(_)) => Value::Null,
                _ => Value::list(Vec::new()),
            });
        }
        let mut out = Vec::new();
        let item_name = item_name();
        for (i, item) in items.iter().enumerate() {
            self.step()?;
            let base = self.frames.len();
            self.frames
                .push(Frame::Var(item_name.clone(), item.clone()));
            if let Value::Context(c) = item {
                self.frames.push(Frame::Context(c.clone()));
            }
            let r = self.eval(cond);
            self.frames.truncate(base);
            match r? {
                Value::Bool(true) => out.push(item.clone()),
                Value::Number(n) if i == 0 => return Ok(index_list(&items, n)),
                _ => {}
            }
        }
        Ok(Value::list(out))
    }

    pub fn arith(&mut self, op: ArithOp, x: &Value, y: &Value) -> Value {
        if let (ArithOp::Add, Value::String(a), Value::String(b)) = (op, x, y)
            && a.len() + b.len() > MAX_STRING_LEN
        {
            self.warn(WarningKind::InvalidType, || {
                format!("Can't build a string longer than {MAX_STRING_LEN} bytes")
            });
            return Value::Null;
        }
        let r = match op {
            ArithOp::Add => arith::add(x, y),
            ArithOp::Sub => arith::sub(x, y),
            ArithOp::Mul => arith::mul(x, y),
            ArithOp::Div => arith::div(x, y),
            ArithOp::Pow => arith::pow(x, y),
        };
        match r {
            Some(v) => v,
            None => {
                if !x.is_null() && !y.is_null() {
                    self.warn(WarningKind::InvalidType, || {
                        let sym = match op {
                            ArithOp::Add => "+",
                            ArithOp::Sub => "-",
                            ArithOp::Mul => "*",
                            ArithOp::Div => "/",
                            ArithOp::Pow => "**",
                        };
                        format!(
                            "Can't evaluate '{x}' {sym} '{y}' ({} {sym} {})",
                            x.type_name(),
                            y.type_name()
                        )
                    });
                }
                Value::Null
            }
        }
    }

    pub fn compare_values(&mut self, op: CmpOp, x: &Value, y: &Value) -> Value {
        let r = match op {
            CmpOp::Eq => compare::equals(x, y),
            CmpOp::Ne => compare::equals(x, y).map(|b| !b),
            _ => compare::compare(x, y).map(|o| match op {
                CmpOp::Lt => o == Ordering::Less,
                CmpOp::Le => o != Ordering::Greater,
                CmpOp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }),
        };
        match r {
            Some(b) => Value::Bool(b),
            None => {
                if !x.is_null() && !y.is_null() {
                    self.warn(WarningKind::NotComparable, || {
                        format!(
                            "Can't compare '{x}' ({}) with '{y}' ({})",
                            x.type_name(),
                            y.type_name()
                        )
                    });
                }
                Value::Null
            }
        }
    }

    fn in_tests(&mut self, v: &Value, tests: &[UnaryTest]) -> R {
        let mut any_null = false;
        for t in tests {
            match self.test_matches(v, t)? {
                Some(true) => return Ok(Value::Bool(true)),
                Some(false) => {}
                None => any_null = true,
            }
        }
        Ok(if any_null && tests.len() == 1 {
            Value::Null
        } else {
            Value::Bool(false)
        })
    }

    /// Whether `input` satisfies one unary test; `None` when undecidable (incomparable
    /// types).
    pub fn test_matches(
        &mut self,
        input: &Value,
        test: &UnaryTest,
    ) -> Result<Option<bool>, EvalError> {
        match test {
            UnaryTest::Any => Ok(Some(true)),
            UnaryTest::Not(inner) => {
                let mut undecided = false;
                for t in inner {
                    match self.test_matches(input, t)? {
                        Some(true) => return Ok(Some(false)),
                        Some(false) => {}
                        None => undecided = true,
                    }
                }
                Ok(if undecided { None } else { Some(true) })
            }
            UnaryTest::Compare(op, node) => {
                let v = self.with_frames([Frame::Input(input.clone())], |ev| ev.eval(node))?;
                Ok(self.compare_values(*op, input, &v).as_bool())
            }
            UnaryTest::Expr { node, uses_input } => {
                let v = self.with_frames([Frame::Input(input.clone())], |ev| ev.eval(node))?;
                if *uses_input {
                    return Ok(v.as_bool());
                }
                Ok(match &v {
                    Value::Range(r) => compare::in_range(input, r),
                    Value::List(items) => {
                        if items.iter().any(|i| match i {
                            Value::Range(r) => compare::in_range(input, r) == Some(true),
                            other => compare::equals(input, other) == Some(true),
                        }) {
                            Some(true)
                        } else if let Value::List(_) = input {
                            compare::equals(input, &v)
                        } else {
                            Some(false)
                        }
                    }
                    Value::Bool(b) if !matches!(input, Value::Bool(_)) => Some(*b),
                    Value::Function(f) => {
                        let f = f.clone();
                        self.invoke(&f, vec![input.clone()])?.as_bool()
                    }
                    _ => compare::equals(input, &v),
                })
            }
        }
    }

    /// The values an iteration runs over; `None` when the source cannot be iterated
    /// (the whole `for`/`some`/`every` is then null).
    fn iteration_values(&mut self, it: &Iteration) -> Result<Option<Vec<Value>>, EvalError> {
        let source = self.eval(&it.source)?;
        if let Some(end) = &it.range_end {
            let end = self.eval(end)?;
            return self.step_range(&source, &end, true);
        }
        Ok(Some(match source {
            Value::List(l) => l.to_vec(),
            Value::Range(r) => return self.range_items(&r),
            Value::Null => Vec::new(),
            other => vec![other],
        }))
    }

    /// `a..b` in an iteration: integers or dates (by day), in either direction when
    /// `any_direction`.
    fn step_range(
        &mut self,
        from: &Value,
        to: &Value,
        any_direction: bool,
    ) -> Result<Option<Vec<Value>>, EvalError> {
        let (a, b, dates) = match (from, to) {
            (Value::Number(x), Value::Number(y)) => match (x.to_i64(), y.to_i64()) {
                (Some(a), Some(b)) => (a, b, false),
                _ => return Ok(self.not_iterable(from, to)),
            },
            (Value::Date(x), Value::Date(y)) => (x.epoch_days(), y.epoch_days(), true),
            _ => return Ok(self.not_iterable(from, to)),
        };
        if a > b && !any_direction {
            return Ok(self.not_iterable(from, to));
        }
        let len = a.abs_diff(b).saturating_add(1);
        self.check_list_len(usize::try_from(len).unwrap_or(usize::MAX))?;
        let item = |i: i64| {
            if dates {
                crate::temporal::Date::from_epoch_days(i)
                    .map(Value::Date)
                    .unwrap_or_default()
            } else {
                Value::number(i)
            }
        };
        Ok(Some(if a <= b {
            (a..=b).map(item).collect()
        } else {
            (b..=a).rev().map(item).collect()
        }))
    }

    fn not_iterable(&mut self, from: &Value, to: &Value) -> Option<Vec<Value>> {
        self.warn(WarningKind::InvalidType, || {
            format!("Can't iterate over '{from}..{to}': expected integers or dates in order")
        });
        None
    }

    /// Iterating a range value: integer or date bounds, ascending.
    fn range_items(&mut self, r: &Range) -> Result<Option<Vec<Value>>, EvalError> {
        let (Some(s), Some(e)) = (r.start.value(), r.end.value()) else {
            return Ok(self.not_iterable(&Value::Null, &Value::Null));
        };
        let step = |v: &Value, d: i64| match v {
            Value::Number(n) => n
                .checked_add(crate::number::Number::from_i64(d))
                .map(Value::Number),
            Value::Date(x) => x.plus_days(d).map(Value::Date),
            _ => None,
        };
        let s = if r.start.is_closed() {
            Some(s.clone())
        } else {
            step(s, 1)
        };
        let e = if r.end.is_closed() {
            Some(e.clone())
        } else {
            step(e, -1)
        };
        match (s, e) {
            (Some(s), Some(e)) => {
                if compare::compare(&s, &e) == Some(Ordering::Greater) {
                    // An empty open range like `(1..2)` has nothing to iterate.
                    if !r.start.is_closed() || !r.end.is_closed() {
                        return Ok(Some(Vec::new()));
                    }
                }
                self.step_range(&s, &e, false)
            }
            _ => Ok(None),
        }
    }

    fn for_loop(&mut self, iterations: &[Iteration], body: &Node, uses_partial: bool) -> R {
        let base = self.frames.len();
        let mut results = Vec::new();
        let r = self.for_level(iterations, body, uses_partial, &mut results);
        self.frames.truncate(base);
        match r {
            Ok(()) => Ok(Value::list(results)),
            Err(EvalError::Failure(m)) if m == NOT_ITERABLE => Ok(Value::Null),
            Err(e) => Err(e),
        }
    }

    fn for_level(
        &mut self,
        iterations: &[Iteration],
        body: &Node,
        uses_partial: bool,
        results: &mut Vec<Value>,
    ) -> Result<(), EvalError> {
        let Some((first, rest)) = iterations.split_first() else {
            self.step()?;
            let v = if uses_partial {
                // Each iteration copies the results so far.
                self.charge(results.len() as u64)?;
                let partial = Value::list(results.clone());
                self.with_frames([Frame::Var(Name::from("partial"), partial)], |ev| {
                    ev.eval(body)
                })?
            } else {
                self.eval(body)?
            };
            results.push(v);
            return self.check_list_len(results.len());
        };
        // Later iteration sources may refer to earlier variables, so each level evaluates
        // its source with the outer bindings in place.
        let Some(values) = self.iteration_values(first)? else {
            return Err(EvalError::Failure(NOT_ITERABLE.into()));
        };
        for v in values {
            let base = self.frames.len();
            self.frames.push(Frame::Var(first.name.clone(), v));
            let r = self.for_level(rest, body, uses_partial, results);
            self.frames.truncate(base);
            r?;
        }
        Ok(())
    }

    fn quantified(&mut self, q: Quantifier, iterations: &[Iteration], body: &Node) -> R {
        let base = self.frames.len();
        let mut outcomes = Vec::new();
        let r = self.quantified_level(iterations, body, &mut outcomes);
        self.frames.truncate(base);
        match r {
            Ok(()) => {}
            Err(EvalError::Failure(m)) if m == NOT_ITERABLE => return Ok(Value::Null),
            Err(e) => return Err(e),
        }
        Ok(Value::Bool(match q {
            Quantifier::Some => outcomes.contains(&Some(true)),
            Quantifier::Every => outcomes.iter().all(|b| *b == Some(true)),
        }))
    }

    fn quantified_level(
        &mut self,
        iterations: &[Iteration],
        body: &Node,
        outcomes: &mut Vec<Option<bool>>,
    ) -> Result<(), EvalError> {
        let Some((first, rest)) = iterations.split_first() else {
            self.step()?;
            let v = self.eval(body)?;
            outcomes.push(v.as_bool());
            return Ok(());
        };
        let Some(values) = self.iteration_values(first)? else {
            return Err(EvalError::Failure(NOT_ITERABLE.into()));
        };
        for v in values {
            let base = self.frames.len();
            self.frames.push(Frame::Var(first.name.clone(), v));
            let r = self.quantified_level(rest, body, outcomes);
            self.frames.truncate(base);
            r?;
        }
        Ok(())
    }
}

/// A built-in function as a value (for hosts that call built-ins, e.g. DMN aggregations).
pub fn builtin_function(name: &str) -> Option<Arc<Function>> {
    crate::builtins::lookup(name).map(|b| Arc::new(Function::Builtin(b)))
}

/// Bindings for one filter item: `item`, plus the item's entries if it is a context.
pub fn item_frames(item: &Value) -> Vec<Frame> {
    let mut frames = vec![Frame::Var(item_name(), item.clone())];
    if let Value::Context(c) = item {
        frames.push(Frame::Context(c.clone()));
    }
    frames
}

/// The shared name `item`, so filters do not allocate it per element.
fn item_name() -> Name {
    static ITEM: std::sync::OnceLock<Name> = std::sync::OnceLock::new();
    ITEM.get_or_init(|| Name::from("item")).clone()
}

/// `a.b.c` as one name, when the path consists of names only.
fn dotted_name(node: &Node) -> Option<String> {
    match &node.kind {
        Kind::Var(n) => Some(n.to_string()),
        Kind::Path(t, n) => {
            let mut s = dotted_name(t)?;
            s.push('.');
            s.push_str(n);
            Some(s)
        }
        _ => None,
    }
}

/// `list[n]`: 1-based, negative counts from the end; out of range is null.
fn index_list(items: &[Value], n: Number) -> Value {
    let Some(i) = n.trunc_i64() else {
        return Value::Null;
    };
    let len = items.len() as i64;
    let idx = if i > 0 {
        i - 1
    } else if i < 0 {
        len + i
    } else {
        return Value::Null;
    };
    if (0..len).contains(&idx) {
        items[idx as usize].clone()
    } else {
        Value::Null
    }
}

/// `< x` and friends as a range value with one open side.
pub fn unary_range(op: CmpOp, v: Value) -> Value {
    let (start, end) = match op {
        CmpOp::Lt => (Bound::Unbounded, Bound::Open(v)),
        CmpOp::Le => (Bound::Unbounded, Bound::Closed(v)),
        CmpOp::Gt => (Bound::Open(v), Bound::Unbounded),
        CmpOp::Ge => (Bound::Closed(v), Bound::Unbounded),
        CmpOp::Eq | CmpOp::Ne => (Bound::Closed(v.clone()), Bound::Closed(v)),
    };
    Value::Range(Arc::new(Range {
        start,
        end,
        unary: Some(op),
    }))
}

/// Matches unary tests that cannot refer to variables or `?` beyond the input, without a
/// caller context (item definitions' allowed values in `instance of`).
pub fn unary_tests_match_static(tests: &crate::UnaryTests, v: &Value) -> bool {
    let ctx = EvalContext::new(&());
    tests.matches(v, &ctx).unwrap_or(false)
}
