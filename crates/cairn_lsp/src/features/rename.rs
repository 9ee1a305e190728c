//! `textDocument/rename`: one edit per place that names what the cursor names
//! (`references::reference_spans`, so a rename changes exactly what find-references finds), in
//! every file of the program. Refused — nothing changes — when the new name is not an identifier
//! or is a reserved word, when the cursor names a builtin or a library declaration, and when the
//! new name would change meaning: a local of that name already in the function, a declaration of
//! that name already in the module, a variant of that name already in the enum.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::cursor::{Cursor, Meaning, item_at, locals_of, meaning};
use super::references::reference_spans;
use crate::convert::LineMap;
use crate::protocol::Failure;
use crate::world::Snapshot;

/// LSP's `RequestFailed`.
const REFUSED: i32 = -32803;

pub(super) fn rename(snapshot: &Snapshot<'_>, cursor: &Cursor<'_>, new_name: &str) -> Result<Value, Failure> {
    let lexed = cairn_syntax::lex(new_name);
    let is_identifier = lexed.errors.is_empty()
        && lexed.tokens.len() == 1
        && lexed.tokens[0].kind == cairn_syntax::SyntaxKind::IDENT
        && !new_name.contains('$');
    if !is_identifier {
        return Err((
            REFUSED,
            format!("`{new_name}` is not a name: a name is letters, digits and `_`, not a reserved word."),
        ));
    }
    let workspace = &cursor.project.workspace;
    let db = workspace.db();
    let Some((item, _, token)) = item_at(workspace, cursor.file, cursor.offset) else {
        return Err((REFUSED, "Nothing to rename here.".into()));
    };
    let locals = OnceCell::new();
    let scope = cairn_hir::scope(db);
    match meaning(workspace, item, &token, &locals) {
        None => return Err((REFUSED, "Nothing to rename here.".into())),
        Some(Meaning::Builtin(name)) => return Err((REFUSED, format!("{name} is a builtin: it cannot be renamed."))),
        Some(Meaning::Local { function, .. }) => {
            if locals_of(db, function).bindings.iter().any(|b| &*b.name == new_name) {
                return Err((
                    REFUSED,
                    format!(
                        "The function already has a local named {new_name}: the rename would change what a name means."
                    ),
                ));
            }
        }
        Some(Meaning::Declaration(target)) => {
            let Some(info) = scope.info(target) else { return Err((REFUSED, "Nothing to rename here.".into())) };
            if info.library {
                return Err((
                    REFUSED,
                    format!("{} belongs to the packaged library: it cannot be renamed.", info.full_name),
                ));
            }
            let module = &info.key.module;
            let full = if module.is_empty() { new_name.to_string() } else { format!("{module}.{new_name}") };
            if scope.by_full_name.contains_key(full.as_str()) {
                return Err((REFUSED, format!("{full} already exists: the rename would change what a name means.")));
            }
        }
        Some(Meaning::Variant { owner, name: _ }) => {
            if cairn_hir::enum_def(db, owner).variants.iter().any(|(v, _)| &**v == new_name) {
                return Err((REFUSED, format!("The enum already has a variant {new_name}.")));
            }
        }
    }
    let mut changes: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (file, start, end, _) in reference_spans(cursor, true) {
        if let Some((uri, text)) = snapshot.file_location(cursor.project, file) {
            let range = LineMap::new(&text).range(&text, start, end);
            changes.entry(uri).or_default().push(json!({"range": range, "newText": new_name}));
        }
    }
    if changes.is_empty() {
        return Err((REFUSED, "Nothing to rename here.".into()));
    }
    Ok(json!({"changes": changes}))
}
