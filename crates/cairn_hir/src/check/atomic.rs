//! Atomic element updates (language §34): `atomic_add_wrap(x[i], v)`, `atomic_min`,
//! `atomic_max`, `atomic_and`, `atomic_or`, `atomic_xor` and `atomic_cas(x[i], expected,
//! desired)` on any writable array, in host code, any lane, host or device.
//!
//! Each updates one element in place, relaxed, and returns its old value. The first argument is
//! an element of a writable array (`E-ATOMIC` for anything else, `E-WRITE-LEASE` when read-only)
//! of a type the operation allows (`E-ATOMIC`); the row gains `atomic`, `read:x`, `write:x` and
//! the element's bounds guard. Atomic updates never race with each other, so the lane walk does
//! not count them as writes; an array updated atomically in a region may not also be read or
//! written plainly there (`E-ATOMIC-MIXED`, [`Cx::atomic_mixed`]).

use std::sync::Arc;

use crate::body::{Expr, ExprId};
use crate::diag::{Anchor, Diag};
use crate::types::Ty;

use super::cx::{Cx, R};
use crate::builtins::Builtin;
use crate::types::IntTy;

impl Cx<'_> {
    /// An atomic element update `builtin(x[i], …)` at `e`.
    pub(crate) fn atomic_update(&mut self, e: ExprId, builtin: Builtin, args: &[ExprId]) -> R<Ty> {
        let name = builtin.name();
        let cas = builtin == Builtin::AtomicCas;
        let want = if cas { 3 } else { 2 };
        if args.len() != want {
            let shape = if cas { "(x[i], expected, desired)" } else { "(x[i], v)" };
            return Err(Diag::new(
                "E-ARITY",
                format!("{name} takes {want} arguments, {name}{shape}; {} given.", args.len()),
                Anchor::Expr(e),
            ));
        }
        let target = self.body.unparen(args[0]);
        let Expr::Index { base, .. } = self.body.expr(target).clone() else {
            return Err(Diag::new(
                "E-ATOMIC",
                format!("{name} updates one element in place: its first argument is an element of an array, `x[i]`."),
                Anchor::Expr(args[0]),
            ));
        };
        let elem = self.place(target)?;
        if elem.is_error() {
            return Ok(Ty::Error);
        }
        let allowed: &[IntTy] = match builtin {
            Builtin::AtomicAddWrap | Builtin::AtomicAnd | Builtin::AtomicOr | Builtin::AtomicXor => {
                &[IntTy::U32, IntTy::U64, IntTy::Usize]
            }
            _ => &[IntTy::U32, IntTy::I32, IntTy::U64, IntTy::I64, IntTy::Usize],
        };
        if !matches!(elem, Ty::Int(i) if allowed.contains(&i)) {
            let names: Vec<String> = allowed.iter().map(|i| Ty::Int(*i).to_string()).collect();
            return Err(Diag::new(
                "E-ATOMIC",
                format!(
                    "{name} works on elements of {}, and this element is a {elem}.",
                    super::expr::spoken_list(&names.iter().map(|n| Arc::from(n.as_str())).collect::<Vec<_>>())
                ),
                Anchor::Expr(args[0]),
            ));
        }
        for &value in &args[1..] {
            self.check(value, Some(&elem))?;
        }
        if let Some(root) = self.root_name(base) {
            self.effect(format!("read:{root}"));
            self.effect(format!("write:{root}"));
        }
        self.effect("atomic");
        self.atomic_targets.push(target);
        Ok(elem)
    }

    /// `E-ATOMIC-MIXED`: an array a region's lanes update atomically (its targets from
    /// `atomic_targets[first..]`) is touched plainly by them too (`walk`'s accesses).
    pub(crate) fn atomic_mixed(&self, walk: &super::parallel::RaceWalk<'_, '_>, first: usize) -> R<()> {
        let targets = &self.atomic_targets[first..];
        if targets.is_empty() {
            return Ok(());
        }
        let atomic_indices: Vec<ExprId> = targets
            .iter()
            .filter_map(|t| match self.body.expr(*t) {
                Expr::Index { indices, .. } => indices.first().copied(),
                _ => None,
            })
            .collect();
        let roots: Vec<crate::scopes::LocalRef> = targets
            .iter()
            .filter_map(|t| {
                let mut e = *t;
                loop {
                    match self.body.expr(self.body.unparen(e)) {
                        Expr::Name(_) => return self.scopes.resolve(self.body.unparen(e)),
                        Expr::Index { base, .. } | Expr::Field { base, .. } => e = *base,
                        _ => return None,
                    }
                }
            })
            .collect();
        for (key, name, index, _) in walk.accesses() {
            if roots.contains(&key) && index.is_none_or(|i| !atomic_indices.contains(&i)) {
                let at = index.unwrap_or(targets[0]);
                return Err(Diag::new(
                    "E-ATOMIC-MIXED",
                    format!(
                        "The lanes update {name} atomically, and here they also touch it plainly: in one region an array is either updated only atomically or not at all. Read it after the region."
                    ),
                    Anchor::Expr(at),
                ));
            }
        }
        Ok(())
    }
}
