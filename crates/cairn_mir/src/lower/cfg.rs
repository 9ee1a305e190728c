//! Control-flow rewrites of a lowered function before it is returned: if-conversion of a
//! conditional constant add into straight-line code.

use super::*;

/// If-conversion of `if c { p += k; }` (or `-=`, with a constant `k`, no `else`, `p` a local or a
/// field path): the block becomes `d = c ? k : 0; guard p + d; p = p + d`. It traps in exactly the
/// same cases (adding 0 never overflows), and leaves the loop around it without a branch, which
/// LLVM can then turn into straight-line code (a counting loop like a sieve's).
pub(super) fn if_convert(blocks: &mut [Block], locals: &mut Vec<LocalDecl>) {
    for b in 0..blocks.len() {
        let Terminator::Branch(cond, then, other) = blocks[b].term.clone() else { continue };
        let (t, e) = (then.0 as usize, other.0 as usize);
        if t == b || e == b {
            continue;
        }
        let Terminator::Goto(join) = blocks[t].term else { continue };
        let empty_else = other == join || (blocks[e].insts.is_empty() && blocks[e].term == Terminator::Goto(join));
        if !empty_else {
            continue;
        }
        let [
            Inst::Guard(guard),
            Inst::Assign(tmp, Rvalue::Binary(op, Operand::Copy(read), k)),
            Inst::Assign(target, Rvalue::Use(Operand::Copy(result))),
        ] = &blocks[t].insts[..]
        else {
            continue;
        };
        let Check::NoOverflow(checked, ty, Operand::Copy(place), amount) = &guard.check else { continue };
        let simple = place.proj.iter().all(|p| matches!(p, Proj::Field(_)));
        if guard.elided
            || !matches!(op, BinOp::Add | BinOp::Sub)
            || checked != op
            || read != place
            || target != place
            || result != tmp
            || amount != k
            || !matches!(k, Operand::Const(Const::Int(..)))
            || !simple
        {
            continue;
        }
        let (op, ty, k, place, tmp, guard) = (*op, *ty, k.clone(), place.clone(), tmp.clone(), guard.clone());
        locals.push(LocalDecl { name: None, ty: MTy::Int(ty) });
        let d = Local(locals.len() as u32 - 1);
        let anchors = blocks[t].anchors.clone();
        let zero = Operand::Const(Const::Int(0, ty));
        let insts = [
            Inst::Assign(Place::local(d), Rvalue::Select(cond, k, zero)),
            Inst::Guard(Guard { check: Check::NoOverflow(op, ty, Operand::Copy(place.clone()), copy(d)), ..guard }),
            Inst::Assign(tmp.clone(), Rvalue::Binary(op, Operand::Copy(place.clone()), copy(d))),
            Inst::Assign(place, Rvalue::Use(Operand::Copy(tmp))),
        ];
        let block = &mut blocks[b];
        block.insts.extend(insts);
        block.anchors.push(anchors.first().copied().flatten());
        block.anchors.extend(anchors);
        block.term = Terminator::Goto(join);
    }
}
