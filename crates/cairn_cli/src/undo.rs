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
use serde::Serialize;
use serde_json::Value;

use crate::output::{Output, to_map};

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
            let record = Undone { status: "undone", reverted: undone.seq, files: &undone.files };
            let detail = format!("reverted write-back {} ({})", undone.seq, undone.files.join(", "));
            out.summary(&to_map(&record), true, &detail);
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
        diagnostic.details.push(("files".into(), Value::from(files)));
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

/// The record of a reverted write-back: its number in the journal and the files it restored.
#[derive(Serialize)]
struct Undone<'a> {
    status: &'static str,
    reverted: u64,
    files: &'a [String],
}
