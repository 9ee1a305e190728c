//! The ownership walk's expressions: each use of an owner as a value (a move) or as a place (it
//! stays), the arguments of a call by the parameter each meets, and the refusals at a use —
//! `E-MOVED`, `E-MOVE-BORROW`, `E-PARTIAL-MOVE`, `E-MOVE-IN-LOOP`, `E-LEASED`, and `E-ALIAS` for a
//! value moved into a place inside itself.

use super::*;

impl Walk<'_, '_> {
    /// `e` used as a value: an owner it names moves.
    pub(super) fn value(&mut self, e: ExprId) -> R<()> {
        let e = self.cx.body.unparen(e);
        let body = self.cx.body.clone();
        match body.expr(e) {
            Expr::Name(_) => {
                if let Some(local) = self.local_of(e) {
                    let owner = self.owner_expr(e);
                    self.used(local, e, owner)?;
                    if owner {
                        self.moved(local, e)?;
                    }
                }
                Ok(())
            }
            Expr::Field { .. } | Expr::Index { .. } => {
                self.place(e)?;
                if self.owner_expr(e) && self.local_root(e) {
                    let path = self.cx.dotted_path(e).map(|p| p.join(".")).unwrap_or_else(|| "this place".into());
                    return Err(Diag::new(
                        "E-PARTIAL-MOVE",
                        format!(
                            "{path} is an owner inside a place, and moving it out would leave the place half empty: write take({path}) (it leaves the zero value behind) or swap it with another place."
                        ),
                        Anchor::Expr(e),
                    ));
                }
                Ok(())
            }
            Expr::Part { .. } => self.place(e),
            Expr::Call { callee, args } => self.call(e, *callee, args),
            Expr::Unary { operand, .. } => self.value(*operand),
            Expr::Try(operand) => {
                self.value(*operand)?;
                // A failure leaves the function from here.
                let from_scratch = self.state.clone();
                let frees = self.frees;
                self.leave_frames(0, Some(Anchor::Expr(e)))?;
                self.state = from_scratch;
                self.frees = frees || self.frees;
                Ok(())
            }
            Expr::Binary { lhs, rhs, .. } => {
                self.value(*lhs)?;
                self.value(*rhs)
            }
            Expr::Closure(closure) => {
                let block = &closure.body;
                self.depth += 1;
                let loops = std::mem::take(&mut self.loops);
                let result = self.block(block);
                self.loops = loops;
                self.depth -= 1;
                result.map(|_| ())
            }
            // Queued work: its tickets are named, not used (`after`); the work is walked where
            // it is written (under emulation it runs there).
            Expr::Spawn { work: crate::body::SpawnWork::Call(call), .. } => self.value(*call),
            Expr::Spawn { work: crate::body::SpawnWork::Region(region), .. } => self.stmt(*region).map(|_| ()),
            Expr::Paren(_) | Expr::Literal(_) | Expr::Missing | Expr::TypeArg(_) | Expr::Unsupported(_) => Ok(()),
        }
    }

    /// `E-ALIAS` for an assignment that moves a local into a place inside that same local
    /// (`t.kids[0] = t;`, language §22.2): the value would hold itself.
    pub(super) fn into_itself(&mut self, target: ExprId, value: ExprId) -> R<()> {
        let value = self.cx.body.unparen(value);
        let target = self.cx.body.unparen(target);
        if !matches!(self.cx.body.expr(value), Expr::Name(_)) || !self.owner(&self.ty(value)) {
            return Ok(());
        }
        let Some(moved) = self.local_of(value) else { return Ok(()) };
        let mut place = target;
        while let Expr::Field { base, .. } | Expr::Index { base, .. } = self.cx.body.expr(place) {
            place = self.cx.body.unparen(*base);
            if self.local_of(place) == Some(moved) {
                let name = self.name_of(moved);
                return Err(Diag::new(
                    "E-ALIAS",
                    format!(
                        "This moves {name} into a place inside {name} itself, which would then hold itself: move a copy made for it, or build the inner value first and store that."
                    ),
                    Anchor::Expr(value),
                ));
            }
        }
        Ok(())
    }

