//! What the re-execution tests share (`incremental.rs`, `incremental_constructs.rs`): a
//! workspace with its execution log, the ids the log prints, an editor's edit, and which queries
//! an edit ran.
#![allow(dead_code)]

use cairn_hir::{Item, SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};

/// A workspace over one file, `main.cairn`, logging the queries it executes; the program must
/// be accepted.
pub fn workspace(text: &str) -> Workspace {
    let mut workspace =
        Workspace::with_execution_log(vec![SourceText { name: "main.cairn".into(), text: text.to_string() }]);
    assert!(workspace.check().refusal.is_none(), "the program must be accepted before the edit");
    workspace
}

/// The id of a declaration of the program's file by name, as the log prints it.
pub fn id(workspace: &Workspace, name: &str) -> String {
    let item: Item = workspace.files()[0].items.iter().find(|i| &*i.key.name == name).expect("declared").item;
    let debug = format!("{item:?}");
    let start = debug.find("Id(").expect("an id");
    debug[start..debug.find(')').expect("closed") + 1].to_string()
}

/// Replaces the first occurrence of `old` (after `after`) by `new`, as an editor would.
pub fn edit(workspace: &mut Workspace, after: &str, old: &str, new: &str) {
    let text = &workspace.files()[0].text();
    let base = text.find(after).expect("anchor");
    let start = base + text[base..].find(old).expect("old text");
    let delete = TextRange::new(TextSize::from(start as u32), TextSize::from((start + old.len()) as u32));
    workspace.edit_file(0, &TextEdit { delete, insert: new.to_string() });
}

/// Applies `change`, checks, and returns the queries that executed.
pub fn executed(workspace: &mut Workspace, change: impl FnOnce(&mut Workspace)) -> Vec<String> {
    workspace.db().start_logging();
    change(workspace);
    let outcome = workspace.check();
    let log = workspace.db().take_log();
    assert!(outcome.refusal.is_none(), "the edited program must stay accepted: {:?}", outcome.refusal);
    log
}

pub fn ran(log: &[String], query: &str, id: &str) -> bool {
    log.iter().any(|entry| entry == &format!("{query}({id})"))
}

pub fn ran_any(log: &[String], query: &str) -> bool {
    log.iter().any(|entry| entry.starts_with(&format!("{query}(")))
}

pub const PROGRAM_QUERIES: &[&str] = &["program_check", "effect_rows", "program_scope", "all_constants"];

/// The edit `old` → `new` at the first `old` of `text`.
pub fn text_edit(text: &str, old: &str, new: &str) -> TextEdit {
    let start = text.find(old).expect("old text");
    TextEdit { delete: TextRange::new((start as u32).into(), ((start + old.len()) as u32).into()), insert: new.into() }
}
