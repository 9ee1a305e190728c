//! Turns the parser's events back into a lossless rowan tree, putting the trivia back.
//!
//! The parser saw only significant tokens; here every raw token (whitespace, comments and the
//! lexer's error tokens included) is laid back in text order. Trivia between two tokens goes to
//! the innermost node open at that point, except that comments directly above a declaration (no
//! blank line between) go *inside* the declaration's node, where tooling finds them as its
//! documentation. Invariant: the concatenated token texts equal the input byte for byte.

use rowan::{GreenNode, GreenNodeBuilder, TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::error::SyntaxError;
use crate::lexer::Token;
use crate::parser::{Event, ParseError, TOMBSTONE};

/// The raw tokens of a text with their offsets, and which of them the parser saw.
pub(crate) struct TokenStream<'a> {
    pub text: &'a str,
    pub raw: &'a [Token],
    /// Start offset of every raw token, plus the text length at the end.
    pub raw_starts: Vec<u32>,
    /// Raw index of every significant token.
    pub significant: Vec<u32>,
}

impl<'a> TokenStream<'a> {
    pub(crate) fn new(text: &'a str, raw: &'a [Token]) -> TokenStream<'a> {
        let mut raw_starts = Vec::with_capacity(raw.len() + 1);
        let mut significant = Vec::with_capacity(raw.len() / 2 + 1);
        let mut offset = 0u32;
        for (i, token) in raw.iter().enumerate() {
            raw_starts.push(offset);
            if is_skipped(token.kind) {
                // not seen by the parser
            } else {
                significant.push(i as u32);
            }
            offset += u32::from(token.len);
        }
        raw_starts.push(offset);
        TokenStream { text, raw, raw_starts, significant }
    }

    pub(crate) fn raw_text(&self, raw_index: usize) -> &'a str {
        &self.text[self.raw_starts[raw_index] as usize..self.raw_starts[raw_index + 1] as usize]
    }

    /// The text range of the significant token `index`, or an empty range at the end of the text.
    pub(crate) fn significant_range(&self, index: usize) -> TextRange {
        match self.significant.get(index) {
            Some(&raw) => TextRange::new(
                TextSize::from(self.raw_starts[raw as usize]),
                TextSize::from(self.raw_starts[raw as usize + 1]),
            ),
            None => TextRange::empty(TextSize::of(self.text)),
        }
    }

    pub(crate) fn error_range(&self, error: &ParseError) -> TextRange {
        let first = self.significant_range(error.first_token);
        if error.after {
            return TextRange::empty(first.end());
        }
        if error.end_token <= error.first_token + 1 {
            return first;
        }
        let last = self.significant_range(error.end_token - 1);
        first.cover(last)
    }
}

/// Tokens the parser does not see: trivia and the lexer's error tokens (already reported).
pub(crate) fn is_skipped(kind: SyntaxKind) -> bool {
    kind.is_trivia() || kind == ERROR_TOKEN
}

/// Builds the tree. `events` must be balanced and open with the root node.
pub(crate) fn build(stream: &TokenStream<'_>, mut events: Vec<Event>) -> GreenNode {
    let mut builder = Builder { stream, raw_pos: 0, depth: 0, inner: GreenNodeBuilder::new() };
    let mut parents: Vec<SyntaxKind> = Vec::new();
    for i in 0..events.len() {
        match std::mem::replace(&mut events[i], Event::Start { kind: TOMBSTONE, forward_parent: None }) {
            Event::Start { kind: TOMBSTONE, forward_parent: None } => {}
            Event::Start { kind, forward_parent: None } => builder.start_node(kind),
            Event::Start { kind, forward_parent } => {
                // A chain of `precede`d nodes: the outermost opens first.
                parents.push(kind);
                let mut idx = i;
                let mut forward = forward_parent;
                while let Some(distance) = forward {
                    idx += distance as usize;
                    let taken =
                        std::mem::replace(&mut events[idx], Event::Start { kind: TOMBSTONE, forward_parent: None });
                    match taken {
                        Event::Start { kind, forward_parent } => {
                            if kind != TOMBSTONE {
                                parents.push(kind);
                            }
                            forward = forward_parent;
                        }
                        _ => unreachable!("forward parents point at Start events"),
                    }
                }
                while let Some(kind) = parents.pop() {
                    builder.start_node(kind);
                }
            }
            Event::Finish => builder.finish_node(),
            Event::Token { kind } => builder.token(kind),
        }
    }
    builder.inner.finish()
}

/// Converts parse errors to located syntax errors.
pub(crate) fn locate_errors(stream: &TokenStream<'_>, errors: Vec<ParseError>) -> Vec<SyntaxError> {
    errors
        .into_iter()
        .map(|error| {
            let range = stream.error_range(&error);
            SyntaxError::new(error.code, error.message, range)
        })
        .collect()
}

struct Builder<'s, 'a> {
    stream: &'s TokenStream<'a>,
    raw_pos: usize,
    depth: usize,
    inner: GreenNodeBuilder<'static>,
}

impl Builder<'_, '_> {
    fn start_node(&mut self, kind: SyntaxKind) {
        if self.depth > 0 {
            let pending = self.pending_trivia();
            let attached = if is_documented(kind) { self.attached_trivia(pending) } else { 0 };
            for _ in 0..pending - attached {
                self.raw_token();
            }
        }
        self.inner.start_node(kind.into());
        self.depth += 1;
    }

    fn finish_node(&mut self) {
        if self.depth == 1 {
            // The root keeps whatever trivia ends the file.
            while self.raw_pos < self.stream.raw.len() {
                self.raw_token();
            }
        }
        self.depth -= 1;
        self.inner.finish_node();
    }

    fn token(&mut self, kind: SyntaxKind) {
        let pending = self.pending_trivia();
        for _ in 0..pending {
            self.raw_token();
        }
        if self.raw_pos < self.stream.raw.len() {
            let text = self.stream.raw_text(self.raw_pos);
            self.inner.token(kind.into(), text);
            self.raw_pos += 1;
        }
    }

    /// How many skipped tokens lie before the next significant one.
    fn pending_trivia(&self) -> usize {
        self.stream.raw[self.raw_pos..].iter().take_while(|t| is_skipped(t.kind)).count()
    }

    /// Of the `pending` skipped tokens, how many at the end are the comments right above a
    /// declaration (with the single line breaks between them).
    fn attached_trivia(&self, pending: usize) -> usize {
        let mut attached = 0;
        for back in 0..pending {
            let raw = self.raw_pos + pending - 1 - back;
            match self.stream.raw[raw].kind {
                WHITESPACE => {
                    let text = self.stream.raw_text(raw);
                    if text.bytes().filter(|&b| b == b'\n').count() >= 2 {
                        break;
                    }
                }
                COMMENT => attached = back + 1,
                _ => break,
            }
        }
        attached
    }

    fn raw_token(&mut self) {
        let token = self.stream.raw[self.raw_pos];
        let text = self.stream.raw_text(self.raw_pos);
        self.inner.token(token.kind.into(), text);
        self.raw_pos += 1;
    }
}

/// Declarations whose preceding comments are their documentation.
fn is_documented(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        FN | EXTERN_FN
            | STRUCT
            | ENUM
            | CONST
            | TRAIT
            | TRAIT_MEMBER
            | IMPL
            | FAMILY
            | RECIPE
            | DERIVE
            | PLAN
            | TEST
            | LAYOUT
            | MODULE_DECL
            | IMPORT
            | FIELD
            | VARIANT
    )
}
