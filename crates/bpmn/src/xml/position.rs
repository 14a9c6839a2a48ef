//! Byte offsets to 1-based line and column numbers.

use std::fmt;

/// A place in the source document: 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Start offsets of every line, so a byte offset maps to a position in O(log lines).
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { line_starts }
    }

    /// `offset` is clamped to the text, and moved back to a character boundary, so any
    /// offset (even one reported by the XML reader past the end) yields a position.
    pub(crate) fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while offset > 0 && !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(line).copied().unwrap_or(0).min(offset);
        let column = text.get(start..offset).map_or(0, |s| s.chars().count());
        Position {
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_offsets_to_lines_and_character_columns() {
        let text = "ab\ncäd\n\nx";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 0), Position { line: 1, column: 1 });
        assert_eq!(index.position(text, 3), Position { line: 2, column: 1 });
        // 'ä' is two bytes but one column
        assert_eq!(index.position(text, 6), Position { line: 2, column: 3 });
        assert_eq!(index.position(text, 8), Position { line: 3, column: 1 });
        assert_eq!(index.position(text, 9), Position { line: 4, column: 1 });
        assert_eq!(index.position(text, 1000), Position { line: 4, column: 2 });
        // inside a multi-byte character: moved back to its start
        assert_eq!(index.position(text, 5), Position { line: 2, column: 2 });
    }
}
