//! The parser's machinery: a cursor over the significant tokens, markers, and the event list.
//!
//! The grammar (in `grammar/`) drives a [`Parser`] that never builds a tree itself: it records
//! `Start`/`Token`/`Finish` events, which [`crate::builder`] later turns into a rowan tree with the
//! trivia put back. A node is opened with [`Parser::start`] and closed with
//! [`Marker::complete`]; [`CompletedMarker::precede`] wraps an already finished node in a new
//! parent (how left-associative operators and postfix chains are built without lookahead).
//!
//! Invariants:
//! - every event list is balanced (a dropped `Marker` is a bug caught in debug builds, and a
//!   tombstone in release);
//! - nesting is bounded: [`Parser::enter`] counts recursion and refuses past the limits with
//!   `E-DEPTH`, so neither the parser's stack nor the tree's depth grows with the input;
//! - every loop in the grammar consumes a token or leaves, so parsing ends on any input (a
//!   debug-only fuel counter catches a grammar rule that would spin).

use std::cell::Cell;

use crate::SyntaxKind::{self, *};
use crate::error::ErrorCode;
use crate::token_set::TokenSet;

/// How deep expressions may nest (language §1: "expression nesting depth 100", `E-DEPTH`).
pub const EXPRESSION_DEPTH_LIMIT: u32 = 100;
/// How deep blocks and other statement-level constructs may nest before `E-DEPTH`.
pub const BLOCK_DEPTH_LIMIT: u32 = 100;
/// How deep types may nest (`ro<Option[Option[…]]>`) before `E-DEPTH`.
pub const TYPE_DEPTH_LIMIT: u32 = 100;

/// The significant tokens as the parser sees them.
pub(crate) struct ParserInput<'t> {
    pub kinds: Vec<SyntaxKind>,
    pub texts: Vec<&'t str>,
    pub joint: Vec<bool>,
    pub line_start: Vec<bool>,
}

/// What the parser emits; see the module comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// Opens a node. `forward_parent` is the distance to a later `Start` that must be opened
    /// *before* this one (set by `precede`). A `Start` with kind `TOMBSTONE` opens nothing.
    Start {
        kind: SyntaxKind,
        forward_parent: Option<u32>,
    },
    Finish,
    /// Consumes the next significant token, giving it `kind` (contextual words are re-kinded).
    Token {
        kind: SyntaxKind,
    },
}

/// The kind of an abandoned `Start`.
pub(crate) const TOMBSTONE: SyntaxKind = SyntaxKind::__LAST;

/// An error found by the grammar, located by the significant tokens it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub code: ErrorCode,
    pub message: String,
    /// Index of the first significant token covered (may equal the token count: end of input).
    pub first_token: usize,
    /// Index one past the last significant token covered (`first_token` for a point error).
    pub end_token: usize,
    /// A point just after `first_token` (a `;` missing at the end of a line is reported where
    /// it belongs, not at the next line's first token).
    pub after: bool,
}

/// The kinds of nesting that [`Parser::enter`] bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nesting {
    Expression,
    Block,
    Type,
}

pub(crate) struct Parser<'t> {
    kinds: &'t [SyntaxKind],
    texts: &'t [&'t str],
    /// Per significant token: no trivia separates it from the previous one.
    joint: &'t [bool],
    /// Per significant token: a line break precedes it (or it is the first token).
    line_start: &'t [bool],
    pos: usize,
    last_bumped: Option<SyntaxKind>,
    events: Vec<Event>,
    errors: Vec<ParseError>,
    expression_depth: u32,
    /// How deep the expression tree is: nesting levels plus operator-chain links.
    expression_tree_depth: u32,
    block_depth: u32,
    type_depth: u32,
    /// Set while parsing a recipe body, where `$` splices are legal.
    pub(crate) in_recipe: bool,
    fuel: Cell<u32>,
}

/// How many look-aheads may happen without consuming a token before the parser counts as stuck
/// (debug builds): deep nesting unwinding at one token legitimately looks many times.
const FUEL: u32 = 20_000;

