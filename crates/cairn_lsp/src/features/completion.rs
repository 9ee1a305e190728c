//! `textDocument/completion`: what may be written at the cursor.
//!
//! After `import ` — the next segment of the packaged `std` modules' paths and the program's
//! (`import std.` offers `vec`, `map`, …). After `q.` — the public declarations of the module `q` names (an import's alias), the
//! variants of the enum `q` names, or the fields of the record a local `q` holds (its type from
//! the function's check) and the functions callable on it as methods. Elsewhere — the function's parameters and the locals bound before the
//! cursor, the module's own declarations, the names its imports bring in, its module aliases, the
//! builtins and the keywords (`match` as a snippet with its braces). Every candidate starts with
//! the word already typed. Names mean what the checker says: declarations come from the program's
//! scope, locals from the body's scopes (`cursor::locals_of`), types from the body's check.

use std::collections::BTreeMap;

use cairn_hir::types::Ty;
use cairn_hir::{Item, ItemKind};
use serde_json::{Value, json};

use super::cursor::{Cursor, item_at, locals_of, run_start};

// LSP's CompletionItemKind values.
const FUNCTION: u32 = 3;
const FIELD: u32 = 5;
const VARIABLE: u32 = 6;
const MODULE: u32 = 9;
const KEYWORD: u32 = 14;
const SNIPPET: u32 = 15;
const ENUM: u32 = 13;
const ENUM_MEMBER: u32 = 20;
const CONSTANT: u32 = 21;
const STRUCT: u32 = 22;
const INTERFACE: u32 = 8;

const KEYWORDS: &[&str] = &[
    "let", "mut", "return", "if", "else", "while", "for", "in", "break", "continue", "fn", "struct", "enum", "const",
    "import", "module", "pub", "test", "stack", "buffer", "defer", "unsafe", "parallel", "reduce", "try", "true",
    "false", "trait", "impl", "derive", "linear",
];

