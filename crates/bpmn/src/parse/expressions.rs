//! Zeebe's rule for attribute values: `=` starts a FEEL expression, anything else is static.

use crate::model::{
    ExprOrStatic, ExpressionContext, ExpressionEntry, ExpressionId, ExpressionOrigin, FeelSource,
};
use crate::xml::Position;

/// The expression table of the process being built.
#[derive(Debug, Default)]
pub(crate) struct ExpressionTable {
    entries: Vec<ExpressionEntry>,
}

/// Where a value comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin<'a> {
    pub element_id: &'a str,
    pub attribute: &'static str,
    pub position: Position,
}

impl ExpressionTable {
    /// Classifies `value`; an expression is added to the table.
    pub(crate) fn classify(&mut self, value: &str, origin: Origin<'_>) -> ExprOrStatic<String> {
        self.classify_in(value, origin, ExpressionContext::Variables)
    }

    pub(crate) fn classify_in(
        &mut self,
        value: &str,
        origin: Origin<'_>,
        context: ExpressionContext,
    ) -> ExprOrStatic<String> {
        match value.strip_prefix('=') {
            Some(text) => ExprOrStatic::Expression(self.add(text, origin, context)),
            None => ExprOrStatic::Static(value.to_owned()),
        }
    }

    fn add(&mut self, text: &str, origin: Origin<'_>, context: ExpressionContext) -> FeelSource {
        // More than u32::MAX expressions cannot come from a document that fits in memory.
        let id = ExpressionId(u32::try_from(self.entries.len()).unwrap_or(u32::MAX));
        self.entries.push(ExpressionEntry {
            id,
            text: text.to_owned(),
            origin: ExpressionOrigin {
                element_id: origin.element_id.to_owned(),
                attribute: origin.attribute,
                position: origin.position,
            },
            context,
        });
        FeelSource {
            id,
            text: text.to_owned(),
        }
    }

    /// Marks an expression as one that must evaluate without variables.
    pub(crate) fn require_constant(&mut self, id: ExpressionId) {
        if let Some(entry) = self.entries.get_mut(id.index()) {
            entry.context = ExpressionContext::Constant;
        }
    }

    pub(crate) fn into_entries(self) -> Vec<ExpressionEntry> {
        self.entries
    }
}

/// The message Zeebe gives where only an expression is allowed.
pub(crate) fn expected_expression(value: &str) -> String {
    format!(
        "Expected expression but found static value '{value}'. \
         An expression must start with '=' (e.g. '={value}')."
    )
}

/// Zeebe's rule for variable paths (io mapping targets): `a`, `a.b`, not a FEEL keyword.
pub(crate) fn path_errors(path: &str) -> Vec<String> {
    const PATTERN: &str = "[a-zA-Z_][a-zA-Z0-9_]*(\\.[a-zA-Z_][a-zA-Z0-9_]*)*";
    const RESERVED: &[&str] = &[
        "null", "true", "false", "function", "if", "then", "else", "for", "between", "instance",
        "of",
    ];
    if path.is_empty() {
        return vec!["Expected path expression but not found.".into()];
    }
    let mut errors = Vec::new();
    let matches = path.split('.').all(|segment| {
        let mut chars = segment.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if !matches {
        errors.push(format!(
            "Expected path expression '{path}' but doesn't match the pattern '{PATTERN}'."
        ));
    }
    if RESERVED.contains(&path) {
        errors.push(format!(
            "Expected path expression '{path}' but is one of the reserved words ({}).",
            RESERVED.join(", ")
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin<'static> {
        Origin {
            element_id: "task",
            attribute: "type",
            position: Position { line: 1, column: 1 },
        }
    }

    #[test]
    fn equals_sign_starts_an_expression() {
        let mut table = ExpressionTable::default();
        assert_eq!(
            table.classify("payment", origin()),
            ExprOrStatic::Static("payment".into())
        );
        assert_eq!(
            table.classify(" =x", origin()),
            ExprOrStatic::Static(" =x".into())
        );
        let ExprOrStatic::Expression(e) = table.classify("= x + 1", origin()) else {
            panic!("expected an expression");
        };
        assert_eq!(e.text, " x + 1");
        let entries = table.into_entries();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].id, e.id);
        assert_eq!(entries[0].origin.element_id, "task");
        assert_eq!(entries[0].origin.attribute, "type");
    }

    #[test]
    fn paths_follow_zeebes_pattern() {
        assert!(path_errors("a").is_empty());
        assert!(path_errors("order.item_1").is_empty());
        assert_eq!(path_errors("").len(), 1);
        assert_eq!(path_errors("a..b").len(), 1);
        assert_eq!(path_errors("1a").len(), 1);
        assert_eq!(
            path_errors("null"),
            vec!["Expected path expression 'null' but is one of the reserved words (null, true, false, function, if, then, else, for, between, instance, of).".to_string()]
        );
    }
}
