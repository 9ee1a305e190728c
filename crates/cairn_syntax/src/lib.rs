//! CAIRN syntax: the lexer, an event-based recursive-descent parser, lossless rowan trees and
//! typed AST wrappers.
//!
//! [`parse`] never fails: it returns a [`Parse`], a tree plus the errors met while building it.
//! The tree is lossless (its text is the input, byte for byte, for *any* input) and holds no
//! semantic data; errors live beside it, each with a stable code (`E-LEX`, `E-PARSE`, `E-NAME`,
//! `E-DEPTH`, …) and a byte range. Parsing is linear in the input, never recurses deeper than the
//! nesting limits (so 100,000 nested brackets are an `E-DEPTH` error, not a stack overflow), and
//! resynchronises at statements and declarations so that independent mistakes are all reported.
//!
//! This crate knows nothing of salsa, files or positions as lines; see `docs/syntax.md` for the
//! grammar decisions.

#[macro_use]
mod syntax_kind;
pub mod ast;
mod builder;
mod error;
pub mod format;
mod grammar;
mod lexer;
mod parallel;
mod parser;
mod reparse;
mod token_set;
mod trivia;
mod validation;

use std::sync::Arc;

pub use rowan::{GreenNode, GreenNodeData, NodeOrToken, TextRange, TextSize};

pub use crate::error::{ErrorCode, SyntaxError};
pub use crate::lexer::{Lexed, Token, first_token, lex};
pub use crate::parser::{BLOCK_DEPTH_LIMIT, EXPRESSION_DEPTH_LIMIT, TYPE_DEPTH_LIMIT};
pub use crate::reparse::{DeclarationReparse, Reparsed, TextEdit, reparse_declaration, splice_declarations};
pub use crate::syntax_kind::SyntaxKind;
pub use crate::trivia::{comment_lines_above, compact_text, first_significant_token};

use crate::builder::TokenStream;
use crate::parser::{Parser, ParserInput};

/// The rowan language of CAIRN trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CairnLanguage {}

impl rowan::Language for CairnLanguage {
    type Kind = SyntaxKind;

    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        // `ALL` lists the kinds in declaration order, so a kind's number is its index.
        SyntaxKind::ALL.get(raw.0 as usize).copied().unwrap_or(SyntaxKind::ERROR)
    }

    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}

pub type SyntaxNode = rowan::SyntaxNode<CairnLanguage>;
pub type SyntaxToken = rowan::SyntaxToken<CairnLanguage>;
pub type SyntaxElement = rowan::SyntaxElement<CairnLanguage>;
pub type SyntaxNodePtr = rowan::ast::SyntaxNodePtr<CairnLanguage>;

/// The result of parsing a text: a lossless green tree and the syntax errors, sorted by position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parse {
    green: GreenNode,
    errors: Arc<[SyntaxError]>,
    /// Parallel to `errors`: whether the error stops the original's lexer.
    hard: Arc<[bool]>,
    /// Index into `errors` of the first error that stops the lexer, if any.
    lexer_stop: Option<usize>,
}

impl Parse {
    /// The root of the tree (a `SOURCE_FILE` node).
    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    /// The typed root.
    pub fn tree(&self) -> ast::SourceFile {
        ast::SourceFile { syntax: self.syntax_node() }
    }

    /// The green tree, for storing in a database.
    pub fn green(&self) -> &GreenNode {
        &self.green
    }

    /// Every syntax error, in order of position.
    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// True when the text parsed without error.
    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// The error a front end that stops at the first refusal reports: a lexical error that stops
    /// the lexer (an unexpected character, an unterminated or empty literal) wherever it is,
    /// else the first error in the text.
    pub fn first_error(&self) -> Option<&SyntaxError> {
        self.lexer_stop().or_else(|| self.errors.first())
    }

    /// The first error that would stop the original's lexer (an unexpected character, an
    /// unterminated or empty literal). In a program of several files such an error outranks the
    /// parse errors of every file, because the original lexes the whole program first.
    pub fn lexer_stop(&self) -> Option<&SyntaxError> {
        self.lexer_stop.and_then(|i| self.errors.get(i))
    }

