//! The requests (protocol §17): hover, definition, references, highlights, document and
//! workspace symbols, code actions, semantic tokens, code lenses.
//!
//! *Where the cursor is* comes from the document's syntax tree (always there, whatever the
//! text); *what names mean* from the memoized checks of the project's workspace: a function's
//! body check (expression types, call targets), its signature, the rows, the scope; locals from
//! the scope resolution of `locals`. Nothing here re-checks more than the function under the
//! cursor. A variant is read from the enum its qualifier names (`Step.Walk`), else from the type
//! the check gave the expression or the `match` subject (`Some(x)`, an arm's `Walk(m)`), else
//! from the one enum that has a variant of that name (a body the check did not reach).
//! Parameters are checked for shape before anything is looked up (`check_params`).

use std::cell::OnceCell;
use std::collections::HashMap;

use cairn_hir::{Item, ItemKind, Workspace};
use cairn_syntax::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};
use serde_json::{Value, json};

use crate::analysis::{Analysis, Failure, Project};
use crate::convert::{LineMap, path_to_uri};
use crate::locals::{BindingKind, Locals};

/// The semantic token types, in legend order (protocol §17).
pub const TOKEN_TYPES: &[&str] = &[
    "namespace",
    "type",
    "struct",
    "enum",
    "interface",
    "typeParameter",
    "parameter",
    "variable",
    "property",
    "enumMember",
    "function",
    "method",
    "macro",
    "effect",
];
/// The semantic token modifiers, in bit order.
pub const TOKEN_MODIFIERS: &[&str] = &["declaration", "readonly", "defaultLibrary", "mutable"];

/// Answers one request.
pub fn answer(analysis: &Analysis, method: &str, params: &Value) -> Result<Value, Failure> {
    match method {
        "textDocument/hover" => Ok(at(analysis, params).and_then(|c| hover(&c)).unwrap_or(Value::Null)),
        "textDocument/definition" => {
            Ok(at(analysis, params).and_then(|c| definition(analysis, &c)).unwrap_or(Value::Null))
        }
        "textDocument/references" => {
            let include = params.pointer("/context/includeDeclaration").and_then(Value::as_bool).unwrap_or(true);
            Ok(at(analysis, params).map_or(Value::Null, |c| json!(references(analysis, &c, include))))
        }
        "textDocument/documentHighlight" => {
            Ok(at(analysis, params).map_or(Value::Null, |c| json!(highlights(analysis, &c))))
        }
        "textDocument/documentSymbol" => {
            Ok(document(analysis, params).map_or(Value::Null, |(p, f)| json!(document_symbols(p, f))))
        }
        "workspace/symbol" => {
            let query = params.get("query").and_then(Value::as_str).unwrap_or_default();
            Ok(json!(workspace_symbols(analysis, query)))
        }
        "textDocument/codeAction" => {
            Ok(at_range(analysis, params).map_or(Value::Null, |(c, end)| json!(code_actions(analysis, &c, end))))
        }
        "textDocument/semanticTokens/full" => {
            Ok(document(analysis, params).map_or(Value::Null, |(p, f)| json!({"data": semantic_tokens(p, f)})))
        }
        "textDocument/codeLens" => {
            Ok(document(analysis, params).map_or(Value::Null, |(p, f)| json!(code_lenses(p, f))))
        }
        _ => Err((-32601, format!("method not found: {method}"))),
    }
}

/// Checks a request's method and the shape of its parameters before anything is looked up:
/// `-32601` for a method the server does not offer, `-32602` (invalid params) for parameters
/// missing what the method needs or holding the wrong types (a position whose line or character
/// is not a non-negative 32-bit integer, a `uri` that is not a string, …).
pub fn check_params(method: &str, params: &Value) -> Result<(), Failure> {
    let invalid = |what: &str| Err((-32602, format!("invalid params for {method}: {what}")));
    let needs_position = match method {
        "textDocument/hover"
        | "textDocument/definition"
        | "textDocument/references"
        | "textDocument/documentHighlight" => true,
        "textDocument/documentSymbol"
        | "textDocument/codeAction"
        | "textDocument/semanticTokens/full"
        | "textDocument/codeLens" => false,
        "workspace/symbol" => {
            return match params.get("query") {
                Some(Value::String(_)) => Ok(()),
                _ => invalid("`query` must be a string"),
            };
        }
        _ => return Err((-32601, format!("method not found: {method}"))),
    };
    if !params.pointer("/textDocument/uri").is_some_and(Value::is_string) {
        return invalid("`textDocument.uri` must be a string");
    }
    let is_position = |value: Option<&Value>| -> bool {
        let number = |key: &str| {
            value.and_then(|v| v.get(key)).and_then(Value::as_u64).is_some_and(|n| n <= u64::from(u32::MAX))
        };
        number("line") && number("character")
    };
    if needs_position && !is_position(params.get("position")) {
        return invalid("`position` must hold a `line` and a `character`, each a non-negative integer");
    }
    if method == "textDocument/codeAction"
        && !(is_position(params.pointer("/range/start")) && is_position(params.pointer("/range/end")))
    {
        return invalid("`range` must hold a `start` and an `end` position");
    }
    if method == "textDocument/references"
        && params.pointer("/context/includeDeclaration").is_some_and(|v| !v.is_boolean())
    {
        return invalid("`context.includeDeclaration` must be a boolean");
    }
    Ok(())
}

/// A position in an open document, with what it needs.
pub struct Cursor<'a> {
    pub project: &'a Project,
    pub file: usize,
    pub text: &'a str,
    pub map: LineMap,
    pub offset: usize,
}

fn document<'a>(analysis: &'a Analysis, params: &Value) -> Option<(&'a Project, usize)> {
    let uri = params.pointer("/textDocument/uri")?.as_str()?;
    let doc = analysis.docs.get(uri)?;
    Some((analysis.projects.get(doc.project)?.as_ref()?, doc.file))
}

fn at<'a>(analysis: &'a Analysis, params: &Value) -> Option<Cursor<'a>> {
    let (project, file) = document(analysis, params)?;
    let line = params.pointer("/position/line")?.as_u64()? as u32;
    let character = params.pointer("/position/character")?.as_u64()? as u32;
    let text = project.workspace.files()[file].text.as_str();
    let map = LineMap::new(text);
    let offset = map.offset(text, line, character);
    Some(Cursor { project, file, text, map, offset })
}

fn at_range<'a>(analysis: &'a Analysis, params: &Value) -> Option<(Cursor<'a>, usize)> {
    let (project, file) = document(analysis, params)?;
    let text = project.workspace.files()[file].text.as_str();
    let map = LineMap::new(text);
    let point = |key: &str| -> Option<usize> {
        let line = params.pointer(&format!("/range/{key}/line"))?.as_u64()? as u32;
        let character = params.pointer(&format!("/range/{key}/character"))?.as_u64()? as u32;
        Some(map.offset(text, line, character))
    };
    let (start, end) = (point("start")?, point("end")?);
    Some((Cursor { project, file, text, map, offset: start }, end))
}

// ----- where the cursor is ----------------------------------------------------------------------

/// The declaration of the file that holds `offset`, its start, and the token there (relative).
fn item_at(workspace: &Workspace, file: usize, offset: usize) -> Option<(Item, usize, SyntaxToken)> {
    let state = &workspace.files()[file];
    for entry in &state.items {
        let node = entry.item.syntax(workspace.db()).syntax_node();
        let start = usize::from(entry.start);
        let end = start + usize::from(node.text_range().len());
        if offset >= start && offset <= end {
            let relative = TextSize::from((offset - start) as u32);
            let token = node
                .token_at_offset(relative)
                .right_biased()
                .or_else(|| node.token_at_offset(relative).left_biased())?;
            let token = if token.kind() == SyntaxKind::IDENT || offset == start {
                token
            } else {
                node.token_at_offset(relative).left_biased().filter(|t| t.kind() == SyntaxKind::IDENT).unwrap_or(token)
            };
            return Some((entry.item, start, token));
        }
    }
    None
}

