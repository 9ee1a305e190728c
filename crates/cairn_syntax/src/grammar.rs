//! The CAIRN grammar: recursive descent over the significant tokens, one function per construct.
//!
//! The rules follow the language specification (§17, §31 and the tier 2/3 sections) and, where
//! the specification is silent, the original front end's behaviour (recorded in
//! `docs/syntax.md`): the same forms are accepted, and the first error lands on the same token
//! with the same code. Unlike the original, the parser does not stop at the first error: a
//! construct that fails is closed where it stands, the tokens up to the next statement or item
//! boundary are gathered into an `ERROR` node, and parsing goes on, so independent mistakes are
//! all reported. Invariant: every rule either consumes a token or reports an error and returns,
//! and every loop stops at the end of input.

mod exprs;
mod items;
mod recipes;
mod stmts;
mod types;

use crate::SyntaxKind::{self, *};
use crate::error::ErrorCode;
use crate::parser::{CompletedMarker, Parser};
use crate::token_set::TokenSet;

/// Parses a whole file.
pub(crate) fn source_file(p: &mut Parser<'_>) {
    let m = p.start();
    items::item_list(p);
    m.complete(p, SOURCE_FILE);
}

/// Parses one block on its own (the reparse of an edit inside one).
pub(crate) fn block_only(p: &mut Parser<'_>) {
    only(p, stmts::block, "Unexpected text after the block.");
}

/// Parses one expression body `= expr;` on its own (the reparse of an edit inside one).
pub(crate) fn expr_body_only(p: &mut Parser<'_>) {
    only(p, items::fn_body, "Unexpected text after the expression body.");
}

/// A `SOURCE_FILE` of what `body` parses, then an error node for anything after it.
fn only(p: &mut Parser<'_>, body: fn(&mut Parser<'_>), after: &str) {
    let m = p.start();
    body(p);
    while !p.at_end() {
        let e = p.start();
        p.error(ErrorCode::Parse, after.to_string());
        while !p.at_end() {
            p.bump_any();
        }
        e.complete(p, ERROR);
    }
    m.complete(p, SOURCE_FILE);
}

/// True when the current token has the shape of a word: an identifier, a reserved word or a
/// contextual word (the original's "identifier-shaped" lookahead).
pub(crate) fn at_word(p: &Parser<'_>) -> bool {
    nth_word(p, 0)
}

pub(crate) fn nth_word(p: &Parser<'_>, n: usize) -> bool {
    p.nth(n).is_word()
}

/// A fresh name being declared: `NAME`. Reports `E-NAME` for anything that is not a plain
/// identifier; a reserved word is still taken into the node so that parsing can go on.
pub(crate) fn name(p: &mut Parser<'_>) {
    name_like(p, NAME);
}

/// A use of a name: `NAME_REF`.
pub(crate) fn name_ref(p: &mut Parser<'_>) {
    name_like(p, NAME_REF);
}

fn name_like(p: &mut Parser<'_>, kind: SyntaxKind) {
    if p.at(IDENT) {
        check_dollar(p);
        let m = p.start();
        p.bump(IDENT);
        m.complete(p, kind);
        return;
    }
    let message = format!("Expected a name here, found {}.", p.describe_current());
    if p.current().is_keyword() {
        let hint =
            format!("{message} `{}` is a reserved word and cannot name anything; choose another name.", p.nth_text(0));
        p.error(ErrorCode::Name, hint);
        let m = p.start();
        p.bump_any();
        m.complete(p, kind);
    } else {
        p.error(ErrorCode::Name, message);
    }
}

/// Reports `E-LEX` for a `$` in the current identifier outside a recipe body.
pub(crate) fn check_dollar(p: &mut Parser<'_>) {
    if !p.in_recipe && p.nth_text(0).contains('$') {
        p.error(ErrorCode::Lex, "`$` may appear in a name only inside a recipe body, where it splices a static value.");
    }
}

/// `a.b.c`: a `PATH` of `NAME_REF`s. The dotted continuation is taken whenever a word follows
/// the dot (so `a.fn` reports the reserved word).
pub(crate) fn path(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    name_ref(p);
    while p.at(T![.]) && nth_word(p, 1) {
        p.bump(T![.]);
        name_ref(p);
    }
    m.complete(p, PATH)
}

/// A decimal integer literal where the grammar needs a natural; anything else is `E-STATIC`.
pub(crate) fn natural_literal(p: &mut Parser<'_>) -> bool {
    if p.at(INT_NUMBER) && p.nth_text(0).bytes().all(|b| b.is_ascii_digit()) {
        p.bump(INT_NUMBER);
        return true;
    }
    let message = format!("Expected a non-negative decimal integer literal here, found {}.", p.describe_current());
    p.error(ErrorCode::Static, message);
    // Take a wrong number or word in the literal's place so that parsing goes on after it.
    if matches!(p.current(), INT_NUMBER | FLOAT_NUMBER | IDENT) || p.current().is_keyword() {
        p.bump_any();
    }
    false
}

