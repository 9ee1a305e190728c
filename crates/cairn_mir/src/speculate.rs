//! Speculation of a small `if`/`else` whose arms compute with checked arithmetic (issue 22: the
//! Collatz select). `if c { x = x / 2; } else { x = 3 * x + 1; }` keeps an overflow guard — a
//! branch to a trap — inside the `else` arm, so LLVM cannot turn the data-dependent branch into
//! a `select` as it does for the same code with wrapping arithmetic. Here both arms run, one after
//! the other, on the branch's block, and each local they write takes the taken arm's value
//! through a `select` at the end.
//!
//! What makes running the arm not taken harmless: each arm writes fresh temporaries (renamed, so
//! neither sees the other's writes), and no guard of an arm can trap off its path. An overflow
//! guard keeps the arm's own operands and is marked to fail only on its path (`Guard::only_if`):
//! the `+`, `-` or `*` after it is wrapping arithmetic, which cannot fault on any operands, and its
//! value leaves the arm only through the select of the path taken. Codegen tests such a guard's
//! check first, as a branch that is almost never taken, and the path only when the check fails,
//! so the loop carries no select for it and keeps no data-dependent branch (the Collatz loop ran
//! 1.6–1.9× clang's with the path folded into the check, 1.05–1.10× with it tested second).
//! Every other guard in force has each variable operand replaced by `c ? v : neutral` (for the
//! `then` arm; `c ? neutral : v` for the `else` arm) — neutral is 0, and 1 for a divisor — so on
//! the path not taken it checks `0 / 1`, `-0`, a shift by 0 or a conversion of 0, which cannot
//! fail, and the division, shift or conversion right after it takes the neutral operands too
//! (dividing by zero is undefined in LLVM). On the path taken every guard checks exactly what it
//! checked before: the same cases trap, with the same guard, in the same order.
//!
//! Only arms that are cheap and cannot fault when run speculatively qualify: straight-line blocks
//! jumping to one join, of at most a few instructions, writing whole scalar locals from constants,
//! whole locals and record fields (no element reads, no calls, prints or stores), dividing only by
//! non-zero constants, holding no guard the range analysis discharged (its facts may rest on the
//! branch's condition), and holding at least one guard in force (an arm without one LLVM converts
//! on its own).

use std::collections::HashMap;
use std::sync::Arc;

use crate::{
    Anchor, BinOp, Block, BlockId, Check, Const, Function, Inst, Local, LocalDecl, MTy, Operand, Place, Proj, Rvalue,
    Terminator,
};

/// The most instructions two arms may hold together.
const ARMS: usize = 16;

/// Speculates every qualifying `if`/`else` of every function (module comment). A build does
/// this only when guards may be left out: `--keep-guards` compiles the branches as written, and
/// the evaluator runs the MIR as lowered, so both stand as the reference a speculated build is
/// compared with.
pub(crate) fn speculate_program(functions: &mut [Arc<Function>]) {
    for function in functions.iter_mut() {
        if function.blocks.iter().enumerate().any(|(b, _)| candidate(&function.blocks, b).is_some()) {
            let function = Arc::make_mut(function);
            let locals = &mut function.locals;
            speculate(&mut function.blocks, locals);
            crate::clear_unreachable(&mut function.blocks);
        }
    }
}

/// The branch, arms and join of block `b` when its shape could be speculated.
fn candidate(blocks: &[Block], b: usize) -> Option<(Operand, BlockId, BlockId, [usize; 2], usize)> {
    let Terminator::Branch(cond, then, other) = blocks[b].term.clone() else { return None };
    let (arms, join) = arms_of(blocks, b, then, other)?;
    Some((cond, then, other, arms, join))
}

fn copy(local: Local) -> Operand {
    Operand::Copy(Place::local(local))
}

