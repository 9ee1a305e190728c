//! The MIR verifier: structural facts codegen relies on, checked after lowering.
//!
//! Every block ends in a terminator whose targets exist; every place names a local of the
//! function, and its projections fit the local's type (a field of a record, an element of a view
//! or array, a deref of a pointer, a payload of a sum); every operand of a guard, call and print is
//! well-formed (a guard's path condition a bool); a function that returns a value never returns without one; every guard the range
//! analysis discharged passes the audit of its facts (`range::audit`). Failing it is a
//! compiler bug (`E-INTERNAL`), never a user's error.

use crate::{Check, Const, Function, Inst, MTy, Operand, Place, Proj, Rvalue, Terminator};

/// The first fault found in `function`, if any.
pub fn verify(function: &Function) -> Result<(), String> {
    let blocks = function.blocks.len() as u32;
    let target = |b: &crate::BlockId| -> Result<(), String> {
        if b.0 < blocks { Ok(()) } else { Err(format!("{}: a jump to bb{}, which does not exist", function.name, b.0)) }
    };
    for (index, block) in function.blocks.iter().enumerate() {
        if block.anchors.len() != block.insts.len() {
            return Err(format!(
                "{}: bb{index} has {} anchors for {} instructions",
                function.name,
                block.anchors.len(),
                block.insts.len()
            ));
        }
        for inst in &block.insts {
            match inst {
                Inst::Assign(place, value) => {
                    check_place(function, place)?;
                    check_rvalue(function, value)?;
                }
                Inst::Drop(place) => check_place(function, place)?,
                Inst::Assume(fact) => check_operand(function, fact)?,
                Inst::Transfer { dst, src, .. } => {
                    check_operand(function, dst)?;
                    check_operand(function, src)?;
                }
                Inst::DeviceReduce { env, count, dest, .. } => {
                    check_operand(function, env)?;
                    check_operand(function, count)?;
                    check_place(function, dest)?;
                }
                Inst::Parallel { env, count, work, .. } => {
                    check_operand(function, env)?;
                    check_operand(function, count)?;
                    check_operand(function, work)?;
                }
                Inst::Guard(guard) => {
                    for operand in check_operands(&guard.check) {
                        check_operand(function, operand)?;
                    }
                    if let Some((c, _)) = &guard.only_if {
                        check_operand(function, c)?;
                        let boolean = match c {
                            Operand::Copy(place) => matches!(function.place_ty(place), Some(MTy::Bool)),
                            Operand::Const(constant) => matches!(constant, Const::Bool(_)),
                        };
                        if !boolean {
                            return Err(format!(
                                "{}: bb{index}: the guard `{guard}` has a path condition that is not a bool",
                                function.name
                            ));
                        }
                    }
                    // The audit of a discharged guard (language §15): its facts, read alone,
                    // must imply its condition.
                    for fact in &guard.facts {
                        let (crate::range::Fact::Within(a, ..) | crate::range::Fact::AtMost(a, _, _)) = fact;
                        check_operand(function, a)?;
                        if let crate::range::Fact::AtMost(_, b, _) = fact {
                            check_operand(function, b)?;
                        }
                    }
                    if !guard.facts.is_empty() && !crate::range::audit(&guard.check, &guard.facts) {
                        return Err(format!(
                            "{}: bb{index} discharges the guard `{guard}`, which its facts do not imply",
                            function.name
                        ));
                    }
                }
                Inst::Call { dst, args, .. } => {
                    if let Some(dst) = dst {
                        check_place(function, dst)?;
                    }
                    for arg in args {
                        check_operand(function, arg)?;
                    }
                }
                Inst::Print { args, .. } => {
                    for arg in args {
                        check_operand(function, &arg.value)?;
                    }
                }
                Inst::Format { dst, args } => {
                    check_place(function, dst)?;
                    for arg in args {
                        check_operand(function, &arg.value)?;
                    }
                }
                Inst::CallIndirect { dst, callee, args } => {
                    if let Some(dst) = dst {
                        check_place(function, dst)?;
                    }
                    check_operand(function, callee)?;
                    for arg in args {
                        check_operand(function, arg)?;
                    }
                }
            }
        }
        match &block.term {
            Terminator::Goto(b) => target(b)?,
            Terminator::Branch(c, t, e) => {
                check_operand(function, c)?;
                target(t)?;
                target(e)?;
            }
            Terminator::Switch(v, cases, default) => {
                check_operand(function, v)?;
                for (_, b) in cases {
                    target(b)?;
                }
                target(default)?;
            }
            Terminator::Return(value) => match (value, &function.ret) {
                (None, MTy::Void) => {}
                (Some(v), ret) if *ret != MTy::Void => check_operand(function, v)?,
                _ => return Err(format!("{}: bb{index} returns a value of the wrong shape", function.name)),
            },
            Terminator::Unreachable => {}
        }
    }
    Ok(())
}

