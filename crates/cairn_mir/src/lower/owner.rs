//! Lowering owners (language §22): moves, releases, `Buf[T](n)`, `buffer`, `take`, `swap`,
//! unpacking, and `defer`.
//!
//! A move copies the owner's words and leaves the zero value in the place it left, so a
//! moved-from place owns nothing. Every owner local (a binding, a by-value parameter, a
//! temporary the lowering made) belongs to the *frame* of the block that declared it, and so does
//! every `defer` written in it. Wherever a block is left — its end, a `return` (or `try`), a
//! `break` or `continue` out of it — its frame is unwound in reverse order of writing: a deferred
//! call is lowered again at that exit, and an owner is released (`Inst::Drop`, which also zeroes
//! it). Releasing a moved-from place does nothing, which is why the lowering needs no drop flags:
//! which places hold a value on which path is the checker's ownership walk's to judge
//! (`E-MOVED`, `E-LINEAR-*`), and what it proves here is that no place is used after its value
//! moved.

use super::*;

/// What leaving a block does, entry by entry.
#[derive(Debug, Clone, Copy)]
pub(super) enum Release {
    /// Release the owner this local holds.
    Drop(Local),
    /// Run the deferred call statement (`defer`'s inner statement).
    Defer(StmtId),
}

impl Lower<'_> {
    /// Opens the frame of a block.
    pub(super) fn open_frame(&mut self) {
        self.frames.push(Vec::new());
    }

    /// Closes the innermost frame, unwinding it where the block falls through.
    pub(super) fn close_frame(&mut self) -> R<()> {
        let frame = self.frames.pop().unwrap_or_default();
        if self.open() {
            self.unwind(&frame)?;
        }
        Ok(())
    }

    /// Unwinds the frames from `from` on (innermost first), for a jump that leaves them.
    pub(super) fn release_from(&mut self, from: usize) -> R<()> {
        let frames: Vec<Vec<Release>> = self.frames[from.min(self.frames.len())..].to_vec();
        for frame in frames.iter().rev() {
            self.unwind(frame)?;
        }
        Ok(())
    }

    /// One frame's entries, last written first. A deferred call is lowered with the frames
    /// outside its own (what it names was declared before it).
    fn unwind(&mut self, frame: &[Release]) -> R<()> {
        for entry in frame.iter().rev() {
            match *entry {
                Release::Drop(local) => self.emit(Inst::Drop(Place::local(local))),
                Release::Defer(stmt) => {
                    let mark = self.temporaries.len();
                    let result = self.deferred(stmt);
                    self.release_temporaries(mark);
                    result?;
                }
            }
        }
        Ok(())
    }

    /// The call a `defer` scheduled, as a statement (its result, if any, is discarded).
    fn deferred(&mut self, stmt: StmtId) -> R<()> {
        let body = self.body.clone();
        match body.stmt(stmt) {
            Stmt::Expr(e) => self.expr_discard(*e),
            _ => fail("a defer of something other than a call"),
        }
    }

    /// `defer call(args);`: recorded in the innermost frame, lowered where the block is left.
    pub(super) fn defer(&mut self, inner: StmtId) {
        if let Some(frame) = self.frames.last_mut() {
            frame.push(Release::Defer(inner));
        }
    }

    /// `return value`: the value is computed (and moved) already; every frame is unwound.
    pub(super) fn return_with(&mut self, value: Option<Operand>) -> R<()> {
        let unwinds = !self.temporaries.is_empty() || self.frames.iter().any(|f| !f.is_empty());
        // A deferred call or a release must not change the value being returned: a value read
        // from a place is copied out first.
        let value = match value {
            Some(Operand::Copy(place)) if unwinds => match crate::place_ty(&self.locals, &place) {
                Some(ty) => {
                    let t = self.temp(ty);
                    self.assign(Place::local(t), Rvalue::Use(Operand::Copy(place)));
                    Some(copy(t))
                }
                None => Some(Operand::Copy(place)),
            },
            other => other,
        };
        let pending: Vec<Local> = self.temporaries.clone();
        for local in pending.into_iter().rev() {
            self.emit(Inst::Drop(Place::local(local)));
        }
        self.release_from(0)?;
        self.terminate(Terminator::Return(value));
        Ok(())
    }

    /// Makes `local` an owner of the innermost frame when its type owns heap storage.
    pub(super) fn own(&mut self, local: Local) {
        if self.local_ty(local).needs_drop()
            && let Some(frame) = self.frames.last_mut()
        {
            frame.push(Release::Drop(local));
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
        let buf = self.value(ty.clone(), Rvalue::Alloc((**elem).clone(), count, Memory::Host));
        self.guard(GuardKind::Allocation, Check::Allocated(buf.clone()), Some(e), false);
        Ok(buf)
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

impl Lower<'_> {
    /// `buffer name:T[n] = zeroed;`: a hidden `Buf` owned by the block's frame, and the binder
    /// as the `rw` view of it the checker typed.
    pub(super) fn buffer(&mut self, binder: cairn_hir::body::BinderId, capacity: ExprId) -> R<()> {
        let Some(Ty::View(view)) = self.check.binder_types.get(binder.0 as usize).cloned() else {
            return fail("a buffer the check did not type");
        };
        let elem = mty(self.db, &view.elem);
        let count = self.expr(capacity)?;
        let storage = self.new_local(None, MTy::Buf(Arc::new(elem.clone())));
        let memory = match view.place {
            cairn_hir::types::Place::Device => Memory::Device,
            cairn_hir::types::Place::Unified => Memory::Unified,
            cairn_hir::types::Place::Host | cairn_hir::types::Place::Pinned => Memory::Host,
        };
        self.assign(Place::local(storage), Rvalue::Alloc(elem.clone(), count, memory));
        self.guard(GuardKind::Allocation, Check::Allocated(copy(storage)), Some(capacity), false);
        self.own(storage);
        let name = self.body.binder(binder).clone();
        let local = self.new_local(Some(name), MTy::View(Arc::new(elem)));
        self.assign(Place::local(local), Rvalue::View(Place::local(storage), None));
        self.bind(binder, local);
        Ok(())
    }

    /// `let Name(a, b) = value;`: the record moves into a temporary and each field moves out of
    /// it into its binder; a field bound to `_` is released at once.
    pub(super) fn unpack(&mut self, binders: &[cairn_hir::body::BinderId], value: ExprId) -> R<()> {
        let ty = self.mty_of(value);
        let whole = self.expr(value)?;
        let whole = self.operand_place(whole, &ty);
        for (index, &binder) in binders.iter().enumerate() {
            let field = whole.clone().project(Proj::Field(index as u32));
            let name = self.body.binder(binder).clone();
            if &*name == "_" {
                if self.place_ty(&field)?.needs_drop() {
                    self.emit(Inst::Drop(field));
                }
                continue;
            }
            let field_ty = self.place_ty(&field)?;
            let moved = self.take_from(field)?;
            let local = self.new_local(Some(name), field_ty);
            self.assign(Place::local(local), Rvalue::Use(moved));
            self.bind(binder, local);
            self.own(local);
        }
        Ok(())
    }
}

impl Lower<'_> {
    /// Where a view is expected, a record that lends (language §22.3) means the part
    /// `carrier[lo..hi]` of its `Buf` field, with the part's guard, its bounds read now: a view in
    /// a temporary. `None` when the expression at `e` is not such a record.
    pub(super) fn lent_part(&mut self, e: ExprId, place: &Place) -> R<Option<Place>> {
        let Ty::Record(adt) = self.ty(e).value().clone() else { return Ok(None) };
        let Some(lends) = cairn_hir::record_lends(self.db, adt.item) else { return Ok(None) };
        let carrier = place.clone().project(Proj::Field(lends.carrier));
        let bound = |b: cairn_hir::LendBound| match b {
            cairn_hir::LendBound::Literal(n) => lit_usize(n),
            cairn_hir::LendBound::Field(i) => Operand::Copy(place.clone().project(Proj::Field(i))),
        };
        let (lo, hi) = (bound(lends.lo), bound(lends.hi));
        let len = self.len_of(&carrier)?;
        self.guard(GuardKind::Bounds, Check::PartInBounds(lo.clone(), hi.clone(), len), Some(e), false);
        let elem = self.place_ty(&carrier)?.element().cloned().unwrap_or(MTy::Void);
        let view_ty = MTy::View(Arc::new(elem));
        let view = self.temp(view_ty);
        self.assign(Place::local(view), Rvalue::View(carrier, Some((lo, hi))));
        Ok(Some(Place::local(view)))
    }
}

