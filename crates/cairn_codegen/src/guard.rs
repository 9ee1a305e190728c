//! Guards: each non-elided guard (every guard under `keep_guards`) computes its check and
//! branches to a cold trap block that calls a `noreturn` runtime function with the guard's
//! message (on the device, which has no runtime: the trap flag the host reads after the launch,
//! `target::Trap::Flag`), so a failing guard traps before
//! the operation it protects. Also the messages
//! (`<kind> guard failed at FILE:LINE:COLUMN`, `assertion failed at FILE:LINE`) and the range
//! checks of conversions (`fits_failed`).
//!
//! Invariant: a guard's code reads its operands but writes nothing the program sees; the only
//! state it leaves is the overflow result (`FnGen::overflow`) that the guarded operation reuses,
//! and the guard counters of the receipt.

use cairn_mir::{Anchor, BinOp, Check, Const, FloatTy, Guard, GuardKind, MTy, Operand};
use inkwell::AtomicOrdering;
use inkwell::intrinsics::Intrinsic;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue, ValueKind};
use inkwell::{FloatPredicate, IntPredicate};

use crate::function::FnGen;
use crate::module::G;
use crate::target::Trap;

impl<'ctx> FnGen<'_, 'ctx, '_> {
    /// A guard: its check, and a branch to a trap block when the check fails (nothing for an
    /// elided guard unless every guard is kept).
    pub(crate) fn guard(&mut self, guard: &Guard) -> G<()> {
        // A discharged guard is left out only when its facts pass the audit (language §15);
        // one that does not is emitted like any other.
        let audited = guard.facts.is_empty() || cairn_mir::range::audit(&guard.check, &guard.facts);
        self.proved = None;
        if guard.elided && audited && !self.cx.options.keep_guards {
            self.cx.guards_elided += 1;
            if let Check::NoOverflow(op, _, a, b) = &guard.check {
                self.proved = Some((*op, a.clone(), b.clone()));
            }
            return Ok(());
        }
        self.cx.guards_emitted += 1;
        self.path = match &guard.only_if {
            Some((c, v)) => Some((self.operand(c)?.into_int_value(), *v)),
            None => None,
        };
        let message = self.site_text(guard);
        let text = self.cx.bytes(message.as_bytes());
        self.message.clone_from(&message);
        let trap = self.cx.rt("cairn_rt_trap");
        let plain = |cg: &mut Self| -> G<()> {
            cg.cx.builder.build_call(trap, &[text.into()], "")?;
            Ok(())
        };
        let emitted = match &guard.check {
            Check::NoOverflow(BinOp::Mul, ty, a, b)
                if !ty.signed()
                    && (matches!(b, Operand::Const(Const::Int(c, _)) if *c > 1)
                        || matches!(a, Operand::Const(Const::Int(c, _)) if *c > 1)) =>
            {
                // `x * c` overflows exactly when `x > MAX / c`: a compare, and the multiply after it
                // can be a plain (no-unsigned-wrap) one, which LLVM turns into shifts and adds.
                // The constant is the side above 1 (in `8 * 0` both sides are constants).
                let (variable, c) = match (a, b) {
                    (_, Operand::Const(Const::Int(c, _))) if *c > 1 => (a, *c),
                    (Operand::Const(Const::Int(c, _)), _) => (b, *c),
                    _ => unreachable!("matched above"),
                };
                let x = self.operand(variable)?.into_int_value();
                let max = if ty.bits() == 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
                let limit = x.get_type().const_int(max / (c as u64), false);
                let failed = self.cx.builder.build_int_compare(IntPredicate::UGT, x, limit, "too_big")?;
                // Off a speculated guard's path the check may fail: its multiply wraps there
                // (a `nuw` one would be poison, and the next check would branch on it).
                let off_path = self.path.is_some();
                self.trap_if(failed, plain)?;
                let c = x.get_type().const_int(c as u64, false);
                let value = if off_path {
                    self.cx.builder.build_int_mul(x, c, "mul")?
                } else {
                    self.cx.builder.build_int_nuw_mul(x, c, "mul")?
                };
                self.overflow = Some((BinOp::Mul, a.clone(), b.clone(), value));
                Ok(())
            }
            Check::NoOverflow(op, ty, a, b) => {
                let x = self.operand(a)?;
                let y = self.operand(b)?;
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
                    intrinsic.get_declaration(&self.cx.module, &[x.get_type()]).expect("the intrinsic's declaration");
                let call = self.cx.builder.build_call(declaration, &[x.into(), y.into()], "checked")?;
                let ValueKind::Basic(pair) = call.try_as_basic_value() else { unreachable!("a pair") };
                let pair = pair.into_struct_value();
                let value = self.cx.builder.build_extract_value(pair, 0, "value")?.into_int_value();
                let overflow = self.cx.builder.build_extract_value(pair, 1, "overflow")?.into_int_value();
                self.trap_if(overflow, plain)?;
                self.overflow = Some((*op, a.clone(), b.clone(), value));
                Ok(())
            }
            Check::NegNoOverflow(ty, a) => {
                let x = self.operand(a)?.into_int_value();
                let failed = if ty.signed() {
                    let min = x.get_type().const_int(1u64 << (ty.bits() - 1), false);
                    self.cx.builder.build_int_compare(IntPredicate::EQ, x, min, "min")?
                } else {
                    self.cx.builder.build_int_compare(IntPredicate::NE, x, x.get_type().const_zero(), "nonzero")?
                };
                self.trap_if(failed, plain)
            }
            Check::Division(ty, a, b) => {
                let x = self.operand(a)?.into_int_value();
                let y = self.operand(b)?.into_int_value();
                let zero = self.cx.builder.build_int_compare(IntPredicate::EQ, y, y.get_type().const_zero(), "zero")?;
                let failed = if ty.signed() {
                    let min = x.get_type().const_int(1u64 << (ty.bits() - 1), false);
                    let is_min = self.cx.builder.build_int_compare(IntPredicate::EQ, x, min, "min")?;
                    let minus_one =
                        self.cx.builder.build_int_compare(IntPredicate::EQ, y, y.get_type().const_all_ones(), "m1")?;
                    let both = self.cx.builder.build_and(is_min, minus_one, "both")?;
                    self.cx.builder.build_or(zero, both, "failed")?
                } else {
                    zero
                };
                self.trap_if(failed, plain)
            }
            Check::Fits(from, to, a) => {
                let x = self.operand(a)?;
                let failed = self.fits_failed(from, to, x)?;
                self.trap_if(failed, plain)
            }
            Check::ShiftCount(ty, k) => {
                let k = self.operand(k)?.into_int_value();
                let bits = k.get_type().const_int(u64::from(ty.bits()), false);
                let failed = self.cx.builder.build_int_compare(IntPredicate::UGE, k, bits, "wide")?;
                self.trap_if(failed, plain)
            }
            Check::InBounds(i, n) => {
                let i = self.operand(i)?.into_int_value();
                let n = self.operand(n)?.into_int_value();
                let failed = self.cx.builder.build_int_compare(IntPredicate::UGE, i, n, "out")?;
                self.trap_if(failed, plain)
            }
            Check::PartInBounds(lo, hi, n) => {
                let lo = self.operand(lo)?.into_int_value();
                let hi = self.operand(hi)?.into_int_value();
                let n = self.operand(n)?.into_int_value();
                let reversed = self.cx.builder.build_int_compare(IntPredicate::UGT, lo, hi, "reversed")?;
                let beyond = self.cx.builder.build_int_compare(IntPredicate::UGT, hi, n, "beyond")?;
                let failed = self.cx.builder.build_or(reversed, beyond, "failed")?;
                self.trap_if(failed, plain)
            }
            Check::PartLength(lo, hi, n) => {
                let lo = self.operand(lo)?.into_int_value();
                let hi = self.operand(hi)?.into_int_value();
                let n = self.operand(n)?.into_int_value();
                let length = self.cx.builder.build_int_sub(hi, lo, "length")?;
                let failed = self.cx.builder.build_int_compare(IntPredicate::NE, length, n, "wrong")?;
                self.trap_if(failed, plain)
            }
            Check::Callable(f) => {
                let f = self.operand(f)?.into_pointer_value();
                let failed = self.cx.builder.build_is_null(f, "null_fn")?;
                self.trap_if(failed, plain)
            }
            Check::Allocated(buf) => {
                // The runtime answers null for a block it could not make; a Buf of no
                // elements owns none by design.
                let buf = self.operand(buf)?.into_struct_value();
                let data = self.cx.builder.build_extract_value(buf, 0, "data")?.into_pointer_value();
                let len = self.cx.builder.build_extract_value(buf, 1, "len")?.into_int_value();
                let null = self.cx.builder.build_is_null(data, "null")?;
                let some =
                    self.cx.builder.build_int_compare(IntPredicate::NE, len, len.get_type().const_zero(), "some")?;
                let failed = self.cx.builder.build_and(null, some, "no_room")?;
                self.trap_if(failed, plain)
            }
            Check::Unreachable => {
                self.trap(plain)?;
                // The block's own terminator (unreachable) follows.
                Ok(())
            }
            Check::Assert(c, why) => {
                let c = self.operand(c)?.into_int_value();
                let failed = self.cx.builder.build_not(c, "failed")?;
                let (why_ptr, why_len) = self.message(why.as_deref());
                let function = self.cx.rt("cairn_rt_assert_failed");
                self.trap_if(failed, |cg| {
                    cg.cx.builder.build_call(function, &[text.into(), why_ptr.into(), why_len.into()], "")?;
                    Ok(())
                })
            }
            Check::AssertEq(ty, a, b, why) => {
                let x = self.operand(a)?;
                let y = self.operand(b)?;
                let equal = self.binary_values_equal(ty, x, y)?;
                let failed = self.cx.builder.build_not(equal, "failed")?;
                let (why_ptr, why_len) = self.message(why.as_deref());
                let i64t = self.cx.ctx.i64_type();
                let i32t = self.cx.ctx.i32_type();
                let (function, x, y): (&str, BasicValueEnum, BasicValueEnum) = match ty {
                    MTy::Int(i) if i.signed() => (
                        "cairn_rt_assert_eq_i64",
                        self.cx.builder.build_int_s_extend_or_bit_cast(x.into_int_value(), i64t, "x")?.into(),
                        self.cx.builder.build_int_s_extend_or_bit_cast(y.into_int_value(), i64t, "y")?.into(),
                    ),
                    MTy::Int(_) => (
                        "cairn_rt_assert_eq_u64",
                        self.cx.builder.build_int_z_extend_or_bit_cast(x.into_int_value(), i64t, "x")?.into(),
                        self.cx.builder.build_int_z_extend_or_bit_cast(y.into_int_value(), i64t, "y")?.into(),
                    ),
                    MTy::Float(FloatTy::F32) => ("cairn_rt_assert_eq_f32", x, y),
                    MTy::Float(FloatTy::F64) => ("cairn_rt_assert_eq_f64", x, y),
                    _ => (
                        "cairn_rt_assert_eq_bool",
                        self.cx.builder.build_int_z_extend(x.into_int_value(), i32t, "x")?.into(),
                        self.cx.builder.build_int_z_extend(y.into_int_value(), i32t, "y")?.into(),
                    ),
                };
                let function = self.cx.rt(function);
                self.trap_if(failed, |cg| {
                    cg.cx.builder.build_call(
                        function,
                        &[text.into(), why_ptr.into(), why_len.into(), x.into(), y.into()],
                        "",
                    )?;
                    Ok(())
                })
            }
        };
        // A path condition belongs to this guard's trap branch alone, even for a check that
        // traps without one (`unreachable`): none may reach the next guard's.
        self.path = None;
        emitted
    }

