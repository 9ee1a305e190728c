//! `cairn validate` (tools.md §3.14): the command around `cairn_agent::validate` — loading the
//! program, the policy and the regressions file, the native [`NativeRunner`] that builds a
//! harness and runs each block in its own process, printing the `cairn.validation/1` record and
//! keeping a failing case. docs/tools/validate.md says what is generated and compared.
//!
//! Exit: 0 passed; 1 failed or rejected; 2 unknown.

use std::process::Stdio;
use std::time::Duration;

use cairn_agent::validate::{Outcome, Reading, Regressions, Runner, parse_policy, rejected, validate};
use cairn_hir::SourceText;

use crate::build::{BuildFlags, Purpose, build_program};
pub use crate::cli::ValidateFlags;
use crate::output::{Output, to_map};
use crate::process::{OUTPUT_CAP, wait_captured_watching};
use crate::runner_wire::{Answer, Done, Ended, File, Op, Request, Tally};
use crate::sandbox::{Limits, Workspace};

pub fn run(flags: &ValidateFlags, out: Output) -> u8 {
    let validation = validate_program(flags);
    let detail = format!("{} against {}", validation.record.implementation, validation.record.reference);
    out.summary(&to_map(&validation.record), validation.code == 0, &detail);
    validation.code
}

pub(crate) fn validate_program(flags: &ValidateFlags) -> cairn_agent::validate::Validation {
    let asked = match &flags.policy {
        None => None,
        Some(path) => match std::fs::read(path).map_err(|e| e.to_string()).and_then(|b| parse_policy(&b)) {
            Ok(policy) => Some(policy),
            Err(reason) => return rejected(&flags.symbol, format!("The policy {}: {reason}", path.display())),
        },
    };
    let program = match cairn_vfs::load(&flags.path) {
        Ok(program) => program,
        Err(error) => return rejected(&flags.symbol, error.message),
    };
    let mut workspace = crate::check::load_workspace(&program);
    if let Some(refusal) = workspace.check().refusal {
        return rejected(
            &flags.symbol,
            format!("The program is refused: {}: {}", refusal.first.code, refusal.first.message),
        );
    }
    // The reference names the regressions file; read it before validating.
    let reference = reference_of(&workspace, &flags.symbol);
    let path = flags
        .regressions
        .clone()
        .unwrap_or_else(|| program.root.join("regressions").join(cairn_agent::validate::regressions_name(&reference)));
    let file = match std::fs::read(&path) {
        Ok(bytes) => match Regressions::parse(&bytes) {
            Ok(file) if file.reference == reference || reference.is_empty() => Some(file),
            Ok(file) => {
                let message = format!("{} keeps the cases of {}, not {reference}.", path.display(), file.reference);
                return rejected(&flags.symbol, message);
            }
            Err(reason) => return rejected(&flags.symbol, format!("{}: {reason}.", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return rejected(&flags.symbol, format!("Cannot read {}: {e}.", path.display())),
    };
    // The regressions file pins the policy its cases were found under (tools.md §3.14).
    let policy = match (&file, asked) {
        (Some(file), Some(asked)) if asked != file.policy => {
            return rejected(
                &flags.symbol,
                format!(
                    "{} pins another policy than --policy gives: validate without --policy (the pinned one is used), or keep the cases elsewhere (--regressions).",
                    path.display()
                ),
            );
        }
        (Some(file), _) => file.policy.clone(),
        (None, asked) => asked.unwrap_or_default(),
    };
    let kept = file.as_ref().map(|f| f.of(&flags.symbol)).unwrap_or_default();
    let device = crate::device::DeviceFlags { target: flags.device_target.clone(), emulate: flags.emulate };
    let runner = NativeRunner::new(Some(program.clone()), NativeRunner::parallel()).emulating(device);
    let mut validation = validate(&workspace, &flags.symbol, &policy, &kept, &runner);
    if let Some(case) = validation.keep.take() {
        let mut file = file.unwrap_or_else(|| Regressions::new(&reference, &policy));
        file.keep(&flags.symbol, case);
        let written =
            path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, file.text()));
        if let Some(finite) = validation.record.finite.as_mut() {
            match written {
                Ok(()) => finite.kept = Some(path.display().to_string()),
                Err(e) => {
                    finite.reason = Some(format!("The failing case could not be kept in {}: {e}.", path.display()))
                }
            }
        }
    }
    if let Some(dir) = &flags.history
        && validation.record.status != "rejected"
    {
        match cairn_agent::validate::history_record(&workspace, &validation, &policy) {
            Some(record) => match cairn_vfs::history::append(dir, &serde_json::to_value(&record).unwrap_or_default()) {
                Ok(kept) => validation.record.history = kept.get("id").and_then(|v| v.as_str()).map(str::to_string),
                Err(e) => {
                    validation.record.reason =
                        Some(format!("The history in {} could not be written: {e}.", dir.display()))
                }
            },
            None => validation.record.reason = Some("The validation could not be recorded in the history.".into()),
        }
    }
    std::mem::forget(workspace);
    validation
}

/// The policy validations of `reference`'s implementations run under in the program at `path`:
/// the one its regressions file pins, else the default — as JSON (what a promotion's revision
/// digests).
pub(crate) fn pinned_policy(path: &std::path::Path, reference: &str) -> serde_json::Value {
    let root = cairn_vfs::load(path).map(|p| p.root).unwrap_or_default();
    let file = root.join("regressions").join(cairn_agent::validate::regressions_name(reference));
    let policy = std::fs::read(file)
        .ok()
        .and_then(|bytes| Regressions::parse(&bytes).ok())
        .map(|file| file.policy)
        .unwrap_or_default();
    serde_json::to_value(policy).unwrap_or_default()
}

/// The full name of the reference `symbol` implements, or "" (the validation says why).
fn reference_of(workspace: &cairn_hir::Workspace, symbol: &str) -> String {
    let name = symbol.split('[').next().unwrap_or_default().trim();
    let db = workspace.db();
    let scope = cairn_hir::Resolver::new(db);
    workspace
        .files()
        .iter()
        .filter(|f| !f.library)
        .flat_map(|f| f.items.iter())
        .find(|i| i.key.kind == cairn_hir::ItemKind::Fn && *scope.full_name(i.item) == *name)
        .and_then(|i| cairn_hir::implementations::implementation_reference(db, i.item))
        .map(|r| scope.full_name(r).to_string())
        .unwrap_or_default()
}

/// Builds with this toolchain into a scratch directory and runs each block confined
/// ([`crate::sandbox`]): the code is an agent's, so it runs in a disposable workspace of its own,
/// under bubblewrap when it is installed, with limits.
pub struct NativeRunner {
    /// The program whose build choices (libraries, target) the harness keeps; without one (an
    /// MCP session's program), the defaults of a one-file program.
    pub base: Option<cairn_vfs::Program>,
    /// How many blocks run at once (1 for timing: runs must not share the cores).
    pub workers: usize,
    /// What the confined runs so far amounted to (the record's `confinement`).
    tally: std::sync::Mutex<Tally>,
    /// `--device-target` and `--emulate`, for every build.
    device: crate::device::DeviceFlags,
    /// What the builds since the last [`Runner::emulation`] emulated.
    emulated: std::sync::Mutex<Option<crate::device::Emulation>>,
}

impl NativeRunner {
    /// A runner keeping `base`'s build choices, running `workers` blocks at once.
    pub fn new(base: Option<cairn_vfs::Program>, workers: usize) -> NativeRunner {
        NativeRunner {
            base,
            workers,
            tally: std::sync::Mutex::new(Tally::default()),
            device: Default::default(),
            emulated: std::sync::Mutex::new(None),
        }
    }

    /// The same runner building device work with `device` (`--emulate` runs it on host threads).
    pub fn emulating(mut self, device: crate::device::DeviceFlags) -> NativeRunner {
        self.device = device;
        self
    }

    /// One worker per core, at most 8.
    pub fn parallel() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8)
    }

    /// Builds `files` as a test runner in a scratch directory (device work as `device` says): the
    /// runner and its tests. The caller removes the scratch directory.
    fn build(&self, files: &[SourceText]) -> Result<(std::path::PathBuf, Vec<(String, String, u32)>), String> {
        let program = self.program(files);
        // The harness must check: a refusal here is this tool's fault, said as such.
        let mut workspace = crate::check::load_workspace(&program);
        if let Some(refusal) = workspace.check().refusal {
            return Err(format!(
                "internal error (E-INTERNAL): the generated harness was refused: {}: {}",
                refusal.first.code, refusal.first.message
            ));
        }
        // Device work builds only emulated here: without `--emulate` the reason is the build's
        // own refusal (E-TARGET, …) or this one, and the validation decides nothing.
        let verdict = crate::device::judge(&workspace, program.build.device_target.as_deref(), &self.device, true)
            .map_err(|d| format!("The program does device work and could not be built: {}: {}", d.code, d.message))?;
        if let Some(target) = &verdict.gpu {
            return Err(format!(
                "The program does device work and could not be built: E-UNSUPPORTED: validation and timing run device work on host threads only (a case's run on a GPU is not built): pass --emulate to run it as an emulation of {target}."
            ));
        }
        if let Some(emulation) = verdict.emulation
            && let Ok(mut emulated) = self.emulated.lock()
        {
            *emulated = Some(emulation);
        }
        // Dropped, not forgotten: an MCP server runs many validations.
        drop(workspace);
        let scratch = scratch_root();
        std::fs::create_dir_all(&scratch).map_err(|e| format!("Cannot make {}: {e}.", scratch.display()))?;
        let flags = BuildFlags {
            keep_guards: false,
            out: Some(scratch),
            debug: false,
            timeout: 600,
            device: self.device.clone(),
        };
        let output = Output::choose(Some(crate::output::FormatChoice::Json));
        let built = build_program(program, Purpose::Tests, &flags, output)
            .map_err(|_| "internal error (E-INTERNAL): the generated harness did not build".to_string())?;
        let (artifact, tests) = (built.artifact.clone(), built.tests.clone());
        drop(built);
        Ok((artifact, tests))
    }

    /// The program to build: the base's, with the files' texts; or the files alone.
    fn program(&self, files: &[SourceText]) -> cairn_vfs::Program {
        if let Some(base) = &self.base {
            let mut program = base.clone();
            for file in program.files.iter_mut() {
                if let Some(text) = files.iter().find(|f| f.name == file.name) {
                    file.text = text.text.clone();
                }
            }
            return program;
        }
        let root = std::env::temp_dir();
        cairn_vfs::Program {
            name: "validate".into(),
            root: root.clone(),
            manifest_path: None,
            build: cairn_vfs::BuildConfig::default(),
            tests: Vec::new(),
            dependencies: Vec::new(),
            foreign: Vec::new(),
            files: files
                .iter()
                .map(|f| cairn_vfs::SourceFile {
                    name: f.name.clone(),
                    path: root.join(&f.name),
                    text: f.text.clone(),
                    had_bom: false,
                    project: "validate".into(),
                })
                .collect(),
        }
    }
}

