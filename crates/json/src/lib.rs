//! The JSON text of process variables, kept as Zeebe keeps it.
//!
//! Zeebe stores variables as MessagePack, converting JSON with Jackson
//! (`MsgPackConverter`: a JSON parser copied token by token into a MessagePack generator, and
//! back). What survives that trip is what a Zeebe user expects back, so every document that
//! enters Beeline (a client's variables, a record's, a stored value) goes through one reader
//! here, which checks it and writes its *canonical text*: the text Beeline stores, compares
//! (a variable set to the value it has is no change) and hands out. Canonical text is compact
//! JSON, printed as `serde_json` prints the same value, with the key order of the input:
//!
//! - **Integers** (number tokens without fraction or exponent) are 64-bit: MessagePack holds
//!   `-2^63 .. 2^64-1` exactly and Jackson reads them as `int`, `long` or `BigInteger`, so their
//!   digits come back unchanged. `-0` is the integer zero: Jackson reads it as an `int`, which
//!   has no sign of zero, and writes `0`.
//! - **Other numbers** (with a fraction or an exponent: `0.1`, `1e-7`, `1E+300`, `1.0`) are
//!   IEEE doubles: Jackson reads them with `Double.parseDouble` (correctly rounded) and the
//!   generator packs a float64; `Double.toString` writes back the shortest decimal that reads
//!   as the same double. Here the parse is Rust's `str::parse::<f64>` (correctly rounded) and
//!   the print [`zmij`]'s shortest round-trip text, the formatter `serde_json` prints doubles
//!   with. So every double comes back as exactly the same double: `0.12496785020850265` stays
//!   `0.12496785020850265`. Layout may differ from Java's (`1e-7` for Java's `1.0E-7`), never
//!   the digits: a text with more digits than a double holds (`0.1000000000000000055511`) comes
//!   back as the double's shortest text (`0.1`), as from Zeebe. `-0.0` keeps its sign, as a
//!   float64 does.
//! - **Strings** are Unicode text: escapes are decoded (`\u00e9` is `é`, a surrogate pair one
//!   character) and written back as `serde_json` writes them (only `"`, `\` and control
//!   characters escaped), as Jackson writes what it read.
//! - **Objects** keep their key order, as the MessagePack map Jackson writes does.
//!
//! Refused, each with an [`Error`] that says what and where, never altered silently:
//!
//! - **An integer beyond `-2^63 .. 2^64-1`** with more digits than a double keeps: Zeebe
//!   fails on every integer beyond that range (msgpack-java's `packBigInteger`: "MessagePack
//!   cannot serialize BigInteger larger than 2^64-1"; camunda/camunda#9832 asks for a clear
//!   rejection instead of its internal error). One whose digits are the shortest text of a
//!   double is kept as that double, the same number in exponent form
//!   (`610787324020353100000` becomes `6.107873240203531e+20`): JavaScript's and Go's JSON
//!   print doubles from 2^64 up to 1e21 that way, and Zeebe refuses them from those clients.
//! - **A number beyond the double range** (`1e400`): Jackson reads `Infinity`, which Zeebe
//!   writes back as the *string* `"Infinity"`: refused rather than turned into text.
//! - **A lone surrogate escape** (`"\ud800"`): Java's UTF-8 encoder replaces it with `?`;
//!   no UTF-8 text can hold it.
//! - **A repeated key in one object**: Jackson copies both entries into the MessagePack map,
//!   and Zeebe's `IndexedDocument` then sets the top-level variable twice in hash order of
//!   their offsets, so which value wins is an accident; nested copies keep both and each
//!   client's parser picks one. There is no value to keep, so the document is refused.
//! - **Nesting deeper than [`MAX_DEPTH`]**: Zeebe sets no limit (its converter lifts
//!   Jackson's); a limit keeps every reader here within its stack, and documents nested that
//!   deep are not data anyone means to send.
//! - **Anything that is not JSON** (RFC 8259): among others single-quoted strings, which
//!   Zeebe's JSON factory accepts (`ALLOW_SINGLE_QUOTES`); unescaped control characters in
//!   strings; `NaN`; a text that is not UTF-8; trailing text after the value.
//!
//! The reader is iterative (an explicit stack, never recursion), so no input can overflow
//! the stack, and it allocates only for strings with escapes and for the output.

mod error;
mod read;

pub use error::{Error, ErrorKind};

/// Most containers (objects and arrays) one value may nest, the outermost included. Below
/// `serde_json`'s own limit (127), so whatever this reader accepts every other reader here
/// reads as well.
pub const MAX_DEPTH: usize = 100;

/// What a JSON value is, as far as a caller that expected another one wants to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Integer,
    Float,
    String,
    Array,
    Object,
}

/// The canonical text of one JSON value.
pub fn canonical(text: &str) -> Result<String, Error> {
    let mut out = String::with_capacity(text.len());
    read::transcode(text, &mut out, None)?;
    Ok(out)
}

/// [`canonical`] of text given as bytes, which must be UTF-8.
pub fn canonical_bytes(bytes: &[u8]) -> Result<String, Error> {
    canonical(utf8(bytes)?)
}

/// Checks a JSON value as [`canonical`] reads it, without writing its text; returns what it
/// is.
pub fn check(text: &str) -> Result<Kind, Error> {
    read::transcode(text, &mut read::Discard, None)
}

/// Checks a variables document as [`canonical_document`] reads it (it must be a JSON
/// object), without writing its text.
pub fn check_document(text: &str) -> Result<(), Error> {
    match check(text)? {
        Kind::Object => Ok(()),
        other => Err(Error::not_an_object(other)),
    }
}

/// The canonical text of a variables document, which must be a JSON object.
pub fn canonical_document(text: &str) -> Result<String, Error> {
    let mut out = String::with_capacity(text.len());
    match read::transcode(text, &mut out, None)? {
        Kind::Object => Ok(out),
        other => Err(Error::not_an_object(other)),
    }
}

/// The variables of a document (a JSON object): each top-level entry with its value's
/// canonical text, in the document's order.
pub fn document(text: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = String::with_capacity(text.len());
    let mut entries = Vec::new();
    match read::transcode(text, &mut out, Some(&mut entries))? {
        Kind::Object => Ok(entries
            .into_iter()
            .map(|(name, start, end)| (name, out[start..end].to_string()))
            .collect()),
        other => Err(Error::not_an_object(other)),
    }
}

/// [`document`] of text given as bytes, which must be UTF-8.
pub fn document_bytes(bytes: &[u8]) -> Result<Vec<(String, String)>, Error> {
    document(utf8(bytes)?)
}

fn utf8(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|e| Error::not_utf8(bytes, e.valid_up_to()))
}

/// The canonical text of a double: the shortest decimal that reads as the same double, as
/// `serde_json` prints it. `None` for infinities and NaN, which JSON cannot hold.
pub fn double_text(value: f64) -> Option<String> {
    value
        .is_finite()
        .then(|| zmij::Buffer::new().format_finite(value).to_string())
}

#[cfg(test)]
mod tests;