    /// The message a failing guard writes: `<kind> guard failed at FILE:LINE:COLUMN`.
    fn site_text(&self, guard: &Guard) -> String {
        let site = (self.cx.site)(self.mir, guard.at.map(Anchor::Expr));
        match guard.kind {
            GuardKind::Assert => match site.file {
                Some(file) => format!("assertion failed at {file}:{}", site.line),
                None => format!("assertion failed in {}", self.mir.name),
            },
            kind => match site.file {
                Some(file) => format!("{} guard failed at {file}:{}:{}", kind.name(), site.line, site.column),
                None => format!("{} guard failed in {}", kind.name(), self.mir.name),
            },
        }
    }

    /// Branches to a trap block when `failed` holds (and the guard's path condition, if it has
    /// one, `FnGen::path`); continues in a fresh block.
    ///
    /// A path condition is tested second, in a block of its own, and the branch on the check
    /// is weighted as almost never taken: a speculated arm's path is data-dependent, so folded
    /// into the check (`failed & odd`) it costs the loop a materialized condition every
    /// iteration, where the check alone is a compare and a branch that predicts perfectly. The
    /// weights keep LLVM's branch folding from merging the two tests back into one.
    fn trap_if(&mut self, failed: IntValue<'ctx>, call: impl FnOnce(&mut Self) -> G<()>) -> G<()> {
        let trap = self.cx.ctx.append_basic_block(self.function, "trap");
        let cont = self.cx.ctx.append_basic_block(self.function, "ok");
        if let Some((condition, on)) = self.path.take() {
            let maybe = self.cx.ctx.append_basic_block(self.function, "maybe");
            let branch = self.cx.builder.build_conditional_branch(failed, maybe, cont)?;
            let i32t = self.cx.ctx.i32_type();
            let weights = self.cx.ctx.metadata_node(&[
                self.cx.ctx.metadata_string("branch_weights").into(),
                i32t.const_int(1, false).into(),
                i32t.const_int(1 << 20, false).into(),
            ]);
            branch
                .set_metadata(weights, self.cx.ctx.get_kind_id("prof"))
                .map_err(|_| crate::module::GenError::Refused("branch weights on a branch"))?;
            self.cx.builder.position_at_end(maybe);
            let (taken, other) = if on { (trap, cont) } else { (cont, trap) };
            self.cx.builder.build_conditional_branch(condition, taken, other)?;
        } else {
            self.cx.builder.build_conditional_branch(failed, trap, cont)?;
        }
        self.cx.builder.position_at_end(trap);
        self.trap(call)?;
        self.cx.builder.build_unreachable()?;
        self.cx.builder.position_at_end(cont);
        Ok(())
    }

