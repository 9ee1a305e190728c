//! Expressions: precedence climbing over the C-like levels of language §9.1.
//!
//! Levels, loosest first: `||`, `&&`, `|`, `^`, `&`, `== !=`, `< <= > >=`, `+ -`, `* / %`; all
//! left-associative. Prefix `- ! ~ try spawn` take a full postfix chain; postfix calls, indexes,
//! parts and fields bind tightest. `if`/`match` are statements, never expressions (`E-NAME`).
//!
//! Depth: like the original, every entry into [`expr_bp`] is one level of expression nesting
//! (parentheses, operands of prefix operators, right operands, arguments, index positions) and
//! the 101st level is `E-DEPTH`. A left-associative chain adds no nesting level, but each link
//! deepens the tree, so links count against a separate bound on the tree's depth
//! ([`TREE_DEPTH_LIMIT`]); past either, the rest of the expression is skipped flat.

use super::*;
use crate::grammar::{recipes, stmts, types};
use crate::parser::Nesting;

/// How deep an expression's tree may grow, operator chains included.
pub(crate) const TREE_DEPTH_LIMIT: u32 = 1000;

/// The level of a binary operator token, if it is one.
fn binary_level(kind: SyntaxKind) -> Option<u8> {
    Some(match kind {
        T![||] => 1,
        T![&&] => 2,
        T![|] => 3,
        T![^] => 4,
        T![&] => 5,
        T![==] | T![!=] => 6,
        T![<] | T![<=] | T![>] | T![>=] => 7,
        T![+] | T![-] => 8,
        T![*] | T![/] | T![%] => 9,
        _ => return None,
    })
}

/// The level at which only a prefix operand (a primary with its postfixes) is read.
const PREFIX_LEVEL: u8 = 10;

/// One whole expression. Returns its node, or `None` when nothing could be parsed (an error was
/// reported at the current token).
pub(crate) fn expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    expr_bp(p, 1)
}

/// The expression routine: one nesting level.
pub(crate) fn expr_bp(p: &mut Parser<'_>, min_level: u8) -> Option<CompletedMarker> {
    if !p.enter(Nesting::Expression) {
        p.skip_too_deep();
        return None;
    }
    let result = expr_bp_inner(p, min_level);
    p.leave(Nesting::Expression);
    result
}

fn expr_bp_inner(p: &mut Parser<'_>, min_level: u8) -> Option<CompletedMarker> {
    let mut lhs = unary(p)?;
    let mut links = 0u32;
    loop {
        let op = p.current();
        let Some(level) = binary_level(op) else { break };
        if level < min_level {
            break;
        }
        if p.expression_tree_depth() >= TREE_DEPTH_LIMIT {
            p.error(
                ErrorCode::Depth,
                format!(
                    "This chain of operators nests the expression deeper than {TREE_DEPTH_LIMIT} levels; split it with intermediate `let`s."
                ),
            );
            let m = lhs.precede(p);
            p.skip_too_deep();
            lhs = m.complete(p, BIN_EXPR);
            break;
        }
        let m = lhs.precede(p);
        p.bump(op);
        if (op == T![<] || op == T![>]) && p.at(op) && p.nth_is_joint(0) {
            let (shift, builtin) = if op == T![<] { ("<<", "shl_wrap(x, k)") } else { (">>", "shr(x, k)") };
            p.error(
                ErrorCode::Parse,
                format!("There is no `{shift}` operator in CAIRN: shifts are the checked builtins {builtin}."),
            );
            p.bump(op);
        }
        links += 1;
        p.deepen_expression_tree(1);
        expr_bp(p, level + 1);
        lhs = m.complete(p, BIN_EXPR);
    }
    p.unwind_expression_tree(links);
    Some(lhs)
}

/// A prefix form or a primary, followed by its postfixes.
fn unary(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let lhs = match p.current() {
        T![-] | T![!] | T![~] => {
            let m = p.start();
            p.bump_any();
            expr_bp(p, PREFIX_LEVEL);
            m.complete(p, PREFIX_EXPR)
        }
        TRY_KW => {
            let m = p.start();
            p.bump(TRY_KW);
            expr_bp(p, PREFIX_LEVEL);
            m.complete(p, TRY_EXPR)
        }
        SPAWN_KW => spawn_expr(p),
        _ => primary(p)?,
    };
    Some(postfix(p, lhs))
}

/// `spawn f(args) [after a, b]` or `spawn parallel i in n [after …] { … }`.
fn spawn_expr(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(SPAWN_KW);
    if p.at(PARALLEL_KW) {
        stmts::parallel_stmt(p);
    } else {
        expr_bp(p, PREFIX_LEVEL);
        if at_after_clause(p) {
            after_clause(p);
        }
    }
    m.complete(p, SPAWN_EXPR)
}

