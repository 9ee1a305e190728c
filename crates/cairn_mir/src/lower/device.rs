//! Lowering device work for emulation (language §36, §37, §41): `transfer(dst, src)`, and
//! queued work (`spawn transfer`, `spawn parallel`), which runs to completion at its spawn.
//!
//! Under `--emulate` device memory is host memory of exactly the requested size (a `buffer …
//! @device` lowers as any buffer), so a transfer is an element copy: a counted loop that moves
//! `src[k]` into `dst[k]` (LLVM turns it into a `memcpy`). The extents agree by the checker's
//! identity rule; when a side is a part, one guard says the lengths agree (`hi - lo == len`).
//! The element accesses need no guards of their own: `k` runs below the one length both share.

use super::*;

impl Lower<'_> {
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

    /// `transfer(dst, src)`.
    pub(super) fn transfer(&mut self, e: ExprId, args: &[ExprId]) -> R<Operand> {
        let [dst, src] = args else { return fail("a transfer without two arguments") };
        let elem = match self.ty(*dst).value() {
            Ty::View(view) => mty(self.db, &view.elem),
            _ => return fail("a transfer into something other than a view"),
        };
        let view_ty = MTy::View(Arc::new(elem));
        let (to, _) = self.view_argument(*dst, &view_ty)?;
        let to = self.operand_place(to, &view_ty);
        let (from, _) = self.view_argument(*src, &view_ty)?;
        let from = self.operand_place(from, &view_ty);
        let len = self.temp(MTy::usize());
        let length = self.len_of(&to)?;
        self.assign(Place::local(len), Rvalue::Use(length));
        let part = |x: ExprId| matches!(self.body.expr(self.body.unparen(x)), Expr::Part { .. });
        if part(*dst) || part(*src) {
            let from_len = self.len_of(&from)?;
            self.guard(GuardKind::Bounds, Check::PartLength(lit_usize(0), copy(len), from_len), Some(e), false);
        }
        let counter = self.temp(MTy::usize());
        self.assign(Place::local(counter), Rvalue::Use(lit_usize(0)));
        let blocks = self.loop_head(counter, copy(len));
        let value = Operand::Copy(from.project(Proj::Index(copy(counter))));
        self.assign(to.project(Proj::Index(copy(counter))), Rvalue::Use(value));
        self.terminate(Terminator::Goto(blocks.1));
        self.loop_latch(counter, blocks);
        Ok(Operand::Const(Const::Bool(false)))
    }
}
