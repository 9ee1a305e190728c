//! `cairn fmt` (tools.md §3.24): the canonical layout of a CAIRN text, computed on the lossless
//! tree.
//!
//! The layout keeps the author's line structure and normalizes everything else: a line break of
//! the input stays a line break (runs of blank lines collapse to one, and blank lines next to a
//! brace go), except that a statement or member block holding more than one statement, or written
//! over several lines, puts each statement on its own line and its braces on lines of their own,
//! and every top-level declaration starts a line. Indentation is two spaces per open bracket
//! opened on an earlier line (brackets opened on one line count once), plus one level for the
//! continuation of an unfinished statement. Spacing inside a line follows the token pair (`a + b`,
//! `f(x, y)`, `key:Type`, `ro<T>[n]@device`, `0..n`, `|x:u32| -> u32 {`); where no rule speaks,
//! the input's choice (a space or none) is kept. A line over 100 columns is broken after its last
//! comma (or before its last `&&`/`||`) that lets the head fit.
//!
//! Safety: the output is lexed again and its tokens and comments compared with the input's; any
//! difference, or an input that does not parse, leaves the text as it is (an error says why).
//! Formatting is idempotent: the output's breaks are all kept by a second run, and every other
//! decision depends only on tokens and the tree.

use crate::{SyntaxKind, SyntaxKind::*, SyntaxNode, SyntaxToken};

/// The widest line the layout aims for.
pub const WIDTH: usize = 100;

/// Why a text was left as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The text does not parse (or lex): formatting it could change its meaning.
    Syntax(String),
    /// The layout would have changed the tokens or the comments (a defect of the formatter).
    Unsafe(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Syntax(why) => write!(f, "the text does not parse: {why}"),
            FormatError::Unsafe(why) => write!(f, "formatting would change the program: {why}"),
        }
    }
}

/// The canonical layout of `text`.
pub fn format(text: &str) -> Result<String, FormatError> {
    let parse = crate::parse(text);
    if let Some(error) = parse.errors().first() {
        return Err(FormatError::Syntax(error.message.clone()));
    }
    let mut out = layout(&parse.syntax_node());
    // Lines past the width: break them, and lay the text out again with those breaks.
    for _ in 0..8 {
        let Some(wrapped) = wrap_once(&out) else { break };
        let reparsed = crate::parse(&wrapped);
        if !reparsed.errors().is_empty() {
            break;
        }
        out = layout(&reparsed.syntax_node());
    }
    safe(text, &out)?;
    Ok(out)
}

/// One token of the output: a significant token or a comment.
struct Atom {
    token: SyntaxToken,
    /// Newlines in the whitespace before it in the input.
    newlines: usize,
    /// Whether the input had whitespace before it on its line.
    spaced: bool,
    /// The input's whitespace before it (for a trailing comment's alignment).
    gap: usize,
}

fn atoms(root: &SyntaxNode) -> Vec<Atom> {
    let mut out = Vec::new();
    let (mut newlines, mut spaced, mut gap) = (0usize, false, 0usize);
    for element in root.descendants_with_tokens() {
        let Some(token) = element.into_token() else { continue };
        if token.kind() == WHITESPACE {
            let text = token.text();
            newlines += text.matches('\n').count();
            let tail = text.rsplit('\n').next().unwrap_or(text);
            spaced = !tail.is_empty() || text.contains('\n');
            gap = tail.len();
            continue;
        }
        out.push(Atom { token, newlines, spaced, gap });
        (newlines, spaced, gap) = (0, false, 0);
    }
    out
}

/// Containers whose children are statements or declarations.
fn statement_container(kind: SyntaxKind) -> bool {
    matches!(kind, BLOCK | IMPL | TRAIT | RECIPE_BODY)
}

/// The children of a container that are statements or declarations (its nodes).
fn members(node: &SyntaxNode) -> Vec<SyntaxNode> {
    node.children().collect()
}

/// True when a container must be laid out one member per line: written over several lines, or
/// holding more than one member.
fn expanded(node: &SyntaxNode) -> bool {
    let open = node.children_with_tokens().find(|e| e.kind() == L_CURLY);
    let close = node.children_with_tokens().filter(|e| e.kind() == R_CURLY).last();
    let (Some(open), Some(close)) = (open, close) else { return false };
    let inner = &node.text().to_string()[usize::from(open.text_range().end() - node.text_range().start())
        ..usize::from(close.text_range().start() - node.text_range().start())];
    inner.contains('\n') || members(node).len() > 1
}

