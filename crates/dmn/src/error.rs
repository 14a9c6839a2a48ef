//! Errors of reading a DMN file and of evaluating a decision.

use std::fmt;

/// A place in the DMN file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl Location {
    pub fn of(src: &str, offset: usize) -> Location {
        let p = beeline_feel::Position::of(src, offset);
        Location {
            line: p.line,
            column: p.column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Why a DMN file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DmnError {
    #[error("invalid XML at {location}: {message}")]
    Xml { message: String, location: Location },
    #[error("invalid DMN at {location}: {message}")]
    Model { message: String, location: Location },
    /// A FEEL expression that does not parse, with the element it belongs to.
    #[error("{}", feel_message(element_id, expression, message, line, column))]
    Expression {
        element_id: String,
        expression: String,
        message: String,
        /// Line and column inside the expression text.
        line: usize,
        column: usize,
    },
}

fn feel_message(id: &str, expr: &str, msg: &str, line: &usize, column: &usize) -> String {
    format!(
        "failed to parse expression '{expr}' of element '{id}': {msg} at line {line}, column {column}"
    )
}
