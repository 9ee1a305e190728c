//! Statements and blocks.
//!
//! A statement is recognised by the original's cascade (typed `asm`, recipe forms, collectors,
//! cooperative regions, `shared`, `pipeline`, `barrier`, `buffer`/`stack`, `let`/`reg`, control
//! flow, `parallel`, `defer`, `unsafe`, nested blocks, then expression statements), with
//! contextual words checked by the same lookahead. There is no empty statement.
//!
//! Recovery: a statement that does not end in `;` or `}` is followed by a skip, braces balanced,
//! to the next `;`, the block's `}`, or a line that begins a statement; a declaration word (`fn`,
//! `struct`, …) inside a block means the block was never closed, and the block ends there.

use super::*;
use crate::grammar::{exprs, items, recipes, types};
use crate::parser::Nesting;

/// `{ statement* }`; the caller is at `{`.
pub(crate) fn block(p: &mut Parser<'_>) {
    let m = p.start();
    if !p.enter(Nesting::Block) {
        p.skip_too_deep();
        m.complete(p, BLOCK);
        return;
    }
    p.expect(T!['{']);
    statement_list(p);
    if !p.eat(T!['}']) {
        if p.at_end() {
            p.error(ErrorCode::Parse, "This block is not closed: the file ends before its `}`.");
        } else {
            let message = format!(
                "{} cannot begin a statement; the block before it is probably missing its closing `}}`.",
                capital(&p.describe_current())
            );
            p.error(ErrorCode::Name, message);
        }
    }
    p.leave(Nesting::Block);
    m.complete(p, BLOCK);
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn statement_list(p: &mut Parser<'_>) {
    while !p.at(T!['}']) && !p.at_end() {
        if at_item_start(p) && !at_statement_start(p) {
            return;
        }
        let before = p.token_index();
        statement(p);
        recover_statement(p, before);
    }
}

/// Tokens that begin a statement when they start a line (recovery stops there).
const STATEMENT_KEYWORDS: TokenSet = TokenSet::new(&[
    LET_KW,
    REG_KW,
    IF_KW,
    WHILE_KW,
    FOR_KW,
    EACH_KW,
    MATCH_KW,
    RETURN_KW,
    BREAK_KW,
    CONTINUE_KW,
    DEFER_KW,
    UNSAFE_KW,
    STACK_KW,
    BUFFER_KW,
    PARALLEL_KW,
    REDUCE_KW,
]);

fn at_statement_start(p: &Parser<'_>) -> bool {
    p.at_ts(STATEMENT_KEYWORDS)
}

/// After a statement that did not end cleanly, skips to a point where the next one can start.
fn recover_statement(p: &mut Parser<'_>, before: usize) {
    let clean = matches!(p.last_bumped(), Some(T![;]) | Some(T!['}'])) && p.token_index() > before;
    if clean {
        return;
    }
    let m = p.start();
    let mut balance = 0u32;
    let start = p.token_index();
    loop {
        match p.current() {
            EOF => break,
            T![;] if balance == 0 => {
                p.bump_any();
                break;
            }
            T!['}'] if balance == 0 => break,
            T!['{'] | T!['('] | T!['['] => balance += 1,
            T!['}'] | T![')'] | T![']'] => balance = balance.saturating_sub(1),
            _ if balance == 0
                && p.token_index() > before
                && p.at_line_start()
                && (at_statement_start(p) || at_item_start(p) || p.at(IDENT)) =>
            {
                break;
            }
            _ => {}
        }
        p.bump_any();
    }
    if p.token_index() == start {
        m.abandon(p);
    } else {
        m.complete(p, ERROR);
    }
}

/// One statement.
pub(crate) fn statement(p: &mut Parser<'_>) {
    match p.current() {
        IDENT if p.at_contextual("asm") && nth_word(p, 1) => asm_stmt(p),
        EACH_KW if p.in_recipe => recipes::each_stmt(p),
        IDENT if p.in_recipe && p.at_contextual("require") => recipes::require(p),
        REDUCE_KW => collect_stmt(p),
        IDENT if at_scan(p) => collect_stmt(p),
        IDENT if p.at_contextual("blocks") && nth_word(p, 1) && matches!(p.nth(2), T![,] | IN_KW) => coop_stmt(p),
        IDENT if p.at_contextual("shared") && nth_word(p, 1) && p.nth_at(2, T![:]) => shared_stmt(p),
        IDENT if p.at_contextual("pipeline") && nth_word(p, 1) && p.nth_at(2, T![:]) => pipeline_stmt(p),
        IDENT if p.at_contextual("barrier") && p.nth_at(1, T![;]) => {
            let m = p.start();
            p.bump_remap(BARRIER_KW);
            p.bump(T![;]);
            m.complete(p, BARRIER_STMT);
        }
        BUFFER_KW | STACK_KW => storage_stmt(p),
        LET_KW | REG_KW => let_stmt(p),
        BREAK_KW | CONTINUE_KW => {
            let m = p.start();
            let kind = if p.at(BREAK_KW) { BREAK_STMT } else { CONTINUE_STMT };
            p.bump_any();
            p.expect(T![;]);
            m.complete(p, kind);
        }
        RETURN_KW => {
            let m = p.start();
            p.bump(RETURN_KW);
            if !p.at(T![;]) {
                exprs::expr(p);
            }
            p.expect(T![;]);
            m.complete(p, RETURN_STMT);
        }
        IF_KW => if_stmt(p),
        MATCH_KW => match_stmt(p),
        WHILE_KW => {
            let m = p.start();
            p.bump(WHILE_KW);
            exprs::expr(p);
            block_or_error(p);
            m.complete(p, WHILE_STMT);
        }
        FOR_KW => for_stmt(p),
        PARALLEL_KW => parallel_stmt(p),
        EACH_KW => {
            let m = p.start();
            p.bump(EACH_KW);
            name(p);
            p.expect(IN_KW);
            exprs::expr(p);
            block_or_error(p);
            m.complete(p, EACH_STMT);
        }
        DEFER_KW => {
            let m = p.start();
            p.bump(DEFER_KW);
            if p.at(T!['}']) || p.at_end() {
                p.error(ErrorCode::Parse, "`defer` schedules one call statement, as in `defer close(f);`.");
            } else {
                statement(p);
            }
            m.complete(p, DEFER_STMT);
        }
        UNSAFE_KW => {
            let m = p.start();
            p.bump(UNSAFE_KW);
            block_or_error(p);
            m.complete(p, UNSAFE_STMT);
        }
        T!['{'] => block(p),
        _ => expr_stmt(p),
    }
}

/// A block where the grammar requires one (`if`, loops, regions).
fn block_or_error(p: &mut Parser<'_>) {
    if p.at(T!['{']) {
        block(p);
    } else {
        let message = format!("Expected `{{` to open a block, found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    }
}

/// The scan lookahead: `scan OP [exclusive] out for|parallel`.
fn at_scan(p: &Parser<'_>) -> bool {
    if !p.at_contextual("scan") || !at_reducer(p, 1) {
        return false;
    }
    let k = if p.nth_contextual(2, "exclusive") && !matches!(p.nth(3), FOR_KW | PARALLEL_KW) { 3 } else { 2 };
    matches!(p.nth(k + 1), FOR_KW | PARALLEL_KW)
}

/// True when the token `n` ahead is a reduction operator.
fn at_reducer(p: &Parser<'_>, n: usize) -> bool {
    match p.nth(n) {
        T![+] | T![*] | T![&] | T![|] | T![^] => true,
        IDENT => matches!(p.nth_text(n), "add_wrap" | "mul_wrap" | "min" | "max"),
        _ => false,
    }
}

/// Statement-form `reduce …;` / `scan …;`.
fn collect_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    collector(p);
    p.expect(T![;]);
    m.complete(p, COLLECT_STMT);
}

/// True when a `let` initializer is a collector form.
fn at_collector(p: &Parser<'_>) -> bool {
    p.at(REDUCE_KW) || p.at(COMPACT_KW) || at_scan(p)
}

/// `reduce …`, `compact …` or `scan …` without the final `;`.
fn collector(p: &mut Parser<'_>) {
    match p.current() {
        REDUCE_KW => reduce_expr(p),
        COMPACT_KW => compact_expr(p),
        _ => scan_expr(p),
    }
}

fn reducer(p: &mut Parser<'_>) {
    let m = p.start();
    if at_reducer(p, 0) {
        p.bump_any();
    } else {
        let message =
            format!("`reduce` takes one of + * & | ^ add_wrap mul_wrap min max, found {}.", p.describe_current());
        p.error(ErrorCode::ReduceOp, message);
        if !matches!(p.current(), FOR_KW | PARALLEL_KW | T![;] | EOF) {
            p.bump_any();
        }
    }
    m.complete(p, REDUCER);
}

/// `reduce OP warp yield e` or `reduce OP [out[k]] for|parallel i in n yield e`.
fn reduce_expr(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(REDUCE_KW);
    reducer(p);
    if p.at_contextual("warp") && p.nth_at(1, YIELD_KW) {
        p.bump_remap(WARP_KW);
        p.bump(YIELD_KW);
        exprs::expr(p);
    } else {
        if !matches!(p.current(), FOR_KW | PARALLEL_KW) {
            // The element the total is stored into: `out[k]`.
            let target = p.start();
            name_ref(p);
            p.expect(T!['[']);
            exprs::expr(p);
            p.expect(T![']']);
            target.complete(p, INDEX_EXPR);
        }
        collector_range(p, true);
        p.expect(YIELD_KW);
        exprs::expr(p);
    }
    m.complete(p, REDUCE_EXPR);
}

/// `for|parallel i in n` of a collector.
fn collector_range(p: &mut Parser<'_>, parallel_allowed: bool) {
    if p.at(FOR_KW) || (parallel_allowed && p.at(PARALLEL_KW)) {
        p.bump_any();
    } else {
        let what = if parallel_allowed { "`for` or `parallel`" } else { "`for`" };
        let message = format!("Expected {what} and the iteration (`for i in n`), found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    }
    name(p);
    p.expect(IN_KW);
    exprs::expr(p);
}

/// `compact out for i in n where pred yield e`
fn compact_expr(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(COMPACT_KW);
    name_ref(p);
    collector_range(p, false);
    p.expect(WHERE_KW);
    exprs::expr(p);
    p.expect(YIELD_KW);
    exprs::expr(p);
    m.complete(p, COMPACT_EXPR);
}

/// `scan OP [exclusive] out for|parallel i in n yield e`
fn scan_expr(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(SCAN_KW);
    reducer(p);
    if p.at_contextual("exclusive") && !matches!(p.nth(1), FOR_KW | PARALLEL_KW) {
        p.bump_remap(EXCLUSIVE_KW);
    }
    name_ref(p);
    collector_range(p, true);
    p.expect(YIELD_KW);
    exprs::expr(p);
    m.complete(p, SCAN_EXPR);
}

/// `let [mut] x [: T] = e;`, `reg x = e;`, `let [mut] Name(a, b) = e;`, and collector bindings.
fn let_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    if p.eat(LET_KW) {
        p.eat(MUT_KW);
    } else {
        p.bump(REG_KW);
    }
    if matches!(p.nth(1), T!['('] | T![.]) && at_word(p) {
        path(p);
        let list = p.start();
        if p.at(T!['(']) {
            delimited(p, T!['('], T![')'], "unpacking list", name);
        } else {
            p.expect(T!['(']);
        }
        list.complete(p, UNPACK_LIST);
        p.expect(T![=]);
        exprs::expr(p);
        p.expect(T![;]);
        m.complete(p, UNPACK_STMT);
        return;
    }
    name(p);
    if p.eat(T![:]) {
        types::type_(p);
    }
    if !p.expect(T![=]) {
        m.complete(p, LET_STMT);
        return;
    }
    let kind = if at_collector(p) {
        collector(p);
        COLLECT_STMT
    } else {
        exprs::expr(p);
        LET_STMT
    };
    p.expect(T![;]);
    m.complete(p, kind);
}

/// `stack name: T[N] [@place] = zeroed;` / `buffer …`
fn storage_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    let kind = if p.at(STACK_KW) { STACK_STMT } else { BUFFER_STMT };
    p.bump_any();
    name(p);
    p.expect(T![:]);
    storage_element(p);
    p.expect(T!['[']);
    exprs::expr(p);
    p.expect(T![']']);
    if p.at(T![@]) {
        types::placement(p);
    }
    p.expect(T![=]);
    p.expect(ZEROED_KW);
    p.expect(T![;]);
    m.complete(p, kind);
}

/// The element type of a `stack`/`buffer`/`shared`/`pipeline` declaration: a path, with type
/// arguments only when a second bracket group follows (`Pair[u8][4]`; `u8[4]` is the element
/// `u8` with capacity 4).
fn storage_element(p: &mut Parser<'_>) {
    let m = p.start();
    if !at_word(p) {
        let message = format!("Expected the element type here, found {}.", p.describe_current());
        p.error(ErrorCode::Name, message);
        m.abandon(p);
        return;
    }
    path(p);
    if p.at(T!['[']) && second_bracket_group_follows(p) {
        types::generic_arg_list(p);
    }
    m.complete(p, PATH_TYPE);
}

/// At `[`: true when the matching `]` is directly followed by another `[`.
fn second_bracket_group_follows(p: &Parser<'_>) -> bool {
    let mut balance = 0u32;
    for n in 0..4096 {
        match p.nth(n) {
            T!['['] => balance += 1,
            T![']'] => {
                balance -= 1;
                if balance == 0 {
                    return p.nth_at(n + 1, T!['[']);
                }
            }
            EOF | T![;] | T!['{'] | T!['}'] => return false,
            _ => {}
        }
    }
    false
}

/// `if c { … } [else if … | else { … }]`
fn if_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(IF_KW);
    exprs::expr(p);
    block_or_error(p);
    if p.at(ELSE_KW) {
        let e = p.start();
        p.bump(ELSE_KW);
        if p.at(IF_KW) {
            if p.enter(Nesting::Block) {
                if_stmt(p);
                p.leave(Nesting::Block);
            } else {
                p.skip_too_deep();
            }
        } else {
            block_or_error(p);
        }
        e.complete(p, ELSE_BRANCH);
    }
    m.complete(p, IF_STMT);
}

/// `match e { V => …; W(x) => { … } }`
fn match_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(MATCH_KW);
    exprs::expr(p);
    let list = p.start();
    if p.expect(T!['{']) {
        while !p.at(T!['}']) && !p.at_end() {
            if at_item_start(p) {
                break;
            }
            let before = p.token_index();
            match_arm(p);
            recover_statement(p, before);
        }
        p.expect(T!['}']);
    }
    list.complete(p, MATCH_ARM_LIST);
    m.complete(p, MATCH_STMT);
}

