//! The command line's shape: every command, its arguments and their help, as clap reads them.
//! Every binary parses it (`front.rs`, the `cairn` a user runs; `serve.rs`, `cairn-serve`; and
//! `main.rs`, `cairn-full`), so
//! `cairn --help`, a usage error and `cairn completions` are the same whichever answers; the
//! commands' work lives in their own modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::output::FormatChoice;
use crate::{completions, device, new};

/// What every binary answers when the toolchain itself failed (a panic while answering): a
/// defect of the toolchain, never a verdict on the program; exit 2.
pub(crate) fn toolchain_failed() -> std::process::ExitCode {
    eprintln!(
        "error[E-INTERNAL]: the cairn toolchain failed while answering this command (a defect of the toolchain, not of the program)"
    );
    std::process::ExitCode::from(2)
}

/// CAIRN: a systems language for CPUs and GPUs whose compiler answers agents.
#[derive(Debug, Parser)]
#[command(name = "cairn", bin_name = "cairn", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The device flags of `check`, `build`, `run` and `test` (tools.md §4).
#[derive(Debug, Args)]
pub(crate) struct DeviceArgs {
    /// The GPU target device work is judged against (sm_90, sm_90a, sm_120f, …; default: the
    /// manifest's [build] device_target).
    #[arg(long = "device-target", value_name = "SM")]
    pub(crate) device_target: Option<String>,
    /// Build device work for host threads, judged against the device target (for correctness,
    /// never timing). Without it device work is built for a GPU: PTX launched through the CUDA
    /// driver, loaded when the program runs (not yet run on a real GPU)
    #[arg(long)]
    pub(crate) emulate: bool,
}

