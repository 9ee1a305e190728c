//! Declarations as text, the way `cairn state` and `cairn doc` show them (protocol §7.1).
//!
//! A signature is `fn NAME(p:T, q:U) -> R` plus its ceiling (` pure` or ` effects(a, b)` as
//! written); a view always shows its place (`ro<T>[n]@host`). Types are re-rendered from the
//! tree, never copied from the source, so spacing in the source never shows: a record is
//! `struct Pair { a:u64; b:u64; }`, a sum `enum Fault { Empty; TooBig(u64); }`, a constant
//! `const N:usize = (4 * 8);` with every binary operation parenthesised.
//!
//! Signatures of an accepted program are rendered from the checked signature (resolved types);
//! those of a refused program from the tree as written.

use cairn_syntax::SyntaxNode;
use cairn_syntax::ast::{self, AstNode};

use crate::body::{Expr, ExprId, ExtentRef, TypeArg, TypeRef, body_with_source_map, lower_type};
use crate::db::Db;
use crate::input::Item;
use crate::signature::fn_signature;

/// A written type.
pub fn type_ref_text(ty: &TypeRef) -> String {
    match ty {
        TypeRef::Path { path, args } => {
            let mut out = path.iter().map(|s| &**s).collect::<Vec<_>>().join(".");
            if !args.is_empty() {
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| match arg {
                        TypeArg::Nat(n) => n.to_string(),
                        TypeArg::Type(t) => type_ref_text(t),
                    })
                    .collect();
                out.push_str(&format!("[{}]", args.join(", ")));
            }
            out
        }
        TypeRef::Borrow { rw, inner, extent, place } => {
            let mode = if *rw { "rw" } else { "ro" };
            match extent {
                Some(extent) => {
                    let extent = match extent {
                        ExtentRef::Literal(n) | ExtentRef::Name(n) => n,
                    };
                    format!("{mode}<{}>[{extent}]@{}", type_ref_text(inner), place.as_deref().unwrap_or("host"))
                }
                None => format!("{mode}<{}>", type_ref_text(inner)),
            }
        }
        TypeRef::Fn { params, ret } => {
            let shown: Vec<String> = params.iter().map(type_ref_text).collect();
            match ret {
                Some(ret) => format!("fn({}) -> {}", shown.join(", "), type_ref_text(ret)),
                None => format!("fn({})", shown.join(", ")),
            }
        }
        TypeRef::Dyn(path) => format!("dyn {}", path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".")),
        TypeRef::Missing => "?".to_string(),
    }
}

fn written(ty: Option<ast::Type>) -> String {
    ty.map(|t| type_ref_text(&lower_type(&t))).unwrap_or_else(|| "?".to_string())
}

/// A foreign function as written: `extern "csym" fn name(params) -> T effects(...)`.
fn extern_text(db: &dyn Db, item: Item, foreign: &ast::ExternFn) -> String {
    let name = foreign.name().map(|n| n.text()).unwrap_or_default();
    let signature = fn_signature(db, item);
    let params: Vec<String> = signature.params.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect();
    let mut out = String::from("extern ");
    if let Some(link) = foreign.link_name() {
        out.push_str(link.text());
        out.push(' ');
    }
    out.push_str(&format!("fn {name}({})", params.join(", ")));
    if signature.ret != crate::types::Ty::Void {
        out.push_str(&format!(" -> {}", signature.ret));
    }
    if let Some(ceiling) = foreign.ceiling() {
        let effects: Vec<String> = ceiling.effects().map(|e| e.text()).collect();
        out.push_str(&format!(" effects({})", effects.join(", ")));
    }
    out
}

/// The signature of an instance as its arguments make it: `fn largest[u64](n:usize,
/// xs:ro<u64>[n]@host) -> u64` (protocol §7.1: the state lists checked instances).
pub fn instance_signature_text(db: &dyn Db, instance: crate::instance::Instance<'_>) -> String {
    let signature = crate::signature::instance_signature(db, instance);
    let full = crate::scope::Resolver::new(db).full_name(instance.item(db));
    let base = full.rsplit('.').next().unwrap_or(&full);
    let shown = instance.display(db);
    // The arguments as the instance's name shows them (`[u64]`, `[shapes.Rect, 4]`).
    let name = format!("{base}{}", &shown[full.len()..]);
    let params: Vec<String> = signature.params.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect();
    let mut out = format!("fn {name}({})", params.join(", "));
    if signature.ret != crate::types::Ty::Void {
        out.push_str(&format!(" -> {}", signature.ret));
    }
    out
}

