//! Reading past trivia: the first significant token of a node, the comment above a
//! declaration, and a node's significant tokens as one compact text.
//!
//! These are the one home of three rules every layer above needs (the checker's anchors, the
//! edit host's packets, the language server's hover, `find`): where a node's own text begins once
//! the comments and spacing the builder attached to it are skipped, and which `//` lines count as
//! a declaration's comment, and the text of a node however it is spaced or commented (what
//! names an instance, a trait's impl and a region's identity). All read text or trees only;
//! none knows what the node means.

use crate::{SyntaxNode, SyntaxToken};

/// The first token of `node` that is neither spacing nor a comment, at any depth. `None` for a
/// node made of trivia only (or of nothing).
pub fn first_significant_token(node: &SyntaxNode) -> Option<SyntaxToken> {
    node.descendants_with_tokens().filter_map(|e| e.into_token()).find(|t| !t.kind().is_trivia())
}

/// The comment above a declaration whose first significant token starts at byte `start` of
/// `text`: the contiguous `//` lines directly above it (spacing between them and the token is
/// skipped), top to bottom, each without its `//` and the spacing around the words. Empty
/// comment lines are left out; a line that is not a comment ends the comment.
///
/// Invariant: this is the only rule for "the comment above a declaration"; the renderings
/// (joined by spaces for `cairn state` and hover, by newlines for [`crate::ast::doc_comment`],
/// the first line for a packet) differ only in how they join what it returns.
pub fn comment_lines_above(text: &str, start: usize) -> Vec<&str> {
    let mut end = start.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = text[..end].trim_end();
    let mut lines: Vec<&str> = Vec::new();
    for line in before.lines().rev() {
        match line.trim_start().strip_prefix("//") {
            Some(comment) => lines.push(comment.trim()),
            None => break,
        }
    }
    lines.reverse();
    lines.retain(|line| !line.is_empty());
    lines
}

/// The significant tokens of `node`, a space only between two words (`Pair[u32]`, `dyn Shape`):
/// the same text however the declaration is spaced or commented.
pub fn compact_text(node: &SyntaxNode) -> String {
    let mut out = String::new();
    let mut last_word = false;
    for token in node.descendants_with_tokens().filter_map(|e| e.into_token()) {
        if token.kind().is_trivia() {
            continue;
        }
        let word = token.kind().is_word();
        if word && last_word {
            out.push(' ');
        }
        out.push_str(token.text());
        last_word = word;
    }
    out
}