impl Lower<'_> {
    /// `Dyn[Trait](value)`: the value moves into a heap block of its own (an allocation guard),
    /// and the Dyn is that block's address, the table of the value's impl, and the drop entry of
    /// the value's type (the zero function when it owns nothing).
    pub(super) fn dyn_new(&mut self, e: ExprId, args: &[ExprId]) -> R<Operand> {
        let ty = self.mty_of(e);
        let Some((imp, impl_args)) = self.check.dyn_lend(e) else {
            return fail("a Dyn whose impl the check did not record");
        };
        let impl_args = impl_args.clone();
        let value_ty = self.mty_of(args[0]);
        let value = self.expr(args[0])?;
        let block_ty = MTy::Buf(Arc::new(value_ty.clone()));
        let block = self.temp(block_ty);
        self.assign(Place::local(block), Rvalue::Alloc(value_ty.clone(), lit_usize(1), Memory::Host));
        self.guard(GuardKind::Allocation, Check::Allocated(copy(block)), Some(e), false);
        let slot = Place::local(block).project(Proj::Index(lit_usize(0)));
        self.assign(slot.clone(), Rvalue::Use(value));
        let object = self.value(MTy::Ptr(Arc::new(MTy::Int(IntTy::U8))), Rvalue::Ref(slot));
        let mut fields = vec![object];
        for method in cairn_hir::table_methods(self.db, imp) {
            fields.push(self.table_entry(method, &impl_args));
        }
        let drop_ty =
            MTy::Fn { params: Arc::from(vec![MTy::Ptr(Arc::new(MTy::Int(IntTy::U8)))]), ret: Arc::new(MTy::Void) };
        let entry = if value_ty.needs_drop() {
            Operand::Const(Const::Fn(self.drop_entry(&value_ty)))
        } else {
            self.value(drop_ty, Rvalue::Zeroed)
        };
        fields.push(entry);
        Ok(self.value(ty.clone(), Rvalue::Record(ty, fields)))
    }

    /// The drop entry of a type a `Dyn` may hold: a function of the object's address that
    /// releases what the object owns (its block is freed by the Dyn's own glue). Made once per
    /// type and program (the symbol names the type).
    fn drop_entry(&mut self, ty: &MTy) -> Arc<str> {
        let key = format!("{ty:?}");
        let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        let symbol: Arc<str> = Arc::from(format!("cairn.dyn_drop.{hash:016x}"));
        let object = LocalDecl { name: Some(Arc::from("object")), ty: MTy::Ptr(Arc::new(ty.clone())) };
        let release = Inst::Drop(Place::local(Local(0)).project(Proj::Deref));
        self.extra.push(Function {
            name: symbol.trim_start_matches("cairn.").into(),
            symbol: symbol.clone(),
            kind: FnKind::Function,
            params: 1,
            ret: MTy::Void,
            locals: vec![object],
            blocks: vec![Block {
                insts: vec![release],
                anchors: vec![None],
                term: Terminator::Return(None),
                term_anchor: None,
            }],
            extents: Vec::new(),
            device: false,
        });
        symbol
    }

    /// The `dyn` reference a Dyn lends (`reference`, the parameter's type): its leading words,
    /// once the guard says it holds a value.
    pub(super) fn dyn_owner_lent(&mut self, arg: ExprId, place: &Place, reference: &MTy) -> R<Operand> {
        self.dyn_held(arg, place);
        let MTy::Record { fields, .. } = reference else { return fail("a dyn reference of something else") };
        let words: Vec<Operand> =
            (0..fields.len()).map(|i| Operand::Copy(place.clone().project(Proj::Field(i as u32)))).collect();
        Ok(self.value(reference.clone(), Rvalue::Record(reference.clone(), words)))
    }

    /// The guard that a Dyn lent or called through holds a value: its table's first entry is
    /// set (a trait without members has nothing to call, and no guard).
    pub(super) fn dyn_held(&mut self, at: ExprId, place: &Place) {
        let Ok(MTy::DynBox(owner)) = self.place_ty(place) else { return };
        // The object's address, the members, the drop entry: members when more than two words.
        if let MTy::Record { fields, .. } = &*owner
            && fields.len() > 2
        {
            let code = Operand::Copy(place.clone().project(Proj::Field(1)));
            self.guard(GuardKind::DynLent, Check::Callable(code), Some(at), false);
        }
    }
}