/// The first token (comments included) of a node.
fn first_token(node: &SyntaxNode) -> Option<SyntaxToken> {
    node.descendants_with_tokens().filter_map(|e| e.into_token()).find(|t| t.kind() != WHITESPACE)
}

/// Where a break is forced, and where a break of the input may not stay: by token position.
struct Breaks {
    /// Tokens that must start a line.
    before: std::collections::HashSet<SyntaxToken>,
}

fn forced_breaks(root: &SyntaxNode) -> Breaks {
    let mut before = std::collections::HashSet::new();
    for node in root.children() {
        if let Some(first) = first_token(&node) {
            before.insert(first);
        }
    }
    // A container laid out over several lines takes every container around it along (a block
    // whose only statement spans lines is itself on lines of its own).
    let mut wide: std::collections::HashSet<SyntaxNode> = std::collections::HashSet::new();
    for node in root.descendants().filter(|n| statement_container(n.kind())) {
        if expanded(&node) {
            for outer in node.ancestors().filter(|n| statement_container(n.kind())) {
                if !wide.insert(outer) {
                    break;
                }
            }
        }
    }
    for node in root.descendants().filter(|n| statement_container(n.kind())) {
        if !wide.contains(&node) {
            continue;
        }
        let tokens: Vec<SyntaxToken> = node.children_with_tokens().filter_map(|e| e.into_token()).collect();
        let open = tokens.iter().find(|t| t.kind() == L_CURLY);
        let close = tokens.iter().filter(|t| t.kind() == R_CURLY).last();
        if let Some(close) = close {
            before.insert(close.clone());
        }
        let Some(open) = open else { continue };
        for member in members(&node) {
            if member.text_range().start() < open.text_range().end() {
                continue;
            }
            if let Some(first) = first_token(&member) {
                before.insert(first);
            }
        }
        // What follows the brace on its line (a comment may stay there).
        if let Some(next) = next_atom_token(open) {
            before.insert(next);
        }
    }
    Breaks { before }
}

fn next_atom_token(token: &SyntaxToken) -> Option<SyntaxToken> {
    let mut next = token.next_token();
    while let Some(t) = next {
        if t.kind() != WHITESPACE {
            return Some(t);
        }
        next = t.next_token();
    }
    None
}

/// Lays the tree out.
fn layout(root: &SyntaxNode) -> String {
    let atoms = atoms(root);
    let breaks = forced_breaks(root);
    // Lines: the atoms each holds, and whether a blank line comes before it.
    let mut lines: Vec<(Vec<usize>, bool)> = Vec::new();
    for (i, atom) in atoms.iter().enumerate() {
        let kind = atom.token.kind();
        let after_comment = i > 0 && atoms[i - 1].token.kind() == COMMENT;
        let trailing_comment = kind == COMMENT && atom.newlines == 0;
        let forced = breaks.before.contains(&atom.token) && !trailing_comment;
        let new_line = i == 0 || atom.newlines > 0 || after_comment || forced;
        if new_line {
            let prev = i.checked_sub(1).map(|p| atoms[p].token.kind());
            let blank = i > 0 && atom.newlines > 1 && prev != Some(L_CURLY) && kind != R_CURLY;
            lines.push((vec![i], blank));
        } else {
            lines.last_mut().expect("a line").0.push(i);
        }
    }
    // Indentation: per line, the open brackets opened on earlier lines (one level per line that
    // opened any), plus one for the continuation of an unfinished statement.
    let mut out = String::new();
    let mut open: Vec<(SyntaxKind, usize)> = Vec::new();
    let mut previous_last: Option<usize> = None;
    for (line_index, (members, blank)) in lines.iter().enumerate() {
        // Leading closers belong to the brackets they close.
        let mut leading = 0;
        for &a in members {
            match atoms[a].token.kind() {
                R_CURLY | R_PAREN | R_BRACK => leading += 1,
                _ => break,
            }
        }
        let visible = open.len().saturating_sub(leading);
        let mut opening_lines: Vec<usize> = open[..visible].iter().map(|(_, l)| *l).collect();
        opening_lines.dedup();
        let mut level = opening_lines.len();
        // Inside a parenthesis or bracket left open on an earlier line: one level more, so that
        // a wrapped parameter list stands apart from the body below it.
        if open[..visible].last().is_some_and(|(k, l)| *k != L_CURLY && *l < line_index) {
            level += 1;
        }
        if let Some(last) = previous_last
            && leading == 0
            && continues(&atoms[last].token, &atoms[members[0]].token)
            && open[..visible].last().is_none_or(|(k, _)| *k == L_CURLY)
        {
            level += 1;
        }
        if *blank {
            out.push('\n');
        }
        for _ in 0..level {
            out.push_str("  ");
        }
        for (position, &a) in members.iter().enumerate() {
            let atom = &atoms[a];
            if position > 0 {
                let prev = &atoms[members[position - 1]];
                if atom.token.kind() == COMMENT {
                    out.push_str(&" ".repeat(atom.gap.max(1)));
                } else if space(&prev.token, &atom.token, atom.spaced) {
                    out.push(' ');
                }
            }
            out.push_str(atom.token.text());
            match atom.token.kind() {
                L_CURLY | L_PAREN | L_BRACK => open.push((atom.token.kind(), line_index)),
                R_CURLY | R_PAREN | R_BRACK => {
                    open.pop();
                }
                _ => {}
            }
        }
        out.push('\n');
        previous_last = members.last().copied();
    }
    out
}

