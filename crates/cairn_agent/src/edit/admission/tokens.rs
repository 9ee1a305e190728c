//! Step 3 of judging a reply: every token outside the replaced span lexes as before in the
//! candidate (`E-DECLARATION`), checked on the lines the span touches — a comment or a string
//! the reply opens would otherwise swallow the host's text after it.

use cairn_syntax::SyntaxKind;

use super::splice::Splice;
use crate::edit::EditHost;
use crate::edit::refusal::Refusal;

/// A lexed token: its byte range (offset by the base the text was lexed at), kind and text.
type Token = (usize, usize, SyntaxKind, String);

impl EditHost {
    /// The splice leaves every token outside its span as it was.
    pub(super) fn tokens_preserved(&self, splice: &Splice) -> Result<(), Refusal> {
        // The lines the span touches, before and with the reply: no byte outside them moves.
        let original = format!("{}{}{}", splice.line_before, splice.replaced, splice.line_after);
        let candidate = format!("{}{}{}", splice.line_before, splice.wrapped, splice.line_after);
        let (start, end) = (splice.line_before.len(), splice.line_before.len() + splice.replaced.len());
        let new_end = start + splice.wrapped.len();
        if tokens_preserved(&original, &candidate, start, end, new_end) {
            return Ok(());
        }
        Err(self.rejection(
            "E-DECLARATION",
            "A token outside the replaced range changed (a trailing comment can hide the rest of its line).",
        ))
    }
}

/// The texts of a text's tokens that are neither spacing nor comments, in order.
pub(in crate::edit) fn significant_tokens(text: &str) -> Vec<String> {
    tokens(text, 0).into_iter().filter(|t| !t.2.is_trivia()).map(|t| t.3).collect()
}

/// Every token outside `[start, end)` of `original` lexes the same in `candidate`, where the
/// replacement ends at `new_end`: checked on the lines the span touches (the texts may be those
/// lines alone: a token's kind and text are compared, not its position in the file).
fn tokens_preserved(original: &str, candidate: &str, start: usize, end: usize, new_end: usize) -> bool {
    let line_start = original[..start].rfind('\n').map_or(0, |i| i + 1);
    let old_line_end = original[end..].find('\n').map_or(original.len(), |i| end + i);
    let new_line_end = candidate[new_end..].find('\n').map_or(candidate.len(), |i| new_end + i);
    let old_tokens = tokens(&original[line_start..old_line_end], line_start);
    let new_tokens = tokens(&candidate[line_start..new_line_end], line_start);
    // Spacing is not compared: the splice moves no byte outside the span, so only the lexing of
    // what touches it can change (a comment or a string the reply opens), and spacing merged
    // across the span's edges is not a change of any token.
    let significant =
        |tokens: Vec<Token>| -> Vec<Token> { tokens.into_iter().filter(|t| t.2 != SyntaxKind::WHITESPACE).collect() };
    let (old_tokens, new_tokens) = (significant(old_tokens), significant(new_tokens));
    let outside = |tokens: &[Token], lo: usize, hi: usize| -> Vec<(SyntaxKind, String)> {
        tokens.iter().filter(|(s, e, _, _)| *e <= lo || *s >= hi).map(|(_, _, k, t)| (*k, t.clone())).collect()
    };
    // No token may straddle the span's edges in the candidate.
    let straddles = new_tokens.iter().any(|(s, e, _, _)| (*s < start && *e > start) || (*s < new_end && *e > new_end));
    !straddles && outside(&old_tokens, start, end) == outside(&new_tokens, start, new_end)
}

/// The tokens of `text`, their ranges offset by `base`.
fn tokens(text: &str, base: usize) -> Vec<Token> {
    let lexed = cairn_syntax::lex(text);
    let mut out = Vec::new();
    let mut at = 0usize;
    for token in lexed.tokens {
        let len = usize::from(token.len);
        out.push((base + at, base + at + len, token.kind, text[at..at + len].to_string()));
        at += len;
    }
    out
}
