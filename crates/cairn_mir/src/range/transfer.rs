//! What each instruction does to a state: an assignment's interval and the difference bounds
//! and comparison it creates (`x = y + d`, `len`, `min`, a comparison), a write the analysis does
//! not follow, and the overflow check a guard leaves for the operation after it. Conditions
//! (branches, guards that held) are `mod.rs`'s.

use super::state::{Cond, Iv, State};
use super::{Analysis, Length, OBJECT_LIMIT, compare, corners, is_comparison, negate, ones};
use crate::{BinOp, Check, Inst, Local, MTy, Operand, Place, Rvalue, UnOp};

impl Analysis<'_> {
    /// One instruction's effect on the state. `pending` is an overflow check that held just
    /// before (`guard no_overflow`), which the operation right after it computes without
    /// wrapping; the result is the check this instruction leaves for the next.
    pub(super) fn step(
        &self,
        state: &mut State,
        inst: &Inst,
        pending: Option<(BinOp, Operand, Operand)>,
    ) -> Option<(BinOp, Operand, Operand)> {
        match inst {
            Inst::Guard(guard) => {
                self.holds(state, &guard.check);
                if let Check::NoOverflow(op, _, a, b) = &guard.check {
                    return Some((*op, a.clone(), b.clone()));
                }
            }
            Inst::Assign(place, rvalue) if place.proj.is_empty() && self.tops[place.local.0 as usize].is_some() => {
                self.assign(state, place.local, rvalue, pending.as_ref());
            }
            Inst::Call { dst: Some(place), .. }
            | Inst::CallIndirect { dst: Some(place), .. }
            | Inst::DeviceReduce { dest: place, .. } => {
                self.clobber(state, place);
            }
            Inst::Drop(place) => self.clobber(state, place),
            _ => {}
        }
        None
    }

    /// A write the analysis does not follow: the local may now hold anything of its type.
    fn clobber(&self, state: &mut State, place: &Place) {
        if place.proj.is_empty() && self.tops[place.local.0 as usize].is_some() {
            state.kill(place.local);
            state.vals[self.slot(place.local)] = self.tops[place.local.0 as usize];
        }
    }

    fn top(&self, x: Local) -> Iv {
        self.tops[x.0 as usize].expect("a tracked local")
    }

    /// `x = rvalue`, for a tracked `x`.
    fn assign(&self, state: &mut State, x: Local, rvalue: &Rvalue, pending: Option<&(BinOp, Operand, Operand)>) {
        let top = self.top(x);
        // New difference bounds, as (lhs, rhs, k), computed against the state before the write.
        let mut bounds: Vec<(Local, Local, i128)> = Vec::new();
        let mut cond: Option<Cond> = None;
        let value: Iv = match rvalue {
            Rvalue::Use(o) => {
                if let Some(y) = self.tracked(o) {
                    self.offset(state, x, y, Iv::point(0), &mut bounds);
                    if let Some(c) = state.conds.iter().find(|c| c.dst == y) {
                        cond = Some(Cond { dst: x, ..c.clone() });
                    }
                }
                self.interval(state, o).unwrap_or(top)
            }
            Rvalue::Cast(MTy::Int(_), o) => {
                let v = self.interval(state, o);
                match v {
                    Some(v) if v.within(top) => {
                        if let Some(y) = self.tracked(o) {
                            self.offset(state, x, y, Iv::point(0), &mut bounds);
                        }
                        v
                    }
                    _ => top,
                }
            }
            Rvalue::Len(place) => self.length(state, x, place, &mut bounds),
            Rvalue::Binary(op, a, b) => {
                let checked = pending.is_some_and(|(p, pa, pb)| p == op && pa == a && pb == b);
                self.binary(state, x, *op, a, b, checked, &mut bounds, &mut cond)
            }
            Rvalue::Unary(UnOp::Not, o) if self.function.local(x).ty == MTy::Bool => {
                if let Some(y) = self.tracked(o)
                    && let Some(c) = state.conds.iter().find(|c| c.dst == y)
                {
                    cond = Some(Cond { dst: x, op: negate(c.op), a: c.a.clone(), b: c.b.clone() });
                }
                match self.interval(state, o) {
                    Some(v) => Iv::new(1 - v.hi, 1 - v.lo),
                    None => top,
                }
            }
            Rvalue::Unary(UnOp::Neg, o) => match self.interval(state, o) {
                Some(v) if Iv::new(-v.hi, -v.lo).within(top) => Iv::new(-v.hi, -v.lo),
                _ => top,
            },
            Rvalue::Unary(UnOp::BitNot, o) if top.lo == 0 => match self.interval(state, o) {
                Some(v) if v.within(top) => Iv::new(top.hi - v.hi, top.hi - v.lo),
                _ => top,
            },
            Rvalue::Select(_, a, b) => match (self.interval(state, a), self.interval(state, b)) {
                (Some(a), Some(b)) => a.hull(b),
                _ => top,
            },
            _ => top,
        };
        state.kill(x);
        state.vals[self.slot(x)] = Some(value.meet(top).unwrap_or(top));
        for (l, r, k) in bounds {
            if l != r {
                state.relate(l, r, k);
            }
        }
        if let Some(c) = cond {
            let reads_x = |o: &Operand| matches!(o, Operand::Copy(p) if p.local == x);
            if !reads_x(&c.a) && !reads_x(&c.b) {
                state.conds.push(c);
            }
        }
    }

    /// The bounds of `x = y + d` (exact, `d` an interval) against the bounds `y` has: `x <= y +
    /// d.hi`, `y <= x - d.lo`, and through each bound of `y`, the same of `x` (for `x = x + d`,
    /// the bounds `x` had, moved by `d`).
    fn offset(&self, state: &State, x: Local, y: Local, d: Iv, bounds: &mut Vec<(Local, Local, i128)>) {
        if x == y {
            // `x = x + d` (a counter stepped): what bounded the old value bounds the new one,
            // moved by `d` — `l <= x + k` becomes `l <= x' + k - d.lo`, `x <= r + k` becomes
            // `x' <= r + k + d.hi`.
            for &(l, r, k) in &state.rel {
                if r == x {
                    bounds.push((l, x, k - d.lo));
                }
                if l == x {
                    bounds.push((x, r, k + d.hi));
                }
            }
            return;
        }
        bounds.push((x, y, d.hi));
        bounds.push((y, x, -d.lo));
        for &(l, r, k) in &state.rel {
            if l == y && r != x {
                bounds.push((x, r, k + d.hi));
            }
            if r == y && l != x {
                bounds.push((l, x, k - d.lo));
            }
        }
    }

    /// `x = len place`: an array's literal length; a view parameter's literal extent, or its
    /// extent parameter's value (and `x == p`); otherwise, for a view or owner, at most the
    /// largest object's element count. Every maker of a view argument passes one of its
    /// signature's length (`docs/decisions.md`, "a view parameter's extent").
    fn length(&self, state: &State, x: Local, place: &Place, bounds: &mut Vec<(Local, Local, i128)>) -> Iv {
        if let Some(MTy::Array(_, n)) = self.function.place_ty(place) {
            return Iv::point(i128::from(n));
        }
        let top = self.top(x);
        let nonnegative = Iv::new(0, if self.sized_elements(place) { top.hi.min(OBJECT_LIMIT) } else { top.hi });
        if !place.proj.is_empty() {
            return nonnegative;
        }
        match self.lengths.iter().find(|(v, _)| *v == place.local).map(|(_, l)| *l) {
            Some(Length::Literal(n)) => Iv::point(i128::from(n)),
            Some(Length::Param(p)) => {
                self.offset(state, x, p, Iv::point(0), bounds);
                state.vals[self.slot(p)].and_then(|v| v.meet(nonnegative)).unwrap_or(nonnegative)
            }
            None => nonnegative,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &self,
        state: &State,
        x: Local,
        op: BinOp,
        a: &Operand,
        b: &Operand,
        checked: bool,
        bounds: &mut Vec<(Local, Local, i128)>,
        cond: &mut Option<Cond>,
    ) -> Iv {
        let top = self.top(x);
        let (Some(va), Some(vb)) = (self.interval(state, a), self.interval(state, b)) else { return top };
        if is_comparison(op) {
            // Only integer comparisons are followed (a float operand has no interval).
            if self.int_ty(a).is_some() || self.int_ty(b).is_some() {
                *cond = Some(Cond { dst: x, op, a: a.clone(), b: b.clone() });
            }
            return compare(op, va, vb).map_or(Iv::new(0, 1), |known| Iv::point(i128::from(known)));
        }
        // The exact result's interval, when every corner is computable.
        let exact = match op {
            BinOp::Add => corners(va, vb, i128::checked_add),
            BinOp::Sub => corners(va, vb, i128::checked_sub),
            BinOp::Mul => corners(va, vb, i128::checked_mul),
            BinOp::Min => Some(Iv::new(va.lo.min(vb.lo), va.hi.min(vb.hi))),
            BinOp::Max => Some(Iv::new(va.lo.max(vb.lo), va.hi.max(vb.hi))),
            BinOp::Div if va.lo >= 0 && vb.lo > 0 => Some(Iv::new(va.lo / vb.hi, va.hi / vb.lo)),
            BinOp::Rem if va.lo >= 0 && vb.lo > 0 => Some(Iv::new(0, va.hi.min(vb.hi - 1))),
            BinOp::And if va.lo >= 0 && vb.lo >= 0 => Some(Iv::new(0, va.hi.min(vb.hi))),
            BinOp::Or | BinOp::Xor if va.lo >= 0 && vb.lo >= 0 => Some(Iv::new(0, ones(va.hi.max(vb.hi)))),
            BinOp::Shr if va.lo >= 0 && vb.lo >= 0 && vb.hi < 128 => {
                Some(Iv::new(va.lo >> vb.hi.min(127) as u32, va.hi >> vb.lo as u32))
            }
            _ => None,
        };
        let arithmetic = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul);
        let value = match exact {
            Some(exact) if exact.within(top) => exact,
            // The overflow guard just before held: the result is the exact one, in range (and
            // when the corners leave `i128`, somewhere in the type, still exact).
            Some(exact) if checked && arithmetic => match exact.meet(top) {
                Some(v) => v,
                None => return top,
            },
            None if checked && arithmetic => top,
            _ => return top,
        };
        match op {
            BinOp::Add => {
                if let Some(y) = self.tracked(a) {
                    self.offset(state, x, y, vb, bounds);
                }
                if let Some(y) = self.tracked(b) {
                    self.offset(state, x, y, va, bounds);
                }
            }
            BinOp::Sub => {
                if let Some(y) = self.tracked(a) {
                    self.offset(state, x, y, Iv::new(-vb.hi, -vb.lo), bounds);
                }
            }
            BinOp::Mul => {
                // A factor not below 1 times a value not below 0 is at least that value.
                for (y, factor) in [(self.tracked(a), vb), (self.tracked(b), va)] {
                    if let Some(y) = y
                        && y != x
                        && factor.lo >= 1
                        && self.interval(state, &Operand::Copy(Place::local(y))).is_some_and(|v| v.lo >= 0)
                    {
                        bounds.push((y, x, 0));
                        bounds.extend(state.rel.iter().filter(|(_, r, _)| *r == y).map(|&(l, _, k)| (l, x, k)));
                    }
                }
            }
            BinOp::Min => {
                for y in [self.tracked(a), self.tracked(b)].into_iter().flatten() {
                    if y != x {
                        bounds.push((x, y, 0));
                        bounds.extend(
                            state.rel.iter().filter(|(l, r, _)| *l == y && *r != x).map(|&(_, r, k)| (x, r, k)),
                        );
                    }
                }
            }
            BinOp::Max => {
                for y in [self.tracked(a), self.tracked(b)].into_iter().flatten() {
                    if y != x {
                        bounds.push((y, x, 0));
                    }
                }
            }
            _ => {}
        }
        value
    }
}