/// Speculates the qualifying `if`/`else`s of one function. The arms' blocks are left as they
/// are: no path from the branch reaches them any more, and any other predecessor still may.
fn speculate(blocks: &mut [Block], locals: &mut Vec<LocalDecl>) {
    for b in 0..blocks.len() {
        let Some((cond, then, other, arms, join)) = candidate(blocks, b) else { continue };
        if let Operand::Copy(place) = &cond
            && !place.proj.is_empty()
        {
            continue;
        }
        let written = |arm: &[Inst]| -> Vec<Local> {
            arm.iter()
                .filter_map(|i| match i {
                    Inst::Assign(place, _) => Some(place.local),
                    _ => None,
                })
                .collect()
        };
        let cond_local = match &cond {
            Operand::Copy(place) => Some(place.local),
            Operand::Const(_) => None,
        };
        let (then_arm, else_arm) = (&blocks[arms[0]].insts, &blocks[arms[1]].insts);
        let then_arm = if then.0 as usize == join { &[][..] } else { &then_arm[..] };
        let else_arm = if other.0 as usize == join { &[][..] } else { &else_arm[..] };
        if then_arm.len() + else_arm.len() > ARMS
            || ![then_arm, else_arm].iter().all(|arm| qualifies(arm, locals))
            || !then_arm.iter().chain(else_arm).any(|i| matches!(i, Inst::Guard(g) if !g.elided))
            || cond_local.is_some_and(|c| written(then_arm).contains(&c) || written(else_arm).contains(&c))
        {
            continue;
        }
        let (then_arm, else_arm) = (then_arm.to_vec(), else_arm.to_vec());
        let then_anchors = if then.0 as usize == join { Vec::new() } else { blocks[arms[0]].anchors.clone() };
        let else_anchors = if other.0 as usize == join { Vec::new() } else { blocks[arms[1]].anchors.clone() };
        let anchor = blocks[b].term_anchor;
        let mut out: Vec<(Inst, Option<Anchor>)> = Vec::new();
        let then_map = rename(&then_arm, &then_anchors, &cond, true, locals, &mut out);
        let else_map = rename(&else_arm, &else_anchors, &cond, false, locals, &mut out);
        let mut merged: Vec<Local> = then_map.keys().chain(else_map.keys()).copied().collect();
        merged.sort();
        merged.dedup();
        for local in merged {
            let pick = |map: &HashMap<Local, Local>| copy(*map.get(&local).unwrap_or(&local));
            let select = Rvalue::Select(cond.clone(), pick(&then_map), pick(&else_map));
            out.push((Inst::Assign(Place::local(local), select), anchor));
        }
        let block = &mut blocks[b];
        for (inst, anchor) in out {
            block.insts.push(inst);
            block.anchors.push(anchor);
        }
        block.term = Terminator::Goto(BlockId(join as u32));
    }
}

/// The blocks of the two arms and the join, when the branch is an `if`/`else` (or an `if`
/// without `else`) whose arms are single blocks jumping to one join.
fn arms_of(blocks: &[Block], b: usize, then: BlockId, other: BlockId) -> Option<([usize; 2], usize)> {
    let (t, e) = (then.0 as usize, other.0 as usize);
    if t == e || t == b || e == b {
        return None;
    }
    let goto = |x: usize| match blocks[x].term {
        Terminator::Goto(j) => Some(j.0 as usize),
        _ => None,
    };
    let join = match (goto(t), goto(e)) {
        (Some(j1), Some(j2)) if j1 == j2 => j1,
        (Some(j), _) if j == e => e,
        (_, Some(j)) if j == t => t,
        _ => return None,
    };
    (join != b).then_some(([t, e], join))
}

