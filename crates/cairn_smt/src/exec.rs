//! Symbolic execution of MIR: a function's body run on symbolic inputs, every path's outcome
//! collected as a condition on the inputs.
//!
//! Paths fork where a branch's condition is not a constant and join again at the branch's
//! immediate post-dominator, where the states are merged into one with `ite` (so a loop whose
//! body branches stays linear in its iteration count). A failing guard ends its path as a
//! *trap* — an outcome of its own, so "one version traps where the other returns" is a
//! difference. A block entered more often than the unroll limit on one path (a loop run past
//! 16 iterations) ends the path as *cut*: nothing is known about it, and a comparison that can
//! reach a cut says `unknown`. Calls are inlined; recursion, printing, assertions and float
//! remainders leave the fragment.

use std::collections::HashMap;

use cairn_mir::{
    BinOp, BlockId, Check, Const, FloatTy, Function, Inst, IntTy, MTy, Operand, Place, Proj, Rvalue, Terminator, UnOp,
};
use z3::ast::RoundingMode;
use z3::ast::{Ast, BV, Bool, Float};

use crate::float::{self, from_bits, rne};
use crate::value::{
    R, SV, Step, Unsupported, bv_const, concrete, get, merge, put, to_index, unsupported, usize_const, zero,
};
use cairn_mir::cfg::{Loops, post_dominators};

/// Bounds on the work of one symbolic run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How often one block may be entered on one path (loop iterations).
    pub unroll: u32,
    /// How many blocks may be executed over all paths.
    pub steps: u64,
}

/// One path state.
#[derive(Clone)]
pub struct State {
    pub pc: Bool,
    pub objs: Vec<SV>,
    visits: HashMap<(usize, u32), u32>,
}

impl State {
    pub fn new(objs: Vec<SV>) -> State {
        State { pc: Bool::from_bool(true), objs, visits: HashMap::new() }
    }
}

/// Two states as one, under `a.pc` (the path conditions are disjoint).
fn merge_states(a: &State, b: &State) -> Option<State> {
    let n = a.objs.len().max(b.objs.len());
    let mut objs = Vec::with_capacity(n);
    for i in 0..n {
        objs.push(match (a.objs.get(i), b.objs.get(i)) {
            (Some(x), Some(y)) => merge(&a.pc, x, y)?,
            (Some(v), None) | (None, Some(v)) => v.clone(),
            (None, None) => unreachable!("within both lengths"),
        });
    }
    let mut visits = a.visits.clone();
    for (k, v) in &b.visits {
        let e = visits.entry(*k).or_insert(0);
        *e = (*e).max(*v);
    }
    Some(State { pc: Bool::or(&[&a.pc, &b.pc]), objs, visits })
}

/// Folds states into as few as merge.
fn merge_all(states: Vec<State>) -> Vec<State> {
    let mut out: Vec<State> = Vec::new();
    'next: for state in states {
        for held in out.iter_mut() {
            if let Some(merged) = merge_states(held, &state) {
                *held = merged;
                continue 'next;
            }
        }
        out.push(state);
    }
    out
}

/// States and return values, merged.
fn merge_returns(returns: Vec<(State, SV)>) -> Vec<(State, SV)> {
    let mut out: Vec<(State, SV)> = Vec::new();
    'next: for (state, value) in returns {
        for (held, held_value) in out.iter_mut() {
            if let (Some(s), Some(v)) = (merge_states(held, &state), merge(&held.pc, held_value, &value)) {
                *held = s;
                *held_value = v;
                continue 'next;
            }
        }
        out.push((state, value));
    }
    out
}

/// What a run ended in, over all its paths.
pub struct Run {
    /// Path conditions that trapped.
    pub traps: Vec<Bool>,
    /// Path conditions cut off at the unroll limit.
    pub cuts: Vec<Bool>,
    /// Returning paths (merged): the state and the value.
    pub returns: Vec<(State, SV)>,
}

struct Frame<'f> {
    function: &'f Function,
    locals: Vec<usize>,
    activation: usize,
}

#[derive(Default)]
struct Region {
    at_stop: Vec<State>,
    returned: Vec<(State, SV)>,
}

/// The executor over one program's functions.
pub struct Exec<'f> {
    functions: HashMap<&'f str, &'f Function>,
    limits: Limits,
    traps: Vec<Bool>,
    cuts: Vec<Bool>,
    steps: u64,
    activations: usize,
    stack: Vec<&'f str>,
    post_dominators: HashMap<&'f str, Vec<Option<u32>>>,
    loops: HashMap<&'f str, Loops>,
    /// The functions taken as values so far: a function value is a 32-bit number, 0 for the
    /// zero value and `i + 1` for the `i`-th of these (within one run; never observed).
    fn_values: Vec<&'f str>,
}

