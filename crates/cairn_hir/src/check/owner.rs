//! Owners of heap storage in a body (language §22.1): `Buf[T](n)` (and `Buf(n)` where the
//! expected type names the element), `take(place)` and `swap(a, b)`, and an owner lent whole
//! where a view is expected. Which uses move an owner, and where one is released, is the
//! ownership walk's (`moves.rs`), run once this check has typed the body.

use std::sync::Arc;

use crate::body::{BinderId, Expr, ExprId};
use crate::diag::{Anchor, Diag};
use crate::types::{Extent, Ty};

use super::cx::{Cx, Local, LocalKind, R};
use super::result::{CallTarget, GuardKind, Resolution};
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
        self.zeroed_storage(&elem, "Buf", Anchor::Expr(e))?;
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
        if let Ty::Array(elem, _) = &ty {
            self.zeroed_storage(elem, "Array", Anchor::Expr(e))?;
        }
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

    /// `E-LINEAR-STORAGE` when storage that starts zeroed (`Buf`, `Array`, `buffer`, `stack`)
    /// would hold values of a linear kind — a `linear struct`, or anything holding one: zeroed
    /// storage would forge them. (The type rules catch a declared `linear struct` already; this
    /// catches the records and sums that hold one.)
    pub(crate) fn zeroed_storage(&self, elem: &Ty, form: &str, at: Anchor) -> R<()> {
        if crate::generics::kind_of(self.db, elem) != crate::types::Kind::Linear {
            return Ok(());
        }
        Err(Diag::new(
            "E-LINEAR-STORAGE",
            format!(
                "{form} of {elem} would start with zeroed {elem} values, and {elem} is linear, which zeroed storage cannot forge: keep each one in a local or a field."
            ),
            at,
        ))
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
        if crate::generics::kind_of(self.db, &ty) == crate::types::Kind::Linear {
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
        if !super::expr::same(&first, &second) {
            return Err(self.mismatch(args[1], &first, &second));
        }
        let places = [(self.place_of(args[0], false), true), (self.place_of(args[1], false), true)];
        self.alias_check(e, &places)?;
        Ok(Ty::Void)
    }

    /// A place that `take` or `swap` writes: a mutable local, a field or element reached
    /// through one, or through an `rw` borrow.
    fn owner_place(&mut self, arg: ExprId, what: &str) -> R<Ty> {
        let checked = self.owner_place_inner(arg, what)?;
        self.rw_lends.push(arg);
        self.keep_extent_pair(arg, if what == "take" { "taking" } else { "swapping" })?;
        Ok(checked)
    }

    fn owner_place_inner(&mut self, arg: ExprId, what: &str) -> R<Ty> {
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
        // A Buf field with a declared extent has that field's identity (`s.values` has `s.n`).
        if let (Some((adt, index)), Expr::Field { base, .. }) =
            (self.extent_pair_field(arg), self.body.expr(self.body.unparen(arg)))
            && let Some(extent) = crate::decl::field_extent(self.db, adt, index)
            && let Some(base_path) = self.dotted_path(*base)
        {
            let fields = &crate::decl::record_def(self.db, adt).fields;
            let extent_name = fields.get(extent as usize).map(|(n, _)| n.clone()).unwrap_or_default();
            let mut path: Vec<&str> = base_path.iter().map(|s| s.as_ref()).collect();
            path.push(&extent_name);
            let extent = Extent::Name(Arc::from(path.join(".")));
            return Ty::View(ViewTy { mode, elem: elem.clone(), extent, place: crate::types::Place::Host });
        }
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
        place: crate::types::Place,
    ) -> R<()> {
        self.fresh(binder, |n| format!("The storage name {n} is already bound; pick a fresh name."))?;
        let elem = self.resolve_written(element).map_err(|e| Diag::new(e.code, e.message, Anchor::Binder(binder)))?;
        if let Err(err) = crate::decl::element_rule(self.db, &elem, "A buffer") {
            return Err(Diag::new(err.code, err.message, Anchor::Binder(binder)));
        }
        self.zeroed_storage(&elem, "A buffer", Anchor::Binder(binder))?;
        self.check(capacity, Some(&Ty::usize()))?;
        let extent = self.owner_extent(capacity)?;
        // Device memory is taken and released on the device (`gpu_alloc`, `gpu_free`); pinned
        // and unified memory are host allocations the driver registers.
        let (take, release) =
            if place == crate::types::Place::Device { ("gpu_alloc", "gpu_free") } else { ("alloc", "free") };
        for effect in [take, release, "zero_init", "trap"] {
            self.effect(effect);
        }
        self.site(GuardKind::Allocation);
        let name = self.body.binder(binder).clone();
        let view = Ty::View(ViewTy { mode: Mode::Rw, elem: Arc::new(elem), extent, place });
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
            Expr::Field { .. } if let Some(v) = self.qualified_constant(cap) => {
                if v < (1u64 << 63) {
                    Ok(Extent::Literal(v))
                } else {
                    Err(too_big())
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

/// Record field extents (language §22.3): `struct Series { n:usize; values:Buf[f64][n]; }`. The
/// pair's invariant, `len(s.values) == s.n`, is kept statically, so neither half may change on
/// its own (`E-EXTENT-FIELD`); the record as a whole moves, is taken and swapped freely.
impl Cx<'_> {
    /// The field `e` reaches when it is half of an extent pair (its record and position).
    pub(crate) fn extent_pair_field(&self, e: ExprId) -> Option<(crate::input::Item, u32)> {
        let e = self.body.unparen(e);
        if !matches!(self.body.expr(e), Expr::Field { .. }) {
            return None;
        }
        match self.resolutions.get(e.0 as usize) {
            Some(Resolution::Field { adt, index }) if crate::decl::in_extent_pair(self.db, *adt, *index) => {
                Some((*adt, *index))
            }
            _ => None,
        }
    }

    /// `E-EXTENT-FIELD` when `e` is half of an extent pair that `what` would change alone.
    pub(crate) fn keep_extent_pair(&self, e: ExprId, what: &str) -> R<()> {
        let Some((adt, index)) = self.extent_pair_field(e) else { return Ok(()) };
        let fields = &crate::decl::record_def(self.db, adt).fields;
        let name = fields.get(index as usize).map(|(n, _)| n.clone()).unwrap_or_default();
        Err(Diag::new(
            "E-EXTENT-FIELD",
            format!(
                "{name} is half of the record's extent pair (a Buf field and the usize field holding its length), and {what} it alone would break `len == extent`: replace, take or swap the whole record instead."
            ),
            Anchor::Expr(e),
        ))
    }

    /// A constructor of a record with extent pairs writes each carrier inline as `Buf[T](e)`
    /// with the same expression `e` it gives the extent field.
    pub(crate) fn constructed_extents(&self, item: crate::input::Item, args: &[ExprId]) -> R<()> {
        let extents = crate::decl::record_def(self.db, item).extents.clone();
        for (index, extent) in extents.iter().enumerate() {
            let Some(extent) = extent else { continue };
            let (Some(&carrier), Some(&length)) = (args.get(index), args.get(*extent as usize)) else { continue };
            let inline = match self.body.expr(self.body.unparen(carrier)) {
                Expr::Call { args: count, .. } => {
                    matches!(
                        self.call_targets.iter().find(|(c, _)| *c == self.body.unparen(carrier)),
                        Some((_, CallTarget::Builtin(crate::builtins::Builtin::Buf)))
                    ) && count.len() == 1
                        && self.same_expr(count[0], length)
                }
                _ => false,
            };
            if !inline {
                return Err(Diag::new(
                    "E-EXTENT-FIELD",
                    "A record with a field extent is made with its Buf written inline on the very expression given to the extent field: `Series(n, Buf[f64](n))`.",
                    Anchor::Expr(carrier),
                ));
            }
        }
        Ok(())
    }

    /// True when two expressions are written the same (names, literals, fields, operators and
    /// calls, through parentheses).
    fn same_expr(&self, a: ExprId, b: ExprId) -> bool {
        let (a, b) = (self.body.unparen(a), self.body.unparen(b));
        match (self.body.expr(a), self.body.expr(b)) {
            (Expr::Name(x), Expr::Name(y)) => x == y,
            (Expr::Literal(x), Expr::Literal(y)) => x == y,
            (Expr::Field { base: p, name: x }, Expr::Field { base: q, name: y }) => x == y && self.same_expr(*p, *q),
            (Expr::Unary { op: o, operand: x }, Expr::Unary { op: p, operand: y }) => o == p && self.same_expr(*x, *y),
            (Expr::Binary { op: o, lhs: a1, rhs: b1 }, Expr::Binary { op: p, lhs: a2, rhs: b2 }) => {
                o == p && self.same_expr(*a1, *a2) && self.same_expr(*b1, *b2)
            }
            (Expr::Call { callee: f, args: x }, Expr::Call { callee: g, args: y }) => {
                self.same_expr(*f, *g)
                    && x.len() == y.len()
                    && x.iter().zip(y.iter()).all(|(p, q)| self.same_expr(*p, *q))
            }
            _ => false,
        }
    }
}
