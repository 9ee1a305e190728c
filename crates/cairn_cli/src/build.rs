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
use serde::Serialize;
use serde_json::{Map, Value};

use crate::check::load_workspace;
use crate::output::{Named, Output, to_map};

/// The schema of the build record and its receipt.
const SCHEMA: &str = "cairn.build/1";

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
    /// `--device-target` and `--emulate`.
    pub device: crate::device::DeviceFlags,
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
                let message = format!("The compile did not finish within {seconds} s (--timeout); it was stopped.");
                out.json(&to_map(&TimedOut { schema: SCHEMA, status: "unknown", message: &message }));
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
    let program = cairn_vfs::load(path).map_err(|error| {
        out.environment(&error.message);
        Stopped(2)
    })?;
    build_program(program, purpose, flags, out)
}

/// Checks and builds a loaded program (`cairn validate` builds programs it made this way).
pub fn build_program(
    program: cairn_vfs::Program,
    purpose: Purpose,
    flags: &BuildFlags,
    out: Output,
) -> Result<Built, Stopped> {
    let started = Instant::now();
    // Vendored CUDA is device code host threads cannot stand in for (language §41).
    if flags.device.emulate
        && let Some(cuda) = program.foreign.iter().find(|source| source.ends_with(".cu"))
    {
        let diagnostic = cairn_diagnostics::Diagnostic::new(
            "E-EMULATE",
            format!(
                "The manifest's [foreign] source {cuda} is vendored CUDA, which --emulate refuses rather than approximates: build without it to emulate the program's own device code."
            ),
        );
        if let Some(refusal) = cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]) {
            out.refusal(&refusal_record(&refusal), &|_: Option<&str>, _: u32| None);
        }
        return Err(Stopped(1));
    }
    if let Some(message) = unbuilt_manifest_choice(&program) {
        out.environment(&message);
        return Err(Stopped(2));
    }
    let _watchdog = Watchdog::start(flags.timeout, out);
    let mut workspace = load_workspace(&program);
    let outcome = workspace.check();
    if let Some(refusal) = outcome.refusal {
        let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
        out.refusal(&refusal_record(&refusal), &lines);
        return Err(Stopped(1));
    }
    let device = crate::device::judge(&workspace, program.build.device_target.as_deref(), &flags.device, true)
        .map_err(|diagnostic| {
            if let Some(refusal) = cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]) {
                let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
                out.refusal(&refusal_record(&refusal), &lines);
            }
            Stopped(1)
        })?;
    if let Some(target) = &device.gpu {
        // A target LLVM cannot compile is refused before anything is built.
        let refused = crate::ptx::device_arch(target)
            .err()
            .map(|(code, message)| cairn_diagnostics::Diagnostic::new(code, message));
        if let Some(diagnostic) = refused {
            if let Some(refusal) = cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]) {
                let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
                out.refusal(&refusal_record(&refusal), &lines);
            }
            return Err(Stopped(1));
        }
    }
    let compiled = compile_for(&workspace, purpose, flags, device.gpu.as_deref()).map_err(|message| {
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
    // The project's own libraries, then those of the linked library modules (`std.zlib` → `z`).
    let mut libraries = program.build.libraries.clone();
    for (module, library) in cairn_hir::library::MODULE_LIBRARIES {
        let linked = workspace
            .files()
            .iter()
            .any(|f| f.library && cairn_hir::library::module(module).is_some_and(|m| m.file == f.name));
        if linked && !libraries.iter().any(|l| l == library) {
            libraries.push(library.to_string());
        }
    }
    let linked =
        cairn_codegen::link_with(&compiled.compiled.object, &artifact, &directory, &libraries, device.gpu.is_some());
    let mut command = "cairn-rs llvm-19 x86-64 -O2 + cc".to_string();
    if flags.keep_guards {
        command.push_str(" --keep-guards");
    }
    if flags.debug {
        command.push_str(" --debug");
    }
    if let Some(emulation) = &device.emulation {
        command.push_str(&format!(" --emulate --device-target {}", emulation.judged_against));
    }
    if let Some(target) = &device.gpu {
        command.push_str(&format!(" + nvptx --device-target {target}"));
    }
    let built = BuildHead {
        schema: SCHEMA,
        status: if linked.is_ok() { "native-built" } else { "native-build-failed" },
        formal_status: "not-verified",
        kind: "exe",
        target: "hosted",
        command,
        artifact: artifact.display().to_string(),
        directory: directory.display().to_string(),
        device_target: device.target,
        emulation: device.emulation,
    };
    let receipt_path = directory.join("receipt.json");
    let message = linked.as_ref().err().map(String::as_str);
    let record = to_map(&BuildRecord { built: &built, receipt: receipt_path.display().to_string(), message });
    let artifact_sha256 = match &linked {
        Ok(()) => std::fs::read(&artifact).ok().map(|bytes| cairn_agent::canonical::sha256_hex(&bytes)),
        Err(_) => None,
    };
    let receipt = Receipt {
        built: &built,
        message,
        frontend: frontend(&workspace, &compiled.functions, &compiled.hoisted),
        project: project(&program),
        guards: Guards {
            emitted: compiled.compiled.guards_emitted,
            elided: compiled.compiled.guards_elided,
            kept: flags.keep_guards,
        },
        compiler_version: cairn_agent::profile(),
        device_code: compiled.ptx.as_ref().map(|ptx| {
            // The PTX beside the program, for reading (`cairn emit --ptx` makes the same text).
            let path = directory.join("kernels.ptx");
            let _ = std::fs::write(&path, &ptx.text);
            DeviceCode::of(ptx, device.gpu.as_deref().unwrap_or(""), &path)
        }),
        artifact_sha256,
        elapsed_seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    };
    let text = serde_json::to_string_pretty(&Value::Object(to_map(&receipt))).unwrap_or_default() + "\n";
    let _ = std::fs::write(&receipt_path, text);
    if linked.is_err() {
        out.json(&record);
        return Err(Stopped(2));
    }
    Ok(Built { program, workspace, directory, artifact, tests: compiled.tests, record })
}

/// What the manifest asks for that this build of cairn reads and validates but does not build
/// (tier 3): a freestanding board and vendored C++/CUDA sources. Building for the host instead
/// would hand back an artifact for a machine the manifest did not name.
fn unbuilt_manifest_choice(program: &cairn_vfs::Program) -> Option<String> {
    if program.build.target != "hosted" {
        return Some(format!(
            "The manifest's `target = \"{}\"` is a freestanding board (tier 3), which this version of cairn does not build: remove `target` (or write \"hosted\") to build for this machine.",
            program.build.target
        ));
    }
    let first = program.foreign.first()?;
    Some(format!(
        "The manifest's [foreign] sources (`{first}`) are C++/CUDA implementations (tier 3), which this version of cairn does not build: remove the [foreign] table."
    ))
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
    /// A build for a GPU: the device module the host module launches.
    pub ptx: Option<cairn_codegen::Ptx>,
    pub functions: Vec<Arc<Function>>,
    pub tests: Vec<(String, String, u32)>,
    /// The guards a build's rewrite left out of a loop's copy on a check before the loop
    /// (`Guard::hoisted`): the function's name, the guard's kind and the expression it guards.
    pub hoisted: Vec<GuardSite>,
}

/// MIR and LLVM for an accepted program.
///
/// For a GPU when `gpu` names the device target: the device regions' PTX is made from the same
/// functions and the host module launches it (`cairn_codegen::compile_with`).
pub fn compile_for(
    workspace: &Workspace,
    purpose: Purpose,
    flags: &BuildFlags,
    gpu: Option<&str>,
) -> Result<CompiledProgram, String> {
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
                            (state.name.clone(), state.line_index().line_column(&state.text(), start).line)
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
    // A plan's `fuse` joins adjacent regions (language §26) and small checked `if`/`else`s are
    // speculated; `--keep-guards` compiles the program as lowered.
    let mut functions = functions;
    if !flags.keep_guards {
        cairn_mir::rewrite_for_build(&mut functions);
        for function in &functions {
            cairn_mir::verify::verify(function).map_err(|fault| format!("internal error (E-INTERNAL): {fault}"))?;
        }
    }
    let hoisted = functions.iter().flat_map(|f| f.guards().filter(|g| g.hoisted).map(|g| guard_site(f, g))).collect();
    let site = |function: &Function, at: Option<Anchor>| -> Site { site_of(workspace, &items, function, at) };
    let ptx = match gpu {
        Some(target) => Some(crate::ptx::device_ptx(&functions, Some(target), &site, flags.keep_guards).map_err(
            |error| match error {
                crate::ptx::PtxError::Refused(code, message) => format!("{code}: {message}"),
                crate::ptx::PtxError::Internal(message) => {
                    format!("internal error (E-INTERNAL): the device code generator failed: {message}")
                }
            },
        )?),
        None => None,
    };
    let compiled = cairn_codegen::compile_with(
        &functions,
        &entry,
        &site,
        Options {
            keep_guards: flags.keep_guards,
            optimize: true,
            debug: flags.debug,
            keep_functions: false,
            remarks: false,
        },
        ptx.as_ref(),
    )
    .map_err(|message| format!("internal error (E-INTERNAL): the code generator failed: {message}"))?;
    Ok(CompiledProgram { compiled, ptx, functions: mir.functions, tests, hoisted })
}

/// Every function's item by its symbol, and whether it is the library's.
pub fn items_by_symbol(workspace: &Workspace) -> HashMap<Arc<str>, (Item, bool)> {
    let db = workspace.db();
    let mut map = HashMap::new();
    for file in workspace.files() {
        for entry in file.items.iter().chain(&file.members) {
            if matches!(entry.key.kind, ItemKind::Fn | ItemKind::Test | ItemKind::Method) {
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
    // An instance (`cairn.m.f[u64]`) sits where its template is written, and a closure
    // (`cairn.main$closure5`) in the function that wrote it.
    let template = function.symbol.split(['[', '$']).next().unwrap_or(&function.symbol);
    let Some(&(item, library)) = items.get(template) else { return Site { file: None, line: 0, column: 0 } };
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

/// The record `cairn build` prints (schema `cairn.build/1`).
#[derive(Serialize)]
struct BuildRecord<'a> {
    #[serde(flatten)]
    built: &'a BuildHead,
    /// The path of `receipt.json`.
    receipt: String,
    /// Why the link failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

/// `receipt.json`: the printed record without `receipt`, then what is kept only here.
#[derive(Serialize)]
struct Receipt<'a> {
    #[serde(flatten)]
    built: &'a BuildHead,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    frontend: Frontend,
    project: Project<'a>,
    guards: Guards,
    compiler_version: String,
    /// A build for a GPU: the device code the program carries.
    #[serde(skip_serializing_if = "Option::is_none")]
    device_code: Option<DeviceCode>,
    /// Only for a linked artifact that could be read back.
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact_sha256: Option<String>,
    elapsed_seconds: f64,
}

/// The receipt's account of a GPU build's device code: how it was made, where its PTX was
/// written (`kernels.ptx` beside the artifact), each kernel with its region and launch shape, and
/// how many device guards report through the trap flag.
#[derive(Serialize)]
struct DeviceCode {
    code: String,
    ptx: String,
    kernels: Vec<KernelRecord>,
    device_guards: usize,
}

#[derive(Serialize)]
struct KernelRecord {
    entry: String,
    region: String,
    block: u32,
    per_lane: u32,
    environment_bytes: u64,
}

impl DeviceCode {
    fn of(ptx: &cairn_codegen::Ptx, target: &str, written: &Path) -> DeviceCode {
        let kernels = ptx
            .kernels
            .iter()
            .zip(&ptx.shapes)
            .map(|((entry, lane), shape)| KernelRecord {
                entry: entry.clone(),
                region: lane.trim_start_matches("cairn.").to_string(),
                block: shape.block,
                per_lane: shape.per_lane,
                environment_bytes: shape.env_bytes,
            })
            .collect();
        DeviceCode {
            code: format!("llvm-19 nvptx {target}, PTX ISA 8.0, launched through libcuda.so.1 (dlopen)"),
            ptx: written.display().to_string(),
            kernels,
            device_guards: ptx.messages.len(),
        }
    }
}

/// The fields the printed record and the receipt open with.
#[derive(Serialize)]
struct BuildHead {
    schema: &'static str,
    status: &'static str,
    formal_status: &'static str,
    kind: &'static str,
    target: &'static str,
    command: String,
    artifact: String,
    directory: String,
    /// The device target device work was judged against.
    #[serde(skip_serializing_if = "Option::is_none")]
    device_target: Option<crate::device::DeviceTarget>,
    /// How device work was emulated on host threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    emulation: Option<crate::device::Emulation>,
}

/// The record of a compile stopped by its `--timeout`.
#[derive(Serialize)]
struct TimedOut<'a> {
    schema: &'static str,
    status: &'static str,
    message: &'a str,
}

/// The checker's receipt of every function of the program, by qualified name.
#[derive(Serialize)]
struct Frontend {
    compiler: String,
    functions: BTreeMap<String, FunctionReceipt>,
    /// The instances of templates compiled (`scale[u32]`), in the order they were reached.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    instances: Vec<String>,
    /// The program's templates nothing instantiates (language §19).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    uninstantiated_templates: Vec<String>,
}

#[derive(Serialize)]
struct FunctionReceipt {
    /// Present (and true) only for a test block.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    test: bool,
    effects: Vec<String>,
    /// Guard sites by kind as the checker counts them, in its order of first occurrence.
    syntactic_check_sites: Named<u32>,
    /// Guard sites the compiler proved unable to fail, by kind (sorted).
    discharged_check_sites: BTreeMap<&'static str, u32>,
    /// Guard sites left out of a loop's copy because one check before the loop covers every
    /// iteration (the loop as written runs when it fails), by kind (sorted); absent when none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    hoisted_check_sites: BTreeMap<&'static str, u32>,
    /// The `unsafe` blocks the body writes (language §45), when it writes any.
    #[serde(skip_serializing_if = "is_zero")]
    unsafe_blocks: u32,
    /// For an implementation (language §27): the reference it implements.
    #[serde(skip_serializing_if = "Option::is_none")]
    implements: Option<String>,
    /// For an implementation: the identity (SHA-256) of each of its instances, by instance name.
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<BTreeMap<String, String>>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The program's name, its files with their digests, and the combined source's digest.
#[derive(Serialize)]
struct Project<'a> {
    name: &'a str,
    sources: Vec<SourceDigest<'a>>,
    source_sha256: String,
}

#[derive(Serialize)]
struct SourceDigest<'a> {
    path: &'a str,
    sha256: String,
}

/// How many guards were emitted and elided, and whether `--keep-guards` kept them all.
#[derive(Serialize)]
struct Guards {
    emitted: usize,
    elided: usize,
    kept: bool,
}

/// The checker's receipt of every function of the program.
fn frontend(workspace: &Workspace, functions: &[Arc<Function>], hoisted: &[GuardSite]) -> Frontend {
    let facts = workspace.function_facts();
    let named: Vec<(&cairn_hir::FunctionFacts, String)> = facts
        .iter()
        .filter(|f| !f.library)
        .map(|fact| {
            let name =
                if fact.module.is_empty() { fact.name.to_string() } else { format!("{}.{}", fact.module, fact.name) };
            (fact, if fact.kind == ItemKind::Test { format!("test${name}") } else { name })
        })
        .collect();
    let names: std::collections::HashSet<&str> = named.iter().map(|(_, name)| name.as_str()).collect();
    let elided = functions.iter().flat_map(|f| f.guards().filter(|g| g.elided).map(|g| guard_site(f, g)));
    let mut discharged = sites_by_function(elided, &names);
    let mut hoisted = sites_by_function(hoisted.iter().cloned(), &names);
    let mut out = BTreeMap::new();
    for (fact, name) in &named {
        let entry = FunctionReceipt {
            test: fact.kind == ItemKind::Test,
            effects: fact.row.iter().flatten().map(|e| e.to_string()).collect(),
            syntactic_check_sites: fact.sites.iter().map(|(kind, count)| ((*kind).to_string(), *count)).collect(),
            discharged_check_sites: discharged.remove(name.as_str()).unwrap_or_default(),
            hoisted_check_sites: hoisted.remove(name.as_str()).unwrap_or_default(),
            unsafe_blocks: fact.unsafe_blocks,
            implements: fact.implements.as_ref().map(|(reference, _)| reference.to_string()),
            identity: fact.implements.as_ref().map(|(_, identities)| identities.iter().cloned().collect()),
        };
        out.insert(name.clone(), entry);
    }
    let instances = functions.iter().filter(|f| f.symbol.contains('[')).map(|f| f.name.to_string()).collect();
    Frontend {
        compiler: cairn_agent::profile(),
        functions: out,
        instances,
        uninstantiated_templates: workspace.uninstantiated_templates(),
    }
}

/// A guard as the receipt counts it: the function that holds it, its kind, the expression it
/// guards.
pub type GuardSite = (Arc<str>, &'static str, Option<cairn_hir::body::ExprId>);

fn guard_site(function: &Function, guard: &cairn_mir::Guard) -> GuardSite {
    (function.name.clone(), guard.kind.name(), guard.at)
}

/// The sites among `guards`, by kind, under the receipt's function each belongs to: the one of its
/// name, or the one whose body made it (its closures and its regions' lane functions,
/// `name$…`; the longest such name). A site held twice (a lane body versioned on whether its
/// block fits, a loop's copies) counts once: sites are told apart by the expression they guard.
fn sites_by_function<'n>(
    guards: impl Iterator<Item = GuardSite>,
    names: &std::collections::HashSet<&'n str>,
) -> HashMap<&'n str, BTreeMap<&'static str, u32>> {
    let mut seen = std::collections::HashSet::new();
    let mut out: HashMap<&'n str, BTreeMap<&'static str, u32>> = HashMap::new();
    for (function, kind, at) in guards {
        let mut owner: &str = &function;
        let owner = loop {
            if let Some(name) = names.get(owner) {
                break Some(*name);
            }
            match owner.rfind('$') {
                Some(cut) => owner = &owner[..cut],
                None => break None,
            }
        };
        let Some(owner) = owner else { continue };
        if at.is_none() || seen.insert((owner, kind, at)) {
            *out.entry(owner).or_default().entry(kind).or_default() += 1;
        }
    }
    out
}

fn project(program: &cairn_vfs::Program) -> Project<'_> {
    let sources = program
        .files
        .iter()
        .map(|f| SourceDigest { path: &f.name, sha256: cairn_agent::canonical::sha256_hex(f.text.as_bytes()) })
        .collect();
    Project { name: &program.name, sources, source_sha256: crate::check::sources_of(program).sha256() }
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
