//! Lowering regions and collectors (language §24, §25).
//!
//! A region's body becomes a *lane function* of its own, `<symbol>$lane<stmt>(env, lo, hi)`,
//! which runs indices `lo..hi`; its environment is a record on the caller's stack holding, per
//! outer binding the lanes name, a copy of it when it is a scalar, a handle or a code pointer
//! (lanes never assign an outer name), else a pointer to it. The region itself is one `Inst::Parallel`, which the runtime
//! splits into claims across the lane pool. Lanes cannot race (the checker's lane rules), so
//! sharing the caller's storage through the environment is safe.
//!
//! A `for` collector is a loop. A pooled (`parallel`) `reduce` splits the count into blocks fixed
//! by the count alone (one below 16,384 elements, else `n / 8192`, at most 256): each block's
//! lane folds its indices in order into its slot of a stack array of partials, and the caller
//! folds the partials in order. A pooled `scan` runs two passes over the same blocks: each block
//! scans its own part and leaves its total, the caller turns the totals into each block's offset,
//! and a second pass adds the offset in. Checked unsigned `+` traps in a lane exactly when the
//! in-order total overflows (no partial sum of unsigned values can overflow unless the total does).

use cairn_hir::body::{CollectKind, Collector, ReduceOp};

use super::*;
use crate::Schedule;

/// The most blocks a pooled collector uses, and the counts that decide them (language §25).
const MAX_BLOCKS: u64 = 256;
const BLOCK_WORK: u64 = 8192;
const SMALL_REGION: u64 = 16384;

/// An outer value a lane function receives: copied when it is a handle, else by pointer.
struct Shared {
    ty: MTy,
    /// A device region's single borrow (`ro<T>`): the environment holds the value it points
    /// at, and the lane a pointer to that copy (a pointer to the caller's stack means nothing on
    /// a device).
    pointee: bool,
}

impl<'db> Lower<'db> {
    /// `parallel i in n { body }`.
    pub(super) fn parallel(&mut self, id: StmtId, binder: BinderId, count: ExprId, block: &HirBlock) -> R<()> {
        let n = self.expr(count)?;
        let held = self.temp(MTy::usize());
        self.assign(Place::local(held), Rvalue::Use(n));
        let n = copy(held);
        let region =
            self.check.region(id).ok_or_else(|| LowerError("a region the check did not record".into()))?.clone();
        let symbol: Arc<str> = Arc::from(format!("{}$lane{}", self.symbol, id.0));
        let captures = self.captured(&region.captures)?;
        let outer: Vec<Local> = captures.iter().map(|(_, l)| *l).collect();
        // The views whose extent is the count: every lane index is in bounds of them (the pool
        // runs indices below the count only), so their `[i]` guards are proved.
        let sized = self.views_of_extent(count);
        let (env, mut inner, shared) = self.lane_env(&symbol, &outer, region.device)?;
        let mut proved = Vec::new();
        let mut blocks: Vec<(Local, u64)> = Vec::new();
        for ((local_ref, outer_local), shared) in captures.iter().zip(&shared) {
            inner.bindings.insert(*local_ref, *shared);
            if sized.contains(outer_local) {
                proved.push(*shared);
            }
            // (A view of the count's extent needs no check for `[i]`.)
            if let Some(&(_, stride)) = region.blocks.iter().find(|(r, _)| r == local_ref)
                && matches!(inner.local_ty(*shared), MTy::View(_))
                && (stride > 1 || !sized.contains(outer_local))
            {
                blocks.push((*shared, stride));
            }
        }
        self.assume_extents(&mut inner, &outer, &shared);
        inner.lane_loop(binder, &proved, &blocks, &region.block_indices, block)?;
        self.finish_lane(symbol.clone(), inner, region.device);
        let work = if region.stride == 1 {
            n.clone()
        } else {
            self.value(MTy::usize(), Rvalue::Binary(BinOp::Mul, n.clone(), lit_usize(region.stride)))
        };
        let schedule = self.schedule(id);
        self.emit(Inst::Parallel { lane: symbol, env, count: n, work, schedule });
        Ok(())
    }