    /// Stops the program where the builder stands: with the runtime call `report` builds where
    /// the target has the runtime, else (a device) by raising the trap flag with the number of
    /// the guard being emitted (`FnGen::message`) and ending the thread.
    fn trap(&mut self, report: impl FnOnce(&mut Self) -> G<()>) -> G<()> {
        match self.cx.info.trap {
            Trap::Runtime => report(self),
            Trap::Flag => {
                let messages = &mut self.cx.device_messages;
                let number = match messages.iter().position(|m| *m == self.message) {
                    Some(at) => at + 1,
                    None => {
                        messages.push(self.message.clone());
                        messages.len()
                    }
                };
                let at = self.cx.device_trap_flag();
                let flag = self.cx.builder.build_load(self.cx.ptr(), at, "trap_flag")?.into_pointer_value();
                let i32t = self.cx.ctx.i32_type();
                self.cx.builder.build_cmpxchg(
                    flag,
                    i32t.const_zero(),
                    i32t.const_int(number as u64, false),
                    AtomicOrdering::Monotonic,
                    AtomicOrdering::Monotonic,
                )?;
                // `exit` ends this thread; the other lanes run on, and the host stops the
                // program once the launch is over.
                let exit_ty = self.cx.ctx.void_type().fn_type(&[], false);
                let exit =
                    self.cx.ctx.create_inline_asm(exit_ty, "exit;".into(), String::new(), true, false, None, false);
                self.cx.builder.build_indirect_call(exit_ty, exit, &[], "")?;
                Ok(())
            }
        }
    }