impl<'f> Exec<'f> {
    pub fn new(functions: &'f [std::sync::Arc<Function>], limits: Limits) -> Exec<'f> {
        Exec {
            functions: functions.iter().map(|f| (&*f.symbol, &**f)).collect(),
            limits,
            traps: Vec::new(),
            cuts: Vec::new(),
            steps: 0,
            activations: 0,
            stack: Vec::new(),
            post_dominators: HashMap::new(),
            loops: HashMap::new(),
            fn_values: Vec::new(),
        }
    }

    pub fn function(&self, symbol: &str) -> Option<&'f Function> {
        self.functions.get(symbol).copied()
    }

    /// Runs `symbol` on `args` from `state`.
    pub fn run(mut self, symbol: &str, args: Vec<SV>, state: State) -> R<Run> {
        let function = self.function(symbol).ok_or_else(|| Unsupported(format!("no function {symbol}")))?;
        let returns = self.call(function, args, state)?;
        Ok(Run { traps: self.traps, cuts: self.cuts, returns })
    }

    fn call(&mut self, function: &'f Function, args: Vec<SV>, mut state: State) -> R<Vec<(State, SV)>> {
        if self.stack.contains(&&*function.symbol) {
            return unsupported(format!("recursion through {}", function.name));
        }
        if self.stack.len() > 64 {
            return unsupported("calls nested deeper than 64");
        }
        if function.kind == cairn_mir::FnKind::Foreign {
            return unsupported(format!("a call of the foreign function {}", function.symbol));
        }
        self.stack.push(&function.symbol);
        let mut locals = Vec::with_capacity(function.locals.len());
        let mut args = args.into_iter();
        for (i, local) in function.locals.iter().enumerate() {
            let value = if i < function.params as usize {
                args.next().ok_or_else(|| Unsupported("a call with too few arguments".into()))?
            } else {
                zero(&local.ty, &mut state.objs)?
            };
            state.objs.push(value);
            locals.push(state.objs.len() - 1);
        }
        self.activations += 1;
        let frame = Frame { function, locals, activation: self.activations };
        let region = self.region(&frame, BlockId(0), None, state)?;
        self.stack.pop();
        Ok(merge_returns(region.returned))
    }

    /// Follows the edge `from → to`: counts a loop iteration when `to` is a loop header reached
    /// from inside its loop, restarts the count when the loop is entered afresh, and cuts the
    /// path past the unroll limit.
    fn enter(&mut self, frame: &Frame<'f>, from: BlockId, to: BlockId, state: &mut State) -> bool {
        let loops = self.loops.entry(&frame.function.symbol).or_insert_with(|| Loops::of(frame.function));
        let Some(body) = &loops.bodies[to.0 as usize] else { return true };
        let key = (frame.activation, to.0);
        if body[from.0 as usize] {
            let count = state.visits.entry(key).or_insert(0);
            *count += 1;
            if *count > self.limits.unroll {
                self.cuts.push(state.pc.clone());
                return false;
            }
        } else {
            state.visits.insert(key, 0);
        }
        true
    }

    fn follow(
        &mut self,
        frame: &Frame<'f>,
        from: BlockId,
        to: BlockId,
        mut state: State,
        work: &mut Vec<(BlockId, State)>,
    ) {
        if self.enter(frame, from, to, &mut state) {
            work.push((to, state));
        }
    }

    fn ipdom(&mut self, function: &'f Function, block: BlockId) -> Option<BlockId> {
        let table = self.post_dominators.entry(&function.symbol).or_insert_with(|| post_dominators(function));
        table[block.0 as usize].map(BlockId)
    }

