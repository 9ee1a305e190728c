//! Parsing a large text on several threads, with the same result as parsing it on one.
//!
//! A file is a sequence of declarations, and the parser never carries state from one to the
//! next; only the text between them (whitespace, which sits at the root) separates them. So a
//! text can be cut where a declaration begins — at depth 0, right after a `}` or `;` and the
//! whitespace that follows it, at a word that starts a declaration — and the pieces parsed
//! apart. The root's children are then the pieces' roots' children, in order.
//!
//! Invariant: the result equals `parse` on one thread, tree and errors. To keep that simple, a
//! piece with any error (lexical, grammatical or structural) makes the whole text be parsed
//! again on one thread: errors near a cut could read differently, and broken text is small
//! work anyway. Cuts never fall after a comment, since a comment belongs to the declaration that
//! follows it. A property test compares both ways on generated and corpus programs.

use rowan::{GreenNode, NodeOrToken};

use crate::SyntaxKind::{self, *};
use crate::{Parse, grammar, lexer, parse_with};

/// Texts shorter than this are parsed on one thread (threads cost more than they save).
pub const PARALLEL_THRESHOLD: usize = 256 * 1024;

/// The words that begin a declaration (contextual ones are lexed as identifiers).
const STARTS: &[&str] = &["fn", "pub", "struct", "enum", "const", "test", "import", "linear"];

/// Parses `text` in `pieces` parts at once; `None` when no good cuts exist or a piece has an
/// error (then the caller parses on one thread).
pub(crate) fn parse_in_pieces(text: &str, pieces: usize) -> Option<Parse> {
    let cuts = cuts(text, pieces)?;
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(text.len());
    let parts: Vec<&str> = bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    let parses: Vec<Parse> = std::thread::scope(|scope| {
        let handles: Vec<_> =
            parts[1..].iter().map(|part| scope.spawn(move || parse_with(part, grammar::source_file))).collect();
        let mut parses = vec![parse_with(parts[0], grammar::source_file)];
        for handle in handles {
            parses.push(handle.join().ok()?);
        }
        Some(parses)
    })?;
    if parses.iter().any(|parse| !parse.errors().is_empty()) {
        return None;
    }
    let children: Vec<_> = parses
        .iter()
        .flat_map(|parse| {
            parse.green().children().map(|child| match child {
                NodeOrToken::Node(node) => NodeOrToken::Node(node.to_owned()),
                NodeOrToken::Token(token) => NodeOrToken::Token(token.to_owned()),
            })
        })
        .collect();
    let green = GreenNode::new(SOURCE_FILE.into(), children);
    Some(Parse::from_parts(green, Vec::new()))
}

/// Up to `pieces - 1` cut offsets, each near an equal share of the text; `None` when the text
/// offers no cut (or lexes with errors).
fn cuts(text: &str, pieces: usize) -> Option<Vec<usize>> {
    let lexed = lexer::lex(text);
    if !lexed.errors.is_empty() {
        return None;
    }
    let mut depth: i64 = 0;
    let mut offset = 0usize;
    let mut previous: Option<SyntaxKind> = None;
    let mut only_whitespace_since_previous = true;
    let mut wanted = 1;
    let mut out = Vec::new();
    for token in &lexed.tokens {
        let len = usize::from(token.len);
        let kind = token.kind;
        if kind == WHITESPACE {
            offset += len;
            continue;
        }
        if kind == COMMENT {
            only_whitespace_since_previous = false;
            offset += len;
            continue;
        }
        if depth == 0
            && matches!(previous, Some(R_CURLY | SEMICOLON))
            && only_whitespace_since_previous
            && offset >= wanted * text.len() / pieces
            && STARTS.contains(&&text[offset..offset + len])
        {
            out.push(offset);
            wanted += 1;
            if wanted == pieces {
                break;
            }
        }
        match kind {
            L_CURLY | L_PAREN | L_BRACK => depth += 1,
            R_CURLY | R_PAREN | R_BRACK => depth -= 1,
            _ => {}
        }
        previous = Some(kind);
        only_whitespace_since_previous = true;
        offset += len;
    }
    (!out.is_empty()).then_some(out)
}
