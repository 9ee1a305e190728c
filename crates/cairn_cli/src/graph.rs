//! `cairn graph` (tools.md §3.20): the program's modules and how they depend on each other, as the
//! `cairn.graph/1` record.
//!
//! Per module: the modules it imports, its public declarations (`exports`), the modules that
//! import it (`dependents`), and the SHA-256 of its declarations' text (`source_sha256`); with
//! `--interfaces` the program is checked and each module gets `interface_sha256`, the hash of its
//! public functions' signatures and effect rows and its public types' declarations — it changes
//! only when what a dependent can see changes. `order` lists the modules dependencies first;
//! `cyclic` names the modules on an import cycle or behind one (none: empty); `libraries` the packaged std
//! modules the program imports; `dependencies` the manifest's vendored ones.
//!
//! Decided: `cyclic` is a list (a cycle's members), not a flag; generated declarations (what a
//! `derive` writes) count as their module's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use cairn_hir::ItemKind;
use serde::Serialize;

use crate::check::load_workspace;
use crate::output::{FormatChoice, Output, to_map};

#[derive(Serialize)]
struct Graph {
    schema: &'static str,
    compiler: String,
    project: String,
    files: Vec<FileModules>,
    modules: BTreeMap<String, ModuleFacts>,
    order: Vec<String>,
    cyclic: Vec<String>,
    libraries: Vec<String>,
    dependencies: Vec<String>,
}

#[derive(Serialize)]
struct FileModules {
    path: String,
    modules: Vec<String>,
}

#[derive(Serialize, Default)]
struct ModuleFacts {
    imports: Vec<String>,
    exports: Vec<String>,
    dependents: Vec<String>,
    source_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    interface_sha256: Option<String>,
}

/// The name a module has in the record (`""`, the root module, is `(root)`).
fn shown(module: &str) -> String {
    if module.is_empty() { "(root)".to_string() } else { module.to_string() }
}

pub fn run(path: &Path, interfaces: bool, out: Output) -> u8 {
    let Some(program) = crate::check::load_program(path, out) else { return 2 };
    let mut workspace = load_workspace(&program);
    let rows = if interfaces {
        let _ = workspace.check();
        workspace.last_rows()
    } else {
        None
    };
    let db = workspace.db();
    let scope = cairn_hir::scope(db);
    let entries = workspace.program().items(db);
    let own = |e: &&cairn_hir::ItemEntry| !e.library;
    let mut modules: BTreeMap<String, ModuleFacts> = BTreeMap::new();
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut interface: BTreeMap<String, String> = BTreeMap::new();
    for entry in entries.iter().filter(own) {
        let module = shown(&entry.key.module);
        let facts = modules.entry(module.clone()).or_default();
        let text = entry.item.syntax(db).syntax_node().text().to_string();
        let source = sources.entry(module.clone()).or_default();
        source.push_str(&text);
        source.push('\u{0}');
        if entry.public && entry.key.kind.declares_name() && entry.key.parent.is_none() {
            facts.exports.push(entry.key.name.to_string());
            let seen = interface.entry(module).or_default();
            match entry.key.kind {
                ItemKind::Fn => {
                    seen.push_str(&cairn_hir::render::signature_text(db, entry.item, true));
                    if let Some(row) = rows.as_ref().and_then(|r| r.row(entry.item)) {
                        let effects: Vec<String> = row.iter().map(|e| e.to_string()).collect();
                        seen.push_str(&effects.join(","));
                    }
                }
                _ => seen.push_str(&cairn_hir::render::declaration_text(db, entry.item).unwrap_or(text)),
            }
            seen.push('\u{0}');
        }
    }
    let mut libraries: BTreeSet<String> = BTreeSet::new();
    for import in &scope.imports {
        let from = shown(&import.in_module);
        let Some(facts) = modules.get_mut(&from) else { continue };
        if cairn_hir::library::module(&import.module).is_some() {
            libraries.insert(import.module.to_string());
            continue;
        }
        let to = shown(&import.module);
        if !facts.imports.contains(&to) {
            facts.imports.push(to);
        }
    }
    let edges: Vec<(String, String)> =
        modules.iter().flat_map(|(m, f)| f.imports.iter().map(move |i| (m.clone(), i.clone()))).collect();
    for (from, to) in &edges {
        if let Some(target) = modules.get_mut(to)
            && !target.dependents.contains(from)
        {
            target.dependents.push(from.clone());
        }
    }
    for (name, facts) in modules.iter_mut() {
        facts.imports.sort();
        facts.exports.sort();
        facts.exports.dedup();
        facts.dependents.sort();
        facts.source_sha256 = cairn_agent::canonical::sha256_hex(sources.get(name).map_or(&b""[..], |s| s.as_bytes()));
        if interfaces {
            facts.interface_sha256 =
                Some(cairn_agent::canonical::sha256_hex(interface.get(name).map_or(&b""[..], |s| s.as_bytes())));
        }
    }
    let (order, cyclic) = topological(&modules);
    let mut files = Vec::new();
    for file in &workspace.files()[..workspace.own_file_count()] {
        let mut in_file: Vec<String> = file.items.iter().map(|i| shown(&i.key.module)).collect();
        in_file.sort();
        in_file.dedup();
        files.push(FileModules { path: file.name.clone(), modules: in_file });
    }
    let record = Graph {
        schema: "cairn.graph/1",
        compiler: format!("cairn-rs {}", env!("CARGO_PKG_VERSION")),
        project: program.name.clone(),
        files,
        modules,
        order,
        cyclic,
        libraries: libraries.into_iter().collect(),
        dependencies: program.dependencies.iter().map(|d| d.name.clone()).collect(),
    };
    match out.format {
        FormatChoice::Json => out.json(&to_map(&record)),
        FormatChoice::Human => {
            let mut text = format!("{} ({} modules)\n", record.project, record.modules.len());
            for name in &record.order {
                let facts = &record.modules[name];
                let imports =
                    if facts.imports.is_empty() { String::new() } else { format!(" <- {}", facts.imports.join(", ")) };
                text.push_str(&format!("  {name}{imports}\n"));
            }
            if !record.cyclic.is_empty() {
                text.push_str(&format!("  cyclic: {}\n", record.cyclic.join(", ")));
            }
            if !record.libraries.is_empty() {
                text.push_str(&format!("  libraries: {}\n", record.libraries.join(", ")));
            }
            out.text(&text);
        }
    }
    std::mem::forget(workspace);
    0
}

/// The modules dependencies first (ties by name), and the ones on an import cycle.
fn topological(modules: &BTreeMap<String, ModuleFacts>) -> (Vec<String>, Vec<String>) {
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut order = Vec::new();
    loop {
        let ready: Vec<String> = modules
            .iter()
            .filter(|(name, facts)| {
                !done.contains(*name) && facts.imports.iter().all(|i| done.contains(i) || !modules.contains_key(i))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if ready.is_empty() {
            break;
        }
        for name in ready {
            done.insert(name.clone());
            order.push(name);
        }
    }
    let cyclic: Vec<String> = modules.keys().filter(|m| !done.contains(*m)).cloned().collect();
    order.extend(cyclic.iter().cloned());
    (order, cyclic)
}
