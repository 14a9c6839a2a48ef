//! FEEL, the expression language of BPMN and DMN in Camunda 8, with feel-scala's semantics
//! and built-in functions.
//!
//! Compile once, evaluate many times:
//!
//! ```
//! use beeline_feel::{EvalContext, Expression, Value};
//! use std::collections::HashMap;
//!
//! let expr = Expression::parse(r#"amount > 1000 and region = "EU""#).unwrap();
//! let names: Vec<&str> = expr.variables().iter().map(|n| &**n).collect();
//! assert_eq!(names, ["amount", "region"]);
//!
//! let mut vars = HashMap::new();
//! vars.insert("amount".to_string(), Value::number(1500));
//! vars.insert("region".to_string(), Value::string("EU"));
//! let result = expr.evaluate(&EvalContext::new(&vars)).unwrap();
//! assert_eq!(result.as_bool(), Some(true));
//! ```
//!
//! Missing variables are `null`, and so is any operation FEEL does not define (as in
//! Zeebe); [`Expression::evaluate_with_warnings`] says why a result is null. Evaluation
//! never reads the wall clock: `now()` and `today()` use the [`Clock`] in the context.

pub mod ast;
mod builtins;
mod error;
pub mod eval;
mod json;
mod lexer;
pub mod number;
mod parser;
pub mod temporal;
pub mod types;
mod value;

use std::sync::Arc;

pub use error::{EvalError, ParseError, Position, Warning, WarningKind};
pub use eval::MAX_STRING_LEN;
pub use eval::{Clock, EvalContext, Evaluator, Frame, Limits, Variables};
pub use json::MAX_JSON_NODES;
pub use number::Number;
pub use parser::{MAX_DEPTH, ParseOptions};
pub use types::FeelType;
pub use value::{
    Bound, Context, Function, List, MAX_DISPLAY_LEN, Name, NativeFunction, Range, Value,
};

use ast::{Kind, Node, UnaryTest};

/// A compiled FEEL expression.
#[derive(Clone, Debug)]
pub struct Expression {
    source: Arc<str>,
    root: Node,
    variables: Vec<Name>,
}

/// A value together with the reasons parts of it became null.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub value: Value,
    pub warnings: Vec<Warning>,
}

impl FeelType {
    /// Parses a type as written in a DMN `typeRef` or after `instance of`.
    pub fn parse(source: &str, options: &ParseOptions) -> Result<FeelType, ParseError> {
        parser::parse_type(source, options)
    }
}

/// Calls one of the few JDK static methods FEEL's `external` functions may name (see
/// `builtins::external`); `None` when unsupported.
pub fn call_java_static(class: &str, method_signature: &str, args: &[Value]) -> Option<Value> {
    builtins::external::call_java(class, method_signature, args)
}

impl Expression {
    /// Parses and checks an expression. The error carries a message and the position.
    pub fn parse(source: &str) -> Result<Expression, ParseError> {
        Expression::parse_with(source, &ParseOptions::default())
    }

