//! The `cairn` command: argument parsing and the batch pipeline, nothing else.
//!
//! Each subcommand lives in its own module and returns the process exit status; the conventions
//! every command shares (output mode, colour, record printing) live in `output`. Exit statuses
//! follow tools.md §1.3: 0 done and positive, 1 a refusal, 2 the environment could not answer.

mod build;
mod check;
mod completions;
mod device;
mod diff;
mod doc;
mod doctor;
mod emit;
mod expand;
mod explain;
mod find;
mod fmt;
mod graph;
mod inspect;
mod inspect_device;
mod new;
mod output;
mod predict;
mod process;
mod promote;
mod rules;
mod run;
mod sandbox;
mod state;
mod test;
mod tune;
mod undo;
mod validate;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::output::FormatChoice;

/// CAIRN: a systems language for CPUs and GPUs whose compiler answers agents.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The device flags of `check`, `build`, `run` and `test` (tools.md §4).
#[derive(Debug, Args)]
struct DeviceArgs {
    /// The GPU target device work is judged against (sm_90, sm_90a, sm_120f, …; default: the
    /// manifest's [build] device_target).
    #[arg(long = "device-target", value_name = "SM")]
    device_target: Option<String>,
    /// Build device work for host threads, judged against the device target (for correctness,
    /// never timing). Device code for a GPU is not built yet, so device work needs this.
    #[arg(long)]
    emulate: bool,
}

