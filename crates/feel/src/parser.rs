//! Recursive-descent parser from tokens to the [`ast`](crate::ast).
//!
//! Precedence, loosest first: `for`/`if`/`some`/`every`/`function` · `or` · `and` ·
//! comparisons, `between`, `in`, `instance of` · `+ -` · `* /` · `**` (left-associative,
//! `3 ** 4 ** 5 = 81 ** 5`) · unary `-` (binds tighter than `**`: `-3 ** 2 = 9`) · postfix
//! filter, path and call.
//!
//! Input is untrusted: nesting is bounded (both the parser's recursion and the height of
//! the tree the evaluator will walk), so no text can overflow the stack.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ast::{
    Args, ArithOp, CmpOp, FunctionDef, Iteration, Kind, Node, Param, Quantifier, UnaryTest,
};
use crate::error::ParseError;
use crate::lexer::{Lexer, Tok, Token};
use crate::number::Number;
use crate::temporal::{self, Duration};
use crate::types::FeelType;
use crate::value::{Name, Value};

/// Deepest tree we accept. Real expressions stay far below; the bound keeps recursive
/// evaluation and drop within a small stack.
pub const MAX_DEPTH: usize = 128;

/// Words that end a multi-word name.
const KEYWORDS: &[&str] = &[
    "and",
    "or",
    "in",
    "for",
    "return",
    "if",
    "then",
    "else",
    "some",
    "every",
    "satisfies",
    "between",
    "instance",
    "of",
    "function",
    "external",
    "true",
    "false",
    "null",
];

fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

/// Extra knowledge the parser can use.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Names with spaces or the symbols `. / - + * '` that the surrounding model declares
    /// (DMN input data, decisions, business knowledge models, context entries). They are
    /// read as one name wherever they occur.
    pub known_names: Vec<String>,
    /// Named types (DMN item definitions) usable after `instance of` and in typed
    /// parameters.
    pub types: HashMap<String, FeelType>,
}

pub struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Set while parsing the upper end of a range, where `[` closes the range rather than
    /// starting a filter (`[1..10[`).
    no_filter: bool,
    types: &'a HashMap<String, FeelType>,
}

type PResult<T> = Result<T, ParseError>;

/// Sorts known names longest first (the lexer takes the first, longest, match) and keeps
/// only those the plain word-joining would not find anyway.
fn prepare_known(opts: &ParseOptions) -> Vec<String> {
    let plain: std::collections::HashSet<&str> =
        opts.known_names.iter().map(String::as_str).collect();
    let mut known: Vec<String> = opts
        .known_names
        .iter()
        .filter(|n| n.chars().any(|c| !crate::lexer::is_name_part(c)) || n.contains(' '))
        .filter(|n| !n.trim().is_empty())
        // A dotted name whose head is itself a name (`Person.Gender` as a parameter next
        // to the input `Person`, `import.Decision`) stays a path for the lexer; the
        // evaluator falls back to the dotted name when the path's root does not exist.
        .filter(|n| match n.split_once('.') {
            Some((head, _)) => !plain.contains(head.trim()),
            None => true,
        })
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    known.sort_by_key(|n| std::cmp::Reverse(n.len()));
    known.dedup();
    known
}

pub fn parse_expression(src: &str, opts: &ParseOptions) -> PResult<Node> {
    let known = prepare_known(opts);
    let toks = Lexer::new(src, &known).tokenize()?;
    let mut p = Parser::new(src, toks, &opts.types);
    let node = p.expression()?;
    p.expect_eof()?;
    Ok(node)
}

/// A type expression (`number`, `list<string>`, `context<a: number>`, a named type).
pub fn parse_type(src: &str, opts: &ParseOptions) -> PResult<FeelType> {
    let known = prepare_known(opts);
    let toks = Lexer::new(src, &known).tokenize()?;
    let mut p = Parser::new(src, toks, &opts.types);
    let t = p.type_expr()?;
    p.expect_eof()?;
    Ok(t)
}

