//! Lowering statements: blocks, `let`, assignments, branches, the three counted loops and
//! `while`, `match` (a switch on the tag, each arm's binder bound to the payload), `return`,
//! `break`/`continue`, `stack` arrays. Mirrors `cairn_hir::check` (`mod.rs`'s statements).

use super::*;

impl Lower<'_> {
    pub(super) fn scoped_block(&mut self, block: &HirBlock) -> R<()> {
        let mark = self.facts.len();
        self.open_frame();
        let result = self.block(block).and_then(|()| self.close_frame());
        self.facts.truncate(mark);
        result
    }

    pub(super) fn block(&mut self, block: &HirBlock) -> R<()> {
        for &stmt in block.iter() {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, id: StmtId) -> R<()> {
        let outer = self.anchor.replace(Anchor::Stmt(id));
        let mark = self.temporaries.len();
        let result = self.stmt_inner(id);
        self.release_temporaries(mark);
        self.anchor = outer;
        result
    }

    pub(super) fn stmt_inner(&mut self, id: StmtId) -> R<()> {
        let body = self.body.clone();
        match body.stmt(id) {
            Stmt::Missing | Stmt::Unsupported(_) => fail("a statement the lowering does not know"),
            Stmt::Let { binder, init, mutable, .. } => {
                let name = body.binder(*binder).clone();
                let ty = self.mty_of(*init);
                let value = self.expr(*init)?;
                if &*name == "_" {
                    // Kept by nobody: an owner is released at once.
                    if ty.needs_drop() {
                        let place = self.operand_place(value, &ty);
                        self.emit(Inst::Drop(place));
                    }
                    return Ok(());
                }
                let local = self.new_local(Some(name.clone()), ty);
                self.assign(Place::local(local), Rvalue::Use(value));
                self.bind(*binder, local);
                self.own(local);
                let _ = mutable;
                Ok(())
            }
            Stmt::Assign { target, op, value } => self.assignment(*target, *op, *value),
            Stmt::Expr(e) => {
                self.expr_discard(*e)?;
                Ok(())
            }
            Stmt::If { cond, then, els } => self.if_stmt(*cond, then, els.as_ref()),
            Stmt::While { cond, body: block } => {
                let header = self.new_block();
                let inside = self.new_block();
                let exit = self.new_block();
                self.terminate(Terminator::Goto(header));
                self.switch_to(header);
                let mark = self.temporaries.len();
                let c = self.expr(*cond)?;
                self.release_temporaries(mark);
                self.terminate(Terminator::Branch(c, inside, exit));
                self.switch_to(inside);
                self.loops.push((header, exit));
                self.loop_frames.push(self.frames.len());
                let result = self.scoped_block(block);
                self.loop_frames.pop();
                self.loops.pop();
                result?;
                self.terminate(Terminator::Goto(header));
                self.switch_to(exit);
                Ok(())
            }
            Stmt::ForRange { binder, lo, hi, body: block } => self.for_range(*binder, *lo, *hi, block),
            Stmt::ForEach { index, element, iterable, body: block } => {
                self.for_each(*index, *element, *iterable, block)
            }
            Stmt::Each { binder, count, body: block } => self.for_count(*binder, *count, block),
            Stmt::Match { subject, arms } => self.match_stmt(*subject, arms),
            Stmt::Return(value) => {
                let value = match value {
                    Some(e) => Some(self.expr(*e)?),
                    None => None,
                };
                self.return_with(value)?;
                Ok(())
            }
            Stmt::Break => {
                let (_, exit) = *self.loops.last().ok_or_else(|| LowerError("break outside a loop".into()))?;
                let from = self.loop_frames.last().copied().unwrap_or(self.frames.len());
                self.release_from(from)?;
                self.terminate(Terminator::Goto(exit));
                Ok(())
            }
            Stmt::Continue => {
                let (next, _) = *self.loops.last().ok_or_else(|| LowerError("continue outside a loop".into()))?;
                let from = self.loop_frames.last().copied().unwrap_or(self.frames.len());
                self.release_from(from)?;
                self.terminate(Terminator::Goto(next));
                Ok(())
            }
            Stmt::Block(block) | Stmt::Unsafe(block) => self.scoped_block(block),
            Stmt::Stack { binder, .. } => {
                // The checker typed the binder as an `rw` view of the element over the capacity
                // it folded: the array is that.
                let name = body.binder(*binder).clone();
                let (element, count) = match self.check.binder_types.get(binder.0 as usize) {
                    Some(Ty::View(view)) => match view.extent {
                        cairn_hir::types::Extent::Literal(count) => (view.elem.clone(), count),
                        _ => return fail("stack storage without a folded capacity"),
                    },
                    _ => return fail("stack storage the check did not type"),
                };
                let ty = MTy::Array(Arc::new(mty(self.db, &element)), count);
                let local = self.new_local(Some(name.clone()), ty);
                self.assign(Place::local(local), Rvalue::Zeroed);
                self.bind(*binder, local);
                // Elements that own storage are released with the frame, as a `buffer`'s are.
                self.own(local);
                Ok(())
            }
            Stmt::Buffer { binder, capacity, .. } => self.buffer(*binder, *capacity),
            Stmt::Unpack { binders, value, .. } => self.unpack(binders, *value),
            Stmt::Defer(inner) => {
                self.defer(*inner);
                Ok(())
            }
            Stmt::Parallel { binder, count, body: block } => self.parallel(id, *binder, *count, block),
            Stmt::Collect(c) => self.collect(id, c),
        }
    }

    pub(super) fn if_stmt(&mut self, cond: ExprId, then: &HirBlock, els: Option<&Else>) -> R<()> {
        let mark = self.temporaries.len();
        let c = self.expr(cond)?;
        self.release_temporaries(mark);
        let then_block = self.new_block();
        let else_block = self.new_block();
        let join = self.new_block();
        self.terminate(Terminator::Branch(c, then_block, else_block));
        self.switch_to(then_block);
        self.scoped_block(then)?;
        self.terminate(Terminator::Goto(join));
        self.switch_to(else_block);
        match els {
            Some(Else::Block(block)) => self.scoped_block(block)?,
            Some(Else::If(nested)) => self.stmt(*nested)?,
            None => {}
        }
        self.terminate(Terminator::Goto(join));
        self.switch_to(join);
        Ok(())
    }

    /// `each i in n`: `for i in 0..n`.
    pub(super) fn for_count(&mut self, binder: cairn_hir::body::BinderId, count: ExprId, block: &HirBlock) -> R<()> {
        let hi_value = self.expr(count)?;
        let bound = self.bound_of(count);
        self.counted_loop(binder, lit_usize(0), hi_value, bound, block)
    }

    pub(super) fn for_range(
        &mut self,
        binder: cairn_hir::body::BinderId,
        lo: ExprId,
        hi: ExprId,
        block: &HirBlock,
    ) -> R<()> {
        let lo_value = self.expr(lo)?;
        let hi_value = self.expr(hi)?;
        let bound = self.bound_of(hi);
        self.counted_loop(binder, lo_value, hi_value, bound, block)
    }

    pub(super) fn counted_loop(
        &mut self,
        binder: cairn_hir::body::BinderId,
        lo_value: Operand,
        hi_value: Operand,
        bound: Option<Bound>,
        block: &HirBlock,
    ) -> R<()> {
        let hi_local = self.temp(MTy::usize());
        self.assign(Place::local(hi_local), Rvalue::Use(hi_value));
        let name = self.body.binder(binder).clone();
        let counter = self.new_local(Some(name.clone()), MTy::usize());
        self.assign(Place::local(counter), Rvalue::Use(lo_value));
        let blocks = self.loop_head(counter, copy(hi_local));
        let mark = self.facts.len();
        self.bind(binder, counter);
        if let Some(bound) = bound {
            self.facts.push((counter, bound));
        }
        self.counted_body(block, mark, counter, blocks)
    }

    pub(super) fn for_each(
        &mut self,
        index: Option<cairn_hir::body::BinderId>,
        element: cairn_hir::body::BinderId,
        iterable: ExprId,
        block: &HirBlock,
    ) -> R<()> {
        let whole = self.place(iterable)?;
        let lent = self.lent_part(iterable, &whole)?;
        // A view cannot change while the loop runs; anything else — an owner, a record lending
        // a part — the body may grow, shrink, replace or move (`vec.push(v, x)` in `for x in v`),
        // so each element is read as `xs[i]` is (§8): through the iterable as it is then, with a
        // bounds guard that can fail.
        let fixed = lent.is_none() && matches!(self.place_ty(&whole)?, MTy::View(_));
        let place = lent.clone().unwrap_or_else(|| whole.clone());
        let elem_ty = self.place_ty(&place)?.element().cloned().unwrap_or(MTy::Void);
        let len = self.temp(MTy::usize());
        let length = self.len_of(&place)?;
        self.assign(Place::local(len), Rvalue::Use(length));
        let counter = self.temp(MTy::usize());
        self.assign(Place::local(counter), Rvalue::Use(lit_usize(0)));
        let blocks = self.loop_head(counter, copy(len));
        let mark = self.facts.len();
        if let Some(index) = index {
            let name = self.body.binder(index).clone();
            let local = self.new_local(Some(name.clone()), MTy::usize());
            self.assign(Place::local(local), Rvalue::Use(copy(counter)));
            self.bind(index, local);
        }
        // The element read: its bounds guard is the loop's own site; over a view it cannot fail.
        let place = if fixed {
            self.guard(GuardKind::Bounds, Check::InBounds(copy(counter), copy(len)), Some(iterable), true);
            place
        } else {
            let current = match lent {
                Some(_) => self.lent_part(iterable, &whole)?.unwrap_or_else(|| whole.clone()),
                None => whole.clone(),
            };
            let now = self.len_of(&current)?;
            self.guard(GuardKind::Bounds, Check::InBounds(copy(counter), now), Some(iterable), false);
            current
        };
        let name = self.body.binder(element).clone();
        let local = self.new_local(Some(name.clone()), elem_ty);
        self.assign(Place::local(local), Rvalue::Use(Operand::Copy(place.project(Proj::Index(copy(counter))))));
        self.bind(element, local);
        self.counted_body(block, mark, counter, blocks)
    }

    /// Opens a counted loop: a header testing `counter < hi` (the counter is set before), and
    /// lowering continues in the body. Returns the header, the latch and the exit.
    pub(super) fn loop_head(&mut self, counter: Local, hi: Operand) -> (BlockId, BlockId, BlockId) {
        let header = self.new_block();
        let inside = self.new_block();
        let latch = self.new_block();
        let exit = self.new_block();
        self.terminate(Terminator::Goto(header));
        self.switch_to(header);
        let more = self.value(MTy::Bool, Rvalue::Binary(BinOp::Lt, copy(counter), hi));
        self.terminate(Terminator::Branch(more, inside, exit));
        self.switch_to(inside);
        (header, latch, exit)
    }

    /// The body of a counted loop and its latch: the body with the loop's bindings in scope
    /// (dropped after it, back to `mark`), then `counter += 1` and the jump back to `header`;
    /// lowering continues at `exit`. The counter was below its bound on entry to the body, so
    /// the increment cannot overflow.
    pub(super) fn counted_body(
        &mut self,
        block: &Arc<[StmtId]>,
        mark: usize,
        counter: Local,
        blocks: (BlockId, BlockId, BlockId),
    ) -> R<()> {
        self.in_loop(mark, blocks, |this| {
            this.open_frame();
            this.block(block).and_then(|()| this.close_frame())
        })?;
        self.loop_latch(counter, blocks);
        Ok(())
    }

    /// Lowers `each` as (one version of) a loop's body: `break` and `continue` reach the loop,
    /// the facts pushed since `mark` are dropped after it, and an open end goes to the latch.
    pub(super) fn in_loop(
        &mut self,
        mark: usize,
        (_, latch, exit): (BlockId, BlockId, BlockId),
        each: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        self.loops.push((latch, exit));
        self.loop_frames.push(self.frames.len());
        let result = each(self);
        self.loop_frames.pop();
        self.loops.pop();
        self.facts.truncate(mark);
        result?;
        if self.open() {
            self.terminate(Terminator::Goto(latch));
        }
        Ok(())
    }

    /// A counted loop's latch (`counter += 1`, back to the header); lowering continues at the exit.
    pub(super) fn loop_latch(&mut self, counter: Local, (header, latch, exit): (BlockId, BlockId, BlockId)) {
        self.switch_to(latch);
        self.assign(Place::local(counter), Rvalue::Binary(BinOp::Add, copy(counter), lit_usize(1)));
        self.terminate(Terminator::Goto(header));
        self.switch_to(exit);
    }

    pub(super) fn match_stmt(&mut self, subject: ExprId, arms: &Arc<[Arm]>) -> R<()> {
        let ty = self.mty_of(subject);
        let value = self.expr(subject)?;
        let held = self.temp(ty.clone());
        self.assign(Place::local(held), Rvalue::Use(value));
        self.own(held);
        let tag = self.value(MTy::Int(IntTy::U32), Rvalue::Tag(Place::local(held)));
        let adt = match self.ty(subject).value() {
            Ty::Enum(adt) => adt.clone(),
            other => return fail(format!("match on {other}")),
        };
        let variants = variants_of(self.db, &adt);
        let join = self.new_block();
        let default = self.new_block();
        let mut cases = Vec::new();
        let mut targets = Vec::new();
        for arm in arms.iter() {
            let Some(index) = self.check.arm_variant(arm.id) else {
                return fail("a match arm the check did not resolve");
            };
            let index = index as usize;
            let block = self.new_block();
            cases.push((index as u64, block));
            targets.push((arm, index, block));
        }
        self.terminate(Terminator::Switch(tag, cases, default));
        for (arm, index, block) in targets {
            self.switch_to(block);
            self.open_frame();
            if let Some(binder) = arm.binder {
                let name = self.body.binder(binder).clone();
                if &*name != "_"
                    && let Some(Some(payload)) = variants.get(index).map(|(_, p)| p.clone())
                {
                    let payload_ty = mty(self.db, &payload);
                    let local = self.new_local(Some(name.clone()), payload_ty);
                    let source = Place::local(held).project(Proj::Payload(index as u32));
                    let value = self.take_from(source)?;
                    self.assign(Place::local(local), Rvalue::Use(value));
                    self.bind(binder, local);
                    self.own(local);
                }
            }
            self.scoped_block(&arm.body)?;
            self.close_frame()?;
            self.terminate(Terminator::Goto(join));
        }
        self.switch_to(default);
        self.guard(GuardKind::Tag, Check::Unreachable, Some(subject), false);
        self.terminate(Terminator::Unreachable);
        self.switch_to(join);
        Ok(())
    }

    pub(super) fn assignment(&mut self, target: ExprId, op: Option<BinaryOp>, value: ExprId) -> R<()> {
        // The value first, then the place (the right side is sequenced before the left).
        let rhs = self.expr(value)?;
        let place = self.place(target)?;
        match op {
            None => {
                // What the place held is released first (an owner assigned over).
                if self.place_ty(&place)?.needs_drop() {
                    self.emit(Inst::Drop(place.clone()));
                }
                self.assign(place, Rvalue::Use(rhs))
            }
            Some(op) => {
                let current = Operand::Copy(place.clone());
                let ty = self.place_ty(&place)?;
                let result = self.arith(op, ty, current, rhs, Some(target))?;
                self.assign(place, Rvalue::Use(result));
            }
        }
        Ok(())
    }
}