/// True when the line starting with `next` continues the statement the previous line left
/// unfinished (its last token ends nothing).
fn continues(last: &SyntaxToken, next: &SyntaxToken) -> bool {
    if matches!(last.kind(), SEMICOLON | L_CURLY | R_CURLY | COMMA | L_PAREN | L_BRACK | COMMENT) {
        return false;
    }
    if next.kind() == COMMENT {
        return false;
    }
    // A new declaration or statement never continues anything.
    let starts_node = next.parent_ancestors().any(|n| {
        (statement_container(n.parent().map_or(SOURCE_FILE, |p| p.kind()))
            || n.parent().is_none_or(|p| p.kind() == SOURCE_FILE))
            && first_token(&n).as_ref() == Some(next)
    });
    !starts_node
}

fn parent_kind(token: &SyntaxToken) -> SyntaxKind {
    token.parent().map_or(SOURCE_FILE, |p| p.kind())
}

/// True for a token inside a type (its `<` `>` `[` take no spaces).
fn in_type(token: &SyntaxToken) -> bool {
    matches!(
        parent_kind(token),
        BORROW_TYPE | PATH_TYPE | GENERIC_ARG_LIST | EXTENT | PLACEMENT | FN_TYPE | FN_TYPE_PARAMS | DYN_TYPE | NAT_ARG
    )
}

/// True for a binary operator token (spaced on both sides).
fn binary(token: &SyntaxToken) -> bool {
    let kind = token.kind();
    let parent = parent_kind(token);
    let operator = matches!(
        kind,
        PLUS | MINUS
            | STAR
            | SLASH
            | PERCENT
            | EQ2
            | NEQ
            | LT
            | GT
            | LTEQ
            | GTEQ
            | AMP2
            | PIPE2
            | AMP
            | PIPE
            | CARET
            | EQ
            | PLUSEQ
            | MINUSEQ
            | STAREQ
            | SLASHEQ
            | PERCENTEQ
            | AMPEQ
            | PIPEEQ
            | CARETEQ
            | THIN_ARROW
            | FAT_ARROW
    );
    operator && !matches!(parent, PREFIX_EXPR | BOUND_LIST | PARAM_LIST) && !in_type(token)
}

/// True for the opening (`first`) or closing bar of a closure's parameter list.
fn edge_of_params(token: &SyntaxToken, first: bool) -> bool {
    let Some(list) = token.parent().filter(|p| p.kind() == PARAM_LIST) else { return false };
    let mut tokens = list.children_with_tokens().filter_map(|e| e.into_token()).filter(|t| !t.kind().is_trivia());
    let edge = if first { tokens.next() } else { tokens.last() };
    edge.as_ref() == Some(token)
}

