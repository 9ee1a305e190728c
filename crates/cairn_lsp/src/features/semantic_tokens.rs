//! `textDocument/semanticTokens/full`: every name of the document by kind, in the legend of
//! `protocol` and the LSP's relative encoding. A local's use takes the kind of the binding it
//! resolves to; a variant is an `enumMember` wherever it is written (`Step.Walk(…)`, `Some(x)`, an
//! arm's `Walk(m)`), `defaultLibrary` when the library declares it.

use std::collections::HashMap;

use cairn_hir::{ItemKind, Workspace};
use cairn_syntax::{SyntaxKind, SyntaxToken};

use super::cursor::{BindingKind, enum_named_by, has_variant, locals_of};
use crate::convert::LineMap;
use crate::protocol::TOKEN_TYPES;
use crate::world::Project;

/// Every name of the document by kind, in the LSP's relative encoding.
pub(super) fn semantic_tokens(project: &Project, file: usize) -> Vec<u32> {
    let workspace = &project.workspace;
    let state = &workspace.files()[file];
    let text = state.text();
    let map = LineMap::new(text);
    let root = state.parse().syntax_node();
    let scope = cairn_hir::scope(workspace.db());
    // Every use of a local, by its absolute start: the kind of the binding it resolves to.
    let mut local_uses: HashMap<usize, (u32, u32)> = HashMap::new();
    for entry in &state.items {
        let locals = locals_of(workspace.db(), entry.item);
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
    scope: &'a cairn_hir::ProgramScope,
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

fn type_kind(scope: &cairn_hir::ProgramScope, name: &str) -> Option<(u32, u32)> {
    let (_, decls) = scope.by_full_name.iter().find(|(k, _)| k.rsplit('.').next() == Some(name))?;
    let library = decls.first().and_then(|d| scope.info(d.item)).is_some_and(|i| i.library);
    let modifiers = if library { DEFAULT_LIBRARY } else { 0 };
    match decls.first()?.kind {
        ItemKind::Struct => Some((type_index("struct"), modifiers)),
        ItemKind::Enum => Some((type_index("enum"), modifiers)),
        ItemKind::Trait => Some((type_index("interface"), modifiers)),
        _ => None,
    }
}