    fn message(&mut self, why: Option<&[u8]>) -> (PointerValue<'ctx>, IntValue<'ctx>) {
        match why {
            Some(bytes) => (self.cx.bytes(bytes), self.cx.ctx.i64_type().const_int(bytes.len() as u64, false)),
            None => (self.cx.ptr().const_null(), self.cx.ctx.i64_type().const_zero()),
        }
    }

    fn binary_values_equal(&mut self, ty: &MTy, x: BasicValueEnum<'ctx>, y: BasicValueEnum<'ctx>) -> G<IntValue<'ctx>> {
        match ty {
            MTy::Float(_) => Ok(self.cx.builder.build_float_compare(
                FloatPredicate::OEQ,
                x.into_float_value(),
                y.into_float_value(),
                "eq",
            )?),
            _ => {
                Ok(self.cx.builder.build_int_compare(IntPredicate::EQ, x.into_int_value(), y.into_int_value(), "eq")?)
            }
        }
    }

    /// True (an `i1`) when `x` of type `from` does not fit `to`.
    fn fits_failed(&mut self, from: &MTy, to: &MTy, x: BasicValueEnum<'ctx>) -> G<IntValue<'ctx>> {
        let MTy::Int(target) = to else { return Ok(self.cx.ctx.bool_type().const_zero()) };
        let (lo, hi) = target.range();
        match from {
            MTy::Int(source) => {
                let x = x.into_int_value();
                let (slo, shi) = source.range();
                let ty = x.get_type();
                let mut failed = self.cx.ctx.bool_type().const_zero();
                if lo > slo {
                    // Below the target's minimum (only possible from a signed source).
                    let bound = ty.const_int(lo as u64, true);
                    let below = self.cx.builder.build_int_compare(IntPredicate::SLT, x, bound, "below")?;
                    failed = self.cx.builder.build_or(failed, below, "failed")?;
                }
                if hi < shi {
                    let bound = ty.const_int(hi as u64, false);
                    let predicate = if source.signed() { IntPredicate::SGT } else { IntPredicate::UGT };
                    let above = self.cx.builder.build_int_compare(predicate, x, bound, "above")?;
                    failed = self.cx.builder.build_or(failed, above, "failed")?;
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
                let ok_low = self.cx.builder.build_float_compare(FloatPredicate::OGE, truncated, low, "ge")?;
                let ok_high = self.cx.builder.build_float_compare(FloatPredicate::OLT, truncated, high, "lt")?;
                let ok = self.cx.builder.build_and(ok_low, ok_high, "ok")?;
                Ok(self.cx.builder.build_not(ok, "failed")?)
            }
            _ => Ok(self.cx.ctx.bool_type().const_zero()),
        }
    }
}
