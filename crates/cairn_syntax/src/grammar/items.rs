//! Top-level declarations: modules, imports, constants, records, enums, traits, impls, functions,
//! externs, families, derives, plans, tests, layouts (recipes live in `recipes.rs`).
//!
//! Dispatch follows the original's order: one optional `pub`, then the declaration word. A word
//! that begins no declaration is `E-DECLARATION`; recovery then skips, keeping braces balanced,
//! to the next token that can begin one.

use super::*;
use crate::grammar::{exprs, recipes, stmts, types};

pub(super) fn item_list(p: &mut Parser<'_>) {
    while !p.at_end() {
        let before = p.token_index();
        item(p);
        if p.token_index() == before {
            // `item` reported the problem and consumed nothing: skip to the next declaration.
            recover_to_item(p);
        }
    }
}

/// Skips tokens, braces balanced, until something that begins a declaration.
pub(super) fn recover_to_item(p: &mut Parser<'_>) {
    let m = p.start();
    let mut first = true;
    while !p.at_end() {
        if !first && at_item_start(p) {
            break;
        }
        first = false;
        if p.at(T!['{']) {
            skip_braces(p);
        } else {
            p.bump_any();
        }
    }
    m.complete(p, ERROR);
}

/// Skips a balanced `{ … }` group without recursion.
fn skip_braces(p: &mut Parser<'_>) {
    let mut balance = 0u32;
    while !p.at_end() {
        match p.current() {
            T!['{'] => balance += 1,
            T!['}'] => {
                balance = balance.saturating_sub(1);
                if balance == 0 {
                    p.bump_any();
                    return;
                }
            }
            _ => {}
        }
        p.bump_any();
    }
}

