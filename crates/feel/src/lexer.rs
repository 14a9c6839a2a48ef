//! Splits FEEL text into tokens.
//!
//! FEEL names may contain spaces (`string length`, `Monthly Income`) and, for names the
//! model declares, the symbols `. / - + * '` (`Post-bureau risk category`). The grammar
//! alone cannot tell `a - b` from a name `a - b`, so the lexer matches *known* names (the
//! built-ins whose names contain keywords, plus whatever the caller declares, e.g. the
//! variables of a DMN model) as single tokens; other multi-word names are joined word by
//! word in the parser.

use crate::error::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Number(String),
    String(String),
    /// One word, or a known multi-word name (then `complete` is true and the parser will
    /// not join further words to it).
    Name {
        text: String,
        complete: bool,
    },
    At,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Colon,
    Question,
    Plus,
    Minus,
    Star,
    StarStar,
    Slash,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Arrow,
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Built-in function names that contain a keyword (`and`, `or`) and so cannot be joined
/// word by word. They are only taken as one name when an argument list follows.
const KEYWORD_NAMES: &[&str] = &[
    "date and time",
    "years and months duration",
    "days and time duration",
    "get or else",
    "index of",
    "day of year",
    "day of week",
    "month of year",
    "week of year",
    "last day of month",
];

pub fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic() || (!c.is_ascii() && !c.is_whitespace() && !is_unicode_quote(c))
}

pub fn is_name_part(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit() || c == '\''
}

fn is_unicode_quote(c: char) -> bool {
    matches!(c, '\u{201C}' | '\u{201D}')
}

pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    known: &'a [String],
}

