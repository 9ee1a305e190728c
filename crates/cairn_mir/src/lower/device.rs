//! Lowering device work (language §25, §36, §37, §41): `transfer(dst, src)`, queued work
//! (`spawn transfer`, `spawn parallel`), which runs to completion at its spawn, and the device
//! collectors.
//!
//! A transfer is one `Inst::Transfer` of `len(dst)` elements: the extents agree by the
//! checker's identity rule, and when a side is a part one guard says the lengths agree (`hi - lo
//! == len`). Under `--emulate` device memory is host memory of exactly the requested size, so
//! codegen copies it as host memory; a GPU build copies through the driver.
//!
//! A device `reduce` is one `Inst::DeviceReduce`, whose kernel folds across threads. A device
//! `scan` or `compact` is made of device work that exists already: a device region evaluates
//! each index's yield (and a `compact`'s predicate, the yield only where it holds) into device
//! scratch, a transfer brings the scratch to the host, the host folds it in index order — the
//! order emulation fixes (§41), so every total and trap is the emulated one, floats included —
//! and a transfer writes the result into the output (for `compact`, only its front). That is
//! correct on a GPU, not fast: the elements cross to the host and back. Scratch is released
//! right after.

use cairn_hir::body::{Collector, ReduceOp};

use super::parallel::identity;
use super::*;

impl<'db> Lower<'db> {
    /// `spawn …` of queued device work: under emulation the work runs to completion here, and
    /// the ticket holds nothing (`wait` has nothing left to do).
    pub(super) fn spawn(&mut self, work: cairn_hir::body::SpawnWork) -> R<Operand> {
        match work {
            cairn_hir::body::SpawnWork::Call(call) => {
                self.expr(call)?;
            }
            cairn_hir::body::SpawnWork::Region(region) => {
                let Stmt::Parallel { binder, count, body } = self.body.stmt(region).clone() else {
                    return fail("a queued region that is not a region");
                };
                self.parallel(region, binder, count, &body)?;
            }
        }
        Ok(Operand::Const(Const::Bool(false)))
    }

    /// `transfer(dst, src)`: one `Inst::Transfer` after the length guard a part needs.
    pub(super) fn transfer(&mut self, e: ExprId, args: &[ExprId]) -> R<Operand> {
        let [dst, src] = args else { return fail("a transfer without two arguments") };
        let side = |me: &Self, x: ExprId| match me.ty(x).value() {
            Ty::View(view) => Some((mty(me.db, &view.elem), view.place)),
            _ => None,
        };
        let (Some((elem, to_place)), Some((_, from_place))) = (side(self, *dst), side(self, *src)) else {
            return fail("a transfer between things that are not views");
        };
        let view_ty = MTy::View(Arc::new(elem));
        let (to, _) = self.view_argument(*dst, &view_ty)?;
        let to = self.operand_place(to, &view_ty);
        let (from, _) = self.view_argument(*src, &view_ty)?;
        let from = self.operand_place(from, &view_ty);
        let part = |x: ExprId| matches!(self.body.expr(self.body.unparen(x)), Expr::Part { .. });
        if part(*dst) || part(*src) {
            let length = self.len_of(&to)?;
            let from_len = self.len_of(&from)?;
            self.guard(GuardKind::Bounds, Check::PartLength(lit_usize(0), length, from_len), Some(e), false);
        }
        // Memory the driver gave out (device or unified) goes through the driver on a GPU.
        let driver = |place: cairn_hir::types::Place| {
            matches!(place, cairn_hir::types::Place::Device | cairn_hir::types::Place::Unified)
        };
        self.emit(Inst::Transfer {
            dst: Operand::Copy(to),
            src: Operand::Copy(from),
            device: driver(to_place) || driver(from_place),
        });
        Ok(Operand::Const(Const::Bool(false)))
    }

