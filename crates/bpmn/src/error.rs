//! Errors: malformed XML, or a list of validation errors in Zeebe's format.

use crate::xml::{Position, XmlError};
use std::fmt;

/// One problem with one element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Zeebe's element identifier: the id of the element, or for an element without id
    /// (an extension element, an event definition) the chain from the closest element with
    /// an id, e.g. `task > extensionElements > taskDefinition`.
    pub element: String,
    /// The id of the closest element with an id, if any.
    pub element_id: Option<String>,
    pub position: Position,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Element: {} ({})\n    - ERROR: {}",
            self.element, self.position, self.message
        )
    }
}

/// All validation errors of a document, in document order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    pub fn iter(&self) -> impl Iterator<Item = &ValidationError> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The messages only, for tests and logs.
    pub fn messages(&self) -> Vec<&str> {
        self.0.iter().map(|e| e.message.as_str()).collect()
    }

    /// Zeebe's format without positions, as Zeebe's deployment rejection shows it:
    /// `- Element: <id>\n    - ERROR: <message>\n`, errors of one element grouped.
    pub fn to_zeebe_string(&self) -> String {
        self.render(false)
    }

    fn render(&self, with_positions: bool) -> String {
        let mut out = String::new();
        let mut previous: Option<(&str, Position)> = None;
        for error in &self.0 {
            let key = (error.element.as_str(), error.position);
            if previous != Some(key) {
                out.push_str("- Element: ");
                out.push_str(&error.element);
                if with_positions {
                    out.push_str(&format!(" ({})", error.position));
                }
                out.push('\n');
                previous = Some(key);
            }
            out.push_str("    - ERROR: ");
            out.push_str(&error.message);
            out.push('\n');
        }
        out
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.render(true).trim_end())
    }
}

impl IntoIterator for ValidationErrors {
    type Item = ValidationError;
    type IntoIter = std::vec::IntoIter<ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Why a document could not be turned into a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("{0}")]
    Xml(#[from] XmlError),
    #[error("{0}")]
    Invalid(ValidationErrors),
}

impl ParseError {
    /// The validation errors, if the XML was well-formed.
    pub fn validation_errors(&self) -> Option<&ValidationErrors> {
        match self {
            ParseError::Invalid(errors) => Some(errors),
            ParseError::Xml(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(element: &str, line: u32, message: &str) -> ValidationError {
        ValidationError {
            element: element.into(),
            element_id: Some(element.into()),
            position: Position { line, column: 3 },
            message: message.into(),
        }
    }

    #[test]
    fn formats_like_zeebe_and_groups_errors_of_one_element() {
        let errors = ValidationErrors(vec![
            error("task", 4, "first"),
            error("task", 4, "second"),
            error("flow", 9, "third"),
        ]);
        assert_eq!(
            errors.to_zeebe_string(),
            "- Element: task\n    - ERROR: first\n    - ERROR: second\n\
             - Element: flow\n    - ERROR: third\n"
        );
        assert_eq!(
            errors.to_string(),
            "- Element: task (line 4, column 3)\n    - ERROR: first\n    - ERROR: second\n\
             - Element: flow (line 9, column 3)\n    - ERROR: third"
        );
        assert_eq!(
            errors.0[0].to_string(),
            "Element: task (line 4, column 3)\n    - ERROR: first"
        );
    }
}