    fn region(&mut self, frame: &Frame<'f>, start: BlockId, stop: Option<BlockId>, state: State) -> R<Region> {
        let mut region = Region::default();
        let mut work = vec![(start, state)];
        while let Some((block_id, state)) = work.pop() {
            if Some(block_id) == stop {
                region.at_stop.push(state);
                continue;
            }
            self.steps += 1;
            if self.steps > self.limits.steps {
                return unsupported(format!("more than {} blocks to execute over all paths", self.limits.steps));
            }
            let block = frame.function.block(block_id);
            let mut states = vec![state];
            for inst in &block.insts {
                let mut next = Vec::with_capacity(states.len());
                for s in states {
                    next.extend(self.inst(frame, inst, s)?);
                }
                states = next;
            }
            for mut state in states {
                match &block.term {
                    Terminator::Goto(next) => self.follow(frame, block_id, *next, state, &mut work),
                    Terminator::Return(value) => {
                        let value = match value {
                            Some(v) => self.operand(frame, &mut state, v)?,
                            None => SV::Void,
                        };
                        region.returned.push((state, value));
                    }
                    Terminator::Unreachable => self.traps.push(state.pc),
                    Terminator::Branch(c, then, otherwise) => {
                        let c = match self.operand(frame, &mut state, c)? {
                            SV::Bool(b) => b,
                            _ => return unsupported("a branch on a non-boolean"),
                        };
                        match c.simplify().as_bool() {
                            Some(true) => self.follow(frame, block_id, *then, state, &mut work),
                            Some(false) => self.follow(frame, block_id, *otherwise, state, &mut work),
                            None => {
                                let arms = vec![(c.clone(), *then), (c.not(), *otherwise)];
                                self.fork(frame, block_id, state, arms, &mut region, &mut work)?;
                            }
                        }
                    }
                    Terminator::Switch(v, cases, default) => {
                        let v = match self.operand(frame, &mut state, v)? {
                            SV::Int(b, _) | SV::Tag(b) => b,
                            _ => return unsupported("a switch on a non-integer"),
                        };
                        let width = v.get_size();
                        if let Some(k) = concrete(&v) {
                            let target = cases.iter().find(|(c, _)| *c == k).map_or(*default, |(_, b)| *b);
                            self.follow(frame, block_id, target, state, &mut work);
                            continue;
                        }
                        let mut arms = Vec::new();
                        let mut none = Vec::new();
                        for (k, target) in cases {
                            let hit = v.eq(BV::from_u64(*k, width));
                            none.push(hit.not());
                            arms.push((hit, *target));
                        }
                        arms.push((Bool::and(&none), *default));
                        self.fork(frame, block_id, state, arms, &mut region, &mut work)?;
                    }
                }
            }
        }
        Ok(region)
    }

    /// Runs each arm to the branch's immediate post-dominator and merges what arrives there.
    fn fork(
        &mut self,
        frame: &Frame<'f>,
        at: BlockId,
        state: State,
        arms: Vec<(Bool, BlockId)>,
        region: &mut Region,
        work: &mut Vec<(BlockId, State)>,
    ) -> R<()> {
        let join = self.ipdom(frame.function, at);
        let mut arrived = Vec::new();
        for (condition, target) in arms {
            let mut side = state.clone();
            side.pc = Bool::and(&[&state.pc, &condition]);
            if side.pc.simplify().as_bool() == Some(false) {
                continue;
            }
            if !self.enter(frame, at, target, &mut side) {
                continue;
            }
            let inner = self.region(frame, target, join, side)?;
            arrived.extend(inner.at_stop);
            region.returned.extend(inner.returned);
        }
        if let Some(join) = join {
            for merged in merge_all(arrived) {
                work.push((join, merged));
            }
        }
        Ok(())
    }

