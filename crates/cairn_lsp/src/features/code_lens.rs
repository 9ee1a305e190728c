//! `textDocument/codeLens`: "Run" above `main` (`cairn.run`) and "Run test" above each test
//! (`cairn.runTest`), for a document on disk; the server only names the command, the editor runs
//! it. The target is the project's manifest, or the file when it is a program of its own.

use cairn_hir::ItemKind;
use serde_json::{Value, json};

use super::cursor::significant_range;
use crate::convert::LineMap;
use crate::world::Project;

/// "Run" above `main` and "Run test" above each test block of a document on disk; the server
/// only names the command.
pub(super) fn code_lenses(project: &Project, file: usize) -> Vec<Value> {
    let Some(path) = project.files.get(file).and_then(|f| f.path.clone()) else { return Vec::new() };
    let target = if project.key.ends_with(".toml") { project.key.clone() } else { path.to_string_lossy().to_string() };
    let workspace = &project.workspace;
    let state = &workspace.files()[file];
    let map = LineMap::new(&state.text());
    let mut out = Vec::new();
    for entry in &state.items {
        let node = entry.item.syntax(workspace.db()).syntax_node();
        let range = significant_range(&node);
        let base = usize::from(entry.start);
        let at = map.range(&state.text(), base + usize::from(range.start()), base + usize::from(range.start()));
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