/// The signature of a function or test. `checked` renders the checked parameter and result
/// types (for an accepted program); otherwise the types as written.
pub fn signature_text(db: &dyn Db, item: Item, checked: bool) -> String {
    let node = item.syntax(db).syntax_node();
    if let Some(test) = ast::Test::cast(node.clone()) {
        let name = test.name().map(|n| n.text()).unwrap_or_default();
        return format!("fn test${name}()");
    }
    if let Some(foreign) = ast::ExternFn::cast(node.clone()) {
        return extern_text(db, item, &foreign);
    }
    let Some(function) = ast::Fn::cast(node) else { return String::new() };
    let name = function.name().map(|n| n.text()).unwrap_or_default();
    let written_params: Vec<(String, Option<ast::Type>)> = function
        .param_list()
        .map(|list| list.params().map(|p| (p.name().map(|n| n.text()).unwrap_or_default(), p.ty())).collect())
        .unwrap_or_default();
    let signature = fn_signature(db, item);
    // A template is shown as written, with its parameters (`fn largest[T:integer](…)`).
    let generics = crate::generics::generics_of_node(&function.syntax().clone());
    // A method of a generic impl is a template too (its parameters are the impl's): as written.
    let template = !generics.is_empty() || !crate::generics::fn_generics(db, item).is_empty();
    let use_checked =
        checked && !template && signature.error.is_none() && signature.params.len() == written_params.len();
    let params: Vec<String> = if use_checked {
        signature.params.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect()
    } else {
        written_params.into_iter().map(|(name, ty)| format!("{name}:{}", written(ty))).collect()
    };
    let gparams = if generics.is_empty() {
        String::new()
    } else {
        format!("[{}]", generics.iter().map(crate::generics::Generic::text).collect::<Vec<_>>().join(", "))
    };
    let mut out = format!("fn {name}{gparams}({})", params.join(", "));
    let ret = function.ret_type().and_then(|r| r.ty());
    if use_checked {
        if signature.ret != crate::types::Ty::Void {
            out.push_str(&format!(" -> {}", signature.ret));
        }
    } else if let Some(ret) = ret {
        let text = written(Some(ret));
        if text != "void" {
            out.push_str(&format!(" -> {text}"));
        }
    }
    if let Some(ceiling) = function.ceiling() {
        if ceiling.is_pure() {
            out.push_str(" pure");
        } else {
            let effects: Vec<String> = ceiling.effects().map(|e| e.text()).collect();
            out.push_str(&format!(" effects({})", effects.join(", ")));
        }
    }
    out
}

