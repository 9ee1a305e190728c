//! Re-parsing after an edit without re-parsing the file (design.md, "the cost of one body edit").
//!
//! When an edit falls strictly inside the body of a top-level function, impl member or test — its
//! block `{ … }`, or its expression body `= expr;` between the `=` and the `;` — only that body is
//! re-lexed and re-parsed, and its new green node is spliced into the old tree (rowan rebuilds
//! only the path to the root). Errors outside the body are kept (those after it shifted by the
//! edit's length change), the body's own are replaced. Anything else (an edit touching a brace,
//! the `=` or the `;` of the body, a body whose brackets no longer balance, a body inside a
//! recipe) falls back to a full parse.
//!
//! Invariant: the result equals a full parse of the edited text, tree and errors alike; a property
//! test compares the two on random edits.

use rowan::{GreenNode, TextRange, TextSize};

use crate::SyntaxKind::*;

use crate::{Parse, SyntaxError, SyntaxKind, SyntaxNode, lexer, parse, parse_block, parse_expr_body};

/// One edit of a text: the bytes in `delete` are replaced by `insert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub delete: TextRange,
    pub insert: String,
}

impl TextEdit {
    /// Applies the edit to `text`.
    pub fn apply(&self, text: &str) -> String {
        let start = usize::from(self.delete.start());
        let end = usize::from(self.delete.end());
        let mut out = String::with_capacity(text.len() - (end - start) + self.insert.len());
        out.push_str(&text[..start]);
        out.push_str(&self.insert);
        out.push_str(&text[end..]);
        out
    }

    /// The smallest edit that turns `old` into `new`, where `old` starts at byte `offset` of the
    /// text edited: their common prefix and suffix are kept, so an edit inside one body stays
    /// inside it and [`Parse::reparse`] takes its fast path.
    ///
    /// Invariant: applying the result to a text holding `old` at `offset` gives that text with
    /// `new` there instead.
    pub fn smallest(old: &str, new: &str, offset: usize) -> TextEdit {
        let (prefix, suffix) = common_ends(old, new);
        let start = TextSize::from((offset + prefix) as u32);
        let end = TextSize::from((offset + old.len() - suffix) as u32);
        TextEdit { delete: TextRange::new(start, end), insert: new[prefix..new.len() - suffix].to_string() }
    }
}

/// The lengths of the longest common prefix and suffix of two texts (not overlapping, on
/// character boundaries of both).
fn common_ends(old: &str, new: &str) -> (usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !(old.is_char_boundary(prefix) && new.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let room = a.len().min(b.len()) - prefix;
    let mut suffix = a.iter().rev().zip(b.iter().rev()).take(room).take_while(|(x, y)| x == y).count();
    while !(old.is_char_boundary(a.len() - suffix) && new.is_char_boundary(b.len() - suffix)) {
        suffix -= 1;
    }
    (prefix, suffix)
}

/// How a reparse was done (for tests and tracing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reparsed {
    /// Only the enclosing body block was parsed again; `item` is the index, among the root's
    /// children (nodes and tokens alike), of the top-level declaration that holds it: the only
    /// child of the root whose node changed.
    Block { item: usize },
    /// The whole text was parsed again.
    Full,
}

impl Parse {
    /// The parse of `new_text`, which must be this parse's text with `edit` applied.
    pub fn reparse(&self, edit: &TextEdit, new_text: &str) -> Parse {
        self.reparse_traced(edit, new_text).0
    }

    /// As [`Parse::reparse`], also saying how the work was done.
    pub fn reparse_traced(&self, edit: &TextEdit, new_text: &str) -> (Parse, Reparsed) {
        match self.try_block_reparse(edit) {
            Some((parse, item)) => (parse, Reparsed::Block { item }),
            None => (parse(new_text), Reparsed::Full),
        }
    }