fn match_arm(p: &mut Parser<'_>) {
    let m = p.start();
    if !at_word(p) {
        let message = format!("Expected a variant name to begin a match arm, found {}.", p.describe_current());
        p.error(ErrorCode::Name, message);
        m.abandon(p);
        return;
    }
    path(p);
    if p.at(T!['(']) {
        let b = p.start();
        p.bump(T!['(']);
        name(p);
        if p.at(T!['(']) {
            p.error(
                ErrorCode::Parse,
                "A match arm names one variant and binds its payload to one name; patterns do not nest: write `X(inner) => { match inner { … } }`.",
            );
        } else {
            p.expect(T![')']);
        }
        b.complete(p, ARM_BINDER);
    }
    if !p.expect(T![=>]) {
        m.complete(p, MATCH_ARM);
        return;
    }
    if p.at(T!['{']) {
        block(p);
    } else if p.at(T!['}']) || p.at_end() {
        let message = format!("Expected the arm's statement or block after `=>`, found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    } else {
        let start = p.token_index();
        let simple = matches!(p.current(), RETURN_KW | BREAK_KW | CONTINUE_KW) || !at_compound_statement(p);
        statement(p);
        if !simple {
            p.error_tokens(
                ErrorCode::Parse,
                "An arm without braces is one return, break, continue, assignment or call; write a block `{ … }` for anything else.",
                start,
                start + 1,
            );
        }
    }
    m.complete(p, MATCH_ARM);
}

/// True when the statement here is not one an unbraced arm may hold.
fn at_compound_statement(p: &Parser<'_>) -> bool {
    match p.current() {
        LET_KW | REG_KW | IF_KW | MATCH_KW | WHILE_KW | FOR_KW | PARALLEL_KW | EACH_KW | DEFER_KW | UNSAFE_KW
        | STACK_KW | BUFFER_KW | REDUCE_KW => true,
        IDENT => {
            (p.at_contextual("asm") && nth_word(p, 1))
                || at_scan(p)
                || (p.at_contextual("blocks") && nth_word(p, 1) && matches!(p.nth(2), T![,] | IN_KW))
                || (p.at_contextual("shared") && nth_word(p, 1) && p.nth_at(2, T![:]))
                || (p.at_contextual("pipeline") && nth_word(p, 1) && p.nth_at(2, T![:]))
                || (p.at_contextual("barrier") && p.nth_at(1, T![;]))
        }
        _ => false,
    }
}

/// `for i in lo..hi { … }`, `for x in xs { … }`, `for i, x in xs { … }`
fn for_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(FOR_KW);
    name(p);
    let two_names = p.eat(T![,]);
    if two_names {
        name(p);
    }
    p.expect(IN_KW);
    exprs::expr(p);
    if !p.at(T!['{']) && !two_names {
        if p.eat(T![..]) {
            exprs::expr(p);
        } else {
            let message =
                format!("Expected `..` (a range `lo..hi`) or `{{` (an element loop), found {}.", p.describe_current());
            p.error(ErrorCode::Parse, message);
        }
    }
    block_or_error(p);
    m.complete(p, FOR_STMT);
}