impl DeviceArgs {
    fn flags(self) -> device::DeviceFlags {
        device::DeviceFlags { target: self.device_target, emulate: self.emulate }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
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
        flags: diff::DiffFlags,
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
        flags: predict::PredictFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Search a function's plans: each candidate checked, the first K timed on this host
    Tune {
        #[command(flatten)]
        flags: tune::TuneFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Make a validated implementation the one that runs (`plan f use g;`), only with a person's
    /// approval bound to its evaluation: --evaluate first, then approve at a terminal
    Promote {
        #[command(flatten)]
        flags: promote::PromoteFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// Run an implementation side by side with its reference on generated edge-case inputs and ask
    /// Z3 under its condition (finite evidence and a bounded comparison, not a proof)
    Validate {
        #[command(flatten)]
        flags: validate::ValidateFlags,
        /// Output mode (default: $CAIRN_FORMAT, else human at a terminal, json otherwise).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// SMT source equivalence of a function (or every function) between a reference and a candidate file
    Verify {
        #[command(flatten)]
        flags: verify::VerifyFlags,
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
        session: inspect::SessionKind,
        /// Output mode (the packet is JSON in both modes).
        #[arg(long, value_enum)]
        format: Option<FormatChoice>,
    },
    /// The language server (LSP on standard input and output, Content-Length framing).
    Lsp,
    /// The MCP server: the hosts as nine tools over standard input and output (one JSON-RPC
    /// message per line). Exits 0 when the input ends.
    Mcp,
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

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Every command runs on a thread with the analysis stack (cairn_hir::stack), so no input
    // within the language's limits overflows it. A panic is a defect of the toolchain: it is
    // reported as such (exit 2), never as a verdict on the program.
    match cairn_hir::stack::run("cairn", move || command(cli)) {
        Ok(status) => ExitCode::from(status),
        Err(_) => {
            eprintln!(
                "error[E-INTERNAL]: the cairn toolchain failed while answering this command (a defect of the toolchain, not of the program)"
            );
            ExitCode::from(2)
        }
    }
}

fn command(cli: Cli) -> u8 {
    match cli.command {
        Command::Check { path, generics, std_library, watch, device, format } => {
            if watch {
                check::watch(&path, generics, output::Output::choose(format))
            } else {
                check::run(&path, generics, std_library, &device.flags(), output::Output::choose(format))
            }
        }
        Command::Build { path, keep_guards, out, debug, timeout, device, format } => {
            let flags = build::BuildFlags { keep_guards, out, debug, timeout, device: device.flags() };
            build::run(&path, &flags, output::Output::choose(format))
        }
        Command::Run { path, keep_guards, out, memory_mib, debug, timeout, sandbox, device, format, args } => {
            let flags = build::BuildFlags { keep_guards, out, debug, timeout, device: device.flags() };
            let output = output::Output::choose(format);
            if sandbox {
                run::run_confined(&path, &flags, memory_mib, &args, output)
            } else {
                run::run(&path, &flags, memory_mib, &args, output)
            }
        }
        Command::Test { path, filter, test, jobs, timeout, memory_mib, keep_guards, sandbox, device, format } => {
            let flags = test::TestFlags {
                filter,
                test,
                jobs,
                timeout,
                memory_mib,
                sandbox,
                build: build::BuildFlags {
                    keep_guards,
                    out: None,
                    debug: false,
                    timeout: build::DEFAULT_TIMEOUT,
                    device: device.flags(),
                },
            };
            test::run(&path, &flags, output::Output::choose(format))
        }
        Command::Emit { path, mir, unoptimized, debug, keep_guards, ptx, device_target, format } => {
            let flags = emit::EmitFlags { mir, unoptimized, keep_guards, debug, ptx, device_target };
            emit::run(&path, &flags, output::Output::choose(format))
        }
        Command::State { path, since, symbol: Some(symbol), format: f } => {
            state::investigate(&path, &symbol, since.as_deref(), output::Output::choose(f))
        }
        Command::State { path, since, symbol: None, format } => {
            state::run(&path, since.as_deref(), output::Output::choose(format))
        }
        Command::Doc { path, modules, std_library, format } => {
            doc::run(&path, &modules, std_library, output::Output::choose(format))
        }
        Command::Rules { asked, list: _, format } => rules::run(asked.as_deref(), output::Output::choose(format)),
        Command::Find { words, takes, returns, effects, limit, program, format } => {
            let flags = find::FindFlags { words, takes, returns, effects, limit, program };
            find::run(&flags, output::Output::choose(format))
        }
        Command::Diff { flags, format } => diff::run(&flags, output::Output::choose(format)),
        Command::Verify { flags, format } => verify::run(&flags, output::Output::choose(format)),
        Command::Validate { flags, format } => validate::run(&flags, output::Output::choose(format)),
        Command::Tune { flags, format } => tune::run(&flags, output::Output::choose(format)),
        Command::Promote { flags, format } => promote::run(&flags, output::Output::choose(format)),
        Command::Predict { flags, format } => predict::run(&flags, output::Output::choose(format)),
        Command::Explain { path, symbol, format } => explain::run(&path, &symbol, output::Output::choose(format)),
        Command::Inspect { path, symbol, scope, expand, explain, session, format } => {
            let flags = inspect::InspectFlags { symbol, scope, expand, explain, session };
            inspect::run(&path, &flags, output::Output::choose(format))
        }
        Command::Mcp => {
            without_huge_pages();
            let start = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let runner = Box::new(validate::NativeRunner::new(None, validate::NativeRunner::parallel()));
            let status = cairn_mcp::serve_stdio(&start, Some(runner));
            u8::try_from(status).unwrap_or(2)
        }
        Command::Doctor { format } => doctor::run(output::Output::choose(format)),
        Command::Completions { shell } => completions::run(&<Cli as clap::CommandFactory>::command(), shell),
        Command::New { dir, template, from_sol_execbench, format } => {
            new::run(&dir, template, from_sol_execbench.as_deref(), output::Output::choose(format))
        }
        Command::Fmt { paths, check, diff, format } => fmt::run(&paths, check, diff, output::Output::choose(format)),
        Command::Graph { path, interfaces, format } => graph::run(&path, interfaces, output::Output::choose(format)),
        Command::Expand { path, format } => expand::run(&path, output::Output::choose(format)),
        Command::Undo { path, format } => undo::run(&path, output::Output::choose(format)),
        Command::Lsp => {
            without_huge_pages();
            u8::try_from(cairn_lsp::serve_stdio()).unwrap_or(2)
        }
    }
}

/// The long-lived servers (`cairn mcp`, `cairn lsp`) give up transparent huge pages for the rest
/// of the process: the allocator asks for them, and a 2 MiB page counts whole in the resident
/// size however little of it is used. Measured both ways over `cairn mcp` (bench/README.md,
/// issue 22): after 200 written edits of a 22k-line program 132–155 MiB resident without them
/// against 172–184 MiB with, p50 latencies the same within the machine's noise (three runs each,
/// alternated). A short command
/// (`check`, `run`) keeps them: there they save page faults. `CAIRN_SERVER_HUGE_PAGES=1` keeps
/// them in the servers too (to measure both ways).
fn without_huge_pages() {
    if std::env::var_os("CAIRN_SERVER_HUGE_PAGES").is_some_and(|v| v == "1") {
        return;
    }
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes nothing but the
    // process's own huge-page flag.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
