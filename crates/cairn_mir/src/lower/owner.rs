//! Lowering owners (language §22): moves, releases, `Buf[T](n)`, `take` and `swap`.
//!
//! A move copies the owner's words and leaves the zero value in the place it left, so a
//! moved-from place owns nothing. Every owner local (a binding, a by-value parameter, a
//! temporary the lowering made) belongs to the *frame* of the block that declared it, and is
//! released (`Inst::Drop`, which also zeroes it) wherever that block is left: at its end, at a
//! `return`, at a `break` or `continue` out of it — in reverse order of declaration. Releasing a
//! moved-from place does nothing, which is why the lowering needs no drop flags: which places
//! hold a value on which path is the checker's ownership walk's to judge (`E-MOVED`), and what
//! it proves here is that no place is used after its value moved.

use super::*;

impl Lower<'_> {
    /// Opens the frame of a block.
    pub(super) fn open_frame(&mut self) {
        self.frames.push(Vec::new());
    }

    /// Closes the innermost frame: its owners are released where the block falls through.
    pub(super) fn close_frame(&mut self) {
        let frame = self.frames.pop().unwrap_or_default();
        if self.open() {
            for &local in frame.iter().rev() {
                self.emit(Inst::Drop(Place::local(local)));
            }
        }
    }

    /// Releases the owners of the frames from `from` on (innermost first), for a jump that
    /// leaves them.
    pub(super) fn release_from(&mut self, from: usize) {
        let locals: Vec<Local> =
            self.frames[from.min(self.frames.len())..].iter().rev().flat_map(|f| f.iter().rev().copied()).collect();
        for local in locals {
            self.emit(Inst::Drop(Place::local(local)));
        }
    }

    /// `return value`: the value is computed (and moved) already; every frame is released.
    pub(super) fn return_with(&mut self, value: Option<Operand>) {
        // The value must not be read from a place a release is about to clear.
        let value = match value {
            Some(Operand::Copy(place))
                if !self.frames.iter().flatten().all(|l| l.0 == u32::MAX) || !self.temporaries.is_empty() =>
            {
                match crate::place_ty(&self.locals, &place) {
                    Some(ty) => {
                        let t = self.temp(ty);
                        self.assign(Place::local(t), Rvalue::Use(Operand::Copy(place)));
                        Some(copy(t))
                    }
                    None => Some(Operand::Copy(place)),
                }
            }
            other => other,
        };
        let pending: Vec<Local> = self.temporaries.clone();
        for local in pending.into_iter().rev() {
            self.emit(Inst::Drop(Place::local(local)));
        }
        self.release_from(0);
        self.terminate(Terminator::Return(value));
    }

    /// Makes `local` an owner of the innermost frame when its type owns heap storage.
    pub(super) fn own(&mut self, local: Local) {
        if self.local_ty(local).needs_drop()
            && let Some(frame) = self.frames.last_mut()
        {
            frame.push(local);
        }
    }

    /// A value read from `place` for a use that consumes it: an owner moves (its words are
    /// copied into a temporary and the place is zeroed), anything else is copied.
    pub(super) fn take_from(&mut self, place: Place) -> R<Operand> {
        let ty = self.place_ty(&place)?;
        if !ty.needs_drop() {
            return Ok(Operand::Copy(place));
        }
        let t = self.temp(ty);
        self.assign(Place::local(t), Rvalue::Use(Operand::Copy(place.clone())));
        self.assign(place, Rvalue::Zeroed);
        Ok(copy(t))
    }

    /// `Buf[T](n)`.
    pub(super) fn buf_new(&mut self, e: ExprId, args: &[ExprId]) -> R<Operand> {
        let ty = self.mty_of(e);
        let MTy::Buf(elem) = &ty else { return fail(format!("Buf(…) of type {ty}")) };
        let count = self.expr(args[0])?;
        Ok(self.value(ty.clone(), Rvalue::Alloc((**elem).clone(), count)))
    }

    /// `take(place)`: the place's value, the zero value left behind.
    pub(super) fn take(&mut self, args: &[ExprId]) -> R<Operand> {
        let place = self.place(args[0])?;
        let ty = self.place_ty(&place)?;
        let t = self.temp(ty);
        self.assign(Place::local(t), Rvalue::Use(Operand::Copy(place.clone())));
        self.assign(place, Rvalue::Zeroed);
        Ok(copy(t))
    }

    /// `swap(a, b)`.
    pub(super) fn swap(&mut self, args: &[ExprId]) -> R<Operand> {
        let a = self.place(args[0])?;
        let b = self.place(args[1])?;
        let ty = self.place_ty(&a)?;
        let t = self.temp(ty);
        self.assign(Place::local(t), Rvalue::Use(Operand::Copy(a.clone())));
        self.assign(a, Rvalue::Use(Operand::Copy(b.clone())));
        self.assign(b, Rvalue::Use(copy(t)));
        Ok(Operand::Const(Const::Bool(false)))
    }

    /// Releases the statement's temporaries that own storage (a call's result used in place).
    pub(super) fn release_temporaries(&mut self, mark: usize) {
        let temps: Vec<Local> = self.temporaries.drain(mark..).collect();
        if self.open() {
            for local in temps.into_iter().rev() {
                self.emit(Inst::Drop(Place::local(local)));
            }
        }
    }
}
