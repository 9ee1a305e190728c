//! `cairn build`, and the compile pipeline `run`, `test` and `emit` share (tools.md §3.2).
//!
//! Pipeline: load → check (a refusal ends it: exit 1) → MIR of every function → LLVM → object →
//! link with the runtime by `cc` into a fresh directory under `<root>/build/` (never reusing one).
//! The directory also gets `receipt.json`: the full record, with the checker's receipt of every
//! function (effects, calls, guard sites as counted by the checker and as discharged by the
//! compiler). The printed record is the short one.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cairn_codegen::{Compiled, Entry, Options, Site};
use cairn_diagnostics::record::refusal_record;
use cairn_hir::{Item, ItemKind, Workspace};
use cairn_mir::{Anchor, FnKind, Function};
use serde_json::{Map, Value, json};

use crate::check::load_workspace;
use crate::output::Output;

/// What a build is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// An executable entered at `fn main() -> i32`.
    Executable,
    /// The test runner: every `test` block of the program.
    Tests,
}

/// The compiler's wall-clock limit when none is given (tools.md §3.2: 60 s).
pub const DEFAULT_TIMEOUT: u64 = 60;

/// Flags shared by `build`, `run` and `test`.
#[derive(Debug, Clone)]
pub struct BuildFlags {
    pub keep_guards: bool,
    pub out: Option<PathBuf>,
    /// Debug line information pointing at the `.cairn` source.
    pub debug: bool,
    /// The compiler's wall-clock limit in seconds (for `run`: the build and run together).
    pub timeout: u64,
}

/// Ends the process with an `unknown` record if the compile outlives its limit; dropping it
/// (when the compile is done) stops it. The compile runs in this process, so stopping it means
/// ending the process — before any artifact is published under its name.
struct Watchdog {
    stop: Option<std::sync::mpsc::Sender<()>>,
}

impl Watchdog {
    fn start(seconds: u64, out: Output) -> Watchdog {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(std::time::Duration::from_secs(seconds))
            {
                let mut record = Map::new();
                record.insert("schema".into(), json!("cairn.build/1"));
                record.insert("status".into(), json!("unknown"));
                record.insert(
                    "message".into(),
                    json!(format!("The compile did not finish within {seconds} s (--timeout); it was stopped.")),
                );
                out.json(&record);
                std::process::exit(2);
            }
        });
        Watchdog { stop: Some(stop) }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A successful build.
pub struct Built {
    pub program: cairn_vfs::Program,
    pub workspace: Workspace,
    pub directory: PathBuf,
    pub artifact: PathBuf,
    /// The tests in the runner, in source order: (name, file, line).
    pub tests: Vec<(String, String, u32)>,
    pub record: Map<String, Value>,
}

/// Why a build stopped: the exit status to use (the record was printed).
pub struct Stopped(pub u8);

