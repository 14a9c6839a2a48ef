//! Errors of parsing and evaluation, and the non-fatal warnings evaluation collects.

use std::fmt;

/// Where in the expression text something happened. `line` and `column` count from 1;
/// `column` counts characters, `offset` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Position {
    pub fn of(src: &str, offset: usize) -> Position {
        let offset = offset.min(src.len());
        let mut at = offset;
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        let before = &src[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Position {
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A syntax error: what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at {position}")]
pub struct ParseError {
    pub message: String,
    pub position: Position,
}

impl ParseError {
    pub fn new(src: &str, offset: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
            position: Position::of(src, offset),
        }
    }
}

/// A failure that stops evaluation. Most problems in FEEL are not failures: they make the
/// (sub-)expression `null` and are reported as [`Warning`]s, as feel-scala does. Only these
/// cases fail.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// `assert(value, condition, cause)` did not hold.
    #[error("Assertion failure on evaluate the expression: {0}")]
    Assertion(String),
    /// A host function (a DMN decision table inside a business knowledge model, ...) failed
    /// in a way that fails the whole evaluation.
    #[error("{0}")]
    Failure(String),
    /// A resource limit (nesting, list size, iterations) was exceeded.
    #[error("evaluation exceeded a limit: {0}")]
    LimitExceeded(String),
}

/// What kind of problem turned a value into null. Names follow feel-scala's
/// `EvaluationFailureType`, so incident messages read like Zeebe's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarningKind {
    NoVariableFound,
    NoContextEntryFound,
    NoFunctionFound,
    FunctionInvocationFailure,
    InvalidType,
    NotComparable,
    NoPropertyFound,
    Unknown,
}

impl WarningKind {
    pub fn code(self) -> &'static str {
        match self {
            WarningKind::NoVariableFound => "NO_VARIABLE_FOUND",
            WarningKind::NoContextEntryFound => "NO_CONTEXT_ENTRY_FOUND",
            WarningKind::NoFunctionFound => "NO_FUNCTION_FOUND",
            WarningKind::FunctionInvocationFailure => "FUNCTION_INVOCATION_FAILURE",
            WarningKind::InvalidType => "INVALID_TYPE",
            WarningKind::NotComparable => "NOT_COMPARABLE",
            WarningKind::NoPropertyFound => "NO_PROPERTY_FOUND",
            WarningKind::Unknown => "UNKNOWN",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub kind: WarningKind,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind.code(), self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_chars() {
        let p = Position::of("a\n é x", 5);
        assert_eq!((p.line, p.column), (2, 3));
        assert_eq!(Position::of("abc", 0).column, 1);
    }
}
