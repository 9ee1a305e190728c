//! The abstract state of the range analysis at one program point: an interval per tracked local,
//! difference bounds `x <= y + k` between tracked locals, and the comparison each boolean local
//! holds the result of. Joins, widening and the refinement a known comparison brings live here;
//! what each instruction does to a state is in `mod.rs`.
//!
//! Invariant: every value is an exact mathematical integer (`i128`), never a wrapped one: a local
//! of type `u64` holding `2^64 - 1` is the interval `[2^64 - 1, 2^64 - 1]`, and a `bool` is `0` or
//! `1`. A state with `reach == false` is bottom (no execution gets here).

use crate::{BinOp, Local, Operand};

/// The most difference bounds a state keeps; past it, new ones are not recorded (fewer facts are
/// always sound).
const RELATIONS: usize = 96;

/// A closed interval of integers, `lo <= hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Iv {
    pub lo: i128,
    pub hi: i128,
}

impl Iv {
    pub fn new(lo: i128, hi: i128) -> Iv {
        Iv { lo, hi }
    }

    pub fn point(v: i128) -> Iv {
        Iv { lo: v, hi: v }
    }

    pub fn hull(self, other: Iv) -> Iv {
        Iv { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    /// The common part, `None` when the intervals do not meet.
    pub fn meet(self, other: Iv) -> Option<Iv> {
        let (lo, hi) = (self.lo.max(other.lo), self.hi.min(other.hi));
        (lo <= hi).then_some(Iv { lo, hi })
    }

    pub fn within(self, outer: Iv) -> bool {
        outer.lo <= self.lo && self.hi <= outer.hi
    }
}

/// A comparison a boolean local holds the result of: `dst = a op b` (op one of the six
/// comparisons). Dropped when `dst`, or a local `a` or `b` reads, is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Cond {
    pub dst: Local,
    pub op: BinOp,
    pub a: Operand,
    pub b: Operand,
}

/// The state at one point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    pub reach: bool,
    /// Per local: its interval, `None` for a local the analysis does not track.
    pub vals: Vec<Option<Iv>>,
    /// `x <= y + k`, at most one per ordered pair (the smallest `k`), `x != y`.
    pub rel: Vec<(Local, Local, i128)>,
    pub conds: Vec<Cond>,
}

impl State {
    pub fn bottom(locals: usize) -> State {
        State { reach: false, vals: vec![None; locals], rel: Vec::new(), conds: Vec::new() }
    }

    /// The difference bound `x <= y + k` known now, if any.
    pub fn bound(&self, x: Local, y: Local) -> Option<i128> {
        self.rel.iter().find(|(a, b, _)| *a == x && *b == y).map(|(_, _, k)| *k)
    }

    /// Records `x <= y + k` (keeping the tighter of it and one already known).
    pub fn relate(&mut self, x: Local, y: Local, k: i128) {
        if x == y {
            return;
        }
        if let Some(entry) = self.rel.iter_mut().find(|(a, b, _)| *a == x && *b == y) {
            entry.2 = entry.2.min(k);
        } else if self.rel.len() < RELATIONS {
            self.rel.push((x, y, k));
        }
    }

    /// Forgets every fact that reads `local`'s value (it is about to change).
    pub fn kill(&mut self, local: Local) {
        self.rel.retain(|(a, b, _)| *a != local && *b != local);
        let reads = |o: &Operand| matches!(o, Operand::Copy(p) if p.local == local);
        self.conds.retain(|c| c.dst != local && !reads(&c.a) && !reads(&c.b));
    }

    /// The join of two states: what holds on either path.
    pub fn join(&self, other: &State) -> State {
        if !self.reach {
            return other.clone();
        }
        if !other.reach {
            return self.clone();
        }
        let vals = self
            .vals
            .iter()
            .zip(&other.vals)
            .map(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => Some(a.hull(*b)),
                _ => None,
            })
            .collect();
        let rel = self.rel.iter().filter_map(|&(x, y, k)| other.bound(x, y).map(|k2| (x, y, k.max(k2)))).collect();
        let conds = self.conds.iter().filter(|c| other.conds.contains(c)).cloned().collect();
        State { reach: true, vals, rel, conds }
    }

    /// The join at a loop's header: as [`State::join`], and for each `(x, y)` of `seeds` whose
    /// bound neither side states, the bound both sides imply by their intervals (`x <= x.hi`,
    /// `y >= y.lo`, so `x <= y + (x.hi - y.lo)`), the looser of the two. Entering a counting
    /// loop, `count = 0` and `k = 2` imply `count <= k - 2`, which the loop's body then keeps
    /// (each step of `count` by at most 1 is matched by a step of `k`) though no instruction
    /// ever related the two. `slot` maps a local to its place in `vals`.
    pub fn join_seeded(&self, other: &State, seeds: &[(Local, Local)], slot: impl Fn(Local) -> usize) -> State {
        let mut out = self.join(other);
        if !out.reach {
            return out;
        }
        let implied = |state: &State, x: Local, y: Local| -> Option<i128> {
            if !state.reach {
                return Some(i128::MIN);
            }
            state.bound(x, y).or_else(|| Some(state.vals[slot(x)]?.hi - state.vals[slot(y)]?.lo))
        };
        for &(x, y) in seeds {
            if out.bound(x, y).is_some() {
                continue;
            }
            if let (Some(a), Some(b)) = (implied(self, x, y), implied(other, x, y)) {
                out.relate(x, y, a.max(b));
            }
        }
        out
    }

    /// Widening of `self` (the state before) by `next` (a join that grew it): an interval end that
    /// moved goes to the next of the function's constants past it (`steps`, sorted), else to its
    /// type's end (`tops`); a bound that loosened is dropped. Stepping through the constants
    /// keeps an outer loop's binder within its bound while an inner loop settles.
    ///
    /// `only`, when given, names the locals to widen (those the loop at this block writes): a
    /// local the loop leaves alone only grows as the states entering the loop do, so widening it
    /// here would lose an outer loop's bound for nothing.
    pub fn widen(&self, next: &State, tops: &[Option<Iv>], steps: &[i128], only: Option<&[bool]>) -> State {
        if !self.reach {
            return next.clone();
        }
        let vals = self
            .vals
            .iter()
            .zip(&next.vals)
            .zip(tops)
            .enumerate()
            .map(|(i, ((old, new), top))| match (old, new, top) {
                (Some(_), Some(new), Some(_)) if only.is_some_and(|mask| !mask[i]) => Some(*new),
                (Some(old), Some(new), Some(top)) => Some(Iv {
                    lo: if new.lo < old.lo {
                        steps.iter().rev().copied().find(|&c| c <= new.lo && c >= top.lo).unwrap_or(top.lo)
                    } else {
                        new.lo
                    },
                    hi: if new.hi > old.hi {
                        steps.iter().copied().find(|&c| c >= new.hi && c <= top.hi).unwrap_or(top.hi)
                    } else {
                        new.hi
                    },
                }),
                _ => None,
            })
            .collect();
        let rel = next.rel.iter().filter(|&&(x, y, k)| self.bound(x, y).is_some_and(|old| k <= old)).copied().collect();
        let conds = next.conds.iter().filter(|c| self.conds.contains(c)).cloned().collect();
        State { reach: true, vals, rel, conds }
    }
}