/// What a name at the cursor means.
#[derive(Debug, Clone, PartialEq)]
enum Meaning {
    /// A declaration of the program or the library.
    Declaration(Item),
    /// A variant of an enum (of the program or the library), by name.
    Variant { owner: Item, name: String },
    /// A parameter or local of a function, by its binder's name (relative to the function).
    Local { function: Item, binder: TextRange },
    /// A builtin, by name.
    Builtin(String),
}

/// What `token` (of `item`'s own tree) names; `locals` holds the item's locals once computed.
fn meaning(workspace: &Workspace, item: Item, token: &SyntaxToken, locals: &OnceCell<Locals>) -> Option<Meaning> {
    if token.kind() != SyntaxKind::IDENT {
        return None;
    }
    let db = workspace.db();
    let name = token.text().to_string();
    let parent = token.parent()?;
    match parent.kind() {
        SyntaxKind::NAME => {
            let owner = parent.parent()?;
            match owner.kind() {
                SyntaxKind::FN
                | SyntaxKind::TEST
                | SyntaxKind::STRUCT
                | SyntaxKind::ENUM
                | SyntaxKind::CONST
                | SyntaxKind::TRAIT
                | SyntaxKind::EXTERN_FN => Some(Meaning::Declaration(item)),
                SyntaxKind::VARIANT => Some(Meaning::Variant { owner: item, name }),
                SyntaxKind::PARAM
                | SyntaxKind::LET_STMT
                | SyntaxKind::FOR_STMT
                | SyntaxKind::EACH_STMT
                | SyntaxKind::STACK_STMT
                | SyntaxKind::ARM_BINDER => Some(Meaning::Local { function: item, binder: token.text_range() }),
                _ => None,
            }
        }
        SyntaxKind::NAME_REF => {
            let grand = parent.parent()?;
            // The variant a match arm names (`Walk`, `Step.Walk`); a qualifier before it is a path
            // like any other.
            if grand.kind() == SyntaxKind::PATH
                && grand.parent().is_some_and(|arm| arm.kind() == SyntaxKind::MATCH_ARM)
                && grand.children().filter(|c| c.kind() == SyntaxKind::NAME_REF).last().as_ref() == Some(&parent)
            {
                return arm_variant(workspace, item, &grand, &name);
            }
            // The callee of a call: what the check resolved it to.
            if grand.kind() == SyntaxKind::NAME_EXPR
                && let Some(call) = grand.parent().filter(|c| c.kind() == SyntaxKind::CALL_EXPR)
                && call.first_child().as_ref() == Some(&grand)
            {
                let range = call.text_range();
                if let Some(target) = call_target_at(workspace, item, range) {
                    return Some(target);
                }
                if cairn_hir::check::is_builtin(&name) {
                    return Some(Meaning::Builtin(name));
                }
            }
            // `module.name(...)`: the callee is a field chain.
            if grand.kind() == SyntaxKind::FIELD_EXPR {
                if let Some(call) = grand.parent().filter(|c| c.kind() == SyntaxKind::CALL_EXPR)
                    && call.first_child().as_ref() == Some(&grand)
                    && let Some(target) = call_target_at(workspace, item, call.text_range())
                {
                    return Some(target);
                }
                // A path written as a chain (`units.LIMIT`), when it names a declaration.
                let segments: Vec<std::sync::Arc<str>> =
                    grand.text().to_string().split('.').map(|s| std::sync::Arc::from(s.trim())).collect();
                let scope = cairn_hir::scope::scope(db);
                if let cairn_hir::scope::Lookup::Found(decl) =
                    scope.resolve_path(&scope.module_of(item), &segments, |_| true)
                {
                    return Some(Meaning::Declaration(decl.item));
                }
                // `Step.Walk`, `m.Step.Walk`, `Option[u32].None`: a variant of the enum the base
                // names, unless the base is a local (then this is a field).
                let base = grand.first_child()?;
                let first = cairn_syntax::first_significant_token(&base)?;
                let locals = locals.get_or_init(|| crate::locals::locals(db, item));
                if locals.use_at(first.text_range()).is_some() {
                    return None;
                }
                let owner = enum_named_by(scope, &scope.module_of(item), &base)?;
                return has_variant(workspace, owner, &name).then_some(Meaning::Variant { owner, name });
            }
            // A local, resolved by scope: the binding the check would see here.
            if grand.kind() == SyntaxKind::NAME_EXPR {
                let locals = locals.get_or_init(|| crate::locals::locals(db, item));
                if let Some(found) = locals.use_at(token.text_range()) {
                    return Some(Meaning::Local { function: item, binder: locals.bindings[found.binding].range });
                }
            }
            // A path as the enclosing module writes it (types, constants, functions, variants'
            // enums).
            let segments = path_segments(&parent);
            let scope = cairn_hir::scope::scope(db);
            let module = scope.module_of(item);
            match scope.resolve_path(&module, &segments, |_| true) {
                cairn_hir::scope::Lookup::Found(decl) => Some(Meaning::Declaration(decl.item)),
                // A bare variant (`None`, `Some(x)`): of the enum the check typed it as.
                cairn_hir::scope::Lookup::None if grand.kind() == SyntaxKind::NAME_EXPR => {
                    let call = grand
                        .parent()
                        .filter(|c| c.kind() == SyntaxKind::CALL_EXPR && c.first_child().as_ref() == Some(&grand));
                    let typed = call.as_ref().unwrap_or(&grand).text_range();
                    let owner = expr_type(workspace, item, typed)
                        .and_then(|ty| enum_of(&ty))
                        .filter(|owner| has_variant(workspace, *owner, &name))
                        .or_else(|| sole_owner(workspace, &name))?;
                    Some(Meaning::Variant { owner, name })
                }
                cairn_hir::scope::Lookup::None => None,
            }
        }
        _ => None,
    }
}

/// The variant the last segment of a match arm's `path` names: of the enum its qualifier names
/// (`Step.Walk`), else of the enum the check typed the subject as.
fn arm_variant(workspace: &Workspace, item: Item, path: &SyntaxNode, name: &str) -> Option<Meaning> {
    let segments: Vec<std::sync::Arc<str>> = path
        .children()
        .filter(|c| c.kind() == SyntaxKind::NAME_REF)
        .map(|c| std::sync::Arc::from(c.text().to_string().trim()))
        .collect();
    let scope = cairn_hir::scope::scope(workspace.db());
    let owner = match segments.split_last() {
        Some((_, qualifier)) if !qualifier.is_empty() => {
            match scope.resolve_path(&scope.module_of(item), qualifier, |k| k == ItemKind::Enum) {
                cairn_hir::scope::Lookup::Found(decl) => Some(decl.item),
                cairn_hir::scope::Lookup::None => None,
            }
        }
        _ => {
            let statement = path.ancestors().find(|n| n.kind() == SyntaxKind::MATCH_STMT)?;
            let subject = statement.children().find(|c| c.kind() != SyntaxKind::MATCH_ARM_LIST)?;
            expr_type(workspace, item, subject.text_range())
                .and_then(|ty| enum_of(&ty))
                .or_else(|| sole_owner(workspace, name))
        }
    }?;
    has_variant(workspace, owner, name).then(|| Meaning::Variant { owner, name: name.to_string() })
}

