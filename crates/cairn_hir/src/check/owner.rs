//! Owners of heap storage in a body (language §22.1): `Buf[T](n)` (and `Buf(n)` where the
//! expected type names the element), `take(place)` and `swap(a, b)`, and an owner lent whole
//! where a view is expected. Which uses move an owner, and where one is released, is the
//! ownership walk's (`moves.rs`), run once this check has typed the body.

use super::*;
use crate::types::{Mode, ViewTy};

impl Cx<'_> {
    /// `Buf[T](n)` / `Buf(n)`: `n` zeroed elements on the heap. `explicit` holds the written
    /// type arguments, if any.
    pub(crate) fn buf_new(
        &mut self,
        e: ExprId,
        explicit: Option<&[ExprId]>,
        args: &[ExprId],
        expected: Option<&Ty>,
    ) -> R<Ty> {
        self.target(e, CallTarget::Builtin(crate::builtins::Builtin::Buf));
        let ty = self.constructed_type(e, "Buf", explicit, expected, |t| matches!(t, Ty::Buf(_)), "Buf[T](n)")?;
        let Ty::Buf(elem) = &ty else { return Ok(ty) };
        let elem = (**elem).clone();
        if crate::generics::kind_of(self.db, &elem) == crate::generics::Kind::Linear {
            return Err(Diag::new(
                "E-LINEAR-STORAGE",
                format!(
                    "Buf[{elem}] would hold zeroed {elem} values, and {elem} is linear, which zeroed storage cannot forge: keep each one in a local or a field."
                ),
                Anchor::Expr(e),
            ));
        }
        if args.len() != 1 {
            return Err(Diag::new("E-ARITY", "Buf[T](n) takes one argument, the element count.", Anchor::Expr(e)));
        }
        if let Expr::Literal(crate::body::Literal::Int { value: Some(v), .. }) =
            self.body.expr(self.body.unparen(args[0]))
            && *v > i64::MAX as u128
        {
            return Err(Diag::new(
                "E-OWNER-EXTENT",
                format!("A capacity of {v} is above 2^63-1, more than any heap can hold."),
                Anchor::Expr(args[0]),
            ));
        }
        self.check(args[0], Some(&Ty::usize()))?;
        for effect in ["alloc", "zero_init", "trap"] {
            self.effect(effect);
        }
        self.site(GuardKind::Allocation);
        Ok(Ty::Buf(Arc::new(elem)))
    }

    /// `Array[T, N]()` / `Array()`: `N` zeroed elements held inline. `explicit` holds the written
    /// arguments, if any.
    pub(crate) fn array_new(
        &mut self,
        e: ExprId,
        explicit: Option<&[ExprId]>,
        args: &[ExprId],
        expected: Option<&Ty>,
    ) -> R<Ty> {
        self.target(e, CallTarget::Builtin(crate::builtins::Builtin::Array));
        let ty =
            self.constructed_type(e, "Array", explicit, expected, |t| matches!(t, Ty::Array(..)), "Array[T, N]()")?;
        if !args.is_empty() {
            return Err(Diag::new(
                "E-ARITY",
                "Array[T, N]() takes no arguments: its elements start zeroed.",
                Anchor::Expr(e),
            ));
        }
        self.effect("zero_init");
        Ok(ty)
    }

    /// The type an owner's constructor makes: `Form[args](…)` resolved as the type written
    /// (`Buf[u8]`, `Array[u8, 4]`, `Dyn[Shape]`), or, with the brackets left out, the expected type
    /// when it is of that form (`E-INFER` otherwise).
    pub(crate) fn constructed_type(
        &mut self,
        e: ExprId,
        form: &str,
        explicit: Option<&[ExprId]>,
        expected: Option<&Ty>,
        of_form: fn(&Ty) -> bool,
        example: &str,
    ) -> R<Ty> {
        let Some(written) = explicit else {
            return match expected {
                Some(ty) if of_form(ty) => Ok(ty.clone()),
                _ => Err(Diag::new(
                    "E-INFER",
                    format!(
                        "Nothing here says what this {form} is: write {example}, or give the binding its type (`let x:{form}[…] = {form}(…);`)."
                    ),
                    Anchor::Expr(e),
                )),
            };
        };
        let mut parts = Vec::new();
        for &arg in written {
            parts.push(match self.body.expr(self.body.unparen(arg)) {
                // A natural argument (`Array[u8, 16]`).
                Expr::Literal(crate::body::Literal::Int { text, .. }) => crate::body::TypeArg::Nat(text.clone()),
                _ => match self.expr_as_type(arg) {
                    Some(t) => crate::body::TypeArg::Type(t),
                    None => return Err(Diag::new("E-TYPE", "Expected a type argument.", Anchor::Expr(arg))),
                },
            });
        }
        let written = crate::body::TypeRef::Path { path: Arc::from(vec![Arc::from(form)]), args: Arc::from(parts) };
        self.resolve_written(&written).map_err(|err| Diag::new(err.code, err.message, Anchor::Expr(e)))
    }

    /// `take(place)`: the owner moves out, the place keeps the zero value.
    pub(crate) fn take(&mut self, e: ExprId, args: &[ExprId]) -> R<Ty> {
        if args.len() != 1 {
            return Err(Diag::new("E-ARITY", "take takes one place: `take(r.field)`.", Anchor::Expr(e)));
        }
        let ty = self.owner_place(args[0], "take")?;
        if crate::generics::kind_of(self.db, &ty) == crate::generics::Kind::Linear {
            return Err(Diag::new(
                "E-LINEAR-STORAGE",
                format!("take would leave a zeroed {ty} behind, and a linear value cannot be forged: use swap(a, b)."),
                Anchor::Expr(e),
            ));
        }
        Ok(ty)
    }

    /// `swap(a, b)`: two places of one type exchange what they hold.
    pub(crate) fn swap(&mut self, e: ExprId, args: &[ExprId]) -> R<Ty> {
        if args.len() != 2 {
            return Err(Diag::new("E-ARITY", "swap takes two places of one type: `swap(a, b)`.", Anchor::Expr(e)));
        }
        let first = self.owner_place(args[0], "swap")?;
        let second = self.owner_place(args[1], "swap")?;
        if !crate::check::expr::same(&first, &second) {
            return Err(self.mismatch(args[1], &first, &second));
        }
        let places = [(self.place_of(args[0], false), true), (self.place_of(args[1], false), true)];
        self.alias_check(e, &places)?;
        Ok(Ty::Void)
    }

    /// A place that `take` or `swap` writes: a mutable local, a field or element reached
    /// through one, or through an `rw` borrow.
    fn owner_place(&mut self, arg: ExprId, what: &str) -> R<Ty> {
        if !matches!(self.body.expr(self.body.unparen(arg)), Expr::Name(_) | Expr::Field { .. } | Expr::Index { .. }) {
            return Err(Diag::new(
                "E-LVALUE",
                format!("{what} works on places: a mutable local, or a field or element of one."),
                Anchor::Expr(arg),
            ));
        }
        if self.root_name(arg).is_none() {
            let ty = self.check(arg, None)?;
            return Ok(ty);
        }
        let ty = self.place(arg)?;
        let root = self.root_name(arg).unwrap_or_default();
        self.effect(format!("write:{root}"));
        self.effect(format!("read:{root}"));
        Ok(ty)
    }

    /// An owner of elements written where a view is expected means its elements, lent whole:
    /// an `rw` view when its holder may be written, else `ro`, whose extent identity is
    /// `len(path)` (language §22.1). Any other type is returned as it is.
    pub(crate) fn lent(&self, arg: ExprId, ty: Ty) -> Ty {
        let (elem, fixed) = match &ty {
            Ty::Buf(elem) => (elem, None),
            Ty::Array(elem, n) => (elem, Some(*n)),
            // A record that lends a part of a Buf field means that part (language §22.3).
            Ty::Record(adt) => {
                let Some(lends) = crate::decl::record_lends(self.db, adt.item) else { return ty };
                let fields = crate::decl::fields_of(self.db, adt);
                let Some((_, Ty::Buf(elem))) = fields.get(lends.carrier as usize) else { return ty };
                let mode = if self.elements_writable(arg) { Mode::Rw } else { Mode::Ro };
                let elem = elem.clone();
                return Ty::View(ViewTy { mode, elem, extent: Extent::Unknown, place: crate::types::Place::Host });
            }
            _ => return ty,
        };
        let mode = if self.elements_writable(arg) { Mode::Rw } else { Mode::Ro };
        let path = self.dotted_path(arg).map(|p| p.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join("."));
        let extent = match (fixed, path) {
            (Some(n), _) => Extent::Literal(n),
            (None, Some(path)) => Extent::Len(Arc::from(path)),
            (None, None) => Extent::Unknown,
        };
        Ty::View(ViewTy { mode, elem: elem.clone(), extent, place: crate::types::Place::Host })
    }

    /// `lent`, where the lending happens: a record's lent part is checked there (a bounds site).
    pub(crate) fn lend(&mut self, arg: ExprId, ty: Ty) -> Ty {
        let part = matches!(ty, Ty::Record(_));
        let lent = self.lent(arg, ty);
        if part && lent.as_view().is_some() {
            self.site(GuardKind::Bounds);
        }
        lent
    }

    /// True when the elements of the owner at `arg` may be written: its root is a `let mut`
    /// local or an `rw` borrow.
    pub(crate) fn elements_writable(&self, arg: ExprId) -> bool {
        let Some(root) = self.root_name(arg) else { return false };
        match self.local(&root) {
            Some(local) => match &local.ty {
                Ty::Borrow(mode, _) => *mode == Mode::Rw,
                _ => local.mutable,
            },
            None => false,
        }
    }
}