    fn inst(&mut self, frame: &Frame<'f>, inst: &Inst, mut state: State) -> R<Vec<State>> {
        match inst {
            // A function value is one of the functions this run took as values: the path calls
            // each that it may hold, under the condition that it holds that one. No path is
            // dropped: every function taken as a value that takes as many arguments is a
            // candidate (the checker's types rule out the others; the zero value failed its
            // `callable` guard before the call). A value from the inputs is never a number this
            // run gave out: outside the fragment.
            Inst::CallIndirect { dst, callee, args } => {
                let SV::Tag(held) = self.operand(frame, &mut state, callee)? else {
                    return unsupported("a call through something other than a function value");
                };
                let candidates: Vec<(u64, &'f Function)> = match concrete(&held) {
                    Some(k) => self
                        .fn_values
                        .get((k as usize).wrapping_sub(1))
                        .and_then(|s| self.function(s))
                        .map(|f| vec![(k, f)])
                        .unwrap_or_default(),
                    None => (1..=self.fn_values.len() as u64)
                        .filter_map(|k| self.function(self.fn_values[k as usize - 1]).map(|f| (k, f)))
                        .filter(|(_, f)| f.params as usize == args.len())
                        .collect(),
                };
                if candidates.is_empty() {
                    return unsupported("a call through a function value the inputs choose");
                }
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.operand(frame, &mut state, arg)?);
                }
                let mut out = Vec::new();
                for (k, function) in candidates {
                    let mut side = state.clone();
                    side.pc = Bool::and(&[&state.pc, &held.eq(bv_const(i128::from(k), 32))]);
                    if side.pc.simplify().as_bool() == Some(false) {
                        continue;
                    }
                    for (mut side, value) in self.call(function, values.clone(), side)? {
                        if let Some(dst) = dst {
                            self.write(frame, &mut side, dst, value)?;
                        }
                        out.push(side);
                    }
                }
                Ok(out)
            }
            Inst::Drop(_) => unsupported("a heap owner (Buf) released"),
            Inst::Parallel { .. } => unsupported("a parallel region"),
            Inst::DeviceReduce { .. } => unsupported("a device reduce"),
            Inst::Transfer { .. } => unsupported("a transfer (device memory)"),
            // A proved fact: the paths that reach it already satisfy it.
            Inst::Assume(_) => Ok(vec![state]),
            Inst::Assign(place, value) => {
                let Some(ty) = frame.function.place_ty(place) else {
                    return unsupported("a place whose type does not match its path");
                };
                let value = self.rvalue(frame, &mut state, value, &ty)?;
                self.write(frame, &mut state, place, value)?;
                Ok(vec![state])
            }
            Inst::Guard(guard) => {
                let mut holds = self.check(frame, &mut state, &guard.check)?;
                // A speculated arm's guard holds off its path (`Guard::only_if`).
                if let Some((c, v)) = &guard.only_if {
                    let c = self.operand(frame, &mut state, c)?;
                    let SV::Bool(c) = c else { return unsupported("a path condition that is not a bool") };
                    let on_path = if *v { c } else { c.not() };
                    holds = Bool::or(&[&holds, &on_path.not()]);
                }
                match holds.simplify().as_bool() {
                    Some(true) => {}
                    _ => {
                        self.traps.push(Bool::and(&[&state.pc, &holds.not()]));
                        state.pc = Bool::and(&[&state.pc, &holds]);
                    }
                }
                Ok(vec![state])
            }
            Inst::Call { dst, callee, args } => {
                let function = self.function(callee).ok_or_else(|| Unsupported(format!("a call of {callee}")))?;
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.operand(frame, &mut state, arg)?);
                }
                let mut out = Vec::new();
                for (mut state, value) in self.call(function, values, state)? {
                    if let Some(dst) = dst {
                        self.write(frame, &mut state, dst, value)?;
                    }
                    out.push(state);
                }
                Ok(out)
            }
            Inst::Print { .. } => unsupported("printing (the io effect)"),
            Inst::Format { .. } => unsupported("format (a vector's text)"),
        }
    }

    // ----- places ----------------------------------------------------------------------------

    fn locate(&mut self, frame: &Frame<'f>, state: &mut State, place: &Place) -> R<(usize, Vec<Step>)> {
        let mut obj = frame.locals[place.local.0 as usize];
        let mut path: Vec<Step> = Vec::new();
        for proj in &place.proj {
            match proj {
                Proj::Field(i) => path.push(Step::Field(*i)),
                Proj::Payload(i) => path.push(Step::Payload(*i)),
                Proj::Index(index) => {
                    let i = match self.operand(frame, state, index)? {
                        SV::Int(b, _) => to_index(&b),
                        _ => return unsupported("a non-integer index"),
                    };
                    match get(&state.objs[obj], &path)? {
                        SV::View { obj: o, path: p, start, .. } => {
                            obj = o;
                            path = p;
                            path.push(Step::Elem(start.bvadd(&i)));
                        }
                        SV::Fixed(_) | SV::Smt(..) => path.push(Step::Elem(i)),
                        _ => return unsupported("indexing a value that is not an array"),
                    }
                }
                Proj::Deref => match get(&state.objs[obj], &path)? {
                    SV::Ptr { obj: o, path: p } => {
                        obj = o;
                        path = p;
                    }
                    _ => return unsupported("a deref of a value that is not a borrow"),
                },
            }
        }
        Ok((obj, path))
    }

    fn read(&mut self, frame: &Frame<'f>, state: &mut State, place: &Place) -> R<SV> {
        let (obj, path) = self.locate(frame, state, place)?;
        get(&state.objs[obj], &path)
    }

    fn write(&mut self, frame: &Frame<'f>, state: &mut State, place: &Place, value: SV) -> R<()> {
        let (obj, path) = self.locate(frame, state, place)?;
        state.objs[obj] = put(&state.objs[obj], &path, &value)?;
        Ok(())
    }

    // ----- values ----------------------------------------------------------------------------

    fn operand(&mut self, frame: &Frame<'f>, state: &mut State, operand: &Operand) -> R<SV> {
        match operand {
            Operand::Copy(place) => self.read(frame, state, place),
            Operand::Const(c) => Ok(match c {
                Const::Int(v, t) => SV::Int(bv_const(*v, t.bits()), *t),
                Const::Float(bits, t) => SV::Float(from_bits(&BV::from_u64(*bits, float::bits_of(*t)), *t), *t),
                Const::Bool(b) => SV::Bool(Bool::from_bool(*b)),
                Const::Tag(t, _) => SV::Tag(bv_const(i128::from(*t), 32)),
                Const::Fn(symbol) => {
                    let Some((&known, _)) = self.functions.get_key_value(&**symbol) else {
                        return unsupported(format!("a function value of {symbol}"));
                    };
                    let index = match self.fn_values.iter().position(|s| *s == known) {
                        Some(i) => i,
                        None => {
                            self.fn_values.push(known);
                            self.fn_values.len() - 1
                        }
                    };
                    SV::Tag(bv_const(index as i128 + 1, 32))
                }
                Const::Str(bytes) => {
                    let items = bytes.iter().map(|b| SV::Int(bv_const(i128::from(*b), 8), IntTy::U8)).collect();
                    state.objs.push(SV::Fixed(items));
                    SV::View {
                        obj: state.objs.len() - 1,
                        path: Vec::new(),
                        start: usize_const(0),
                        len: usize_const(bytes.len() as u64),
                    }
                }
            }),
        }
    }

    fn int(&mut self, frame: &Frame<'f>, state: &mut State, operand: &Operand) -> R<BV> {
        match self.operand(frame, state, operand)? {
            SV::Int(b, _) | SV::Tag(b) => Ok(b),
            _ => unsupported("an integer operand that is not one"),
        }
    }

    fn rvalue(&mut self, frame: &Frame<'f>, state: &mut State, value: &Rvalue, ty: &MTy) -> R<SV> {
        match value {
            Rvalue::Alloc(..) => unsupported("a heap owner (Buf) allocated"),
            Rvalue::Use(o) => self.operand(frame, state, o),
            Rvalue::Binary(op, a, b) => {
                let a = self.operand(frame, state, a)?;
                let b = self.operand(frame, state, b)?;
                binary(*op, a, b)
            }
            Rvalue::Unary(op, a) => {
                let a = self.operand(frame, state, a)?;
                unary(*op, a)
            }
            Rvalue::Cast(to, a) => {
                let a = self.operand(frame, state, a)?;
                cast(to, a)
            }
            Rvalue::Record(_, fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for f in fields {
                    values.push(self.operand(frame, state, f)?);
                }
                Ok(SV::Record(values))
            }
            Rvalue::Variant(sum, index, payload) => match sum {
                MTy::Enum { .. } => Ok(SV::Tag(bv_const(i128::from(*index), 32))),
                MTy::Sum { variants, .. } => {
                    let mut payloads = Vec::with_capacity(variants.len());
                    for (j, variant) in variants.iter().enumerate() {
                        payloads.push(match (variant, payload) {
                            (Some(_), Some(p)) if j == *index as usize => Some(self.operand(frame, state, p)?),
                            (Some(t), _) => Some(zero(t, &mut state.objs)?),
                            (None, _) => None,
                        });
                    }
                    Ok(SV::Sum(bv_const(i128::from(*index), 32), payloads))
                }
                _ => unsupported("a variant of a type that is not a sum"),
            },
            Rvalue::Tag(place) => match self.read(frame, state, place)? {
                SV::Tag(t) | SV::Sum(t, _) => Ok(SV::Int(t, IntTy::U32)),
                _ => unsupported("the tag of a value that has none"),
            },
            Rvalue::Len(place) => match self.read(frame, state, place)? {
                SV::View { len, .. } => Ok(SV::Int(len, IntTy::Usize)),
                SV::Fixed(items) => Ok(SV::Int(usize_const(items.len() as u64), IntTy::Usize)),
                _ => unsupported("the length of a value that is not an array"),
            },
            Rvalue::View(place, bounds) => {
                let bounds = match bounds {
                    Some((lo, hi)) => {
                        let lo = to_index(&self.int(frame, state, lo)?);
                        let hi = to_index(&self.int(frame, state, hi)?);
                        Some((lo, hi))
                    }
                    None => None,
                };
                let (obj, path) = self.locate(frame, state, place)?;
                let (obj, path, start, len) = match get(&state.objs[obj], &path)? {
                    SV::View { obj, path, start, len } => (obj, path, start, len),
                    SV::Fixed(items) => (obj, path, usize_const(0), usize_const(items.len() as u64)),
                    _ => return unsupported("a view of a value that is not an array"),
                };
                Ok(match bounds {
                    Some((lo, hi)) => SV::View { obj, path, start: start.bvadd(&lo), len: hi.bvsub(&lo) },
                    None => SV::View { obj, path, start, len },
                })
            }
            Rvalue::Ref(place) => {
                let (obj, path) = self.locate(frame, state, place)?;
                Ok(SV::Ptr { obj, path })
            }
            Rvalue::Zeroed => zero(ty, &mut state.objs),
            Rvalue::AtomicRmw(..) | Rvalue::AtomicCas(..) => unsupported("an atomic element update"),
            Rvalue::Select(c, a, b) => {
                let c = match self.operand(frame, state, c)? {
                    SV::Bool(c) => c,
                    _ => return unsupported("a select on a non-boolean"),
                };
                let a = self.operand(frame, state, a)?;
                let b = self.operand(frame, state, b)?;
                merge(&c, &a, &b).ok_or_else(|| Unsupported("a select of views of different arrays".into()))
            }
        }
    }

    fn check(&mut self, frame: &Frame<'f>, state: &mut State, check: &Check) -> R<Bool> {
        Ok(match check {
            // The zero value of a function type is not callable.
            Check::Callable(callee) => match self.operand(frame, state, callee)? {
                SV::Tag(b) => b.eq(bv_const(0, 32)).not(),
                _ => return unsupported("a callable check of something other than a function value"),
            },
            Check::Allocated(_) => return unsupported("a heap owner (Buf) allocated"),
            Check::NoOverflow(op, ty, a, b) => {
                let a = self.int(frame, state, a)?;
                let b = self.int(frame, state, b)?;
                no_overflow(*op, *ty, &a, &b)?
            }
            Check::NegNoOverflow(ty, a) => {
                let a = self.int(frame, state, a)?;
                if ty.signed() { a.eq(bv_const(ty.range().0, ty.bits())).not() } else { a.eq(bv_const(0, ty.bits())) }
            }
            Check::Division(ty, a, b) => {
                let a = self.int(frame, state, a)?;
                let b = self.int(frame, state, b)?;
                let nonzero = b.eq(bv_const(0, ty.bits())).not();
                if ty.signed() {
                    let overflow = Bool::and(&[a.eq(bv_const(ty.range().0, ty.bits())), b.eq(bv_const(-1, ty.bits()))]);
                    Bool::and(&[nonzero, overflow.not()])
                } else {
                    nonzero
                }
            }
            Check::Fits(from, to, a) => {
                let MTy::Int(to) = to else { return Ok(Bool::from_bool(true)) };
                let (lo, hi) = to.range();
                match (from, self.operand(frame, state, a)?) {
                    (MTy::Int(from), SV::Int(v, _)) => {
                        // Every type is at most 64 bits, so 128 bits hold both ranges exactly.
                        let wide =
                            if from.signed() { v.sign_ext(128 - from.bits()) } else { v.zero_ext(128 - from.bits()) };
                        Bool::and(&[wide.bvsge(bv_const(lo, 128)), wide.bvsle(bv_const(hi, 128))])
                    }
                    (_, SV::Float(f, fty)) => {
                        // Not NaN, and lo <= trunc(f) < hi + 1. Both bounds are 0 or powers of
                        // two, exact in either float type, so the comparison stays in floating
                        // point (what the evaluator and the compiled guard do).
                        let t = f.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_zero());
                        let bound = |v: i128| match fty {
                            FloatTy::F32 => Float::from_f32(v as f32),
                            FloatTy::F64 => Float::from_f64(v as f64),
                        };
                        Bool::and(&[f.is_nan().not(), t.ge(bound(lo)), t.lt(bound(hi + 1))])
                    }
                    _ => Bool::from_bool(true),
                }
            }
            Check::ShiftCount(ty, k) => {
                let k = self.int(frame, state, k)?;
                let width = k.get_size();
                let bits = u64::from(ty.bits());
                if width < 64 && bits >= (1u64 << width) {
                    Bool::from_bool(true)
                } else {
                    k.bvult(BV::from_u64(bits, width))
                }
            }
            Check::InBounds(i, n) => {
                let i = to_index(&self.int(frame, state, i)?);
                let n = to_index(&self.int(frame, state, n)?);
                i.bvult(&n)
            }
            Check::PartInBounds(lo, hi, n) => {
                let lo = to_index(&self.int(frame, state, lo)?);
                let hi = to_index(&self.int(frame, state, hi)?);
                let n = to_index(&self.int(frame, state, n)?);
                Bool::and(&[lo.bvule(&hi), hi.bvule(&n)])
            }
            Check::PartLength(lo, hi, n) => {
                let lo = to_index(&self.int(frame, state, lo)?);
                let hi = to_index(&self.int(frame, state, hi)?);
                let n = to_index(&self.int(frame, state, n)?);
                hi.bvsub(&lo).eq(&n)
            }
            Check::Unreachable => Bool::from_bool(false),
            Check::Assert(..) | Check::AssertEq(..) => return unsupported("an assertion"),
        })
    }
}