/// One declaration, with its optional `pub`.
pub(super) fn item(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(PUB_KW) {
        let v = p.start();
        p.bump(PUB_KW);
        v.complete(p, VISIBILITY);
        if p.at(PUB_KW) {
            p.error(ErrorCode::Declaration, "`pub` is written once, before the declaration it exports.");
            let e = p.start();
            while p.at(PUB_KW) {
                p.bump(PUB_KW);
            }
            e.complete(p, ERROR);
        }
    }
    let kind = match p.current() {
        MODULE_KW => module_decl(p),
        IMPORT_KW => import(p),
        CONST_KW => const_item(p),
        STRUCT_KW | LINEAR_KW => strukt(p),
        ENUM_KW => enum_item(p),
        TRAIT_KW => trait_item(p),
        IMPL_KW => impl_item(p),
        EXTERN_KW => extern_fn(p),
        FN_KW | KERNEL_KW => {
            function(p, FnContext::Item);
            FN
        }
        DERIVE_KW => derive(p),
        FAMILY_KW => family(p),
        IDENT if p.at_contextual("recipe") && nth_word(p, 1) => recipes::recipe(p),
        IDENT if p.at_contextual("test") && nth_word(p, 1) => test(p),
        IDENT if p.at_contextual("layout") && p.nth_at(1, IDENT) && p.nth_at(2, T![=]) => layout(p),
        IDENT if p.at_contextual("plan") && nth_word(p, 1) => plan(p),
        _ => {
            let message = format!(
                "{} does not begin a declaration; the top level holds fn, struct, enum, trait, impl, const, extern, module, import, family, derive, plan, test, layout and recipe declarations.",
                capitalize(&p.describe_current())
            );
            p.error(ErrorCode::Declaration, message);
            // Keep a lone `pub` in the tree as part of the error.
            m.complete(p, ERROR);
            return;
        }
    };
    m.complete(p, kind);
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Ends a declaration with `;`. On failure the rest of the declaration is left for recovery.
pub(super) fn expect_semicolon(p: &mut Parser<'_>) {
    p.expect(T![;]);
}

/// `module a.b;`
fn module_decl(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(MODULE_KW);
    path(p);
    expect_semicolon(p);
    MODULE_DECL
}

/// `import a.b [as c] [(X, y)];`
fn import(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(IMPORT_KW);
    path(p);
    if p.eat(AS_KW) {
        name(p);
    }
    if p.at(T!['(']) {
        let m = p.start();
        delimited(p, T!['('], T![')'], "import list", name_ref);
        m.complete(p, IMPORT_LIST);
    }
    expect_semicolon(p);
    IMPORT
}

/// `const NAME: T = e;`
fn const_item(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(CONST_KW);
    name(p);
    p.expect(T![:]);
    types::type_(p);
    p.expect(T![=]);
    exprs::expr(p);
    expect_semicolon(p);
    CONST
}

/// `[linear] struct Name [gparams] [packed | align(N)] { field; … lends f[a..b]; }`
fn strukt(p: &mut Parser<'_>) -> SyntaxKind {
    p.eat(LINEAR_KW);
    p.expect(STRUCT_KW);
    name(p);
    if p.at(T!['[']) {
        generic_param_list(p);
    }
    if p.at_contextual("packed") {
        p.bump_remap(PACKED_KW);
    } else if p.at_contextual("align") && p.nth_at(1, T!['(']) {
        let m = p.start();
        p.bump_remap(ALIGN_KW);
        p.bump(T!['(']);
        natural_literal(p);
        p.expect(T![')']);
        m.complete(p, ALIGN_CLAUSE);
    }
    field_list(p, false);
    STRUCT
}

/// `{ field; … }`. In a recipe, `each f in R { … }` may stand among the fields.
pub(super) fn field_list(p: &mut Parser<'_>, in_recipe: bool) {
    let m = p.start();
    if !p.expect(T!['{']) {
        m.complete(p, FIELD_LIST);
        return;
    }
    while !p.at(T!['}']) && !p.at_end() {
        if at_item_start(p) && !p.at_contextual("test") {
            break;
        }
        let before = p.token_index();
        if in_recipe && p.at(EACH_KW) {
            recipes::each_fields(p);
        } else if p.at_contextual("lends") && !p.nth_at(1, T![:]) {
            lends_clause(p);
        } else {
            field(p);
        }
        if p.token_index() == before {
            let e = p.start();
            p.bump_any();
            e.complete(p, ERROR);
        }
    }
    p.expect(T!['}']);
    m.complete(p, FIELD_LIST);
}

/// `name: T [ [extent_field] ];`
fn field(p: &mut Parser<'_>) {
    let m = p.start();
    name(p);
    let ok = p.expect(T![:]);
    if ok {
        types::type_(p);
        if p.at(T!['[']) {
            let e = p.start();
            p.bump(T!['[']);
            name_ref(p);
            p.expect(T![']']);
            e.complete(p, FIELD_EXTENT);
        }
    }
    if !p.eat(T![;]) {
        if ok {
            p.expect(T![;]);
        }
        skip_to_semicolon(p);
    }
    m.complete(p, FIELD);
}

/// After a broken member: skips to just past the next `;`, stopping before a `}`.
fn skip_to_semicolon(p: &mut Parser<'_>) {
    if p.at(T!['}']) || p.at_end() {
        return;
    }
    let e = p.start();
    while !p.at(T!['}']) && !p.at_end() {
        if p.eat(T![;]) {
            break;
        }
        p.bump_any();
    }
    e.complete(p, ERROR);
}

/// `lends field[lo..hi];` with literal or field-name bounds.
fn lends_clause(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(LENDS_KW);
    name_ref(p);
    p.expect(T!['[']);
    lends_bound(p);
    p.expect(T![..]);
    lends_bound(p);
    p.expect(T![']']);
    expect_semicolon(p);
    m.complete(p, LENDS_CLAUSE);
}

fn lends_bound(p: &mut Parser<'_>) {
    if p.at(INT_NUMBER) {
        let m = p.start();
        natural_literal(p);
        m.complete(p, LITERAL);
    } else {
        name_ref(p);
    }
}

/// `enum Name [gparams] { V; W(T); }`
fn enum_item(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(ENUM_KW);
    name(p);
    if p.at(T!['[']) {
        generic_param_list(p);
    }
    let list = p.start();
    if p.expect(T!['{']) {
        while !p.at(T!['}']) && !p.at_end() {
            if at_item_start(p) {
                break;
            }
            let before = p.token_index();
            let v = p.start();
            name(p);
            if p.at(T!['(']) {
                p.bump(T!['(']);
                types::type_(p);
                p.expect(T![')']);
            }
            if !p.eat(T![;]) {
                p.expect(T![;]);
                skip_to_semicolon(p);
            }
            v.complete(p, VARIANT);
            if p.token_index() == before {
                let e = p.start();
                p.bump_any();
                e.complete(p, ERROR);
            }
        }
        p.expect(T!['}']);
    }
    list.complete(p, VARIANT_LIST);
    ENUM
}

/// `trait Name { fn member(params) [-> T] [ceiling]; … }`
fn trait_item(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(TRAIT_KW);
    name(p);
    if p.expect(T!['{']) {
        while !p.at(T!['}']) && !p.at_end() {
            if p.at(FN_KW) {
                let m = p.start();
                function(p, FnContext::TraitMember);
                m.complete(p, TRAIT_MEMBER);
            } else {
                if at_item_start(p) {
                    break;
                }
                p.err_and_bump("A trait holds only member signatures, each `fn name(params) -> T;`.", TokenSet::EMPTY);
            }
        }
        p.expect(T!['}']);
    }
    TRAIT
}

/// `impl [gparams] Trait for Type { fn … }`
fn impl_item(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(IMPL_KW);
    if p.at(T!['[']) {
        generic_param_list(p);
    }
    path(p);
    p.expect(FOR_KW);
    types::type_(p);
    impl_body(p);
    IMPL
}

/// `{ fn … }` of an impl: full member functions.
pub(super) fn impl_body(p: &mut Parser<'_>) {
    if !p.expect(T!['{']) {
        return;
    }
    while !p.at(T!['}']) && !p.at_end() {
        if p.at(FN_KW) {
            let m = p.start();
            function(p, FnContext::ImplMember);
            m.complete(p, FN);
        } else {
            if at_item_start(p) {
                break;
            }
            p.err_and_bump("An impl holds only member functions, each starting with `fn`.", TokenSet::EMPTY);
        }
    }
    p.expect(T!['}']);
}

/// `extern ["csym"] fn name(params) [-> T] [launch(t, B)] [ceiling];`
fn extern_fn(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(EXTERN_KW);
    if p.at(STRING) && p.nth_text(0) != "\"\"" {
        p.bump(STRING);
    }
    function(p, FnContext::Extern);
    EXTERN_FN
}

/// Where a function is written, which decides its optional clauses and body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FnContext {
    Item,
    ImplMember,
    TraitMember,
    Extern,
}

