//! Control-flow facts of one MIR function: each block's successors, the natural loops (a loop's
//! header and its blocks, from dominators), and each block's immediate post-dominator (where the
//! paths a branch forks join again). The one home of these facts: symbolic execution
//! (`cairn_smt`) steers by them, the range analysis widens at the loops' headers, and the
//! lowering clears what no path reaches.

use crate::{BlockId, Function, Terminator};

impl Terminator {
    /// The blocks this terminator may jump to, in order (a switch's cases, then its default).
    pub fn successors(&self) -> Vec<BlockId> {
        match self {
            Terminator::Goto(t) => vec![*t],
            Terminator::Branch(_, t, e) => vec![*t, *e],
            Terminator::Switch(_, cases, default) => cases.iter().map(|(_, b)| *b).chain([*default]).collect(),
            Terminator::Return(_) | Terminator::Unreachable => Vec::new(),
        }
    }
}

impl Terminator {
    /// Hands each jump target to `f`, which may change it (a rewrite moving or copying blocks).
    pub(crate) fn retarget(&mut self, mut f: impl FnMut(&mut BlockId)) {
        match self {
            Terminator::Goto(t) => f(t),
            Terminator::Branch(_, t, e) => {
                f(t);
                f(e);
            }
            Terminator::Switch(_, cases, default) => {
                cases.iter_mut().for_each(|(_, t)| f(t));
                f(default);
            }
            Terminator::Return(_) | Terminator::Unreachable => {}
        }
    }
}

fn successors(function: &Function) -> Vec<Vec<usize>> {
    function.blocks.iter().map(|b| b.term.successors().iter().map(|s| s.0 as usize).collect()).collect()
}

/// The natural loops of a function: for each loop header, the blocks of its loop.
pub struct Loops {
    /// Per block: the blocks of the loop it heads, if it heads one.
    pub bodies: Vec<Option<Vec<bool>>>,
}

impl Loops {
    pub fn of(function: &Function) -> Loops {
        let n = function.blocks.len();
        let succ = successors(function);
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        // Dominators (None: unreachable).
        let dom = dominance(&preds, &[0], (1..n).collect());
        let mut bodies: Vec<Option<Vec<bool>>> = vec![None; n];
        for (u, ss) in succ.iter().enumerate() {
            for &h in ss {
                // A back edge: its target dominates its source.
                if dom[u].as_ref().is_some_and(|d| d[h]) {
                    let body = bodies[h].get_or_insert_with(|| vec![false; n]);
                    body[h] = true;
                    let mut stack = vec![u];
                    while let Some(x) = stack.pop() {
                        if !body[x] {
                            body[x] = true;
                            stack.extend(preds[x].iter().copied());
                        }
                    }
                }
            }
        }
        Loops { bodies }
    }
}

/// For each block, its immediate post-dominator (`None`: only the exit post-dominates it).
pub fn post_dominators(function: &Function) -> Vec<Option<u32>> {
    let n = function.blocks.len();
    let successors = successors(function);
    // pdom[b]: the blocks post-dominating b (None: no exit is reached from b).
    let exits: Vec<usize> = (0..n).filter(|&b| successors[b].is_empty()).collect();
    let pdom = dominance(&successors, &exits, (0..n).rev().filter(|&b| !successors[b].is_empty()).collect());
    (0..n)
        .map(|b| {
            let set = pdom[b].as_ref()?;
            let size = |d: usize| pdom[d].as_ref().map_or(usize::MAX, |s| s.iter().filter(|x| **x).count());
            (0..n).filter(|&d| d != b && set[d]).max_by_key(|&d| size(d)).map(|d| d as u32)
        })
        .collect()
}

/// The dominance sets of a graph, iteratively: each root dominates itself alone, and every other
/// block (visited in `order` until nothing changes) is dominated by itself and by what dominates
/// all of its `incoming` neighbours that are known (`None`: reached from no root). Dominators
/// read the predecessors from the entry; post-dominators the successors from the exits.
fn dominance(incoming: &[Vec<usize>], roots: &[usize], order: Vec<usize>) -> Vec<Option<Vec<bool>>> {
    let n = incoming.len();
    let mut sets: Vec<Option<Vec<bool>>> = vec![None; n];
    for &root in roots.iter().filter(|&&r| r < n) {
        let mut set = vec![false; n];
        set[root] = true;
        sets[root] = Some(set);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &order {
            let mut meet: Option<Vec<bool>> = None;
            for &p in &incoming[b] {
                if let Some(d) = &sets[p] {
                    meet = Some(match meet {
                        None => d.clone(),
                        Some(m) => m.iter().zip(d).map(|(x, y)| *x && *y).collect(),
                    });
                }
            }
            if let Some(mut set) = meet {
                set[b] = true;
                if sets[b].as_ref() != Some(&set) {
                    sets[b] = Some(set);
                    changed = true;
                }
            }
        }
    }
    sets
}