/// `a op b` is representable: computed exactly in a wider vector and compared back.
fn no_overflow(op: BinOp, ty: IntTy, a: &BV, b: &BV) -> R<Bool> {
    let w = ty.bits();
    let extra = if op == BinOp::Mul { w } else { 1 };
    let ext = |v: &BV| if ty.signed() { v.sign_ext(extra) } else { v.zero_ext(extra) };
    let (x, y) = (ext(a), ext(b));
    let exact = match op {
        BinOp::Add => x.bvadd(&y),
        BinOp::Sub => x.bvsub(&y),
        BinOp::Mul => x.bvmul(&y),
        _ => return unsupported("an overflow check of another operation"),
    };
    let back = ext(&exact.extract(w - 1, 0));
    Ok(back.eq(&exact))
}

fn binary(op: BinOp, a: SV, b: SV) -> R<SV> {
    Ok(match (a, b) {
        (SV::Int(x, t), SV::Int(y, _)) => {
            let signed = t.signed();
            let int = |v: BV| SV::Int(v, t);
            let y_same = || {
                let (wx, wy) = (x.get_size(), y.get_size());
                if wy < wx {
                    y.zero_ext(wx - wy)
                } else if wy > wx {
                    y.extract(wx - 1, 0)
                } else {
                    y.clone()
                }
            };
            match op {
                BinOp::Add => int(x.bvadd(&y)),
                BinOp::Sub => int(x.bvsub(&y)),
                BinOp::Mul => int(x.bvmul(&y)),
                BinOp::Div if signed => int(x.bvsdiv(&y)),
                BinOp::Div => int(x.bvudiv(&y)),
                BinOp::Rem if signed => int(x.bvsrem(&y)),
                BinOp::Rem => int(x.bvurem(&y)),
                BinOp::And => int(x.bvand(&y)),
                BinOp::Or => int(x.bvor(&y)),
                BinOp::Xor => int(x.bvxor(&y)),
                BinOp::Shl => int(x.bvshl(y_same())),
                BinOp::Shr if signed => int(x.bvashr(y_same())),
                BinOp::Shr => int(x.bvlshr(y_same())),
                BinOp::Eq => SV::Bool(x.eq(&y)),
                BinOp::Ne => SV::Bool(x.eq(&y).not()),
                BinOp::Lt => SV::Bool(if signed { x.bvslt(&y) } else { x.bvult(&y) }),
                BinOp::Le => SV::Bool(if signed { x.bvsle(&y) } else { x.bvule(&y) }),
                BinOp::Gt => SV::Bool(if signed { x.bvsgt(&y) } else { x.bvugt(&y) }),
                BinOp::Ge => SV::Bool(if signed { x.bvsge(&y) } else { x.bvuge(&y) }),
                BinOp::Min | BinOp::Max => {
                    let less = if signed { x.bvslt(&y) } else { x.bvult(&y) };
                    int(if op == BinOp::Min { less.ite(&x, &y) } else { less.ite(&y, &x) })
                }
            }
        }
        (SV::Tag(x), SV::Tag(y)) => match op {
            BinOp::Eq => SV::Bool(x.eq(&y)),
            BinOp::Ne => SV::Bool(x.eq(&y).not()),
            _ => return unsupported("arithmetic on tags"),
        },
        (SV::Bool(x), SV::Bool(y)) => SV::Bool(match op {
            BinOp::And => Bool::and(&[&x, &y]),
            BinOp::Or => Bool::or(&[&x, &y]),
            BinOp::Xor | BinOp::Ne => x.xor(&y),
            BinOp::Eq => x.iff(&y),
            _ => return unsupported("arithmetic on booleans"),
        }),
        (SV::Float(x, t), SV::Float(y, _)) => {
            let rm = rne();
            let f = |v: Float| SV::Float(v, t);
            match op {
                BinOp::Add => f(x.add_with_rounding_mode(&y, &rm)),
                BinOp::Sub => f(x.sub_with_rounding_mode(&y, &rm)),
                BinOp::Mul => f(x.mul_with_rounding_mode(&y, &rm)),
                BinOp::Div => f(x.div_with_rounding_mode(&y, &rm)),
                BinOp::Eq => SV::Bool(x.eq_fpa(&y)),
                BinOp::Ne => SV::Bool(x.eq_fpa(&y).not()),
                BinOp::Lt => SV::Bool(x.lt(&y)),
                BinOp::Le => SV::Bool(x.le(&y)),
                BinOp::Gt => SV::Bool(x.gt(&y)),
                BinOp::Ge => SV::Bool(x.ge(&y)),
                BinOp::Rem => return unsupported("a float remainder (C's fmod is not Z3's fp.rem)"),
                _ => return unsupported("an operation floats do not have"),
            }
        }
        _ => return unsupported("a binary operation on mismatched operands"),
    })
}

