//! Why a text is not a document Beeline keeps, and where.

use std::fmt;

use crate::{Kind, MAX_DEPTH};

/// Why a text was refused, with where: the path of the value (`order.items[2]`, empty for
/// the whole text) and the line and column (1-based) where reading stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    path: String,
    line: usize,
    column: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Not JSON: what was expected instead.
    Syntax(&'static str),
    /// The text ended inside a value: what was expected next.
    Eof(&'static str),
    NotUtf8,
    /// A control character (below U+0020) written into a string as it is.
    ControlCharacter(u8),
    /// A `\u` escape of one half of a UTF-16 surrogate pair without the other half.
    LoneSurrogate(u16),
    DuplicateKey(String),
    /// An integer outside `-2^63 .. 2^64-1`, as written (cut short if long).
    IntegerOutOfRange(String),
    /// A number beyond the largest double, as written (cut short if long).
    NumberOutOfRange(String),
    TooDeep,
    /// Valid JSON, but not the object a document must be.
    NotAnObject(Kind),
}

impl Error {
    pub(crate) fn at(kind: ErrorKind, text: &[u8], pos: usize, path: String) -> Error {
        let pos = pos.min(text.len());
        let before = &text[..pos];
        let line = 1 + before.iter().filter(|b| **b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        // Columns count characters, not bytes: continuation bytes are not counted.
        let column = 1 + before[line_start..]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count();
        Error {
            kind,
            path,
            line,
            column,
        }
    }

    pub(crate) fn not_an_object(kind: Kind) -> Error {
        Error {
            kind: ErrorKind::NotAnObject(kind),
            path: String::new(),
            line: 1,
            column: 1,
        }
    }

    pub(crate) fn not_utf8(bytes: &[u8], valid_up_to: usize) -> Error {
        Error::at(ErrorKind::NotUtf8, bytes, valid_up_to, String::new())
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The path of the value at fault (`order.items[2]`); empty for the whole text.
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn line(&self) -> usize {
        self.line
    }

    pub fn column(&self) -> usize {
        self.column
    }

    /// Whether the text is not JSON at all, as opposed to JSON that Beeline refuses.
    pub fn is_syntax(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Syntax(_)
                | ErrorKind::Eof(_)
                | ErrorKind::NotUtf8
                | ErrorKind::ControlCharacter(_)
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Syntax(expected) => write!(f, "expected {expected}")?,
            ErrorKind::Eof(expected) => write!(f, "the text ends where {expected} should be")?,
            ErrorKind::NotUtf8 => f.write_str("the text is not UTF-8")?,
            ErrorKind::ControlCharacter(c) => write!(
                f,
                "a string holds the control character U+{c:04X}, which JSON requires escaped (\\u{c:04x})"
            )?,
            ErrorKind::LoneSurrogate(unit) => write!(
                f,
                "a string holds the escape \\u{unit:04x}, half of a UTF-16 surrogate pair without its other half, which no Unicode text can hold"
            )?,
            ErrorKind::DuplicateKey(key) => write!(
                f,
                "an object has the key \"{key}\" twice, so which value it holds is ambiguous"
            )?,
            ErrorKind::IntegerOutOfRange(text) => write!(
                f,
                "the integer {text} is outside the 64-bit range a variable holds \
                 (-9223372036854775808 to 18446744073709551615, as in Zeebe) and has more \
                 digits than a floating-point number keeps; send it as a string"
            )?,
            ErrorKind::NumberOutOfRange(text) => write!(
                f,
                "the number {text} is beyond the range of a 64-bit floating-point number \
                 (at most 1.7976931348623157e308)"
            )?,
            ErrorKind::TooDeep => {
                write!(f, "objects and arrays nest deeper than {MAX_DEPTH} levels")?
            }
            ErrorKind::NotAnObject(kind) => {
                return write!(
                    f,
                    "expected a JSON object, but the text is {}",
                    match kind {
                        Kind::Null => "null",
                        Kind::Bool => "a boolean",
                        Kind::Integer | Kind::Float => "a number",
                        Kind::String => "a string",
                        Kind::Array => "an array",
                        Kind::Object => "an object",
                    }
                );
            }
        }
        if !self.path.is_empty() {
            write!(f, " at '{}'", self.path)?;
        }
        write!(f, " (line {}, column {})", self.line, self.column)
    }
}

impl std::error::Error for Error {}

/// A number as an error message quotes it: long digit strings cut short.
pub(crate) fn quoted_number(text: &str) -> String {
    const MAX: usize = 40;
    if text.len() <= MAX {
        text.to_string()
    } else {
        format!("{}... ({} digits)", &text[..MAX], text.len())
    }
}
