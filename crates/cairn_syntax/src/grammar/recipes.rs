//! Recipes (language §29): generators written in CAIRN, with static `each`, `fold`, `require`,
//! `where` and `$` splices, which are legal only between a recipe's braces.
//!
//! Invariant: `Parser::in_recipe` is set exactly while the recipe's parameters and body are
//! parsed (after its name, as in the original, so `recipe $r` is `E-LEX`) and restored after.

use super::*;
use crate::grammar::{exprs, items, stmts, types};

/// `recipe name [params] [for R] [where a = e, …] { items }`
pub(super) fn recipe(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump_remap(RECIPE_KW);
    name(p);
    let outer = p.in_recipe;
    p.in_recipe = true;
    if p.at(T!['[']) {
        items::generic_param_list(p);
    }
    if p.eat(FOR_KW) {
        name(p);
    }
    while p.at(WHERE_KW) {
        where_clause(p);
    }
    recipe_body(p);
    p.in_recipe = outer;
    RECIPE
}

/// `where a = e, b = e`
pub(crate) fn where_clause(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(WHERE_KW);
    loop {
        let b = p.start();
        name(p);
        p.expect(T![=]);
        exprs::expr(p);
        b.complete(p, WHERE_BINDING);
        if !p.eat(T![,]) {
            break;
        }
    }
    m.complete(p, RECIPE_WHERE);
}

/// `{ item* }` of a recipe or of a static `each` among its items.
fn recipe_body(p: &mut Parser<'_>) {
    let m = p.start();
    if p.expect(T!['{']) {
        while !p.at(T!['}']) && !p.at_end() {
            let before = p.token_index();
            recipe_item(p);
            if p.token_index() == before {
                items::recover_to_item(p);
            }
        }
        p.expect(T!['}']);
    }
    m.complete(p, RECIPE_BODY);
}

fn recipe_item(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(PUB_KW) {
        let v = p.start();
        p.bump(PUB_KW);
        v.complete(p, VISIBILITY);
    }
    let kind = match p.current() {
        EACH_KW => {
            each_header(p);
            recipe_body(p);
            EACH_ITEM
        }
        IDENT if p.at_contextual("require") => {
            m.abandon(p);
            require(p);
            return;
        }
        STRUCT_KW => {
            p.bump(STRUCT_KW);
            name(p);
            items::field_list(p, true);
            STRUCT
        }
        IMPL_KW => {
            p.bump(IMPL_KW);
            path(p);
            p.expect(FOR_KW);
            types::type_(p);
            items::impl_body(p);
            IMPL
        }
        FN_KW | KERNEL_KW => {
            items::function(p, items::FnContext::Item);
            FN
        }
        _ => {
            let message = format!(
                "A recipe holds functions, records, impls, `each` and `require`; found {}.",
                p.describe_current()
            );
            p.error(ErrorCode::Declaration, message);
            m.complete(p, ERROR);
            return;
        }
    };
    m.complete(p, kind);
}

/// `each x in lo [.. hi] [where …]`
fn each_header(p: &mut Parser<'_>) {
    p.bump(EACH_KW);
    name(p);
    p.expect(IN_KW);
    exprs::expr(p);
    if p.eat(T![..]) {
        exprs::expr(p);
    }
    while p.at(WHERE_KW) {
        where_clause(p);
    }
}

/// `each f in R { field; … }` among a generated record's fields.
pub(crate) fn each_fields(p: &mut Parser<'_>) {
    let m = p.start();
    each_header(p);
    items::field_list(p, true);
    m.complete(p, EACH_ITEM);
}

/// `each k in 0..K { statements }` inside a recipe's function bodies.
pub(crate) fn each_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    each_header(p);
    if p.at(T!['{']) {
        stmts::block(p);
    } else {
        p.expect(T!['{']);
    }
    m.complete(p, EACH_STMT);
}

/// `require cond, "message";`
pub(crate) fn require(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(REQUIRE_KW);
    exprs::expr(p);
    p.expect(T![,]);
    if !p.eat(STRING) {
        let message =
            format!("`require` states its message: `require condition, \"why\";` found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    }
    p.expect(T![;]);
    m.complete(p, REQUIRE);
}
