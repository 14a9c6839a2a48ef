//! The one reader: JSON text in, canonical text out, in one pass with an explicit stack.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write;

use crate::error::{Error, ErrorKind, quoted_number};
use crate::{Kind, MAX_DEPTH};

/// Where a top-level entry of a document sits in the output: its name and the byte range of
/// its canonical value.
pub(crate) type Entry = (String, usize, usize);

/// Why reading stopped, and at which byte; the path is added by [`transcode`], which has the
/// stack.
struct Fail {
    kind: ErrorKind,
    pos: usize,
}

type Read<T> = Result<T, Fail>;

/// The keys of an open object, to find a repeated one: a list while there are few, a set
/// once there are many.
struct Keys<'a> {
    list: Vec<Cow<'a, str>>,
    set: Option<HashSet<Cow<'a, str>>>,
}

impl<'a> Keys<'a> {
    const LIST_MAX: usize = 16;

    fn new() -> Self {
        Keys {
            list: Vec::new(),
            set: None,
        }
    }

    /// Adds a key; false if the object had it already.
    fn insert(&mut self, key: Cow<'a, str>) -> bool {
        if let Some(set) = &mut self.set {
            return set.insert(key);
        }
        if self.list.contains(&key) {
            return false;
        }
        self.list.push(key);
        if self.list.len() > Self::LIST_MAX {
            self.set = Some(self.list.drain(..).collect());
        }
        true
    }
}

/// An open container.
enum Frame<'a> {
    Object {
        keys: Keys<'a>,
        /// The key whose value is being read.
        key: Cow<'a, str>,
        /// Where that value starts in the output.
        value_start: usize,
    },
    Array {
        /// The item being read.
        index: usize,
    },
}

/// What the step after a complete value found.
enum After<'a> {
    /// Another value follows (an item, or an entry whose key was read).
    Value,
    /// A key that the object has already.
    Duplicate(Cow<'a, str>),
    /// The innermost container closed: it is a complete value too.
    Closed(Kind),
}

/// Reads the JSON value `text` and writes its canonical text to `out`. With `entries`, the
/// root must be an object (anything else is read and its kind returned) and each of its
/// entries is listed with where its value sits in `out`. Returns the kind of the root.
pub(crate) fn transcode<S: Sink>(
    text: &str,
    out: &mut S,
    mut entries: Option<&mut Vec<Entry>>,
) -> Result<Kind, Error> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let fail = |fail: Fail, stack: &[Frame<'_>]| error_at(text, fail, stack);
    loop {
        // A value starts here.
        let mut kind = match reader.value_start(out, stack.len()) {
            Ok(Start::Scalar(kind) | Start::Empty(kind)) => kind,
            Ok(Start::Object(key)) => {
                let mut keys = Keys::new();
                keys.insert(key.clone());
                stack.push(Frame::Object {
                    keys,
                    key,
                    value_start: out.len(),
                });
                continue;
            }
            Ok(Start::Array) => {
                stack.push(Frame::Array { index: 0 });
                continue;
            }
            Err(e) => return Err(fail(e, &stack)),
        };
        // A value ended: go on in its container, closing those that end here.
        loop {
            let depth = stack.len();
            let Some(frame) = stack.last_mut() else {
                reader.skip_whitespace();
                if reader.pos < reader.bytes.len() {
                    return Err(fail(
                        Fail {
                            kind: ErrorKind::Syntax("the end of the text after the value"),
                            pos: reader.pos,
                        },
                        &stack,
                    ));
                }
                return Ok(kind);
            };
            if depth == 1
                && let (
                    Some(entries),
                    Frame::Object {
                        key, value_start, ..
                    },
                ) = (entries.as_deref_mut(), &*frame)
            {
                entries.push((key.to_string(), *value_start, out.len()));
            }
            match reader.after_value(out, frame) {
                Ok(After::Value) => break,
                Ok(After::Closed(closed)) => {
                    stack.pop();
                    kind = closed;
                }
                Ok(After::Duplicate(key)) => {
                    // The path names the object, not the key before the repeated one.
                    return Err(Error::at(
                        ErrorKind::DuplicateKey(key.into_owned()),
                        text.as_bytes(),
                        reader.pos,
                        path(&stack[..depth - 1]),
                    ));
                }
                Err(e) => return Err(fail(e, &stack)),
            }
        }
    }
}

