//! The facts a guard discharged by the range analysis rests on, and the audit that re-checks,
//! from those facts alone, that they imply the guard's condition (language §15: "every elision
//! carries the facts that justify it, and an independent audit re-checks them before code is
//! emitted").
//!
//! A fact is a claim about values at the guard: an operand lies within an interval, or one
//! operand is at most another plus a constant. The audit knows nothing of the analysis that found
//! them — no control flow, no instructions — only the facts, the constants and the types, so a
//! fault in the analysis's bookkeeping cannot also fool the audit. The evaluator checks every
//! fact when it reaches the guard (`eval`), so a fact the analysis got wrong is a compiler bug the
//! differential tests report, whether or not the guard itself would have failed.

use std::fmt;

use crate::{BinOp, Check, Const, IntTy, MTy, Operand};

/// A claim about values where a guard stands.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fact {
    /// The operand's value lies in `lo..=hi`.
    Within(Operand, i128, i128),
    /// `a <= b + k`, in exact arithmetic.
    AtMost(Operand, Operand, i128),
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::Within(o, lo, hi) => write!(f, "{o} in {lo}..={hi}"),
            Fact::AtMost(a, b, k) => write!(f, "{a} <= {b} + {k}"),
        }
    }
}

/// The exact value of an integer constant of its type (the two's-complement payload read as its
/// type says).
pub(crate) fn constant(value: i128, ty: IntTy) -> i128 {
    let bits = ty.bits();
    let mask = (1i128 << bits) - 1;
    let low = value & mask;
    if ty.signed() && low >> (bits - 1) == 1 { low - (1i128 << bits) } else { low }
}

/// True when `facts` imply that `check` holds. Only the checks the range analysis discharges
/// can be implied; any other check is `false`.
pub fn audit(check: &Check, facts: &[Fact]) -> bool {
    let known = Known { facts };
    match check {
        Check::NoOverflow(op, ty, a, b) => {
            let range = ty.range();
            let fits = |v: Option<i128>| v.is_some_and(|v| range.0 <= v && v <= range.1);
            let (x, y) = (known.interval(a), known.interval(b));
            let fits_all = |f: fn(i128, i128) -> Option<i128>| {
                let (Some(x), Some(y)) = (x, y) else { return false };
                [(x.0, y.0), (x.0, y.1), (x.1, y.0), (x.1, y.1)].iter().all(|&(p, q)| fits(f(p, q)))
            };
            match op {
                BinOp::Add => fits_all(i128::checked_add),
                BinOp::Sub => fits_all(i128::checked_sub) || (!ty.signed() && known.at_most(b, a, 0)),
                BinOp::Mul => fits_all(i128::checked_mul),
                _ => false,
            }
        }
        // `-a` fits: above the minimum for a signed type, exactly 0 for an unsigned one.
        Check::NegNoOverflow(ty, a) => {
            known.interval(a).is_some_and(|(lo, hi)| if ty.signed() { lo > ty.range().0 } else { hi == 0 })
        }
        Check::Division(ty, a, b) => {
            let Some((lo, hi)) = known.interval(b) else { return false };
            let nonzero = lo > 0 || hi < 0;
            let no_min =
                !ty.signed() || lo > -1 || hi < -1 || known.interval(a).is_some_and(|(alo, _)| alo > ty.range().0);
            nonzero && no_min
        }
        Check::Fits(MTy::Int(_), MTy::Int(to), v) => {
            let range = to.range();
            known.interval(v).is_some_and(|(lo, hi)| range.0 <= lo && hi <= range.1)
        }
        Check::ShiftCount(ty, n) => known.interval(n).is_some_and(|(lo, hi)| lo >= 0 && hi < i128::from(ty.bits())),
        Check::InBounds(i, len) => known.at_most(i, len, -1) && known.interval(i).is_some_and(|(lo, _)| lo >= 0),
        Check::PartInBounds(lo, hi, len) => known.at_most(lo, hi, 0) && known.at_most(hi, len, 0),
        _ => false,
    }
}

/// What the facts say, read without any other knowledge.
struct Known<'a> {
    facts: &'a [Fact],
}

impl Known<'_> {
    /// The interval the facts give an operand: a constant's value, or the meet of every
    /// `Within` about it.
    fn interval(&self, o: &Operand) -> Option<(i128, i128)> {
        if let Operand::Const(c) = o {
            return match c {
                Const::Int(v, ty) => Some((constant(*v, *ty), constant(*v, *ty))),
                Const::Bool(b) => Some((i128::from(*b), i128::from(*b))),
                _ => None,
            };
        }
        let mut out: Option<(i128, i128)> = None;
        for fact in self.facts {
            if let Fact::Within(x, lo, hi) = fact
                && x == o
            {
                out = Some(match out {
                    None => (*lo, *hi),
                    Some((l, h)) => (l.max(*lo), h.min(*hi)),
                });
            }
        }
        out.filter(|(lo, hi)| lo <= hi)
    }

    /// True when the facts imply `a <= b + k`: by the intervals, by one bound, or by a bound to
    /// a third operand whose own bound or interval closes the gap.
    fn at_most(&self, a: &Operand, b: &Operand, k: i128) -> bool {
        if let (Some((_, ahi)), Some((blo, _))) = (self.interval(a), self.interval(b))
            && ahi <= blo + k
        {
            return true;
        }
        for fact in self.facts {
            let Fact::AtMost(x, z, k1) = fact else { continue };
            if x != a {
                continue;
            }
            if z == b && *k1 <= k {
                return true;
            }
            for second in self.facts {
                if let Fact::AtMost(y, w, k2) = second
                    && y == z
                    && w == b
                    && k1 + k2 <= k
                {
                    return true;
                }
            }
            if let (Some((_, zhi)), Some((blo, _))) = (self.interval(z), self.interval(b))
                && zhi + k1 <= blo + k
            {
                return true;
            }
        }
        false
    }
}