    /// True when the place `e` is rooted in a local (a field of a call's result is a
    /// temporary's, and taking it apart loses nothing).
    fn local_root(&self, e: ExprId) -> bool {
        match self.cx.body.expr(self.cx.body.unparen(e)) {
            Expr::Name(_) => self.local_of(self.cx.body.unparen(e)).is_some(),
            Expr::Field { base, .. } | Expr::Index { base, .. } => self.local_root(*base),
            _ => false,
        }
    }

    /// `e` used as a place: read, measured, lent, written; nothing moves.
    pub(super) fn place(&mut self, e: ExprId) -> R<()> {
        let e = self.cx.body.unparen(e);
        let body = self.cx.body.clone();
        match body.expr(e) {
            Expr::Name(_) => match self.local_of(e) {
                Some(local) => self.used(local, e, false),
                None => Ok(()),
            },
            Expr::Field { base, .. } => self.place(*base),
            Expr::Index { base, indices } => {
                self.place(*base)?;
                for &index in indices.iter() {
                    self.value(index)?;
                }
                Ok(())
            }
            Expr::Part { base, lo, hi } => {
                self.place(*base)?;
                self.value(*lo)?;
                self.value(*hi)
            }
            _ => {
                // A temporary used in place: released once used.
                self.value(e)?;
                let ty = self.ty(e);
                self.discarded(&ty, Anchor::Expr(e))
            }
        }
    }

    fn call(&mut self, e: ExprId, callee: ExprId, args: &Arc<[ExprId]>) -> R<()> {
        let target = self.cx.call_target_of(e).cloned();
        match target {
            Some(CallTarget::Builtin(builtin)) => {
                let in_place = matches!(
                    builtin,
                    Builtin::Len
                        | Builtin::Print
                        | Builtin::Println
                        | Builtin::Eprint
                        | Builtin::Eprintln
                        | Builtin::Format
                        | Builtin::Take
                        | Builtin::Swap
                        | Builtin::Transfer
                );
                // Method syntax puts the first argument in the callee (`b.len()`).
                let mut all: Vec<ExprId> = Vec::new();
                if let Expr::Field { base, .. } = self.cx.body.expr(self.cx.body.unparen(callee)) {
                    all.push(*base);
                }
                all.extend(args.iter().copied());
                for arg in all {
                    if in_place { self.place(arg)? } else { self.value(arg)? }
                }
                Ok(())
            }
            Some(CallTarget::Constructor) => {
                for &arg in args.iter() {
                    self.value(arg)?;
                }
                Ok(())
            }
            Some(CallTarget::Dynamic { member, .. }) => {
                // The receiver (wherever it stands) is lent to the call; the rest are values.
                let at = crate::signature::receiver_index(self.cx.db, member).unwrap_or(0);
                let mut all: Vec<ExprId> = Vec::new();
                if let Expr::Field { base, .. } = self.cx.body.expr(self.cx.body.unparen(callee)) {
                    all.push(*base);
                }
                all.extend(args.iter().copied());
                // `Scale.scaled(2, d)`: the trait's name written before the member is no argument.
                let params = crate::signature::fn_signature(self.cx.db, member).params.len();
                let extra = all.len().saturating_sub(params);
                for (i, arg) in all.into_iter().skip(extra).enumerate() {
                    if i == at { self.place(arg)? } else { self.value(arg)? }
                }
                Ok(())
            }
            _ => {
                let callee = self.cx.body.unparen(callee);
                let mut all: Vec<ExprId> = Vec::new();
                match self.cx.body.expr(callee) {
                    // A method's receiver is its first argument.
                    Expr::Field { base, .. } if self.argument_type(*base).is_some() => all.push(*base),
                    Expr::Name(_) => self.place(callee)?,
                    _ => {}
                }
                all.extend(args.iter().copied());
                for arg in all {
                    match self.argument_type(arg) {
                        Some(Ty::View(_) | Ty::Borrow(..)) => self.place(arg)?,
                        _ => self.value(arg)?,
                    }
                }
                Ok(())
            }
        }
    }

