//! MIR to native code through LLVM 19 (inkwell): one module per program, an `-O2`-class pipeline,
//! an object file, and a link with the small C runtime (`runtime/host.c`) by the system `cc`.
//! This file is the crate's public face only; the generator lives in rooms along rustc's
//! `codegen_llvm` lines: `target` (triple, data layout, machine, emission), `module` (the
//! module-level state), `layout` (MIR types as LLVM types), `function` (a body's allocas, blocks,
//! places and operands), `rvalue` (assignments), `guard` (guards and traps), `call` (calls and
//! the ABI), `print`, `owner` (allocation and drop glue), `entry` (the C `main`), `debug` (DWARF lines) and `runtime`.
//!
//! The representation of each MIR type is `layout`'s, the guard discipline `guard`'s, and the
//! float discipline (plain IEEE, no fast-math flags) `rvalue`'s.
//!
//! Invariant: LLVM objects never leave this crate; callers hand in MIR and get bytes back.

mod call;
mod debug;
mod device;
mod device_fold;
mod entry;
mod function;
mod gpu;
mod guard;
mod layout;
mod module;
mod options;
mod owner;
mod print;
mod remarks;
mod runtime;
mod rvalue;
mod target;

use std::sync::Arc;

use cairn_mir::{Anchor, Function};
use inkwell::context::Context;

use crate::module::ModuleGen;
use crate::target::Target;

pub use device::{DEFAULT_BLOCK, DeviceArch, KernelShape, Ptx, compile_ptx};
pub use runtime::{DEVICE_C, RUNTIME_C, cache_dir, link, link_with};

/// The version of the LLVM this toolchain links (`major.minor.patch`).
pub fn llvm_version() -> String {
    let (major, minor, patch) = inkwell::support::get_llvm_version();
    format!("{major}.{minor}.{patch}")
}

/// How to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Emit every guard, the elided ones too.
    pub keep_guards: bool,
    /// Run the `-O2` pipeline (off for `cairn emit --llvm` of unoptimized IR).
    pub optimize: bool,
    /// Emit DWARF line information that points at the `.cairn` source.
    pub debug: bool,
    /// Every program function external, so each keeps its own optimized body (`cairn explain`
    /// reads them; a build lets LLVM inline and drop them).
    pub keep_functions: bool,
    /// Collect LLVM's loop-vectorization remarks into [`Compiled::remarks`] (`cairn explain`).
    pub remarks: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { keep_guards: false, optimize: true, debug: false, keep_functions: false, remarks: false }
    }
}

/// What the program's entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// An executable: `main` calls this function (`fn main() -> i32`).
    Main(Arc<str>),
    /// A test runner: `main` runs the test whose index is its first argument.
    Tests(Vec<Arc<str>>),
    /// No entry (for `cairn emit`).
    None,
}

/// Where something of a function sits in the source: a guard (for its trap message), a statement
/// (for debug line information), or the function itself (`None`).
pub type SiteText<'a> = &'a dyn Fn(&Function, Option<Anchor>) -> Site;

/// A guard's place in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
}

/// The compiled program.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The object file.
    pub object: Vec<u8>,
    /// The module's LLVM IR, after the pipeline when it ran.
    pub llvm_ir: String,
    /// Guards emitted, and guards left out as proved, over the whole program.
    pub guards_emitted: usize,
    pub guards_elided: usize,
    /// LLVM's loop-vectorization remarks (`file:line:column: text`), when asked for.
    pub remarks: Vec<String>,
}

/// Compiles functions to an object for the host.
pub fn compile(
    functions: &[Arc<Function>],
    entry: &Entry,
    site: SiteText<'_>,
    options: Options,
) -> Result<Compiled, String> {
    compile_with(functions, entry, site, options, None)
}

/// [`compile`], for a GPU when `gpu` holds the program's device module (`compile_ptx` of the
/// same functions): device regions launch its kernels, device buffers and transfers go through
/// the driver, and the module carries the tables the device runtime reads (`gpu.rs`); link it
/// with `link_with(…, true)`. Without it, device work builds for host threads (`--emulate`).
pub fn compile_with(
    functions: &[Arc<Function>],
    entry: &Entry,
    site: SiteText<'_>,
    options: Options,
    gpu: Option<&Ptx>,
) -> Result<Compiled, String> {
    let target = Target::HOST;
    let machine = target.machine()?;
    let context = Context::create();
    // The remarks handler: collecting when asked, dropping remarks a collecting compile of this
    // process turned on otherwise.
    let mut collected = remarks::Collected::default();
    let watching = options.remarks || remarks::enabled();
    if watching {
        remarks::install(&context, &mut collected, options.remarks);
    }
    let compiled = compile_in(&context, &machine, &target, functions, entry, site, options, gpu);
    if watching {
        remarks::uninstall(&context);
    }
    compiled.map(|mut compiled| {
        compiled.remarks = collected.remarks;
        compiled
    })
}

/// [`compile`] in `context`.
fn compile_in(
    context: &Context,
    machine: &inkwell::targets::TargetMachine,
    target: &Target,
    functions: &[Arc<Function>],
    entry: &Entry,
    site: SiteText<'_>,
    options: Options,
    gpu: Option<&Ptx>,
) -> Result<Compiled, String> {
    let module = context.create_module("cairn");
    target.prepare(&module, machine);
    let mut cg = ModuleGen::new(context, module, target.info(), site, options);
    if let Some(ptx) = gpu {
        cg.gpu = Some(gpu::host_side(ptx));
        cg.gpu_tables(ptx);
    }
    if options.debug {
        cg.start_debug_info();
    }
    for function in functions {
        cg.declare(function);
    }
    for function in functions {
        cg.define(function).map_err(|e| format!("{}: {e}", function.name))?;
    }
    cg.entry(entry).map_err(|e| format!("entry: {e}"))?;
    cg.finish_debug_info();
    cg.module.verify().map_err(|e| format!("LLVM rejected the generated module: {}", e.to_string()))?;
    if options.optimize {
        target::optimize(&cg.module, machine)?;
    }
    let llvm_ir = cg.module.print_to_string().to_string();
    let object = target.emit(&cg.module, machine)?;
    Ok(Compiled {
        object,
        llvm_ir,
        guards_emitted: cg.guards_emitted,
        guards_elided: cg.guards_elided,
        remarks: Vec::new(),
    })
}