/// `after` is a keyword here unless it is used as a name (`after = …`, `after.x`, `after(…)`).
pub(crate) fn at_after_clause(p: &Parser<'_>) -> bool {
    p.at_contextual("after") && !matches!(p.nth(1), T![=] | T![.] | T!['('] | T!['['])
}

/// `after t1, t2`
pub(crate) fn after_clause(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_remap(AFTER_KW);
    name_ref(p);
    while p.eat(T![,]) {
        name_ref(p);
    }
    m.complete(p, AFTER_CLAUSE);
}

fn primary(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let m = p.start();
    let kind = match p.current() {
        T!['('] => {
            p.bump(T!['(']);
            expr(p);
            p.expect(T![')']);
            PAREN_EXPR
        }
        T![|] | T![||] => {
            closure(p);
            CLOSURE_EXPR
        }
        IDENT if p.in_recipe && p.at_contextual("fold") => {
            fold_expr(p);
            FOLD_EXPR
        }
        EACH_KW if p.in_recipe => {
            each_expr(p);
            EACH_EXPR
        }
        TRUE_KW | FALSE_KW | INT_NUMBER | FLOAT_NUMBER | STRING | CHAR => {
            p.bump_any();
            LITERAL
        }
        IF_KW | MATCH_KW => {
            let word = p.nth_text(0).to_string();
            p.error(
                ErrorCode::Name,
                format!(
                    "`{word}` is a statement, not an expression: declare the value first (`let mut x = …;`) and assign it in each branch."
                ),
            );
            m.abandon(p);
            return None;
        }
        IDENT => {
            name_ref(p);
            NAME_EXPR
        }
        _ => {
            // Not an expression. The original asks for an identifier here, so the code is `E-NAME`;
            // a reserved word is taken into the tree so that parsing can go on.
            let habit = match p.current() {
                T!['['] => Some(
                    "CAIRN has no array literals: declare `stack xs:u64[3] = zeroed;` and assign each element, or build a Vec with std.vec.",
                ),
                T![&] | T![&&] => Some(
                    "CAIRN lends without `&`: pass the name itself, and the parameter's type (`ro<T>` or `rw<T>`) says how it is lent.",
                ),
                T![=] if p.last_bumped() == Some(T![..]) => Some(
                    "Ranges are half-open and have no `..=`: `lo..hi` stops before `hi`, so `0..=3` is written `0..4`.",
                ),
                T![+] if p.last_bumped() == Some(T![+]) => Some("CAIRN has no `++`: write `i += 1;`."),
                T![-] if p.last_bumped() == Some(T![-]) => Some("CAIRN has no `--`: write `i -= 1;`."),
                _ => None,
            };
            match habit {
                Some(message) => {
                    p.error(ErrorCode::Parse, message);
                    // A stray `=`, `+` or `-`: taken into an error node, and what follows read
                    // as the operand it was meant to precede, so one habit is one refusal.
                    if matches!(p.current(), T![=] | T![+] | T![-]) {
                        m.abandon(p);
                        let e = p.start();
                        p.bump_any();
                        e.complete(p, ERROR);
                        if p.at(T![;]) || p.at(T!['{']) || p.at_end() {
                            return None;
                        }
                        return primary(p);
                    }
                }
                None => {
                    let message = format!("Expected an expression here, found {}.", p.describe_current());
                    p.error(ErrorCode::Name, message);
                }
            }
            if !p.current().is_keyword() {
                m.abandon(p);
                return None;
            }
            let r = p.start();
            p.bump_any();
            r.complete(p, NAME_REF);
            NAME_EXPR
        }
    };
    Some(m.complete(p, kind))
}

/// Calls, indexes, parts and fields, left to right. Like an operator chain, each link deepens
/// the tree by one, so a postfix chain counts against [`TREE_DEPTH_LIMIT`] (`x[0][0]…`,
/// `x.a.a…` and `x.f().f()…` included): every later walk over the tree is bounded by it.
fn postfix(p: &mut Parser<'_>, mut lhs: CompletedMarker) -> CompletedMarker {
    let mut links = 0u32;
    loop {
        if matches!(p.current(), T!['('] | T!['['] | T![.]) && p.expression_tree_depth() >= TREE_DEPTH_LIMIT {
            p.error(
                ErrorCode::Depth,
                format!(
                    "This chain of calls, indexes and fields nests the expression deeper than {TREE_DEPTH_LIMIT} levels; bind a prefix of it to a `let` first."
                ),
            );
            let m = lhs.precede(p);
            skip_postfix_chain(p);
            lhs = m.complete(p, ERROR);
            break;
        }
        lhs = match p.current() {
            T!['('] => {
                let m = lhs.precede(p);
                p.deepen_expression_tree(1);
                links += 1;
                arg_list(p);
                m.complete(p, CALL_EXPR)
            }
            T!['['] => {
                let m = lhs.precede(p);
                p.deepen_expression_tree(1);
                links += 1;
                p.bump(T!['[']);
                let typed = index_arg(p);
                let kind = if !typed && p.eat(T![..]) {
                    expr(p);
                    PART_EXPR
                } else {
                    while p.eat(T![,]) {
                        index_arg(p);
                    }
                    INDEX_EXPR
                };
                p.expect(T![']']);
                m.complete(p, kind)
            }
            T![.] => {
                let m = lhs.precede(p);
                p.deepen_expression_tree(1);
                links += 1;
                p.bump(T![.]);
                name_ref(p);
                m.complete(p, FIELD_EXPR)
            }
            _ => break,
        };
    }
    p.unwind_expression_tree(links);
    lhs
}