fn unary(op: UnOp, a: SV) -> R<SV> {
    Ok(match (op, a) {
        (UnOp::Neg, SV::Int(x, t)) => SV::Int(x.bvneg(), t),
        (UnOp::Not | UnOp::BitNot, SV::Int(x, t)) => SV::Int(x.bvnot(), t),
        (UnOp::Not | UnOp::BitNot, SV::Bool(b)) => SV::Bool(b.not()),
        (UnOp::Abs, SV::Int(x, t)) => {
            let negative = x.bvslt(bv_const(0, x.get_size()));
            SV::Int(negative.ite(&x.bvneg(), &x), t)
        }
        (UnOp::Neg, SV::Float(x, t)) => SV::Float(x.unary_neg(), t),
        (UnOp::Abs, SV::Float(x, t)) => SV::Float(x.unary_abs(), t),
        (UnOp::Sqrt, SV::Float(x, t)) => SV::Float(x.sqrt_with_rounding_mode(&rne()), t),
        (UnOp::Floor, SV::Float(x, t)) => {
            SV::Float(x.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_negative()), t)
        }
        (UnOp::Ceil, SV::Float(x, t)) => {
            SV::Float(x.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_positive()), t)
        }
        (UnOp::Trunc, SV::Float(x, t)) => {
            SV::Float(x.round_to_integral_with_rounding_mode(&RoundingMode::round_towards_zero()), t)
        }
        (UnOp::ToBits, SV::Float(..)) => return unsupported("a float's bit pattern (NaN payloads are not modelled)"),
        _ => return unsupported("a unary operation on an operand that does not have it"),
    })
}

