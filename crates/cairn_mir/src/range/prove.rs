//! Proofs: whether the state at a guard implies its condition, and the facts that show it — each
//! operand's interval, or a difference bound (directly, through a third local, or closed by an
//! interval). What the facts are and how they are audited is `facts.rs`.

use super::Analysis;
use super::corners;
use super::facts::Fact;
use super::state::{Iv, State};
use crate::{BinOp, Check, MTy, Operand, Place};

impl Analysis<'_> {
    /// The facts that prove `check` in `state`, if the state proves it.
    pub(super) fn prove(&self, state: &State, check: &Check) -> Option<Vec<Fact>> {
        let mut facts = Vec::new();
        let proved = match check {
            Check::NoOverflow(op, ty, a, b) => {
                let (va, vb) = (self.interval(state, a)?, self.interval(state, b)?);
                let range = Iv::new(ty.range().0, ty.range().1);
                let by_intervals = match op {
                    BinOp::Add => corners(va, vb, i128::checked_add),
                    BinOp::Sub => corners(va, vb, i128::checked_sub),
                    BinOp::Mul => corners(va, vb, i128::checked_mul),
                    _ => None,
                }
                .is_some_and(|v| v.within(range));
                if by_intervals {
                    self.within(state, a, &mut facts);
                    self.within(state, b, &mut facts);
                    true
                } else {
                    *op == BinOp::Sub && !ty.signed() && self.at_most(state, b, a, 0, &mut facts)
                }
            }
            Check::NegNoOverflow(ty, a) => {
                self.within(state, a, &mut facts);
                let v = self.interval(state, a)?;
                if ty.signed() { v.lo > ty.range().0 } else { v.hi == 0 }
            }
            Check::Division(ty, a, b) => {
                let vb = self.interval(state, b)?;
                let va = self.interval(state, a)?;
                self.within(state, a, &mut facts);
                self.within(state, b, &mut facts);
                (vb.lo > 0 || vb.hi < 0) && (!ty.signed() || vb.lo > -1 || vb.hi < -1 || va.lo > ty.range().0)
            }
            Check::Fits(MTy::Int(_), MTy::Int(to), v) => {
                self.within(state, v, &mut facts);
                self.interval(state, v)?.within(Iv::new(to.range().0, to.range().1))
            }
            Check::ShiftCount(ty, n) => {
                self.within(state, n, &mut facts);
                self.interval(state, n)?.within(Iv::new(0, i128::from(ty.bits()) - 1))
            }
            Check::InBounds(i, len) => {
                self.within(state, i, &mut facts);
                self.interval(state, i)?.lo >= 0 && self.at_most(state, i, len, -1, &mut facts)
            }
            Check::PartInBounds(lo, hi, len) => {
                self.at_most(state, lo, hi, 0, &mut facts) && self.at_most(state, hi, len, 0, &mut facts)
            }
            _ => false,
        };
        proved.then_some(facts)
    }

    /// Adds the fact of an operand's interval (nothing for a constant, which is its own fact).
    fn within(&self, state: &State, o: &Operand, facts: &mut Vec<Fact>) {
        // Only a tracked local's interval says more than its type; a fact never names an
        // element or a field (the evaluator reads each fact where the guard stands).
        if let (Some(_), Some(v)) = (self.tracked(o), self.interval(state, o)) {
            let fact = Fact::Within(o.clone(), v.lo, v.hi);
            if !facts.contains(&fact) {
                facts.push(fact);
            }
        }
    }

    /// Whether the state proves `a <= b + k`, adding the facts that show it.
    fn at_most(&self, state: &State, a: &Operand, b: &Operand, k: i128, facts: &mut Vec<Fact>) -> bool {
        let (Some(va), Some(vb)) = (self.interval(state, a), self.interval(state, b)) else { return false };
        if va.hi <= vb.lo + k {
            self.within(state, a, facts);
            self.within(state, b, facts);
            return true;
        }
        let (Some(x), Some(y)) = (self.tracked(a), self.tracked(b)) else { return false };
        if let Some(k1) = state.bound(x, y)
            && k1 <= k
        {
            facts.push(Fact::AtMost(a.clone(), b.clone(), k1));
            return true;
        }
        for &(l, z, k1) in &state.rel {
            if l != x {
                continue;
            }
            let zo = Operand::Copy(Place::local(z));
            if let Some(k2) = state.bound(z, y)
                && k1 + k2 <= k
            {
                facts.push(Fact::AtMost(a.clone(), zo.clone(), k1));
                facts.push(Fact::AtMost(zo, b.clone(), k2));
                return true;
            }
            if let Some(vz) = state.vals[self.slot(z)]
                && vz.hi + k1 <= vb.lo + k
            {
                facts.push(Fact::AtMost(a.clone(), zo.clone(), k1));
                self.within(state, &zo, facts);
                self.within(state, b, facts);
                return true;
            }
        }
        false
    }
}
