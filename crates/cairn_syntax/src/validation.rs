//! Checks on the finished tree that the grammar itself does not make.
//!
//! These are refusals the original front end raises while parsing but that need a whole
//! construct in view: a call's callee shape (`E-CALL`) and explicit type arguments (`E-TYPE`), an
//! expression body without a result type (`E-EXPRESSION-BODY`), `align(n)` (`E-ALIGN`), a second
//! `lends` (`E-LENDS`), an extern's link name (`E-EXTERN`), repeated plan items (`E-PLAN`), recipe
//! parameter kinds (`E-RECIPE`), collector bindings (`E-COLLECT-BINDING`) and assembly operand
//! order (`E-ASM-OPERANDS`). They read the tree only, never names from elsewhere (duplicate
//! declarations need modules and are the checker's). The walk is iterative; the few recursive
//! helpers follow expression nesting, which the parser bounds.

use rowan::{GreenNode, GreenNodeData, Language, NodeOrToken, TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::error::ErrorCode;
use crate::{CairnLanguage, SyntaxError, SyntaxNode, SyntaxToken};

/// Every structural refusal in the tree.
///
/// The walk runs over the green tree, which costs no allocation; only the nodes a rule looks at
/// get a (local) red tree, and their errors are shifted to absolute positions.
pub(crate) fn validate(root: &GreenNode) -> Vec<SyntaxError> {
    let mut errors = Vec::new();
    let mut stack: Vec<(&GreenNodeData, TextSize)> = vec![(root, TextSize::from(0))];
    while let Some((green, offset)) = stack.pop() {
        let kind = CairnLanguage::kind_from_raw(green.kind());
        let check: Option<fn(&SyntaxNode, &mut Vec<SyntaxError>)> = match kind {
            CALL_EXPR => Some(check_call),
            FN => Some(check_expression_body),
            STRUCT => Some(check_align),
            FIELD_LIST => Some(check_lends),
            EXTERN_FN => Some(check_link_name),
            PLAN => Some(check_plan_items),
            RECIPE => Some(check_recipe_params),
            COLLECT_STMT => Some(check_collect_binding),
            ASM_OPERAND_LIST => Some(check_asm_operands),
            _ => None,
        };
        if let Some(check) = check {
            let node = SyntaxNode::new_root(green.to_owned());
            let before = errors.len();
            check(&node, &mut errors);
            for error in &mut errors[before..] {
                error.range += offset;
            }
        }
        let mut child_offset = offset;
        for child in green.children() {
            match child {
                NodeOrToken::Node(node) => {
                    stack.push((node, child_offset));
                    child_offset += node.text_len();
                }
                NodeOrToken::Token(token) => child_offset += token.text_len(),
            }
        }
    }
    errors
}

fn error(errors: &mut Vec<SyntaxError>, code: ErrorCode, message: impl Into<String>, range: TextRange) {
    errors.push(SyntaxError::new(code, message, range));
}

/// The range of the first significant token of `node` (where the original reports
/// declaration-level refusals: the `pub` included).
fn start_range(node: &SyntaxNode) -> TextRange {
    significant_tokens(node).next().map_or(node.text_range(), |t| t.text_range())
}

fn significant_tokens(node: &SyntaxNode) -> impl Iterator<Item = SyntaxToken> + use<> {
    node.descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia() && t.kind() != ERROR_TOKEN)
}

fn expr_children(node: &SyntaxNode) -> impl Iterator<Item = SyntaxNode> + use<> {
    node.children().filter(|c| is_expr(c.kind()))
}

fn is_expr(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        LITERAL
            | NAME_EXPR
            | PAREN_EXPR
            | CALL_EXPR
            | INDEX_EXPR
            | PART_EXPR
            | FIELD_EXPR
            | PREFIX_EXPR
            | BIN_EXPR
            | TRY_EXPR
            | SPAWN_EXPR
            | CLOSURE_EXPR
            | FOLD_EXPR
            | EACH_EXPR
            | TYPE_ARG_EXPR
    )
}

