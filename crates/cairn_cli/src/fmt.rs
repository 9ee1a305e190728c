//! `cairn fmt` (tools.md §3.24): rewrites CAIRN files in the canonical layout
//! (`cairn_syntax::format`), or with `--check` / `--diff` says which would change.
//!
//! Paths are files, or directories searched recursively for `*.cairn` (hidden directories and
//! `build/` skipped), in sorted order. A file that does not parse, or whose layout would change its
//! tokens, is left as it is and listed under `not_formatted` (exit 1).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::output::{FormatChoice, Output, to_map};

/// The `cairn fmt` record.
#[derive(Serialize)]
struct Record {
    /// `formatted` (files were rewritten), `would-change` (`--check`/`--diff` found some), `clean`.
    status: &'static str,
    mode: &'static str,
    changed: Vec<String>,
    not_formatted: Vec<NotFormatted>,
}

#[derive(Serialize)]
struct NotFormatted {
    file: String,
    reason: String,
}

pub fn run(paths: &[PathBuf], check: bool, diff: bool, out: Output) -> u8 {
    let mut files = Vec::new();
    for path in paths {
        if let Err(message) = collect(path, &mut files) {
            out.environment(&message);
            return 2;
        }
    }
    let rewrite = !check && !diff;
    let mut changed = Vec::new();
    let mut failed = Vec::new();
    let mut diffs = String::new();
    for file in &files {
        let name = file.display().to_string();
        let text = match std::fs::read(file).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                failed.push(NotFormatted { file: name, reason: "the file is not UTF-8".into() });
                continue;
            }
            Err(e) => {
                failed.push(NotFormatted { file: name, reason: format!("cannot read it: {e}") });
                continue;
            }
        };
        let formatted = match cairn_syntax::format::format(&text) {
            Ok(formatted) => formatted,
            Err(why) => {
                failed.push(NotFormatted { file: name, reason: why.to_string() });
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        if diff {
            let unified = similar::TextDiff::from_lines(&text, &formatted)
                .unified_diff()
                .header(&name, &format!("{name} (formatted)"))
                .to_string();
            diffs.push_str(&unified);
        }
        if rewrite && let Err(e) = write_atomically(file, &formatted) {
            failed.push(NotFormatted { file: name, reason: format!("cannot write it: {e}") });
            continue;
        }
        changed.push(name);
    }
    let status = match (changed.is_empty(), rewrite) {
        (true, _) => "clean",
        (false, true) => "formatted",
        (false, false) => "would-change",
    };
    let exit = if !failed.is_empty() || (!rewrite && !changed.is_empty()) { 1 } else { 0 };
    if diff {
        out.text(&diffs);
        for f in &failed {
            eprintln!("not formatted: {}: {}", f.file, f.reason);
        }
        return exit;
    }
    let mode = if rewrite { "rewrite" } else { "check" };
    let record = Record { status, mode, changed, not_formatted: failed };
    match out.format {
        FormatChoice::Json => out.json(&to_map(&record)),
        FormatChoice::Human => {
            let mut text = String::new();
            let verb = if rewrite { "formatted" } else { "would change" };
            for file in &record.changed {
                text.push_str(&format!("{verb}: {file}\n"));
            }
            for f in &record.not_formatted {
                text.push_str(&format!("not formatted: {}: {}\n", f.file, f.reason));
            }
            text.push_str(&format!("{}: {} of {} files\n", record.status, record.changed.len(), files.len()));
            out.text(&text);
        }
    }
    exit
}

/// The `.cairn` files a path names.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if entry.is_dir() {
            if !name.starts_with('.') && name != "build" && name != "target" {
                collect(&entry, out)?;
            }
        } else if name.ends_with(".cairn") {
            out.push(entry);
        }
    }
    Ok(())
}

/// Replaces a file's text through a temporary file in its directory and a rename.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = dir.join(format!(".{name}.cairn-fmt-{}", std::process::id()));
    std::fs::write(&temporary, text)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temporary, meta.permissions());
    }
    std::fs::rename(&temporary, path)
}