/// The enum a field expression's base names as a type (`Step`, `m.Step`, `Option[u32]`), read
/// as a path from `module`.
fn enum_named_by(scope: &cairn_hir::scope::ProgramScope, module: &str, base: &SyntaxNode) -> Option<Item> {
    let base = match base.kind() {
        SyntaxKind::INDEX_EXPR => base.first_child()?,
        _ => base.clone(),
    };
    if !matches!(base.kind(), SyntaxKind::NAME_EXPR | SyntaxKind::FIELD_EXPR) {
        return None;
    }
    let text = base.text().to_string();
    let segments: Vec<std::sync::Arc<str>> = text.split('.').map(|s| std::sync::Arc::from(s.trim())).collect();
    if segments.iter().any(|s| s.is_empty() || !s.chars().all(|c| c.is_alphanumeric() || c == '_')) {
        return None;
    }
    match scope.resolve_path(module, &segments, |k| k == ItemKind::Enum) {
        cairn_hir::scope::Lookup::Found(decl) => Some(decl.item),
        cairn_hir::scope::Lookup::None => None,
    }
}

/// The checked type of the expression at `range` (relative to the function), when the check
/// reached it.
fn expr_type(workspace: &Workspace, item: Item, range: TextRange) -> Option<cairn_hir::types::Ty> {
    let db = workspace.db();
    if !matches!(workspace.entry_of(item).map(|(_, e)| e.key.kind), Some(ItemKind::Fn | ItemKind::Test)) {
        return None;
    }
    let map = cairn_hir::body::fn_source_map(db, item);
    let id = map.exprs.iter().position(|r| *r == range)?;
    cairn_hir::check::check_fn(db, item).expr_types.get(id).filter(|ty| !ty.is_error()).cloned()
}

/// The enum a type is (through a borrow).
fn enum_of(ty: &cairn_hir::types::Ty) -> Option<Item> {
    match ty {
        cairn_hir::types::Ty::Enum(adt) => Some(adt.item),
        cairn_hir::types::Ty::Borrow(_, inner) => enum_of(inner),
        _ => None,
    }
}

/// The one enum of the program or the library with a variant `name`, if exactly one has it (for
/// a body the check did not reach).
fn sole_owner(workspace: &Workspace, name: &str) -> Option<Item> {
    let scope = cairn_hir::scope::scope(workspace.db());
    let mut owners = scope
        .by_full_name
        .values()
        .flatten()
        .filter(|d| d.kind == ItemKind::Enum && has_variant(workspace, d.item, name))
        .map(|d| d.item);
    let owner = owners.next()?;
    owners.next().is_none().then_some(owner)
}

/// The `VARIANT` node of `owner` named `name`.
fn variant_node(workspace: &Workspace, owner: Item, name: &str) -> Option<SyntaxNode> {
    let node = owner.syntax(workspace.db()).syntax_node();
    node.descendants().filter(|d| d.kind() == SyntaxKind::VARIANT).find(|v| {
        v.children().find(|c| c.kind() == SyntaxKind::NAME).is_some_and(|n| n.text().to_string().trim() == name)
    })
}

fn has_variant(workspace: &Workspace, owner: Item, name: &str) -> bool {
    variant_node(workspace, owner, name).is_some()
}

/// The segments of a path up to and including `name_ref` (`a.b.c` at `b` gives `a.b`).
fn path_segments(name_ref: &SyntaxNode) -> Vec<std::sync::Arc<str>> {
    let text = |n: &SyntaxNode| -> std::sync::Arc<str> { std::sync::Arc::from(n.text().to_string().trim()) };
    match name_ref.parent().filter(|p| p.kind() == SyntaxKind::PATH) {
        Some(path) => {
            let mut out = Vec::new();
            for child in path.children().filter(|c| c.kind() == SyntaxKind::NAME_REF) {
                out.push(text(&child));
                if child == *name_ref {
                    break;
                }
            }
            out
        }
        None => vec![text(name_ref)],
    }
}

/// What the call expression at `range` (relative to the item) calls.
fn call_target_at(workspace: &Workspace, item: Item, range: TextRange) -> Option<Meaning> {
    let db = workspace.db();
    let map = cairn_hir::body::fn_source_map(db, item);
    let check = cairn_hir::check::check_fn(db, item);
    let id = map.exprs.iter().position(|r| *r == range)?;
    match check.call_target(cairn_hir::body::ExprId(id as u32))? {
        cairn_hir::check::CallTarget::Function(target) => Some(Meaning::Declaration(*target)),
        cairn_hir::check::CallTarget::Builtin(name) => Some(Meaning::Builtin(name.to_string())),
        cairn_hir::check::CallTarget::Constructor => None,
    }
}

// ----- hover ------------------------------------------------------------------------------------

fn hover(cursor: &Cursor<'_>) -> Option<Value> {
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let (item, start, token) = item_at(workspace, cursor.file, cursor.offset)?;
    let mut sections: Vec<String> = Vec::new();
    let locals = OnceCell::new();
    let mut binder = false;
    match meaning(workspace, item, &token, &locals) {
        Some(Meaning::Declaration(target)) => sections.push(declaration_hover(workspace, target)),
        Some(Meaning::Variant { owner, name }) => sections.extend(variant_hover(workspace, owner, &name)),
        Some(Meaning::Builtin(name)) => sections.push(format!("`{name}`: a builtin (`cairn rules calls`)")),
        // A binder (a parameter, a `let`, …): what a use of it would show.
        Some(Meaning::Local { function, binder: range }) if range == token.text_range() => {
            binder = true;
            let locals = locals.get_or_init(|| crate::locals::locals(db, function));
            sections.extend(locals.binding_at(range).and_then(|b| binding_hover(workspace, function, locals, b)));
        }
        _ => {}
    }
    // The smallest checked expression under the cursor: its type, what is expected of it, and
    // for a binding whether it is mutable.
    let kind = workspace.entry_of(item).map(|(_, e)| e.key.kind);
    if !binder && matches!(kind, Some(ItemKind::Fn | ItemKind::Test)) {
        let relative = cursor.offset - start;
        let map = cairn_hir::body::fn_source_map(db, item);
        let check = cairn_hir::check::check_fn(db, item);
        let best = map
            .exprs
            .iter()
            .enumerate()
            .filter(|(_, r)| usize::from(r.start()) <= relative && relative <= usize::from(r.end()))
            .filter(|(i, _)| check.expr_types.get(*i).is_some_and(|t| !t.is_error()))
            .min_by_key(|(_, r)| r.len());
        if let Some((_, range)) = best
            && let Some(facts) = cairn_hir::site::site_facts(db, item, *range)
        {
            let mut line = format!("`{}`", facts.ty.clone().unwrap_or_else(|| "?".into()));
            if let Some(expected) = &facts.expected {
                line.push_str(&format!(" (expected `{expected}`)"));
            }
            if facts.tag == "name" {
                let name = token.text().to_string();
                if let Some(binding) = facts.bindings.iter().find(|b| b.name == name) {
                    line.push_str(if binding.mutable { ", a mutable binding" } else { ", an immutable binding" });
                }
            }
            if sections.is_empty() || facts.tag != "call" {
                sections.push(line);
            }
        }
    }
    if sections.is_empty() {
        return None;
    }
    Some(json!({"contents": {"kind": "markdown", "value": sections.join("\n\n---\n\n")}}))
}