/// Looks through parentheses, which the original keeps no node for.
fn unparen(mut node: SyntaxNode) -> SyntaxNode {
    while node.kind() == PAREN_EXPR {
        match expr_children(&node).next() {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// True for a name or a dotted chain of fields on a name (`f`, `m.f`, `std.io.println`).
fn is_name_chain(node: &SyntaxNode) -> bool {
    let mut node = unparen(node.clone());
    loop {
        match node.kind() {
            NAME_EXPR => return true,
            FIELD_EXPR => match expr_children(&node).next() {
                Some(base) => node = unparen(base),
                None => return false,
            },
            _ => return false,
        }
    }
}

/// `f(x)`, `m.f(x)`, `f[u64](x)`, `v.method(x)` are calls; `f(x)(y)`, `xs[1..2](y)`, `"s"(x)` are
/// not (`E-CALL`). Brackets right before the arguments are explicit type arguments, each a
/// natural, a name, a dotted name, a nested instance or a function type (`E-TYPE` otherwise).
fn check_call(call: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let Some(callee) = expr_children(call).next() else { return };
    let mut callee = unparen(callee);
    if callee.kind() == INDEX_EXPR
        && let Some(base) = expr_children(&callee).next()
        && matches!(unparen(base.clone()).kind(), NAME_EXPR | FIELD_EXPR)
    {
        for argument in expr_children(&callee).skip(1) {
            check_type_argument(&argument, errors);
        }
        callee = unparen(base);
    }
    if is_name_chain(&callee) || callee.kind() == FIELD_EXPR {
        return;
    }
    error(
        errors,
        ErrorCode::Call,
        "Only direct calls, methods and qualified constructors are supported: call a function by its name (bind a computed callee to a name first).",
        start_range(&callee),
    );
}

fn check_type_argument(argument: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let argument = unparen(argument.clone());
    let ok = match argument.kind() {
        LITERAL => argument.first_token().is_some_and(|t| matches!(t.kind(), INT_NUMBER | CHAR)),
        TYPE_ARG_EXPR => true,
        INDEX_EXPR => {
            for inner in expr_children(&argument).skip(1) {
                check_type_argument(&inner, errors);
            }
            expr_children(&argument).next().is_some_and(|base| is_name_chain(&base))
        }
        _ => is_name_chain(&argument),
    };
    if !ok {
        error(
            errors,
            ErrorCode::Type,
            "Expected a type argument here: a type name such as u64, an instance such as Buf[u8], or a natural literal.",
            start_range(&argument),
        );
    }
}

/// `fn f() = e;` needs a result type other than `void`.
fn check_expression_body(function: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    if !function.children().any(|c| c.kind() == EXPR_BODY) {
        return;
    }
    let result = function.children().find(|c| c.kind() == RET_TYPE);
    let is_void = result.as_ref().is_some_and(|r| {
        let text: String = significant_tokens(r).skip(1).map(|t| t.text().to_string()).collect();
        text == "void"
    });
    if result.is_none() || is_void {
        error(
            errors,
            ErrorCode::ExpressionBody,
            "An expression body `= expr;` needs a result type other than void: write `-> T` before it, or use a block body.",
            start_range(function),
        );
    }
}

/// `align(n)`: a power of two from 8 to 65536.
fn check_align(strukt: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let Some(clause) = strukt.children().find(|c| c.kind() == ALIGN_CLAUSE) else { return };
    let Some(value) = significant_tokens(&clause).find(|t| t.kind() == INT_NUMBER) else { return };
    let Ok(n) = value.text().parse::<u64>() else { return };
    if !(8..=65536).contains(&n) || !n.is_power_of_two() {
        error(
            errors,
            ErrorCode::Align,
            format!("align({n}) is not allowed: align raises a record's alignment to a power of two from 8 to 65536."),
            start_range(strukt),
        );
    }
}

/// One `lends` per record.
fn check_lends(fields: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    for (i, clause) in fields.children().filter(|c| c.kind() == LENDS_CLAUSE).enumerate() {
        if i == 0 {
            continue;
        }
        // The original reports at the token after `lends`.
        let at = significant_tokens(&clause).nth(1).map_or(clause.text_range(), |t| t.text_range());
        error(errors, ErrorCode::Lends, "A record lends one view; this second `lends` clause must go.", at);
    }
}

/// An extern's quoted link name is one C symbol.
fn check_link_name(extern_fn: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let Some(name) = extern_fn.children_with_tokens().filter_map(|e| e.into_token()).find(|t| t.kind() == STRING)
    else {
        return;
    };
    let inner = name.text().trim_start_matches('"').trim_end_matches('"');
    let mut chars = inner.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '@'));
    if !valid {
        error(
            errors,
            ErrorCode::Extern,
            "An extern's link name is one C symbol: a letter or `_`, then letters, digits and `_`.",
            name.text_range(),
        );
    }
}

/// A plan names each item once.
fn check_plan_items(plan: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let mut seen: Vec<String> = Vec::new();
    for item in plan.children().filter(|c| c.kind() == PLAN_ITEM) {
        let Some(word) = significant_tokens(&item).next() else { continue };
        if seen.iter().any(|w| w == word.text()) {
            error(
                errors,
                ErrorCode::Plan,
                format!("A plan sets each of its items once; `{}` is set twice.", word.text()),
                word.text_range(),
            );
        } else {
            seen.push(word.text().to_string());
        }
    }
}

/// A recipe's bracket parameters are naturals (`K:nat`) and function names (`F:fn`).
fn check_recipe_params(recipe: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let Some(list) = recipe.children().find(|c| c.kind() == GENERIC_PARAM_LIST) else { return };
    let bad = list.children().filter(|c| c.kind() == GENERIC_PARAM).any(|param| {
        !param.children_with_tokens().filter_map(|e| e.into_token()).any(|t| matches!(t.kind(), NAT_KW | FN_KW))
    });
    if bad {
        error(
            errors,
            ErrorCode::Recipe,
            "A recipe's bracket parameters are naturals (K:nat) and function names (F:fn); the record it is derived for follows `for`.",
            start_range(recipe),
        );
    }
}

/// Collectors bind immutably; a reduction either binds its total or stores it, never both.
fn check_collect_binding(statement: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let tokens: Vec<SyntaxToken> =
        statement.children_with_tokens().filter_map(|e| e.into_token()).filter(|t| !t.kind().is_trivia()).collect();
    let is_let = tokens.first().is_some_and(|t| matches!(t.kind(), LET_KW | REG_KW));
    let is_mut = tokens.iter().any(|t| matches!(t.kind(), MUT_KW | REG_KW));
    let Some(collector) = statement.children().find(|c| matches!(c.kind(), REDUCE_EXPR | SCAN_EXPR | COMPACT_EXPR))
    else {
        return;
    };
    let what = match collector.kind() {
        REDUCE_EXPR => "A reduction",
        SCAN_EXPR => "A scan",
        _ => "Compaction",
    };
    let at = start_range(statement);
    if is_mut {
        error(
            errors,
            ErrorCode::CollectBinding,
            format!("{what} binds an immutable result: write `let`, not `let mut` or `reg`."),
            at,
        );
        return;
    }
    if collector.kind() == COMPACT_EXPR
        && let Some(ty) =
            statement.children().find(|c| matches!(c.kind(), PATH_TYPE | BORROW_TYPE | FN_TYPE | DYN_TYPE))
        && ty.text().to_string().trim() != "usize"
    {
        error(
            errors,
            ErrorCode::CollectBinding,
            "Compaction binds how many elements it wrote, a usize: annotate it `usize` or not at all.",
            at,
        );
        return;
    }
    if collector.kind() == REDUCE_EXPR {
        let stores = reduce_target(&collector).is_some();
        if is_let == stores {
            error(
                errors,
                ErrorCode::CollectBinding,
                "A reduction binds its total with let, or writes it into one element, as in `reduce + out[k] for i in n yield e;`, never both or neither.",
                at,
            );
        }
    }
}

/// Assembly outputs come before inputs, as the template numbers them.
fn check_asm_operands(list: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let mut seen_input = false;
    for operand in list.children().filter(|c| c.kind() == ASM_OPERAND) {
        let output = operand.children_with_tokens().filter_map(|e| e.into_token()).find(|t| t.kind() == OUT_KW);
        match output {
            Some(out) if seen_input => {
                error(
                    errors,
                    ErrorCode::AsmOperands,
                    "Outputs come before inputs, as the template numbers them.",
                    out.text_range(),
                );
            }
            Some(_) => {}
            None => seen_input = true,
        }
    }
}

/// The `out[k]` a statement-form reduction stores into: an index written before `for`/`parallel`.
pub(crate) fn reduce_target(reduce: &SyntaxNode) -> Option<SyntaxNode> {
    for element in reduce.children_with_tokens() {
        match element {
            rowan::NodeOrToken::Token(t) if matches!(t.kind(), FOR_KW | PARALLEL_KW | WARP_KW | YIELD_KW) => {
                return None;
            }
            rowan::NodeOrToken::Node(n) if n.kind() == INDEX_EXPR => return Some(n),
            _ => {}
        }
    }
    None
}