fn error_at(text: &str, fail: Fail, stack: &[Frame<'_>]) -> Error {
    Error::at(fail.kind, text.as_bytes(), fail.pos, path(stack))
}

/// The path of the value being read: keys and indexes from the root (`order.items[2]`); keys
/// that are not plain names are quoted (`["a.b"]`).
fn path(stack: &[Frame<'_>]) -> String {
    let mut path = String::new();
    for frame in stack {
        match frame {
            Frame::Object { key, .. } => {
                let plain = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '-');
                if plain {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                } else {
                    path.push('[');
                    write_string(&mut path, key);
                    path.push(']');
                }
            }
            Frame::Array { index } => {
                let _ = write!(path, "[{index}]");
            }
        }
    }
    path
}

/// How a value began.
enum Start<'a> {
    /// A complete scalar.
    Scalar(Kind),
    /// `{}` or `[]`.
    Empty(Kind),
    /// An object, whose first key (written with its colon) was read.
    Object(Cow<'a, str>),
    /// An array with a first item to come.
    Array,
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn fail<T>(&self, kind: ErrorKind) -> Read<T> {
        Err(Fail {
            kind,
            pos: self.pos,
        })
    }

    fn expected<T>(&self, what: &'static str) -> Read<T> {
        if self.pos >= self.bytes.len() {
            self.fail(ErrorKind::Eof(what))
        } else {
            self.fail(ErrorKind::Syntax(what))
        }
    }

    /// Reads the start of a value at `depth` containers deep: a whole scalar, or the opening
    /// of a container.
    fn value_start<S: Sink>(&mut self, out: &mut S, depth: usize) -> Read<Start<'a>> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'{') => {
                if depth >= MAX_DEPTH {
                    return self.fail(ErrorKind::TooDeep);
                }
                self.pos += 1;
                out.push('{');
                self.skip_whitespace();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    out.push('}');
                    return Ok(Start::Empty(Kind::Object));
                }
                self.key(out).map(Start::Object)
            }
            Some(b'[') => {
                if depth >= MAX_DEPTH {
                    return self.fail(ErrorKind::TooDeep);
                }
                self.pos += 1;
                out.push('[');
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    out.push(']');
                    return Ok(Start::Empty(Kind::Array));
                }
                Ok(Start::Array)
            }
            Some(b'"') => {
                let s = self.string()?;
                write_decoded(out, &s, matches!(s, Cow::Borrowed(_)));
                Ok(Start::Scalar(Kind::String))
            }
            Some(b'-' | b'0'..=b'9') => self.number(out).map(Start::Scalar),
            Some(b't') => self.literal("true", out, Kind::Bool),
            Some(b'f') => self.literal("false", out, Kind::Bool),
            Some(b'n') => self.literal("null", out, Kind::Null),
            _ => self.expected("a value"),
        }
    }

    /// After a complete value inside `frame`: a comma and the next item or entry, or the end
    /// of the container.
    fn after_value<S: Sink>(&mut self, out: &mut S, frame: &mut Frame<'a>) -> Read<After<'a>> {
        self.skip_whitespace();
        match frame {
            Frame::Object {
                keys,
                key,
                value_start,
            } => match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    out.push(',');
                    self.skip_whitespace();
                    let at = self.pos;
                    let next = self.key(out)?;
                    if !keys.insert(next.clone()) {
                        self.pos = at;
                        return Ok(After::Duplicate(next));
                    }
                    *key = next;
                    *value_start = out.len();
                    Ok(After::Value)
                }
                Some(b'}') => {
                    self.pos += 1;
                    out.push('}');
                    Ok(After::Closed(Kind::Object))
                }
                _ => self.expected("',' or '}' after an object entry"),
            },
            Frame::Array { index } => match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    out.push(',');
                    *index += 1;
                    Ok(After::Value)
                }
                Some(b']') => {
                    self.pos += 1;
                    out.push(']');
                    Ok(After::Closed(Kind::Array))
                }
                _ => self.expected("',' or ']' after an array item"),
            },
        }
    }

    /// An object key and its colon, written as `"key":`.
    fn key<S: Sink>(&mut self, out: &mut S) -> Read<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return self.expected("a key in double quotes");
        }
        let key = self.string()?;
        write_decoded(out, &key, matches!(key, Cow::Borrowed(_)));
        self.skip_whitespace();
        if self.peek() != Some(b':') {
            return self.expected("':' after an object key");
        }
        self.pos += 1;
        out.push(':');
        Ok(key)
    }

    fn literal<S: Sink>(&mut self, word: &'static str, out: &mut S, kind: Kind) -> Read<Start<'a>> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            out.push_str(word);
            Ok(Start::Scalar(kind))
        } else {
            self.expected("a value")
        }
    }

    /// A string starting at its opening quote, decoded: borrowed from the text when it has no
    /// escapes (then it has nothing to escape either).
    fn string(&mut self) -> Read<Cow<'a, str>> {
        self.pos += 1;
        let start = self.pos;
        self.skip_plain();
        match self.peek() {
            None => return self.expected("the closing '\"' of a string"),
            Some(b'"') => {
                self.pos += 1;
                return Ok(Cow::Borrowed(&self.text[start..self.pos - 1]));
            }
            Some(b'\\') => {}
            Some(c) => return self.fail(ErrorKind::ControlCharacter(c)),
        }
        let mut decoded = String::with_capacity(self.pos - start + 16);
        decoded.push_str(&self.text[start..self.pos]);
        loop {
            let run = self.pos;
            self.skip_plain();
            decoded.push_str(&self.text[run..self.pos]);
            match self.peek() {
                None => return self.expected("the closing '\"' of a string"),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(decoded));
                }
                Some(b'\\') => self.escape(&mut decoded)?,
                Some(c) => return self.fail(ErrorKind::ControlCharacter(c)),
            }
        }
    }

    /// Skips the bytes of a string that stand for themselves: up to a quote, a backslash, a
    /// control character or the end.
    fn skip_plain(&mut self) {
        let rest = &self.bytes[self.pos..];
        let end = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
        // Without an early exit the check for control characters vectorizes; they are rare.
        let run = &rest[..end];
        let end = if run.iter().fold(false, |seen, &b| seen | (b < 0x20)) {
            run.iter().position(|&b| b < 0x20).unwrap_or(end)
        } else {
            end
        };
        self.pos += end;
    }

    /// One escape at the backslash, decoded into `out`.
    fn escape(&mut self, out: &mut String) -> Read<()> {
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let escape_start = self.pos - 1;
                self.pos += 1;
                let unit = self.hex4()?;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        if self.bytes[self.pos..].starts_with(b"\\u") {
                            let second_start = self.pos;
                            self.pos += 2;
                            let low = self.hex4()?;
                            if (0xDC00..=0xDFFF).contains(&low) {
                                let scalar = 0x10000
                                    + ((u32::from(unit) - 0xD800) << 10)
                                    + (u32::from(low) - 0xDC00);
                                char::from_u32(scalar)
                            } else {
                                self.pos = second_start;
                                None
                            }
                        } else {
                            None
                        }
                    }
                    0xDC00..=0xDFFF => None,
                    _ => char::from_u32(u32::from(unit)),
                };
                return match c {
                    Some(c) => {
                        out.push(c);
                        Ok(())
                    }
                    None => Err(Fail {
                        kind: ErrorKind::LoneSurrogate(unit),
                        pos: escape_start,
                    }),
                };
            }
            _ => return self.expected("an escape ('\\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t' or '\\u' and four hex digits)"),
        };
        self.pos += 1;
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Read<u16> {
        let mut unit = 0u16;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return self.expected("four hex digits after '\\u'"),
            };
            unit = unit * 16 + u16::from(digit);
            self.pos += 1;
        }
        Ok(unit)
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// A number, written canonically: an integer as it is (`-0` as `0`), anything with a
    /// fraction or an exponent as the shortest text of its double.
    fn number<S: Sink>(&mut self, out: &mut S) -> Read<Kind> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return self.expected("a digit"),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.expected("a digit after the decimal point");
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            float = true;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.expected("a digit in the exponent");
            }
            self.digits();
        }
        let text = &self.text[start..self.pos];
        if !float {
            let digits = text.len() - usize::from(negative);
            // Up to 18 digits always fit an i64; beyond, ask.
            let fits = digits <= 18
                || (negative && text.parse::<i64>().is_ok())
                || (!negative && text.parse::<u64>().is_ok());
            if fits {
                out.push_str(if text == "-0" { "0" } else { text });
                return Ok(Kind::Integer);
            }
            // Beyond 64 bits: kept as a double only when the double's shortest text is the
            // same number (`610787324020353100000`, as JavaScript and Go print the double
            // 6.107873240203531e20), so no digit changes; otherwise refused.
            if let Ok(value) = text.parse::<f64>()
                && value.is_finite()
            {
                let mut buffer = zmij::Buffer::new();
                let shortest = buffer.format_finite(value);
                if Decimal::of(text) == Decimal::of(shortest) {
                    out.push_str(shortest);
                    return Ok(Kind::Float);
                }
            }
            self.pos = start;
            return self.fail(ErrorKind::IntegerOutOfRange(quoted_number(text)));
        }
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => {
                if S::KEEPS {
                    out.push_str(zmij::Buffer::new().format_finite(value));
                }
                Ok(Kind::Float)
            }
            _ => {
                self.pos = start;
                self.fail(ErrorKind::NumberOutOfRange(quoted_number(text)))
            }
        }
    }
}