/// Whether a space goes between two tokens on one line (`spaced`: the input's choice).
fn space(prev: &SyntaxToken, next: &SyntaxToken, spaced: bool) -> bool {
    let (p, n) = (prev.kind(), next.kind());
    // Never before these, never after these.
    if matches!(n, COMMA | SEMICOLON | R_PAREN | R_BRACK | DOT | DOT2 | COLON | AT) {
        return false;
    }
    if matches!(p, L_PAREN | L_BRACK | DOT | DOT2 | COLON | AT) {
        return false;
    }
    // A type's brackets: `ro<T>[n]`, `Buf[u8]`, `fn(ro<T>) -> bool`.
    if (n == LT || n == GT) && in_type(next) || p == LT && in_type(prev) {
        return false;
    }
    if n == L_BRACK {
        return !matches!(p, IDENT | R_PAREN | R_BRACK | GT) && spaced;
    }
    if n == L_PAREN {
        if parent_kind(next) == IMPORT_LIST {
            return true;
        }
        if matches!(p, IDENT | R_PAREN | R_BRACK | FN_KW) || (p == GT && in_type(prev)) {
            return false;
        }
        return true;
    }
    // A closure's bars: `|a:u32, b:u32| -> u32 {` (nothing inside the bars' edges).
    if p == PIPE && edge_of_params(prev, true) || n == PIPE && edge_of_params(next, false) {
        return false;
    }
    // Prefix operators bind to their operand.
    if parent_kind(prev) == PREFIX_EXPR && matches!(p, BANG | MINUS | STAR | AMP) {
        return false;
    }
    // Bounds: `T:Hash+Eq+affine`.
    if parent_kind(prev) == BOUND_LIST && p == PLUS || parent_kind(next) == BOUND_LIST && n == PLUS {
        return false;
    }
    if binary(prev) || binary(next) {
        return true;
    }
    if matches!(n, L_CURLY | COMMENT) || matches!(p, COMMA | SEMICOLON | L_CURLY) || n == R_CURLY {
        return true;
    }
    if p.is_keyword() && !matches!(n, L_PAREN) {
        return true;
    }
    spaced
}

/// Breaks the first line over the width after its last comma (or before its last `&&`/`||`)
/// that lets the head fit; `None` when no line needs or allows it.
fn wrap_once(text: &str) -> Option<String> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        if body.chars().count() > WIDTH && !body.trim_start().starts_with("//") {
            if let Some(at) = break_point(body) {
                let mut out = String::with_capacity(text.len() + 1);
                out.push_str(&text[..offset + at]);
                out.push('\n');
                out.push_str(text[offset + at..].trim_start_matches(' '));
                return Some(out);
            }
        }
        offset += line.len();
    }
    None
}

/// Where a long line may break: after the first `{` that opens a block written on the line (the
/// block then takes lines of its own), else just after a comma or before `&&`/`||`, outside
/// strings and comments, the rightmost that keeps the head within the width (never at the
/// indentation).
fn break_point(line: &str) -> Option<usize> {
    let lexed = crate::lex(line);
    let indent = line.len() - line.trim_start().len();
    let mut at = 0usize;
    for token in &lexed.tokens {
        let end = at + usize::from(token.len);
        if token.kind == COMMENT {
            break;
        }
        if token.kind == L_CURLY && !line[end..].trim().is_empty() && !line[end..].trim_start().starts_with("//") {
            return Some(end);
        }
        at = end;
    }
    // Otherwise the shallowest place (fewest brackets open) that lets the head fit, the
    // rightmost among those.
    let mut at = 0usize;
    let mut depth = 0usize;
    let mut best: Option<(usize, usize)> = None;
    for token in &lexed.tokens {
        let len = usize::from(token.len);
        let end = at + len;
        if token.kind == COMMENT {
            break;
        }
        let candidate = match token.kind {
            COMMA => Some(end),
            AMP2 | PIPE2 | PIPE | PLUS | CARET => Some(at),
            _ => None,
        };
        if let Some(c) = candidate
            && c > indent
            && line[..c].trim_end().chars().count() <= WIDTH
            && !line[c..].trim().is_empty()
            && best.is_none_or(|(d, _)| depth <= d)
        {
            best = Some((depth, c));
        }
        match token.kind {
            L_PAREN | L_BRACK | L_CURLY => depth += 1,
            R_PAREN | R_BRACK | R_CURLY => depth = depth.saturating_sub(1),
            _ => {}
        }
        at = end;
    }
    best.map(|(_, c)| c)
}