    fn try_block_reparse(&self, edit: &TextEdit) -> Option<(Parse, usize)> {
        let root = self.syntax_node();
        if edit.delete.end() > root.text_range().end() {
            return None;
        }
        // The top-level declaration holding the edit: only its body is parsed again.
        let top = match root.covering_element(edit.delete) {
            rowan::NodeOrToken::Node(node) => node,
            rowan::NodeOrToken::Token(token) => token.parent()?,
        }
        .ancestors()
        .find(|node| node.parent().is_some_and(|p| p.parent().is_none()))?;
        let item = top.index();
        let start = top.text_range().start();
        let relative = TextEdit { delete: edit.delete - start, insert: edit.insert.clone() };
        let body = reparse_declaration(&top.green().to_owned(), &relative)?;
        let green = top.replace_with(body.green);

        let block_range = body.body + start;
        let (old_len, new_len) = (block_range.len(), body.new_len);
        let mut errors: Vec<(SyntaxError, bool)> = Vec::with_capacity(self.errors.len() + body.errors.len());
        for (error, hard) in self.errors.iter().zip(self.hard.iter()) {
            // An error at the block's opening brace comes from the enclosing parse (a block's own
            // parse never fails at its `{`), so it stays.
            if error.range.start() <= block_range.start() {
                errors.push((error.clone(), *hard));
            } else if error.range.start() >= block_range.end() {
                let mut moved = error.clone();
                moved.range =
                    TextRange::new(error.range.start() - old_len + new_len, error.range.end() - old_len + new_len);
                errors.push((moved, *hard));
            }
            // Errors inside the old block are replaced by the new block's own.
        }
        for (mut error, hard) in body.errors {
            error.range += start;
            errors.push((error, hard));
        }
        Some((Parse::from_parts(green, errors), item))
    }
}

/// A body parsed again inside its top-level declaration alone ([`reparse_declaration`]).
#[derive(Debug, Clone)]
pub struct DeclarationReparse {
    /// The declaration's new green node.
    pub green: GreenNode,
    /// Where the old body lay, relative to the declaration's start.
    pub body: TextRange,
    /// The new body's length.
    pub new_len: TextSize,
    /// The new body's own errors, relative to the declaration's start, each with whether it
    /// stops the original's lexer.
    pub errors: Vec<(SyntaxError, bool)>,
}

/// Parses again, alone, the body that holds `edit` of `top`, a top-level declaration of a file
/// (a child of its `SOURCE_FILE` root; `edit` is relative to the declaration's start), and
/// splices it in: the rest of the file is neither read nor rebuilt. `None` when the edit is not
/// strictly inside the block or expression body of a function, impl member or test, or when the
/// new body cannot be parsed alone exactly as a parse of the whole file would parse it (then the
/// file must be parsed again).
pub fn reparse_declaration(top: &GreenNode, edit: &TextEdit) -> Option<DeclarationReparse> {
    // The declaration under a root of its own kind, so the body's ancestors are what they are in
    // the file.
    let file = GreenNode::new(SOURCE_FILE.into(), [rowan::NodeOrToken::Node(top.clone())]);
    let root = SyntaxNode::new_root(file);
    if edit.delete.end() > root.text_range().end() {
        return None;
    }
    let block = enclosing_body(&root, edit.delete)?;
    let block_range = block.text_range();
    let relative = edit.delete - block_range.start();
    let old_block_text = block.text().to_string();
    let new_block_text = TextEdit { delete: relative, insert: edit.insert.clone() }.apply(&old_block_text);
    let kind = block.kind();
    let (closer, block_parse): (SyntaxKind, Parse) = if kind == BLOCK {
        if !is_one_balanced_block(&new_block_text) {
            return None;
        }
        (T!['}'], parse_block(&new_block_text))
    } else {
        if !is_one_expr_body(&new_block_text) {
            return None;
        }
        (T![;], parse_expr_body(&new_block_text))
    };
    let new_block = block_parse.syntax_node().first_child().filter(|n| n.kind() == kind)?;
    // The body must end with its *own* closing brace (or `;`), and the parse must never have
    // run into the end of the body's text: otherwise an inner construct swallowed it, and in
    // the whole file the parse would have gone on past it.
    let closes_itself = new_block
        .last_child_or_token()
        .and_then(|element| element.into_token())
        .is_some_and(|token| token.kind() == closer);
    let end = TextSize::of(new_block_text.as_str());
    let ran_out = block_parse.errors.iter().any(|e| e.range.start() >= end);
    if block_parse.syntax_node().children().count() != 1 || !closes_itself || ran_out {
        return None;
    }
    let file = block.replace_with(new_block.green().to_owned());
    let green = file.children().next().and_then(|c| c.into_node()).map(|n| n.to_owned())?;
    let errors = block_parse
        .errors
        .iter()
        .zip(block_parse.hard.iter())
        .map(|(error, hard)| {
            let mut moved = error.clone();
            moved.range += block_range.start();
            (moved, *hard)
        })
        .collect();
    Some(DeclarationReparse { green, body: block_range, new_len: end, errors })
}