/// `[kernel] fn name [gparams] (params) [-> T] [launch] [ceiling] [implements …] body`; the caller
/// opened (and will close) the node.
pub(super) fn function(p: &mut Parser<'_>, context: FnContext) {
    if context == FnContext::Item {
        p.eat(KERNEL_KW);
    }
    p.expect(FN_KW);
    name(p);
    if p.at(T!['[']) {
        generic_param_list(p);
    }
    if p.at(T!['(']) {
        param_list(p);
    } else {
        p.expect(T!['(']);
    }
    if p.at(T![->]) {
        let m = p.start();
        p.bump(T![->]);
        types::type_(p);
        m.complete(p, RET_TYPE);
    }
    if context == FnContext::Extern && p.at_contextual("launch") && p.nth_at(1, T!['(']) {
        launch_clause(p);
    }
    ceiling_opt(p);
    match context {
        FnContext::TraitMember | FnContext::Extern => {
            expect_semicolon(p);
        }
        FnContext::Item | FnContext::ImplMember => {
            if p.at_contextual("implements") {
                implements_clause(p);
            }
            fn_body(p);
        }
    }
}

/// `= expr;` or a block.
pub(super) fn fn_body(p: &mut Parser<'_>) {
    if p.at(T![=]) {
        let m = p.start();
        p.bump(T![=]);
        exprs::expr(p);
        expect_semicolon(p);
        m.complete(p, EXPR_BODY);
    } else if p.at(T!['{']) {
        stmts::block(p);
    } else {
        let message =
            format!("Expected `{{` to open the function's body (or `= expr;`), found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    }
}

/// `(name: T, …)`
pub(super) fn param_list(p: &mut Parser<'_>) {
    let m = p.start();
    delimited(p, T!['('], T![')'], "parameter list", param);
    m.complete(p, PARAM_LIST);
}

fn param(p: &mut Parser<'_>) {
    let m = p.start();
    name(p);
    if p.expect(T![:]) {
        types::type_(p);
    }
    m.complete(p, PARAM);
}

/// `[T, N: nat, K: Hash + Eq, F: fn]`
pub(super) fn generic_param_list(p: &mut Parser<'_>) {
    let m = p.start();
    // `[]` declares nothing: the grammar's list holds at least one parameter.
    if p.nth_at(1, T![']']) {
        p.error(
            ErrorCode::Parse,
            "An empty generic parameter list `[]` declares nothing: name at least one parameter, or drop the brackets.",
        );
    }
    delimited(p, T!['['], T![']'], "generic parameter list", generic_param);
    m.complete(p, GENERIC_PARAM_LIST);
}

fn generic_param(p: &mut Parser<'_>) {
    let m = p.start();
    name(p);
    if p.eat(T![:]) {
        match p.current() {
            NAT_KW | TYPE_KW => p.bump_any(),
            FN_KW if p.in_recipe => p.bump(FN_KW),
            _ => {
                let b = p.start();
                path(p);
                while p.eat(T![+]) {
                    path(p);
                }
                b.complete(p, BOUND_LIST);
            }
        }
    }
    m.complete(p, GENERIC_PARAM);
}

/// `pure` or `effects(a, read:x, …)`.
pub(super) fn ceiling_opt(p: &mut Parser<'_>) {
    if p.at(PURE_KW) {
        let m = p.start();
        p.bump(PURE_KW);
        m.complete(p, CEILING);
    } else if p.at(EFFECTS_KW) {
        let m = p.start();
        p.bump(EFFECTS_KW);
        effect_list(p, false);
        m.complete(p, CEILING);
    }
}

/// `(effect, …)`: each effect is any word-like token followed by `:`-separated parts. With
/// `trailing_comma`, a comma may end the list (typed `asm` only).
pub(super) fn effect_list(p: &mut Parser<'_>, trailing_comma: bool) {
    if !p.at(T!['(']) {
        p.expect(T!['(']);
        return;
    }
    if trailing_comma {
        p.bump(T!['(']);
        while !p.at(T![')']) && !p.at_end() && !p.at(T![;]) {
            let before = p.token_index();
            effect(p);
            if !p.eat(T![,]) {
                break;
            }
            if p.token_index() == before {
                break;
            }
        }
        p.expect(T![')']);
    } else {
        delimited(p, T!['('], T![')'], "effect list", effect);
    }
}

fn effect(p: &mut Parser<'_>) {
    let m = p.start();
    effect_part(p);
    while p.at(T![:]) {
        p.bump(T![:]);
        effect_part(p);
    }
    m.complete(p, EFFECT);
}

fn effect_part(p: &mut Parser<'_>) {
    match p.current() {
        T![')'] | T![,] | T![;] | T!['{'] | T!['}'] | EOF => {
            let message = format!("Expected an effect name such as io or read:x, found {}.", p.describe_current());
            p.error(ErrorCode::Parse, message);
        }
        _ => p.bump_any(),
    }
}

/// `launch(threads, B)` on an extern kernel.
fn launch_clause(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(LAUNCH_KW);
    p.bump(T!['(']);
    match p.current() {
        T![')'] | T![,] | EOF => {
            p.error(ErrorCode::Parse, "`launch` names its thread count first, as in launch(n, 256).");
        }
        _ => p.bump_any(),
    }
    p.expect(T![,]);
    natural_literal(p);
    p.expect(T![')']);
    m.complete(p, LAUNCH_CLAUSE);
}

/// `implements f [when cond] [tune K in [..], …] [needs(feature, …)]`
fn implements_clause(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(IMPLEMENTS_KW);
    path(p);
    if p.at_contextual("when") {
        let w = p.start();
        p.bump_remap(WHEN_KW);
        exprs::expr(p);
        w.complete(p, WHEN_CLAUSE);
    }
    if p.at_contextual("tune") && p.nth_at(2, IN_KW) {
        let t = p.start();
        p.bump_remap(TUNE_KW);
        loop {
            let param = p.start();
            name_ref(p);
            p.expect(IN_KW);
            if p.at(T!['[']) {
                delimited(p, T!['['], T![']'], "tune list", |p| {
                    natural_literal(p);
                });
            } else {
                p.expect(T!['[']);
            }
            param.complete(p, TUNE_PARAM);
            if !p.eat(T![,]) {
                break;
            }
        }
        t.complete(p, TUNE_CLAUSE);
    }
    if p.at_contextual("needs") && p.nth_at(1, T!['(']) {
        let n = p.start();
        p.bump_remap(NEEDS_KW);
        effect_list(p, false);
        n.complete(p, NEEDS_CLAUSE);
    }
    m.complete(p, IMPLEMENTS_CLAUSE);
}

/// `derive path [ [args] ] [for Type];`
fn derive(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(DERIVE_KW);
    path(p);
    if p.at(T!['[']) {
        let m = p.start();
        delimited(p, T!['['], T![']'], "derive argument list", |p| {
            if p.at(INT_NUMBER) || p.at(FLOAT_NUMBER) {
                let lit = p.start();
                natural_literal(p);
                lit.complete(p, LITERAL);
            } else {
                path(p);
            }
        });
        m.complete(p, DERIVE_ARG_LIST);
    }
    if p.eat(FOR_KW) {
        path(p);
    }
    expect_semicolon(p);
    DERIVE
}

/// `family name = template[lo..hi];`
fn family(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(FAMILY_KW);
    name(p);
    p.expect(T![=]);
    path(p);
    if p.expect(T!['[']) {
        natural_literal(p);
        p.expect(T![..]);
        natural_literal(p);
        p.expect(T![']']);
    }
    expect_semicolon(p);
    FAMILY
}

/// `test name { … }`
fn test(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump_remap(TEST_KW);
    name(p);
    if p.at(T!['{']) {
        stmts::block(p);
    } else {
        let message =
            format!("A test is `test name {{ … }}`: no parameters and no result; found {}.", p.describe_current());
        p.error(ErrorCode::Test, message);
        // Skip a parameter list or result so that the body can still be read.
        let e = p.start();
        while !p.at(T!['{']) && !p.at_end() && !at_item_start(p) {
            p.bump_any();
        }
        e.complete(p, ERROR);
        if p.at(T!['{']) {
            stmts::block(p);
        }
    }
    TEST
}

/// `layout NAME = expr;`
fn layout(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump_remap(LAYOUT_KW);
    name(p);
    p.expect(T![=]);
    exprs::expr(p);
    expect_semicolon(p);
    LAYOUT
}

/// `plan f { item N; … }` or `plan f use g [ [v, …] ];`
fn plan(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump_remap(PLAN_KW);
    path(p);
    if p.at_contextual("use") {
        let m = p.start();
        p.bump_remap(USE_KW);
        path(p);
        if p.at(T!['[']) {
            delimited(p, T!['['], T![']'], "selection list", |p| {
                natural_literal(p);
            });
        }
        expect_semicolon(p);
        m.complete(p, PLAN_USE);
    } else if p.expect(T!['{']) {
        while !p.at(T!['}']) && !p.at_end() {
            if at_item_start(p) {
                break;
            }
            let m = p.start();
            if at_word(p) {
                p.bump_any();
            } else {
                let message = format!(
                    "A plan item is a name and a natural, as in `grain 2048;`; found {}.",
                    p.describe_current()
                );
                p.error(ErrorCode::Parse, message);
                p.bump_any();
                m.complete(p, ERROR);
                continue;
            }
            natural_literal(p);
            expect_semicolon(p);
            m.complete(p, PLAN_ITEM);
        }
        p.expect(T!['}']);
    }
    PLAN
}