/// `parallel i in n [after t, …] { … }`
pub(crate) fn parallel_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(PARALLEL_KW);
    name(p);
    p.expect(IN_KW);
    exprs::expr(p);
    if exprs::at_after_clause(p) {
        exprs::after_clause(p);
    }
    block_or_error(p);
    m.complete(p, PARALLEL_STMT);
}

/// `blocks b in G threads t in T { … } [then threads u in U { … }]`
fn coop_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(BLOCKS_KW);
    coop_axes(p);
    if p.at_contextual("threads") {
        p.bump_remap(THREADS_KW);
        coop_axes(p);
    } else {
        let message = format!(
            "A cooperative region is `blocks b in G threads t in T {{ … }}`; expected `threads`, found {}.",
            p.describe_current()
        );
        p.error(ErrorCode::Parse, message);
    }
    block_or_error(p);
    if p.at_contextual("then") && p.nth_contextual(1, "threads") {
        let t = p.start();
        p.bump_remap(THEN_KW);
        p.bump_remap(THREADS_KW);
        coop_axes(p);
        block_or_error(p);
        t.complete(p, THEN_CLAUSE);
    }
    m.complete(p, COOP_STMT);
}

/// `a, b in X, Y`: names, `in`, as many extents.
fn coop_axes(p: &mut Parser<'_>) {
    let m = p.start();
    let mut names = 1usize;
    name(p);
    while p.eat(T![,]) {
        name(p);
        names += 1;
    }
    p.expect(IN_KW);
    let mut extents = 1usize;
    exprs::expr(p);
    while p.eat(T![,]) {
        exprs::expr(p);
        extents += 1;
    }
    if names != extents {
        let message = format!(
            "{names} name{} take{} {names} extent{}; {extents} {} written.",
            if names == 1 { "" } else { "s" },
            if names == 1 { "s" } else { "" },
            if names == 1 { "" } else { "s" },
            if extents == 1 { "is" } else { "are" },
        );
        p.error(ErrorCode::Parse, message);
    }
    m.complete(p, COOP_AXES);
}