pub(super) fn completion(cursor: &Cursor<'_>) -> Value {
    let text = cursor.text;
    let offset = cursor.offset.min(text.len());
    let word_start = run_start(text, offset, |c| c.is_alphanumeric() || c == '_' || c == '$');
    let prefix = &text[word_start..offset];
    let mut items: BTreeMap<String, Value> = BTreeMap::new();
    let mut add = |label: &str, kind: u32, detail: Option<String>| {
        if label.starts_with(prefix) && !label.is_empty() {
            let mut item = json!({"label": label, "kind": kind});
            if let Some(detail) = detail {
                item["detail"] = json!(detail);
            }
            items.entry(label.to_string()).or_insert(item);
        }
    };
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let scope = cairn_hir::scope(db);
    let at = item_at(workspace, cursor.file, offset);
    let module: std::sync::Arc<str> = at
        .as_ref()
        .map_or_else(|| workspace.files()[cursor.file].module_at_start.clone(), |(item, _, _)| scope.module_of(*item));
    // `import std.` : the next segment of every module path that continues what is typed.
    let line_start = text[..word_start].rfind('\n').map_or(0, |at| at + 1);
    if let Some(path) = text[line_start..word_start].trim_start().strip_prefix("import ")
        && path.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        let packaged = cairn_hir::library::MODULES.iter().map(|m| m.name);
        for full in packaged.chain(scope.modules.keys().map(|m| &**m)) {
            if let Some(next) = full.strip_prefix(path).and_then(|rest| rest.split('.').next())
                && full != &*module
            {
                add(next, MODULE, None);
            }
        }
        return json!(items.into_values().collect::<Vec<_>>());
    }
    // `q.` : the qualifier before the dot.
    if text[..word_start].ends_with('.') {
        let before = &text[..word_start - 1];
        let qualifier_start = run_start(before, before.len(), |c| c.is_alphanumeric() || c == '_');
        let qualifier = &before[qualifier_start..];
        // A module reached by its alias: its public declarations.
        if let Some(import) = scope.imports.iter().find(|i| i.in_module == module && &*i.alias == qualifier) {
            let wanted = format!("{}.", import.module);
            for (full, decls) in &scope.by_full_name {
                let Some(name) = full.strip_prefix(wanted.as_str()) else { continue };
                if name.contains('.') {
                    continue;
                }
                for decl in decls {
                    if scope.visible_from(decl.item, &module) {
                        add(name, kind_of(decl.kind), detail(db, decl.item, decl.kind));
                    }
                }
            }
            return json!(items.into_values().collect::<Vec<_>>());
        }
        // An enum named here: its variants.
        let segments = [std::sync::Arc::<str>::from(qualifier)];
        if let cairn_hir::Lookup::Found(decl) = scope.resolve_path(&module, &segments, |k| k == ItemKind::Enum) {
            for (name, _) in cairn_hir::enum_def(db, decl.item).variants.iter() {
                add(name, ENUM_MEMBER, None);
            }
            return json!(items.into_values().collect::<Vec<_>>());
        }
        // A local holding a record: its fields; holding a record or a sum: the functions
        // callable on it as methods (protocol §17), those of its type's module and of this one
        // whose first parameter is of its type, and its trait impls' methods.
        if let Some((item, start, _)) = &at
            && let Some(ty) = local_type(db, *item, qualifier, offset - start)
        {
            if let Ty::Record(adt) = ty.value() {
                for (name, field_ty) in cairn_hir::fields_of(db, adt) {
                    add(&name, FIELD, Some(field_ty.to_string()));
                }
            }
            if let Ty::Record(adt) | Ty::Enum(adt) = ty.value() {
                let home = scope.module_of(adt.item);
                let of_type = |t: &Ty| matches!(t.value(), Ty::Record(a) | Ty::Enum(a) if a.item == adt.item);
                for decls in scope.by_full_name.values() {
                    for decl in decls.iter().filter(|d| d.kind == ItemKind::Fn) {
                        let owner = scope.module_of(decl.item);
                        if (owner != home && owner != module) || !scope.visible_from(decl.item, &module) {
                            continue;
                        }
                        let signature = cairn_hir::fn_signature(db, decl.item);
                        if signature.params.first().is_some_and(|p| of_type(&p.ty)) {
                            let full = scope.full_name(decl.item);
                            let name = full.rsplit('.').next().unwrap_or(&full).to_string();
                            add(&name, FUNCTION, detail(db, decl.item, decl.kind));
                        }
                    }
                }
                for file in workspace.files() {
                    for member in file.members.iter().filter(|m| m.key.kind == ItemKind::Method) {
                        let signature = cairn_hir::fn_signature(db, member.item);
                        if signature.params.first().is_some_and(|p| of_type(&p.ty)) {
                            let text = cairn_hir::render::signature_text(db, member.item, true);
                            add(&member.key.name, FUNCTION, Some(text));
                        }
                    }
                }
            }
        }
        return json!(items.into_values().collect::<Vec<_>>());
    }
    // The locals bound before the cursor, and the parameters.
    if let Some((item, start, _)) = &at {
        let relative = offset - start;
        let locals = locals_of(db, *item);
        for binding in &locals.bindings {
            if usize::from(binding.range.end()) <= relative {
                add(&binding.name, VARIABLE, None);
            }
        }
    }
    // The module's own declarations, what its imports bring in, its aliases.
    let own = if module.is_empty() { String::new() } else { format!("{module}.") };
    for (full, decls) in &scope.by_full_name {
        let name = if own.is_empty() { Some(full.as_ref()) } else { full.strip_prefix(own.as_str()) };
        if let Some(name) = name.filter(|n| !n.contains('.')) {
            for decl in decls {
                add(name, kind_of(decl.kind), detail(db, decl.item, decl.kind));
            }
        }
    }
    for import in scope.imports.iter().filter(|i| i.in_module == module) {
        add(&import.alias, MODULE, Some(import.module.to_string()));
        for name in import.names.iter() {
            let full = format!("{}.{name}", import.module);
            if let Some(decl) = scope.by_full_name.get(full.as_str()).and_then(|d| d.first()) {
                add(name, kind_of(decl.kind), detail(db, decl.item, decl.kind));
            }
        }
    }
    for builtin in cairn_hir::builtins::Builtin::callable_names() {
        add(builtin, FUNCTION, Some("builtin".to_string()));
    }
    for keyword in KEYWORDS {
        add(keyword, KEYWORD, None);
    }
    if "match".starts_with(prefix) {
        items.insert(
            "match".to_string(),
            json!({"label": "match", "kind": SNIPPET, "insertTextFormat": 2,
                   "insertText": "match ${1:value} {\n  ${2:Variant}(${3:x}) => { $0 }\n}",
                   "detail": "a match statement"}),
        );
    }
    json!(items.into_values().collect::<Vec<_>>())
}

fn kind_of(kind: ItemKind) -> u32 {
    match kind {
        ItemKind::Fn => FUNCTION,
        ItemKind::Struct => STRUCT,
        ItemKind::Enum => ENUM,
        ItemKind::Const => CONSTANT,
        ItemKind::Trait => INTERFACE,
        _ => VARIABLE,
    }
}

fn detail(db: &dyn cairn_hir::Db, item: Item, kind: ItemKind) -> Option<String> {
    (kind == ItemKind::Fn).then(|| cairn_hir::render::signature_text(db, item, true))
}

/// The type the check gave the local `name` visible at `relative` in `item` (a parameter, or
/// the nearest binder of that name before it).
fn local_type(db: &dyn cairn_hir::Db, item: Item, name: &str, relative: usize) -> Option<Ty> {
    let locals = locals_of(db, item);
    let binding =
        locals.bindings.iter().filter(|b| &*b.name == name && usize::from(b.range.end()) <= relative).last()?;
    match binding.local {
        cairn_hir::scopes::LocalRef::Param(index) => {
            cairn_hir::fn_signature(db, item).params.get(index as usize).map(|p| p.ty.clone())
        }
        cairn_hir::scopes::LocalRef::Binder(binder) => {
            cairn_hir::representative_check(db, item).binder_types.get(binder.0 as usize).cloned()
        }
    }
}