/// The declaration text of a record, enum or constant (`None` for anything else).
pub fn declaration_text(db: &dyn Db, item: Item) -> Option<String> {
    let node = item.syntax(db).syntax_node();
    let public = if node.children().any(|c| c.kind() == cairn_syntax::SyntaxKind::VISIBILITY) { "pub " } else { "" };
    if let Some(tr) = ast::Trait::cast(node.clone()) {
        let name = tr.name().map(|n| n.text()).unwrap_or_default();
        let members: Vec<String> = tr.members().map(|m| compact(m.syntax())).collect();
        return Some(format!("{public}trait {name} {{ {} }}", members.join(" ")).replace("{  }", "{ }"));
    }
    if let Some(imp) = ast::Impl::cast(node.clone()) {
        let generics = imp.generic_param_list().map(|g| compact(g.syntax())).unwrap_or_default();
        let of = imp.trait_path().map(|p| p.text()).unwrap_or_default();
        let ty = imp.self_ty().map(|t| compact(t.syntax())).unwrap_or_default();
        return Some(format!("impl{generics} {of} for {ty}"));
    }
    if let Some(record) = ast::Struct::cast(node.clone()) {
        let linear = if record.is_linear() { "linear " } else { "" };
        let name = record.name().map(|n| n.text()).unwrap_or_default();
        let layout = if record.is_packed() {
            " packed".to_string()
        } else {
            record.align_clause().and_then(|a| a.value()).map(|v| format!(" align({})", v.text())).unwrap_or_default()
        };
        // Each field with its extent (`b:Buf[u8][n];`), then what the record lends
        // (`lends data[0..len];`): both are part of what the type means.
        let fields: Vec<String> = record
            .field_list()
            .map(|list| {
                let fields = list.fields().map(|f| {
                    let extent = f.extent().map(|x| compact(x.syntax())).unwrap_or_default();
                    format!("{}:{}{extent};", f.name().map(|n| n.text()).unwrap_or_default(), written(f.ty()))
                });
                let lends = list.lends_clauses().map(|l| {
                    let text = compact(l.syntax());
                    if text.ends_with(';') { text } else { format!("{text};") }
                });
                fields.chain(lends).collect()
            })
            .unwrap_or_default();
        let generics = generic_names(&node);
        return Some(
            format!("{public}{linear}struct {name}{generics}{layout} {{ {} }}", fields.join(" "))
                .replace("{  }", "{ }"),
        );
    }
    if let Some(enumeration) = ast::Enum::cast(node.clone()) {
        let name = enumeration.name().map(|n| n.text()).unwrap_or_default();
        let generics = generic_names(&node);
        let variants: Vec<String> = enumeration
            .variant_list()
            .map(|list| {
                list.variants()
                    .map(|v| {
                        let name = v.name().map(|n| n.text()).unwrap_or_default();
                        match v.payload() {
                            Some(payload) => format!("{name}({});", written(Some(payload))),
                            None => format!("{name};"),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        return Some(format!("{public}enum {name}{generics} {{ {} }}", variants.join(" ")).replace("{  }", "{ }"));
    }
    if let Some(constant) = ast::Const::cast(node.clone()) {
        let name = constant.name().map(|n| n.text()).unwrap_or_default();
        let lowered = body_with_source_map(db, item);
        let text = node.text().to_string();
        let value = match lowered.body.root.first().map(|s| lowered.body.stmt(*s)) {
            Some(crate::body::Stmt::Return(Some(value))) => {
                expression_text(&lowered.body, &lowered.source_map, &text, *value)
            }
            _ => "?".to_string(),
        };
        return Some(format!("{public}const {name}:{} = {value};", written(constant.ty())));
    }
    None
}

fn generic_names(node: &SyntaxNode) -> String {
    node.children()
        .find(|c| c.kind() == cairn_syntax::SyntaxKind::GENERIC_PARAM_LIST)
        .map(|list| list.text().to_string().split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// An expression with every binary operation parenthesised and everything else as written
/// (without its spacing).
fn expression_text(body: &crate::body::Body, map: &crate::body::BodySourceMap, text: &str, id: ExprId) -> String {
    match body.expr(id) {
        Expr::Binary { op, lhs, rhs } => format!(
            "({} {} {})",
            expression_text(body, map, text, *lhs),
            op.text(),
            expression_text(body, map, text, *rhs)
        ),
        Expr::Paren(inner) => expression_text(body, map, text, *inner),
        Expr::Unary { op, operand } => {
            let op = match op {
                crate::body::UnaryOp::Neg => "-",
                crate::body::UnaryOp::Not => "!",
                crate::body::UnaryOp::BitNot => "~",
            };
            format!("{op}{}", expression_text(body, map, text, *operand))
        }
        _ => map
            .exprs
            .get(id.0 as usize)
            .and_then(|range| text.get(usize::from(range.start())..usize::from(range.end())))
            .map(|written| written.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| "?".to_string()),
    }
}

/// The comment directly above a declaration that starts at `start` in `text`
/// ([`cairn_syntax::comment_lines_above`]), joined by single spaces. Empty when there is none.
pub fn comment_above(text: &str, start: usize) -> String {
    cairn_syntax::comment_lines_above(text, start).join(" ")
}

/// A node's text with its whitespace runs made single spaces (comments dropped).
fn compact(node: &SyntaxNode) -> String {
    let mut out = String::new();
    for token in node.descendants_with_tokens().filter_map(|e| e.into_token()) {
        let kind = token.kind();
        if kind == cairn_syntax::SyntaxKind::COMMENT {
            continue;
        }
        if kind == cairn_syntax::SyntaxKind::WHITESPACE {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            continue;
        }
        out.push_str(token.text());
    }
    out.trim().to_string()
}