/// A binder's hover, as a use of it shows: its type as the check gave it, and whether it is
/// mutable. The type is the parameter's declared one, else that of a checked use, else that of a
/// `let`'s initializer; none when the check did not reach any of them.
fn binding_hover(workspace: &Workspace, function: Item, locals: &Locals, binding: usize) -> Option<String> {
    let db = workspace.db();
    let found = &locals.bindings[binding];
    let body = cairn_hir::body::fn_body(db, function);
    let map = cairn_hir::body::fn_source_map(db, function);
    let check = cairn_hir::check::check_fn(db, function);
    let type_of = |id: usize| check.expr_types.get(id).filter(|t| !t.is_error()).map(ToString::to_string);
    let declared = match found.kind {
        BindingKind::Param => cairn_hir::signature::fn_signature(db, function)
            .params
            .iter()
            .find(|p| p.name == found.name)
            .filter(|p| !p.ty.is_error())
            .map(|p| p.ty.to_string()),
        _ => None,
    };
    // A use is a name expression whose identifier is the use's range.
    let used = || {
        locals.uses.iter().filter(|u| u.binding == binding).find_map(|u| {
            map.exprs
                .iter()
                .enumerate()
                .filter(|(i, r)| {
                    r.contains_range(u.range) && matches!(body.exprs.get(*i), Some(cairn_hir::body::Expr::Name(_)))
                })
                .min_by_key(|(_, r)| r.len())
                .and_then(|(i, _)| type_of(i))
        })
    };
    let initialized = || {
        body.stmts.iter().find_map(|stmt| match stmt {
            cairn_hir::body::Stmt::Let { binder, init, .. }
                if map.binders.get(binder.0 as usize).is_some_and(|r| r.contains_range(found.range)) =>
            {
                type_of(init.0 as usize)
            }
            _ => None,
        })
    };
    let ty = declared.or_else(used).or_else(initialized)?;
    let mutable = matches!(found.kind, BindingKind::Let { mutable: true, .. } | BindingKind::Stack);
    Some(format!("`{ty}`{}", if mutable { ", a mutable binding" } else { ", an immutable binding" }))
}

/// A variant's hover: the variant as written, qualified by its enum, and the enum's full name.
fn variant_hover(workspace: &Workspace, owner: Item, name: &str) -> Option<String> {
    let node = variant_node(workspace, owner, name)?;
    let written = node.text().to_string();
    let written = written.trim().trim_end_matches(';').trim_end();
    let full_name = workspace.full_name(owner);
    let short = full_name.rsplit('.').next().unwrap_or(&full_name);
    Some(format!("```cairn\n{short}.{written}\n```\n\na variant of `{full_name}`"))
}

/// A declaration's hover: its signature or declaring line, and for a function its effect row,
/// declared ceiling and guard sites; the comment above it.
fn declaration_hover(workspace: &Workspace, item: Item) -> String {
    let db = workspace.db();
    let Some((file, entry)) = workspace.entry_of(item) else { return String::new() };
    let mut out = String::new();
    match entry.key.kind {
        ItemKind::Fn | ItemKind::Test => {
            // A test is shown as written, not by the internal name it is compiled under.
            let signature = match entry.key.kind {
                ItemKind::Test => format!("test {}", entry.key.name.trim_start_matches("test$")),
                _ => cairn_hir::render::signature_text(db, item, true),
            };
            out.push_str(&format!("```cairn\n{signature}\n```\n"));
            let row = workspace
                .last_rows()
                .and_then(|r| r.row(item).map(|row| row.iter().map(|e| e.to_string()).collect::<Vec<_>>()));
            match row {
                Some(row) if row.is_empty() => out.push_str("\neffects: `pure`"),
                Some(row) => out.push_str(&format!("\neffects: `{}`", row.join(", "))),
                None => out.push_str("\neffects: unknown (the program is refused)"),
            }
            let node = item.syntax(db).syntax_node();
            if let Some(ceiling) = node.children().find(|c| c.kind() == SyntaxKind::CEILING) {
                out.push_str(&format!("  \nceiling: `{}`", ceiling.text().to_string().trim()));
            }
            let sites = workspace.function_sites(item);
            if !sites.is_empty() {
                let list: Vec<String> = sites.iter().map(|(k, n)| format!("{k} {n}")).collect();
                out.push_str(&format!("  \nguard sites: {}", list.join(", ")));
            }
        }
        _ => {
            let text = cairn_hir::render::declaration_text(db, item).unwrap_or_else(|| {
                let node = item.syntax(db).syntax_node();
                node.text()
                    .to_string()
                    .lines()
                    .find(|l| !l.trim_start().starts_with("//"))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            });
            out.push_str(&format!("```cairn\n{text}\n```\n"));
        }
    }
    let comment = comment_above(workspace, file, usize::from(entry.start), item);
    if !comment.is_empty() {
        out.push_str(&format!("\n\n{comment}"));
    }
    out
}

/// The `//` lines directly above a declaration (attached to it as leading trivia, or in the file
/// just before it), joined.
fn comment_above(workspace: &Workspace, file: usize, start: usize, item: Item) -> String {
    let node = item.syntax(workspace.db()).syntax_node();
    let first = cairn_syntax::first_significant_token(&node).map_or(0, |t| usize::from(t.text_range().start()));
    cairn_hir::render::comment_above(&workspace.files()[file].text, start + first)
}

// ----- navigation -------------------------------------------------------------------------------

/// The URI and text of a workspace file (a packaged library module: its written copy).
fn file_location(analysis: &Analysis, project: &Project, file: usize) -> Option<(String, String)> {
    let state = project.workspace.files().get(file)?;
    if !state.library {
        let uri = project.files.get(file)?.uri.clone();
        return Some((uri, state.text.clone()));
    }
    let dir = analysis.materialized.as_ref()?;
    Some((path_to_uri(&dir.join(&state.name)), state.text.clone()))
}

/// The location of a declaration's name.
fn declaration_location(analysis: &Analysis, project: &Project, item: Item) -> Option<Value> {
    let workspace = &project.workspace;
    let (file, entry) = workspace.entry_of(item)?;
    let node = item.syntax(workspace.db()).syntax_node();
    let name =
        node.children().find(|c| c.kind() == SyntaxKind::NAME).map_or_else(|| node.text_range(), |n| n.text_range());
    let (uri, text) = file_location(analysis, project, file)?;
    let start = usize::from(entry.start) + usize::from(name.start());
    let end = usize::from(entry.start) + usize::from(name.end());
    Some(json!({"uri": uri, "range": LineMap::new(&text).range(&text, start, end)}))
}

/// The location of a variant's name in its enum.
fn variant_location(analysis: &Analysis, project: &Project, owner: Item, name: &str) -> Option<Value> {
    let workspace = &project.workspace;
    let (file, entry) = workspace.entry_of(owner)?;
    let node = variant_node(workspace, owner, name)?;
    let range = node.children().find(|c| c.kind() == SyntaxKind::NAME)?.text_range();
    let (uri, text) = file_location(analysis, project, file)?;
    let start = usize::from(entry.start) + usize::from(range.start());
    let end = usize::from(entry.start) + usize::from(range.end());
    Some(json!({"uri": uri, "range": LineMap::new(&text).range(&text, start, end)}))
}

fn definition(analysis: &Analysis, cursor: &Cursor<'_>) -> Option<Value> {
    let workspace = &cursor.project.workspace;
    let (item, start, token) = item_at(workspace, cursor.file, cursor.offset)?;
    match meaning(workspace, item, &token, &OnceCell::new())? {
        Meaning::Declaration(target) => declaration_location(analysis, cursor.project, target),
        Meaning::Variant { owner, name } => variant_location(analysis, cursor.project, owner, &name),
        Meaning::Local { binder, .. } => {
            let (s, e) = (start + usize::from(binder.start()), start + usize::from(binder.end()));
            let uri = cursor.project.files.get(cursor.file)?.uri.clone();
            Some(json!({"uri": uri, "range": cursor.map.range(cursor.text, s, e)}))
        }
        Meaning::Builtin(_) => None,
    }
}