    /// The view locals whose length is the value of `count` (an immutable name or a literal):
    /// view parameters whose extent is that parameter, and views whose type's extent is it.
    pub(super) fn views_of_extent(&self, count: ExprId) -> Vec<Local> {
        let count = self.body.unparen(count);
        let mut out = Vec::new();
        match self.body.expr(count) {
            Expr::Name(_) => {
                if let Some(Bound::Name(n)) = self.bound_of(count) {
                    out.extend(self.extents.iter().filter(|(_, e)| *e == n).map(|(v, _)| *v));
                }
            }
            Expr::Literal(Literal::Int { value: Some(k), .. }) => {
                for (binder, ty) in self.check.binder_types.iter().enumerate() {
                    if let Ty::View(view) = ty
                        && view.extent == Extent::Literal(*k as u64)
                        && let Some(&local) = self.bindings.get(&LocalRef::Binder(BinderId(binder as u32)))
                    {
                        out.push(local);
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// What an in-order collector's index is known to stay below while its loop runs: the count
    /// (an immutable name or a literal) and the length of each view whose extent is the count.
    /// Returns the mark to truncate the facts to afterwards.
    fn count_facts(&mut self, count: ExprId, counter: Local) -> usize {
        let mark = self.facts.len();
        if let Some(bound) = self.bound_of(count) {
            self.facts.push((counter, bound));
        }
        for view in self.views_of_extent(count) {
            self.facts.push((counter, Bound::Len(view)));
        }
        mark
    }

    /// A lane function's loop: the region's binder over `lo..hi` (parameters 1 and 2), known to
    /// stay below the length of each of `proved` (three loops where the body is one `if` on an
    /// interval of the index: `split.rs`). Where the lanes write arrays in blocks
    /// (`blocks`: each view with its stride), each lane first asks whether every such array holds
    /// its whole block (`i < len / S`): if so its body runs with the guards of the accesses the
    /// race rule placed in the block (`indices`) proved, else with every guard; both run the same
    /// code otherwise, so a guard that can fail fails exactly as before.
    fn lane_loop(
        &mut self,
        binder: BinderId,
        proved: &[Local],
        blocks: &[(Local, u64)],
        indices: &[ExprId],
        block: &HirBlock,
    ) -> R<()> {
        if blocks.is_empty()
            && let Some(split) = self.split_of(binder, block)
        {
            return self.split_loops(binder, proved, split);
        }
        let name = self.body.binder(binder).clone();
        let counter = self.new_local(Some(name), MTy::usize());
        self.assign(Place::local(counter), Rvalue::Use(copy(Local(1))));
        let loop_blocks = self.loop_head(counter, copy(Local(2)));
        if blocks.is_empty() {
            let mark = self.bind_lane(binder, counter, proved);
            return self.counted_body(block, mark, counter, loop_blocks);
        }
        // Does every array written in blocks hold this lane's whole block?
        let mut whole: Option<Operand> = None;
        for &(view, stride) in blocks {
            let len = self.value(MTy::usize(), Rvalue::Len(Place::local(view)));
            let lanes = self.value(MTy::usize(), Rvalue::Binary(BinOp::Div, len, lit_usize(stride)));
            let holds = self.value(MTy::Bool, Rvalue::Binary(BinOp::Lt, copy(counter), lanes));
            whole = Some(match whole {
                None => holds,
                Some(before) => self.value(MTy::Bool, Rvalue::Binary(BinOp::And, before, holds)),
            });
        }
        let fast = self.new_block();
        let slow = self.new_block();
        self.terminate(Terminator::Branch(whole.unwrap_or(Operand::Const(Const::Bool(false))), fast, slow));
        for (target, proving) in [(fast, true), (slow, false)] {
            self.switch_to(target);
            let mark = self.bind_lane(binder, counter, proved);
            if proving {
                self.block_views = blocks.iter().map(|(v, _)| *v).collect();
                self.block_indices = indices.to_vec();
            }
            let result = self.in_loop(mark, loop_blocks, |this| {
                this.open_frame();
                this.block(block).and_then(|()| this.close_frame())
            });
            self.block_views.clear();
            self.block_indices.clear();
            result?;
        }
        self.loop_latch(counter, loop_blocks);
        Ok(())
    }

    /// Binds the region's binder to `counter`, known to stay below the length of each of
    /// `proved` (the pool runs only indices below the count): the mark to drop the facts to.
    pub(super) fn bind_lane(&mut self, binder: BinderId, counter: Local, proved: &[Local]) -> usize {
        let mark = self.facts.len();
        self.bind(binder, counter);
        for &view in proved {
            self.facts.push((counter, Bound::Len(view)));
        }
        mark
    }

    /// Tells a lane function what the signature fixes of the views it shares: each view
    /// parameter's length is its extent parameter's value (`Inst::Assume`), so that LLVM can see
    /// an index below the extent is in bounds (`i + 1 < n` guarding `xs[i + 1]`).
    pub(super) fn assume_extents(&self, inner: &mut Lower<'_>, outer: &[Local], shared: &[Local]) {
        for &(view, extent) in &self.extents {
            let (Some(v), Some(e)) = (outer.iter().position(|l| *l == view), outer.iter().position(|l| *l == extent))
            else {
                continue;
            };
            let len = inner.value(MTy::usize(), Rvalue::Len(Place::local(shared[v])));
            let same = inner.value(MTy::Bool, Rvalue::Binary(BinOp::Eq, len, copy(shared[e])));
            inner.emit(Inst::Assume(same));
        }
    }

    /// The schedule a plan gives this function's regions (the defaults without one), and the
    /// fusion chain region `id` belongs to.
    pub(super) fn schedule(&self, id: StmtId) -> Schedule {
        let chain = self.chains.iter().position(|c| c.contains(&id)).map(|c| c as u32);
        Schedule {
            grain: self.schedule.grain,
            lanes: self.schedule.lanes,
            chain,
            block: self.schedule.block,
            per_lane: self.schedule.per_lane,
        }
    }

    /// The MIR locals of the outer bindings a region names.
    pub(super) fn captured(&self, captures: &[LocalRef]) -> R<Vec<(LocalRef, Local)>> {
        captures
            .iter()
            .map(|r| {
                self.bindings
                    .get(r)
                    .map(|l| (*r, *l))
                    .ok_or_else(|| LowerError("a captured binding with no local".into()))
            })
            .collect()
    }

    /// The environment of a lane function sharing `outer`: the record on this function's stack
    /// and a pointer to it; and the lane function's lowering, begun, with its parameters
    /// (`env`, `lo`, `hi`: locals 0, 1, 2) and one local per shared value loaded from the
    /// environment (returned in the order of `outer`). A device region's environment holds
    /// every value by copy (`device`): a GPU build passes the record to the kernel, where a
    /// pointer to the caller's stack would mean nothing, so a single borrow travels as the value
    /// it points at (lanes never write through one: the lane rules); device lanes write only
    /// through device views, which travel as copies anyway.
    pub(super) fn lane_env(
        &mut self,
        symbol: &Arc<str>,
        outer: &[Local],
        device: bool,
    ) -> R<(Operand, Lower<'db>, Vec<Local>)> {
        let mut shared: Vec<Shared> = Vec::new();
        let mut values: Vec<Operand> = Vec::new();
        for &local in outer {
            let ty = self.local_ty(local).clone();
            // Lanes never assign an outer name (the lane rules): scalars, handles and code
            // pointers travel as copies; storage the lanes write by element, by pointer.
            if let (true, MTy::Ptr(pointee)) = (device, &ty) {
                values.push(Operand::Copy(Place::local(local).project(Proj::Deref)));
                shared.push(Shared { ty: (**pointee).clone(), pointee: true });
            } else if device
                || matches!(
                    ty,
                    MTy::View(_)
                        | MTy::Ptr(_)
                        | MTy::Fn { .. }
                        | MTy::Bool
                        | MTy::Int(_)
                        | MTy::Float(_)
                        | MTy::Enum { .. }
                )
                || closure::is_callable(&ty)
            {
                values.push(copy(local));
                shared.push(Shared { ty, pointee: false });
            } else {
                let pointer = MTy::Ptr(Arc::new(ty));
                values.push(self.value(pointer.clone(), Rvalue::Ref(Place::local(local))));
                shared.push(Shared { ty: pointer, pointee: false });
            }
        }
        let fields: Vec<MTy> = shared.iter().map(|s| s.ty.clone()).collect();
        let env_ty = MTy::Record { name: Arc::from(format!("env {symbol}")), fields: Arc::from(fields) };
        let env = self.temp(env_ty.clone());
        self.assign(Place::local(env), Rvalue::Record(env_ty.clone(), values));
        let env_ptr = self.value(MTy::Ptr(Arc::new(env_ty.clone())), Rvalue::Ref(Place::local(env)));
        let mut inner = Lower::new(self.db, self.body, self.check, MTy::Void, Ty::Void, symbol.clone());
        let env_local = inner.new_local(Some(Arc::from("env")), MTy::Ptr(Arc::new(env_ty)));
        inner.new_local(Some(Arc::from("lo")), MTy::usize());
        inner.new_local(Some(Arc::from("hi")), MTy::usize());
        let mut locals = Vec::with_capacity(shared.len());
        for (k, s) in shared.iter().enumerate() {
            let field = Place::local(env_local).project(Proj::Deref).project(Proj::Field(k as u32));
            let local = if s.pointee {
                let local = inner.new_local(None, MTy::Ptr(Arc::new(s.ty.clone())));
                inner.assign(Place::local(local), Rvalue::Ref(field));
                local
            } else {
                let local = inner.new_local(None, s.ty.clone());
                inner.assign(Place::local(local), Rvalue::Use(Operand::Copy(field)));
                local
            };
            locals.push(local);
        }
        Ok((env_ptr, inner, locals))
    }

    /// Closes a lane function and keeps it beside this one.
    pub(super) fn finish_lane(&mut self, symbol: Arc<str>, inner: Lower<'_>, device: bool) {
        self.finish_helper(symbol, inner, device, 3, MTy::Void);
    }

    /// Closes a function made for this one's lanes (`params` parameters, returning `ret`) and
    /// keeps it beside this one.
    pub(super) fn finish_helper(
        &mut self,
        symbol: Arc<str>,
        mut inner: Lower<'_>,
        device: bool,
        params: u32,
        ret: MTy,
    ) {
        if inner.open() {
            inner.terminate(Terminator::Return(None));
        }
        let blocks = inner.finish_blocks();
        let function = Function {
            name: symbol.trim_start_matches("cairn.").into(),
            symbol,
            kind: FnKind::Function,
            params,
            ret,
            locals: inner.locals,
            blocks,
            extents: Vec::new(),
            device,
        };
        // A body lowered twice (a versioned lane) makes its closures twice, alike.
        for made in inner.extra {
            if !self.extra.iter().any(|f| f.symbol == made.symbol) {
                self.extra.push(made);
            }
        }
        self.extra.push(function);
    }

    /// A loop of `counter` over `lo..hi` whose body `each` lowers.
    pub(super) fn index_loop(
        &mut self,
        lo: Operand,
        hi: Operand,
        counter: Local,
        mut each: impl FnMut(&mut Self) -> R<()>,
    ) -> R<()> {
        self.assign(Place::local(counter), Rvalue::Use(lo));
        let end = self.temp(MTy::usize());
        self.assign(Place::local(end), Rvalue::Use(hi));
        let blocks = self.loop_head(counter, copy(end));
        let mark = self.temporaries.len();
        each(self)?;
        self.release_temporaries(mark);
        self.terminate(Terminator::Goto(blocks.1));
        self.loop_latch(counter, blocks);
        Ok(())
    }

    /// A collector statement.
    pub(super) fn collect(&mut self, id: StmtId, c: &Collector) -> R<()> {
        let region =
            self.check.region(id).ok_or_else(|| LowerError("a collector the check did not record".into()))?.clone();
        let op = c.op.unwrap_or(ReduceOp::Add);
        // The element a storing `reduce` writes: `k` evaluated once, before the lanes.
        let stored = match (c.kind, c.target) {
            (CollectKind::Reduce, Some(target)) => Some(self.place(target)?),
            _ => None,
        };
        let n = self.expr(c.count)?;
        let held = self.temp(MTy::usize());
        self.assign(Place::local(held), Rvalue::Use(n));
        let n = copy(held);
        let ty = match c.kind {
            CollectKind::Compact => MTy::usize(),
            _ => self.mty_of(c.value),
        };
        if region.device && c.kind == CollectKind::Reduce {
            let (dest, dest_device) = match (stored, c.name) {
                (Some(place), _) => (place, true),
                (None, Some(name)) => {
                    let local = self.new_local(Some(self.body.binder(name).clone()), ty.clone());
                    self.bind(name, local);
                    (Place::local(local), false)
                }
                (None, None) => return Err(LowerError("a reduce that neither binds nor stores".into())),
            };
            return self.device_reduce(id, c, op, &ty, n, &region, dest, dest_device);
        }
        let result = match c.kind {
            CollectKind::Compact if region.device => self.device_compact(id, c, n, &region)?,
            CollectKind::Scan { exclusive } if region.device => {
                self.device_scan(id, c, op, &ty, exclusive, n, &region)?
            }
            CollectKind::Compact => self.compact(c, n)?,
            // A device collector folds in index order under emulation (language §41), whatever
            // the keyword says.
            CollectKind::Reduce if c.parallel && !region.device => self.pooled_reduce(c, op, &ty, n, &region)?,
            CollectKind::Reduce => {
                let acc = self.new_local(None, ty.clone());
                self.assign(Place::local(acc), Rvalue::Use(identity(op, &ty)));
                let counter = self.new_local(Some(self.body.binder(c.binder).clone()), MTy::usize());
                self.bind(c.binder, counter);
                let mark = self.count_facts(c.count, counter);
                self.index_loop(lit_usize(0), n, counter, |me| me.fold_yield(c, op, &ty, acc))?;
                self.facts.truncate(mark);
                copy(acc)
            }
            CollectKind::Scan { exclusive } if c.parallel && !region.device => {
                self.pooled_scan(c, op, &ty, exclusive, n, &region)?
            }
            CollectKind::Scan { exclusive } => {
                let out = self.output(c)?;
                let acc = self.new_local(None, ty.clone());
                self.assign(Place::local(acc), Rvalue::Use(identity(op, &ty)));
                let counter = self.new_local(Some(self.body.binder(c.binder).clone()), MTy::usize());
                self.bind(c.binder, counter);
                let mark = self.count_facts(c.count, counter);
                self.index_loop(lit_usize(0), n, counter, |me| {
                    me.scan_step(c, op, &ty, exclusive, acc, &out, counter)
                })?;
                self.facts.truncate(mark);
                copy(acc)
            }
        };
        if let Some(place) = stored {
            self.assign(place, Rvalue::Use(result.clone()));
        }
        if let Some(name) = c.name {
            let local = self.new_local(Some(self.body.binder(name).clone()), ty);
            self.assign(Place::local(local), Rvalue::Use(result));
            self.bind(name, local);
        }
        Ok(())
    }

    /// The output place of a `compact` or `scan` (its name).
    pub(super) fn output(&mut self, c: &Collector) -> R<Place> {
        let target = c.target.ok_or_else(|| LowerError("a collector without its output".into()))?;
        self.place(target)
    }

    /// `acc = acc op yield(i)`.
    pub(super) fn fold_yield(&mut self, c: &Collector, op: ReduceOp, ty: &MTy, acc: Local) -> R<()> {
        let v = self.expr(c.value)?;
        let next = self.combine(op, ty, copy(acc), v, Some(c.value), true);
        self.assign(Place::local(acc), Rvalue::Use(next));
        Ok(())
    }

    /// One scan step: the yield, the running value, the element written.
    #[allow(clippy::too_many_arguments)]
    fn scan_step(
        &mut self,
        c: &Collector,
        op: ReduceOp,
        ty: &MTy,
        exclusive: bool,
        acc: Local,
        out: &Place,
        counter: Local,
    ) -> R<()> {
        let v = self.expr(c.value)?;
        let next = self.combine(op, ty, copy(acc), v, Some(c.value), true);
        let next = self.value(ty.clone(), Rvalue::Use(next));
        let written = if exclusive { copy(acc) } else { next.clone() };
        // The checker proved the output's extent is the count: the element exists.
        self.assign(out.project(Proj::Index(copy(counter))), Rvalue::Use(written));
        self.assign(Place::local(acc), Rvalue::Use(next));
        Ok(())
    }

    /// `a op b`, with the overflow guard of checked unsigned `+` when `checked`.
    pub(super) fn combine(
        &mut self,
        op: ReduceOp,
        ty: &MTy,
        a: Operand,
        b: Operand,
        at: Option<ExprId>,
        checked: bool,
    ) -> Operand {
        let binop = match op {
            ReduceOp::Add | ReduceOp::AddWrap => BinOp::Add,
            ReduceOp::Mul | ReduceOp::MulWrap => BinOp::Mul,
            ReduceOp::And => BinOp::And,
            ReduceOp::Or => BinOp::Or,
            ReduceOp::Xor => BinOp::Xor,
            ReduceOp::Min => BinOp::Min,
            ReduceOp::Max => BinOp::Max,
        };
        if checked
            && op == ReduceOp::Add
            && let MTy::Int(int) = ty
        {
            self.guard(GuardKind::Overflow, Check::NoOverflow(BinOp::Add, *int, a.clone(), b.clone()), at, false);
        }
        self.value(ty.clone(), Rvalue::Binary(binop, a, b))
    }

    /// `compact out for i in n where pred yield e`: the kept values in order at the front.
    fn compact(&mut self, c: &Collector, n: Operand) -> R<Operand> {
        let out = self.output(c)?;
        let kept = self.new_local(None, MTy::usize());
        self.assign(Place::local(kept), Rvalue::Use(lit_usize(0)));
        let counter = self.new_local(Some(self.body.binder(c.binder).clone()), MTy::usize());
        self.bind(c.binder, counter);
        let pred = c.pred.ok_or_else(|| LowerError("a compact without its predicate".into()))?;
        let mark = self.count_facts(c.count, counter);
        let result = self.index_loop(lit_usize(0), n, counter, |me| {
            let keep = me.expr(pred)?;
            let take = me.new_block();
            let next = me.new_block();
            me.terminate(Terminator::Branch(keep, take, next));
            me.switch_to(take);
            let v = me.expr(c.value)?;
            // Fewer kept than indices seen, and the extent is the count: the slot exists.
            me.assign(out.project(Proj::Index(copy(kept))), Rvalue::Use(v));
            me.assign(Place::local(kept), Rvalue::Binary(BinOp::Add, copy(kept), lit_usize(1)));
            me.terminate(Terminator::Goto(next));
            me.switch_to(next);
            Ok(())
        });
        self.facts.truncate(mark);
        result?;
        Ok(copy(kept))
    }

    /// The blocks of a pooled collector over `n`: their count, and a stack array for one value
    /// per block.
    fn blocks(&mut self, n: &Operand, ty: &MTy) -> (Local, Local) {
        // nb = n < 16384 ? 1 : min(n / 8192, 256)
        let small = self.value(MTy::Bool, Rvalue::Binary(BinOp::Lt, n.clone(), lit_usize(SMALL_REGION)));
        let many = self.value(MTy::usize(), Rvalue::Binary(BinOp::Div, n.clone(), lit_usize(BLOCK_WORK)));
        let many = self.value(MTy::usize(), Rvalue::Binary(BinOp::Min, many, lit_usize(MAX_BLOCKS)));
        let nb = self.new_local(Some(Arc::from("blocks")), MTy::usize());
        self.assign(Place::local(nb), Rvalue::Select(small, lit_usize(1), many));
        let partials = self.new_local(Some(Arc::from("partials")), MTy::Array(Arc::new(ty.clone()), MAX_BLOCKS));
        self.assign(Place::local(partials), Rvalue::Zeroed);
        (nb, partials)
    }

    /// The first index of block `b` of `nb` over `n`: `b * (n / nb) + min(b, n % nb)`.
    fn block_start(&mut self, b: Operand, n: &Operand, nb: &Operand) -> Operand {
        let size = self.value(MTy::usize(), Rvalue::Binary(BinOp::Div, n.clone(), nb.clone()));
        let extra = self.value(MTy::usize(), Rvalue::Binary(BinOp::Rem, n.clone(), nb.clone()));
        let head = self.value(MTy::usize(), Rvalue::Binary(BinOp::Mul, b.clone(), size));
        let spill = self.value(MTy::usize(), Rvalue::Binary(BinOp::Min, b, extra));
        self.value(MTy::usize(), Rvalue::Binary(BinOp::Add, head, spill))
    }

    /// A lane function over blocks: for each block `b` in `lo..hi`, `each(b, start, end)`.
    /// `extra` are this function's locals the lanes share beside the collector's captures;
    /// `each` receives their locals in the lane function, in order.
    fn block_lanes(
        &mut self,
        id_suffix: &str,
        c: &Collector,
        region: &cairn_hir::check::Region,
        extra: &[Local],
        n: &Operand,
        nb: Local,
        mut each: impl FnMut(&mut Lower<'_>, &[Local], Local, Local, Operand, Operand) -> R<()>,
    ) -> R<()> {
        let symbol: Arc<str> = Arc::from(format!("{}$lane{}{id_suffix}", self.symbol, c.value.0));
        let captures = self.captured(&region.captures)?;
        let n_local = self.temp(MTy::usize());
        self.assign(Place::local(n_local), Rvalue::Use(n.clone()));
        let mut outer: Vec<Local> = captures.iter().map(|(_, l)| *l).collect();
        outer.extend([n_local, nb]);
        outer.extend(extra.iter().copied());
        let sized = self.views_of_extent(c.count);
        let (env, mut inner, shared) = self.lane_env(&symbol, &outer, region.device)?;
        let mut proved = Vec::new();
        for ((local_ref, outer_local), local) in captures.iter().zip(&shared) {
            inner.bindings.insert(*local_ref, *local);
            if sized.contains(outer_local) {
                proved.push(*local);
            }
        }
        self.assume_extents(&mut inner, &outer, &shared);
        let rest = &shared[captures.len()..];
        let n_in = copy(rest[0]);
        let nb_in = copy(rest[1]);
        let extras: Vec<Local> = rest[2..].to_vec();
        let b = inner.new_local(Some(Arc::from("block")), MTy::usize());
        let counter = inner.new_local(Some(inner.body.binder(c.binder).clone()), MTy::usize());
        inner.bind(c.binder, counter);
        // Every block lies inside `0..n`: the views of extent `n` hold every index.
        for view in proved {
            inner.facts.push((counter, Bound::Len(view)));
        }
        inner.index_loop(copy(Local(1)), copy(Local(2)), b, |me| {
            let start = me.block_start(copy(b), &n_in, &nb_in);
            let next = me.value(MTy::usize(), Rvalue::Binary(BinOp::Add, copy(b), lit_usize(1)));
            let end = me.block_start(next, &n_in, &nb_in);
            each(me, &extras, b, counter, start, end)
        })?;
        self.finish_lane(symbol.clone(), inner, region.device);
        let count = copy(nb);
        self.emit(Inst::Parallel {
            lane: symbol,
            env,
            count,
            work: n.clone(),
            schedule: Schedule { grain: 1, ..Schedule::default() },
        });
        Ok(())
    }

    /// A pooled `reduce`: each block folds into its partial; the partials fold in order.
    fn pooled_reduce(
        &mut self,
        c: &Collector,
        op: ReduceOp,
        ty: &MTy,
        n: Operand,
        region: &cairn_hir::check::Region,
    ) -> R<Operand> {
        let (nb, partials) = self.blocks(&n, ty);
        self.block_lanes("r", c, region, &[partials], &n, nb, |me, extras, b, counter, start, end| {
            let acc = me.new_local(None, ty.clone());
            me.assign(Place::local(acc), Rvalue::Use(identity(op, ty)));
            me.index_loop(start, end, counter, |me| me.fold_yield(c, op, ty, acc))?;
            let slot = Place::local(extras[0]).project(Proj::Deref).project(Proj::Index(copy(b)));
            me.assign(slot, Rvalue::Use(copy(acc)));
            Ok(())
        })?;
        let acc = self.new_local(None, ty.clone());
        self.assign(Place::local(acc), Rvalue::Use(identity(op, ty)));
        let b = self.new_local(None, MTy::usize());
        self.index_loop(lit_usize(0), copy(nb), b, |me| {
            let partial = Operand::Copy(Place::local(partials).project(Proj::Index(copy(b))));
            let next = me.combine(op, ty, copy(acc), partial, Some(c.value), true);
            me.assign(Place::local(acc), Rvalue::Use(next));
            Ok(())
        })?;
        Ok(copy(acc))
    }

    /// A pooled `scan`: each block scans its part and leaves its total; the totals become
    /// offsets in order; a second pass adds each block's offset in.
    fn pooled_scan(
        &mut self,
        c: &Collector,
        op: ReduceOp,
        ty: &MTy,
        exclusive: bool,
        n: Operand,
        region: &cairn_hir::check::Region,
    ) -> R<Operand> {
        let target = c.target.ok_or_else(|| LowerError("a scan without its output".into()))?;
        let (nb, partials) = self.blocks(&n, ty);
        self.block_lanes("s", c, region, &[partials], &n, nb, |me, extras, b, counter, start, end| {
            let out = me.place(target)?;
            let acc = me.new_local(None, ty.clone());
            me.assign(Place::local(acc), Rvalue::Use(identity(op, ty)));
            me.index_loop(start, end, counter, |me| me.scan_step(c, op, ty, exclusive, acc, &out, counter))?;
            let slot = Place::local(extras[0]).project(Proj::Deref).project(Proj::Index(copy(b)));
            me.assign(slot, Rvalue::Use(copy(acc)));
            Ok(())
        })?;
        // Offsets, in order; the last is the total.
        let offset = self.new_local(None, ty.clone());
        self.assign(Place::local(offset), Rvalue::Use(identity(op, ty)));
        let b = self.new_local(None, MTy::usize());
        self.index_loop(lit_usize(0), copy(nb), b, |me| {
            let slot = Place::local(partials).project(Proj::Index(copy(b)));
            let total = me.temp(ty.clone());
            me.assign(Place::local(total), Rvalue::Use(Operand::Copy(slot.clone())));
            let total = copy(total);
            me.assign(slot, Rvalue::Use(copy(offset)));
            let next = me.combine(op, ty, copy(offset), total, Some(c.value), true);
            me.assign(Place::local(offset), Rvalue::Use(next));
            Ok(())
        })?;
        // Every prefix is at most the total, which fit: the second pass cannot overflow.
        self.block_lanes("t", c, region, &[partials], &n, nb, |me, extras, b, counter, start, end| {
            let out = me.place(target)?;
            let slot = Place::local(extras[0]).project(Proj::Deref).project(Proj::Index(copy(b)));
            let add = me.temp(ty.clone());
            me.assign(Place::local(add), Rvalue::Use(Operand::Copy(slot)));
            let add = copy(add);
            me.index_loop(start, end, counter, |me| {
                let element = out.project(Proj::Index(copy(counter)));
                let sum = me.combine(op, ty, add.clone(), Operand::Copy(element.clone()), None, false);
                me.assign(element, Rvalue::Use(sum));
                Ok(())
            })
        })?;
        Ok(copy(offset))
    }
}

/// The operator's identity in `ty`: what an empty fold gives, and an exclusive scan's first
/// element.
pub(super) fn identity(op: ReduceOp, ty: &MTy) -> Operand {
    match ty {
        MTy::Int(int) => {
            let (min, max) = int.range();
            let v = match op {
                ReduceOp::Add | ReduceOp::AddWrap | ReduceOp::Or | ReduceOp::Xor => 0,
                ReduceOp::Mul | ReduceOp::MulWrap => 1,
                ReduceOp::And => max,
                ReduceOp::Min => max,
                ReduceOp::Max => min,
            };
            Operand::Const(Const::Int(v, *int))
        }
        MTy::Float(f) => {
            let v: f64 = match op {
                ReduceOp::Mul | ReduceOp::MulWrap => 1.0,
                ReduceOp::Min => f64::INFINITY,
                ReduceOp::Max => f64::NEG_INFINITY,
                _ => 0.0,
            };
            let bits = match f {
                FloatTy::F32 => u64::from((v as f32).to_bits()),
                FloatTy::F64 => v.to_bits(),
            };
            Operand::Const(Const::Float(bits, *f))
        }
        _ => Operand::Const(Const::Int(0, IntTy::Usize)),
    }
}