/// A comma-separated list between `open` and `close` (already at `open`). Empty lists are
/// allowed and trailing commas are not, as in the original. `item` parses one element; when it
/// leaves the list in a state that is neither `,` nor `close`, the tokens up to one of them are
/// skipped as an error so that the rest of the list still parses.
pub(crate) fn delimited(
    p: &mut Parser<'_>,
    open: SyntaxKind,
    close: SyntaxKind,
    what: &str,
    mut item: impl FnMut(&mut Parser<'_>),
) {
    p.bump(open);
    if p.eat(close) {
        return;
    }
    loop {
        item(p);
        if p.eat(T![,]) {
            continue;
        }
        if p.at(close) || p.at_end() {
            break;
        }
        // Something unexpected inside the list: report it once, skip to `,` or `close`, go on.
        let message = format!(
            "Expected `,` or `{}` in this {what}, found {}.",
            close.fixed_text().unwrap_or(""),
            p.describe_current()
        );
        p.error(ErrorCode::Parse, message);
        if !skip_in_list(p, close) {
            return;
        }
        if !p.eat(T![,]) {
            break;
        }
    }
    expect_close(p, close, what);
}

/// Skips balanced tokens up to (not past) `,` or `close` at the list's own level. Returns false
/// when it stopped at a token that ends more than the list (`;`, `{` or the end of input),
/// leaving the closer to an enclosing rule.
fn skip_in_list(p: &mut Parser<'_>, close: SyntaxKind) -> bool {
    let m = p.start();
    let mut balance = 0u32;
    let mut reached = true;
    loop {
        match p.current() {
            EOF => {
                reached = false;
                break;
            }
            k if balance == 0 && (k == T![,] || k == close) => break,
            T![;] | T!['{'] | T!['}'] if balance == 0 => {
                reached = false;
                break;
            }
            T!['('] | T!['['] | T!['{'] => balance += 1,
            T![')'] | T![']'] | T!['}'] => {
                if balance == 0 {
                    reached = false;
                    break;
                }
                balance -= 1;
            }
            _ => {}
        }
        p.bump_any();
    }
    m.complete(p, ERROR);
    reached
}

fn expect_close(p: &mut Parser<'_>, close: SyntaxKind, what: &str) {
    if !p.eat(close) {
        let message = format!(
            "Expected `{}` to close this {what}, found {}.",
            close.fixed_text().unwrap_or(""),
            p.describe_current()
        );
        p.error(ErrorCode::Parse, message);
    }
}

/// The binary operators, in the token set the grammar uses for `fold` and reducers.
pub(crate) const BINARY_OPERATORS: TokenSet = TokenSet::new(&[
    T![||],
    T![&&],
    T![|],
    T![^],
    T![&],
    T![==],
    T![!=],
    T![<],
    T![<=],
    T![>],
    T![>=],
    T![+],
    T![-],
    T![*],
    T![/],
    T![%],
]);

/// Tokens that begin a top-level declaration (contextual words are checked separately).
pub(crate) const ITEM_KEYWORDS: TokenSet = TokenSet::new(&[
    FN_KW, KERNEL_KW, STRUCT_KW, LINEAR_KW, ENUM_KW, TRAIT_KW, IMPL_KW, EXTERN_KW, CONST_KW, IMPORT_KW, MODULE_KW,
    PUB_KW, DERIVE_KW, FAMILY_KW,
]);

/// True when the current token can only begin a top-level declaration: a reserved item word, or
/// a contextual one (`test`, `plan`, `recipe` before a name; `layout NAME =`).
pub(crate) fn at_item_start(p: &Parser<'_>) -> bool {
    if p.at_ts(ITEM_KEYWORDS) {
        return true;
    }
    if p.at(IDENT) {
        return match p.nth_text(0) {
            "test" => nth_word(p, 1) && p.nth_at(2, T!['{']),
            "plan" => nth_word(p, 1) && (p.nth_at(2, T!['{']) || p.nth_contextual(2, "use") || p.nth_at(2, T![.])),
            "recipe" => nth_word(p, 1) && matches!(p.nth(2), T!['['] | T!['{'] | FOR_KW | WHERE_KW),
            "layout" => p.nth_at(1, IDENT) && p.nth_at(2, T![=]),
            _ => false,
        };
    }
    false
}