pub fn parse_unary_tests(src: &str, opts: &ParseOptions) -> PResult<Vec<UnaryTest>> {
    let known = prepare_known(opts);
    let toks = Lexer::new(src, &known).tokenize()?;
    let mut p = Parser::new(src, toks, &opts.types);
    let tests = p.unary_tests()?;
    p.expect_eof()?;
    Ok(tests)
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, toks: Vec<Token>, types: &'a HashMap<String, FeelType>) -> Parser<'a> {
        Parser {
            src,
            toks,
            pos: 0,
            depth: 0,
            no_filter: false,
            types,
        }
    }

    // ---- token helpers ----

    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].tok
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }

    fn start(&self) -> u32 {
        self.toks[self.pos.min(self.toks.len() - 1)].start as u32
    }

    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.toks[(self.pos - 1).min(self.toks.len() - 1)].end as u32
        }
    }

    fn advance(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.advance();
            true
        } else {
            false
        }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Name { text, complete: false } if text == w)
    }

    fn is_word_at(&self, n: usize, w: &str) -> bool {
        matches!(self.peek_at(n), Tok::Name { text, complete: false } if text == w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn error_here(&self, msg: impl Into<String>) -> ParseError {
        ParseError::new(self.src, self.start() as usize, msg)
    }

    fn unexpected(&self, expected: &str) -> ParseError {
        let found = describe(self.peek());
        self.error_here(format!("expected {expected} but found {found}"))
    }

    fn expect(&mut self, t: &Tok, what: &str) -> PResult<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    fn expect_word(&mut self, w: &str) -> PResult<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{w}'")))
        }
    }

    fn expect_eof(&self) -> PResult<()> {
        if matches!(self.peek(), Tok::Eof) {
            Ok(())
        } else {
            Err(self.unexpected("end of expression"))
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_here(format!(
                "expression is nested too deeply (more than {MAX_DEPTH} levels)"
            )));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn node(&self, kind: Kind, start: u32) -> PResult<Node> {
        let mut node = Node {
            kind,
            start,
            end: self.prev_end().max(start),
            height: 1,
        };
        let h = height(&node);
        node.height = h.min(u16::MAX as usize) as u16;
        if h > MAX_DEPTH {
            return Err(ParseError::new(
                self.src,
                start as usize,
                format!("expression is nested too deeply (more than {MAX_DEPTH} levels)"),
            ));
        }
        Ok(node)
    }

    // ---- expressions ----

    pub fn expression(&mut self) -> PResult<Node> {
        self.enter()?;
        let r = self.textual();
        self.leave();
        r
    }

    /// `if`, `for`, `some`/`every`, `function`, or an operator expression. Each form has
    /// its own method so the recursive path keeps small stack frames (the parser recurses
    /// once per nesting level; debug builds make fat frames expensive).
    fn textual(&mut self) -> PResult<Node> {
        if self.is_word("if") {
            return self.if_expression();
        }
        if self.is_word("for") && matches!(self.peek_at(1), Tok::Name { .. }) {
            return self.for_expression();
        }
        if (self.is_word("some") || self.is_word("every"))
            && matches!(self.peek_at(1), Tok::Name { .. })
        {
            return self.quantified_expression();
        }
        if self.is_word("function") && matches!(self.peek_at(1), Tok::LParen) {
            return self.function_definition();
        }
        self.binary(0)
    }

    fn if_expression(&mut self) -> PResult<Node> {
        let start = self.start();
        self.advance();
        let c = self.expression()?;
        self.expect_word("then")?;
        let t = self.expression()?;
        self.expect_word("else")?;
        let e = self.expression()?;
        self.node(Kind::If(Box::new(c), Box::new(t), Box::new(e)), start)
    }

    fn for_expression(&mut self) -> PResult<Node> {
        let start = self.start();
        self.advance();
        let iterations = self.iterations(true)?;
        self.expect_word("return")?;
        let body = self.expression()?;
        let uses_partial = mentions_var(&body, "partial");
        self.node(
            Kind::For {
                iterations,
                body: Box::new(body),
                uses_partial,
            },
            start,
        )
    }

    fn quantified_expression(&mut self) -> PResult<Node> {
        let start = self.start();
        let q = if self.is_word("some") {
            Quantifier::Some
        } else {
            Quantifier::Every
        };
        self.advance();
        let iterations = self.iterations(false)?;
        self.expect_word("satisfies")?;
        let body = self.expression()?;
        self.node(Kind::Quantified(q, iterations, Box::new(body)), start)
    }

    fn iterations(&mut self, allow_range: bool) -> PResult<Vec<Iteration>> {
        let mut out = Vec::new();
        loop {
            let name = self.name("a variable name")?;
            self.expect_word("in")?;
            let source = self.expression()?;
            let range_end = if allow_range && self.eat(&Tok::DotDot) {
                Some(self.expression()?)
            } else {
                None
            };
            out.push(Iteration {
                name,
                source,
                range_end,
            });
            if !self.eat(&Tok::Comma) {
                return Ok(out);
            }
        }
    }

    fn function_definition(&mut self) -> PResult<Node> {
        let start = self.start();
        self.advance();
        self.expect(&Tok::LParen, "'('")?;
        let mut params = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                let name = self.name("a parameter name")?;
                let ty = if self.eat(&Tok::Colon) {
                    Some(self.type_expr()?)
                } else {
                    None
                };
                params.push(Param { name, ty });
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(&Tok::Comma, "',' or ')'")?;
            }
        }
        let external = self.eat_word("external");
        let body = self.expression()?;
        self.node(
            Kind::Function(Arc::new(FunctionDef {
                params,
                body,
                external,
            })),
            start,
        )
    }

    /// The binary operator at the cursor with its precedence (higher binds tighter).
    fn binary_op(&self) -> Option<(u8, BinOp)> {
        Some(match self.peek() {
            Tok::Name {
                text,
                complete: false,
            } => match text.as_str() {
                "or" => (1, BinOp::Or),
                "and" => (2, BinOp::And),
                "between" => (3, BinOp::Between),
                "in" => (3, BinOp::In),
                "instance" if self.is_word_at(1, "of") => (3, BinOp::InstanceOf),
                _ => return None,
            },
            Tok::Eq => (3, BinOp::Compare(CmpOp::Eq)),
            Tok::Ne => (3, BinOp::Compare(CmpOp::Ne)),
            Tok::Lt => (3, BinOp::Compare(CmpOp::Lt)),
            Tok::Le => (3, BinOp::Compare(CmpOp::Le)),
            Tok::Gt => (3, BinOp::Compare(CmpOp::Gt)),
            Tok::Ge => (3, BinOp::Compare(CmpOp::Ge)),
            Tok::Plus => (4, BinOp::Arith(ArithOp::Add)),
            Tok::Minus => (4, BinOp::Arith(ArithOp::Sub)),
            Tok::Star => (5, BinOp::Arith(ArithOp::Mul)),
            Tok::Slash => (5, BinOp::Arith(ArithOp::Div)),
            Tok::StarStar => (6, BinOp::Arith(ArithOp::Pow)),
            _ => return None,
        })
    }

    /// Operator expressions by precedence climbing: all levels share one loop, so a nesting
    /// level costs one frame here instead of one per precedence level. Every binary
    /// operator is left-associative (`3 ** 4 ** 5 = 81 ** 5`, as the DMN TCK expects).
    fn binary(&mut self, min_prec: u8) -> PResult<Node> {
        let start = self.start();
        let mut left = self.unary()?;
        while let Some((prec, op)) = self.binary_op() {
            if prec < min_prec {
                break;
            }
            left = self.binary_rest(prec, op, left, start)?;
        }
        Ok(left)
    }

    fn binary_rest(&mut self, prec: u8, op: BinOp, left: Node, start: u32) -> PResult<Node> {
        self.advance();
        let kind = match op {
            BinOp::Or => Kind::Or(Box::new(left), Box::new(self.binary(prec + 1)?)),
            BinOp::And => Kind::And(Box::new(left), Box::new(self.binary(prec + 1)?)),
            BinOp::Compare(c) => Kind::Compare(c, Box::new(left), Box::new(self.binary(prec + 1)?)),
            BinOp::Arith(a) => Kind::Arith(a, Box::new(left), Box::new(self.binary(prec + 1)?)),
            BinOp::Between => {
                let low = self.binary(4)?;
                self.expect_word("and")?;
                let high = self.binary(4)?;
                Kind::Between(Box::new(left), Box::new(low), Box::new(high))
            }
            BinOp::In => Kind::In(Box::new(left), self.in_tests()?),
            BinOp::InstanceOf => {
                self.advance();
                Kind::InstanceOf(Box::new(left), self.type_expr()?)
            }
        };
        self.node(kind, start)
    }

    /// The right side of `in`: `(t1, t2, ...)` or a single positive unary test.
    fn in_tests(&mut self) -> PResult<Vec<UnaryTest>> {
        self.enter()?;
        let r = self.in_tests_inner();
        self.leave();
        r
    }

    fn in_tests_inner(&mut self) -> PResult<Vec<UnaryTest>> {
        if matches!(self.peek(), Tok::LParen) {
            // `(1..5)` is a range; `(1, 2, 3)` a list of tests; `(x)` a single test.
            let save = self.pos;
            self.advance();
            let first = self.positive_unary_test()?;
            if matches!(self.peek(), Tok::DotDot) {
                self.pos = save;
                return Ok(vec![self.positive_unary_test()?]);
            }
            let mut tests = vec![first];
            while self.eat(&Tok::Comma) {
                tests.push(self.positive_unary_test()?);
            }
            self.expect(&Tok::RParen, "')'")?;
            return Ok(tests);
        }
        Ok(vec![self.positive_unary_test()?])
    }

    fn unary(&mut self) -> PResult<Node> {
        if matches!(self.peek(), Tok::Minus) {
            return self.negation();
        }
        self.postfix()
    }

    fn negation(&mut self) -> PResult<Node> {
        let start = self.start();
        self.advance();
        self.enter()?;
        let inner = self.unary();
        self.leave();
        let inner = inner?;
        // Fold negative number literals so `-1` is a constant.
        if let Kind::Literal(Value::Number(n)) = &inner.kind {
            return self.node(Kind::Literal(Value::Number(n.negated())), start);
        }
        self.node(Kind::Neg(Box::new(inner)), start)
    }

    fn postfix(&mut self) -> PResult<Node> {
        let start = self.start();
        let mut node = self.primary()?;
        loop {
            node = match self.peek() {
                Tok::LBracket if !self.no_filter => self.filter_postfix(node, start)?,
                Tok::Dot => self.path_postfix(node, start)?,
                Tok::LParen => self.call_postfix(node, start)?,
                _ => return Ok(node),
            };
        }
    }

    fn filter_postfix(&mut self, target: Node, start: u32) -> PResult<Node> {
        self.advance();
        let saved = std::mem::replace(&mut self.no_filter, false);
        let cond = self.expression();
        self.no_filter = saved;
        let cond = cond?;
        self.expect(&Tok::RBracket, "']'")?;
        self.node(Kind::Filter(Box::new(target), Box::new(cond)), start)
    }

    fn path_postfix(&mut self, target: Node, start: u32) -> PResult<Node> {
        self.advance();
        let name = self.name("a name after '.'")?;
        self.node(Kind::Path(Box::new(target), name), start)
    }

    fn call_postfix(&mut self, callee: Node, start: u32) -> PResult<Node> {
        let args = self.arguments()?;
        if let Kind::Var(name) = &callee.kind
            && let Some(b) = crate::builtins::lookup(name)
        {
            return self.node(Kind::CallBuiltin(b, name.clone(), args), start);
        }
        self.node(Kind::Call(Box::new(callee), args), start)
    }

    fn arguments(&mut self) -> PResult<Args> {
        self.expect(&Tok::LParen, "'('")?;
        let saved = std::mem::replace(&mut self.no_filter, false);
        let r = self.arguments_inner();
        self.no_filter = saved;
        r
    }

    fn arguments_inner(&mut self) -> PResult<Args> {
        if self.eat(&Tok::RParen) {
            return Ok(Args::Positional(Vec::new()));
        }
        if self.named_argument_ahead() {
            let mut named = Vec::new();
            loop {
                let name = self.name("a parameter name")?;
                self.expect(&Tok::Colon, "':'")?;
                let value = self.expression()?;
                named.push((name, value));
                if self.eat(&Tok::RParen) {
                    return Ok(Args::Named(named));
                }
                self.expect(&Tok::Comma, "',' or ')'")?;
            }
        }
        let mut positional = Vec::new();
        loop {
            positional.push(self.expression()?);
            if self.eat(&Tok::RParen) {
                return Ok(Args::Positional(positional));
            }
            self.expect(&Tok::Comma, "',' or ')'")?;
        }
    }

    /// `name:` or `multi word name:` at the current position.
    fn named_argument_ahead(&self) -> bool {
        let mut i = 0;
        while matches!(self.peek_at(i), Tok::Name { .. }) {
            i += 1;
        }
        i > 0 && matches!(self.peek_at(i), Tok::Colon)
    }

    /// A name, joining consecutive plain words (`string length`, `Monthly Income`).
    fn name(&mut self, what: &str) -> PResult<Name> {
        match self.peek().clone() {
            Tok::Name { text, complete } => {
                self.advance();
                let mut full = text;
                if !complete && !is_keyword(&full) {
                    while let Tok::Name {
                        text: next,
                        complete: false,
                    } = self.peek()
                    {
                        if is_keyword(next) {
                            break;
                        }
                        full.push(' ');
                        full.push_str(next);
                        self.advance();
                    }
                }
                Ok(Name::from(full))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn primary(&mut self) -> PResult<Node> {
        match self.peek() {
            Tok::Number(_) => self.number_literal(),
            Tok::String(_) => self.string_literal(),
            Tok::At => self.at_literal(),
            Tok::Question => {
                let start = self.start();
                self.advance();
                self.node(Kind::Input, start)
            }
            Tok::LParen => self.nested(Self::paren_or_range),
            Tok::LBracket => self.nested(Self::list_or_range),
            // `]a..b]`: a range with an open start.
            Tok::RBracket => self.nested(Self::open_start_range),
            Tok::LBrace => self.nested(Self::context),
            Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::Eq | Tok::Ne => self.unary_comparison(),
            Tok::Name { .. } => self.name_primary(),
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// A bracketed construct: consumes the opening token, counts the nesting level, and
    /// re-enables filters inside (they may be off while reading a range's upper end).
    fn nested(&mut self, inner: fn(&mut Self, u32) -> PResult<Node>) -> PResult<Node> {
        let start = self.start();
        self.advance();
        self.enter()?;
        let saved = std::mem::replace(&mut self.no_filter, false);
        let r = inner(self, start);
        self.no_filter = saved;
        self.leave();
        r
    }

    fn number_literal(&mut self) -> PResult<Node> {
        let start = self.start();
        let Tok::Number(text) = self.advance() else {
            return Err(self.unexpected("a number"));
        };
        let n = Number::parse(&text)
            .ok_or_else(|| ParseError::new(self.src, start as usize, "invalid number"))?;
        self.node(Kind::Literal(Value::Number(n)), start)
    }

    fn string_literal(&mut self) -> PResult<Node> {
        let start = self.start();
        let Tok::String(s) = self.advance() else {
            return Err(self.unexpected("a string"));
        };
        self.node(Kind::Literal(Value::string(s)), start)
    }

    fn at_literal(&mut self) -> PResult<Node> {
        let start = self.start();
        self.advance();
        let Tok::String(s) = self.peek().clone() else {
            return Err(self.unexpected("a string after '@'"));
        };
        self.advance();
        let v = temporal_literal(&s).ok_or_else(|| {
            ParseError::new(
                self.src,
                start as usize,
                format!("'@\"{s}\"' is not a valid date, time, date and time or duration"),
            )
        })?;
        self.node(Kind::Literal(v), start)
    }

    fn open_start_range(&mut self, start: u32) -> PResult<Node> {
        let low = self.expression()?;
        self.range_rest(start, low, false)
    }

    /// `< 10` and friends in expression position: a range with one open side.
    fn unary_comparison(&mut self) -> PResult<Node> {
        let start = self.start();
        let op = match self.advance() {
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            Tok::Eq => CmpOp::Eq,
            _ => CmpOp::Ne,
        };
        self.enter()?;
        let endpoint = self.binary(4);
        self.leave();
        self.node(Kind::UnaryRange(op, Box::new(endpoint?)), start)
    }

    fn name_primary(&mut self) -> PResult<Node> {
        let start = self.start();
        if let Tok::Name {
            text,
            complete: false,
        } = self.peek()
        {
            let literal = match text.as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                "null" => Some(Value::Null),
                _ => None,
            };
            if let Some(v) = literal {
                self.advance();
                return self.node(Kind::Literal(v), start);
            }
            match text.as_str() {
                "function" if matches!(self.peek_at(1), Tok::LParen) => {
                    self.enter()?;
                    let r = self.function_definition();
                    self.leave();
                    return r;
                }
                "if" | "for" | "some" | "every" => {
                    self.enter()?;
                    let r = self.textual();
                    self.leave();
                    return r;
                }
                // Camunda's `and(list)` / `or(list)` functions.
                "and" | "or" if matches!(self.peek_at(1), Tok::LParen) => {}
                w if is_keyword(w) => {
                    let w = w.to_string();
                    return Err(self.error_here(format!("unexpected keyword '{w}'")));
                }
                _ => {}
            }
        }
        let name = self.name("a name")?;
        self.node(Kind::Var(name), start)
    }

    fn paren_or_range(&mut self, start: u32) -> PResult<Node> {
        let inner = self.expression()?;
        if matches!(self.peek(), Tok::DotDot) {
            return self.range_rest(start, inner, false);
        }
        self.expect(&Tok::RParen, "')'")?;
        Ok(inner)
    }

    fn list_or_range(&mut self, start: u32) -> PResult<Node> {
        if self.eat(&Tok::RBracket) {
            return self.node(Kind::List(Vec::new()), start);
        }
        let first = self.expression()?;
        if matches!(self.peek(), Tok::DotDot) {
            return self.range_rest(start, first, true);
        }
        let mut items = vec![first];
        while self.eat(&Tok::Comma) {
            items.push(self.expression()?);
        }
        self.expect(&Tok::RBracket, "']' or ','")?;
        self.node(Kind::List(items), start)
    }

    /// After the start of a range: `.. end` and the closing bracket.
    fn range_rest(&mut self, start: u32, low: Node, start_closed: bool) -> PResult<Node> {
        self.expect(&Tok::DotDot, "'..'")?;
        let saved = std::mem::replace(&mut self.no_filter, true);
        let high = self.binary(4);
        self.no_filter = saved;
        let high = high?;
        let end_closed = match self.advance() {
            Tok::RBracket => true,
            Tok::RParen | Tok::LBracket => false,
            _ => {
                self.pos -= 1;
                return Err(self.unexpected("']', ')' or '[' to close the range"));
            }
        };
        self.node(
            Kind::Range {
                start: Some(Box::new(low)),
                start_closed,
                end: Some(Box::new(high)),
                end_closed,
            },
            start,
        )
    }

    fn context(&mut self, start: u32) -> PResult<Node> {
        let mut entries: Vec<(Name, Node)> = Vec::new();
        if self.eat(&Tok::RBrace) {
            return self.node(Kind::Context(entries), start);
        }
        loop {
            let key_at = self.start();
            let key: Name = match self.peek().clone() {
                Tok::String(s) => {
                    self.advance();
                    Name::from(s)
                }
                Tok::Name { .. } => self.context_key()?,
                _ => return Err(self.unexpected("a context key")),
            };
            self.expect(&Tok::Colon, "':'")?;
            let value = self.expression()?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(ParseError::new(
                    self.src,
                    key_at as usize,
                    format!("duplicate context key '{key}'"),
                ));
            }
            entries.push((key, value));
            if self.eat(&Tok::RBrace) {
                return self.node(Kind::Context(entries), start);
            }
            self.expect(&Tok::Comma, "',' or '}'")?;
        }
    }

    /// Context keys may be any words, keywords included (`{if: 1}` is odd but legal), and
    /// the name symbols `+ - * / .` (`{foo+bar: 1}`): everything up to the colon.
    fn context_key(&mut self) -> PResult<Name> {
        let first = self.pos;
        let mut i = self.pos;
        while matches!(
            self.toks[i.min(self.toks.len() - 1)].tok,
            Tok::Name { .. }
                | Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::Dot
                | Tok::Number(_)
        ) {
            i += 1;
        }
        if i == first || !matches!(self.toks[i.min(self.toks.len() - 1)].tok, Tok::Colon) {
            return Err(self.unexpected("a context key"));
        }
        let start = self.toks[first].start;
        let end = self.toks[i - 1].end;
        self.pos = i;
        let text = self.src[start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Name::from(text))
    }

    // ---- types ----

    fn type_expr(&mut self) -> PResult<FeelType> {
        self.enter()?;
        let r = self.type_inner();
        self.leave();
        r
    }

    fn type_inner(&mut self) -> PResult<FeelType> {
        let at = self.start();
        let Tok::Name { text, complete } = self.peek().clone() else {
            return Err(self.unexpected("a type"));
        };
        self.advance();
        let mut name = text;
        if !complete {
            // Join words while the result can still become a known type name; this reads
            // `date and time` and `years and months duration` despite the keyword `and`.
            while let Tok::Name { text: next, .. } = self.peek().clone() {
                let candidate = format!("{name} {next}");
                if TYPE_NAMES.iter().any(|t| t.starts_with(&candidate))
                    || self.types.keys().any(|t| t.starts_with(&candidate))
                {
                    name = candidate;
                    self.advance();
                } else {
                    break;
                }
            }
        }
        let generic = matches!(self.peek(), Tok::Lt);
        match name.as_str() {
            "list" | "range" if generic => {
                self.advance();
                let inner = self.type_expr()?;
                self.expect(&Tok::Gt, "'>'")?;
                Ok(if name == "list" {
                    FeelType::List(Box::new(inner))
                } else {
                    FeelType::Range(Box::new(inner))
                })
            }
            "context" if generic => {
                self.advance();
                let mut entries = Vec::new();
                loop {
                    let key = self.name("a context entry name")?;
                    self.expect(&Tok::Colon, "':'")?;
                    entries.push((key, self.type_expr()?));
                    if self.eat(&Tok::Gt) {
                        break;
                    }
                    self.expect(&Tok::Comma, "',' or '>'")?;
                }
                Ok(FeelType::Context(entries))
            }
            "function" if generic => {
                self.advance();
                let mut params = Vec::new();
                if !self.eat(&Tok::Gt) {
                    loop {
                        params.push(self.type_expr()?);
                        if self.eat(&Tok::Gt) {
                            break;
                        }
                        self.expect(&Tok::Comma, "',' or '>'")?;
                    }
                }
                self.expect(&Tok::Arrow, "'->'")?;
                let result = self.type_expr()?;
                Ok(FeelType::Function(Some(params), Box::new(result)))
            }
            _ => {
                if let Some(t) = self.types.get(&name) {
                    return Ok(t.clone());
                }
                FeelType::by_name(&name).ok_or_else(|| {
                    ParseError::new(self.src, at as usize, format!("unknown type '{name}'"))
                })
            }
        }
    }

    // ---- unary tests ----

    fn unary_tests(&mut self) -> PResult<Vec<UnaryTest>> {
        if matches!(self.peek(), Tok::Minus) && matches!(self.peek_at(1), Tok::Eof) {
            self.advance();
            return Ok(vec![UnaryTest::Any]);
        }
        if self.is_word("not") && matches!(self.peek_at(1), Tok::LParen) {
            // `not(...)` negates the whole list only when it spans the entire input;
            // otherwise it is an ordinary call to the function `not`.
            let save = self.pos;
            self.advance();
            self.advance();
            if let Ok(inner) = self.positive_unary_tests_until_rparen()
                && matches!(self.peek(), Tok::Eof)
            {
                return Ok(vec![UnaryTest::Not(inner)]);
            }
            self.pos = save;
        }
        let mut tests = vec![self.positive_unary_test()?];
        while self.eat(&Tok::Comma) {
            tests.push(self.positive_unary_test()?);
        }
        Ok(tests)
    }

    fn positive_unary_tests_until_rparen(&mut self) -> PResult<Vec<UnaryTest>> {
        let mut tests = vec![self.positive_unary_test()?];
        while self.eat(&Tok::Comma) {
            tests.push(self.positive_unary_test()?);
        }
        self.expect(&Tok::RParen, "')'")?;
        Ok(tests)
    }

    fn positive_unary_test(&mut self) -> PResult<UnaryTest> {
        let op = match self.peek() {
            Tok::Lt => Some(CmpOp::Lt),
            Tok::Le => Some(CmpOp::Le),
            Tok::Gt => Some(CmpOp::Gt),
            Tok::Ge => Some(CmpOp::Ge),
            Tok::Eq => Some(CmpOp::Eq),
            Tok::Ne => Some(CmpOp::Ne),
            _ => None,
        };
        if let Some(op) = op {
            self.advance();
            let endpoint = self.expression()?;
            return Ok(UnaryTest::Compare(op, endpoint));
        }
        let node = self.expression()?;
        let uses_input = mentions_input(&node);
        Ok(UnaryTest::Expr { node, uses_input })
    }
}

#[derive(Clone, Copy)]
enum BinOp {
    Or,
    And,
    Compare(CmpOp),
    Arith(ArithOp),
    Between,
    In,
    InstanceOf,
}

const TYPE_NAMES: &[&str] = &[
    "date and time",
    "days and time duration",
    "years and months duration",
];

/// `@"..."`: a date, time, date and time or duration, decided by its shape.
fn temporal_literal(s: &str) -> Option<Value> {
    if s.starts_with('P') || s.starts_with("-P") {
        return match temporal::parse_duration(s)? {
            Duration::YearMonth(d) => Some(Value::YearMonthDuration(d)),
            Duration::DayTime(d) => Some(Value::DayTimeDuration(d)),
        };
    }
    if let Some(dt) = temporal::parse_date_time(s, 0).filter(|_| s.contains('T')) {
        return Some(Value::DateTime(dt));
    }
    if let Some(d) = temporal::parse_date(s) {
        return Some(Value::Date(d));
    }
    temporal::parse_time(s, crate::eval::TIME_ZONE_REFERENCE_SECS).map(Value::Time)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Eof => "end of expression".into(),
        Tok::Number(n) => format!("'{n}'"),
        Tok::String(s) => format!("\"{s}\""),
        Tok::Name { text, .. } => format!("'{text}'"),
        other => format!("'{}'", symbol(other)),
    }
}

fn symbol(t: &Tok) -> &'static str {
    match t {
        Tok::At => "@",
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::LBracket => "[",
        Tok::RBracket => "]",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::Comma => ",",
        Tok::Dot => ".",
        Tok::DotDot => "..",
        Tok::Colon => ":",
        Tok::Question => "?",
        Tok::Plus => "+",
        Tok::Minus => "-",
        Tok::Star => "*",
        Tok::StarStar => "**",
        Tok::Slash => "/",
        Tok::Eq => "=",
        Tok::Ne => "!=",
        Tok::Lt => "<",
        Tok::Le => "<=",
        Tok::Gt => ">",
        Tok::Ge => ">=",
        Tok::Arrow => "->",
        _ => "?",
    }
}