impl Cx<'_> {
    /// `buffer name:T[n] = zeroed;` (language §22.1): `n` zeroed elements on the heap, released
    /// where the block ends, bound as an `rw` view whose extent identity is `n`.
    pub(crate) fn buffer(
        &mut self,
        binder: BinderId,
        element: &crate::body::TypeRef,
        capacity: ExprId,
        placed: bool,
    ) -> R<()> {
        self.fresh(binder, |n| format!("The storage name {n} is already bound; pick a fresh name."))?;
        let elem = self.resolve_written(element).map_err(|e| Diag::new(e.code, e.message, Anchor::Binder(binder)))?;
        if let Err(err) = crate::decl::element_rule(self.db, &elem, "A buffer") {
            return Err(Diag::new(err.code, err.message, Anchor::Binder(binder)));
        }
        if crate::generics::kind_of(self.db, &elem) == crate::generics::Kind::Linear {
            return Err(Diag::new(
                "E-LINEAR-STORAGE",
                format!(
                    "A buffer of {elem} would hold zeroed {elem} values, and {elem} is linear: keep each one in a local or a field."
                ),
                Anchor::Binder(binder),
            ));
        }
        if placed {
            return Err(Diag::new(
                "E-UNSUPPORTED",
                "A placed buffer (`@device`, `@pinned`, `@unified`) is device storage, which this compiler does not build yet: leave the placement out for host memory.",
                Anchor::Binder(binder),
            ));
        }
        self.check(capacity, Some(&Ty::usize()))?;
        let extent = self.owner_extent(capacity)?;
        for effect in ["alloc", "free", "zero_init", "trap"] {
            self.effect(effect);
        }
        self.site(GuardKind::Allocation);
        let name = self.body.binder(binder).clone();
        let view = Ty::View(ViewTy { mode: Mode::Rw, elem: Arc::new(elem), extent, place: crate::types::Place::Host });
        self.bind(binder, Local { name, ty: view, mutable: false, kind: LocalKind::Stack, literal: None });
        Ok(())
    }

    /// The extent identity of a `buffer`'s capacity: a literal, a constant's value, or an
    /// immutable `usize` local's name; anything computed must be bound first (`E-OWNER-EXTENT`).
    fn owner_extent(&self, capacity: ExprId) -> R<Extent> {
        let cap = self.body.unparen(capacity);
        let too_big = || {
            Diag::new(
                "E-OWNER-EXTENT",
                "A capacity above 2^63-1 is more than any heap can hold.",
                Anchor::Expr(capacity),
            )
        };
        match self.body.expr(cap) {
            Expr::Literal(crate::body::Literal::Int { value, .. }) => match value {
                Some(v) if *v < (1u128 << 63) => Ok(Extent::Literal(*v as u64)),
                _ => Err(too_big()),
            },
            Expr::Name(name) => {
                if let Some(local) = self.local(name) {
                    if local.mutable {
                        return Err(Diag::new(
                            "E-OWNER-EXTENT",
                            format!(
                                "A buffer's capacity is its extent identity and must not change: {name} is mutable. Bind the count to an immutable `let` first."
                            ),
                            Anchor::Expr(capacity),
                        ));
                    }
                    return Ok(Extent::Name(name.clone()));
                }
                match crate::consts::integer_constant(self.db, &self.module, name) {
                    Some(v) if v < (1u64 << 63) => Ok(Extent::Literal(v)),
                    Some(_) => Err(too_big()),
                    None => Ok(Extent::Unknown),
                }
            }
            _ => Err(Diag::new(
                "E-OWNER-EXTENT",
                "A buffer's capacity is its extent identity: a literal, a constant or an immutable usize name. Bind a computed count first (`let n = …;`).",
                Anchor::Expr(capacity),
            )),
        }
    }
}
