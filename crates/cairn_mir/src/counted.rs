//! Counted loops: a loop as the lowering makes a `for i in lo..hi` — a header that only
//! tests `i < hi` and branches into the body or out, one latch ending with `i = i + 1` and jumping
//! back, `i` an unsigned integer whose address is never taken and that nothing else in the loop
//! writes, `hi` a constant or a local the loop does not write — with where every local is written
//! in it. The shape the build's loop rewrites (`version`, `carry`) start from, recognized in one
//! place.

use std::collections::HashMap;

use crate::cfg::Loops;
use crate::{BinOp, BlockId, Const, Function, Inst, IntTy, Local, MTy, Operand, Place, Rvalue, Terminator};

/// A counted loop (module comment).
pub(crate) struct Counted {
    pub header: usize,
    /// The loop's blocks, in block order.
    pub blocks: Vec<usize>,
    /// The block the header's test enters when `i < hi`.
    pub into: usize,
    /// The latch, and the position of the counter's increment in it (its last instruction).
    pub latch: usize,
    pub at: usize,
    /// The one block outside the loop that enters the header (any terminator).
    pub entry: usize,
    pub counter: Local,
    pub ty: IntTy,
    pub bound: Operand,
    /// Per local written in the loop: where (block, instruction).
    pub writes: HashMap<Local, Vec<(usize, usize)>>,
}

/// The innermost loops of `function`, by header, with their blocks.
pub(crate) fn innermost(function: &Function) -> Vec<(usize, Vec<bool>)> {
    let loops = Loops::of(function);
    let headers: Vec<usize> = (0..function.blocks.len()).filter(|h| loops.bodies[*h].is_some()).collect();
    let mut out = Vec::new();
    for &h in &headers {
        let body = loops.bodies[h].as_ref().expect("a header");
        if !headers.iter().any(|&other| other != h && body[other]) {
            out.push((h, body.clone()));
        }
    }
    out
}

/// The counted loop headed by `h` (whose blocks are `body`), when it has the shape. `taken` is
/// the function's `visit::address_taken`, computed once by the caller for all its loops.
pub(crate) fn counted(function: &Function, h: usize, body: &[bool], taken: &[bool]) -> Option<Counted> {
    let blocks: Vec<usize> = (0..function.blocks.len()).filter(|b| body[*b]).collect();
    // The header: `cond = lt iv, bound; branch cond, into, out`.
    let header = &function.blocks[h];
    let [Inst::Assign(test, Rvalue::Binary(BinOp::Lt, Operand::Copy(iv), bound))] = &header.insts[..] else {
        return None;
    };
    let Terminator::Branch(Operand::Copy(cond), into, out) = &header.term else { return None };
    if !test.proj.is_empty() || cond != test || !iv.proj.is_empty() || !body[into.0 as usize] || body[out.0 as usize] {
        return None;
    }
    let counter = iv.local;
    let MTy::Int(ty) = function.local(counter).ty else { return None };
    if ty.signed() {
        return None;
    }
    let mut writes: HashMap<Local, Vec<(usize, usize)>> = HashMap::new();
    for &b in &blocks {
        for (i, inst) in function.blocks[b].insts.iter().enumerate() {
            if let Some(local) = crate::visit::written(inst) {
                writes.entry(local).or_default().push((b, i));
            }
        }
    }
    // The counter: written once in the loop, by `iv = add iv, 1` ending the latch.
    let [(latch, at)] = writes.get(&counter)?[..] else { return None };
    let latch_block = &function.blocks[latch];
    let one = Operand::Const(Const::Int(1, ty));
    if taken[counter.0 as usize]
        || at + 1 != latch_block.insts.len()
        || latch_block.term != Terminator::Goto(BlockId(h as u32))
        || latch_block.insts[at]
            != Inst::Assign(Place::local(counter), Rvalue::Binary(BinOp::Add, Operand::Copy(iv.clone()), one))
    {
        return None;
    }
    match bound {
        Operand::Const(Const::Int(..)) => {}
        Operand::Copy(place)
            if place.proj.is_empty() && !taken[place.local.0 as usize] && !writes.contains_key(&place.local) => {}
        _ => return None,
    }
    // Predecessors: the latch from inside, one block from outside.
    let mut entry = None;
    for (p, block) in function.blocks.iter().enumerate() {
        if !block.term.successors().contains(&BlockId(h as u32)) {
            continue;
        }
        if body[p] {
            if p != latch {
                return None;
            }
        } else if entry.replace(p).is_some() {
            return None;
        }
    }
    Some(Counted {
        header: h,
        blocks,
        into: into.0 as usize,
        latch,
        at,
        entry: entry?,
        counter,
        ty,
        bound: bound.clone(),
        writes,
    })
}
