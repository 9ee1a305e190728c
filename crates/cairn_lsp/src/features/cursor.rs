//! Where the cursor is and what the name there means, for every feature.
//!
//! *Where the cursor is* comes from the document's syntax tree (always there, whatever the
//! text); *what names mean* from the memoized checks of the project's workspace: a function's
//! body check (expression types, call targets), its signature, the rows, the scope; locals from
//! the scope resolution of `locals`. Nothing here re-checks more than the function under the
//! cursor. A variant is read from the enum its qualifier names (`Step.Walk`), else from the type
//! the check gave the expression or the `match` subject (`Some(x)`, an arm's `Walk(m)`), else
//! from the one enum that has a variant of that name. A refused body is resolved and typed past
//! its first refusal (the check's recovering pass); what the check still did not reach (the rest
//! of the refused statement) and names outside bodies are read through the checker's own path
//! resolver (`ProgramScope::resolve_path`), never a second one.
//!
//! Boundary: this is the only file under `features/` that reaches cairn_hir's locals (the body's
//! scopes laid over its source map: the checker's resolution, never a second one); the others
//! name locals through `locals_of` and the types re-exported here.

use std::cell::OnceCell;

use cairn_hir::{Item, ItemKind, Workspace};
use cairn_syntax::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};

use crate::convert::LineMap;
use crate::world::Project;

pub(super) use cairn_hir::scopes::{BindingKind, Locals};

/// A position in an open document, with what it needs.
pub(super) struct Cursor<'a> {
    pub project: &'a Project,
    pub file: usize,
    pub text: &'a str,
    pub map: LineMap,
    pub offset: usize,
}

/// The locals of `item` and every use of them, resolved by scope.
pub(super) fn locals_of(db: &dyn cairn_hir::Db, item: Item) -> Locals {
    cairn_hir::scopes::locals(db, item)
}

/// The declaration of the file that holds `offset`, its start, and the token there (relative).
pub(super) fn item_at(workspace: &Workspace, file: usize, offset: usize) -> Option<(Item, usize, SyntaxToken)> {
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
pub(super) enum Meaning {
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
pub(super) fn meaning(
    workspace: &Workspace,
    item: Item,
    token: &SyntaxToken,
    locals: &OnceCell<Locals>,
) -> Option<Meaning> {
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
                // A trait's member or an impl's method: an item of its own inside `item`.
                SyntaxKind::FN | SyntaxKind::TRAIT_MEMBER if owner != item.syntax(db).syntax_node() => {
                    cairn_hir::member_named(db, item, &name).map(Meaning::Declaration)
                }
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
                // What the check resolved the chain to (`units.LIMIT`, `Step.Walk`).
                if let Some(meaning) = resolution_at(workspace, item, grand.text_range(), &name) {
                    return Some(meaning);
                }
                // A body the check did not reach: the path as the enclosing module writes it,
                // through the checker's own resolver.
                let segments: Vec<std::sync::Arc<str>> =
                    grand.text().to_string().split('.').map(|s| std::sync::Arc::from(s.trim())).collect();
                let scope = cairn_hir::scope(db);
                if let cairn_hir::Lookup::Found(decl) = scope.resolve_path(&scope.module_of(item), &segments, |_| true)
                {
                    return Some(Meaning::Declaration(decl.item));
                }
                // `Step.Walk`, `m.Step.Walk`, `Option[u32].None`: a variant of the enum the base
                // names, unless the base is a local (then this is a field).
                let base = grand.first_child()?;
                let first = cairn_syntax::first_significant_token(&base)?;
                let locals = locals.get_or_init(|| locals_of(db, item));
                if locals.use_at(first.text_range()).is_some() {
                    return None;
                }
                let owner = enum_named_by(scope, &scope.module_of(item), &base)?;
                return has_variant(workspace, owner, &name).then_some(Meaning::Variant { owner, name });
            }
            // A local, resolved by scope: the binding the check would see here.
            if grand.kind() == SyntaxKind::NAME_EXPR {
                let locals = locals.get_or_init(|| locals_of(db, item));
                if let Some(found) = locals.use_at(token.text_range()) {
                    return Some(Meaning::Local { function: item, binder: locals.bindings[found.binding].range });
                }
            }
            // What the check resolved the name to (a constant, a bare variant).
            if grand.kind() == SyntaxKind::NAME_EXPR {
                let call = grand
                    .parent()
                    .filter(|c| c.kind() == SyntaxKind::CALL_EXPR && c.first_child().as_ref() == Some(&grand));
                let at = call.as_ref().unwrap_or(&grand).text_range();
                if let Some(meaning) = resolution_at(workspace, item, grand.text_range(), &name)
                    .or_else(|| resolution_at(workspace, item, at, &name))
                {
                    return Some(meaning);
                }
            }
            // A path as the enclosing module writes it (types, constants, functions, variants'
            // enums), through the checker's own resolver: names outside bodies, and bodies the
            // check did not reach.
            let segments = path_segments(&parent);
            let scope = cairn_hir::scope(db);
            let module = scope.module_of(item);
            match scope.resolve_path(&module, &segments, |_| true) {
                cairn_hir::Lookup::Found(decl) => Some(Meaning::Declaration(decl.item)),
                // A bare variant (`None`, `Some(x)`): of the enum the check typed it as.
                cairn_hir::Lookup::None if grand.kind() == SyntaxKind::NAME_EXPR => {
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
                cairn_hir::Lookup::None => None,
            }
        }
        _ => None,
    }
}