fn check_operands(check: &Check) -> Vec<&Operand> {
    match check {
        Check::NoOverflow(_, _, a, b) | Check::Division(_, a, b) | Check::InBounds(a, b) => vec![a, b],
        Check::AssertEq(_, a, b, _) => vec![a, b],
        Check::NegNoOverflow(_, a)
        | Check::Fits(_, _, a)
        | Check::ShiftCount(_, a)
        | Check::Assert(a, _)
        | Check::Callable(a)
        | Check::Allocated(a) => vec![a],
        Check::PartInBounds(a, b, c) | Check::PartLength(a, b, c) => vec![a, b, c],
        Check::Unreachable => vec![],
    }
}

fn check_rvalue(function: &Function, value: &Rvalue) -> Result<(), String> {
    match value {
        Rvalue::Use(a) | Rvalue::Unary(_, a) | Rvalue::Cast(_, a) => check_operand(function, a),
        Rvalue::Binary(_, a, b) => {
            check_operand(function, a)?;
            check_operand(function, b)
        }
        Rvalue::Record(_, fields) => fields.iter().try_for_each(|f| check_operand(function, f)),
        Rvalue::Variant(_, _, payload) => payload.iter().try_for_each(|p| check_operand(function, p)),
        Rvalue::Tag(p) | Rvalue::Len(p) | Rvalue::Ref(p) => check_place(function, p),
        Rvalue::View(p, bounds) => {
            check_place(function, p)?;
            if let Some((lo, hi)) = bounds {
                check_operand(function, lo)?;
                check_operand(function, hi)?;
            }
            Ok(())
        }
        Rvalue::Zeroed => Ok(()),
        Rvalue::Alloc(_, count, _) => check_operand(function, count),
        Rvalue::Select(c, a, b) => {
            check_operand(function, c)?;
            check_operand(function, a)?;
            check_operand(function, b)
        }
        Rvalue::AtomicRmw(_, place, v) => {
            check_place(function, place)?;
            check_operand(function, v)
        }
        Rvalue::AtomicCas(place, expected, desired) => {
            check_place(function, place)?;
            check_operand(function, expected)?;
            check_operand(function, desired)
        }
    }
}

fn check_operand(function: &Function, operand: &Operand) -> Result<(), String> {
    match operand {
        Operand::Copy(place) => check_place(function, place),
        Operand::Const(_) => Ok(()),
    }
}

fn check_place(function: &Function, place: &Place) -> Result<(), String> {
    let Some(local) = function.locals.get(place.local.0 as usize) else {
        return Err(format!("{}: the local _{} does not exist", function.name, place.local.0));
    };
    // The walk is `Function::place_ty`'s, one projection at a time, so that the first projection
    // that does not apply is named and every index operand is checked on the way.
    let mut ty = local.ty.clone();
    for proj in &place.proj {
        let Some(next) = ty.project(proj) else {
            return Err(format!("{}: {place}: {proj:?} does not apply to {ty}", function.name));
        };
        if let Proj::Index(i) = proj {
            check_operand(function, i)?;
        }
        ty = next;
    }
    Ok(())
}
