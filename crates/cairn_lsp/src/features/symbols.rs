//! `textDocument/documentSymbol` and `workspace/symbol`: functions, tests, records, enums,
//! constants and traits, with fields, variants and members nested. A document's symbols are read
//! from its current syntax tree, so a text that does not compile still has them; workspace symbols
//! match a case-insensitive substring across every program the server has open, with the module
//! as container, at most 1000.

use cairn_syntax::{SyntaxKind, SyntaxNode, TextRange};
use serde_json::{Value, json};

use super::cursor::significant_range;
use crate::convert::LineMap;
use crate::world::{Project, Snapshot};

/// The declarations of one document, read from its syntax tree (a text that does not compile
/// still has them).
pub(super) fn document_symbols(project: &Project, file: usize) -> Vec<Value> {
    let state = &project.workspace.files()[file];
    let text = state.text();
    let map = LineMap::new(text);
    let root = state.parse().syntax_node();
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

/// Declarations across every analysed program whose name holds `query` (case-insensitive), each
/// with its module as container; at most 1000.
pub(super) fn workspace_symbols(snapshot: &Snapshot<'_>, query: &str) -> Vec<Value> {
    let query = query.to_lowercase();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for project in snapshot.projects.iter().flatten() {
        let workspace = &project.workspace;
        for (file, state) in workspace.files().iter().enumerate().filter(|(_, f)| !f.library) {
            let Some(uri) = project.files.get(file).map(|f| f.uri.clone()) else { continue };
            if !seen.insert(uri.clone()) {
                continue;
            }
            let map = LineMap::new(&state.text());
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
                    "location": {"uri": uri, "range": map.range(&state.text(), base + usize::from(range.start()), base + usize::from(range.end()))},
                }));
                if out.len() >= 1000 {
                    return out;
                }
            }
        }
    }
    out
}

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
