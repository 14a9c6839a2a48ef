//! The compiled form of an expression: a tree the evaluator walks. Literals are already
//! values (numbers parsed, `@"..."` temporal literals resolved), so evaluation does no
//! text work.

use std::sync::Arc;

use crate::types::FeelType;
use crate::value::{Name, Value};

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    /// Byte span in the source text, for messages.
    pub start: u32,
    pub end: u32,
    /// Height of the subtree, bounded by the parser so evaluation cannot overflow the stack.
    pub height: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    Some,
    Every,
}

#[derive(Clone, Debug)]
pub struct Iteration {
    pub name: Name,
    pub source: Node,
    /// `for i in 1..10`: the upper end of an integer range.
    pub range_end: Option<Node>,
}

#[derive(Clone, Debug)]
pub enum Args {
    Positional(Vec<Node>),
    Named(Vec<(Name, Node)>),
}

impl Args {
    pub fn len(&self) -> usize {
        match self {
            Args::Positional(a) => a.len(),
            Args::Named(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Name,
    pub ty: Option<FeelType>,
}

#[derive(Clone, Debug)]
pub struct FunctionDef {
    pub params: Vec<Param>,
    pub body: Node,
    /// `function(...) external {...}`: the body is a context describing a Java or PMML
    /// function.
    pub external: bool,
}

/// One test of a unary-tests list (a DMN input entry or the right side of `in`).
#[derive(Clone, Debug)]
pub enum UnaryTest {
    /// An expression: the input matches if it equals the value, lies in the range, is an
    /// element of the list, or (when the expression uses `?`) the expression is true.
    Expr { node: Node, uses_input: bool },
    /// `< 10`, `>= x`, `= 5`, `!= "a"`: compares the input with the value.
    Compare(CmpOp, Node),
    /// `not(t1, t2)`: none of the tests matches.
    Not(Vec<UnaryTest>),
    /// `-`: anything matches.
    Any,
}

#[derive(Clone, Debug)]
pub enum Kind {
    Literal(Value),
    /// A variable (local binding first, then the caller's variables).
    Var(Name),
    /// `?`: the input value inside unary tests.
    Input,
    Path(Box<Node>, Name),
    Filter(Box<Node>, Box<Node>),
    Call(Box<Node>, Args),
    /// A call of a built-in function by name, resolved when parsing. A local function of
    /// the same name (a parameter, a context entry) still wins at evaluation.
    CallBuiltin(&'static crate::builtins::Builtin, Name, Args),
    Neg(Box<Node>),
    Arith(ArithOp, Box<Node>, Box<Node>),
    Compare(CmpOp, Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Between(Box<Node>, Box<Node>, Box<Node>),
    In(Box<Node>, Vec<UnaryTest>),
    InstanceOf(Box<Node>, FeelType),
    If(Box<Node>, Box<Node>, Box<Node>),
    For {
        iterations: Vec<Iteration>,
        body: Box<Node>,
        /// Whether the body refers to `partial` (the results so far), which costs a copy
        /// per iteration and so is only bound when used.
        uses_partial: bool,
    },
    Quantified(Quantifier, Vec<Iteration>, Box<Node>),
    List(Vec<Node>),
    Context(Vec<(Name, Node)>),
    /// `[a..b]`, `(a..b)`, `]a..b[`; an open end has `None`.
    Range {
        start: Option<Box<Node>>,
        start_closed: bool,
        end: Option<Box<Node>>,
        end_closed: bool,
    },
    /// `< 10` in expression position: a range with one open side (DMN 1.4+).
    UnaryRange(CmpOp, Box<Node>),
    Function(Arc<FunctionDef>),
}

impl Node {
    /// Child nodes, for static walks (variable extraction, checks).
    pub fn children(&self) -> Vec<&Node> {
        let mut out = Vec::new();
        match &self.kind {
            Kind::Literal(_) | Kind::Var(_) | Kind::Input => {}
            Kind::Path(a, _) | Kind::Neg(a) | Kind::InstanceOf(a, _) | Kind::UnaryRange(_, a) => {
                out.push(&**a)
            }
            Kind::Filter(a, b)
            | Kind::Arith(_, a, b)
            | Kind::Compare(_, a, b)
            | Kind::And(a, b)
            | Kind::Or(a, b) => {
                out.push(&**a);
                out.push(&**b);
            }
            Kind::Between(a, b, c) | Kind::If(a, b, c) => {
                out.push(&**a);
                out.push(&**b);
                out.push(&**c);
            }
            Kind::Call(f, args) => {
                out.push(&**f);
                match args {
                    Args::Positional(a) => out.extend(a.iter()),
                    Args::Named(a) => out.extend(a.iter().map(|(_, n)| n)),
                }
            }
            Kind::CallBuiltin(_, _, args) => match args {
                Args::Positional(a) => out.extend(a.iter()),
                Args::Named(a) => out.extend(a.iter().map(|(_, n)| n)),
            },
            Kind::In(a, tests) => {
                out.push(&**a);
                collect_test_nodes(tests, &mut out);
            }
            Kind::For {
                iterations, body, ..
            }
            | Kind::Quantified(_, iterations, body) => {
                for it in iterations {
                    out.push(&it.source);
                    if let Some(e) = &it.range_end {
                        out.push(e);
                    }
                }
                out.push(&**body);
            }
            Kind::List(items) => out.extend(items.iter()),
            Kind::Context(entries) => out.extend(entries.iter().map(|(_, n)| n)),
            Kind::Range { start, end, .. } => {
                if let Some(s) = start {
                    out.push(&**s);
                }
                if let Some(e) = end {
                    out.push(&**e);
                }
            }
            Kind::Function(def) => out.push(&def.body),
        }
        out
    }
}

pub fn collect_test_nodes<'a>(tests: &'a [UnaryTest], out: &mut Vec<&'a Node>) {
    for t in tests {
        match t {
            UnaryTest::Expr { node, .. } | UnaryTest::Compare(_, node) => out.push(node),
            UnaryTest::Not(inner) => collect_test_nodes(inner, out),
            UnaryTest::Any => {}
        }
    }
}