    fn argument_type(&self, arg: ExprId) -> Option<Ty> {
        let at = self.cx.arguments.binary_search_by_key(&arg, |(e, _)| *e).ok()?;
        Some(self.cx.arguments[at].1.clone())
    }

    /// A use of `local` at `e` (`moving` when the use moves it): refused once it moved. A local a
    /// `defer` consumes still holds its value until the block ends, so it may be lent (read,
    /// measured, passed to a view or borrow parameter) but not moved again, as in the original
    /// and its `let f = try io.open(…); defer io.close(f); io.read(f, …)` idiom. Inside a
    /// `defer`'s call, the local is leased to the defer until its block ends.
    fn used(&mut self, local: LocalRef, e: ExprId, moving: bool) -> R<()> {
        let name = self.name_of(local);
        if self.deferring
            && let Some(leases) = self.leases.get_mut(self.defer_scope)
            && !leases.contains(&local)
        {
            leases.push(local);
            self.leased_at.insert(local, e);
        }
        let (message, label) = match self.state.get(&local) {
            Some(Held::Deferred) if !moving => return Ok(()),
            Some(Held::Deferred) => (
                format!(
                    "{name} is scheduled for cleanup: the defer above consumes it when the block ends, so it cannot move before then. Lend it (a view or borrow parameter) instead, or move it and drop the defer."
                ),
                "consumed by this defer",
            ),
            Some(Held::Moved) => (
                format!(
                    "{name} was moved before this use (bound, passed by value, returned or stored), so it holds nothing here: use it before the move, or lend it (a view or borrow parameter) instead of moving it."
                ),
                "moved here",
            ),
            Some(Held::Maybe) => (
                format!(
                    "{name} was moved on some path that reaches this use, so it may hold nothing here: move it on every path or on none, or assign it a new value first."
                ),
                "moved here on one path",
            ),
            _ => return Ok(()),
        };
        let diag = Diag::new("E-MOVED", message, Anchor::Expr(e));
        Err(match self.moved_at.get(&local) {
            Some(at) => diag.with_related(Anchor::Expr(*at), label),
            None => diag,
        })
    }

    /// `local` moves at `e`.
    fn moved(&mut self, local: LocalRef, e: ExprId) -> R<()> {
        let name = self.name_of(local);
        if let LocalRef::Param(i) = local
            && self.cx.signature.params.get(i as usize).is_some_and(|p| p.borrowed())
        {
            return Err(Diag::new(
                "E-MOVE-BORROW",
                format!(
                    "{name} is borrowed, so its value is not this function's to move: take(…) or swap(…) its contents through an rw borrow, or take the parameter by value."
                ),
                Anchor::Expr(e),
            ));
        }
        if self.depth_of.get(&local).is_some_and(|d| *d < self.depth) {
            return Err(Diag::new(
                "E-MOVE-IN-LOOP",
                format!(
                    "{name} is declared outside this loop or closure, so moving it here would move it again on the next pass: move it after the loop, declare it inside, or take(…) it from a place."
                ),
                Anchor::Expr(e),
            ));
        }
        if !self.deferring && self.leases.iter().flatten().any(|l| *l == local) {
            let diag = Diag::new(
                "E-LEASED",
                format!(
                    "{name} is held by a defer of this block, whose call reads it when the block ends: it cannot move before then. Assign it, take(…) or swap(…) its contents instead, or move it after the block."
                ),
                Anchor::Expr(e),
            );
            return Err(match self.leased_at.get(&local) {
                Some(at) => diag.with_related(Anchor::Expr(*at), "held by this defer"),
                None => diag,
            });
        }
        if self.state.contains_key(&local) {
            self.state.insert(local, if self.deferring { Held::Deferred } else { Held::Moved });
            self.moved_at.insert(local, e);
        }
        Ok(())
    }
}