/// Where the reader writes canonical text: a `String`, or nowhere when a text is only
/// checked.
pub(crate) trait Sink {
    /// Whether anything is kept (a double's text is only made when it is).
    const KEEPS: bool;
    fn push(&mut self, c: char);
    fn push_str(&mut self, s: &str);
    fn len(&self) -> usize;
}

impl Sink for String {
    const KEEPS: bool = true;

    fn push(&mut self, c: char) {
        String::push(self, c);
    }

    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }

    fn len(&self) -> usize {
        String::len(self)
    }
}

/// Keeps nothing: for a text that is only checked.
pub(crate) struct Discard;

impl Sink for Discard {
    const KEEPS: bool = false;

    fn push(&mut self, _: char) {}

    fn push_str(&mut self, _: &str) {}

    fn len(&self) -> usize {
        0
    }
}

/// A number written in decimal, as the number it is: its sign, its significant digits and the
/// power of ten of the first one (`-610787324020353100000` and `-6.107873240203531e+20` are
/// both `(true, "6107873240203531", 20)`). For number tokens the reader accepted.
#[derive(PartialEq, Eq)]
struct Decimal<'t> {
    negative: bool,
    digits: String,
    power: i64,
    _text: std::marker::PhantomData<&'t str>,
}

impl Decimal<'_> {
    fn of(text: &str) -> Decimal<'_> {
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().unwrap_or(0)),
            None => (text, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all = format!("{whole}{fraction}");
        let significant = all.trim_start_matches('0');
        let leading_zeros = (all.len() - significant.len()) as i64;
        Decimal {
            negative,
            digits: significant.trim_end_matches('0').to_string(),
            power: whole.len() as i64 - 1 - leading_zeros + exponent,
            _text: std::marker::PhantomData,
        }
    }
}

/// Writes a decoded string as `serde_json` does: quoted, with `"`, `\` and control
/// characters escaped. A string borrowed from the text (it had no escapes) has none of those.
fn write_decoded<S: Sink>(out: &mut S, s: &str, borrowed: bool) {
    if borrowed {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        write_string(out, s);
    }
}

/// Writes `s` as a JSON string, escaped as `serde_json` escapes: `\"`, `\\`, the short forms
/// `\b \f \n \r \t`, and `\u00xx` (lower-case hex) for the other control characters.
pub(crate) fn write_string<S: Sink>(out: &mut S, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, byte) in s.bytes().enumerate() {
        let short = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if short.is_empty() {
            out.push_str(&format!("\\u{byte:04x}"));
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}
