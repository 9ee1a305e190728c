//! `textDocument/definition`: the declaration's name (in the project, or in the packaged
//! library's written copy; for generated code, the `derive` that generates it), a variant's name
//! in its enum, or a local's binder. A builtin has none.

use std::cell::OnceCell;

use cairn_hir::Item;
use cairn_syntax::SyntaxKind;
use serde_json::{Value, json};

use super::cursor::{Cursor, Meaning, item_at, meaning, variant_node};
use crate::convert::LineMap;
use crate::world::{Project, Snapshot};

pub(super) fn definition(snapshot: &Snapshot<'_>, cursor: &Cursor<'_>) -> Option<Value> {
    let workspace = &cursor.project.workspace;
    let (item, start, token) = item_at(workspace, cursor.file, cursor.offset)?;
    match meaning(workspace, item, &token, &OnceCell::new())? {
        Meaning::Declaration(target) => declaration_location(snapshot, cursor.project, target),
        Meaning::Variant { owner, name } => variant_location(snapshot, cursor.project, owner, &name),
        Meaning::Local { binder, .. } => {
            let (s, e) = (start + usize::from(binder.start()), start + usize::from(binder.end()));
            let uri = cursor.project.files.get(cursor.file)?.uri.clone();
            Some(json!({"uri": uri, "range": cursor.map.range(cursor.text, s, e)}))
        }
        Meaning::Builtin(_) => None,
    }
}

/// The location of a declaration's name.
fn declaration_location(snapshot: &Snapshot<'_>, project: &Project, item: Item) -> Option<Value> {
    let workspace = &project.workspace;
    let (file, entry) = workspace.entry_of(item)?;
    // A generated declaration has no text of its own on disk: its definition is the `derive`
    // that generates it.
    if let Some(derive) = workspace.files()[file].generated {
        return declaration_location(snapshot, project, derive);
    }
    let node = item.syntax(workspace.db()).syntax_node();
    let name =
        node.children().find(|c| c.kind() == SyntaxKind::NAME).map_or_else(|| node.text_range(), |n| n.text_range());
    let (uri, text) = snapshot.file_location(project, file)?;
    let start = usize::from(entry.start) + usize::from(name.start());
    let end = usize::from(entry.start) + usize::from(name.end());
    Some(json!({"uri": uri, "range": LineMap::new(&text).range(&text, start, end)}))
}

/// The location of a variant's name in its enum.
fn variant_location(snapshot: &Snapshot<'_>, project: &Project, owner: Item, name: &str) -> Option<Value> {
    let workspace = &project.workspace;
    let (file, entry) = workspace.entry_of(owner)?;
    let node = variant_node(workspace, owner, name)?;
    let range = node.children().find(|c| c.kind() == SyntaxKind::NAME)?.text_range();
    let (uri, text) = snapshot.file_location(project, file)?;
    let start = usize::from(entry.start) + usize::from(range.start());
    let end = usize::from(entry.start) + usize::from(range.end());
    Some(json!({"uri": uri, "range": LineMap::new(&text).range(&text, start, end)}))
}