impl Runner for NativeRunner {
    fn run(
        &self,
        files: &[SourceText],
        blocks: &[String],
        seconds: u64,
    ) -> Result<Vec<Result<Outcome, String>>, String> {
        let (artifact, tests) = self.build(files)?;
        let outcomes = std::sync::Mutex::new(vec![None; blocks.len()]);
        let next = std::sync::Mutex::new(0usize);
        let workers = self.workers.clamp(1, 8);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let position = {
                            let mut next = next.lock().expect("the job counter");
                            *next += 1;
                            *next - 1
                        };
                        let Some(name) = blocks.get(position) else { break };
                        let outcome = match block_index(&tests, name) {
                            Some(index) => self.run_block(&artifact, index, position, seconds),
                            None => Err(format!("internal error (E-INTERNAL): no block {name}")),
                        };
                        outcomes.lock().expect("the outcomes")[position] = Some(outcome);
                    }
                });
            }
        });
        let _ = std::fs::remove_dir_all(artifact.parent().unwrap_or(&artifact));
        Ok(outcomes.into_inner().unwrap_or_default().into_iter().map(|o| o.unwrap_or(Err("not run".into()))).collect())
    }

    fn profile(
        &self,
        files: &[SourceText],
        blocks: &[String],
        seconds: u64,
    ) -> Result<Vec<Result<Reading, String>>, String> {
        let valgrind = crate::process::on_path("valgrind")
            .ok_or("valgrind is not installed, so cachegrind cannot profile here (apt-get install valgrind)")?;
        let (artifact, tests) = self.build(files)?;
        // One at a time: a profiler's run is slow, and its counts do not need the cores.
        let readings = blocks
            .iter()
            .enumerate()
            .map(|(position, name)| match block_index(&tests, name) {
                Some(index) => self.profile_block(&valgrind, &artifact, index, position, seconds),
                None => Err(format!("internal error (E-INTERNAL): no block {name}")),
            })
            .collect();
        let _ = std::fs::remove_dir_all(artifact.parent().unwrap_or(&artifact));
        Ok(readings)
    }

    fn explain(
        &self,
        files: &[SourceText],
        symbols: &[String],
    ) -> Result<serde_json::Map<String, serde_json::Value>, String> {
        NativeRunner::explain_files(files, symbols)
    }

    fn confinement(&self) -> Option<serde_json::Value> {
        // Taken: each validation accounts for its own runs.
        std::mem::take(&mut *self.tally.lock().ok()?).record()
    }

    fn emulating(&self, target: &str) -> Result<Box<dyn Runner + '_>, String> {
        let device = crate::device::DeviceFlags { target: Some(target.to_string()), emulate: true };
        Ok(Box::new(NativeRunner::new(self.base.clone(), self.workers).emulating(device)))
    }

    fn emulation(&self) -> Option<crate::device::Emulation> {
        // Taken, like the tally: each validation accounts for its own builds.
        self.emulated.lock().ok()?.take()
    }
}