/// Every place naming what the cursor names: `(file, start, end, is_write)` in byte offsets.
fn reference_spans(cursor: &Cursor<'_>, include_declaration: bool) -> Vec<(usize, usize, usize, bool)> {
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let Some((item, _, token)) = item_at(workspace, cursor.file, cursor.offset) else { return Vec::new() };
    let item_locals = OnceCell::new();
    let Some(named) = meaning(workspace, item, &token, &item_locals) else { return Vec::new() };
    let mut out: Vec<(usize, usize, usize, bool)> = Vec::new();
    match named {
        Meaning::Local { function, binder } => {
            // The binder and the uses the scope resolution ties to it, nothing else of that name.
            let Some((file, entry)) = workspace.entry_of(function) else { return out };
            let base = usize::from(entry.start);
            let span = |r: TextRange, written: bool| {
                (file, base + usize::from(r.start()), base + usize::from(r.end()), written)
            };
            if include_declaration {
                out.push(span(binder, true));
            }
            let locals = item_locals.get_or_init(|| crate::locals::locals(db, function));
            if let Some(binding) = locals.binding_at(binder) {
                out.extend(locals.uses.iter().filter(|u| u.binding == binding).map(|u| span(u.range, u.written)));
            }
        }
        Meaning::Declaration(_) | Meaning::Variant { .. } => {
            // Every identifier of the program spelt like it that means the same.
            let name: String = match &named {
                Meaning::Variant { name, .. } => name.clone(),
                Meaning::Declaration(target) => {
                    workspace.full_name(*target).rsplit('.').next().unwrap_or("").to_string()
                }
                _ => return out,
            };
            for (file, state) in workspace.files().iter().enumerate().filter(|(_, f)| !f.library) {
                for entry in &state.items {
                    let node = entry.item.syntax(db).syntax_node();
                    let base = usize::from(entry.start);
                    let entry_locals = OnceCell::new();
                    for t in node.descendants_with_tokens().filter_map(|e| e.into_token()) {
                        if t.kind() != SyntaxKind::IDENT || t.text() != name {
                            continue;
                        }
                        if meaning(workspace, entry.item, &t, &entry_locals).as_ref() != Some(&named) {
                            continue;
                        }
                        let declaration = t.parent().is_some_and(|p| p.kind() == SyntaxKind::NAME);
                        if declaration && !include_declaration {
                            continue;
                        }
                        let r = t.text_range();
                        out.push((file, base + usize::from(r.start()), base + usize::from(r.end()), declaration));
                    }
                }
            }
        }
        Meaning::Builtin(_) => {}
    }
    out.sort();
    out.dedup();
    out
}

fn references(analysis: &Analysis, cursor: &Cursor<'_>, include_declaration: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for (file, start, end, _) in reference_spans(cursor, include_declaration) {
        if let Some((uri, text)) = file_location(analysis, cursor.project, file) {
            out.push(json!({"uri": uri, "range": LineMap::new(&text).range(&text, start, end)}));
        }
    }
    out
}

fn highlights(_analysis: &Analysis, cursor: &Cursor<'_>) -> Vec<Value> {
    reference_spans(cursor, true)
        .into_iter()
        .filter(|(file, ..)| *file == cursor.file)
        .map(|(_, start, end, written)| json!({"range": cursor.map.range(cursor.text, start, end), "kind": if written { 3 } else { 2 }}))
        .collect()
}

// ----- symbols ----------------------------------------------------------------------------------

/// LSP symbol kinds.
fn symbol_kind(kind: SyntaxKind) -> Option<u32> {
    Some(match kind {
        SyntaxKind::FN | SyntaxKind::TEST | SyntaxKind::EXTERN_FN => 12,
        SyntaxKind::STRUCT => 23,
        SyntaxKind::ENUM => 10,
        SyntaxKind::CONST => 14,
        SyntaxKind::TRAIT => 11,
        SyntaxKind::IMPL => 5,
        SyntaxKind::VARIANT => 22,
        SyntaxKind::FIELD => 8,
        SyntaxKind::TRAIT_MEMBER => 6,
        _ => return None,
    })
}

fn node_name(node: &SyntaxNode) -> Option<(String, TextRange)> {
    if let Some(name) = node.children().find(|c| c.kind() == SyntaxKind::NAME) {
        return Some((name.text().to_string().trim().to_string(), name.text_range()));
    }
    // A test block names itself with a string or an identifier after `test`; an impl by its type.
    let token = node
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| matches!(t.kind(), SyntaxKind::IDENT | SyntaxKind::STRING))?;
    Some((token.text().trim_matches('"').to_string(), token.text_range()))
}

/// The declarations of one document, read from its syntax tree (a text that does not compile
/// still has them).
fn document_symbols(project: &Project, file: usize) -> Vec<Value> {
    let state = &project.workspace.files()[file];
    let text = state.text.as_str();
    let map = LineMap::new(text);
    let root = state.parse.syntax_node();
    let symbol = |node: &SyntaxNode, children: Vec<Value>| -> Option<Value> {
        let kind = symbol_kind(node.kind())?;
        let (name, selection) = node_name(node)?;
        let range = significant_range(node);
        let mut out = json!({
            "name": name,
            "kind": kind,
            "range": map.range(text, usize::from(range.start()), usize::from(range.end())),
            "selectionRange": map.range(text, usize::from(selection.start()), usize::from(selection.end())),
        });
        if !children.is_empty() {
            out["children"] = json!(children);
        }
        Some(out)
    };
    let mut out = Vec::new();
    for node in root.children() {
        let members: Vec<Value> = node
            .descendants()
            .filter(|d| {
                d != &node
                    && matches!(
                        d.kind(),
                        SyntaxKind::VARIANT | SyntaxKind::FIELD | SyntaxKind::TRAIT_MEMBER | SyntaxKind::FN
                    )
            })
            .filter_map(|d| symbol(&d, Vec::new()))
            .collect();
        if let Some(s) = symbol(&node, members) {
            out.push(s);
        }
    }
    out
}

/// A node's range without the comments and spacing before its first token.
fn significant_range(node: &SyntaxNode) -> TextRange {
    let start =
        cairn_syntax::first_significant_token(node).map_or(node.text_range().start(), |t| t.text_range().start());
    TextRange::new(start, node.text_range().end())
}

/// Declarations across every analysed program whose name holds `query` (case-insensitive), each
/// with its module as container; at most 1000.
fn workspace_symbols(analysis: &Analysis, query: &str) -> Vec<Value> {
    let query = query.to_lowercase();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for project in analysis.projects.iter().flatten() {
        let workspace = &project.workspace;
        for (file, state) in workspace.files().iter().enumerate().filter(|(_, f)| !f.library) {
            let Some(uri) = project.files.get(file).map(|f| f.uri.clone()) else { continue };
            if !seen.insert(uri.clone()) {
                continue;
            }
            let map = LineMap::new(&state.text);
            for entry in &state.items {
                let name = entry.key.name.to_string();
                let node = entry.item.syntax(workspace.db()).syntax_node();
                let Some(kind) = symbol_kind(node.kind()) else { continue };
                if !name.to_lowercase().contains(&query) {
                    continue;
                }
                let range = significant_range(&node);
                let base = usize::from(entry.start);
                out.push(json!({
                    "name": name,
                    "kind": kind,
                    "containerName": entry.key.module.to_string(),
                    "location": {"uri": uri, "range": map.range(&state.text, base + usize::from(range.start()), base + usize::from(range.end()))},
                }));
                if out.len() >= 1000 {
                    return out;
                }
            }
        }
    }
    out
}

