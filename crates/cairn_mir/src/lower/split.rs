//! Index-set splitting of a lane loop: a region whose body is one `if` on the index alone runs
//! as three loops, so that the common case (the interior of a stencil) has no branch in it.
//!
//! `parallel i in n { if i > 0 && i + 1 < n { A } else { B } }` holds its condition on one
//! interval `[s, e)` of the index: the conjunction of bounds `i > x`, `i >= x`, `i < x`,
//! `i <= x`, `i + 1 < x`, `i + 1 <= x` (either side) against values that do not change while the
//! lane runs (literals, constants, immutable `usize` names, `len` of a name). The lane then runs
//! `B` over `lo..s'`, `A` over `s'..e'` and `B` over `e'..hi`, where `s'` and `e'` are the
//! interval clamped into the claim. Such a condition cannot trap (`i + 1` cannot overflow an index
//! below the count) or be observed, so skipping its evaluation changes nothing but the time: each
//! index runs exactly the statements it ran before, in the same order.

use super::*;

/// One side of the interval: `i >= value + add` (lower) or `i < value + add` (upper), with `add`
/// applied saturating.
struct Edge {
    value: ExprId,
    add: i8,
}

/// A lane body the splitting applies to: the `if` statement, its interval and its two branches.
pub(super) struct Split<'b> {
    stmt: StmtId,
    lower: Vec<Edge>,
    upper: Vec<Edge>,
    then: &'b HirBlock,
    els: Option<&'b Else>,
}