impl DeviceArgs {
    pub(crate) fn flags(self) -> device::DeviceFlags {
        device::DeviceFlags { target: self.device_target, emulate: self.emulate }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Decide whether a program is accepted, reporting every independent refusal.
    Check {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Also certify each generic function of the program's own modules at witness types
        /// (every type of its scalar classes that keeps its trait bounds, an opaque type that is
        /// exactly its kind and traits otherwise, the naturals of its families).
        #[arg(long)]
        generics: bool,
        /// Check the packaged standard library itself (PATH is not read); with `--generics`,
        /// certify every library template.
        #[arg(long = "std")]
        std_library: bool,
        /// Check again whenever the manifest or a source changes (Ctrl-C ends it, exit 0); JSON
        /// records are one per line.
        #[arg(long, conflicts_with = "std_library")]
        watch: bool,
        #[command(flatten)]
        device: DeviceArgs,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Compile the program into a fresh build directory, with its receipt.
    Build {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Emit every guard, including those proved unable to fail (a plan's `fuse` then joins no regions).
        #[arg(long)]
        keep_guards: bool,
        /// The parent of the build directory (default: <root>/build).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Debug line information that points at the .cairn source.
        #[arg(long)]
        debug: bool,
        /// The compiler's wall-clock limit in seconds (1..3600).
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
        #[command(flatten)]
        device: DeviceArgs,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Build the program, then run it; arguments after `--` go to the program.
    Run {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Emit every guard, including those proved unable to fail (a plan's `fuse` then joins no regions).
        #[arg(long)]
        keep_guards: bool,
        /// The parent of the build directory (default: <root>/build).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// The program's address-space limit in MiB (64..65536).
        #[arg(long, default_value_t = 1024)]
        memory_mib: u64,
        /// Debug line information that points at the .cairn source.
        #[arg(long)]
        debug: bool,
        /// Seconds the build and the program's run may take together (1..3600); a program
        /// still running then is stopped.
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
        timeout: u64,
        /// Run confined (for code an agent wrote): in a disposable copy of the project, under
        /// bubblewrap when it is installed, with limits on memory, CPU, files, processes and disk;
        /// what it changed is reported, never applied (docs/sandbox.md).
        #[arg(long)]
        sandbox: bool,
        #[command(flatten)]
        device: DeviceArgs,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
        /// Arguments for the program.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Run every test block, each in its own process.
    Test {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Only blocks whose name contains TEXT.
        #[arg(long, default_value = "")]
        filter: String,
        /// Exactly the one block so named (`sums` or `store.sums`).
        #[arg(long, default_value = "")]
        test: String,
        /// Parallel test processes, 1..64; 0 = the number of cores, at most 8.
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Seconds per test, 1..300.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
        /// Each test's address-space limit in MiB (64..65536).
        #[arg(long, default_value_t = 1024)]
        memory_mib: u64,
        /// Emit every guard, including those proved unable to fail (a plan's `fuse` then joins no regions).
        #[arg(long)]
        keep_guards: bool,
        /// Run each block confined (for code an agent wrote): in a disposable copy of the project,
        /// under bubblewrap when it is installed, with limits; what it changed is reported, never
        /// applied (docs/sandbox.md).
        #[arg(long)]
        sandbox: bool,
        #[command(flatten)]
        device: DeviceArgs,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Print the generated code: LLVM IR (default) or MIR.
    Emit {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print the MIR of every function instead of LLVM IR.
        #[arg(long)]
        mir: bool,
        /// LLVM IR before the optimization pipeline.
        #[arg(long)]
        unoptimized: bool,
        /// With debug line information.
        #[arg(long)]
        debug: bool,
        /// Emit every guard, including those proved unable to fail (a plan's `fuse` then joins no regions).
        #[arg(long)]
        keep_guards: bool,
        /// Print the PTX of the program's device lanes for the device target instead (one
        /// `.entry` per device region; nothing launches it yet).
        #[arg(long, conflicts_with_all = ["mir", "unoptimized", "debug"])]
        ptx: bool,
        /// The device target of `--ptx` (default: the manifest's [build] device_target).
        #[arg(long = "device-target", value_name = "SM", requires = "ptx")]
        device_target: Option<String>,
        /// Output mode (the code is text in both modes).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// The program's state for an agent (`cairn.state/1`), or with --since the delta from a saved one.
    State {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print a `cairn.state-delta/1` from this saved state instead (with --symbol, a
        /// `cairn.investigation-delta/1` from a saved investigation).
        #[arg(long, value_name = "STATE.json")]
        since: Option<PathBuf>,
        /// Print `cairn.investigation/1` for this function instead: its performance work, from the
        /// project's candidate history (`.cairn/history`); with --since, its delta from a saved one.
        #[arg(long, value_name = "F")]
        symbol: Option<String>,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// An API reference in Markdown: each declaration, its comment and its inferred effects.
    Doc {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Only these modules (repeatable); with --std, `core` means `std.core`.
        #[arg(long = "module", value_name = "M")]
        modules: Vec<String>,
        /// Document the packaged standard library instead (no project needed).
        #[arg(long = "std")]
        std_library: bool,
        /// Output mode (the document is Markdown in both modes).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Print rule cards offline: a card by name, the card owning a code, the cards a program
    /// selects, or (with nothing asked, or --list) every card with its codes.
    Rules {
        /// A card name, a code such as E-ALIAS, or a program (.cairn file, project directory or
        /// manifest).
        #[arg(value_name = "CODE|CARD|PATH", conflicts_with = "list")]
        asked: Option<String>,
        /// List every card with its codes and selection words (the default when nothing is asked).
        #[arg(long)]
        list: bool,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Suggest callable functions, ranked, from the builtins, the library and the program: by
    /// free words, or by the types of the values held (--takes) and wanted back (--returns).
    Find {
        /// Free words, e.g. `parse integer`.
        words: Vec<String>,
        /// The type of a value held (repeatable, at most 4, any order), e.g. `ro<u8>[n]`.
        #[arg(long = "takes", value_name = "TYPE")]
        takes: Vec<String>,
        /// The type wanted back; an Option or Result holding it ranks after an exact match.
        #[arg(long, value_name = "TYPE")]
        returns: Option<String>,
        /// Keep functions whose row fits this ceiling (`pure`, `effects(pure, alloc)`, `trap, alloc`).
        #[arg(long, value_name = "CEILING")]
        effects: Option<String>,
        /// How many hits to list (1..200).
        #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
        limit: i64,
        /// The program whose own functions are searched too (default: ./cairn.toml if it exists).
        #[arg(long = "in", value_name = "PATH")]
        program: Option<PathBuf>,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Classify every function between two versions (paths or git revisions): identical code,
    /// SMT-equivalent, changed behaviour with a replayed witness, and the semantic-version level
    Diff {
        #[command(flatten)]
        flags: DiffFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// A static cost map of each function from the emitted code: guards by kind and line,
    /// allocations, calls, loops and whether they are vectorized (nothing runs)
    Explain {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Only these functions (repeatable; qualified with their module).
        #[arg(long, value_name = "F")]
        symbol: Vec<String>,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Estimate functions' running times from the checker's work counts priced by a machine
    /// profile (nothing built or run); --calibrate fits a profile to this host
    Predict {
        #[command(flatten)]
        flags: PredictFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Search a function's plans: each candidate checked, the first K timed on this host
    Tune {
        #[command(flatten)]
        flags: TuneFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Make a validated implementation the one that runs (`plan f use g;`), only with a person's
    /// approval bound to its evaluation: --evaluate first, then approve at a terminal
    Promote {
        #[command(flatten)]
        flags: PromoteFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Run an implementation side by side with its reference on generated edge-case inputs and ask
    /// Z3 under its condition (finite evidence and a bounded comparison, not a proof)
    Validate {
        #[command(flatten)]
        flags: ValidateFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// SMT source equivalence of a function (or every function) between a reference and a candidate file
    Verify {
        #[command(flatten)]
        flags: VerifyFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// The packet an editing agent would receive for one function, with the fields a host keeps.
    Inspect {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// The function, qualified with its module when it has one (lib.spread).
        #[arg(long, value_name = "F")]
        symbol: String,
        /// focused (the function and the interfaces around it) or component (its whole call
        /// component).
        #[arg(long, value_name = "focused|component")]
        scope: Option<String>,
        /// Disclose a function or type first, as an expand request would (repeatable).
        #[arg(long = "expand", value_name = "NAME")]
        expand: Vec<String>,
        /// Add the cost model's explanation of the disclosed functions.
        #[arg(long)]
        explain: bool,
        /// Which host's packet: an edit session's (default), a plan session's (`cairn.plan/1`) or
        /// an implementation session's (`cairn.implementation/1`, F the reference).
        #[arg(long, value_enum, default_value = "edit")]
        session: SessionKind,
        /// Output mode (the packet is JSON in both modes).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// The language server (LSP on standard input and output, Content-Length framing).
    Lsp,
    /// The MCP server: the hosts as nine tools over standard input and output (one JSON-RPC
    /// message per line). Exits 0 when the input ends.
    Mcp,
    /// Builds and runs one validation harness for a server (internal): a request as JSON on
    /// standard input, the answer as JSON on standard output (`runner_wire.rs`). The servers run
    /// in `cairn-serve`, which links no LLVM, and ask `cairn-full` this way for each build.
    #[command(name = "harness-runner", hide = true)]
    HarnessRunner,
    /// Print a shell completion script (bash or zsh) made from these very argument definitions.
    Completions {
        /// The shell to write the script for.
        #[arg(value_enum)]
        shell: completions::Shell,
    },
    /// Say which tools this machine has of what the toolchain uses (LLVM, Z3, cc, bubblewrap,
    /// the cache, …), each missing one with its fix. Installs nothing.
    Doctor {
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Make a new project that checks and runs at once: `cairn new DIR [--template T]`.
    New {
        /// The project's directory (it must not exist); its name is the project's name.
        dir: PathBuf,
        /// default (a module with tests and a main), cli (arguments), lib (a library),
        /// service (a TCP line service), parallel (a parallel region and a reduction).
        #[arg(long, value_enum, default_value = "default")]
        template: new::Template,
        /// A library project from a benchmark definition (not built in this version).
        #[arg(long, value_name = "DEFINITION.json", conflicts_with = "template")]
        from_sol_execbench: Option<PathBuf>,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Rewrite .cairn files in the canonical layout (2-space indent, one statement per line,
    /// comments kept); with --check or --diff, only say which would change.
    Fmt {
        /// Files, or directories searched recursively for *.cairn.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Change nothing; exit 1 when a file would change.
        #[arg(long)]
        check: bool,
        /// Change nothing; print a unified diff of what would change (exit 1 when any).
        #[arg(long)]
        diff: bool,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// The program's modules as a graph (`cairn.graph/1`): imports, exports, dependents,
    /// source hashes, a dependencies-first order, cycles, the std modules imported.
    Graph {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Check the program and add each module's interface hash (public signatures and rows).
        #[arg(long)]
        interfaces: bool,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Print the source the program's `derive` declarations generate, per derivation: the text
    /// the checker judges, with `$` splices and static values carried out.
    Expand {
        /// A .cairn file, a project directory (its cairn.toml), or a manifest.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Revert the newest write-back a host made to the program's files, unless they changed since.
    Undo {
        /// A .cairn file, a project directory, or a manifest (the journal is in .cairn/ beside it).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
}

/// `cairn diff` flags.
#[derive(Debug, clap::Args)]
pub struct DiffFlags {
    /// The old side: a path, or a git revision of the repository here.
    pub old: String,
    /// The new side: a path, or a git revision of the repository here.
    pub new: String,
    /// The project inside the repository, for revision sides.
    #[arg(long = "in", value_name = "PATH", default_value = ".")]
    pub within: PathBuf,
    /// Z3's limit per query, in milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub timeout_ms: u32,
    /// The solver budget of the whole diff, in seconds (functions past it are unknown).
    #[arg(long, default_value_t = 60)]
    pub budget_s: u64,
    /// How many witnesses are replayed natively (each compiles and runs both versions).
    #[arg(long, default_value_t = 8)]
    pub replays: usize,
    /// Exit 1 unless every function is identical-code (identical) or also smt-equivalent (equivalent).
    #[arg(long, value_parser = ["identical", "equivalent"])]
    pub require: Option<String>,
    /// Also write a pull-request section in Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Leave out the predicted cost ratios.
    #[arg(long)]
    pub no_predict: bool,
    /// Write every SMT-LIB query to DIR.
    #[arg(long, value_name = "DIR")]
    pub obligations: Option<PathBuf>,
}

/// `cairn predict` options.
#[derive(Debug, clap::Args)]
pub struct PredictFlags {
    /// A .cairn file, a project directory (its cairn.toml), or a manifest.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// A function to predict (repeatable; qualified with its module when it has one).
    #[arg(long, value_name = "F")]
    pub symbol: Vec<String>,
    /// Sizes to price, `NAME=SIZE[,NAME=SIZE]` (repeatable). Default: each extent at 1e3, 1e5, 1e7.
    #[arg(long = "at", value_name = "NAME=SIZE")]
    pub at: Vec<String>,
    /// The machine profile (a calibration's `profile`); default: $CAIRN_PROFILE, else uncalibrated defaults.
    #[arg(long, value_name = "P.json")]
    pub profile: Option<PathBuf>,
    /// Fit a profile to this host (times calibration kernels) instead of predicting.
    #[arg(long)]
    pub calibrate: bool,
    /// With --calibrate: where to write the profile.
    #[arg(long, value_name = "P.json")]
    pub out: Option<PathBuf>,
    /// An earlier version of the program (a file, project directory or manifest): each function's
    /// predicted time now over its time there, at the same sizes.
    #[arg(long, value_name = "BEFORE", conflicts_with = "calibrate")]
    pub against: Option<PathBuf>,
    /// The device card device work is priced on (a key, or its prefix before a hyphen: `h100`),
    /// or `all` for every card. Default: rtx-5070-ti.
    #[arg(long, value_name = "CARD")]
    pub card: Option<String>,
    /// The CPU profile the host side is judged for (default: the manifest's `arch`, else
    /// `baseline`); recorded with the prediction.
    #[arg(long, value_name = "A")]
    pub arch: Option<String>,
    /// The device target device work is compiled for (default: the manifest's; with a card,
    /// the card must run it).
    #[arg(long, value_name = "SM")]
    pub device_target: Option<String>,
    /// Also compile the device code for the target and read each kernel's registers (PTX's
    /// virtual registers; the machine's, with spills, when NVIDIA's `ptxas` is on PATH). Nothing
    /// runs.
    #[arg(long)]
    pub inspect: bool,
}

/// `cairn tune` options.
#[derive(Debug, clap::Args)]
pub struct TuneFlags {
    /// A .cairn file, a project directory (its cairn.toml), or a manifest.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The function whose plans are searched (qualified with its module when it has one).
    #[arg(long, value_name = "F")]
    pub symbol: String,
    /// A size to time at, `NAME=SIZE` (every extent takes SIZE; `n=1e6`); repeatable. Default: 1e6.
    #[arg(long = "at", value_name = "NAME=SIZE")]
    pub at: Vec<String>,
    /// Time the first K candidates and the current plan on this host, halving each round.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub measure: usize,
    /// Write the chosen plan after the function's declaration (the program must still check).
    #[arg(long)]
    pub write: bool,
    /// The whole search's wall time, in seconds.
    #[arg(long, value_name = "S", default_value_t = 300)]
    pub budget_seconds: u64,
    /// At most this many timed runs (each block a timing program runs is one; kept measurements
    /// are free). Default: what --measure asks.
    #[arg(long, value_name = "N")]
    pub budget_runs: Option<u64>,
    /// The pricing profile (a calibration's, `cairn predict --calibrate`); default:
    /// $CAIRN_PROFILE, else the uncalibrated defaults.
    #[arg(long, value_name = "P.json")]
    pub profile: Option<PathBuf>,
    /// The candidate history to read and record into (default: `.cairn/history` in the project).
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    /// Neither read nor record a candidate history.
    #[arg(long, conflicts_with = "history")]
    pub no_history: bool,
    /// Compare plan B against plan A instead of searching (give it exactly twice): `none`, items
    /// (`grain 1; lanes 8`), or `use g` / `use g[8]`.
    #[arg(long = "compare", value_name = "PLAN")]
    pub compare: Vec<String>,
    /// With --compare: keep the files behind each line (each side's program, what its emitted
    /// code read, every timing sample) in `.cairn/artifacts/` and name them on the lines.
    #[arg(long, requires = "compare")]
    pub artifacts: bool,
    /// Extra weighted sizes, a JSON file: `[{"at":"n=1e6","weight":3},{"at":"n=1e8"}]`.
    #[arg(long, value_name = "SHAPES.json")]
    pub shapes: Option<PathBuf>,
    /// How times at several sizes fold into one ranking value.
    #[arg(long, value_enum, default_value = "geomean")]
    pub objective: ObjectiveFlag,
    /// Print only the candidates that changed since a saved answer (an earlier `--format json`).
    #[arg(long, value_name = "TUNE.json", conflicts_with = "compare")]
    pub since: Option<PathBuf>,
    /// Let an implementation whose only current validation is `finite-tested-emulated` (its
    /// device code ran on host threads) be a candidate.
    #[arg(long)]
    pub accept_emulated: bool,
    /// With --compare: also run each side's call once under a profiler, apart from timing
    /// (`[profiler observation]` lines, `profile` records). `cachegrind` is valgrind's: executed
    /// instructions and simulated cache misses.
    #[arg(long, value_enum, requires = "compare")]
    pub profiler: Option<ProfilerFlag>,
    /// The device card device work is priced on (`cairn predict --card`); default rtx-5070-ti.
    #[arg(long, value_name = "CARD")]
    pub card: Option<String>,
}

/// `--profiler`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ProfilerFlag {
    Cachegrind,
}

/// `--objective`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ObjectiveFlag {
    Geomean,
    Mean,
}

/// `cairn promote` options.
#[derive(Debug, clap::Args)]
pub struct PromoteFlags {
    /// A .cairn file, a project directory (its cairn.toml), or a manifest.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The reference function whose implementation is promoted (or rolled back).
    #[arg(long, value_name = "F")]
    pub symbol: String,
    /// The implementation (or instance `g[8]`) to promote.
    #[arg(long = "use", value_name = "G", required_unless_present = "rollback")]
    pub implementation: Option<String>,
    /// Evaluate instead of promoting: validate, then time the reference against the selection.
    #[arg(long, conflicts_with_all = ["rollback", "issue_token"])]
    pub evaluate: bool,
    /// With --evaluate: how much faster the implementation must be at every size, in percent,
    /// declared before the runs.
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub threshold: f64,
    /// With --evaluate: a size to time at, `NAME=SIZE` (repeatable; default n=1e6).
    #[arg(long = "at", value_name = "NAME=SIZE")]
    pub at: Vec<String>,
    /// Print an approval token for the current corroboration (asks for the typed confirmation).
    #[arg(long, conflicts_with = "rollback")]
    pub issue_token: bool,
    /// Remove the function's selection and record the withdrawal (every earlier record stays).
    #[arg(long)]
    pub rollback: bool,
}

/// `cairn validate` options.
#[derive(Debug, clap::Args)]
pub struct ValidateFlags {
    /// A .cairn file, a project directory (its cairn.toml), or a manifest.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The implementation, or one instance of a tuned one (`g[16]`).
    #[arg(long, value_name = "G")]
    pub symbol: String,
    /// The validation policy (strict JSON, at most 200,000 bytes): `tolerance`, `domain`,
    /// `budget`, `seed`, `probes`, `seconds`.
    #[arg(long, value_name = "POLICY.json")]
    pub policy: Option<PathBuf>,
    /// Where failing cases are kept (default: `regressions/<reference>.json` in the project).
    #[arg(long, value_name = "FILE")]
    pub regressions: Option<PathBuf>,
    /// Also record the result in the candidate history in DIR (`.cairn/history` is the project's).
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    /// Run device code on host threads, judged against the device target: the evidence is then
    /// `finite-tested-emulated`. Without it, a program doing device work validates `unknown`
    /// (validation cases do not run on a GPU yet).
    #[arg(long)]
    pub emulate: bool,
    /// The device target device work is judged against (default: the manifest's).
    #[arg(long, value_name = "SM")]
    pub device_target: Option<String>,
}

/// `cairn verify` flags.
#[derive(Debug, clap::Args)]
pub struct VerifyFlags {
    /// The reference program (a .cairn file of at most 64,000 bytes).
    pub reference: PathBuf,
    /// The candidate program (a .cairn file of at most 64,000 bytes).
    pub candidate: PathBuf,
    /// The function to verify (`name` or `module.name`).
    #[arg(long)]
    pub symbol: Option<String>,
    /// Verify every function of the reference.
    #[arg(long)]
    pub all: bool,
    /// Z3's limit per query, in milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub timeout_ms: u32,
    /// A precondition, `SYMBOL=EXPR` over the function's parameters (one per function).
    #[arg(long)]
    pub assume: Vec<String>,
    /// Accept a reference that traps on an allowed input (a trap is then an outcome to match).
    #[arg(long)]
    pub allow_reference_traps: bool,
    /// Write every SMT-LIB query to DIR.
    #[arg(long, value_name = "DIR")]
    pub obligations: Option<PathBuf>,
}

/// Which host's packet `cairn inspect` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SessionKind {
    Edit,
    Plan,
    Implementation,
}