// ----- code actions -----------------------------------------------------------------------------

/// Quick fixes the checker can state without guessing (protocol §17): `let` → `let mut` for an
/// assigned immutable local, the missing arms of a `match`, a missing import. None ever widens a
/// ceiling, a borrow mode or a signature.
fn code_actions(analysis: &Analysis, cursor: &Cursor<'_>, end: usize) -> Vec<Value> {
    let Some(uri) = cursor.project.files.get(cursor.file).map(|f| f.uri.clone()) else { return Vec::new() };
    let diagnostics = analysis.diagnostics_for(&uri);
    let mut out = Vec::new();
    for diagnostic in diagnostics {
        let code = diagnostic["code"].as_str().unwrap_or_default();
        let range = &diagnostic["range"];
        let offset = |key: &str| -> usize {
            let line = range.pointer(&format!("/{key}/line")).and_then(Value::as_u64).unwrap_or(0) as u32;
            let character = range.pointer(&format!("/{key}/character")).and_then(Value::as_u64).unwrap_or(0) as u32;
            cursor.map.offset(cursor.text, line, character)
        };
        let (d_start, d_end) = (offset("start"), offset("end"));
        if d_end < cursor.offset || d_start > end {
            continue;
        }
        let edit = match code {
            "E-IMMUTABLE" => immutable_fix(cursor, d_start, d_end),
            "E-MATCH-COVERAGE" => coverage_fix(cursor, d_start, &diagnostic),
            "E-CALLEE" | "E-TYPE" | "E-UNBOUND" => import_fix(cursor, d_start, d_end),
            _ => None,
        };
        if let Some((title, edits)) = edit {
            out.push(json!({
                "title": title,
                "kind": "quickfix",
                "diagnostics": [diagnostic],
                "isPreferred": true,
                "edit": {"changes": {uri.clone(): edits}},
            }));
        }
    }
    out
}

type Fix = (String, Vec<Value>);

/// `x = …` on an immutable `let x`: make that `let` mutable. The assigned name is resolved by
/// scope to the binding it names; only a `let` (not a parameter, loop or arm binder, nor a `let`
/// of a string, which stays a view) is offered the fix.
fn immutable_fix(cursor: &Cursor<'_>, start: usize, end: usize) -> Option<Fix> {
    let workspace = &cursor.project.workspace;
    let (item, base, _) = item_at(workspace, cursor.file, start)?;
    let relative =
        TextRange::new(TextSize::from((start.checked_sub(base)?) as u32), TextSize::from((end - base) as u32));
    let locals = crate::locals::locals(workspace.db(), item);
    let assigned = locals.use_at(relative)?;
    let binding = &locals.bindings[assigned.binding];
    if binding.kind != (BindingKind::Let { mutable: false, string: false }) {
        return None;
    }
    let name = &binding.name;
    let at = base + usize::from(binding.range.start());
    Some((
        format!("Make `{name}` mutable (`let mut {name}`)"),
        vec![json!({"range": cursor.map.range(cursor.text, at, at), "newText": "mut "})],
    ))
}

/// A `match` missing variants: an arm for each, with an empty body to fill in. The checker names
/// each missing variant qualified by its enum's full name (`Light.Amber`,
/// `orchard.fruit.Ripeness.Green`); the arm is written with the bare variant, and a payload
/// variant binds its payload to `_` (always fresh; rename it to use the payload).
fn coverage_fix(cursor: &Cursor<'_>, start: usize, diagnostic: &Value) -> Option<Fix> {
    let missing: Vec<&str> =
        diagnostic.pointer("/data/details/missing_variants")?.as_array()?.iter().filter_map(Value::as_str).collect();
    if missing.is_empty() {
        return None;
    }
    let workspace = &cursor.project.workspace;
    let scope = cairn_hir::scope::scope(workspace.db());
    let mut arms: Vec<String> = Vec::new();
    for qualified in &missing {
        let (enum_name, variant) = qualified.rsplit_once('.')?;
        let payload = variant_has_payload(workspace, scope, enum_name, variant)?;
        arms.push(format!("{variant}{} => {{ }}", if payload { "(_)" } else { "" }));
    }
    let (item, base, _) = item_at(workspace, cursor.file, start)?;
    let node = item.syntax(workspace.db()).syntax_node();
    let relative = TextSize::from((start.checked_sub(base)?) as u32);
    // The innermost `match` at the refusal (a nested one lies inside an outer one's range).
    let statement = node
        .descendants()
        .filter(|n| n.kind() == SyntaxKind::MATCH_STMT)
        .filter(|n| n.text_range().contains_inclusive(relative))
        .min_by_key(|n| n.text_range().len())?;
    let arm_list = statement.children().find(|c| c.kind() == SyntaxKind::MATCH_ARM_LIST)?;
    let close = arm_list
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| t.kind() == SyntaxKind::R_CURLY)
        .last()?;
    let close_at = base + usize::from(close.text_range().start());
    let line_start = cursor.text[..close_at].rfind('\n').map_or(0, |i| i + 1);
    let (at, insert) = if cursor.text[line_start..close_at].trim().is_empty() {
        // `}` on a line of its own: one line per arm, indented like the first arm (else two
        // spaces deeper than the `match`).
        let statement_at = base + usize::from(significant_range(&statement).start());
        let indent_of = |offset: usize| -> String {
            let from = cursor.text[..offset].rfind('\n').map_or(0, |i| i + 1);
            cursor.text[from..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
        };
        let first_arm = arm_list
            .children()
            .find(|c| c.kind() == SyntaxKind::MATCH_ARM)
            .map(|arm| base + usize::from(significant_range(&arm).start()))
            .filter(|at| cursor.text[..*at].rfind('\n').map_or(0, |i| i + 1) > statement_at);
        let indent = match first_arm {
            Some(arm_at) => indent_of(arm_at),
            None => format!("{}  ", indent_of(statement_at)),
        };
        (line_start, arms.iter().map(|arm| format!("{indent}{arm}\n")).collect::<String>())
    } else {
        // `}` after other text on its line: the arms go in before it, on that line.
        (close_at, arms.iter().map(|arm| format!("{arm} ")).collect::<String>())
    };
    let names: Vec<&str> = missing.iter().filter_map(|m| m.rsplit_once('.').map(|(_, v)| v)).collect();
    Some((
        format!("Add the missing arms ({})", names.join(", ")),
        vec![json!({"range": cursor.map.range(cursor.text, at, at), "newText": insert})],
    ))
}

/// Whether `variant` of the enum whose full name is `enum_name` carries a payload; `None` when
/// there is no such enum or variant.
fn variant_has_payload(
    workspace: &Workspace,
    scope: &cairn_hir::scope::ProgramScope,
    enum_name: &str,
    variant: &str,
) -> Option<bool> {
    let decl = scope.by_full_name.get(enum_name)?.iter().find(|d| d.kind == ItemKind::Enum)?;
    let found = variant_node(workspace, decl.item, variant)?;
    Some(found.children_with_tokens().any(|e| e.kind() == SyntaxKind::L_PAREN))
}

