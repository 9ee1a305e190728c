//! Repository-wide rules that no compiler checks: the crate graph keeps its layering, no two files
//! of a crate import each other round a loop, every Rust file opens with a `//!` paragraph, no
//! test is silenced, and every example program parses.

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The dependency edges the architecture allows between our crates (docs/architecture.md).
const ALLOWED: &[(&str, &[&str])] = &[
    ("cairn_syntax", &[]),
    ("cairn_testgen", &[]),
    ("cairn_diagnostics", &["cairn_syntax"]),
    ("cairn_vfs", &[]),
    ("cairn_hir", &["cairn_syntax", "cairn_diagnostics", "cairn_vfs"]),
    ("cairn_mir", &["cairn_hir"]),
    ("cairn_codegen", &["cairn_mir"]),
    ("cairn_runtime", &[]),
    ("cairn_smt", &["cairn_mir"]),
    ("cairn_agent", &["cairn_syntax", "cairn_hir", "cairn_diagnostics", "cairn_mir", "cairn_smt", "cairn_codegen"]),
    ("cairn_lsp", &["cairn_syntax", "cairn_diagnostics", "cairn_hir", "cairn_agent", "cairn_vfs"]),
    ("cairn_mcp", &["cairn_agent", "cairn_vfs"]),
];

/// Our crates a manifest's `[dependencies]` table names (dev-dependencies are free).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && line.starts_with("cairn_") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or("");
            found.push(name.to_string());
        }
    }
    found
}

#[test]
fn the_crate_graph_keeps_its_layering() {
    let crates = workspace_root().join("crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).expect("crates dir").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let manifest = std::fs::read_to_string(entry.path().join("Cargo.toml")).expect("manifest");
        let dependencies = normal_dependencies(&manifest);
        if name == "cairn_cli" {
            continue; // The binary may depend on everything.
        }
        let allowed = ALLOWED
            .iter()
            .find(|(crate_name, _)| *crate_name == name)
            .unwrap_or_else(|| {
                panic!("crate {name} is not in the architecture's table; add it to docs/architecture.md and here")
            })
            .1;
        for dependency in dependencies {
            assert!(
                allowed.contains(&dependency.as_str()),
                "{name} depends on {dependency}, an edge docs/architecture.md does not allow"
            );
        }
        checked += 1;
    }
    assert!(checked >= 4);
}

#[test]
fn analysis_crates_need_neither_llvm_nor_z3() {
    for name in ["cairn_syntax", "cairn_diagnostics", "cairn_hir"] {
        let path = workspace_root().join("crates").join(name).join("Cargo.toml");
        let Ok(manifest) = std::fs::read_to_string(path) else { continue };
        for forbidden in ["inkwell", "llvm-sys", "z3"] {
            assert!(
                !manifest.lines().any(|l| l.trim_start().starts_with(forbidden)),
                "{name} must not depend on {forbidden}"
            );
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_comment() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("bench"), &mut files);
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        if !text.trim_start().starts_with("//!") {
            missing.push(file.strip_prefix(&root).unwrap_or(file).display().to_string());
        }
    }
    assert!(missing.is_empty(), "files without a `//!` paragraph: {missing:?}");
}

#[test]
fn no_test_is_silenced() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("bench"), &mut files);
    // The ignore attribute with or without a reason.
    let ignore = ["#[", "ignore"].concat();
    let should_panic = ["#[", "should_panic"].concat();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        assert!(!text.contains(&ignore), "{} silences a test", file.display());
        assert!(!text.contains(&should_panic), "{} expects a panic", file.display());
    }
}

#[test]
fn every_example_program_parses_cleanly() {
    let root = workspace_root().join("examples");
    let mut programs = Vec::new();
    collect_cairn(&root, &mut programs);
    assert!(!programs.is_empty());
    for path in programs {
        let text = std::fs::read_to_string(&path).expect("example");
        let parse = cairn_syntax::parse(&text);
        assert!(parse.ok(), "{}: {:?}", path.display(), parse.errors());
    }
}

fn collect_cairn(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_cairn(&path, out);
        } else if path.extension().is_some_and(|e| e == "cairn") {
            out.push(path);
        }
    }
}

/// A module path inside one crate (`check::moves`), from a file's path under `src/`.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src").with_extension("");
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod" || (parts.len() == 1 && (p == "lib" || p == "main"))) {
        parts.pop();
    }
    parts.join("::")
}

/// The paths a file's code names that start at `crate`, `super`, `self` or a child module
/// (`use` groups expanded), each as its segments; comments and `#[cfg(test)]` code left out.
fn named_paths(text: &str, children: &[String]) -> Vec<Vec<String>> {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let bytes: Vec<char> = code.chars().collect();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i]) || (i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == ':')) {
            i += 1;
            continue;
        }
        // A path: identifiers joined by `::`, ending in a segment or a `{ ... }` group.
        let (path, end) = read_path(&bytes, i);
        i = end.max(i + 1);
        let Some(first) = path.first().and_then(|p| p.first()) else { continue };
        if path[0].len() > 1 && (first == "crate" || first == "super" || first == "self" || children.contains(first)) {
            out.extend(path);
        }
    }
    out
}