impl<'t> Parser<'t> {
    pub(crate) fn new(input: &'t ParserInput<'t>) -> Parser<'t> {
        Parser {
            kinds: &input.kinds,
            texts: &input.texts,
            joint: &input.joint,
            line_start: &input.line_start,
            pos: 0,
            last_bumped: None,
            events: Vec::with_capacity(input.kinds.len() * 2 + 2),
            errors: Vec::new(),
            expression_depth: 0,
            expression_tree_depth: 0,
            block_depth: 0,
            type_depth: 0,
            in_recipe: false,
            fuel: Cell::new(FUEL),
        }
    }

    pub(crate) fn finish(self) -> (Vec<Event>, Vec<ParseError>) {
        (self.events, self.errors)
    }

    /// The kind of the current significant token (`EOF` past the end).
    pub(crate) fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    /// The kind of the significant token `n` places ahead.
    pub(crate) fn nth(&self, n: usize) -> SyntaxKind {
        let fuel = self.fuel.get();
        debug_assert!(fuel > 0, "the parser is stuck at token {}", self.pos);
        self.fuel.set(fuel.saturating_sub(1));
        self.kinds.get(self.pos + n).copied().unwrap_or(EOF)
    }

    /// The text of the significant token `n` places ahead ("" past the end).
    pub(crate) fn nth_text(&self, n: usize) -> &'t str {
        self.texts.get(self.pos + n).copied().unwrap_or("")
    }

    pub(crate) fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    pub(crate) fn nth_at(&self, n: usize, kind: SyntaxKind) -> bool {
        self.nth(n) == kind
    }

    pub(crate) fn at_ts(&self, set: TokenSet) -> bool {
        set.contains(self.current())
    }

    pub(crate) fn at_end(&self) -> bool {
        self.at(EOF)
    }

    /// True when the current token is the identifier `word` (a contextual word not yet re-kinded).
    pub(crate) fn at_contextual(&self, word: &str) -> bool {
        self.nth_contextual(0, word)
    }

    pub(crate) fn nth_contextual(&self, n: usize, word: &str) -> bool {
        self.nth(n) == IDENT && self.nth_text(n) == word
    }

    /// Index of the current significant token.
    pub(crate) fn token_index(&self) -> usize {
        self.pos
    }

    /// True when no whitespace or comment separates the token `n` ahead from the one before it.
    pub(crate) fn nth_is_joint(&self, n: usize) -> bool {
        self.joint.get(self.pos + n).copied().unwrap_or(false)
    }

    /// True when the current token is the first on its line.
    pub(crate) fn at_line_start(&self) -> bool {
        self.line_start.get(self.pos).copied().unwrap_or(true)
    }

    /// The kind (as re-kinded) of the last token consumed.
    pub(crate) fn last_bumped(&self) -> Option<SyntaxKind> {
        self.last_bumped
    }

    /// Consumes the current token as `kind` if it is `kind`.
    pub(crate) fn eat(&mut self, kind: SyntaxKind) -> bool {
        if !self.at(kind) {
            return false;
        }
        self.do_bump(kind);
        true
    }

    /// Consumes the contextual word `word` as the keyword `kind` if it is current.
    pub(crate) fn eat_contextual(&mut self, word: &str, kind: SyntaxKind) -> bool {
        if !self.at_contextual(word) {
            return false;
        }
        self.do_bump(kind);
        true
    }

    /// Consumes the current token, which must be `kind`.
    pub(crate) fn bump(&mut self, kind: SyntaxKind) {
        let eaten = self.eat(kind);
        debug_assert!(eaten, "bump of {kind:?} at {:?}", self.current());
        if !eaten {
            self.bump_any();
        }
    }

    /// Consumes the current token whatever it is (nothing at the end of input).
    pub(crate) fn bump_any(&mut self) {
        let kind = self.current();
        if kind != EOF {
            self.do_bump(kind);
        }
    }

    /// Consumes the current token and gives it `kind` (contextual words, `$` splices).
    pub(crate) fn bump_remap(&mut self, kind: SyntaxKind) {
        if !self.at_end() {
            self.do_bump(kind);
        }
    }

    fn do_bump(&mut self, kind: SyntaxKind) {
        self.last_bumped = Some(kind);
        self.pos += 1;
        self.fuel.set(FUEL);
        self.events.push(Event::Token { kind });
    }

    /// Opens a node at the current position.
    pub(crate) fn start(&mut self) -> Marker {
        let pos = self.events.len() as u32;
        self.events.push(Event::Start { kind: TOMBSTONE, forward_parent: None });
        Marker::new(pos)
    }

    /// Records an error at the current token.
    pub(crate) fn error(&mut self, code: ErrorCode, message: impl Into<String>) {
        let at = self.pos.min(self.kinds.len());
        self.push_error(code, message.into(), at, at);
    }

    /// Records an error covering the significant tokens `first..end`.
    pub(crate) fn error_tokens(&mut self, code: ErrorCode, message: impl Into<String>, first: usize, end: usize) {
        self.push_error(code, message.into(), first, end);
    }

    fn push_error(&mut self, code: ErrorCode, message: String, first_token: usize, end_token: usize) {
        // One error per token is enough: a second complaint about the same spot is a knock-on.
        if let Some(last) = self.errors.last()
            && last.first_token == first_token
        {
            return;
        }
        self.errors.push(ParseError { code, message, first_token, end_token, after: false });
    }

    /// Records an error at the point just after the previous significant token (the current
    /// one when there is none).
    pub(crate) fn error_after_previous(&mut self, code: ErrorCode, message: impl Into<String>) {
        let Some(previous) = self.pos.checked_sub(1) else { return self.error(code, message) };
        if self.errors.last().is_some_and(|last| last.first_token == previous) {
            return;
        }
        self.errors.push(ParseError {
            code,
            message: message.into(),
            first_token: previous,
            end_token: previous,
            after: true,
        });
    }

    /// Consumes `kind` or reports `E-PARSE` saying what was expected.
    pub(crate) fn expect(&mut self, kind: SyntaxKind) -> bool {
        if self.eat(kind) {
            return true;
        }
        // A `;` missing at the end of a line: said there, not at the next line's first token.
        if kind == T![;] && self.pos > 0 && self.at_line_start() && !self.at_end() {
            let message = format!(
                "Expected `;` at the end of this line (the next line starts with {}).",
                self.describe_current()
            );
            self.error_after_previous(ErrorCode::Parse, message);
            return false;
        }
        let message =
            format!("Expected {} here, found {}.{}", describe_kind(kind), self.describe_current(), self.habit_hint());
        self.error(ErrorCode::Parse, message);
        false
    }

    /// A hint for tokens other languages use where CAIRN does not (`as`, `::`).
    fn habit_hint(&self) -> &'static str {
        if self.at(AS_KW) {
            " CAIRN has no `as`: convert with a call such as u64(x), which checks the range."
        } else if self.at(T![:]) && self.nth_at(1, T![:]) {
            " CAIRN has no `::`: a module's name is followed by `.`, as in vec.push, and a minimum is written as a literal such as -9223372036854775808."
        } else {
            ""
        }
    }

    /// Reports `E-PARSE` at the current token and wraps it in an `ERROR` node, unless it is one of
    /// `recovery` (which an enclosing rule will want) or the end of input.
    pub(crate) fn err_and_bump(&mut self, message: &str, recovery: TokenSet) {
        let message = format!("{message} Found {}.", self.describe_current());
        self.error(ErrorCode::Parse, message);
        if self.at_ts(recovery) || self.at_end() {
            return;
        }
        let m = self.start();
        self.bump_any();
        m.complete(self, ERROR);
    }

    /// A short description of the current token for messages: "`}`", "the word `fold`", "the end
    /// of the file".
    pub(crate) fn describe_current(&self) -> String {
        describe_token(self.current(), self.nth_text(0))
    }

    /// Enters one level of `nesting`. Returns `false`, after reporting `E-DEPTH` once for this
    /// spot, when the level would pass its limit; the caller must then skip what it was about to
    /// parse without recursing (see [`Parser::skip_too_deep`]).
    pub(crate) fn enter(&mut self, nesting: Nesting) -> bool {
        let (depth, limit, what) = match nesting {
            Nesting::Expression => (&mut self.expression_depth, EXPRESSION_DEPTH_LIMIT, "Expressions"),
            Nesting::Block => (&mut self.block_depth, BLOCK_DEPTH_LIMIT, "Blocks"),
            Nesting::Type => (&mut self.type_depth, TYPE_DEPTH_LIMIT, "Types"),
        };
        if *depth >= limit {
            let message = format!(
                "{what} nest deeper than {limit} levels here; bind inner parts to names or split the function."
            );
            self.error(ErrorCode::Depth, message);
            return false;
        }
        *depth += 1;
        if nesting == Nesting::Expression {
            self.expression_tree_depth += 1;
        }
        true
    }

    /// Leaves a level entered with [`Parser::enter`].
    pub(crate) fn leave(&mut self, nesting: Nesting) {
        let depth = match nesting {
            Nesting::Expression => &mut self.expression_depth,
            Nesting::Block => &mut self.block_depth,
            Nesting::Type => &mut self.type_depth,
        };
        debug_assert!(*depth > 0);
        *depth = depth.saturating_sub(1);
        if nesting == Nesting::Expression {
            self.expression_tree_depth = self.expression_tree_depth.saturating_sub(1);
        }
    }

    /// How deep the expression tree currently is (nesting levels and operator-chain links).
    pub(crate) fn expression_tree_depth(&self) -> u32 {
        self.expression_tree_depth
    }

    /// Adds `links` to the tree depth: a left-associative chain deepens the tree without
    /// recursing. Undone with [`Parser::unwind_expression_tree`].
    pub(crate) fn deepen_expression_tree(&mut self, links: u32) {
        self.expression_tree_depth += links;
    }

    pub(crate) fn unwind_expression_tree(&mut self, links: u32) {
        self.expression_tree_depth = self.expression_tree_depth.saturating_sub(links);
    }

    /// Skips, without recursion, the construct that starts here and was refused by
    /// [`Parser::enter`]: a bracketed group is skipped to its matching close; anything else up to
    /// the next `;`, `,`, `{` or unmatched closing bracket. The skipped tokens form one flat
    /// `ERROR` node, so the tree stays shallow however deep the input nests.
    pub(crate) fn skip_too_deep(&mut self) {
        let m = self.start();
        let mut balance: u32 = 0;
        let opened_with_bracket = matches!(self.current(), T!['('] | T!['['] | T!['{']);
        loop {
            match self.current() {
                EOF => break,
                T!['('] | T!['['] | T!['{'] if balance > 0 || opened_with_bracket => balance += 1,
                T!['{'] => break,
                T![')'] | T![']'] | T!['}'] => {
                    if balance == 0 {
                        break;
                    }
                    balance -= 1;
                    if balance == 0 && opened_with_bracket {
                        self.bump_any();
                        break;
                    }
                }
                T!['('] | T!['['] => balance += 1,
                T![;] | T![,] if balance == 0 => break,
                _ => {}
            }
            self.bump_any();
        }
        m.complete(self, ERROR);
    }
}