fn cast(to: &MTy, a: SV) -> R<SV> {
    Ok(match (a, to) {
        (SV::Int(x, from), MTy::Int(t)) => {
            let (wf, wt) = (from.bits(), t.bits());
            let v = if wt < wf {
                x.extract(wt - 1, 0)
            } else if wt > wf {
                if from.signed() { x.sign_ext(wt - wf) } else { x.zero_ext(wt - wf) }
            } else {
                x
            };
            SV::Int(v, *t)
        }
        (SV::Int(x, from), MTy::Float(t)) => SV::Float(float::from_int(&x, from.signed(), *t), *t),
        (SV::Float(x, _), MTy::Int(t)) => {
            let rtz = RoundingMode::round_towards_zero();
            let v = if t.signed() {
                x.to_sbv_with_rounding_mode(&rtz, t.bits())
            } else {
                x.to_ubv_with_rounding_mode(&rtz, t.bits())
            };
            SV::Int(v, *t)
        }
        (SV::Float(x, from), MTy::Float(t)) if from != *t => {
            SV::Float(x.to_fp_with_rounding_mode(&rne(), &float::fp_sort(*t)), *t)
        }
        (SV::Bool(b), MTy::Int(t)) => SV::Int(b.ite(&bv_const(1, t.bits()), &bv_const(0, t.bits())), *t),
        (SV::Tag(x), MTy::Int(t)) => cast(to, SV::Int(x, IntTy::U32)).map(|v| match v {
            SV::Int(v, _) => SV::Int(v, *t),
            other => other,
        })?,
        (other, _) => other,
    })
}