    /// Parses with knowledge of the surrounding model (names with spaces or symbols, named
    /// types).
    pub fn parse_with(source: &str, options: &ParseOptions) -> Result<Expression, ParseError> {
        let root = parser::parse_expression(source, options)?;
        let variables = free_variables(std::slice::from_ref(&root));
        Ok(Expression {
            source: Arc::from(source),
            root,
            variables,
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variables the expression reads from its context (root names of paths; names
    /// bound inside the expression excluded). The engine fetches only these.
    pub fn variables(&self) -> &[Name] {
        &self.variables
    }

    pub fn root(&self) -> &Node {
        &self.root
    }

    pub fn evaluate(&self, ctx: &EvalContext<'_>) -> Result<Value, EvalError> {
        let mut ev = Evaluator::new(ctx);
        ev.eval(&self.root)
    }

    pub fn evaluate_with_warnings(&self, ctx: &EvalContext<'_>) -> Result<Evaluation, EvalError> {
        let mut ev = Evaluator::new(ctx);
        let value = ev.eval(&self.root)?;
        Ok(Evaluation {
            value,
            warnings: ev.take_warnings(),
        })
    }

    /// The incident message for a failed evaluation, in Zeebe's words:
    /// `failed to evaluate expression '<source>': <reason>`.
    pub fn failure_message(&self, error: &EvalError) -> String {
        format!("failed to evaluate expression '{}': {error}", self.source)
    }

    /// Evaluates inside an evaluator that already has bindings (DMN boxed expressions).
    pub fn evaluate_in(&self, ev: &mut Evaluator<'_>) -> Result<Value, EvalError> {
        ev.eval(&self.root)
    }
}

/// Compiled unary tests: a DMN input entry (`< 10`, `[1..5]`, `"a", "b"`, `not(3)`, `-`,
/// or any expression, with `?` for the input value).
#[derive(Clone, Debug)]
pub struct UnaryTests {
    source: Arc<str>,
    tests: Vec<UnaryTest>,
    variables: Vec<Name>,
}

impl UnaryTests {
    pub fn parse(source: &str) -> Result<UnaryTests, ParseError> {
        UnaryTests::parse_with(source, &ParseOptions::default())
    }

    pub fn parse_with(source: &str, options: &ParseOptions) -> Result<UnaryTests, ParseError> {
        let tests = parser::parse_unary_tests(source, options)?;
        let mut nodes = Vec::new();
        ast::collect_test_nodes(&tests, &mut nodes);
        let owned: Vec<Node> = nodes.into_iter().cloned().collect();
        let variables = free_variables(&owned);
        Ok(UnaryTests {
            source: Arc::from(source),
            tests,
            variables,
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn variables(&self) -> &[Name] {
        &self.variables
    }

    /// Whether the input satisfies the tests. Undecidable tests (incomparable types) do
    /// not match.
    pub fn matches(&self, input: &Value, ctx: &EvalContext<'_>) -> Result<bool, EvalError> {
        let mut ev = Evaluator::new(ctx);
        self.matches_in(input, &mut ev)
    }

    pub fn matches_in(&self, input: &Value, ev: &mut Evaluator<'_>) -> Result<bool, EvalError> {
        for t in &self.tests {
            if ev.test_matches(input, t)? == Some(true) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The values of tests that are plain literals (`"high", "low"`), in order; DMN output
    /// values give priorities this way.
    pub fn literal_values(&self) -> Vec<Value> {
        let ctx = EvalContext::new(&());
        let mut ev = Evaluator::new(&ctx);
        self.tests
            .iter()
            .filter_map(|t| match t {
                UnaryTest::Expr {
                    node,
                    uses_input: false,
                } => ev.eval(node).ok(),
                _ => None,
            })
            .filter(|v| !v.is_null())
            .collect()
    }

    /// `-`: matches anything.
    pub fn is_any(&self) -> bool {
        matches!(self.tests.as_slice(), [UnaryTest::Any])
    }
}

/// Two test lists are the same when written the same (used when comparing types).
impl PartialEq for UnaryTests {
    fn eq(&self, other: &UnaryTests) -> bool {
        self.source == other.source
    }
}

/// Root names of variables read by these nodes and not bound within them.
fn free_variables(roots: &[Node]) -> Vec<Name> {
    fn walk(n: &Node, bound: &mut Vec<Name>, out: &mut Vec<Name>) {
        match &n.kind {
            Kind::Var(name) => {
                if !bound.contains(name) && !out.contains(name) {
                    out.push(name.clone());
                }
            }
            Kind::CallBuiltin(_, _, args) => match args {
                ast::Args::Positional(a) => a.iter().for_each(|x| walk(x, bound, out)),
                ast::Args::Named(a) => a.iter().for_each(|(_, x)| walk(x, bound, out)),
            },
            Kind::Call(callee, args) => {
                // A call by name reads a variable only if it is not a built-in.
                match &callee.kind {
                    Kind::Var(name) if builtins::lookup(name).is_some() => {}
                    _ => walk(callee, bound, out),
                }
                match args {
                    ast::Args::Positional(a) => a.iter().for_each(|x| walk(x, bound, out)),
                    ast::Args::Named(a) => a.iter().for_each(|(_, x)| walk(x, bound, out)),
                }
            }
            Kind::For {
                iterations, body, ..
            }
            | Kind::Quantified(_, iterations, body) => {
                let base = bound.len();
                for it in iterations {
                    walk(&it.source, bound, out);
                    if let Some(e) = &it.range_end {
                        walk(e, bound, out);
                    }
                    bound.push(it.name.clone());
                }
                bound.push(Name::from("partial"));
                walk(body, bound, out);
                bound.truncate(base);
            }
            Kind::Context(entries) => {
                let base = bound.len();
                for (k, v) in entries {
                    walk(v, bound, out);
                    bound.push(k.clone());
                }
                bound.truncate(base);
            }
            Kind::Filter(target, cond) => {
                walk(target, bound, out);
                // Inside a filter, names may be entries of the items; those that are not
                // `item` may still be variables, so they stay in the list.
                let base = bound.len();
                bound.push(Name::from("item"));
                walk(cond, bound, out);
                bound.truncate(base);
            }
            Kind::Function(def) => {
                let base = bound.len();
                bound.extend(def.params.iter().map(|p| p.name.clone()));
                walk(&def.body, bound, out);
                bound.truncate(base);
            }
            _ => {
                for c in n.children() {
                    walk(c, bound, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut bound = Vec::new();
    for r in roots {
        walk(r, &mut bound, &mut out);
    }
    out
}

/// Names of all built-in functions.
pub fn builtin_function_names() -> Vec<&'static str> {
    builtins::names()
}
