//! The generator's module-level state: the LLVM context, module and builder, the program's
//! functions by symbol, the pool of constant strings and the guard counters. Everything that
//! outlives one function lives here; what one function needs while it is defined is `FnGen`'s
//! (`function.rs`).
//!
//! Invariant: one `ModuleGen` builds one module for one target, which it knows only as a
//! `TargetInfo`; nothing it creates leaves the crate.
//! Invariant: a byte string becomes one private constant however often it is asked for, and the
//! order in which constants are first asked for fixes their names (`str`, `str.1`, …), so the
//! generators must keep asking in the MIR's order for the IR to stay the same.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::{FunctionValue, PointerValue};

use crate::target::TargetInfo;
use crate::{Options, SiteText};

/// The result of generating code.
pub(crate) type G<T> = Result<T, GenError>;

/// The debug-information builder and the files it has described (`debug.rs` fills it in; it is
/// here so that the module's state owns it without this file importing that one).
pub(crate) struct Debug<'ctx> {
    pub(crate) builder: inkwell::debug_info::DebugInfoBuilder<'ctx>,
    pub(crate) unit: inkwell::debug_info::DICompileUnit<'ctx>,
    pub(crate) files: std::collections::HashMap<String, inkwell::debug_info::DIFile<'ctx>>,
}

/// What a host module built for a GPU knows of its device module (`gpu::host_side`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Gpu {
    /// Each device lane function's kernel, by the number the runtime's table gives it.
    pub(crate) kernels: HashMap<Arc<str>, u32>,
}

/// Why generating a function failed.
#[derive(Debug)]
pub(crate) enum GenError {
    /// LLVM's builder refused an instruction: a fault of the generator.
    Builder(BuilderError),
    /// The target cannot do what the MIR asks (a print where there is no runtime).
    Refused(&'static str),
}

impl From<BuilderError> for GenError {
    fn from(error: BuilderError) -> GenError {
        GenError::Builder(error)
    }
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::Builder(error) => error.fmt(f),
            GenError::Refused(why) => f.write_str(why),
        }
    }
}

/// The state of the module being generated.
pub(crate) struct ModuleGen<'ctx, 'a> {
    pub(crate) ctx: &'ctx Context,
    pub(crate) module: Module<'ctx>,
    pub(crate) builder: Builder<'ctx>,
    /// What the body generator knows of the target.
    pub(crate) info: TargetInfo,
    /// Where a function, statement or guard sits in the source.
    pub(crate) site: SiteText<'a>,
    pub(crate) options: Options,
    /// The program's functions by symbol: all declared before any is defined.
    pub(crate) functions: HashMap<Arc<str>, FunctionValue<'ctx>>,
    strings: HashMap<Vec<u8>, PointerValue<'ctx>>,
    /// The symbols of the foreign (C) functions declared (`call.rs`).
    pub(crate) foreign: std::collections::HashSet<Arc<str>>,
    /// The drop glue made so far, by the type it releases (`owner.rs`).
    pub(crate) glue: HashMap<cairn_mir::MTy, FunctionValue<'ctx>>,
    pub(crate) guards_emitted: usize,
    pub(crate) guards_elided: usize,
    /// The debug-information builder, when debug information is emitted.
    pub(crate) debug: Option<Debug<'ctx>>,
    /// A host module built for a GPU: its device module's kernels (`gpu.rs`).
    pub(crate) gpu: Option<Gpu>,
    /// A device module: the message of each device guard, by its trap number - 1 (`guard.rs`).
    pub(crate) device_messages: Vec<String>,
}

impl<'ctx, 'a> ModuleGen<'ctx, 'a> {
    /// A generator for `module`, with the runtime's functions declared in it.
    pub(crate) fn new(
        ctx: &'ctx Context,
        module: Module<'ctx>,
        info: TargetInfo,
        site: SiteText<'a>,
        options: Options,
    ) -> ModuleGen<'ctx, 'a> {
        let builder = ctx.create_builder();
        let mut cg = ModuleGen {
            ctx,
            module,
            builder,
            info,
            site,
            options,
            functions: HashMap::new(),
            strings: HashMap::new(),
            glue: HashMap::new(),
            foreign: std::collections::HashSet::new(),
            guards_emitted: 0,
            guards_elided: 0,
            debug: None,
            gpu: None,
            device_messages: Vec::new(),
        };
        cg.declare_runtime();
        cg
    }

    /// A private constant holding `bytes` (NUL-terminated, so it can also be a C string).
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> PointerValue<'ctx> {
        if let Some(ptr) = self.strings.get(bytes) {
            return *ptr;
        }
        let mut data = bytes.to_vec();
        data.push(0);
        let init = self.ctx.const_string(&data, false);
        let global = self.module.add_global(init.get_type(), None, "str");
        global.set_initializer(&init);
        global.set_constant(true);
        global.set_linkage(Linkage::Private);
        global.set_unnamed_addr(true);
        let ptr = global.as_pointer_value();
        self.strings.insert(bytes.to_vec(), ptr);
        ptr
    }
}