/// One index, or a type argument that no expression can spell (`fn(u64) -> u64` in
/// `Buf[fn(u64) -> u64](3)`): true when it was a type.
fn index_arg(p: &mut Parser<'_>) -> bool {
    if p.at(FN_KW) {
        let m = p.start();
        types::type_(p);
        m.complete(p, TYPE_ARG_EXPR);
        return true;
    }
    expr(p);
    false
}

/// Skips the rest of a postfix chain flat, without recursion: `.name` links and bracketed
/// groups, each to its matching close.
fn skip_postfix_chain(p: &mut Parser<'_>) {
    loop {
        match p.current() {
            T![.] => {
                p.bump_any();
                if p.at(IDENT) {
                    p.bump_any();
                }
            }
            T!['('] | T!['['] => {
                let mut balance = 0u32;
                loop {
                    match p.current() {
                        EOF => return,
                        T!['('] | T!['['] | T!['{'] => balance += 1,
                        T![')'] | T![']'] | T!['}'] => balance = balance.saturating_sub(1),
                        _ => {}
                    }
                    p.bump_any();
                    if balance == 0 {
                        break;
                    }
                }
            }
            _ => return,
        }
    }
}

/// `(a, b, …)`; in a recipe an argument may be an `each` splice.
pub(crate) fn arg_list(p: &mut Parser<'_>) {
    let m = p.start();
    delimited(p, T!['('], T![')'], "argument list", |p| {
        expr(p);
    });
    m.complete(p, ARG_LIST);
}

/// `|a: A, b: B| -> R { … }` or `|| { … }`.
fn closure(p: &mut Parser<'_>) {
    let params = p.start();
    if p.at(T![||]) {
        p.bump(T![||]);
    } else {
        delimited(p, T![|], T![|], "closure parameter list", closure_param);
    }
    params.complete(p, PARAM_LIST);
    if p.at(T![->]) {
        let r = p.start();
        p.bump(T![->]);
        types::type_(p);
        r.complete(p, RET_TYPE);
    }
    if p.at(T!['{']) {
        stmts::block(p);
    } else {
        let message = format!("A closure's body is a block in braces; found {}.", p.describe_current());
        p.error(ErrorCode::Parse, message);
    }
}

fn closure_param(p: &mut Parser<'_>) {
    let m = p.start();
    name(p);
    if p.expect(T![:]) {
        types::type_(p);
    }
    m.complete(p, PARAM);
}

/// `fold OP each f in R { e }` / `fold lib.join each …` (recipes only).
fn fold_expr(p: &mut Parser<'_>) {
    p.bump_remap(FOLD_KW);
    let combiner = p.start();
    if p.at(IDENT) {
        path(p);
    } else if p.at_ts(BINARY_OPERATORS) {
        p.bump_any();
    }
    // `fold each …` (no combiner) is accepted, as by the original; the combiner node stays empty.
    combiner.complete(p, REDUCER);
    if !p.at(EACH_KW) {
        p.error(
            ErrorCode::Parse,
            "`fold` takes an operator or a two-operand function, then what it joins: `fold + each f in R { … }`.",
        );
        return;
    }
    expr_bp(p, PREFIX_LEVEL);
}

/// `each x in lo [.. hi] [where …] { e, … }` (recipes only).
fn each_expr(p: &mut Parser<'_>) {
    p.bump(EACH_KW);
    name(p);
    p.expect(IN_KW);
    expr(p);
    if p.eat(T![..]) {
        expr(p);
    }
    while p.at(WHERE_KW) {
        recipes::where_clause(p);
    }
    if p.at(T!['{']) {
        let m = p.start();
        delimited(p, T!['{'], T!['}'], "each splice", |p| {
            expr(p);
        });
        m.complete(p, ARG_LIST);
    } else {
        p.expect(T!['{']);
    }
}