impl NativeRunner {
    /// The cost map of `files` (the edit host's `explain` request).
    fn explain_files(
        files: &[SourceText],
        symbols: &[String],
    ) -> Result<serde_json::Map<String, serde_json::Value>, String> {
        let mut workspace = cairn_hir::Workspace::new(files.to_vec());
        if let Some(refusal) = workspace.check().refusal {
            return Err(format!("the program is refused: {}: {}", refusal.first.code, refusal.first.message));
        }
        let record = crate::explain::explain_program(&workspace, symbols)?;
        Ok(to_map(&record))
    }
}

impl NativeRunner {
    /// Runs block `index` of the runner `artifact` in its own process, confined to a disposable
    /// workspace: its ending and what it printed.
    fn run_block(
        &self,
        artifact: &std::path::Path,
        index: usize,
        position: usize,
        seconds: u64,
    ) -> Result<Outcome, String> {
        let run = self.confined(artifact, &format!("run-{position}"), index, seconds, |_| Vec::new(), |_| ())?;
        if run.captured.watched {
            return Err(format!("a call filled its workspace past {} MiB", run.limits.disk_mib));
        }
        finish_block(run.captured, seconds, run.elapsed)
    }

    /// Runs block `index` of `artifact` in its own process, confined to a disposable workspace
    /// `runs/<name>` (run by the system tool `wrapper` names, given the workspace, when it names
    /// one), within `seconds`, and tallies it; `read` sees the workspace before it is deleted, and
    /// removes what it took so the run's changes are the program's own.
    fn confined<T>(
        &self,
        artifact: &std::path::Path,
        name: &str,
        index: usize,
        seconds: u64,
        wrapper: impl FnOnce(&Workspace) -> Vec<String>,
        read: impl FnOnce(&Workspace) -> T,
    ) -> Result<Confined<T>, String> {
        let parent = artifact.parent().unwrap_or(artifact).join("runs");
        let workspace =
            Workspace::empty(&parent, name).map_err(|e| format!("could not make a workspace for a run: {e}"))?;
        let limits = Limits::for_run(seconds, 1024);
        let wrapper = wrapper(&workspace);
        let (mut command, sandboxed) = workspace.wrapped(&wrapper, artifact, &[index.to_string()], &limits);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let started = std::time::Instant::now();
        let child = command.spawn().map_err(|e| format!("could not start a run: {e}"))?;
        let disk_cap = limits.disk_mib << 20;
        let captured = wait_captured_watching(child, Duration::from_secs(seconds), OUTPUT_CAP, &|| {
            workspace.disk_bytes() > disk_cap
        });
        let elapsed = started.elapsed();
        let read = read(&workspace);
        let changes = workspace.finish();
        if let Ok(mut tally) = self.tally.lock() {
            tally.runs += 1;
            tally.sandboxed += u64::from(sandboxed);
            if !changes.is_empty() {
                tally.changed_runs += 1;
                for path in changes.added.iter().chain(&changes.modified).chain(&changes.removed) {
                    tally.note_changed(path);
                }
            }
            tally.limits = serde_json::to_value(limits).ok();
            tally.confinement = Some(crate::sandbox::report(sandboxed, limits, Default::default(), None).confinement);
        }
        Ok(Confined { captured, elapsed, limits, read })
    }
}

