//! `cairn expand` (tools.md §3.19): the CAIRN source the program's `derive` declarations
//! generate, per module — the text the checker actually judges, with `$` splices and static
//! values carried out (language §29).
//!
//! The expansions are the workspace's generated files (`cairn_hir::recipes`); a derivation that
//! is refused generates nothing, and the check's refusal is the command's answer (exit 1).

use std::path::Path;

use cairn_diagnostics::record::refusal_record;
use serde::Serialize;

use crate::check::load_workspace;
use crate::output::{FormatChoice, Output, to_map};

/// The `cairn.expand/1` record.
#[derive(Serialize)]
struct Expanded {
    schema: &'static str,
    status: &'static str,
    /// One entry per derivation, in declaration order.
    derivations: Vec<Derivation>,
}

#[derive(Serialize)]
struct Derivation {
    /// The deriving module (`""` for the root).
    module: String,
    /// `recipe[args] for Target`, as the `derive` names it.
    derive: String,
    /// The generated declarations.
    source: String,
}

pub fn run(path: &Path, out: Output) -> u8 {
    let Some(program) = crate::check::load_program(path, out) else { return 2 };
    let mut workspace = load_workspace(&program);
    let outcome = workspace.check();
    // A derivation that generates nothing: the check reports its refusal first (derivations are
    // judged before anything that reads what they generate).
    let refused = workspace.program().items(workspace.db()).iter().any(|e| {
        e.key.kind == cairn_hir::ItemKind::Derive
            && cairn_hir::recipes::derive_expansion(workspace.db(), e.item).refusal.is_some()
    });
    if let Some(refusal) = outcome.refusal.as_ref().filter(|_| refused) {
        let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
        out.refusal(&refusal_record(refusal), &lines);
        return 1;
    }
    let db = workspace.db();
    let mut derivations = Vec::new();
    for entry in workspace.program().items(db).iter() {
        if entry.key.kind != cairn_hir::ItemKind::Derive || entry.library {
            continue;
        }
        let expansion = cairn_hir::recipes::derive_expansion(db, entry.item);
        derivations.push(Derivation {
            module: entry.key.module.to_string(),
            derive: entry.key.name.to_string(),
            source: expansion.text.to_string(),
        });
    }
    let record = Expanded { schema: "cairn.expand/1", status: "expanded", derivations };
    match out.format {
        FormatChoice::Json => out.json(&to_map(&record)),
        FormatChoice::Human => {
            let mut text = String::new();
            for d in &record.derivations {
                let module =
                    if d.module.is_empty() { "the root module".to_string() } else { format!("module {}", d.module) };
                text.push_str(&out.bold(&format!("// derive {} ({module})", d.derive)));
                text.push('\n');
                text.push_str(&d.source);
                if !d.source.ends_with('\n') {
                    text.push('\n');
                }
                text.push('\n');
            }
            if record.derivations.is_empty() {
                text.push_str("no derivations\n");
            }
            out.text(&text);
        }
    }
    std::mem::forget(workspace);
    0
}