/// A file's tree with some top-level declarations replaced by new green nodes (each at its index
/// among the root's children, nodes and tokens alike): the root rebuilt once for all of them.
/// The declarations must hold no syntax error, and nor may the file: the result has none. (The
/// text is the old one with each replaced declaration's span rewritten; its keeper makes it.)
pub fn splice_declarations(parse: &Parse, replaced: &[(usize, GreenNode)]) -> Parse {
    let root = parse.green();
    let mut children = Vec::with_capacity(root.children().len());
    let mut next = replaced.iter().peekable();
    for (index, child) in root.children().enumerate() {
        match next.peek() {
            Some((at, green)) if *at == index => {
                children.push(rowan::NodeOrToken::Node(green.clone()));
                next.next();
            }
            _ => children.push(child.to_owned()),
        }
    }
    Parse::from_parts(GreenNode::new(root.kind(), children), Vec::new())
}

/// The body of a top-level function, impl member or test — its block, or its expression body —
/// that holds `range` strictly inside its braces (between its `=` and its `;`).
fn enclosing_body(root: &SyntaxNode, range: TextRange) -> Option<SyntaxNode> {
    let element = root.covering_element(range);
    let start = match element {
        rowan::NodeOrToken::Node(node) => node,
        rowan::NodeOrToken::Token(token) => token.parent()?,
    };
    let block = start.ancestors().find(|node| {
        matches!(node.kind(), BLOCK | EXPR_BODY)
            && node.parent().is_some_and(|parent| {
                matches!(parent.kind(), FN | TEST)
                    && parent.parent().is_some_and(|owner| matches!(owner.kind(), SOURCE_FILE | IMPL))
                    && !parent.ancestors().any(|a| a.kind() == RECIPE)
            })
    })?;
    let inner = block.text_range();
    let strictly_inside = inner.start() < range.start() && range.end() < inner.end();
    // The block must hold its own braces: after an error, an inner construct may have taken the
    // closing one, and then the block's extent in the old tree says nothing about the new text.
    let own = |element: Option<rowan::NodeOrToken<SyntaxNode, crate::SyntaxToken>>, kind| {
        element.and_then(|e| e.into_token()).is_some_and(|t| t.kind() == kind)
    };
    let (opener, closer) = if block.kind() == BLOCK { (T!['{'], T!['}']) } else { (T![=], T![;]) };
    (strictly_inside && own(block.first_child_or_token(), opener) && own(block.last_child_or_token(), closer))
        .then_some(block)
}

/// True when `text` lexes as `=`, then tokens whose brackets balance and hold no `;` outside
/// braces, then `;` last.
fn is_one_expr_body(text: &str) -> bool {
    let lexed = lexer::lex(text);
    let significant: Vec<_> = lexed.tokens.iter().filter(|t| !t.kind.is_trivia()).collect();
    if significant.first().map(|t| t.kind) != Some(T![=]) || !text.starts_with('=') || !text.ends_with(';') {
        return false;
    }
    let mut depth = 0i64;
    let mut braces = 0i64;
    for (i, token) in significant.iter().enumerate() {
        match token.kind {
            T!['('] | T!['['] => depth += 1,
            T!['{'] => {
                depth += 1;
                braces += 1;
            }
            T![')'] | T![']'] => depth -= 1,
            T!['}'] => {
                depth -= 1;
                braces -= 1;
            }
            T![;] if braces == 0 => return i + 1 == significant.len() && depth == 0,
            _ => {}
        }
        if depth < 0 || braces < 0 {
            return false;
        }
    }
    false
}

/// True when `text` lexes as `{`, then tokens whose braces balance, then the matching `}` last.
fn is_one_balanced_block(text: &str) -> bool {
    let lexed = lexer::lex(text);
    let mut depth = 0i64;
    let significant: Vec<_> = lexed.tokens.iter().filter(|t| !t.kind.is_trivia()).collect();
    if significant.first().map(|t| t.kind) != Some(T!['{']) || !text.starts_with('{') || !text.ends_with('}') {
        return false;
    }
    for (i, token) in significant.iter().enumerate() {
        match token.kind {
            T!['{'] => depth += 1,
            T!['}'] => {
                depth -= 1;
                if depth == 0 && i + 1 != significant.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}