/// An open node; must be completed or abandoned.
pub(crate) struct Marker {
    pos: u32,
    bomb: DropBomb,
}

impl Marker {
    fn new(pos: u32) -> Marker {
        Marker { pos, bomb: DropBomb { armed: true } }
    }

    /// Closes the node with `kind`.
    pub(crate) fn complete(mut self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        self.bomb.armed = false;
        match &mut p.events[self.pos as usize] {
            Event::Start { kind: slot, .. } => *slot = kind,
            _ => unreachable!("a marker always points at a Start event"),
        }
        p.events.push(Event::Finish);
        CompletedMarker { pos: self.pos, kind }
    }

    /// Drops the node; its tokens go to the parent. Cheap when nothing was parsed after it.
    pub(crate) fn abandon(mut self, p: &mut Parser<'_>) {
        self.bomb.armed = false;
        let idx = self.pos as usize;
        if idx == p.events.len() - 1 {
            match p.events.pop() {
                Some(Event::Start { kind: TOMBSTONE, forward_parent: None }) => (),
                _ => unreachable!("abandoning a fresh marker"),
            }
        }
    }
}

/// A finished node, which may still be wrapped by [`CompletedMarker::precede`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompletedMarker {
    pos: u32,
    kind: SyntaxKind,
}

impl CompletedMarker {
    /// Opens a new node that will become the parent of this one.
    pub(crate) fn precede(self, p: &mut Parser<'_>) -> Marker {
        let new_pos = p.start();
        match &mut p.events[self.pos as usize] {
            Event::Start { forward_parent, .. } => *forward_parent = Some(new_pos.pos - self.pos),
            _ => unreachable!("a completed marker points at a Start event"),
        }
        new_pos
    }