/// Loads, checks and builds; prints the refusal or the environment record when it stops.
pub fn build(path: &Path, purpose: Purpose, flags: &BuildFlags, out: Output) -> Result<Built, Stopped> {
    let started = Instant::now();
    let _watchdog = Watchdog::start(flags.timeout, out);
    let program = cairn_vfs::load(path).map_err(|error| {
        out.environment(&error.message);
        Stopped(2)
    })?;
    let mut workspace = load_workspace(&program);
    let outcome = workspace.check();
    if let Some(refusal) = outcome.refusal {
        let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
        out.refusal(&refusal_record(&refusal), &lines);
        return Err(Stopped(1));
    }
    let compiled = compile(&workspace, purpose, flags).map_err(|message| {
        out.environment(&message);
        Stopped(2)
    })?;
    let name = artifact_name(&program.name);
    let parent = match &flags.out {
        Some(out) => out.clone(),
        None => cairn_vfs::project_subdir(&program.root, "build").map_err(|message| {
            out.environment(&format!("The build directory cannot be used: {message}."));
            Stopped(2)
        })?,
    };
    let directory = fresh_directory(&parent, &name).map_err(|message| {
        out.environment(&message);
        Stopped(2)
    })?;
    let artifact = directory.join(&name);
    let mut record = Map::new();
    record.insert("schema".into(), json!("cairn.build/1"));
    let linked = cairn_codegen::link(&compiled.compiled.object, &artifact, &directory);
    let status = if linked.is_ok() { "native-built" } else { "native-build-failed" };
    record.insert("status".into(), json!(status));
    record.insert("formal_status".into(), json!("not-verified"));
    record.insert("kind".into(), json!("exe"));
    record.insert("target".into(), json!("hosted"));
    let mut command = "cairn-rs llvm-19 x86-64 -O2 + cc".to_string();
    if flags.keep_guards {
        command.push_str(" --keep-guards");
    }
    if flags.debug {
        command.push_str(" --debug");
    }
    record.insert("command".into(), json!(command));
    record.insert("artifact".into(), json!(artifact.display().to_string()));
    record.insert("directory".into(), json!(directory.display().to_string()));
    let receipt_path = directory.join("receipt.json");
    record.insert("receipt".into(), json!(receipt_path.display().to_string()));
    if let Err(message) = &linked {
        record.insert("message".into(), json!(message));
    }
    let mut receipt = record.clone();
    receipt.remove("receipt");
    receipt.insert("frontend".into(), frontend(&workspace, &compiled.functions));
    receipt.insert("project".into(), project(&program));
    receipt.insert(
        "guards".into(),
        json!({"emitted": compiled.compiled.guards_emitted, "elided": compiled.compiled.guards_elided, "kept": flags.keep_guards}),
    );
    receipt.insert("compiler_version".into(), json!(cairn_agent::profile()));
    if linked.is_ok()
        && let Ok(bytes) = std::fs::read(&artifact)
    {
        receipt.insert("artifact_sha256".into(), json!(cairn_agent::canonical::sha256_hex(&bytes)));
    }
    receipt.insert("elapsed_seconds".into(), json!((started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0));
    let text = serde_json::to_string_pretty(&Value::Object(receipt)).unwrap_or_default() + "\n";
    let _ = std::fs::write(&receipt_path, text);
    if linked.is_err() {
        out.json(&record);
        return Err(Stopped(2));
    }
    Ok(Built { program, workspace, directory, artifact, tests: compiled.tests, record })
}

/// `cairn build`.
pub fn run(path: &Path, flags: &BuildFlags, out: Output) -> u8 {
    match build(path, Purpose::Executable, flags, out) {
        Ok(built) => {
            let detail = built.artifact.display().to_string();
            out.summary(&built.record, true, &detail);
            std::mem::forget(built.workspace);
            0
        }
        Err(Stopped(status)) => status,
    }
}

/// The compiled program and what the receipt reports of it.
pub struct CompiledProgram {
    pub compiled: Compiled,
    pub functions: Vec<Arc<Function>>,
    pub tests: Vec<(String, String, u32)>,
}

/// MIR and LLVM for an accepted program.
pub fn compile(workspace: &Workspace, purpose: Purpose, flags: &BuildFlags) -> Result<CompiledProgram, String> {
    let db = workspace.db();
    let mir = cairn_mir::program_mir(db);
    if let Some((name, error)) = mir.errors.first() {
        return Err(format!("internal error (E-INTERNAL): {name} could not be lowered: {}", error.0));
    }
    for function in &mir.functions {
        cairn_mir::verify::verify(function).map_err(|fault| format!("internal error (E-INTERNAL): {fault}"))?;
    }
    let items = items_by_symbol(workspace);
    let (functions, entry, tests) = match purpose {
        Purpose::Executable => {
            let mains: Vec<&Arc<Function>> = mir.functions.iter().filter(|f| f.kind == FnKind::Main).collect();
            let [main] = mains[..] else {
                return Err("An executable needs exactly one fn main() -> i32 with no arguments.".into());
            };
            if main.params != 0 || main.ret != cairn_mir::MTy::Int(cairn_mir::IntTy::I32) {
                return Err("An executable needs exactly one fn main() -> i32 with no arguments.".into());
            }
            let functions: Vec<Arc<Function>> =
                mir.functions.iter().filter(|f| f.kind != FnKind::Test).cloned().collect();
            (functions, Entry::Main(main.symbol.clone()), Vec::new())
        }
        Purpose::Tests => {
            let own: Vec<&Arc<Function>> = mir
                .functions
                .iter()
                .filter(|f| f.kind == FnKind::Test && items.get(&f.symbol).is_some_and(|(_, library)| !library))
                .collect();
            let tests = own
                .iter()
                .map(|f| {
                    let (item, _) = items[&f.symbol];
                    let (file, line) = match workspace.locate(item) {
                        Some((file, start)) => {
                            let state = &workspace.files()[file];
                            (state.name.clone(), state.line_index().line_column(&state.text, start).line)
                        }
                        None => (String::new(), 0),
                    };
                    (f.name.trim_start_matches("test$").to_string(), file, line)
                })
                .collect();
            let symbols = own.iter().map(|f| f.symbol.clone()).collect();
            let functions: Vec<Arc<Function>> =
                mir.functions.iter().filter(|f| f.kind != FnKind::Main).cloned().collect();
            (functions, Entry::Tests(symbols), tests)
        }
    };
    let site = |function: &Function, at: Option<Anchor>| -> Site { site_of(workspace, &items, function, at) };
    let compiled = cairn_codegen::compile(
        &functions,
        &entry,
        &site,
        Options { keep_guards: flags.keep_guards, optimize: true, debug: flags.debug },
    )
    .map_err(|message| format!("internal error (E-INTERNAL): the code generator failed: {message}"))?;
    Ok(CompiledProgram { compiled, functions: mir.functions, tests })
}

/// Every function's item by its symbol, and whether it is the library's.
pub fn items_by_symbol(workspace: &Workspace) -> HashMap<Arc<str>, (Item, bool)> {
    let db = workspace.db();
    let mut map = HashMap::new();
    for file in workspace.files() {
        for entry in &file.items {
            if matches!(entry.key.kind, ItemKind::Fn | ItemKind::Test) {
                map.insert(cairn_mir::lower_symbol(db, entry.item), (entry.item, file.library));
            }
        }
    }
    map
}

/// Where a guard sits: its file, line and column (none for library code).
pub fn site_of(
    workspace: &Workspace,
    items: &HashMap<Arc<str>, (Item, bool)>,
    function: &Function,
    at: Option<Anchor>,
) -> Site {
    let Some(&(item, library)) = items.get(&function.symbol) else { return Site { file: None, line: 0, column: 0 } };
    if library {
        return Site { file: None, line: 0, column: 0 };
    }
    let anchor = at.unwrap_or(Anchor::Item);
    let range = workspace.anchor_range(item, anchor);
    match workspace.position(item, range) {
        Some((file, _, position)) => {
            Site { file: Some(workspace.files()[file].name.clone()), line: position.line, column: position.column }
        }
        None => Site { file: None, line: 0, column: 0 },
    }
}

/// The checker's receipt of every function of the program.
fn frontend(workspace: &Workspace, functions: &[Arc<Function>]) -> Value {
    let facts = workspace.function_facts();
    let mut out = BTreeMap::new();
    for fact in facts.iter().filter(|f| !f.library) {
        let name =
            if fact.module.is_empty() { fact.name.to_string() } else { format!("{}.{}", fact.module, fact.name) };
        let name = if fact.kind == ItemKind::Test { format!("test${name}") } else { name };
        let mut syntactic = Map::new();
        for (kind, count) in &fact.sites {
            syntactic.insert((*kind).to_string(), json!(count));
        }
        let mut discharged: BTreeMap<&str, u32> = BTreeMap::new();
        if let Some(function) = functions.iter().find(|f| *f.name == *name) {
            for guard in function.guards().filter(|g| g.elided) {
                *discharged.entry(guard.kind.name()).or_default() += 1;
            }
        }
        let mut entry = Map::new();
        if fact.kind == ItemKind::Test {
            entry.insert("test".into(), json!(true));
        }
        entry.insert(
            "effects".into(),
            json!(fact.row.clone().unwrap_or_default().iter().map(|e| e.to_string()).collect::<Vec<_>>()),
        );
        entry.insert("syntactic_check_sites".into(), Value::Object(syntactic));
        entry.insert("discharged_check_sites".into(), json!(discharged));
        out.insert(name, Value::Object(entry));
    }
    json!({"compiler": cairn_agent::profile(), "functions": out})
}

fn project(program: &cairn_vfs::Program) -> Value {
    let sources: Vec<Value> = program
        .files
        .iter()
        .map(|f| json!({"path": f.name, "sha256": cairn_agent::canonical::sha256_hex(f.text.as_bytes())}))
        .collect();
    json!({
        "name": program.name,
        "sources": sources,
        "source_sha256": crate::check::sources_of(program).sha256(),
    })
}

/// The artifact's name: the project's, with anything but letters, digits, `_` and `-` made `_`.
fn artifact_name(project: &str) -> String {
    let name: String = project
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    if name.is_empty() { "program".into() } else { name }
}

/// A new directory `<parent>/<name>-<suffix>` that did not exist before.
fn fresh_directory(parent: &Path, name: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(parent).map_err(|e| format!("Cannot create {}: {e}.", parent.display()))?;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    for attempt in 0..1000u128 {
        let suffix =
            (seed ^ (u128::from(std::process::id()) << 32)).wrapping_add(attempt * 0x9e37_79b9) % 36u128.pow(8);
        let dir = parent.join(format!("{name}-{}", base36(suffix)));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("Cannot create {}: {e}.", dir.display())),
        }
    }
    Err(format!("No fresh build directory could be made under {}.", parent.display()))
}

fn base36(mut n: u128) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    for _ in 0..8 {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}