/// What a confined run left: how it ended, its wall time, its limits, and what was read.
struct Confined<T> {
    captured: crate::process::Captured,
    elapsed: Duration,
    limits: Limits,
    read: T,
}

/// Where block `name` is among a runner's tests (by its full or its bare name).
fn block_index(tests: &[(String, String, u32)], name: &str) -> Option<usize> {
    tests.iter().position(|(n, _, _)| n == name || n.rsplit('.').next() == Some(name))
}

impl NativeRunner {
    /// Runs block `index` of the runner `artifact` once under valgrind's cachegrind (with its
    /// cache simulation), confined like any run: the summary of its event counts.
    fn profile_block(
        &self,
        valgrind: &std::path::Path,
        artifact: &std::path::Path,
        index: usize,
        position: usize,
        seconds: u64,
    ) -> Result<Reading, String> {
        let out = |workspace: &Workspace| workspace.dir().join("cairn.cachegrind");
        let wrapper = |workspace: &Workspace| {
            vec![
                valgrind.display().to_string(),
                "--tool=cachegrind".into(),
                "--cache-sim=yes".into(),
                "-q".into(),
                format!("--cachegrind-out-file={}", out(workspace).display()),
            ]
        };
        // The profiler's reading is taken out of the workspace before its changes are judged.
        let read = |workspace: &Workspace| {
            let text = std::fs::read_to_string(out(workspace)).unwrap_or_default();
            let _ = std::fs::remove_file(out(workspace));
            text
        };
        let run = self.confined(artifact, &format!("profile-{position}"), index, seconds, wrapper, read)?;
        let (captured, text) = (run.captured, run.read);
        if captured.timed_out {
            return Err(format!("a profiled call ran past {seconds} s"));
        }
        if !captured.status.is_some_and(|s| s.success()) {
            let why = String::from_utf8_lossy(&captured.stderr)
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            return Err(format!("the profiled call did not return: {why}"));
        }
        cachegrind_summary(&text).ok_or_else(|| "cachegrind wrote no summary".to_string())
    }
}

