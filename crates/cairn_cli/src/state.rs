//! `cairn state`: the program as it stands, for an agent to resume from (tools.md §3.6,
//! protocol §7.1), or with `--since FILE` the delta from a saved state (§7.2), or with
//! `--symbol F` the function's investigation from the candidate history (§7.3).
//!
//! The record is JSON in both output modes (it is made for programs); human mode adds nothing
//! but indentation at a terminal. Exit: 0 when the program is typed, 1 when refused, 2 when the
//! program or the saved state cannot be read.

use std::path::Path;

use cairn_hir::Workspace;
use serde_json::{Map, Value};

use crate::check::sources_of;
use crate::output::Output;

/// The largest saved state `--since` reads.
const SINCE_LIMIT: u64 = 16_000_000;

pub fn run(path: &Path, since: Option<&Path>, out: Output) -> u8 {
    let Some(program) = crate::check::load_program(path, out) else { return 2 };
    let before = match since.map(read_state).transpose() {
        Ok(before) => before,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    let sources = sources_of(&program);
    let mut workspace = Workspace::new(sources.files.clone());
    let view = workspace.state_view(false);
    let state = cairn_agent::state_of(&view, &sources, true);
    let status = if view.typed { 0 } else { 1 };
    std::mem::forget(workspace);
    match before {
        None => out.json(&state),
        Some(before) => match cairn_agent::delta(&before, &state) {
            Ok(delta) => out.json(&delta),
            Err(error) => {
                out.environment(&error.0);
                return 2;
            }
        },
    }
    status
}

/// `cairn state --symbol F`: the function's investigation (protocol §7.3) from the project's
/// candidate history, or with `--since FILE` its delta from a saved one
/// (`cairn.investigation-delta/1`). Exit 0; 1 for a refused program; 2 for an environment error.
pub fn investigate(path: &Path, symbol: &str, since: Option<&Path>, out: Output) -> u8 {
    let before = match since.map(read_state).transpose() {
        Ok(before) => before,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    let (program, workspace) = match crate::check::load_checked(path, out) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let Some(item) = cairn_agent::program::function_item(&workspace, symbol) else {
        out.environment(&format!("{symbol} names no function of the program."));
        return 2;
    };
    let records = match cairn_vfs::history::read(&program.root.join(".cairn").join("history")) {
        Ok(values) => cairn_agent::history::records_of(values),
        Err(e) => {
            out.environment(&format!("The candidate history cannot be read: {e}."));
            return 2;
        }
    };
    let investigation = crate::output::to_map(&cairn_agent::investigation::investigation(&workspace, item, &records));
    std::mem::forget(workspace);
    match before {
        None => out.json(&investigation),
        Some(before) => match cairn_agent::investigation::investigation_delta(&before, &investigation) {
            Ok(delta) => out.json(&delta),
            Err(message) => {
                out.environment(&message);
                return 2;
            }
        },
    }
    0
}

fn read_state(path: &Path) -> Result<Map<String, Value>, String> {
    let shown = path.display();
    // Only a regular file (a FIFO or device is refused without blocking), within the limit.
    let bytes = cairn_vfs::read_user_file(path, SINCE_LIMIT)
        .map_err(|e| format!("Cannot read the saved state {shown}: {e} (at most {SINCE_LIMIT} bytes)."))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("The saved state {shown} is not UTF-8."))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) | Err(_) => Err(format!("The saved state {shown} is not a JSON object.")),
    }
}