/// Height of a freshly built node; its children carry their own heights.
fn height(node: &Node) -> usize {
    1 + node
        .children()
        .into_iter()
        .map(|c| c.height as usize)
        .max()
        .unwrap_or(0)
}

fn mentions_input(node: &Node) -> bool {
    matches!(node.kind, Kind::Input) || node.children().into_iter().any(mentions_input)
}

fn mentions_var(node: &Node, name: &str) -> bool {
    matches!(&node.kind, Kind::Var(v) if &**v == name)
        || node.children().into_iter().any(|c| mentions_var(c, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Node {
        parse_expression(s, &ParseOptions::default()).unwrap()
    }

    #[test]
    fn precedence() {
        let n = parse("1 + 2 * 3 > 4 and x or y");
        assert!(matches!(n.kind, Kind::Or(..)));
        let n = parse("-3 ** 2");
        assert!(matches!(n.kind, Kind::Arith(ArithOp::Pow, ..)));
    }

    #[test]
    fn multi_word_names_and_calls() {
        let n = parse("string length(\"abc\")");
        assert!(matches!(n.kind, Kind::CallBuiltin(b, _, _) if b.name == "string length"));
        let n = parse("my fn(1)");
        match n.kind {
            Kind::Call(callee, _) => {
                assert!(matches!(&callee.kind, Kind::Var(n) if &**n == "my fn"))
            }
            other => panic!("{other:?}"),
        }
        let n = parse("substring(string: \"foo\", start position: 2)");
        assert!(matches!(n.kind, Kind::CallBuiltin(_, _, Args::Named(ref a)) if a.len() == 2));
    }

    #[test]
    fn ranges_lists_filters() {
        assert!(matches!(
            parse("[1..10[").kind,
            Kind::Range {
                end_closed: false,
                ..
            }
        ));
        assert!(matches!(
            parse("]1..10]").kind,
            Kind::Range {
                start_closed: false,
                ..
            }
        ));
        assert!(matches!(parse("[1, 2][item > 1]").kind, Kind::Filter(..)));
        assert!(matches!(parse("x in (1..5)").kind, Kind::In(..)));
        assert!(matches!(parse("< 10").kind, Kind::UnaryRange(..)));
    }

    #[test]
    fn errors_carry_positions() {
        let e = parse_expression("1 +", &ParseOptions::default()).unwrap_err();
        assert_eq!(e.position.column, 4);
        let e = parse_expression("a b )", &ParseOptions::default()).unwrap_err();
        assert_eq!(e.position.column, 5);
        let deep = "(".repeat(100_000);
        assert!(parse_expression(&deep, &ParseOptions::default()).is_err());
        let long = vec!["1"; 10_000].join(" + ");
        assert!(parse_expression(&long, &ParseOptions::default()).is_err());
    }

    #[test]
    fn types() {
        let n = parse("x instance of list<date and time>");
        match n.kind {
            Kind::InstanceOf(_, t) => assert_eq!(t, FeelType::List(Box::new(FeelType::DateTime))),
            other => panic!("{other:?}"),
        }
    }
}
