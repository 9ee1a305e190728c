//! MIR to native code through LLVM 19 (inkwell): one module per program, an `-O2`-class pipeline,
//! an object file, and a link with the small C runtime (`runtime/host.c`) by the system `cc`.
//!
//! Representation: `bool` is `i1`, integers are `iN` (`usize` is `i64`), a record is an LLVM
//! struct, a tag-only enum its `i32` tag, a sum `{ i32 tag, [k x i64] payload }`, a view
//! `{ ptr, i64 }`, a single borrow a `ptr`, `stack` storage an array. Every MIR local gets an
//! `alloca` in the entry block (promoted to registers by the pipeline).
//!
//! Guards: each non-elided guard (every guard under `keep_guards`) branches to a cold block that
//! calls a `noreturn` runtime function with the guard's message, so a failing guard traps before
//! the operation it protects. An overflow guard's intrinsic result is reused by the operation that
//! follows it. Floats use plain IEEE instructions with no fast-math flags, so nothing is
//! contracted or reassociated.
//!
//! Invariant: LLVM objects never leave this crate; callers hand in MIR and get bytes back.

mod runtime;

use std::collections::HashMap;
use std::sync::Arc;

use cairn_mir::{
    Anchor, BinOp, BlockId, Check, Const, FloatTy, Function, Guard, GuardKind, Inst, IntTy, MTy, Operand, Place,
    PrintArg, Proj, Rvalue, Stream, Terminator, UnOp,
};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum, StructType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue, ValueKind,
};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate, OptimizationLevel};

pub use runtime::{RUNTIME_C, link};

/// How to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Emit every guard, the elided ones too.
    pub keep_guards: bool,
    /// Run the `-O2` pipeline (off for `cairn emit --llvm` of unoptimized IR).
    pub optimize: bool,
    /// Emit DWARF line information that points at the `.cairn` source.
    pub debug: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { keep_guards: false, optimize: true, debug: false }
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
}

/// Compiles functions to an object for the host.
pub fn compile(
    functions: &[Arc<Function>],
    entry: &Entry,
    site: SiteText<'_>,
    options: Options,
) -> Result<Compiled, String> {
    Target::initialize_x86(&InitializationConfig::default());
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    let machine = target
        .create_target_machine(&triple, "x86-64", "", OptimizationLevel::Default, RelocMode::PIC, CodeModel::Default)
        .ok_or("LLVM has no target machine for x86-64")?;
    let context = Context::create();
    let module = context.create_module("cairn");
    module.set_triple(&triple);
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let mut cg = Gen::new(&context, module, site, options);
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
    if let Some(debug) = &cg.debug {
        debug.builder.finalize();
    }
    cg.module.verify().map_err(|e| format!("LLVM rejected the generated module: {}", e.to_string()))?;
    if options.optimize {
        cg.module
            .run_passes("default<O2>", &machine, PassBuilderOptions::create())
            .map_err(|e| format!("the LLVM pipeline failed: {}", e.to_string()))?;
    }
    let llvm_ir = cg.module.print_to_string().to_string();
    let object = machine
        .write_to_memory_buffer(&cg.module, FileType::Object)
        .map_err(|e| format!("LLVM could not emit the object: {}", e.to_string()))?
        .as_slice()
        .to_vec();
    Ok(Compiled { object, llvm_ir, guards_emitted: cg.guards_emitted, guards_elided: cg.guards_elided })
}

type G<T> = Result<T, BuilderError>;

struct Gen<'ctx, 'a> {
    ctx: &'ctx Context,
    module: Module<'ctx>,
    builder: Builder<'ctx>,
    site: SiteText<'a>,
    options: Options,
    functions: HashMap<Arc<str>, FunctionValue<'ctx>>,
    strings: HashMap<Vec<u8>, PointerValue<'ctx>>,
    guards_emitted: usize,
    guards_elided: usize,
    debug: Option<Debug<'ctx>>,
}

/// The debug-information builder and the files it has described.
struct Debug<'ctx> {
    builder: inkwell::debug_info::DebugInfoBuilder<'ctx>,
    unit: inkwell::debug_info::DICompileUnit<'ctx>,
    files: HashMap<String, inkwell::debug_info::DIFile<'ctx>>,
}

/// The state of one function being defined.
struct FnState<'ctx, 'f> {
    mir: &'f Function,
    function: FunctionValue<'ctx>,
    slots: Vec<PointerValue<'ctx>>,
    blocks: Vec<BasicBlock<'ctx>>,
    /// The result of the last overflow guard: reused by the operation right after it.
    overflow: Option<(BinOp, Operand, Operand, IntValue<'ctx>)>,
    /// The function's debug scope, when debug information is emitted.
    scope: Option<inkwell::debug_info::DIScope<'ctx>>,
}

impl<'ctx, 'a> Gen<'ctx, 'a> {
    fn new(ctx: &'ctx Context, module: Module<'ctx>, site: SiteText<'a>, options: Options) -> Gen<'ctx, 'a> {
        let builder = ctx.create_builder();
        let mut cg = Gen {
            ctx,
            module,
            builder,
            site,
            options,
            functions: HashMap::new(),
            strings: HashMap::new(),
            guards_emitted: 0,
            guards_elided: 0,
            debug: None,
        };
        cg.declare_runtime();
        cg
    }

    // ----- debug information ---------------------------------------------------------------

    fn start_debug_info(&mut self) {
        use inkwell::debug_info::{DWARFEmissionKind, DWARFSourceLanguage};
        let (builder, unit) = self.module.create_debug_info_builder(
            true,
            DWARFSourceLanguage::C,
            "program.cairn",
            ".",
            "cairn-rs",
            self.options.optimize,
            "",
            0,
            "",
            DWARFEmissionKind::LineTablesOnly,
            0,
            false,
            false,
            "",
            "",
        );
        let i32t = self.ctx.i32_type();
        self.module.add_basic_value_flag(
            "Debug Info Version",
            inkwell::module::FlagBehavior::Warning,
            i32t.const_int(3, false),
        );
        self.module.add_basic_value_flag(
            "Dwarf Version",
            inkwell::module::FlagBehavior::Warning,
            i32t.const_int(4, false),
        );
        self.debug = Some(Debug { builder, unit, files: HashMap::new() });
    }