    pub(crate) fn kind(&self) -> SyntaxKind {
        self.kind
    }
}

/// Catches, in debug builds, a marker that was neither completed nor abandoned.
struct DropBomb {
    armed: bool,
}

impl Drop for DropBomb {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            debug_assert!(false, "a marker must be completed or abandoned");
        }
    }
}

/// "`;`", "a name", "the end of the file": how a kind reads in "expected X" messages.
pub(crate) fn describe_kind(kind: SyntaxKind) -> String {
    match kind {
        IDENT => "a name".to_string(),
        INT_NUMBER => "an integer literal".to_string(),
        FLOAT_NUMBER => "a float literal".to_string(),
        STRING => "a string literal".to_string(),
        CHAR => "a character literal".to_string(),
        EOF => "the end of the file".to_string(),
        _ => match kind.fixed_text() {
            Some(text) => format!("`{text}`"),
            None => format!("{kind:?}"),
        },
    }
}

/// How the token `kind` with `text` reads in messages.
pub(crate) fn describe_token(kind: SyntaxKind, text: &str) -> String {
    match kind {
        EOF => "the end of the file".to_string(),
        IDENT => format!("the name `{text}`"),
        INT_NUMBER | FLOAT_NUMBER => format!("the number `{text}`"),
        STRING => "a string literal".to_string(),
        CHAR => "a character literal".to_string(),
        _ if kind.is_keyword() => format!("the reserved word `{text}`"),
        _ => format!("`{text}`"),
    }
}