/// `shared name: T[N];` or `shared name: T[N] = zeroed;`
fn shared_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(SHARED_KW);
    name(p);
    p.bump(T![:]);
    storage_path(p);
    p.expect(T!['[']);
    exprs::expr(p);
    p.expect(T![']']);
    if p.eat(T![=]) {
        p.expect(ZEROED_KW);
    }
    p.expect(T![;]);
    m.complete(p, SHARED_STMT);
}

/// `pipeline name: T[N] depth D;`
fn pipeline_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(PIPELINE_KW);
    name(p);
    p.bump(T![:]);
    storage_path(p);
    p.expect(T!['[']);
    exprs::expr(p);
    p.expect(T![']']);
    if !p.eat_contextual("depth", DEPTH_KW) {
        let message =
            format!("A pipeline states its stages: `pipeline p: f32[256] depth 2;`; found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    }
    exprs::expr(p);
    p.expect(T![;]);
    m.complete(p, PIPELINE_STMT);
}

/// A bare element path (no type arguments), as `shared` and `pipeline` take.
fn storage_path(p: &mut Parser<'_>) {
    let m = p.start();
    path(p);
    m.complete(p, PATH_TYPE);
}

/// `asm [volatile] target [sm_NN] "template" [(operands)] [clobbers(…)] [effects(…)];`
fn asm_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(ASM_KW);
    p.eat_contextual("volatile", VOLATILE_KW);
    name_ref(p);
    if at_word(p) {
        name_ref(p);
    }
    if !p.eat(STRING) {
        let message = format!(
            "Typed assembly is `asm target \"instructions\" (operands) effects(…);`; expected the template string, found {}.",
            p.describe_current()
        );
        p.error(ErrorCode::Parse, message);
    }
    if p.at(T!['(']) {
        let list = p.start();
        p.bump(T!['(']);
        while !p.at(T![')']) && !p.at_end() && !p.at(T![;]) {
            let before = p.token_index();
            asm_operand(p);
            p.eat(T![,]);
            if p.token_index() == before {
                break;
            }
        }
        p.expect(T![')']);
        list.complete(p, ASM_OPERAND_LIST);
    }
    if p.at_contextual("clobbers") && p.nth_at(1, T!['(']) {
        let c = p.start();
        p.bump_remap(CLOBBERS_KW);
        delimited(p, T!['('], T![')'], "clobber list", name_ref);
        c.complete(p, CLOBBERS_CLAUSE);
    }
    if p.at(EFFECTS_KW) {
        let e = p.start();
        p.bump(EFFECTS_KW);
        items::effect_list(p, true);
        e.complete(p, ASM_EFFECTS);
    }
    p.expect(T![;]);
    m.complete(p, ASM_STMT);
}