    /// The tree as indented text with each node's and token's range, then the errors; the form
    /// the snapshot tests record.
    pub fn debug_dump(&self) -> String {
        let mut out = format!("{:#?}", self.syntax_node());
        // rowan ends its dump with a newline; keep exactly one.
        while out.ends_with('\n') {
            out.pop();
        }
        out.push('\n');
        for error in self.errors.iter() {
            out.push_str(&format!("error {:?}: {}: {}\n", error.range, error.code, error.message));
        }
        out
    }
}

/// Parses a CAIRN source text. Never fails and never panics; see the crate comment.
///
/// A large text is parsed on up to four threads at once (`parallel.rs`), with the same result.
pub fn parse(text: &str) -> Parse {
    if text.len() >= parallel::PARALLEL_THRESHOLD {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
        if threads > 1
            && let Some(parse) = parallel::parse_in_pieces(text, threads)
        {
            return parse;
        }
    }
    parse_on_one_thread(text)
}

/// Parses `text` cut into `pieces` parts on as many threads; `None` when it offers no cut or a
/// part has an error (then [`parse`] parses it on one thread). For tests and benchmarks.
pub fn parse_in_pieces(text: &str, pieces: usize) -> Option<Parse> {
    parallel::parse_in_pieces(text, pieces)
}

/// Parses a CAIRN source text on the calling thread only (what [`parse`] must always equal).
pub fn parse_on_one_thread(text: &str) -> Parse {
    parse_with(text, grammar::source_file)
}

/// Parses `text` as one block `{ … }` on its own (for re-parsing an edited body). The root is a
/// `SOURCE_FILE` whose only child is the `BLOCK`, plus an error node for anything after it.
pub fn parse_block(text: &str) -> Parse {
    parse_with(text, grammar::block_only)
}

/// Parses `text` as one expression body, `= expr;` (the reparse of an edit inside one).
pub(crate) fn parse_expr_body(text: &str) -> Parse {
    parse_with(text, grammar::expr_body_only)
}

fn parse_with(text: &str, entry: fn(&mut Parser<'_>)) -> Parse {
    let lexed = lexer::lex(text);
    let stream = TokenStream::new(text, &lexed.tokens);
    let input = parser_input(&stream);
    let mut parser = Parser::new(&input);
    entry(&mut parser);
    let (events, parse_errors) = parser.finish();
    let green = builder::build(&stream, events);

    let mut errors: Vec<(SyntaxError, bool)> = lexed.errors.into_iter().zip(lexed.hard.iter().copied()).collect();
    errors.extend(builder::locate_errors(&stream, parse_errors).into_iter().map(|e| (e, false)));
    errors.extend(validation::validate(&green).into_iter().map(|e| (e, false)));
    Parse::from_parts(green, errors)
}

impl Parse {
    /// Assembles a parse from a tree and its errors (each flagged when it stops the lexer).
    fn from_parts(green: GreenNode, mut errors: Vec<(SyntaxError, bool)>) -> Parse {
        errors.sort_by(|(a, _), (b, _)| {
            (a.range.start(), a.range.end(), a.code, &a.message).cmp(&(
                b.range.start(),
                b.range.end(),
                b.code,
                &b.message,
            ))
        });
        let lexer_stop = errors.iter().position(|(_, hard)| *hard);
        let hard: Arc<[bool]> = errors.iter().map(|(_, hard)| *hard).collect();
        let errors: Arc<[SyntaxError]> = errors.into_iter().map(|(error, _)| error).collect();
        Parse { green, errors, hard, lexer_stop }
    }
}

fn parser_input<'a>(stream: &TokenStream<'a>) -> ParserInput<'a> {
    let n = stream.significant.len();
    let mut input = ParserInput {
        kinds: Vec::with_capacity(n),
        texts: Vec::with_capacity(n),
        joint: Vec::with_capacity(n),
        line_start: Vec::with_capacity(n),
    };
    let mut previous_raw: Option<usize> = None;
    for &raw in &stream.significant {
        let raw = raw as usize;
        input.kinds.push(stream.raw[raw].kind);
        input.texts.push(stream.raw_text(raw));
        let between = previous_raw.map_or(0..raw, |prev| prev + 1..raw);
        input.joint.push(previous_raw.is_some() && between.is_empty());
        let newline = previous_raw.is_none() || between.clone().any(|i| stream.raw_text(i).contains('\n'));
        input.line_start.push(newline);
        previous_raw = Some(raw);
    }
    input
}