/// The formatted text must hold exactly the input's tokens and comments.
fn safe(input: &str, output: &str) -> Result<(), FormatError> {
    let significant = |text: &str| -> Result<Vec<(SyntaxKind, String)>, FormatError> {
        let lexed = crate::lex(text);
        if let Some(error) = lexed.errors.first() {
            return Err(FormatError::Syntax(error.message.clone()));
        }
        let mut at = 0usize;
        let mut out = Vec::new();
        for token in &lexed.tokens {
            let len = usize::from(token.len);
            if token.kind != WHITESPACE {
                out.push((token.kind, text[at..at + len].trim_end().to_string()));
            }
            at += len;
        }
        Ok(out)
    };
    let before = significant(input)?;
    let after = significant(output)?;
    if before != after {
        let at = before.iter().zip(&after).position(|(a, b)| a != b).unwrap_or(before.len().min(after.len()));
        let what = before.get(at).map(|(_, t)| t.as_str()).unwrap_or("the end");
        return Err(FormatError::Unsafe(format!("the token {what:?} (number {at}) would change")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::format;

    #[track_caller]
    fn check(input: &str, expected: &str) {
        let once = format(input).expect("formats");
        assert_eq!(once, expected, "\n--- got ---\n{once}\n--- expected ---\n{expected}");
        assert_eq!(format(&once).expect("formats again"), once, "idempotent");
    }

    #[test]
    fn spacing_follows_the_token_pairs() {
        check(
            "fn  f( a : u32,b:ro<u8>[n] @device )->u32{return a+b [0];}\n",
            "fn f(a:u32, b:ro<u8>[n]@device) -> u32 { return a + b[0]; }\n",
        );
        check("fn g(x:i64) -> i64 = -x*2;\n", "fn g(x:i64) -> i64 = -x * 2;\n");
        check(
            "fn k() { sort.sort_by(4, xs, |a:ro<u64>, b:ro<u64>|->bool { return a<b; }); }\n",
            "fn k() { sort.sort_by(4, xs, |a:ro<u64>, b:ro<u64>| -> bool { return a < b; }); }\n",
        );
        check("import std.core (Option, Result);\n", "import std.core (Option, Result);\n");
        check(
            "fn h[T:Hash+Eq+affine](n:usize, xs:ro<T>[n]) -> bool { return !f(xs[0..n]) && n>0; }\n",
            "fn h[T:Hash+Eq+affine](n:usize, xs:ro<T>[n]) -> bool { return !f(xs[0..n]) && n > 0; }\n",
        );
    }

    #[test]
    fn blocks_of_several_statements_take_a_line_each_and_indent_by_two() {
        check(
            "fn f() -> u32 { let a = 1; if a > 0 { return a; }\n    return 0; }\n",
            "fn f() -> u32 {\n  let a = 1;\n  if a > 0 { return a; }\n  return 0;\n}\n",
        );
        check("struct P { x:u8; y:u16; }\n", "struct P { x:u8; y:u16; }\n");
        check(
            "fn f() -> u32 { unsafe { let r = g(); return r; } }\n",
            "fn f() -> u32 {\n  unsafe {\n    let r = g();\n    return r;\n  }\n}\n",
        );
    }

    #[test]
    fn comments_stay_and_blank_lines_collapse() {
        check(
            "// top\n\n\n\nfn f() {\n\n  let a = 1;   // why\n\n\n  // next\n  let b = 2;\n\n}\n",
            "// top\n\nfn f() {\n  let a = 1;   // why\n\n  // next\n  let b = 2;\n}\n",
        );
    }

    #[test]
    fn a_long_line_breaks_after_a_comma_and_continues_indented() {
        let long =
            format!("fn f() {{\n  let x = call({}last_argument_of_the_call);\n}}\n", "argument_number_one, ".repeat(4));
        let out = format(&long).expect("formats");
        assert!(out.lines().all(|l| l.len() <= super::WIDTH), "{out}");
        assert_eq!(format(&out).expect("again"), out);
        assert!(out.lines().nth(2).is_some_and(|l| l.starts_with("    ")), "{out}");
    }

    #[test]
    fn a_text_that_does_not_parse_is_left_alone() {
        assert!(matches!(format("fn f( {"), Err(super::FormatError::Syntax(_))));
    }
}
