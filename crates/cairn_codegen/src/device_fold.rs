//! The kernel of a device `reduce` (language §25, §36; `Inst::DeviceReduce`).
//!
//! The lane function of a device `reduce` returns the in-order fold of the indices it is given,
//! and the MIR beside it has `fold(a, b)`, the collector's combination with its guard (a checked
//! `+` traps when a sum overflows). The kernel `name(env, n, cell)`:
//!
//! 1. block `b` takes the `per_lane * B` consecutive indices from `b * per_lane * B` (`B` threads a
//!    block), and its thread `t` folds `t`, `t + B`, `t + 2B`, … of them with the lane function
//!    and `fold` (so a warp's loads are adjacent); a thread past the count holds the identity;
//! 2. each warp combines its 32 totals with `fold` over a butterfly of `shfl.sync` (every thread
//!    of the warp takes part: none returns early);
//! 3. each warp's first thread leaves its total in shared memory, and after a barrier the
//!    block's first thread combines the block's warps in order;
//! 4. that thread combines the block's total into `cell` with one atomic: `atom.add/and/or/xor`
//!    and `min`/`max` (signed or not) for integers, `atom.add` for floats, and a compare-and-swap
//!    loop around `fold` for `*`. A checked `+` adds atomically and then calls `fold(old,
//!    total)` only for its guard: unsigned partial sums never decrease, so the first addition
//!    that takes the true running total past the type's maximum is one whose `old + total`
//!    overflows, and none does when the total fits — the trap fires exactly when the in-order
//!    total overflows.
//!
//! The association is a tree (exact for the integer operators; floats may differ from the
//! emulated in-order fold within the language's contract, §41). A guard that fails in a lane
//! stores its number into the trap flag and ends its thread (`exit`); the host then reports it,
//! whatever the other threads of its warp computed.

use cairn_mir::{BinOp, Const, MTy};
use inkwell::AddressSpace;
use inkwell::builder::BuilderError;
use inkwell::module::Linkage;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp, IntPredicate};

use crate::module::ModuleGen;

/// What a device `reduce`'s kernel needs to know of it.
#[derive(Debug, Clone)]
pub(crate) struct FoldSpec {
    /// `fold(a, b)`'s MIR symbol.
    pub(crate) fold: std::sync::Arc<str>,
    pub(crate) op: BinOp,
    pub(crate) checked: bool,
    pub(crate) identity: Const,
    /// The total's type.
    pub(crate) ty: MTy,
}

/// The most warps a block holds (1,024 threads).
const MAX_WARPS: u32 = 32;

type B<T> = Result<T, BuilderError>;