/// Reads the path starting at `at`: its expansions (one per name a `use` group brings in) and
/// where it ends.
fn read_path(chars: &[char], at: usize) -> (Vec<Vec<String>>, usize) {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut segments = Vec::new();
    let mut i = at;
    loop {
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i == start {
            break;
        }
        segments.push(chars[start..i].iter().collect::<String>());
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            if chars.get(i) == Some(&'{') {
                // A group: each member is a path of its own below `segments`.
                let mut out = Vec::new();
                i += 1;
                loop {
                    while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                        i += 1;
                    }
                    if i >= chars.len() || chars[i] == '}' {
                        i += 1;
                        break;
                    }
                    let (inner, end) = read_path(chars, i);
                    if end <= i {
                        i += 1;
                        continue;
                    }
                    i = end;
                    for tail in inner {
                        out.push(segments.iter().cloned().chain(tail).collect());
                    }
                }
                return (out, i);
            }
            continue;
        }
        break;
    }
    (vec![segments], i)
}

/// Where a path named in module `from` leads: the deepest module of `modules` it names.
fn resolve(from: &str, path: &[String], modules: &std::collections::BTreeSet<String>) -> Option<String> {
    let mut base: Vec<String> = if from.is_empty() { Vec::new() } else { from.split("::").map(String::from).collect() };
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    let mut found = None;
    for n in 1..=rest.len() {
        let candidate = base.iter().chain(&rest[..n]).cloned().collect::<Vec<_>>().join("::");
        if modules.contains(&candidate) {
            found = Some(candidate);
        }
    }
    found.filter(|m| m != from && !m.is_empty())
}

/// Modules that import one another in a loop, per Tarjan; each circle as its members.
fn circles(edges: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        index: std::collections::HashMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        on_stack: std::collections::HashSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, (self.next, self.next));
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.index[w.as_str()].1.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                } else if self.on_stack.contains(w.as_str()) {
                    let low = self.index[w.as_str()].0.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut members = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    members.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if members.len() > 1 {
                    members.sort();
                    self.out.push(members);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: Default::default(),
        stack: Vec::new(),
        on_stack: Default::default(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.out
}

/// No two files of a crate import each other, directly or round a loop (a file is a room with
/// one purpose, readable from the rooms below it), except the grammar's natural mutual recursion
/// (an expression holds a block, a block holds expressions). Imports are read as `farm-studio`
/// reads them: every path a file names through `crate`, `super`, `self` or a child module, except
/// that a module's paths into its own children are its face, not arrows.
#[test]
fn no_circle_of_imports_between_files() {
    let root = workspace_root();
    let allowed: &[&str] = &["grammar::exprs", "grammar::items", "grammar::recipes", "grammar::stmts"];
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).expect("crates").flatten() {
        let src = entry.path().join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        // Binaries (`src/bin/`, `main.rs`) are crates of their own.
        files.retain(|f| !f.strip_prefix(&src).is_ok_and(|r| r.starts_with("bin")) && !f.ends_with("main.rs"));
        let modules: std::collections::BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
        let mut edges: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
        for file in &files {
            let from = module_of(&src, file);
            let prefix = if from.is_empty() { String::new() } else { format!("{from}::") };
            let children: Vec<String> = modules
                .iter()
                .filter_map(|m| m.strip_prefix(&prefix).filter(|rest| !rest.is_empty() && !rest.contains("::")))
                .map(String::from)
                .collect();
            let text = std::fs::read_to_string(file).expect("readable");
            let targets: std::collections::BTreeSet<String> = named_paths(&text, &children)
                .iter()
                .filter_map(|path| {
                    let path: Vec<String> = match path.first() {
                        Some(first) if children.contains(first) => {
                            std::iter::once("self".to_string()).chain(path.iter().cloned()).collect()
                        }
                        _ => path.clone(),
                    };
                    resolve(&from, &path, &modules)
                })
                // A module is the face of its own children: what it declares and re-exports of
                // them is no arrow (as `farm-studio` draws it); a child's import of its parent is.
                .filter(|target| !target.starts_with(&prefix))
                .collect();
            edges.insert(from, targets);
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        for circle in circles(&edges) {
            if name == "cairn_syntax" && circle.iter().all(|m| allowed.contains(&m.as_str())) {
                continue;
            }
            found.push(format!("{name}: {}", circle.join(" ↔ ")));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other in a loop (move the shared part below both):\n{}",
        found.join("\n")
    );
}
