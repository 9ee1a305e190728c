//! `cairn undo`: revert the newest write-back a host made to a program's files (the MCP
//! server's admitted edits), through the journal in `.cairn/` beside the program.
//!
//! Fail-closed: if any file the write-back touched no longer holds what it wrote, nothing is
//! changed and the refusal (`E-SESSION`, detail `files`) names them. A write-back a crash left
//! half done is rolled back first, as any journal user does. Exit 0 when reverted, 1 when
//! refused (including when there is nothing to undo), 2 when the files cannot be read or
//! written.

use std::path::{Path, PathBuf};

use cairn_vfs::journal::{Journal, WriteError};
use serde_json::{Map, json};

use crate::output::Output;

pub fn run(path: &Path, out: Output) -> u8 {
    let Some(root) = program_directory(path) else {
        out.environment(&format!(
            "Cannot read `{}`; pass a .cairn file, a project directory or a manifest.",
            path.display()
        ));
        return 2;
    };
    let journal = Journal::new(&root);
    match journal.undo() {
        Ok(undone) => {
            let mut record = Map::new();
            record.insert("status".into(), json!("undone"));
            record.insert("reverted".into(), json!(undone.seq));
            record.insert("files".into(), json!(undone.files));
            out.summary(&record, true, &format!("reverted write-back {} ({})", undone.seq, undone.files.join(", ")));
            0
        }
        Err(WriteError::Changed(files)) => {
            refuse(
                &out,
                &format!(
                    "{} changed since the write-back; nothing was reverted (undo never overwrites a later change).",
                    files.join(", ")
                ),
                Some(files),
            );
            1
        }
        Err(WriteError::Conflict(files)) => {
            refuse(
                &out,
                &format!(
                    "{} was saved while the undo was being written; the save was kept and nothing was reverted.",
                    files.join(", ")
                ),
                Some(files),
            );
            1
        }
        Err(WriteError::NothingToUndo) => {
            refuse(&out, "No write-back of this program is left to undo.", None);
            1
        }
        Err(WriteError::Io(message)) => {
            out.environment(&message);
            2
        }
    }
}

fn refuse(out: &Output, message: &str, files: Option<Vec<String>>) {
    let mut diagnostic = cairn_diagnostics::Diagnostic::new("E-SESSION", message);
    if let Some(files) = files {
        diagnostic.details.push(("files".into(), json!(files)));
    }
    if let Some(refusal) = cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]) {
        out.refusal(&cairn_diagnostics::record::refusal_record(&refusal), &|_, _| None);
    }
}

/// The directory whose `.cairn/` holds the journal: a project directory itself, or the
/// directory of a manifest or of a one-file program.
fn program_directory(path: &Path) -> Option<PathBuf> {
    let metadata = std::fs::metadata(path).ok()?;
    let directory = if metadata.is_dir() { path.to_path_buf() } else { path.parent()?.to_path_buf() };
    let directory = if directory.as_os_str().is_empty() { PathBuf::from(".") } else { directory };
    directory.canonicalize().ok()
}
