//! One function's body: its allocas, its blocks and terminators, places and operands. `FnGen`
//! is the state of the function being defined; the instructions' own lowering is in `rvalue.rs`
//! (assignments), `guard.rs`, `call.rs` and `print.rs`, all methods of `FnGen`.
//!
//! Invariant: every MIR local has one `alloca` in the entry block, made before any other
//! instruction (the pipeline promotes them to registers), and parameters are stored into theirs
//! first; MIR block `bbN` is LLVM block `bbN`, entered from `entry` by a branch.
//! Invariant: a place is an address computed through its projections in order, and reading an
//! operand loads from that address; `place` trusts the verifier that every projection applies.

use std::sync::Arc;

use cairn_mir::{BinOp, BlockId, Const, Function, Inst, IntTy, MTy, Operand, Place, Proj, Terminator};
use inkwell::basic_block::BasicBlock;
use inkwell::debug_info::DIScope;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};

use crate::module::{G, ModuleGen};

/// The state of one function being defined.
pub(crate) struct FnGen<'m, 'ctx, 'a> {
    /// The module's generator: builder, types, constants, counters.
    pub(crate) cx: &'m mut ModuleGen<'ctx, 'a>,
    pub(crate) mir: &'m Function,
    pub(crate) function: FunctionValue<'ctx>,
    /// Each local's alloca, by local.
    slots: Vec<PointerValue<'ctx>>,
    /// The LLVM block of each MIR block.
    blocks: Vec<BasicBlock<'ctx>>,
    /// The result of the last overflow guard: reused by the operation right after it.
    pub(crate) overflow: Option<(BinOp, Operand, Operand, IntValue<'ctx>)>,
    /// An overflow guard just left out as proved (`elided`): the operation right after it
    /// cannot wrap, and is emitted with `nuw`/`nsw` so LLVM may rely on that too.
    pub(crate) proved: Option<(BinOp, Operand, Operand)>,
    /// The path condition of the guard being emitted (`Guard::only_if`) and the value on which
    /// it may fail: its trap branch tests it only once the check failed.
    pub(crate) path: Option<(IntValue<'ctx>, bool)>,
    /// The function's debug scope, when debug information is emitted.
    pub(crate) scope: Option<DIScope<'ctx>>,
    /// The message of the guard being emitted (a device trap's number names it).
    pub(crate) message: String,
}

impl ModuleGen<'_, '_> {
    /// Defines a function declared before (`declare`).
    pub(crate) fn define(&mut self, mir: &Function) -> G<()> {
        // A foreign function's body is C's: the linker brings it.
        if mir.kind == cairn_mir::FnKind::Foreign {
            return Ok(());
        }
        let function = self.functions[&mir.symbol];
        let scope = self.debug_function(mir, function);
        let entry = self.ctx.append_basic_block(function, "entry");
        self.builder.position_at_end(entry);
        if let Some(scope) = scope {
            self.locate_function(mir, scope);
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
        let mut fx = FnGen {
            cx: self,
            mir,
            function,
            slots,
            blocks,
            overflow: None,
            proved: None,
            path: None,
            scope,
            message: String::new(),
        };
        for (i, block) in mir.blocks.iter().enumerate() {
            fx.cx.builder.position_at_end(fx.blocks[i]);
            fx.overflow = None;
            fx.proved = None;
            for (inst, anchor) in block.insts.iter().zip(&block.anchors) {
                fx.locate(*anchor);
                fx.inst(inst)?;
            }
            fx.locate(block.term_anchor);
            fx.terminator(&block.term)?;
        }
        Ok(())
    }
}

impl<'ctx> FnGen<'_, 'ctx, '_> {
    /// The address of a place and its type (`Function::place_ty`'s, one projection at a time).
    pub(crate) fn place(&mut self, place: &Place) -> G<(PointerValue<'ctx>, MTy)> {
        let mut ptr = self.slots[place.local.0 as usize];
        let mut ty = self.mir.local(place.local).ty.clone();
        for proj in &place.proj {
            let Some(next_ty) = ty.project(proj) else { unreachable!("the verifier rejects {proj:?} on {ty}") };
            ptr = match proj {
                Proj::Field(i) => {
                    let st = self.cx.basic(&ty).into_struct_type();
                    self.cx.builder.build_struct_gep(st, ptr, *i, "field")?
                }
                Proj::Index(index) if matches!(ty, MTy::View(_) | MTy::Buf(_)) => {
                    let view = self.cx.builder.build_load(self.cx.view_type(), ptr, "view")?.into_struct_value();
                    let data = self.cx.builder.build_extract_value(view, 0, "data")?.into_pointer_value();
                    let i = self.operand(index)?.into_int_value();
                    let elem_ty = self.cx.basic(&next_ty);
                    // SAFETY: the bounds guard before this element access keeps the index in range.
                    unsafe { self.cx.builder.build_in_bounds_gep(elem_ty, data, &[i], "elem")? }
                }
                Proj::Index(index) => {
                    let i = self.operand(index)?.into_int_value();
                    let array_ty = self.cx.basic(&ty);
                    let zero = self.cx.index_type().const_zero();
                    // SAFETY: the bounds guard before this element access keeps the index in range.
                    unsafe { self.cx.builder.build_in_bounds_gep(array_ty, ptr, &[zero, i], "elem")? }
                }
                Proj::Deref => self.cx.builder.build_load(self.cx.ptr(), ptr, "deref")?.into_pointer_value(),
                Proj::Payload(_) => {
                    let st = self.cx.sum_type(&ty);
                    self.cx.builder.build_struct_gep(st, ptr, 1, "payload")?
                }
            };
            ty = next_ty;
        }
        Ok((ptr, ty))
    }

    /// The MIR type of an operand.
    pub(crate) fn operand_ty(&self, operand: &Operand) -> MTy {
        match operand {
            Operand::Const(Const::Int(_, i)) => MTy::Int(*i),
            Operand::Const(Const::Float(_, f)) => MTy::Float(*f),
            Operand::Const(Const::Bool(_)) => MTy::Bool,
            Operand::Const(Const::Str(_)) => MTy::View(Arc::new(MTy::Int(IntTy::U8))),
            Operand::Const(Const::Tag(_, n)) => MTy::Enum { name: Arc::from(""), variants: *n },
            // A code pointer; its signature is the callee's, read where it is called.
            Operand::Const(Const::Fn(_)) => MTy::Fn { params: Arc::from(Vec::new()), ret: Arc::new(MTy::Void) },
            Operand::Copy(place) => {
                self.mir.place_ty(place).unwrap_or_else(|| unreachable!("the verifier rejects the place {place}"))
            }
        }
    }

    /// The value of an operand.
    pub(crate) fn operand(&mut self, operand: &Operand) -> G<BasicValueEnum<'ctx>> {
        match operand {
            Operand::Copy(place) => {
                let (ptr, ty) = self.place(place)?;
                Ok(self.cx.builder.build_load(self.cx.basic(&ty), ptr, "v")?)
            }
            Operand::Const(c) => Ok(self.constant(c)),
        }
    }

    fn inst(&mut self, inst: &Inst) -> G<()> {
        if !matches!(inst, Inst::Assign(..) | Inst::Guard(..)) {
            self.proved = None;
        }
        match inst {
            Inst::Assign(place, value) => {
                let done = self.assign(place, value);
                self.proved = None;
                done
            }
            Inst::Guard(guard) => self.guard(guard),
            Inst::Drop(place) => self.drop_place(place),
            Inst::Call { dst, callee, args } => self.call(dst.as_ref(), callee, args),
            Inst::Print { stream, newline, args } => self.print(*stream, *newline, args),
            Inst::Format { dst, args } => self.format(dst, args),
            Inst::CallIndirect { dst, callee, args } => self.call_indirect(dst.as_ref(), callee, args),
            Inst::Assume(fact) => {
                let fact = self.operand(fact)?;
                let intrinsic = inkwell::intrinsics::Intrinsic::find("llvm.assume").expect("the assume intrinsic");
                let declaration = intrinsic.get_declaration(&self.cx.module, &[]).expect("the intrinsic's declaration");
                self.cx.builder.build_call(declaration, &[fact.into()], "")?;
                Ok(())
            }
            Inst::Transfer { dst, src, device } => self.transfer(dst, src, *device),
            Inst::DeviceReduce { lane, env, count, identity, dest, dest_device, schedule, .. } => {
                // Built for a GPU, the lane function's kernel folds across threads.
                if self.gpu_fold(lane, env, count, identity, dest, *dest_device, schedule)? {
                    return Ok(());
                }
                // Emulated: the in-order fold (language §41), the lane function over every index.
                let zero = Operand::Const(cairn_mir::Const::Int(0, cairn_mir::IntTy::Usize));
                self.call(Some(dest), lane, &[env.clone(), zero, count.clone()])
            }
            Inst::Parallel { lane, env, count, work, schedule } => {
                // A device region built for a GPU launches its kernel instead.
                if self.gpu_launch(lane, env, count, schedule)? {
                    return Ok(());
                }
                // The runtime splits `0..count` into claims and calls `lane(env, lo, hi)` for each.
                let code = self.operand(&Operand::Const(cairn_mir::Const::Fn(lane.clone())))?;
                let env = self.operand(env)?;
                let count = self.operand(count)?;
                let work = self.operand(work)?;
                let i64t = self.cx.ctx.i64_type();
                let grain = i64t.const_int(schedule.grain, false);
                let lanes = self.cx.ctx.i32_type().const_int(u64::from(schedule.lanes), false);
                let run = self.cx.rt("cairn_rt_parallel");
                self.cx.builder.build_call(
                    run,
                    &[code.into(), env.into(), count.into(), work.into(), grain.into(), lanes.into()],
                    "",
                )?;
                Ok(())
            }
        }
    }

    fn terminator(&mut self, term: &Terminator) -> G<()> {
        let blocks = self.blocks.clone();
        let block = |b: &BlockId| blocks[b.0 as usize];
        match term {
            Terminator::Goto(b) => {
                self.cx.builder.build_unconditional_branch(block(b))?;
            }
            Terminator::Branch(c, t, e) => {
                let c = self.operand(c)?.into_int_value();
                self.cx.builder.build_conditional_branch(c, block(t), block(e))?;
            }
            Terminator::Switch(v, cases, default) => {
                let v = self.operand(v)?.into_int_value();
                let cases: Vec<(IntValue, BasicBlock)> =
                    cases.iter().map(|(k, b)| (v.get_type().const_int(*k, false), block(b))).collect();
                self.cx.builder.build_switch(v, block(default), &cases)?;
            }
            Terminator::Return(value) => match value {
                Some(v) => {
                    let v = self.operand(v)?;
                    self.cx.builder.build_return(Some(&v))?;
                }
                None => {
                    self.cx.builder.build_return(None)?;
                }
            },
            Terminator::Unreachable => {
                self.cx.builder.build_unreachable()?;
            }
        }
        Ok(())
    }

    fn constant(&mut self, c: &Const) -> BasicValueEnum<'ctx> {
        match c {
            Const::Int(..) | Const::Float(..) | Const::Bool(_) | Const::Tag(..) => {
                self.cx.scalar_constant(c).expect("a scalar constant")
            }
            Const::Fn(symbol) => self.cx.functions[symbol].as_global_value().as_pointer_value().into(),
            Const::Str(bytes) => {
                let data = self.cx.bytes(bytes);
                let len = self.cx.index_type().const_int(bytes.len() as u64, false);
                self.cx.view_type().const_named_struct(&[data.into(), len.into()]).into()
            }
        }
    }
}