/// True when every instruction of an arm may run on the path not taken (module comment).
fn qualifies(arm: &[Inst], locals: &[LocalDecl]) -> bool {
    let readable = |o: &Operand| match o {
        Operand::Const(_) => true,
        Operand::Copy(place) => place.proj.iter().all(|p| matches!(p, Proj::Field(_))),
    };
    arm.iter().all(|inst| match inst {
        Inst::Assign(place, rvalue) => {
            let scalar = matches!(locals[place.local.0 as usize].ty, MTy::Int(_) | MTy::Bool | MTy::Float(_));
            let reads = match rvalue {
                Rvalue::Use(a) | Rvalue::Unary(_, a) => readable(a),
                Rvalue::Cast(to, a) => matches!(to, MTy::Int(_) | MTy::Float(_)) && readable(a),
                Rvalue::Binary(op, a, b) => {
                    let divides = matches!(op, BinOp::Div | BinOp::Rem);
                    readable(a)
                        && readable(b)
                        && (!divides
                            || matches!(b, Operand::Const(Const::Int(v, ty)) if crate::range::constant(*v, *ty) > 0))
                }
                _ => false,
            };
            place.proj.is_empty() && scalar && reads
        }
        // A guard the lowering elided holds wherever its code runs (a loop binder's `+ 1`, a
        // division by a constant); one the range analysis discharged may rest on the branch's
        // condition, so its arm stays a branch.
        // A guard already bound to a path (an arm speculated before) would lose that path to
        // this branch's condition: such an arm stays a branch.
        Inst::Guard(guard) if guard.only_if.is_some() => false,
        Inst::Guard(guard) if guard.elided => guard.facts.is_empty(),
        Inst::Guard(guard) => neutralizable(&guard.check),
        _ => false,
    })
}

/// Appends an arm's instructions to `out`, its writes renamed to fresh temporaries and each
/// guard in force made harmless off its path (module comment); returns what each written local
/// was renamed to last.
fn rename(
    arm: &[Inst],
    anchors: &[Option<Anchor>],
    cond: &Operand,
    then: bool,
    locals: &mut Vec<LocalDecl>,
    out: &mut Vec<(Inst, Option<Anchor>)>,
) -> HashMap<Local, Local> {
    let mut map: HashMap<Local, Local> = HashMap::new();
    // Operands a guard just neutralized, to be replaced in the operation right after it too.
    let mut neutral: Vec<(Operand, Operand)> = Vec::new();
    for (inst, anchor) in arm.iter().zip(anchors) {
        let anchor = *anchor;
        let read = |o: &Operand, map: &HashMap<Local, Local>, neutral: &[(Operand, Operand)]| -> Operand {
            let o = match o {
                Operand::Copy(place) if map.contains_key(&place.local) => {
                    Operand::Copy(Place { local: map[&place.local], proj: place.proj.clone() })
                }
                other => other.clone(),
            };
            neutral.iter().find(|(from, _)| *from == o).map_or(o, |(_, to)| to.clone())
        };
        match inst {
            Inst::Assign(place, rvalue) => {
                let rvalue = match rvalue {
                    Rvalue::Use(a) => Rvalue::Use(read(a, &map, &neutral)),
                    Rvalue::Unary(op, a) => Rvalue::Unary(*op, read(a, &map, &neutral)),
                    Rvalue::Cast(to, a) => Rvalue::Cast(to.clone(), read(a, &map, &neutral)),
                    Rvalue::Binary(op, a, b) => Rvalue::Binary(*op, read(a, &map, &neutral), read(b, &map, &neutral)),
                    other => unreachable!("`qualifies` admits no {other:?}"),
                };
                neutral.clear();
                let ty = locals[place.local.0 as usize].ty.clone();
                locals.push(LocalDecl { name: None, ty });
                let fresh = Local(locals.len() as u32 - 1);
                map.insert(place.local, fresh);
                out.push((Inst::Assign(Place::local(fresh), rvalue), anchor));
            }
            Inst::Guard(guard) => {
                neutral.clear();
                let mut guard = guard.clone();
                // The arm's renamed locals, in the check and in a discharged guard's facts alike
                // (a proof about `t` is about the `t'` this arm computes).
                crate::visit::guard_places(&mut guard, &mut |place, _| {
                    if let Some(renamed) = map.get(&place.local) {
                        place.local = *renamed;
                    }
                });
                if !guard.elided && matches!(guard.check, Check::NoOverflow(..)) {
                    // The operation after an overflow guard is wrapping arithmetic, harmless on
                    // any operands: the guard and it keep the arm's own, and the guard traps only
                    // on the arm's path (`3 * x + 1` checks and computes `x`, not `c ? x : 0`).
                    // Codegen branches on the check off the path too, which is defined because
                    // nothing an arm reads is undefined or poison there: every local is
                    // initialized before use, and `qualifies` admits no operation that makes
                    // poison (the wrapping ops carry no `nuw`/`nsw`, codegen's multiply after a
                    // path-bound guard included).
                    guard.only_if = Some((cond.clone(), then));
                } else if !guard.elided {
                    // A division, shift or conversion would fault on the operands of the path
                    // not taken: its guard and it take neutral ones.
                    let mut off_path = OffPath { cond, then, locals, out, anchor, replaced: Vec::new() };
                    off_path.neutralize(&mut guard.check);
                    neutral = off_path.replaced;
                }
                out.push((Inst::Guard(guard), anchor));
            }
            other => unreachable!("`qualifies` admits no {other:?}"),
        }
    }
    map
}