impl<'a> Lexer<'a> {
    /// `known` must be sorted longest first so the longest match wins.
    pub fn new(src: &'a str, known: &'a [String]) -> Lexer<'a> {
        Lexer { src, pos: 0, known }
    }

    pub fn tokenize(mut self) -> Result<Vec<Token>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_trivia()?;
            let start = self.pos;
            let Some(c) = self.peek() else {
                out.push(Token {
                    tok: Tok::Eof,
                    start,
                    end: start,
                });
                return Ok(out);
            };
            let tok = self.next_token(c)?;
            out.push(Token {
                tok,
                start,
                end: self.pos,
            });
        }
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn err(&self, at: usize, msg: impl Into<String>) -> ParseError {
        ParseError::new(self.src, at, msg)
    }

    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') if self.peek_at(1) == Some('/') => {
                    while let Some(c) = self.bump() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                Some('/') if self.peek_at(1) == Some('*') => {
                    let start = self.pos;
                    self.pos += 2;
                    match self.src[self.pos..].find("*/") {
                        Some(i) => self.pos += i + 2,
                        None => return Err(self.err(start, "unterminated comment")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self, c: char) -> Result<Tok, ParseError> {
        let start = self.pos;
        let two = |l: &Self, s: &str| l.src[l.pos..].starts_with(s);
        let tok = match c {
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '[' => Tok::LBracket,
            ']' => Tok::RBracket,
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            ',' => Tok::Comma,
            ':' => Tok::Colon,
            '?' => Tok::Question,
            '@' => Tok::At,
            '+' => Tok::Plus,
            '=' => Tok::Eq,
            '"' => return self.string(),
            '`' => return self.backtick_name(),
            '.' if two(self, "..") => {
                self.pos += 2;
                return Ok(Tok::DotDot);
            }
            '.' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => return Ok(self.number()),
            '.' => Tok::Dot,
            '-' if two(self, "->") => {
                self.pos += 2;
                return Ok(Tok::Arrow);
            }
            '-' => Tok::Minus,
            '*' if two(self, "**") => {
                self.pos += 2;
                return Ok(Tok::StarStar);
            }
            '*' => Tok::Star,
            '/' => Tok::Slash,
            '!' if two(self, "!=") => {
                self.pos += 2;
                return Ok(Tok::Ne);
            }
            '<' if two(self, "<=") => {
                self.pos += 2;
                return Ok(Tok::Le);
            }
            '<' => Tok::Lt,
            '>' if two(self, ">=") => {
                self.pos += 2;
                return Ok(Tok::Ge);
            }
            '>' => Tok::Gt,
            d if d.is_ascii_digit() => return Ok(self.number()),
            n if is_name_start(n) => return Ok(self.name()),
            other => return Err(self.err(start, format!("unexpected character '{other}'"))),
        };
        self.bump();
        Ok(tok)
    }

    fn number(&mut self) -> Tok {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        // An exponent (`1.23e4`, `1E-3`), as DMN 1.5 allows.
        if matches!(self.peek(), Some('e' | 'E')) {
            let digits_at = if matches!(self.peek_at(1), Some('+' | '-')) {
                2
            } else {
                1
            };
            if self.peek_at(digits_at).is_some_and(|c| c.is_ascii_digit()) {
                self.pos += digits_at;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
        }
        Tok::Number(self.src[start..self.pos].to_string())
    }

    fn name(&mut self) -> Tok {
        if let Some(text) = self.known_name() {
            return Tok::Name {
                text,
                complete: true,
            };
        }
        let start = self.pos;
        while self.peek().is_some_and(is_name_part) {
            self.bump();
        }
        Tok::Name {
            text: self.src[start..self.pos].to_string(),
            complete: false,
        }
    }

    /// Matches a known multi-word (or symbol-bearing) name at the current position. Runs of
    /// whitespace in the source match single spaces in the name.
    fn known_name(&mut self) -> Option<String> {
        let rest = &self.src[self.pos..];
        let candidates = self
            .known
            .iter()
            .map(|s| (s.as_str(), false))
            .chain(KEYWORD_NAMES.iter().map(|s| (*s, true)));
        let mut best: Option<(usize, &str)> = None;
        for (name, needs_call) in candidates {
            if let Some(len) = match_name(rest, name)
                && best.is_none_or(|(l, _)| len > l)
            {
                if needs_call && !rest[len..].trim_start().starts_with('(') {
                    continue;
                }
                best = Some((len, name));
            }
        }
        let (len, name) = best?;
        self.pos += len;
        Some(name.to_string())
    }

    fn string(&mut self) -> Result<Tok, ParseError> {
        let start = self.pos;
        self.bump();
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(self.err(start, "unterminated string literal"));
            };
            match c {
                '"' => return Ok(Tok::String(out)),
                '\\' => {
                    let esc_at = self.pos - 1;
                    match self.bump() {
                        Some('"') => out.push('"'),
                        Some('\\') => out.push('\\'),
                        Some('\'') => out.push('\''),
                        Some('n') => out.push('\n'),
                        Some('r') => out.push('\r'),
                        Some('t') => out.push('\t'),
                        Some('u') => {
                            let c = self.unicode_escape(esc_at, 4)?;
                            out.push(c);
                        }
                        Some('U') => {
                            let c = self.unicode_escape(esc_at, 6)?;
                            out.push(c);
                        }
                        Some(other) => {
                            // Unknown escapes stay as written (feel-scala does the same).
                            out.push('\\');
                            out.push(other);
                        }
                        None => return Err(self.err(start, "unterminated string literal")),
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn hex(&mut self, at: usize, digits: usize) -> Result<u32, ParseError> {
        let s = self.src.get(self.pos..self.pos + digits);
        let v = s
            .filter(|s| s.chars().all(|c| c.is_ascii_hexdigit()))
            .and_then(|s| u32::from_str_radix(s, 16).ok())
            .ok_or_else(|| self.err(at, "invalid unicode escape"))?;
        self.pos += digits;
        Ok(v)
    }

    /// `\uXXXX` (combining surrogate pairs, as Java strings would) or `\UXXXXXX`.
    fn unicode_escape(&mut self, at: usize, digits: usize) -> Result<char, ParseError> {
        let v = self.hex(at, digits)?;
        if (0xD800..0xDC00).contains(&v) && self.src[self.pos..].starts_with("\\u") {
            let save = self.pos;
            self.pos += 2;
            let low = self.hex(at, 4)?;
            if (0xDC00..0xE000).contains(&low) {
                let cp = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
                return char::from_u32(cp).ok_or_else(|| self.err(at, "invalid unicode escape"));
            }
            self.pos = save;
        }
        char::from_u32(v).ok_or_else(|| self.err(at, "invalid unicode escape"))
    }

    fn backtick_name(&mut self) -> Result<Tok, ParseError> {
        let start = self.pos;
        self.bump();
        let rest = &self.src[self.pos..];
        match rest.find('`') {
            Some(i) if i > 0 => {
                let text = rest[..i].to_string();
                self.pos += i + 1;
                Ok(Tok::Name {
                    text,
                    complete: true,
                })
            }
            _ => Err(self.err(start, "unterminated or empty `name`")),
        }
    }
}

/// Length in bytes of `text`'s prefix that spells `name` (whitespace runs in `text` match
/// single spaces in `name`) and ends at a name boundary.
fn match_name(text: &str, name: &str) -> Option<usize> {
    let mut t = text.char_indices().peekable();
    let mut n = name.chars().peekable();
    let mut end = 0;
    while let Some(nc) = n.next() {
        if nc == ' ' {
            let mut saw = false;
            while let Some(&(_, tc)) = t.peek() {
                if tc.is_whitespace() {
                    saw = true;
                    t.next();
                } else {
                    break;
                }
            }
            if !saw {
                return None;
            }
            while n.peek() == Some(&' ') {
                n.next();
            }
            continue;
        }
        let (i, tc) = t.next()?;
        if tc != nc {
            return None;
        }
        end = i + tc.len_utf8();
    }
    let last = name.chars().last()?;
    match text[end..].chars().next() {
        Some(c) if is_name_part(c) && is_name_part(last) => None,
        _ => Some(end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str, known: &[&str]) -> Vec<Tok> {
        let known: Vec<String> = known.iter().map(|s| s.to_string()).collect();
        Lexer::new(s, &known)
            .tokenize()
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn name(s: &str, complete: bool) -> Tok {
        Tok::Name {
            text: s.into(),
            complete,
        }
    }

    #[test]
    fn ranges_and_numbers() {
        assert_eq!(
            toks("[1..10]", &[]),
            vec![
                Tok::LBracket,
                Tok::Number("1".into()),
                Tok::DotDot,
                Tok::Number("10".into()),
                Tok::RBracket,
                Tok::Eof
            ]
        );
        assert_eq!(toks(".5", &[])[0], Tok::Number(".5".into()));
    }

    #[test]
    fn known_names_with_symbols() {
        assert_eq!(
            toks(
                "Post-bureau  risk category * 2",
                &["Post-bureau risk category"]
            ),
            vec![
                name("Post-bureau risk category", true),
                Tok::Star,
                Tok::Number("2".into()),
                Tok::Eof
            ]
        );
        assert_eq!(toks("a-b", &[])[1], Tok::Minus);
        assert_eq!(
            toks("date and time(x)", &[])[0],
            name("date and time", true)
        );
        assert_eq!(toks("date and time", &[])[0], name("date", false));
    }

    #[test]
    fn strings_and_comments() {
        assert_eq!(
            toks(r#""a\"b\u0041\ud83d\udc0e" // c"#, &[]),
            vec![Tok::String("a\"bA\u{1F40E}".into()), Tok::Eof]
        );
        assert_eq!(toks("1 /* x */ + 2", &[]).len(), 4);
        assert!(Lexer::new("\"abc", &[]).tokenize().is_err());
    }
}