    /// The debug file of a source file name.
    fn debug_file(&mut self, name: &str) -> Option<inkwell::debug_info::DIFile<'ctx>> {
        let debug = self.debug.as_mut()?;
        if let Some(file) = debug.files.get(name) {
            return Some(*file);
        }
        let path = std::path::Path::new(name);
        let file_name = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| name.to_string());
        let directory = path.parent().map(|d| d.to_string_lossy().to_string()).unwrap_or_default();
        let file = debug.builder.create_file(&file_name, if directory.is_empty() { "." } else { &directory });
        debug.files.insert(name.to_string(), file);
        Some(file)
    }

    /// Describes a function for the debugger; returns its scope.
    fn debug_function(
        &mut self,
        mir: &Function,
        function: FunctionValue<'ctx>,
    ) -> Option<inkwell::debug_info::DIScope<'ctx>> {
        use inkwell::debug_info::{AsDIScope, DIFlags, DIFlagsConstants};
        let site = (self.site)(mir, None);
        let file = self.debug_file(site.file.as_deref().unwrap_or("library.cairn"))?;
        let debug = self.debug.as_ref()?;
        let ty = debug.builder.create_subroutine_type(file, None, &[], DIFlags::PUBLIC);
        let program = debug.builder.create_function(
            debug.unit.as_debug_info_scope(),
            &mir.name,
            Some(&mir.symbol),
            file,
            site.line,
            ty,
            true,
            true,
            site.line,
            DIFlags::PUBLIC,
            self.options.optimize,
        );
        function.set_subprogram(program);
        Some(program.as_debug_info_scope())
    }

    /// Describes the C entry (`main`) for the debugger, so code inlined into it keeps its lines.
    fn debug_entry(&mut self, function: FunctionValue<'ctx>) {
        use inkwell::debug_info::{AsDIScope, DIFlags, DIFlagsConstants};
        let Some(debug) = &self.debug else { return };
        let Some(file) = debug.files.values().next().copied() else { return };
        let ty = debug.builder.create_subroutine_type(file, None, &[], DIFlags::PUBLIC);
        let program = debug.builder.create_function(
            debug.unit.as_debug_info_scope(),
            "main",
            None,
            file,
            1,
            ty,
            false,
            true,
            1,
            DIFlags::PUBLIC,
            self.options.optimize,
        );
        function.set_subprogram(program);
        let location = debug.builder.create_debug_location(self.ctx, 1, 0, program.as_debug_info_scope(), None);
        self.builder.set_current_debug_location(location);
    }

    /// Points the builder's next instructions at the source of `anchor`.
    fn locate(&mut self, s: &FnState<'ctx, '_>, anchor: Option<Anchor>) {
        let Some(scope) = s.scope else { return };
        let site = (self.site)(s.mir, anchor);
        if let Some(debug) = &self.debug {
            let location = debug.builder.create_debug_location(self.ctx, site.line.max(1), site.column, scope, None);
            self.builder.set_current_debug_location(location);
        }
    }

    // ----- types ---------------------------------------------------------------------------

    fn ptr(&self) -> inkwell::types::PointerType<'ctx> {
        self.ctx.ptr_type(AddressSpace::default())
    }

    fn int(&self, i: IntTy) -> inkwell::types::IntType<'ctx> {
        match i.bits() {
            8 => self.ctx.i8_type(),
            16 => self.ctx.i16_type(),
            32 => self.ctx.i32_type(),
            _ => self.ctx.i64_type(),
        }
    }

    fn view_type(&self) -> StructType<'ctx> {
        self.ctx.struct_type(&[self.ptr().into(), self.ctx.i64_type().into()], false)
    }

    /// The LLVM type of a MIR type (`None` for `void`).
    fn ty(&self, ty: &MTy) -> Option<BasicTypeEnum<'ctx>> {
        Some(match ty {
            MTy::Void => return None,
            MTy::Bool => self.ctx.bool_type().into(),
            MTy::Int(i) => self.int(*i).into(),
            MTy::Float(FloatTy::F32) => self.ctx.f32_type().into(),
            MTy::Float(FloatTy::F64) => self.ctx.f64_type().into(),
            MTy::Record { fields, .. } => {
                let fields: Vec<BasicTypeEnum> =
                    fields.iter().map(|f| self.ty(f).unwrap_or_else(|| self.ctx.i8_type().into())).collect();
                self.ctx.struct_type(&fields, false).into()
            }
            MTy::Enum { .. } => self.ctx.i32_type().into(),
            MTy::Sum { .. } => self.sum_type(ty).into(),
            MTy::View(_) => self.view_type().into(),
            MTy::Ptr(_) => self.ptr().into(),
            MTy::Array(elem, n) => {
                let elem = self.ty(elem).unwrap_or_else(|| self.ctx.i8_type().into());
                elem.array_type(*n as u32).into()
            }
        })
    }

    fn basic(&self, ty: &MTy) -> BasicTypeEnum<'ctx> {
        self.ty(ty).unwrap_or_else(|| self.ctx.i8_type().into())
    }

    /// A sum: its tag and enough 8-byte words for the largest payload.
    fn sum_type(&self, ty: &MTy) -> StructType<'ctx> {
        let MTy::Sum { variants, .. } = ty else { unreachable!("sum_type of a sum") };
        let data = self.module.get_data_layout();
        let target = inkwell::targets::TargetData::create(data.as_str().to_str().unwrap_or(""));
        let words = variants
            .iter()
            .flatten()
            .map(|p| self.ty(p).map_or(0, |t| target.get_abi_size(&t)))
            .max()
            .unwrap_or(0)
            .div_ceil(8)
            .max(1);
        self.ctx.struct_type(&[self.ctx.i32_type().into(), self.ctx.i64_type().array_type(words as u32).into()], false)
    }

    // ----- declarations --------------------------------------------------------------------

    fn runtime_fn(&mut self, name: &str, params: &[BasicMetadataTypeEnum<'ctx>], noreturn: bool) {
        let fn_type = self.ctx.void_type().fn_type(params, false);
        let function = self.module.add_function(name, fn_type, Some(Linkage::External));
        if noreturn {
            for attribute in ["noreturn", "cold", "nounwind"] {
                let kind = Attribute::get_named_enum_kind_id(attribute);
                function.add_attribute(AttributeLoc::Function, self.ctx.create_enum_attribute(kind, 0));
            }
        }
    }

    fn declare_runtime(&mut self) {
        let ptr = self.ptr().into();
        let i64t = self.ctx.i64_type().into();
        let i32t = self.ctx.i32_type().into();
        let f64t = self.ctx.f64_type().into();
        let f32t = self.ctx.f32_type().into();
        self.runtime_fn("cairn_rt_print_begin", &[i32t], false);
        self.runtime_fn("cairn_rt_put_u64", &[i64t], false);
        self.runtime_fn("cairn_rt_put_i64", &[i64t], false);
        self.runtime_fn("cairn_rt_put_f64", &[f64t], false);
        self.runtime_fn("cairn_rt_put_f32", &[f32t], false);
        self.runtime_fn("cairn_rt_put_bool", &[i32t], false);
        self.runtime_fn("cairn_rt_put_byte", &[i32t], false);
        self.runtime_fn("cairn_rt_put_bytes", &[ptr, i64t], false);
        self.runtime_fn("cairn_rt_print_end", &[i32t, i32t], false);
        self.runtime_fn("cairn_rt_trap", &[ptr], true);
        self.runtime_fn("cairn_rt_assert_failed", &[ptr, ptr, i64t], true);
        self.runtime_fn("cairn_rt_assert_eq_i64", &[ptr, ptr, i64t, i64t, i64t], true);
        self.runtime_fn("cairn_rt_assert_eq_u64", &[ptr, ptr, i64t, i64t, i64t], true);
        self.runtime_fn("cairn_rt_assert_eq_f64", &[ptr, ptr, i64t, f64t, f64t], true);
        self.runtime_fn("cairn_rt_assert_eq_f32", &[ptr, ptr, i64t, f32t, f32t], true);
        self.runtime_fn("cairn_rt_assert_eq_bool", &[ptr, ptr, i64t, i32t, i32t], true);
        let index = self.ctx.i64_type().fn_type(&[i32t, ptr, i64t], false);
        self.module.add_function("cairn_rt_test_index", index, Some(Linkage::External));
    }

    fn rt(&self, name: &str) -> FunctionValue<'ctx> {
        self.module.get_function(name).unwrap_or_else(|| panic!("the runtime function {name} is declared"))
    }

    fn declare(&mut self, function: &Function) {
        let params: Vec<BasicMetadataTypeEnum> =
            function.locals[..function.params as usize].iter().map(|l| self.basic(&l.ty).into()).collect();
        let fn_type = match self.ty(&function.ret) {
            Some(ret) => ret.fn_type(&params, false),
            None => self.ctx.void_type().fn_type(&params, false),
        };
        let value = self.module.add_function(&function.symbol, fn_type, Some(Linkage::Internal));
        self.functions.insert(function.symbol.clone(), value);
    }

    /// The C `main`: runs the program's `main`, or the test named by the first argument.
    fn entry(&mut self, entry: &Entry) -> G<()> {
        let i32t = self.ctx.i32_type();
        let fn_type = i32t.fn_type(&[i32t.into(), self.ptr().into()], false);
        match entry {
            Entry::None => Ok(()),
            Entry::Main(symbol) => {
                let main = self.module.add_function("main", fn_type, Some(Linkage::External));
                let block = self.ctx.append_basic_block(main, "entry");
                self.builder.position_at_end(block);
                self.debug_entry(main);
                let target = self.functions[symbol];
                let call = self.builder.build_call(target, &[], "status")?;
                let status = match call.try_as_basic_value() {
                    ValueKind::Basic(value) => value.into_int_value(),
                    _ => i32t.const_zero(),
                };
                self.builder.build_return(Some(&status))?;
                Ok(())
            }
            Entry::Tests(symbols) => {
                let main = self.module.add_function("main", fn_type, Some(Linkage::External));
                let block = self.ctx.append_basic_block(main, "entry");
                self.builder.position_at_end(block);
                self.debug_entry(main);
                let argc = main.get_nth_param(0).expect("argc").into();
                let argv = main.get_nth_param(1).expect("argv").into();
                let count = self.ctx.i64_type().const_int(symbols.len() as u64, false).into();
                let index = self.builder.build_call(self.rt("cairn_rt_test_index"), &[argc, argv, count], "index")?;
                let ValueKind::Basic(index) = index.try_as_basic_value() else { unreachable!("an i64 result") };
                let done = self.ctx.append_basic_block(main, "done");
                let mut cases = Vec::new();
                for (i, symbol) in symbols.iter().enumerate() {
                    let case = self.ctx.append_basic_block(main, "test");
                    self.builder.position_at_end(case);
                    self.builder.build_call(self.functions[symbol], &[], "")?;
                    self.builder.build_unconditional_branch(done)?;
                    cases.push((self.ctx.i64_type().const_int(i as u64, false), case));
                }
                self.builder.position_at_end(block);
                self.builder.build_switch(index.into_int_value(), done, &cases)?;
                self.builder.position_at_end(done);
                self.builder.build_return(Some(&i32t.const_zero()))?;
                Ok(())
            }
        }
    }

    // ----- definitions ---------------------------------------------------------------------

    fn define(&mut self, mir: &Function) -> G<()> {
        let function = self.functions[&mir.symbol];
        let scope = self.debug_function(mir, function);
        let entry = self.ctx.append_basic_block(function, "entry");
        self.builder.position_at_end(entry);
        if let Some(scope) = scope {
            let site = (self.site)(mir, None);
            let location = self
                .debug
                .as_ref()
                .map(|d| d.builder.create_debug_location(self.ctx, site.line.max(1), 0, scope, None));
            if let Some(location) = location {
                self.builder.set_current_debug_location(location);
            }
        }
        let mut slots = Vec::with_capacity(mir.locals.len());
        for (i, local) in mir.locals.iter().enumerate() {
            let slot = self.builder.build_alloca(self.basic(&local.ty), &format!("l{i}"))?;
            slots.push(slot);
        }
        for i in 0..mir.params {
            let value = function.get_nth_param(i).expect("a parameter");
            self.builder.build_store(slots[i as usize], value)?;
        }
        let blocks: Vec<BasicBlock> =
            (0..mir.blocks.len()).map(|i| self.ctx.append_basic_block(function, &format!("bb{i}"))).collect();
        self.builder.build_unconditional_branch(blocks[0])?;
        let mut state = FnState { mir, function, slots, blocks, overflow: None, scope };
        for (i, block) in mir.blocks.iter().enumerate() {
            self.builder.position_at_end(state.blocks[i]);
            state.overflow = None;
            for (inst, anchor) in block.insts.iter().zip(&block.anchors) {
                self.locate(&state, *anchor);
                self.inst(&mut state, inst)?;
            }
            self.locate(&state, block.term_anchor);
            self.terminator(&mut state, &block.term)?;
        }
        Ok(())
    }

    fn terminator(&mut self, s: &mut FnState<'ctx, '_>, term: &Terminator) -> G<()> {
        let blocks = s.blocks.clone();
        let block = |b: &BlockId| blocks[b.0 as usize];
        match term {
            Terminator::Goto(b) => {
                self.builder.build_unconditional_branch(block(b))?;
            }
            Terminator::Branch(c, t, e) => {
                let c = self.operand(s, c)?.into_int_value();
                self.builder.build_conditional_branch(c, block(t), block(e))?;
            }
            Terminator::Switch(v, cases, default) => {
                let v = self.operand(s, v)?.into_int_value();
                let cases: Vec<(IntValue, BasicBlock)> =
                    cases.iter().map(|(k, b)| (v.get_type().const_int(*k, false), block(b))).collect();
                self.builder.build_switch(v, block(default), &cases)?;
            }
            Terminator::Return(value) => match value {
                Some(v) => {
                    let v = self.operand(s, v)?;
                    self.builder.build_return(Some(&v))?;
                }
                None => {
                    self.builder.build_return(None)?;
                }
            },
            Terminator::Unreachable => {
                self.builder.build_unreachable()?;
            }
        }
        Ok(())
    }

    fn inst(&mut self, s: &mut FnState<'ctx, '_>, inst: &Inst) -> G<()> {
        match inst {
            Inst::Assign(place, value) => self.assign(s, place, value),
            Inst::Guard(guard) => self.guard(s, guard),
            Inst::Call { dst, callee, args } => {
                let target = self.functions[callee];
                let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.operand(s, arg)?.into());
                }
                let call = self.builder.build_call(target, &values, "")?;
                if let (Some(dst), ValueKind::Basic(value)) = (dst, call.try_as_basic_value()) {
                    let (ptr, _) = self.place(s, dst)?;
                    self.builder.build_store(ptr, value)?;
                }
                s.overflow = None;
                Ok(())
            }
            Inst::Print { stream, newline, args } => self.print(s, *stream, *newline, args),
        }
    }

    // ----- places and operands -------------------------------------------------------------

    /// The address of a place and its type (`Function::place_ty`'s, one projection at a time).
    fn place(&mut self, s: &mut FnState<'ctx, '_>, place: &Place) -> G<(PointerValue<'ctx>, MTy)> {
        let mut ptr = s.slots[place.local.0 as usize];
        let mut ty = s.mir.local(place.local).ty.clone();
        for proj in &place.proj {
            let Some(next_ty) = ty.project(proj) else { unreachable!("the verifier rejects {proj:?} on {ty}") };
            ptr = match proj {
                Proj::Field(i) => {
                    let st = self.basic(&ty).into_struct_type();
                    self.builder.build_struct_gep(st, ptr, *i, "field")?
                }
                Proj::Index(index) if matches!(ty, MTy::View(_)) => {
                    let view = self.builder.build_load(self.view_type(), ptr, "view")?.into_struct_value();
                    let data = self.builder.build_extract_value(view, 0, "data")?.into_pointer_value();
                    let i = self.operand(s, index)?.into_int_value();
                    let elem_ty = self.basic(&next_ty);
                    // SAFETY: the bounds guard before this element access keeps the index in range.
                    unsafe { self.builder.build_in_bounds_gep(elem_ty, data, &[i], "elem")? }
                }
                Proj::Index(index) => {
                    let i = self.operand(s, index)?.into_int_value();
                    let array_ty = self.basic(&ty);
                    let zero = self.ctx.i64_type().const_zero();
                    // SAFETY: the bounds guard before this element access keeps the index in range.
                    unsafe { self.builder.build_in_bounds_gep(array_ty, ptr, &[zero, i], "elem")? }
                }
                Proj::Deref => self.builder.build_load(self.ptr(), ptr, "deref")?.into_pointer_value(),
                Proj::Payload(_) => {
                    let st = self.sum_type(&ty);
                    self.builder.build_struct_gep(st, ptr, 1, "payload")?
                }
            };
            ty = next_ty;
        }
        Ok((ptr, ty))
    }

    fn operand_ty(&self, s: &FnState<'ctx, '_>, operand: &Operand) -> MTy {
        match operand {
            Operand::Const(Const::Int(_, i)) => MTy::Int(*i),
            Operand::Const(Const::Float(_, f)) => MTy::Float(*f),
            Operand::Const(Const::Bool(_)) => MTy::Bool,
            Operand::Const(Const::Str(_)) => MTy::View(Arc::new(MTy::Int(IntTy::U8))),
            Operand::Const(Const::Tag(_, n)) => MTy::Enum { name: Arc::from(""), variants: *n },
            Operand::Copy(place) => {
                s.mir.place_ty(place).unwrap_or_else(|| unreachable!("the verifier rejects the place {place}"))
            }
        }
    }

    fn operand(&mut self, s: &mut FnState<'ctx, '_>, operand: &Operand) -> G<BasicValueEnum<'ctx>> {
        match operand {
            Operand::Copy(place) => {
                let (ptr, ty) = self.place(s, place)?;
                self.builder.build_load(self.basic(&ty), ptr, "v")
            }
            Operand::Const(c) => Ok(self.constant(c)),
        }
    }

    fn constant(&mut self, c: &Const) -> BasicValueEnum<'ctx> {
        match c {
            Const::Int(v, i) => self.int(*i).const_int(*v as u64, i.signed()).into(),
            Const::Float(bits, FloatTy::F32) => {
                self.ctx.f32_type().const_float(f32::from_bits(*bits as u32) as f64).into()
            }
            Const::Float(bits, FloatTy::F64) => self.ctx.f64_type().const_float(f64::from_bits(*bits)).into(),
            Const::Bool(b) => self.ctx.bool_type().const_int(u64::from(*b), false).into(),
            Const::Tag(t, _) => self.ctx.i32_type().const_int(u64::from(*t), false).into(),
            Const::Str(bytes) => {
                let data = self.bytes(bytes);
                let len = self.ctx.i64_type().const_int(bytes.len() as u64, false);
                self.view_type().const_named_struct(&[data.into(), len.into()]).into()
            }
        }
    }

    /// A private constant holding `bytes` (NUL-terminated, so it can also be a C string).
    fn bytes(&mut self, bytes: &[u8]) -> PointerValue<'ctx> {
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

    // ----- assignments ---------------------------------------------------------------------

    fn assign(&mut self, s: &mut FnState<'ctx, '_>, place: &Place, value: &Rvalue) -> G<()> {
        match value {
            Rvalue::Zeroed => {
                // A memset: a store of a large zero aggregate costs LLVM more than linear time.
                let (ptr, ty) = self.place(s, place)?;
                let size = self.basic(&ty).size_of().expect("a sized type");
                self.builder.build_memset(ptr, 8, self.ctx.i8_type().const_zero(), size)?;
                Ok(())
            }
            Rvalue::Variant(ty, index, payload) => {
                let payload = match payload {
                    Some(p) => Some(self.operand(s, p)?),
                    None => None,
                };
                let (ptr, _) = self.place(s, place)?;
                let st = self.sum_type(ty);
                self.builder.build_store(ptr, st.const_zero())?;
                let tag_ptr = self.builder.build_struct_gep(st, ptr, 0, "tag")?;
                self.builder.build_store(tag_ptr, self.ctx.i32_type().const_int(u64::from(*index), false))?;
                if let Some(payload) = payload {
                    let payload_ptr = self.builder.build_struct_gep(st, ptr, 1, "payload")?;
                    self.builder.build_store(payload_ptr, payload)?;
                }
                Ok(())
            }
            Rvalue::Record(ty, fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for f in fields {
                    values.push(self.operand(s, f)?);
                }
                let (ptr, _) = self.place(s, place)?;
                let st = self.basic(ty).into_struct_type();
                for (i, v) in values.into_iter().enumerate() {
                    let field = self.builder.build_struct_gep(st, ptr, i as u32, "field")?;
                    self.builder.build_store(field, v)?;
                }
                Ok(())
            }
            other => {
                let value = self.rvalue(s, other)?;
                let (ptr, _) = self.place(s, place)?;
                self.builder.build_store(ptr, value)?;
                Ok(())
            }
        }
    }

    fn rvalue(&mut self, s: &mut FnState<'ctx, '_>, value: &Rvalue) -> G<BasicValueEnum<'ctx>> {
        match value {
            Rvalue::Use(op) => self.operand(s, op),
            Rvalue::Binary(op, a, b) => self.binary(s, *op, a, b),
            Rvalue::Unary(op, a) => self.unary(s, *op, a),
            Rvalue::Cast(to, a) => self.cast(s, to, a),
            Rvalue::Tag(place) => {
                let (ptr, ty) = self.place(s, place)?;
                match ty {
                    MTy::Sum { .. } => {
                        let st = self.sum_type(&ty);
                        let tag = self.builder.build_struct_gep(st, ptr, 0, "tag")?;
                        self.builder.build_load(self.ctx.i32_type(), tag, "tag")
                    }
                    _ => self.builder.build_load(self.ctx.i32_type(), ptr, "tag"),
                }
            }
            Rvalue::Len(place) => {
                let (ptr, ty) = self.place(s, place)?;
                match ty {
                    MTy::Array(_, n) => Ok(self.ctx.i64_type().const_int(n, false).into()),
                    _ => {
                        let view = self.builder.build_load(self.view_type(), ptr, "view")?.into_struct_value();
                        self.builder.build_extract_value(view, 1, "len")
                    }
                }
            }
            Rvalue::View(place, bounds) => {
                let bounds = match bounds {
                    Some((lo, hi)) => {
                        Some((self.operand(s, lo)?.into_int_value(), self.operand(s, hi)?.into_int_value()))
                    }
                    None => None,
                };
                let (ptr, ty) = self.place(s, place)?;
                let (data, len, elem) = match &ty {
                    MTy::Array(elem, n) => (ptr, self.ctx.i64_type().const_int(*n, false), (**elem).clone()),
                    MTy::View(elem) => {
                        let view = self.builder.build_load(self.view_type(), ptr, "view")?.into_struct_value();
                        let data = self.builder.build_extract_value(view, 0, "data")?.into_pointer_value();
                        let len = self.builder.build_extract_value(view, 1, "len")?.into_int_value();
                        (data, len, (**elem).clone())
                    }
                    other => unreachable!("a view of {other}"),
                };
                let (data, len) = match bounds {
                    Some((lo, hi)) => {
                        let elem_ty = self.basic(&elem);
                        // SAFETY: the part's guard established lo <= hi <= len before this view.
                        let start = unsafe { self.builder.build_in_bounds_gep(elem_ty, data, &[lo], "part")? };
                        (start, self.builder.build_int_sub(hi, lo, "part_len")?)
                    }
                    None => (data, len),
                };
                let view = self.view_type().get_undef();
                let view = self.builder.build_insert_value(view, data, 0, "view")?;
                let view = self.builder.build_insert_value(view, len, 1, "view")?;
                Ok(view.as_basic_value_enum())
            }
            Rvalue::Ref(place) => Ok(self.place(s, place)?.0.into()),
            Rvalue::Select(c, a, b) => {
                let c = self.operand(s, c)?.into_int_value();
                let a = self.operand(s, a)?;
                let b = self.operand(s, b)?;
                self.builder.build_select(c, a, b, "select")
            }
            Rvalue::Zeroed | Rvalue::Record(..) | Rvalue::Variant(..) => unreachable!("stored by `assign` directly"),
        }
    }

    fn binary(&mut self, s: &mut FnState<'ctx, '_>, op: BinOp, a: &Operand, b: &Operand) -> G<BasicValueEnum<'ctx>> {
        if let Some((cached_op, x, y, value)) = &s.overflow
            && *cached_op == op
            && x == a
            && y == b
        {
            let value = *value;
            s.overflow = None;
            return Ok(value.into());
        }
        let ty = self.operand_ty(s, a);
        let x = self.operand(s, a)?;
        let y = self.operand(s, b)?;
        let bd = &self.builder;
        match ty {
            MTy::Float(_) => {
                let (x, y) = (x.into_float_value(), y.into_float_value());
                let cmp = |p| bd.build_float_compare(p, x, y, "cmp").map(|v| v.into());
                match op {
                    BinOp::Add => Ok(bd.build_float_add(x, y, "fadd")?.into()),
                    BinOp::Sub => Ok(bd.build_float_sub(x, y, "fsub")?.into()),
                    BinOp::Mul => Ok(bd.build_float_mul(x, y, "fmul")?.into()),
                    BinOp::Div => Ok(bd.build_float_div(x, y, "fdiv")?.into()),
                    BinOp::Rem => Ok(bd.build_float_rem(x, y, "frem")?.into()),
                    BinOp::Eq => cmp(FloatPredicate::OEQ),
                    BinOp::Ne => cmp(FloatPredicate::UNE),
                    BinOp::Lt => cmp(FloatPredicate::OLT),
                    BinOp::Le => cmp(FloatPredicate::OLE),
                    BinOp::Gt => cmp(FloatPredicate::OGT),
                    BinOp::Ge => cmp(FloatPredicate::OGE),
                    other => unreachable!("{other:?} on floats"),
                }
            }
            _ => {
                let signed = matches!(ty, MTy::Int(i) if i.signed());
                let (x, y) = (x.into_int_value(), y.into_int_value());
                let cmp = |signed_p, unsigned_p| {
                    bd.build_int_compare(if signed { signed_p } else { unsigned_p }, x, y, "cmp").map(|v| v.into())
                };
                match op {
                    BinOp::Add => Ok(bd.build_int_add(x, y, "add")?.into()),
                    BinOp::Sub => Ok(bd.build_int_sub(x, y, "sub")?.into()),
                    BinOp::Mul => Ok(bd.build_int_mul(x, y, "mul")?.into()),
                    BinOp::Div if signed => Ok(bd.build_int_signed_div(x, y, "div")?.into()),
                    BinOp::Div => Ok(bd.build_int_unsigned_div(x, y, "div")?.into()),
                    BinOp::Rem if signed => Ok(bd.build_int_signed_rem(x, y, "rem")?.into()),
                    BinOp::Rem => Ok(bd.build_int_unsigned_rem(x, y, "rem")?.into()),
                    BinOp::And => Ok(bd.build_and(x, y, "and")?.into()),
                    BinOp::Or => Ok(bd.build_or(x, y, "or")?.into()),
                    BinOp::Xor => Ok(bd.build_xor(x, y, "xor")?.into()),
                    BinOp::Shl | BinOp::Shr => {
                        let count = bd.build_int_cast_sign_flag(y, x.get_type(), false, "count")?;
                        if op == BinOp::Shl {
                            Ok(bd.build_left_shift(x, count, "shl")?.into())
                        } else {
                            Ok(bd.build_right_shift(x, count, signed, "shr")?.into())
                        }
                    }
                    BinOp::Eq => cmp(IntPredicate::EQ, IntPredicate::EQ),
                    BinOp::Ne => cmp(IntPredicate::NE, IntPredicate::NE),
                    BinOp::Lt => cmp(IntPredicate::SLT, IntPredicate::ULT),
                    BinOp::Le => cmp(IntPredicate::SLE, IntPredicate::ULE),
                    BinOp::Gt => cmp(IntPredicate::SGT, IntPredicate::UGT),
                    BinOp::Ge => cmp(IntPredicate::SGE, IntPredicate::UGE),
                    BinOp::Min | BinOp::Max => {
                        let less = bd.build_int_compare(
                            if signed { IntPredicate::SLT } else { IntPredicate::ULT },
                            x,
                            y,
                            "less",
                        )?;
                        let (first, second) = if op == BinOp::Min { (x, y) } else { (y, x) };
                        Ok(bd.build_select(less, first, second, "minmax")?)
                    }
                }
            }
        }
    }

    fn unary(&mut self, s: &mut FnState<'ctx, '_>, op: UnOp, a: &Operand) -> G<BasicValueEnum<'ctx>> {
        let ty = self.operand_ty(s, a);
        let x = self.operand(s, a)?;
        match (op, &ty) {
            (UnOp::Neg, MTy::Float(_)) => Ok(self.builder.build_float_neg(x.into_float_value(), "fneg")?.into()),
            (UnOp::Neg, _) => Ok(self.builder.build_int_neg(x.into_int_value(), "neg")?.into()),
            (UnOp::Not, _) | (UnOp::BitNot, _) => Ok(self.builder.build_not(x.into_int_value(), "not")?.into()),
            (UnOp::Abs, MTy::Int(_)) => {
                let x = x.into_int_value();
                let negative =
                    self.builder.build_int_compare(IntPredicate::SLT, x, x.get_type().const_zero(), "neg")?;
                let negated = self.builder.build_int_neg(x, "negated")?;
                Ok(self.builder.build_select(negative, negated, x, "abs")?)
            }
            (UnOp::ToBits, MTy::Float(f)) => {
                let target = if *f == FloatTy::F32 { self.ctx.i32_type() } else { self.ctx.i64_type() };
                self.builder.build_bit_cast(x, target, "bits")
            }
            (op, MTy::Float(_)) => {
                let name = match op {
                    UnOp::Abs => "llvm.fabs",
                    UnOp::Sqrt => "llvm.sqrt",
                    UnOp::Floor => "llvm.floor",
                    UnOp::Ceil => "llvm.ceil",
                    _ => "llvm.trunc",
                };
                self.float_intrinsic(name, x)
            }
            (op, other) => unreachable!("{op:?} on {other}"),
        }
    }

    fn float_intrinsic(&mut self, name: &str, x: BasicValueEnum<'ctx>) -> G<BasicValueEnum<'ctx>> {
        let intrinsic = Intrinsic::find(name).expect("an LLVM float intrinsic");
        let declaration =
            intrinsic.get_declaration(&self.module, &[x.get_type()]).expect("the intrinsic's declaration");
        let call = self.builder.build_call(declaration, &[x.into()], "f")?;
        match call.try_as_basic_value() {
            ValueKind::Basic(v) => Ok(v),
            _ => unreachable!("a float result"),
        }
    }

    fn cast(&mut self, s: &mut FnState<'ctx, '_>, to: &MTy, a: &Operand) -> G<BasicValueEnum<'ctx>> {
        let from = self.operand_ty(s, a);
        let x = self.operand(s, a)?;
        let bd = &self.builder;
        match (&from, to) {
            (MTy::Int(f), MTy::Int(t)) => {
                Ok(bd.build_int_cast_sign_flag(x.into_int_value(), self.int(*t), f.signed(), "conv")?.into())
            }
            (MTy::Int(f), MTy::Float(t)) => {
                let target = if *t == FloatTy::F32 { self.ctx.f32_type() } else { self.ctx.f64_type() };
                if f.signed() {
                    Ok(bd.build_signed_int_to_float(x.into_int_value(), target, "conv")?.into())
                } else {
                    Ok(bd.build_unsigned_int_to_float(x.into_int_value(), target, "conv")?.into())
                }
            }
            (MTy::Float(_), MTy::Int(t)) => {
                if t.signed() {
                    Ok(bd.build_float_to_signed_int(x.into_float_value(), self.int(*t), "conv")?.into())
                } else {
                    Ok(bd.build_float_to_unsigned_int(x.into_float_value(), self.int(*t), "conv")?.into())
                }
            }
            (MTy::Float(FloatTy::F32), MTy::Float(FloatTy::F64)) => {
                Ok(bd.build_float_ext(x.into_float_value(), self.ctx.f64_type(), "conv")?.into())
            }
            (MTy::Float(FloatTy::F64), MTy::Float(FloatTy::F32)) => {
                Ok(bd.build_float_trunc(x.into_float_value(), self.ctx.f32_type(), "conv")?.into())
            }
            _ => Ok(x),
        }
    }

    // ----- guards --------------------------------------------------------------------------

    /// The message a failing guard writes: `<kind> guard failed at FILE:LINE:COLUMN`.
    fn site_text(&self, s: &FnState<'ctx, '_>, guard: &Guard) -> String {
        let site = (self.site)(s.mir, guard.at.map(Anchor::Expr));
        match guard.kind {
            GuardKind::Assert => match site.file {
                Some(file) => format!("assertion failed at {file}:{}", site.line),
                None => format!("assertion failed in {}", s.mir.name),
            },
            kind => match site.file {
                Some(file) => format!("{} guard failed at {file}:{}:{}", kind.name(), site.line, site.column),
                None => format!("{} guard failed in {}", kind.name(), s.mir.name),
            },
        }
    }

    /// Branches to a trap block when `failed` holds; continues in a fresh block.
    fn trap_if(
        &mut self,
        s: &mut FnState<'ctx, '_>,
        failed: IntValue<'ctx>,
        call: impl FnOnce(&mut Self) -> G<()>,
    ) -> G<()> {
        let trap = self.ctx.append_basic_block(s.function, "trap");
        let cont = self.ctx.append_basic_block(s.function, "ok");
        self.builder.build_conditional_branch(failed, trap, cont)?;
        self.builder.position_at_end(trap);
        call(self)?;
        self.builder.build_unreachable()?;
        self.builder.position_at_end(cont);
        Ok(())
    }

    fn guard(&mut self, s: &mut FnState<'ctx, '_>, guard: &Guard) -> G<()> {
        if guard.elided && !self.options.keep_guards {
            self.guards_elided += 1;
            return Ok(());
        }
        self.guards_emitted += 1;
        let message = self.site_text(s, guard);
        let text = self.bytes(message.as_bytes());
        let trap = self.rt("cairn_rt_trap");
        let plain = |cg: &mut Self| -> G<()> {
            cg.builder.build_call(trap, &[text.into()], "")?;
            Ok(())
        };
        match &guard.check {
            Check::NoOverflow(BinOp::Mul, ty, a, b)
                if !ty.signed()
                    && (matches!(b, Operand::Const(Const::Int(c, _)) if *c > 1)
                        || matches!(a, Operand::Const(Const::Int(c, _)) if *c > 1)) =>
            {
                // `x * c` overflows exactly when `x > MAX / c`: a compare, and the multiply after it
                // can be a plain (no-unsigned-wrap) one, which LLVM turns into shifts and adds.
                let (variable, c) = match (a, b) {
                    (_, Operand::Const(Const::Int(c, _))) => (a, *c),
                    (Operand::Const(Const::Int(c, _)), _) => (b, *c),
                    _ => unreachable!("matched above"),
                };
                let x = self.operand(s, variable)?.into_int_value();
                let max = if ty.bits() == 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
                let limit = x.get_type().const_int(max / (c as u64), false);
                let failed = self.builder.build_int_compare(IntPredicate::UGT, x, limit, "too_big")?;
                self.trap_if(s, failed, plain)?;
                let c = x.get_type().const_int(c as u64, false);
                let value = self.builder.build_int_nuw_mul(x, c, "mul")?;
                s.overflow = Some((BinOp::Mul, a.clone(), b.clone(), value));
                Ok(())
            }
            Check::NoOverflow(op, ty, a, b) => {
                let x = self.operand(s, a)?;
                let y = self.operand(s, b)?;
                let name = match (op, ty.signed()) {
                    (BinOp::Add, true) => "llvm.sadd.with.overflow",
                    (BinOp::Add, false) => "llvm.uadd.with.overflow",
                    (BinOp::Sub, true) => "llvm.ssub.with.overflow",
                    (BinOp::Sub, false) => "llvm.usub.with.overflow",
                    (BinOp::Mul, true) => "llvm.smul.with.overflow",
                    _ => "llvm.umul.with.overflow",
                };
                let intrinsic = Intrinsic::find(name).expect("an overflow intrinsic");
                let declaration =
                    intrinsic.get_declaration(&self.module, &[x.get_type()]).expect("the intrinsic's declaration");
                let call = self.builder.build_call(declaration, &[x.into(), y.into()], "checked")?;
                let ValueKind::Basic(pair) = call.try_as_basic_value() else { unreachable!("a pair") };
                let pair = pair.into_struct_value();
                let value = self.builder.build_extract_value(pair, 0, "value")?.into_int_value();
                let overflow = self.builder.build_extract_value(pair, 1, "overflow")?.into_int_value();
                self.trap_if(s, overflow, plain)?;
                s.overflow = Some((*op, a.clone(), b.clone(), value));
                Ok(())
            }
            Check::NegNoOverflow(ty, a) => {
                let x = self.operand(s, a)?.into_int_value();
                let failed = if ty.signed() {
                    let min = x.get_type().const_int(1u64 << (ty.bits() - 1), false);
                    self.builder.build_int_compare(IntPredicate::EQ, x, min, "min")?
                } else {
                    self.builder.build_int_compare(IntPredicate::NE, x, x.get_type().const_zero(), "nonzero")?
                };
                self.trap_if(s, failed, plain)
            }
            Check::Division(ty, a, b) => {
                let x = self.operand(s, a)?.into_int_value();
                let y = self.operand(s, b)?.into_int_value();
                let zero = self.builder.build_int_compare(IntPredicate::EQ, y, y.get_type().const_zero(), "zero")?;
                let failed = if ty.signed() {
                    let min = x.get_type().const_int(1u64 << (ty.bits() - 1), false);
                    let is_min = self.builder.build_int_compare(IntPredicate::EQ, x, min, "min")?;
                    let minus_one =
                        self.builder.build_int_compare(IntPredicate::EQ, y, y.get_type().const_all_ones(), "m1")?;
                    let both = self.builder.build_and(is_min, minus_one, "both")?;
                    self.builder.build_or(zero, both, "failed")?
                } else {
                    zero
                };
                self.trap_if(s, failed, plain)
            }
            Check::Fits(from, to, a) => {
                let x = self.operand(s, a)?;
                let failed = self.fits_failed(from, to, x)?;
                self.trap_if(s, failed, plain)
            }
            Check::ShiftCount(ty, k) => {
                let k = self.operand(s, k)?.into_int_value();
                let bits = k.get_type().const_int(u64::from(ty.bits()), false);
                let failed = self.builder.build_int_compare(IntPredicate::UGE, k, bits, "wide")?;
                self.trap_if(s, failed, plain)
            }
            Check::InBounds(i, n) => {
                let i = self.operand(s, i)?.into_int_value();
                let n = self.operand(s, n)?.into_int_value();
                let failed = self.builder.build_int_compare(IntPredicate::UGE, i, n, "out")?;
                self.trap_if(s, failed, plain)
            }
            Check::PartInBounds(lo, hi, n) => {
                let lo = self.operand(s, lo)?.into_int_value();
                let hi = self.operand(s, hi)?.into_int_value();
                let n = self.operand(s, n)?.into_int_value();
                let reversed = self.builder.build_int_compare(IntPredicate::UGT, lo, hi, "reversed")?;
                let beyond = self.builder.build_int_compare(IntPredicate::UGT, hi, n, "beyond")?;
                let failed = self.builder.build_or(reversed, beyond, "failed")?;
                self.trap_if(s, failed, plain)
            }
            Check::PartLength(lo, hi, n) => {
                let lo = self.operand(s, lo)?.into_int_value();
                let hi = self.operand(s, hi)?.into_int_value();
                let n = self.operand(s, n)?.into_int_value();
                let length = self.builder.build_int_sub(hi, lo, "length")?;
                let failed = self.builder.build_int_compare(IntPredicate::NE, length, n, "wrong")?;
                self.trap_if(s, failed, plain)
            }
            Check::Unreachable => {
                plain(self)?;
                // The block's own terminator (unreachable) follows.
                Ok(())
            }
            Check::Assert(c, why) => {
                let c = self.operand(s, c)?.into_int_value();
                let failed = self.builder.build_not(c, "failed")?;
                let (why_ptr, why_len) = self.message(why.as_deref());
                let function = self.rt("cairn_rt_assert_failed");
                self.trap_if(s, failed, |cg| {
                    cg.builder.build_call(function, &[text.into(), why_ptr.into(), why_len.into()], "")?;
                    Ok(())
                })
            }
            Check::AssertEq(ty, a, b, why) => {
                let x = self.operand(s, a)?;
                let y = self.operand(s, b)?;
                let equal = self.binary_values_equal(ty, x, y)?;
                let failed = self.builder.build_not(equal, "failed")?;
                let (why_ptr, why_len) = self.message(why.as_deref());
                let i64t = self.ctx.i64_type();
                let i32t = self.ctx.i32_type();
                let (function, x, y): (&str, BasicValueEnum, BasicValueEnum) = match ty {
                    MTy::Int(i) if i.signed() => (
                        "cairn_rt_assert_eq_i64",
                        self.builder.build_int_s_extend_or_bit_cast(x.into_int_value(), i64t, "x")?.into(),
                        self.builder.build_int_s_extend_or_bit_cast(y.into_int_value(), i64t, "y")?.into(),
                    ),
                    MTy::Int(_) => (
                        "cairn_rt_assert_eq_u64",
                        self.builder.build_int_z_extend_or_bit_cast(x.into_int_value(), i64t, "x")?.into(),
                        self.builder.build_int_z_extend_or_bit_cast(y.into_int_value(), i64t, "y")?.into(),
                    ),
                    MTy::Float(FloatTy::F32) => ("cairn_rt_assert_eq_f32", x, y),
                    MTy::Float(FloatTy::F64) => ("cairn_rt_assert_eq_f64", x, y),
                    _ => (
                        "cairn_rt_assert_eq_bool",
                        self.builder.build_int_z_extend(x.into_int_value(), i32t, "x")?.into(),
                        self.builder.build_int_z_extend(y.into_int_value(), i32t, "y")?.into(),
                    ),
                };
                let function = self.rt(function);
                self.trap_if(s, failed, |cg| {
                    cg.builder.build_call(
                        function,
                        &[text.into(), why_ptr.into(), why_len.into(), x.into(), y.into()],
                        "",
                    )?;
                    Ok(())
                })
            }
        }
    }

    fn message(&mut self, why: Option<&[u8]>) -> (PointerValue<'ctx>, IntValue<'ctx>) {
        match why {
            Some(bytes) => (self.bytes(bytes), self.ctx.i64_type().const_int(bytes.len() as u64, false)),
            None => (self.ptr().const_null(), self.ctx.i64_type().const_zero()),
        }
    }

    fn binary_values_equal(&mut self, ty: &MTy, x: BasicValueEnum<'ctx>, y: BasicValueEnum<'ctx>) -> G<IntValue<'ctx>> {
        match ty {
            MTy::Float(_) => {
                self.builder.build_float_compare(FloatPredicate::OEQ, x.into_float_value(), y.into_float_value(), "eq")
            }
            _ => self.builder.build_int_compare(IntPredicate::EQ, x.into_int_value(), y.into_int_value(), "eq"),
        }
    }

    /// True (an `i1`) when `x` of type `from` does not fit `to`.
    fn fits_failed(&mut self, from: &MTy, to: &MTy, x: BasicValueEnum<'ctx>) -> G<IntValue<'ctx>> {
        let MTy::Int(target) = to else { return Ok(self.ctx.bool_type().const_zero()) };
        let (lo, hi) = target.range();
        match from {
            MTy::Int(source) => {
                let x = x.into_int_value();
                let (slo, shi) = source.range();
                let ty = x.get_type();
                let mut failed = self.ctx.bool_type().const_zero();
                if lo > slo {
                    // Below the target's minimum (only possible from a signed source).
                    let bound = ty.const_int(lo as u64, true);
                    let below = self.builder.build_int_compare(IntPredicate::SLT, x, bound, "below")?;
                    failed = self.builder.build_or(failed, below, "failed")?;
                }
                if hi < shi {
                    let bound = ty.const_int(hi as u64, false);
                    let predicate = if source.signed() { IntPredicate::SGT } else { IntPredicate::UGT };
                    let above = self.builder.build_int_compare(predicate, x, bound, "above")?;
                    failed = self.builder.build_or(failed, above, "failed")?;
                }
                Ok(failed)
            }
            MTy::Float(_) => {
                // Truncate toward zero, then compare with the exact powers of two around the
                // range; NaN compares unordered and fails.
                let x = x.into_float_value();
                let truncated = self.float_intrinsic("llvm.trunc", x.into())?.into_float_value();
                let ty = x.get_type();
                let low = ty.const_float(lo as f64);
                let high = ty.const_float((hi as f64) + 1.0);
                let ok_low = self.builder.build_float_compare(FloatPredicate::OGE, truncated, low, "ge")?;
                let ok_high = self.builder.build_float_compare(FloatPredicate::OLT, truncated, high, "lt")?;
                let ok = self.builder.build_and(ok_low, ok_high, "ok")?;
                self.builder.build_not(ok, "failed")
            }
            _ => Ok(self.ctx.bool_type().const_zero()),
        }
    }

    // ----- printing ------------------------------------------------------------------------

    fn print(&mut self, s: &mut FnState<'ctx, '_>, stream: Stream, newline: bool, args: &[PrintArg]) -> G<()> {
        // Every argument is computed before any byte is written.
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.operand(s, &arg.value)?);
        }
        let i64t = self.ctx.i64_type();
        let i32t = self.ctx.i32_type();
        let fd = i32t.const_int(if stream == Stream::Stdout { 1 } else { 2 }, false);
        self.builder.build_call(self.rt("cairn_rt_print_begin"), &[fd.into()], "")?;
        for (arg, value) in args.iter().zip(values) {
            match &arg.ty {
                MTy::Int(_) if arg.char => {
                    let byte = self.builder.build_int_cast_sign_flag(value.into_int_value(), i32t, false, "byte")?;
                    self.builder.build_call(self.rt("cairn_rt_put_byte"), &[byte.into()], "")?;
                }
                MTy::Int(i) if i.signed() => {
                    let v = self.builder.build_int_s_extend_or_bit_cast(value.into_int_value(), i64t, "v")?;
                    self.builder.build_call(self.rt("cairn_rt_put_i64"), &[v.into()], "")?;
                }
                MTy::Int(_) => {
                    let v = self.builder.build_int_z_extend_or_bit_cast(value.into_int_value(), i64t, "v")?;
                    self.builder.build_call(self.rt("cairn_rt_put_u64"), &[v.into()], "")?;
                }
                MTy::Bool => {
                    let v = self.builder.build_int_z_extend(value.into_int_value(), i32t, "v")?;
                    self.builder.build_call(self.rt("cairn_rt_put_bool"), &[v.into()], "")?;
                }
                MTy::Float(FloatTy::F32) => {
                    self.builder.build_call(self.rt("cairn_rt_put_f32"), &[value.into()], "")?;
                }
                MTy::Float(FloatTy::F64) => {
                    self.builder.build_call(self.rt("cairn_rt_put_f64"), &[value.into()], "")?;
                }
                _ => {
                    let view = value.into_struct_value();
                    let data = self.builder.build_extract_value(view, 0, "data")?;
                    let len = self.builder.build_extract_value(view, 1, "len")?;
                    self.builder.build_call(self.rt("cairn_rt_put_bytes"), &[data.into(), len.into()], "")?;
                }
            }
        }
        let newline = i32t.const_int(u64::from(newline), false);
        self.builder.build_call(self.rt("cairn_rt_print_end"), &[fd.into(), newline.into()], "")?;
        s.overflow = None;
        Ok(())
    }
}