/// The totals of a cachegrind output file: its `events:` names paired with its `summary:` counts.
fn cachegrind_summary(text: &str) -> Option<Reading> {
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).map(str::split_whitespace);
    let events = field("events:")?;
    let counts = field("summary:")?;
    let counts = events.zip(counts).map(|(e, n)| Some((e.to_string(), n.parse().ok()?))).collect::<Option<_>>()?;
    Some(Reading { tool: "cachegrind".into(), counts })
}

/// A block's outcome from how its process ended.
fn finish_block(captured: crate::process::Captured, seconds: u64, elapsed: Duration) -> Result<Outcome, String> {
    if captured.timed_out {
        return Err(format!("a call ran past {seconds} s"));
    }
    if captured.capped {
        return Err("a call wrote more than the output cap".into());
    }
    let status = captured.status.ok_or("a case could not be waited for")?;
    let stdout = String::from_utf8_lossy(&captured.stdout).lines().map(str::to_string).collect();
    let mut outcome = Outcome::new(status.success(), stdout, &String::from_utf8_lossy(&captured.stderr));
    outcome.elapsed_ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    Ok(outcome)
}

/// `cairn-full harness-runner` (`runner_wire.rs`): answers one request of a server's runner with
/// a [`NativeRunner`] of this process — the request read whole from standard input, the answer
/// written to standard output. Exit 0 when it answered (the answer says whether the build did),
/// 2 when the request could not be read.
pub fn serve_harness() -> u8 {
    use std::io::{Read, Write};
    // What `cairn` set for the server came with the `exec`; builds and timed runs are not a
    // server.
    crate::lean::restore_in_harness();
    // Descriptor 1 is the wire: a record a build prints on failure goes to standard error.
    let Ok((mut wire_in, wire_out)) = cairn_vfs::stdio::reserve_protocol_descriptors() else {
        eprintln!("error: could not take the standard descriptors for the harness answer");
        return 2;
    };
    let mut text = String::new();
    let request = match wire_in.read_to_string(&mut text).map_err(|e| e.to_string()).and_then(|_| {
        serde_json::from_str::<Request>(&text).map_err(|e| format!("the request is not a harness request: {e}"))
    }) {
        Ok(request) => request,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    let mut runner = NativeRunner::new(None, NativeRunner::parallel());
    if let Some(target) = request.emulate {
        runner = runner.emulating(crate::device::DeviceFlags { target: Some(target), emulate: true });
    }
    let files = File::texts(request.files);
    let done = match request.op {
        Op::Run => runner
            .run(&files, &request.blocks, request.seconds)
            .map(|ended| Done::Run(ended.into_iter().map(|r| r.map(Ended::of)).collect())),
        Op::Profile => runner.profile(&files, &request.blocks, request.seconds).map(Done::Profile),
        Op::Explain => runner.explain(&files, &request.blocks).map(Done::Explain),
    };
    let tally = std::mem::take(&mut *runner.tally.lock().unwrap_or_else(|e| e.into_inner()));
    let answer = Answer { done, tally: Some(tally), emulation: runner.emulation() };
    let _ = std::fs::remove_dir(scratch_root());
    let mut wire_out = std::io::BufWriter::new(wire_out);
    let written = serde_json::to_writer(&mut wire_out, &answer).map_err(std::io::Error::other);
    match written.and_then(|()| wire_out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: could not write the harness answer: {e}");
            2
        }
    }
}

/// The directory this process builds its harnesses in (each build in a directory of its own
/// inside, removed after its runs; `serve_harness` removes this one too, being one process per
/// request).
fn scratch_root() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("cairn-validate-{}", std::process::id()))
}