impl<'ctx> ModuleGen<'ctx, '_> {
    /// The kernel `name(env, n, cell)` of the device `reduce` whose lane function is `lane`
    /// (see the file's comment).
    pub(crate) fn fold_kernel(
        &mut self,
        name: &str,
        lane: &str,
        spec: &FoldSpec,
        per_lane: u32,
        env_bytes: u64,
    ) -> B<FunctionValue<'ctx>> {
        let i64t = self.ctx.i64_type();
        let i32t = self.ctx.i32_type();
        let kernel = self.declare_kernel(name, env_bytes, true);
        let ty = self.basic(&spec.ty);
        let identity = self.scalar_constant(&spec.identity).unwrap_or_else(|| ty.const_zero());
        let lane_fn = self.functions[lane];
        let fold_fn = self.functions[&*spec.fold];
        let env = kernel.get_nth_param(0).expect("the environment").into_pointer_value();
        let count = kernel.get_nth_param(1).expect("the count").into_int_value();
        let cell = kernel.get_nth_param(2).expect("the cell").into_pointer_value();

        let entry = self.ctx.append_basic_block(kernel, "entry");
        let head = self.ctx.append_basic_block(kernel, "head");
        let body = self.ctx.append_basic_block(kernel, "each");
        let join = self.ctx.append_basic_block(kernel, "join");
        self.builder.position_at_end(entry);
        let at = self.thread_position()?;
        let (width, thread) = (at.width, at.thread);
        let (block64, width64, thread64) = (at.block64, at.width64, at.thread64);
        let k = i64t.const_int(u64::from(per_lane), false);
        let span = self.builder.build_int_nuw_mul(width64, k, "span")?;
        let first = self.builder.build_int_nuw_mul(block64, span, "first")?;
        let base = self.builder.build_int_nuw_add(first, thread64, "base")?;
        self.builder.build_unconditional_branch(head)?;

        // 1. This thread's indices `base + j * width` for `j < per_lane`, below the count.
        self.builder.position_at_end(head);
        let j = self.builder.build_phi(i64t, "j")?;
        let acc = self.builder.build_phi(ty, "acc")?;
        let j_now = j.as_basic_value().into_int_value();
        let step = self.builder.build_int_nuw_mul(j_now, width64, "step")?;
        let index = self.builder.build_int_nuw_add(base, step, "index")?;
        let more = self.builder.build_int_compare(IntPredicate::ULT, j_now, k, "more")?;
        let inside = self.builder.build_int_compare(IntPredicate::ULT, index, count, "inside")?;
        let go = self.builder.build_and(more, inside, "go")?;
        self.builder.build_conditional_branch(go, body, join)?;
        self.builder.position_at_end(body);
        let after = self.builder.build_int_nuw_add(index, i64t.const_int(1, false), "after")?;
        let own = self.call_value(lane_fn, &[env.into(), index.into(), after.into()], "own")?;
        let acc_now = acc.as_basic_value();
        let folded = self.call_value(fold_fn, &[acc_now.into(), own.into()], "folded")?;
        let j_next = self.builder.build_int_nuw_add(j_now, i64t.const_int(1, false), "j")?;
        self.builder.build_unconditional_branch(head)?;
        j.add_incoming(&[(&i64t.const_zero(), entry), (&j_next, body)]);
        acc.add_incoming(&[(&identity, entry), (&folded, body)]);

        self.builder.position_at_end(join);
        let mut total = acc_now;

        // 2. The warp's totals, by butterfly.
        for offset in [16u64, 8, 4, 2, 1] {
            let other = self.shuffle(total, offset)?;
            total = self.call_value(fold_fn, &[total.into(), other.into()], "warp")?;
        }

        // 3. The block's warps, in order, by its first thread.
        let warps_ty = ty.array_type(MAX_WARPS);
        let shared = self.module.add_global(warps_ty, Some(AddressSpace::from(3u16)), &format!("{name}_warps"));
        shared.set_initializer(&warps_ty.get_undef());
        shared.set_linkage(Linkage::Internal);
        let shared = shared.as_pointer_value();
        let lane_id = self.builder.build_and(thread, i32t.const_int(31, false), "lane_id")?;
        let warp = self.builder.build_right_shift(thread, i32t.const_int(5, false), false, "warp")?;
        let leader = self.builder.build_int_compare(IntPredicate::EQ, lane_id, i32t.const_zero(), "leader")?;
        let store = self.ctx.append_basic_block(kernel, "store");
        let gather = self.ctx.append_basic_block(kernel, "gather");
        self.builder.build_conditional_branch(leader, store, gather)?;
        self.builder.position_at_end(store);
        let slot = self.warp_slot(warps_ty, shared, warp)?;
        self.builder.build_store(slot, total)?;
        self.builder.build_unconditional_branch(gather)?;
        self.builder.position_at_end(gather);
        let barrier = self.intrinsic("llvm.nvvm.barrier0", self.ctx.void_type().fn_type(&[], false));
        self.builder.build_call(barrier, &[], "")?;
        let first = self.builder.build_int_compare(IntPredicate::EQ, thread, i32t.const_zero(), "first")?;
        let combine = self.ctx.append_basic_block(kernel, "combine");
        let done = self.ctx.append_basic_block(kernel, "done");
        self.builder.build_conditional_branch(first, combine, done)?;
        self.builder.position_at_end(combine);
        let warps = self.builder.build_right_shift(width, i32t.const_int(5, false), false, "warps")?;
        let head = self.builder.get_insert_block().expect("a block");
        let body = self.ctx.append_basic_block(kernel, "warps");
        let after = self.ctx.append_basic_block(kernel, "atomic");
        let slot0 = self.warp_slot(warps_ty, shared, i32t.const_zero())?;
        let start = self.builder.build_load(ty, slot0, "warp0")?;
        let more = self.builder.build_int_compare(IntPredicate::UGT, warps, i32t.const_int(1, false), "more")?;
        self.builder.build_conditional_branch(more, body, after)?;
        self.builder.position_at_end(body);
        let w = self.builder.build_phi(i32t, "w")?;
        let acc = self.builder.build_phi(ty, "acc")?;
        let slot = self.warp_slot(warps_ty, shared, w.as_basic_value().into_int_value())?;
        let value = self.builder.build_load(ty, slot, "warp_total")?;
        let folded = self.call_value(fold_fn, &[acc.as_basic_value().into(), value.into()], "block")?;
        let w_next =
            self.builder.build_int_nuw_add(w.as_basic_value().into_int_value(), i32t.const_int(1, false), "w")?;
        let again = self.builder.build_int_compare(IntPredicate::ULT, w_next, warps, "again")?;
        let body_end = self.builder.get_insert_block().expect("a block");
        w.add_incoming(&[(&i32t.const_int(1, false), head), (&w_next, body_end)]);
        acc.add_incoming(&[(&start, head), (&folded, body_end)]);
        self.builder.build_conditional_branch(again, body, after)?;
        self.builder.position_at_end(after);
        let block_total = self.builder.build_phi(ty, "block_total")?;
        block_total.add_incoming(&[(&start, head), (&folded, body_end)]);

        // 4. Into the cell.
        self.atomic_fold(kernel, spec, fold_fn, cell, block_total.as_basic_value(), done)?;
        self.builder.position_at_end(done);
        self.builder.build_return(None)?;
        Ok(kernel)
    }

    /// The block's total combined into `cell` by one atomic; ends with a branch to `done`.
    fn atomic_fold(
        &mut self,
        kernel: FunctionValue<'ctx>,
        spec: &FoldSpec,
        fold_fn: FunctionValue<'ctx>,
        cell: PointerValue<'ctx>,
        total: BasicValueEnum<'ctx>,
        done: inkwell::basic_block::BasicBlock<'ctx>,
    ) -> B<()> {
        let relaxed = AtomicOrdering::Monotonic;
        let rmw = match (&spec.ty, spec.op) {
            (MTy::Int(_), BinOp::Add) => Some(AtomicRMWBinOp::Add),
            (MTy::Int(_), BinOp::And) => Some(AtomicRMWBinOp::And),
            (MTy::Int(_), BinOp::Or) => Some(AtomicRMWBinOp::Or),
            (MTy::Int(_), BinOp::Xor) => Some(AtomicRMWBinOp::Xor),
            (MTy::Int(i), BinOp::Min) => Some(if i.signed() { AtomicRMWBinOp::Min } else { AtomicRMWBinOp::UMin }),
            (MTy::Int(i), BinOp::Max) => Some(if i.signed() { AtomicRMWBinOp::Max } else { AtomicRMWBinOp::UMax }),
            _ => None,
        };
        if let Some(rmw) = rmw {
            let old = self.builder.build_atomicrmw(rmw, cell, total.into_int_value(), relaxed)?;
            if spec.checked {
                // Only for its guard: `old + total` overflows exactly where the running total
                // first passes the maximum.
                self.call_value(fold_fn, &[old.into(), total.into()], "checked")?;
            }
            self.builder.build_unconditional_branch(done)?;
            return Ok(());
        }
        if let (MTy::Float(_), BinOp::Add) = (&spec.ty, spec.op) {
            // inkwell builds integer read-modify-writes only; LLVM's C API takes a float.
            use inkwell::llvm_sys::LLVMAtomicOrdering;
            use inkwell::llvm_sys::LLVMAtomicRMWBinOp;
            use inkwell::llvm_sys::core::LLVMBuildAtomicRMW;
            use inkwell::values::AsValueRef;
            // SAFETY: the builder is positioned (a block is open), `cell` is a pointer and
            // `total` a float of the cell's type, as `atomicrmw fadd` requires.
            unsafe {
                LLVMBuildAtomicRMW(
                    self.builder.as_mut_ptr(),
                    LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFAdd,
                    cell.as_value_ref(),
                    total.as_value_ref(),
                    LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic,
                    0,
                );
            }
            self.builder.build_unconditional_branch(done)?;
            return Ok(());
        }
        // `*`: a compare-and-swap loop around `fold`, over the cell's bits.
        let ty = total.get_type();
        let bits = self.int_of_width(self.fold_width(ty));
        let as_bits = |this: &mut Self, v: BasicValueEnum<'ctx>| -> B<IntValue<'ctx>> {
            Ok(match v {
                BasicValueEnum::IntValue(i) => i,
                other => this.builder.build_bit_cast(other, bits, "bits")?.into_int_value(),
            })
        };
        let from_bits = |this: &mut Self, v: IntValue<'ctx>| -> B<BasicValueEnum<'ctx>> {
            Ok(if ty.is_int_type() { v.into() } else { this.builder.build_bit_cast(v, ty, "value")? })
        };
        let head = self.builder.get_insert_block().expect("a block");
        let first = self.builder.build_load(bits, cell, "seen")?;
        first.as_instruction_value().map(|load| load.set_volatile(true));
        let retry = self.ctx.append_basic_block(kernel, "retry");
        self.builder.build_unconditional_branch(retry)?;
        self.builder.position_at_end(retry);
        let seen = self.builder.build_phi(bits, "seen")?;
        let current = seen.as_basic_value().into_int_value();
        let value = from_bits(self, current)?;
        let combined = self.call_value(fold_fn, &[value.into(), total.into()], "combined")?;
        let combined = as_bits(self, combined)?;
        let pair = self.builder.build_cmpxchg(cell, current, combined, relaxed, relaxed)?;
        let found = self.builder.build_extract_value(pair, 0, "found")?.into_int_value();
        let swapped = self.builder.build_extract_value(pair, 1, "swapped")?.into_int_value();
        seen.add_incoming(&[(&first, head), (&found, retry)]);
        self.builder.build_conditional_branch(swapped, done, retry)?;
        Ok(())
    }

    /// `v` from the thread `offset` lanes across in the warp's butterfly (`shfl.sync.bfly`
    /// over 32-bit pieces, every thread of the warp taking part).
    fn shuffle(&mut self, v: BasicValueEnum<'ctx>, offset: u64) -> B<BasicValueEnum<'ctx>> {
        let i32t = self.ctx.i32_type();
        let ty = v.get_type();
        let width = self.fold_width(ty);
        let bits_ty = self.int_of_width(width);
        let bits = match v {
            BasicValueEnum::IntValue(i) => i,
            other => self.builder.build_bit_cast(other, bits_ty, "bits")?.into_int_value(),
        };
        let shfl = self.intrinsic(
            "llvm.nvvm.shfl.sync.bfly.i32",
            i32t.fn_type(&[i32t.into(), i32t.into(), i32t.into(), i32t.into()], false),
        );
        let all = i32t.const_all_ones();
        let lane = i32t.const_int(offset, false);
        let clamp = i32t.const_int(31, false);
        let piece = |this: &mut Self, word: IntValue<'ctx>| -> B<IntValue<'ctx>> {
            let got = this.builder.build_call(shfl, &[all.into(), word.into(), lane.into(), clamp.into()], "shfl")?;
            Ok(got.try_as_basic_value().basic().expect("an i32").into_int_value())
        };
        let moved = if width <= 32 {
            let word = self.builder.build_int_z_extend_or_bit_cast(bits, i32t, "word")?;
            let got = piece(self, word)?;
            self.builder.build_int_truncate_or_bit_cast(got, bits_ty, "piece")?
        } else {
            let i64t = self.ctx.i64_type();
            let low = self.builder.build_int_truncate(bits, i32t, "low")?;
            let high = self.builder.build_right_shift(bits, i64t.const_int(32, false), false, "high")?;
            let high = self.builder.build_int_truncate(high, i32t, "high")?;
            let low = piece(self, low)?;
            let high = piece(self, high)?;
            let low = self.builder.build_int_z_extend(low, i64t, "low")?;
            let high = self.builder.build_int_z_extend(high, i64t, "high")?;
            let high = self.builder.build_left_shift(high, i64t.const_int(32, false), "high")?;
            self.builder.build_or(high, low, "both")?
        };
        Ok(if ty.is_int_type() { moved.into() } else { self.builder.build_bit_cast(moved, ty, "value")? })
    }

    /// The width in bits of a total's type (an integer or a float).
    fn fold_width(&self, ty: BasicTypeEnum<'ctx>) -> u32 {
        match ty {
            BasicTypeEnum::IntType(i) => i.get_bit_width(),
            BasicTypeEnum::FloatType(f) if f == self.ctx.f32_type() => 32,
            _ => 64,
        }
    }

    /// The address of warp `warp`'s slot in the block's shared array.
    fn warp_slot(
        &mut self,
        array: inkwell::types::ArrayType<'ctx>,
        shared: PointerValue<'ctx>,
        warp: IntValue<'ctx>,
    ) -> B<PointerValue<'ctx>> {
        let i32t = self.ctx.i32_type();
        // SAFETY: `warp` is below the block's warps, at most `MAX_WARPS` (a block holds at most
        // 1,024 threads: the plan's range and the runtime's launch).
        unsafe { self.builder.build_in_bounds_gep(array, shared, &[i32t.const_zero(), warp], "slot") }
    }

    /// A call whose value is used.
    fn call_value(
        &mut self,
        function: FunctionValue<'ctx>,
        args: &[inkwell::values::BasicMetadataValueEnum<'ctx>],
        name: &str,
    ) -> B<BasicValueEnum<'ctx>> {
        let call = self.builder.build_call(function, args, name)?;
        Ok(call.try_as_basic_value().basic().expect("a function returning its total"))
    }

    /// The declaration of the intrinsic `name` of type `ty`.
    fn intrinsic(&mut self, name: &str, ty: inkwell::types::FunctionType<'ctx>) -> FunctionValue<'ctx> {
        self.module.get_function(name).unwrap_or_else(|| self.module.add_function(name, ty, None))
    }
}