/// The enum a field expression's base names as a type (`Step`, `m.Step`, `Option[u32]`), read
/// as a path from `module`.
pub(super) fn enum_named_by(scope: &cairn_hir::ProgramScope, module: &str, base: &SyntaxNode) -> Option<Item> {
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
        cairn_hir::Lookup::Found(decl) => Some(decl.item),
        cairn_hir::Lookup::None => None,
    }
}

/// The `VARIANT` node of `owner` named `name`.
pub(super) fn variant_node(workspace: &Workspace, owner: Item, name: &str) -> Option<SyntaxNode> {
    let node = owner.syntax(workspace.db()).syntax_node();
    node.descendants().filter(|d| d.kind() == SyntaxKind::VARIANT).find(|v| {
        v.children().find(|c| c.kind() == SyntaxKind::NAME).is_some_and(|n| n.text().to_string().trim() == name)
    })
}

pub(super) fn has_variant(workspace: &Workspace, owner: Item, name: &str) -> bool {
    variant_node(workspace, owner, name).is_some()
}

/// A node's range without the comments and spacing before its first token.
pub(super) fn significant_range(node: &SyntaxNode) -> TextRange {
    let start =
        cairn_syntax::first_significant_token(node).map_or(node.text_range().start(), |t| t.text_range().start());
    TextRange::new(start, node.text_range().end())
}

/// The variant the last segment of a match arm's `path` names: of the enum its qualifier names
/// (`Step.Walk`), else of the enum the check typed the subject as.
fn arm_variant(workspace: &Workspace, item: Item, path: &SyntaxNode, name: &str) -> Option<Meaning> {
    let segments: Vec<std::sync::Arc<str>> = path
        .children()
        .filter(|c| c.kind() == SyntaxKind::NAME_REF)
        .map(|c| std::sync::Arc::from(c.text().to_string().trim()))
        .collect();
    let scope = cairn_hir::scope(workspace.db());
    let owner = match segments.split_last() {
        Some((_, qualifier)) if !qualifier.is_empty() => {
            match scope.resolve_path(&scope.module_of(item), qualifier, |k| k == ItemKind::Enum) {
                cairn_hir::Lookup::Found(decl) => Some(decl.item),
                cairn_hir::Lookup::None => None,
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

/// The checked type of the expression at `range` (relative to the function), when the check
/// reached it.
fn expr_type(workspace: &Workspace, item: Item, range: TextRange) -> Option<cairn_hir::types::Ty> {
    let db = workspace.db();
    if !matches!(workspace.entry_of(item).map(|(_, e)| e.key.kind), Some(ItemKind::Fn | ItemKind::Test)) {
        return None;
    }
    let map = cairn_hir::body::fn_source_map(db, item);
    let id = map.exprs.iter().position(|r| *r == range)?;
    cairn_hir::representative_check(db, item).expr_types.get(id).filter(|ty| !ty.is_error()).cloned()
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
    let scope = cairn_hir::scope(workspace.db());
    let mut owners = scope
        .by_full_name
        .values()
        .flatten()
        .filter(|d| d.kind == ItemKind::Enum && has_variant(workspace, d.item, name))
        .map(|d| d.item);
    let owner = owners.next()?;
    owners.next().is_none().then_some(owner)
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
/// What the check resolved the expression at `range` to, as a meaning: a constant or a variant
/// (locals come from the scopes, calls from the call targets).
fn resolution_at(workspace: &Workspace, item: Item, range: TextRange, name: &str) -> Option<Meaning> {
    let db = workspace.db();
    let map = cairn_hir::body::fn_source_map(db, item);
    let check = cairn_hir::representative_check(db, item);
    let id = map.exprs.iter().position(|r| *r == range)?;
    match check.resolution(cairn_hir::body::ExprId(id as u32)) {
        cairn_hir::check::Resolution::Const(target) => Some(Meaning::Declaration(target)),
        cairn_hir::check::Resolution::Variant { adt, .. } => {
            Some(Meaning::Variant { owner: adt, name: name.to_string() })
        }
        _ => None,
    }
}

fn call_target_at(workspace: &Workspace, item: Item, range: TextRange) -> Option<Meaning> {
    let db = workspace.db();
    let map = cairn_hir::body::fn_source_map(db, item);
    let check = cairn_hir::representative_check(db, item);
    let id = map.exprs.iter().position(|r| *r == range)?;
    match check.call_target(cairn_hir::body::ExprId(id as u32))? {
        cairn_hir::check::CallTarget::Function(target, _) => Some(Meaning::Declaration(*target)),
        cairn_hir::check::CallTarget::Builtin(name) => Some(Meaning::Builtin(name.name().to_string())),
        cairn_hir::check::CallTarget::Dynamic { member, .. } => Some(Meaning::Declaration(*member)),
        cairn_hir::check::CallTarget::Constructor | cairn_hir::check::CallTarget::Indirect => None,
    }
}

/// Where the run of characters `keep` accepts that ends at byte `end` of `text` starts (`end`
/// when there is none): the word being typed, a qualifier before a `.`, a callee before a `(`.
pub(super) fn run_start(text: &str, end: usize, keep: impl Fn(char) -> bool) -> usize {
    text[..end].char_indices().rev().take_while(|(_, c)| keep(*c)).last().map_or(end, |(i, _)| i)
}