/// A name another module declares `pub`, exactly one: import it. The modules are the program's,
/// the library modules it links, and the packaged library modules it does not import yet (which
/// the import then links).
fn import_fix(cursor: &Cursor<'_>, start: usize, end: usize) -> Option<Fix> {
    let name = cursor.text.get(start..end)?.to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let workspace = &cursor.project.workspace;
    let scope = cairn_hir::scope::scope(workspace.db());
    let (here, _, _) = item_at(workspace, cursor.file, start)?;
    let module = scope.module_of(here);
    let linked = scope
        .by_full_name
        .iter()
        .filter(|(full, decls)| {
            full.rsplit_once('.').is_some_and(|(m, n)| n == name && *m != *module)
                && decls.iter().any(|d| scope.info(d.item).is_some_and(|i| i.public || i.library))
        })
        .filter_map(|(full, _)| full.rsplit_once('.').map(|(m, _)| m.to_string()));
    let packaged = library_declarations()
        .iter()
        .filter(|(m, n)| n == &name && *m != &*module && !scope.modules.contains_key(*m))
        .map(|(m, _)| m.to_string());
    let candidates: std::collections::BTreeSet<String> = linked.chain(packaged).collect();
    let mut candidates = candidates.into_iter();
    let (Some(from), None) = (candidates.next(), candidates.next()) else { return None };
    // After the last import or module header of the file, else at the top.
    let root = workspace.files()[cursor.file].parse.syntax_node();
    let after = root
        .children()
        .filter(|c| matches!(c.kind(), SyntaxKind::IMPORT | SyntaxKind::MODULE_DECL))
        .last()
        .map_or(0, |n| usize::from(n.text_range().end()));
    let (at, text) = if after == 0 {
        (0, format!("import {from} ({name});\n"))
    } else {
        (after, format!("\nimport {from} ({name});"))
    };
    Some((
        format!("Import {name} from {from}"),
        vec![json!({"range": cursor.map.range(cursor.text, at, at), "newText": text})],
    ))
}

/// The `pub` declarations of every packaged library module, as (module, name), read once from
/// the texts compiled into the binary: a program that does not import a module has none of its
/// declarations in its scope.
fn library_declarations() -> &'static [(&'static str, String)] {
    static DECLARATIONS: std::sync::OnceLock<Vec<(&'static str, String)>> = std::sync::OnceLock::new();
    DECLARATIONS.get_or_init(|| {
        let mut out = Vec::new();
        for module in cairn_hir::library::MODULES {
            let parse = cairn_syntax::parse(module.text);
            for node in parse.syntax_node().children() {
                let public = node.children().any(|c| c.kind() == SyntaxKind::VISIBILITY);
                let declares = matches!(
                    node.kind(),
                    SyntaxKind::FN
                        | SyntaxKind::EXTERN_FN
                        | SyntaxKind::STRUCT
                        | SyntaxKind::ENUM
                        | SyntaxKind::CONST
                        | SyntaxKind::TRAIT
                );
                if let (true, true, Some(name)) =
                    (public, declares, node.children().find(|c| c.kind() == SyntaxKind::NAME))
                {
                    out.push((module.name, name.text().to_string().trim().to_string()));
                }
            }
        }
        out
    })
}

// ----- semantic tokens --------------------------------------------------------------------------

/// Every name of the document by kind, in the LSP's relative encoding.
fn semantic_tokens(project: &Project, file: usize) -> Vec<u32> {
    let workspace = &project.workspace;
    let state = &workspace.files()[file];
    let text = state.text.as_str();
    let map = LineMap::new(text);
    let root = state.parse.syntax_node();
    let scope = cairn_hir::scope::scope(workspace.db());
    // Every use of a local, by its absolute start: the kind of the binding it resolves to.
    let mut local_uses: HashMap<usize, (u32, u32)> = HashMap::new();
    for entry in &state.items {
        let locals = crate::locals::locals(workspace.db(), entry.item);
        for local_use in &locals.uses {
            let kind = local_token(locals.bindings[local_use.binding].kind);
            local_uses.insert(usize::from(entry.start) + usize::from(local_use.range.start()), kind);
        }
    }
    // Every variant name of every enum: whether only the library declares it.
    let mut variants: HashMap<String, bool> = HashMap::new();
    for decl in scope.by_full_name.values().flatten().filter(|d| d.kind == ItemKind::Enum) {
        let library = scope.info(decl.item).is_some_and(|i| i.library);
        let node = decl.item.syntax(workspace.db()).syntax_node();
        for variant in node.descendants().filter(|d| d.kind() == SyntaxKind::VARIANT) {
            let Some(name) = variant.children().find(|c| c.kind() == SyntaxKind::NAME) else { continue };
            let only_library = variants.entry(name.text().to_string().trim().to_string()).or_insert(true);
            *only_library &= library;
        }
    }
    // The module in effect at each declaration's start, in file order.
    let modules: Vec<(usize, std::sync::Arc<str>)> =
        state.items.iter().map(|e| (usize::from(e.start), scope.module_of(e.item))).collect();
    let classes =
        Classes { workspace, scope, local_uses, variants, modules, module_at_start: state.module_at_start.clone() };
    let mut data = Vec::new();
    let (mut last_line, mut last_start) = (0u32, 0u32);
    for token in root.descendants_with_tokens().filter_map(|e| e.into_token()) {
        let Some((kind, modifiers)) = classify(&token, &classes) else { continue };
        let range = token.text_range();
        let (line, start) = map.position(text, usize::from(range.start()));
        let length: usize = token.text().chars().map(char::len_utf16).sum();
        let delta_start = if line == last_line { start - last_start } else { start };
        data.extend([line - last_line, delta_start, length as u32, kind, modifiers]);
        last_line = line;
        last_start = start;
    }
    data
}

fn type_index(name: &str) -> u32 {
    TOKEN_TYPES.iter().position(|t| *t == name).unwrap_or(0) as u32
}

const DECLARATION: u32 = 1;
const READONLY: u32 = 2;
const DEFAULT_LIBRARY: u32 = 4;
const MUTABLE: u32 = 8;

const SCALARS: &[&str] =
    &["bool", "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "f32", "f64", "void", "f16", "bf16"];

/// The token kind and modifiers of a use of a local.
fn local_token(kind: BindingKind) -> (u32, u32) {
    match kind {
        BindingKind::Param => (type_index("parameter"), 0),
        BindingKind::Let { mutable: true, .. } => (type_index("variable"), MUTABLE),
        BindingKind::Let { mutable: false, .. }
        | BindingKind::LoopBinder
        | BindingKind::MatchBinder
        | BindingKind::Stack => (type_index("variable"), 0),
    }
}

/// What the semantic tokens of one document are classified with.
struct Classes<'a> {
    workspace: &'a Workspace,
    scope: &'a cairn_hir::scope::ProgramScope,
    /// Every use of a local, by its absolute start: the kind of the binding it resolves to.
    local_uses: HashMap<usize, (u32, u32)>,
    /// Every variant name of every enum: whether only the library declares it.
    variants: HashMap<String, bool>,
    /// The module in effect at each declaration's start, in file order.
    modules: Vec<(usize, std::sync::Arc<str>)>,
    module_at_start: std::sync::Arc<str>,
}

impl Classes<'_> {
    /// The module in effect at an offset of the document.
    fn module_at(&self, offset: usize) -> &str {
        match self.modules.partition_point(|(start, _)| *start <= offset) {
            0 => &self.module_at_start,
            n => &self.modules[n - 1].1,
        }
    }

    /// A variant's kind and modifiers, `None` when no enum has a variant `name`.
    fn variant(&self, name: &str) -> Option<(u32, u32)> {
        let only_library = *self.variants.get(name)?;
        Some((type_index("enumMember"), if only_library { DEFAULT_LIBRARY } else { 0 }))
    }
}