fn asm_operand(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at_contextual("out") && nth_word(p, 1) && p.nth_at(2, T![:]) {
        p.bump_remap(OUT_KW);
        name(p);
        p.bump(T![:]);
        types::type_(p);
        if p.eat(T![=]) {
            exprs::expr(p);
        }
    } else {
        exprs::expr(p);
    }
    m.complete(p, ASM_OPERAND);
}

/// An expression statement, an assignment `p = e;` / `p op= e;`, or `spawn … into g;`.
fn expr_stmt(p: &mut Parser<'_>) {
    let Some(lhs) = exprs::expr(p) else {
        // The expression reported its error; a stray `;` is consumed by recovery.
        return;
    };
    let m = lhs.precede(p);
    match p.current() {
        T![=] | T![+=] | T![-=] | T![*=] | T![/=] | T![%=] | T![&=] | T![|=] | T![^=] => {
            p.bump_any();
            exprs::expr(p);
            p.expect(T![;]);
            m.complete(p, ASSIGN_STMT);
        }
        IDENT if lhs.kind() == SPAWN_EXPR && p.at_contextual("into") && nth_word(p, 1) => {
            let into = p.start();
            p.bump_remap(INTO_KW);
            name_ref(p);
            into.complete(p, INTO_CLAUSE);
            p.expect(T![;]);
            m.complete(p, EXPR_STMT);
        }
        _ => {
            if p.at(T!['}']) {
                // Rust's tail expression: a block's last expression is not its value here.
                p.error_after_previous(
                    ErrorCode::Parse,
                    "A block does not end in a value in CAIRN: a function returns with `return …;`, and every statement ends with `;`.",
                );
            } else if p.at(T![+]) && p.nth_at(1, T![+]) || p.at(T![-]) && p.nth_at(1, T![-]) {
                p.error(ErrorCode::Parse, "CAIRN has no `++` or `--`: write `i += 1;` (or `i -= 1;`).");
            } else {
                p.expect(T![;]);
            }
            m.complete(p, EXPR_STMT);
        }
    }
}