    /// A device `reduce` (`Inst::DeviceReduce`): a lane function returning the in-order fold of
    /// its indices, and a function combining two totals with the collector's guard, which a GPU
    /// build's kernel uses across threads.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn device_reduce(
        &mut self,
        id: StmtId,
        c: &Collector,
        op: ReduceOp,
        ty: &MTy,
        n: Operand,
        region: &cairn_hir::check::Region,
        dest: Place,
        dest_device: bool,
    ) -> R<()> {
        let (symbol, env, mut inner, counter, _) = self.collector_lane(id, c, region, &[])?;
        inner.ret = ty.clone();
        let acc = inner.new_local(None, ty.clone());
        inner.assign(Place::local(acc), Rvalue::Use(identity(op, ty)));
        inner.index_loop(copy(Local(1)), copy(Local(2)), counter, |me| me.fold_yield(c, op, ty, acc))?;
        inner.terminate(Terminator::Return(Some(copy(acc))));
        self.finish_helper(symbol.clone(), inner, true, 3, ty.clone());
        // `fold(a, b)`: the collector's combination, with its guard at the yield.
        let fold: Arc<str> = Arc::from(format!("{symbol}$fold"));
        let mut combine = Lower::new(self.db, self.body, self.check, ty.clone(), Ty::Void, fold.clone());
        let a = combine.new_local(Some(Arc::from("a")), ty.clone());
        let b = combine.new_local(Some(Arc::from("b")), ty.clone());
        let both = combine.combine(op, ty, copy(a), copy(b), Some(c.value), true);
        combine.terminate(Terminator::Return(Some(both)));
        self.finish_helper(fold.clone(), combine, false, 2, ty.clone());
        let (binop, checked) = match op {
            ReduceOp::Add => (BinOp::Add, matches!(ty, MTy::Int(_))),
            ReduceOp::AddWrap => (BinOp::Add, false),
            ReduceOp::Mul | ReduceOp::MulWrap => (BinOp::Mul, false),
            ReduceOp::And => (BinOp::And, false),
            ReduceOp::Or => (BinOp::Or, false),
            ReduceOp::Xor => (BinOp::Xor, false),
            ReduceOp::Min => (BinOp::Min, false),
            ReduceOp::Max => (BinOp::Max, false),
        };
        let Operand::Const(identity) = identity(op, ty) else {
            return Err(LowerError("an identity that is not a constant".into()));
        };
        let schedule = self.schedule(id);
        self.emit(Inst::DeviceReduce {
            lane: symbol,
            fold,
            env,
            count: n,
            op: binop,
            checked,
            identity,
            dest,
            dest_device,
            schedule,
        });
        Ok(())
    }

    /// The lane function of device collector `c`, begun: its symbol, the environment the caller
    /// passes, the lowering (parameters `env`, `lo`, `hi`), the collector's binder bound to a
    /// counter known to stay below the length of every view of the count's extent, and the
    /// lane's locals of `extra` (more device views the lanes share, in order).
    #[allow(clippy::type_complexity)]
    fn collector_lane(
        &mut self,
        id: StmtId,
        c: &Collector,
        region: &cairn_hir::check::Region,
        extra: &[Local],
    ) -> R<(Arc<str>, Operand, Lower<'db>, Local, Vec<Local>)> {
        let symbol: Arc<str> = Arc::from(format!("{}$lane{}", self.symbol, id.0));
        let captures = self.captured(&region.captures)?;
        let mut outer: Vec<Local> = captures.iter().map(|(_, l)| *l).collect();
        outer.extend(extra.iter().copied());
        let sized = self.views_of_extent(c.count);
        let (env, mut inner, shared) = self.lane_env(&symbol, &outer, true)?;
        let mut proved = Vec::new();
        for ((local_ref, outer_local), local) in captures.iter().zip(&shared) {
            inner.bindings.insert(*local_ref, *local);
            if sized.contains(outer_local) {
                proved.push(*local);
            }
        }
        self.assume_extents(&mut inner, &outer, &shared);
        let counter = inner.new_local(Some(inner.body.binder(c.binder).clone()), MTy::usize());
        inner.bind(c.binder, counter);
        // The lanes run indices below the count only: the views of its extent hold each.
        for view in proved {
            inner.facts.push((counter, Bound::Len(view)));
        }
        let extras = shared[captures.len()..].to_vec();
        Ok((symbol, env, inner, counter, extras))
    }

    /// A device region over `0..n` running the collector's binder: its lanes share the
    /// collector's captures and `extra` (device scratch views, in order), and `each(me, i,
    /// extras)` lowers the body for index `i`.
    fn device_lanes(
        &mut self,
        id: StmtId,
        c: &Collector,
        region: &cairn_hir::check::Region,
        n: &Operand,
        extra: &[Local],
        mut each: impl FnMut(&mut Lower<'_>, Local, &[Local]) -> R<()>,
    ) -> R<()> {
        let (symbol, env, mut inner, counter, extras) = self.collector_lane(id, c, region, extra)?;
        inner.index_loop(copy(Local(1)), copy(Local(2)), counter, |me| each(me, counter, &extras))?;
        self.finish_lane(symbol.clone(), inner, true);
        let schedule = self.schedule(id);
        self.emit(Inst::Parallel { lane: symbol, env, count: n.clone(), work: n.clone(), schedule });
        Ok(())
    }

    /// `n` zeroed elements of `elem` in `memory`, viewed whole: the owner (to drop after) and
    /// the view. Its allocation guard stands at the collector's yield.
    fn scratch(&mut self, c: &Collector, elem: &MTy, n: &Operand, memory: Memory) -> (Local, Local) {
        let storage = self.new_local(None, MTy::Buf(Arc::new(elem.clone())));
        self.assign(Place::local(storage), Rvalue::Alloc(elem.clone(), n.clone(), memory));
        self.guard(GuardKind::Allocation, Check::Allocated(copy(storage)), Some(c.value), false);
        let view = self.new_local(None, MTy::View(Arc::new(elem.clone())));
        self.assign(Place::local(view), Rvalue::View(Place::local(storage), None));
        (storage, view)
    }

    /// Copies `src` into `dst` (views of one length), through the driver on a GPU.
    fn copy_across(&mut self, dst: Operand, src: Operand) {
        self.emit(Inst::Transfer { dst, src, device: true });
    }

    /// A device `scan` (see the file's comment): the total, bound when named.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn device_scan(
        &mut self,
        id: StmtId,
        c: &Collector,
        op: ReduceOp,
        ty: &MTy,
        exclusive: bool,
        n: Operand,
        region: &cairn_hir::check::Region,
    ) -> R<Operand> {
        let out = self.output(c)?;
        let (device_storage, on_device) = self.scratch(c, ty, &n, Memory::Device);
        // Each yield once, before its element is written (an in-place scan reads the old one).
        self.device_lanes(id, c, region, &n, &[on_device], |me, i, extras| {
            let v = me.expr(c.value)?;
            // The scratch has `n` elements and `i` is below `n`.
            me.assign(Place::local(extras[0]).project(Proj::Index(copy(i))), Rvalue::Use(v));
            Ok(())
        })?;
        let (host_storage, on_host) = self.scratch(c, ty, &n, Memory::Host);
        self.copy_across(copy(on_host), copy(on_device));
        let acc = self.new_local(None, ty.clone());
        self.assign(Place::local(acc), Rvalue::Use(identity(op, ty)));
        let i = self.new_local(None, MTy::usize());
        self.index_loop(lit_usize(0), n, i, |me| {
            let element = Place::local(on_host).project(Proj::Index(copy(i)));
            let v = me.value(ty.clone(), Rvalue::Use(Operand::Copy(element.clone())));
            let next = me.combine(op, ty, copy(acc), v, Some(c.value), true);
            let next = me.value(ty.clone(), Rvalue::Use(next));
            let written = if exclusive { copy(acc) } else { next.clone() };
            me.assign(element, Rvalue::Use(written));
            me.assign(Place::local(acc), Rvalue::Use(next));
            Ok(())
        })?;
        // The output's extent is the count (`E-SCAN-EXTENT`): the lengths agree.
        self.copy_across(Operand::Copy(out), copy(on_host));
        self.emit(Inst::Drop(Place::local(host_storage)));
        self.emit(Inst::Drop(Place::local(device_storage)));
        Ok(copy(acc))
    }

    /// A device `compact` (see the file's comment): how many it kept.
    pub(super) fn device_compact(
        &mut self,
        id: StmtId,
        c: &Collector,
        n: Operand,
        region: &cairn_hir::check::Region,
    ) -> R<Operand> {
        let out = self.output(c)?;
        let pred = c.pred.ok_or_else(|| LowerError("a compact without its predicate".into()))?;
        let ty = self.mty_of(c.value);
        let flag = MTy::Int(IntTy::U8);
        let (device_flags, flags_on_device) = self.scratch(c, &flag, &n, Memory::Device);
        let (device_values, values_on_device) = self.scratch(c, &ty, &n, Memory::Device);
        // The predicate once per index, the projection only where it holds.
        self.device_lanes(id, c, region, &n, &[flags_on_device, values_on_device], |me, i, extras| {
            let keep = me.expr(pred)?;
            let take = me.new_block();
            let next = me.new_block();
            me.terminate(Terminator::Branch(keep, take, next));
            me.switch_to(take);
            let v = me.expr(c.value)?;
            // Both scratches have `n` elements and `i` is below `n`.
            me.assign(Place::local(extras[1]).project(Proj::Index(copy(i))), Rvalue::Use(v));
            me.assign(
                Place::local(extras[0]).project(Proj::Index(copy(i))),
                Rvalue::Use(Operand::Const(Const::Int(1, IntTy::U8))),
            );
            me.terminate(Terminator::Goto(next));
            me.switch_to(next);
            Ok(())
        })?;
        let (host_flags, flags_on_host) = self.scratch(c, &flag, &n, Memory::Host);
        let (host_values, values_on_host) = self.scratch(c, &ty, &n, Memory::Host);
        self.copy_across(copy(flags_on_host), copy(flags_on_device));
        self.copy_across(copy(values_on_host), copy(values_on_device));
        let kept = self.new_local(None, MTy::usize());
        self.assign(Place::local(kept), Rvalue::Use(lit_usize(0)));
        let i = self.new_local(None, MTy::usize());
        self.index_loop(lit_usize(0), n, i, |me| {
            let flag = Operand::Copy(Place::local(flags_on_host).project(Proj::Index(copy(i))));
            let keep = me.value(MTy::Bool, Rvalue::Binary(BinOp::Ne, flag, Operand::Const(Const::Int(0, IntTy::U8))));
            let take = me.new_block();
            let next = me.new_block();
            me.terminate(Terminator::Branch(keep, take, next));
            me.switch_to(take);
            let v = me.value(
                ty.clone(),
                Rvalue::Use(Operand::Copy(Place::local(values_on_host).project(Proj::Index(copy(i))))),
            );
            // Fewer kept than indices seen: the slot exists.
            me.assign(Place::local(values_on_host).project(Proj::Index(copy(kept))), Rvalue::Use(v));
            me.assign(Place::local(kept), Rvalue::Binary(BinOp::Add, copy(kept), lit_usize(1)));
            me.terminate(Terminator::Goto(next));
            me.switch_to(next);
            Ok(())
        })?;
        // The front of the output (extent `n`, `E-COLLECT-CAPACITY`) takes the kept values; the
        // tail is untouched.
        let front = self.value(MTy::View(Arc::new(ty.clone())), Rvalue::View(out, Some((lit_usize(0), copy(kept)))));
        let kept_values = self.value(
            MTy::View(Arc::new(ty.clone())),
            Rvalue::View(Place::local(values_on_host), Some((lit_usize(0), copy(kept)))),
        );
        self.copy_across(front, kept_values);
        for storage in [host_values, host_flags, device_values, device_flags] {
            self.emit(Inst::Drop(Place::local(storage)));
        }
        Ok(copy(kept))
    }
}
