//! Lowering device work (language §36, §37, §41): `transfer(dst, src)`, and
//! queued work (`spawn transfer`, `spawn parallel`), which runs to completion at its spawn.
//!
//! A transfer is one `Inst::Transfer` of `len(dst)` elements: the extents agree by the
//! checker's identity rule, and when a side is a part one guard says the lengths agree (`hi - lo
//! == len`). Under `--emulate` device memory is host memory of exactly the requested size, so
//! codegen copies it as host memory; a GPU build copies through the driver.

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
}