impl<'db> Lower<'db> {
    /// The split of `block` for the region's `binder`, when its whole body is one `if` on an
    /// interval of the index.
    pub(super) fn split_of<'b>(&self, binder: BinderId, block: &'b HirBlock) -> Option<Split<'b>>
    where
        'db: 'b,
    {
        let [stmt] = block[..] else { return None };
        let Stmt::If { cond, then, els } = self.body.stmt(stmt) else { return None };
        let mut split = Split { stmt, lower: Vec::new(), upper: Vec::new(), then, els: els.as_ref() };
        self.interval(binder, *cond, &mut split).then_some(split)
    }

    /// Adds the bounds `cond` puts on the index to `split`; false when it is not a conjunction
    /// of such bounds.
    fn interval(&self, binder: BinderId, cond: ExprId, split: &mut Split<'_>) -> bool {
        let Expr::Binary { op, lhs, rhs } = self.body.expr(self.body.unparen(cond)) else { return false };
        let (lhs, rhs) = (*lhs, *rhs);
        if *op == BinaryOp::And {
            return self.interval(binder, lhs, split) && self.interval(binder, rhs, split);
        }
        // Put the index on the left: `x > i` is `i < x`.
        let (op, index, value) = match (self.index_offset(binder, lhs), self.index_offset(binder, rhs)) {
            (Some(k), None) => (*op, k, rhs),
            (None, Some(k)) => match op {
                BinaryOp::Lt => (BinaryOp::Gt, k, lhs),
                BinaryOp::Le => (BinaryOp::Ge, k, lhs),
                BinaryOp::Gt => (BinaryOp::Lt, k, lhs),
                BinaryOp::Ge => (BinaryOp::Le, k, lhs),
                _ => return false,
            },
            _ => return false,
        };
        if self.bound_of(value).is_none() {
            return false;
        }
        // `i + k op x` with k in {0, 1}.
        let k = index as i8;
        let edge = match op {
            BinaryOp::Lt => (false, -k),
            BinaryOp::Le => (false, 1 - k),
            BinaryOp::Gt if k == 0 => (true, 1),
            BinaryOp::Ge if k == 0 => (true, 0),
            _ => return false,
        };
        match edge {
            (true, add) => split.lower.push(Edge { value, add }),
            (false, add) => split.upper.push(Edge { value, add }),
        }
        true
    }

    /// `Some(0)` for the region's index itself, `Some(1)` for `i + 1` or `1 + i`.
    fn index_offset(&self, binder: BinderId, e: ExprId) -> Option<u8> {
        let e = self.body.unparen(e);
        let is_index = |e: ExprId| {
            matches!(self.body.expr(self.body.unparen(e)), Expr::Name(_))
                && self.check.resolution(self.body.unparen(e)) == Resolution::Local(LocalRef::Binder(binder))
        };
        if is_index(e) {
            return Some(0);
        }
        let Expr::Binary { op: BinaryOp::Add, lhs, rhs } = self.body.expr(e) else { return None };
        let one = |e: ExprId| {
            matches!(self.body.expr(self.body.unparen(e)), Expr::Literal(Literal::Int { value: Some(1), .. }))
        };
        ((is_index(*lhs) && one(*rhs)) || (one(*lhs) && is_index(*rhs))).then_some(1)
    }

    /// The three loops of a split lane over `lo..hi` (parameters 1 and 2), each index known to
    /// stay below the length of each of `proved`.
    pub(super) fn split_loops(&mut self, binder: BinderId, proved: &[Local], split: Split<'_>) -> R<()> {
        let outer = self.anchor.replace(Anchor::Stmt(split.stmt));
        let (lo, hi) = (copy(Local(1)), copy(Local(2)));
        // The condition's own comparisons (`i + k op x`), to assume inside the interval.
        let mut known: Vec<(BinOp, bool, Operand)> = Vec::new();
        let mut start = lo.clone();
        for edge in &split.lower {
            let (x, at) = self.edge(edge)?;
            known.push(if edge.add == 1 { (BinOp::Gt, false, x) } else { (BinOp::Ge, false, x) });
            start = self.value(MTy::usize(), Rvalue::Binary(BinOp::Max, start, at));
        }
        let start = self.value(MTy::usize(), Rvalue::Binary(BinOp::Min, start, hi.clone()));
        let mut end = hi.clone();
        for edge in &split.upper {
            let (x, at) = self.edge(edge)?;
            known.push(match edge.add {
                -1 => (BinOp::Lt, true, x),
                0 => (BinOp::Lt, false, x),
                _ => (BinOp::Le, false, x),
            });
            end = self.value(MTy::usize(), Rvalue::Binary(BinOp::Min, end, at));
        }
        let end = self.value(MTy::usize(), Rvalue::Binary(BinOp::Max, end, start.clone()));
        self.anchor = outer;
        let name = self.body.binder(binder).clone();
        let counter = self.new_local(Some(name), MTy::usize());
        let (then, els) = (split.then, split.els);
        let otherwise = |this: &mut Self| match els {
            Some(Else::Block(block)) => this.scoped_block(block),
            Some(Else::If(nested)) => this.stmt(*nested),
            None => Ok(()),
        };
        self.split_loop(binder, counter, proved, lo, start.clone(), otherwise)?;
        // Inside the interval the condition holds: said to LLVM, which then drops the guards it
        // implied (`i - 1` cannot underflow, `xs[i + 1]` is in bounds).
        self.split_loop(binder, counter, proved, start, end.clone(), |this| {
            for (op, next, x) in &known {
                let index = if *next {
                    this.value(MTy::usize(), Rvalue::Binary(BinOp::Add, copy(counter), lit_usize(1)))
                } else {
                    copy(counter)
                };
                let holds = this.value(MTy::Bool, Rvalue::Binary(*op, index, x.clone()));
                this.emit(Inst::Assume(holds));
            }
            this.scoped_block(then)
        })?;
        self.split_loop(binder, counter, proved, end, hi, otherwise)
    }

    /// An edge's bound `x`, and the value the edge stands at: `x` plus its adjustment, saturating
    /// (`x + 1` at the largest `usize` stays there, `x - 1` at 0 stays 0), which keeps each
    /// interval exact.
    fn edge(&mut self, edge: &Edge) -> R<(Operand, Operand)> {
        let x = self.expr(edge.value)?;
        let at = match edge.add {
            0 => x.clone(),
            1 => {
                let up = self.value(MTy::usize(), Rvalue::Binary(BinOp::Add, x.clone(), lit_usize(1)));
                self.value(MTy::usize(), Rvalue::Binary(BinOp::Max, up, x.clone()))
            }
            _ => {
                let down = self.value(MTy::usize(), Rvalue::Binary(BinOp::Sub, x.clone(), lit_usize(1)));
                self.value(MTy::usize(), Rvalue::Binary(BinOp::Min, down, x.clone()))
            }
        };
        Ok((x, at))
    }

    /// One loop of a split lane: `counter` over `from..to`, the region's binder bound to it.
    fn split_loop(
        &mut self,
        binder: BinderId,
        counter: Local,
        proved: &[Local],
        from: Operand,
        to: Operand,
        body: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        self.assign(Place::local(counter), Rvalue::Use(from));
        let blocks = self.loop_head(counter, to);
        let mark = self.bind_lane(binder, counter, proved);
        self.in_loop(mark, blocks, body)?;
        self.loop_latch(counter, blocks);
        Ok(())
    }
}
