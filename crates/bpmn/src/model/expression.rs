//! Expressions as the model keeps them: FEEL source text, not compiled.
//!
//! Zeebe's rule: an attribute value that starts with `=` is a FEEL expression, anything
//! else is a static value. This crate does not depend on the FEEL implementation; it keeps
//! the source of every expression in a per-process table (indexed by [`ExpressionId`]), so
//! the engine's deployment step can compile all of them once, report errors with the
//! element id, and keep the compiled forms in a `Vec` indexed the same way.

use crate::xml::Position;
use std::fmt;

/// Index of an expression in [`crate::Process::expressions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExpressionId(pub u32);

impl ExpressionId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A FEEL expression in the model: its id in the process's expression table and its text
/// (without the leading `=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeelSource {
    pub id: ExpressionId,
    pub text: String,
}

/// A value that is either static or computed by a FEEL expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprOrStatic<T> {
    Static(T),
    Expression(FeelSource),
}

impl<T> ExprOrStatic<T> {
    pub fn as_static(&self) -> Option<&T> {
        match self {
            ExprOrStatic::Static(v) => Some(v),
            ExprOrStatic::Expression(_) => None,
        }
    }

    pub fn as_expression(&self) -> Option<&FeelSource> {
        match self {
            ExprOrStatic::Static(_) => None,
            ExprOrStatic::Expression(e) => Some(e),
        }
    }

    pub fn is_expression(&self) -> bool {
        matches!(self, ExprOrStatic::Expression(_))
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> ExprOrStatic<U> {
        match self {
            ExprOrStatic::Static(v) => ExprOrStatic::Static(f(v)),
            ExprOrStatic::Expression(e) => ExprOrStatic::Expression(e),
        }
    }
}

impl ExprOrStatic<String> {
    /// The attribute text as written (an expression with its leading `=`); Zeebe compares
    /// names (of messages, signals, links) by this text.
    pub fn raw(&self) -> String {
        match self {
            ExprOrStatic::Static(s) => s.clone(),
            ExprOrStatic::Expression(e) => format!("={}", e.text),
        }
    }
}

/// Where an expression came from, for error messages in the engine's deployment step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpressionOrigin {
    /// Id of the BPMN element the expression belongs to (for a message name: the message).
    pub element_id: String,
    /// The attribute, or for text content the XML element, holding it (`"correlationKey"`,
    /// `"conditionExpression"`, ...).
    pub attribute: &'static str,
    pub position: Position,
}

/// What the engine must check about an expression beyond that it compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpressionContext {
    /// Evaluated against the variables of an element instance.
    Variables,
    /// Must evaluate without any variables (a message or signal name of a process-level
    /// start event: the subscription is opened at deployment, before any instance exists).
    Constant,
}

/// One entry of a process's expression table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpressionEntry {
    pub id: ExpressionId,
    /// The FEEL source, without the leading `=`.
    pub text: String,
    pub origin: ExpressionOrigin,
    pub context: ExpressionContext,
}

impl fmt::Display for ExpressionEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{} ({}): ={}",
            self.origin.element_id, self.origin.attribute, self.origin.position, self.text
        )
    }
}