fn classify(token: &SyntaxToken, classes: &Classes<'_>) -> Option<(u32, u32)> {
    if token.kind() != SyntaxKind::IDENT {
        return None;
    }
    let scope = classes.scope;
    let local_uses = &classes.local_uses;
    let parent = token.parent()?;
    let name = token.text();
    let local = |t: &str| Some((type_index(t), 0));
    match parent.kind() {
        SyntaxKind::EFFECT => Some((type_index("effect"), 0)),
        SyntaxKind::NAME => {
            let owner = parent.parent()?;
            let mutable = owner.children_with_tokens().any(|e| e.kind() == SyntaxKind::MUT_KW);
            match owner.kind() {
                SyntaxKind::FN | SyntaxKind::EXTERN_FN | SyntaxKind::TEST => {
                    Some((type_index("function"), DECLARATION))
                }
                SyntaxKind::PARAM => Some((type_index("parameter"), DECLARATION)),
                SyntaxKind::STRUCT => Some((type_index("struct"), DECLARATION)),
                SyntaxKind::ENUM => Some((type_index("enum"), DECLARATION)),
                SyntaxKind::VARIANT => Some((type_index("enumMember"), DECLARATION)),
                SyntaxKind::FIELD => Some((type_index("property"), DECLARATION)),
                SyntaxKind::CONST => Some((type_index("variable"), DECLARATION | READONLY)),
                SyntaxKind::TRAIT => Some((type_index("interface"), DECLARATION)),
                SyntaxKind::GENERIC_PARAM => Some((type_index("typeParameter"), DECLARATION)),
                SyntaxKind::LET_STMT | SyntaxKind::STACK_STMT => {
                    Some((type_index("variable"), DECLARATION | if mutable { MUTABLE } else { 0 }))
                }
                SyntaxKind::FOR_STMT | SyntaxKind::EACH_STMT | SyntaxKind::ARM_BINDER => {
                    Some((type_index("variable"), DECLARATION))
                }
                _ => None,
            }
        }
        SyntaxKind::NAME_REF => {
            let grand = parent.parent()?;
            match grand.kind() {
                SyntaxKind::PATH => {
                    let owner = grand.parent()?;
                    match owner.kind() {
                        SyntaxKind::MODULE_DECL | SyntaxKind::IMPORT => local("namespace"),
                        // A match arm's variant, after the enum (or module) that may qualify it.
                        SyntaxKind::MATCH_ARM => {
                            let last = grand.children().filter(|c| c.kind() == SyntaxKind::NAME_REF).last();
                            if last.as_ref() == Some(&parent) {
                                return classes.variant(name).or_else(|| local("enumMember"));
                            }
                            type_kind(scope, name).or_else(|| local("namespace"))
                        }
                        SyntaxKind::PATH_TYPE => {
                            let last = grand.children().filter(|c| c.kind() == SyntaxKind::NAME_REF).last();
                            if last.as_ref() != Some(&parent) {
                                return local("namespace");
                            }
                            if SCALARS.contains(&name) {
                                return Some((type_index("type"), DEFAULT_LIBRARY));
                            }
                            type_kind(scope, name)
                        }
                        _ => None,
                    }
                }
                SyntaxKind::IMPORT_LIST => match type_kind(scope, name) {
                    Some(kind) => Some(kind),
                    None => local("function"),
                },
                // `Step.Walk` (a variant of the enum the base names, unless the base is a local),
                // else a field.
                SyntaxKind::FIELD_EXPR => {
                    let base = grand.first_child()?;
                    let first = cairn_syntax::first_significant_token(&base)?;
                    let offset = usize::from(token.text_range().start());
                    let owner = if local_uses.contains_key(&usize::from(first.text_range().start())) {
                        None
                    } else {
                        enum_named_by(scope, classes.module_at(offset), &base)
                    };
                    match owner {
                        Some(owner) if has_variant(classes.workspace, owner, name) => {
                            let library = scope.info(owner).is_some_and(|i| i.library);
                            Some((type_index("enumMember"), if library { DEFAULT_LIBRARY } else { 0 }))
                        }
                        _ => local("property"),
                    }
                }
                SyntaxKind::EXTENT => local("parameter"),
                SyntaxKind::NAME_EXPR => {
                    let callee = grand
                        .parent()
                        .is_some_and(|c| c.kind() == SyntaxKind::CALL_EXPR && c.first_child().as_ref() == Some(&grand));
                    if let Some(binding) = local_uses.get(&usize::from(token.text_range().start())) {
                        return Some(*binding);
                    }
                    if callee {
                        return if SCALARS.contains(&name) {
                            Some((type_index("type"), DEFAULT_LIBRARY))
                        } else if scope.by_full_name.keys().any(|k| k.rsplit('.').next() == Some(name)) {
                            match type_kind(scope, name) {
                                Some(kind) => Some(kind),
                                None => local("function"),
                            }
                        } else if let Some(variant) = classes.variant(name) {
                            // `Some(x)`: a bare variant constructed.
                            Some(variant)
                        } else {
                            Some((type_index("function"), DEFAULT_LIBRARY))
                        };
                    }
                    if name.chars().next().is_some_and(char::is_uppercase) {
                        // A constant, a variant, or a type used as a value.
                        let declared = scope.by_full_name.iter().find(|(k, _)| k.rsplit('.').next() == Some(name));
                        return match declared.and_then(|(_, d)| d.first()).map(|d| d.kind) {
                            Some(ItemKind::Const) => Some((type_index("variable"), READONLY)),
                            Some(ItemKind::Struct) => local("struct"),
                            Some(ItemKind::Enum) => local("enum"),
                            _ => classes.variant(name).or_else(|| local("enumMember")),
                        };
                    }
                    local("variable")
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn type_kind(scope: &cairn_hir::scope::ProgramScope, name: &str) -> Option<(u32, u32)> {
    let (_, decls) = scope.by_full_name.iter().find(|(k, _)| k.rsplit('.').next() == Some(name))?;
    let library = decls.first().and_then(|d| scope.info(d.item)).is_some_and(|i| i.library);
    let modifiers = if library { DEFAULT_LIBRARY } else { 0 };
    match decls.first()?.kind {
        ItemKind::Struct => Some((type_index("struct"), modifiers)),
        ItemKind::Enum => Some((type_index("enum"), modifiers)),
        ItemKind::Unsupported(SyntaxKind::TRAIT) => Some((type_index("interface"), modifiers)),
        _ => None,
    }
}

// ----- code lenses ------------------------------------------------------------------------------

/// "Run" above `main` and "Run test" above each test block of a document on disk; the server
/// only names the command.
fn code_lenses(project: &Project, file: usize) -> Vec<Value> {
    let Some(path) = project.files.get(file).and_then(|f| f.path.clone()) else { return Vec::new() };
    let target = if project.key.ends_with(".toml") { project.key.clone() } else { path.to_string_lossy().to_string() };
    let workspace = &project.workspace;
    let state = &workspace.files()[file];
    let map = LineMap::new(&state.text);
    let mut out = Vec::new();
    for entry in &state.items {
        let node = entry.item.syntax(workspace.db()).syntax_node();
        let range = significant_range(&node);
        let base = usize::from(entry.start);
        let at = map.range(&state.text, base + usize::from(range.start()), base + usize::from(range.start()));
        match entry.key.kind {
            ItemKind::Fn if &*entry.key.name == "main" => {
                out.push(
                    json!({"range": at, "command": {"title": "Run", "command": "cairn.run", "arguments": [target]}}),
                );
            }
            ItemKind::Test => {
                let name = workspace.full_name(entry.item).replace("test$", "");
                out.push(json!({"range": at, "command": {"title": "Run test", "command": "cairn.runTest", "arguments": [target, name]}}));
            }
            _ => {}
        }
    }
    out
}
