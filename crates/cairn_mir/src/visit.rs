//! Every place an instruction or terminator names, for passes that rewrite or audit the uses of
//! one local (fusion's chain-local arrays): each place is handed over mutably with the role it
//! plays, so a pass can tell a length read from an element access from any other use. Also the
//! one list of the rvalues that take a local's address (`address_taken`) and of the instructions
//! that write a local (`written`).

use crate::{Check, Inst, Local, Operand, Place, Proj, Rvalue, Terminator};

/// How an instruction uses a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The destination of an assignment or call.
    Def,
    /// The place whose length `Rvalue::Len` reads.
    Len,
    /// Any other read (an operand, a view or borrow of it, a drop, an index inside a place).
    Use,
}

/// Calls `f` on every place `inst` names, outermost first (the places inside a place's index
/// operands follow it, as uses).
pub(crate) fn inst_places(inst: &mut Inst, f: &mut dyn FnMut(&mut Place, Role)) {
    match inst {
        Inst::Assign(dst, value) => {
            place(dst, Role::Def, f);
            rvalue(value, f);
        }
        Inst::Guard(guard) => guard_places(guard, f),
        Inst::Call { dst, args, .. } => {
            if let Some(dst) = dst {
                place(dst, Role::Def, f);
            }
            args.iter_mut().for_each(|a| operand(a, f));
        }
        Inst::Print { args, .. } => args.iter_mut().for_each(|a| operand(&mut a.value, f)),
        Inst::Format { dst, args } => {
            args.iter_mut().for_each(|a| operand(&mut a.value, f));
            place(dst, Role::Def, f);
        }
        Inst::CallIndirect { dst, callee, args } => {
            if let Some(dst) = dst {
                place(dst, Role::Def, f);
            }
            operand(callee, f);
            args.iter_mut().for_each(|a| operand(a, f));
        }
        Inst::Drop(p) => place(p, Role::Use, f),
        Inst::Assume(o) => operand(o, f),
        Inst::Transfer { dst, src, .. } => {
            operand(dst, f);
            operand(src, f);
        }
        Inst::DeviceReduce { env, count, dest, .. } => {
            operand(env, f);
            operand(count, f);
            place(dest, Role::Def, f);
        }
        Inst::Parallel { env, count, work, .. } => {
            operand(env, f);
            operand(count, f);
            operand(work, f);
        }
    }
}

/// Calls `f` on every place a guard reads: its check's, its path condition's, then its facts' (`range::facts::Fact`), so a
/// pass that renames a local renames it in a discharged guard's proof too.
pub(crate) fn guard_places(guard: &mut crate::Guard, f: &mut dyn FnMut(&mut Place, Role)) {
    check(&mut guard.check, f);
    if let Some((c, _)) = &mut guard.only_if {
        operand(c, f);
    }
    for fact in &mut guard.facts {
        match fact {
            crate::range::facts::Fact::Within(o, ..) => operand(o, f),
            crate::range::facts::Fact::AtMost(a, b, _) => {
                operand(a, f);
                operand(b, f);
            }
        }
    }
}

/// Calls `f` on every place `term` reads.
pub(crate) fn terminator_places(term: &mut Terminator, f: &mut dyn FnMut(&mut Place, Role)) {
    match term {
        Terminator::Branch(o, ..) | Terminator::Switch(o, ..) | Terminator::Return(Some(o)) => operand(o, f),
        Terminator::Goto(_) | Terminator::Return(None) | Terminator::Unreachable => {}
    }
}

fn rvalue(value: &mut Rvalue, f: &mut dyn FnMut(&mut Place, Role)) {
    match value {
        Rvalue::Use(o) | Rvalue::Unary(_, o) | Rvalue::Cast(_, o) | Rvalue::Alloc(_, o, _) => operand(o, f),
        Rvalue::Binary(_, a, b) => {
            operand(a, f);
            operand(b, f);
        }
        Rvalue::Select(c, a, b) => {
            operand(c, f);
            operand(a, f);
            operand(b, f);
        }
        Rvalue::Record(_, fields) => fields.iter_mut().for_each(|o| operand(o, f)),
        Rvalue::Variant(_, _, payload) => {
            if let Some(o) = payload {
                operand(o, f);
            }
        }
        Rvalue::Len(p) => place(p, Role::Len, f),
        Rvalue::Tag(p) | Rvalue::Ref(p) => place(p, Role::Use, f),
        Rvalue::View(p, bounds) => {
            place(p, Role::Use, f);
            if let Some((lo, hi)) = bounds {
                operand(lo, f);
                operand(hi, f);
            }
        }
        Rvalue::Zeroed => {}
        // The element is read and written in memory; the local holding the array is only read.
        Rvalue::AtomicRmw(_, p, v) => {
            place(p, Role::Use, f);
            operand(v, f);
        }
        Rvalue::AtomicCas(p, expected, desired) => {
            place(p, Role::Use, f);
            operand(expected, f);
            operand(desired, f);
        }
    }
}

fn check(check: &mut Check, f: &mut dyn FnMut(&mut Place, Role)) {
    match check {
        Check::NoOverflow(_, _, a, b) | Check::Division(_, a, b) | Check::InBounds(a, b) => {
            operand(a, f);
            operand(b, f);
        }
        Check::AssertEq(_, a, b, _) => {
            operand(a, f);
            operand(b, f);
        }
        Check::PartInBounds(a, b, c) | Check::PartLength(a, b, c) => {
            operand(a, f);
            operand(b, f);
            operand(c, f);
        }
        Check::NegNoOverflow(_, o)
        | Check::Fits(_, _, o)
        | Check::ShiftCount(_, o)
        | Check::Assert(o, _)
        | Check::Callable(o)
        | Check::Allocated(o) => operand(o, f),
        Check::Unreachable => {}
    }
}

fn operand(o: &mut Operand, f: &mut dyn FnMut(&mut Place, Role)) {
    if let Operand::Copy(p) = o {
        place(p, Role::Use, f);
    }
}

fn place(p: &mut Place, role: Role, f: &mut dyn FnMut(&mut Place, Role)) {
    f(p, role);
    for proj in p.proj.iter_mut() {
        if let Proj::Index(index) = proj {
            operand(index, f);
        }
    }
}

/// Per local of `function`: whether its address is taken anywhere (borrowed, viewed, updated
/// atomically), so a call, a closure, a lane or a borrow may write it where no instruction names
/// it. The range analysis and loop versioning never follow such a local.
pub(crate) fn address_taken(function: &crate::Function) -> Vec<bool> {
    let mut taken = vec![false; function.locals.len()];
    for inst in function.blocks.iter().flat_map(|b| &b.insts) {
        if let Inst::Assign(
            _,
            Rvalue::Ref(p) | Rvalue::View(p, _) | Rvalue::AtomicRmw(_, p, _) | Rvalue::AtomicCas(p, ..),
        ) = inst
        {
            taken[p.local.0 as usize] = true;
        }
    }
    taken
}

/// The local an instruction writes, if any (a write to part of a local counts as a write to it).
pub(crate) fn written(inst: &Inst) -> Option<Local> {
    match inst {
        Inst::Assign(place, _) | Inst::Drop(place) | Inst::Format { dst: place, .. } => Some(place.local),
        Inst::Call { dst: Some(place), .. }
        | Inst::CallIndirect { dst: Some(place), .. }
        | Inst::DeviceReduce { dest: place, .. } => Some(place.local),
        _ => None,
    }
}