/// Replaces a guard's operands off its path (module comment).
struct OffPath<'a> {
    cond: &'a Operand,
    then: bool,
    locals: &'a mut Vec<LocalDecl>,
    out: &'a mut Vec<(Inst, Option<Anchor>)>,
    anchor: Option<Anchor>,
    /// Each operand replaced, and what replaced it.
    replaced: Vec<(Operand, Operand)>,
}

impl OffPath<'_> {
    /// Rewrites the check so that off its path it checks something that cannot fail: `0 / 1`,
    /// `-0`, a conversion or shift of 0 (an overflow guard is not rewritten: it fails only on its
    /// path, `Guard::only_if`). Only variable operands are replaced; [`neutralizable`] said which
    /// checks that covers.
    fn neutralize(&mut self, check: &mut Check) {
        match check {
            Check::Division(_, a, b) => {
                self.zero(b, 1);
                self.zero(a, 0);
            }
            Check::NegNoOverflow(_, a) | Check::Fits(_, _, a) | Check::ShiftCount(_, a) => self.zero(a, 0),
            _ => {}
        }
    }

    /// A variable operand becomes `unit` (0 or 1 of its type) off the path.
    fn zero(&mut self, slot: &mut Operand, unit: i128) {
        let Operand::Copy(place) = &*slot else { return };
        let off = match crate::place_ty(self.locals, place) {
            Some(MTy::Int(t)) => Operand::Const(Const::Int(unit, t)),
            Some(MTy::Float(f)) => Operand::Const(Const::Float(if unit == 0 { 0 } else { 1f64.to_bits() }, f)),
            _ => return,
        };
        self.select(slot, off);
    }

    /// `slot` becomes a temporary holding `cond ? slot : off` (`cond ? off : slot` in the `else`
    /// arm).
    fn select(&mut self, slot: &mut Operand, off: Operand) {
        let Operand::Copy(place) = &*slot else { return };
        let Some(ty) = crate::place_ty(self.locals, place) else { return };
        self.locals.push(LocalDecl { name: None, ty });
        let temp = Local(self.locals.len() as u32 - 1);
        let on = slot.clone();
        let select = if self.then {
            Rvalue::Select(self.cond.clone(), on.clone(), off)
        } else {
            Rvalue::Select(self.cond.clone(), off, on.clone())
        };
        self.out.push((Inst::Assign(Place::local(temp), select), self.anchor));
        self.replaced.push((on, copy(temp)));
        *slot = copy(temp);
    }
}

/// True when a guard in force cannot fail off its path once speculated: an overflow guard
/// (marked to fail only on its path), or one whose operands [`OffPath::neutralize`] must replace
/// are variables (a constant cannot be replaced).
fn neutralizable(check: &Check) -> bool {
    let variable = |o: &Operand| matches!(o, Operand::Copy(_));
    let nonzero = |o: &Operand| matches!(o, Operand::Const(Const::Int(v, t)) if crate::range::constant(*v, *t) != 0);
    match check {
        Check::NoOverflow(..) => true,
        // The divisor becomes 1 (or is a constant other than 0); the dividend 0 (so no `MIN / -1`).
        Check::Division(ty, a, b) => variable(b) || (nonzero(b) && (variable(a) || !ty.signed())),
        Check::NegNoOverflow(_, a) | Check::Fits(MTy::Int(_), MTy::Int(_), a) | Check::ShiftCount(_, a) => variable(a),
        _ => false,
    }
}
