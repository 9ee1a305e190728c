//! The reference evaluator of MIR: runs a program's functions directly, with the language's
//! semantics, so compiled code can be compared with it (the differential test in `cairn_cli`).
//!
//! Memory is a heap of cells, one per local of every call; a place is a cell and a path of
//! indices into it (record fields, array elements, sum payloads), so views and borrows can point
//! into a caller's locals. Integers are held exactly (`i128`) and wrapped to their type by raw
//! operations; guards are evaluated from their `Check`, elided or not (an elided guard that fails
//! would be a compiler bug, and the evaluator reports it as a trap all the same). Output bytes are
//! collected per stream, formatted exactly as the runtime formats them.
//!
//! The heap is modelled too: `Buf[T](n)` (and a `Dyn`'s block) makes a fresh cell and counts it
//! live; `drop` releases what a place owns, led by its type (its drop glue, element by element),
//! and zeroes it. A
//! release of a cell that is not live — a double free, or a use of a moved-from owner the lowering
//! failed to zero — stops the run as `Unsupported` (a compiler bug), and every allocation still
//! live when `main` returns is counted in `Outcome::leaked`.

mod ops;

use std::collections::HashMap;
use std::sync::Arc;

pub use ops::format_float;
use ops::{binary, cast, fits_float, unary, wrap, zero};

use crate::{
    BinOp, Check, Const, FloatTy, Function, GuardKind, Inst, IntTy, MTy, Operand, Place, Proj, Rvalue, Stream,
    Terminator,
};

/// A value. Two values are equal when they are the same bits: floats compare by their bit
/// patterns (so `-0.0` differs from `0.0` and a NaN equals the same NaN), as every comparison of
/// results needs.
#[derive(Debug, Clone)]
pub enum Value {
    Int(i128, IntTy),
    F32(f32),
    F64(f64),
    Bool(bool),
    Record(Vec<Value>),
    Tag(u32),
    Sum(u32, Option<Box<Value>>),
    Array(Vec<Value>),
    /// Elements `start..start + len` of the array at `cell`/`path`.
    View {
        cell: usize,
        path: Vec<usize>,
        start: usize,
        len: usize,
    },
    /// A single borrow of the place `cell`/`path`.
    Ptr {
        cell: usize,
        path: Vec<usize>,
    },
    /// A function value: the symbol of its function (`None`: the zero value).
    Fn(Option<Arc<str>>),
    /// An owner of `len` elements held in the heap cell `cell` (`None`: the zero value, which
    /// owns nothing).
    Buf {
        cell: Option<usize>,
        len: usize,
    },
    Void,
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a, x), Value::Int(b, y)) => a == b && x == y,
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Record(a), Value::Record(b)) | (Value::Array(a), Value::Array(b)) => a == b,
            (Value::Tag(a), Value::Tag(b)) => a == b,
            (Value::Sum(a, x), Value::Sum(b, y)) => a == b && x == y,
            (
                Value::View { cell, path, start, len },
                Value::View { cell: other_cell, path: other_path, start: other_start, len: other_len },
            ) => cell == other_cell && path == other_path && start == other_start && len == other_len,
            (Value::Ptr { cell, path }, Value::Ptr { cell: other_cell, path: other_path }) => {
                cell == other_cell && path == other_path
            }
            (Value::Buf { cell, len }, Value::Buf { cell: other_cell, len: other_len }) => {
                cell == other_cell && len == other_len
            }
            (Value::Fn(a), Value::Fn(b)) => a == b,
            (Value::Void, Value::Void) => true,
            _ => false,
        }
    }
}

impl Eq for Value {}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// `main` returned this status.
    Exit(i32),
    /// A guard failed.
    Trap(GuardKind),
    /// The step budget ran out.
    OutOfFuel,
    /// The evaluator met something it does not model.
    Unsupported(String),
}

/// The result of running a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Heap allocations still live when the run ended normally (0 for a correct program; a trap
    /// or an abort ends the process, and what it held is not counted).
    pub leaked: usize,
    /// The instructions run (at most the fuel given).
    pub steps: u64,
}

/// Runs `entry` (a function of `functions` with no parameters) for at most `fuel` instructions.
pub fn run(functions: &[Arc<Function>], entry: &str, fuel: u64) -> Outcome {
    let by_symbol: HashMap<&str, &Function> = functions.iter().map(|f| (&*f.symbol, &**f)).collect();
    let mut machine = Machine {
        functions: by_symbol,
        cells: Vec::new(),
        live: std::collections::HashSet::new(),
        stdout: Vec::new(),
        stderr: Vec::new(),
        fuel,
    };
    let ending = match machine.functions.get(entry).copied() {
        None => Ending::Unsupported(format!("no function {entry}")),
        Some(function) => match machine.call(function, Vec::new(), 0) {
            Ok(Value::Int(v, _)) => Ending::Exit(v as i32),
            Ok(_) => Ending::Exit(0),
            Err(stop) => match stop {
                Stop::Trap(kind) => Ending::Trap(kind),
                Stop::Fuel => Ending::OutOfFuel,
                Stop::Unsupported(what) => Ending::Unsupported(what),
            },
        },
    };
    let leaked = if matches!(ending, Ending::Exit(_)) { machine.live.len() } else { 0 };
    Outcome { ending, stdout: machine.stdout, stderr: machine.stderr, leaked, steps: fuel - machine.fuel }
}

enum Stop {
    Trap(GuardKind),
    Fuel,
    Unsupported(String),
}

type E<T> = Result<T, Stop>;

fn unsupported<T>(what: impl Into<String>) -> E<T> {
    Err(Stop::Unsupported(what.into()))
}

struct Machine<'f> {
    functions: HashMap<&'f str, &'f Function>,
    cells: Vec<Value>,
    /// The heap cells allocated and not yet released.
    live: std::collections::HashSet<usize>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    fuel: u64,
}

/// The frame of one call: the cell of each local.
struct Frame<'f> {
    function: &'f Function,
    cells: Vec<usize>,
}

impl<'f> Machine<'f> {
    fn call(&mut self, function: &'f Function, args: Vec<Value>, depth: usize) -> E<Value> {
        if depth > 10_000 {
            return unsupported("recursion deeper than the evaluator follows");
        }
        if function.kind == crate::FnKind::Foreign {
            return unsupported(format!("a call of the foreign function {}", function.symbol));
        }
        let mut cells = Vec::with_capacity(function.locals.len());
        for (i, local) in function.locals.iter().enumerate() {
            let value = if i < function.params as usize { args[i].clone() } else { zero(&local.ty) };
            self.cells.push(value);
            cells.push(self.cells.len() - 1);
        }
        let frame = Frame { function, cells };
        let mut block = 0usize;
        loop {
            let current = &function.blocks[block];
            for inst in &current.insts {
                if self.fuel == 0 {
                    return Err(Stop::Fuel);
                }
                self.fuel -= 1;
                self.inst(&frame, inst, depth)?;
            }
            block = match &current.term {
                Terminator::Goto(b) => b.0 as usize,
                Terminator::Branch(c, t, e) => {
                    if self.operand(&frame, c)? == Value::Bool(true) {
                        t.0 as usize
                    } else {
                        e.0 as usize
                    }
                }
                Terminator::Switch(v, cases, default) => {
                    let v = match self.operand(&frame, v)? {
                        Value::Int(v, _) => v as u64,
                        Value::Tag(t) => u64::from(t),
                        other => return unsupported(format!("a switch on {other:?}")),
                    };
                    cases.iter().find(|(k, _)| *k == v).map_or(default.0 as usize, |(_, b)| b.0 as usize)
                }
                Terminator::Return(value) => {
                    return match value {
                        Some(v) => self.operand(&frame, v),
                        None => Ok(Value::Void),
                    };
                }
                Terminator::Unreachable => return unsupported("reached an unreachable terminator"),
            };
        }
    }

    /// The bytes a print or a `format` writes for its pieces (language §13.1).
    fn rendered(&mut self, frame: &Frame<'f>, args: &[crate::PrintArg]) -> E<Vec<u8>> {
        let mut text = Vec::new();
        for arg in args {
            let value = self.operand(frame, &arg.value)?;
            match value {
                Value::Int(v, _) if arg.char => text.push(v as u8),
                Value::Int(v, _) => text.extend_from_slice(v.to_string().as_bytes()),
                Value::Bool(b) => text.extend_from_slice(if b { b"true" } else { b"false" }),
                Value::F64(f) => text.extend_from_slice(format_float(f, false).as_bytes()),
                Value::F32(f) => text.extend_from_slice(format_float(f64::from(f), true).as_bytes()),
                Value::View { .. } => {
                    for byte in self.view_elements(&value)? {
                        if let Value::Int(b, _) = byte {
                            text.push(b as u8);
                        }
                    }
                }
                other => return unsupported(format!("printing {other:?}")),
            }
        }
        Ok(text)
    }

    fn inst(&mut self, frame: &Frame<'f>, inst: &Inst, depth: usize) -> E<()> {
        match inst {
            Inst::Assign(place, value) => {
                let Some(ty) = frame.function.place_ty(place) else {
                    return unsupported("a place whose type does not match its path");
                };
                let value = self.rvalue(frame, value, &ty)?;
                let (cell, path) = self.place(frame, place)?;
                *self.at_mut(cell, &path)? = value;
                Ok(())
            }
            Inst::Guard(guard) => {
                for fact in &guard.facts {
                    if !self.fact_holds(frame, fact)? {
                        return unsupported(format!(
                            "the fact `{fact}` a discharged {} guard rests on does not hold (a compiler bug)",
                            guard.kind.name()
                        ));
                    }
                }
                // A speculated arm's guard off its path checks values of no use: it holds there.
                let off_path = match &guard.only_if {
                    Some((c, v)) => self.operand(frame, c)? != Value::Bool(*v),
                    None => false,
                };
                if off_path || self.holds(frame, &guard.check)? {
                    Ok(())
                } else {
                    if let Check::Assert(_, why) | Check::AssertEq(_, _, _, why) = &guard.check {
                        let mut line = b"assertion failed".to_vec();
                        if let Some(why) = why {
                            line.extend_from_slice(b": ");
                            line.extend_from_slice(why);
                        }
                        line.push(b'\n');
                        self.stderr.extend_from_slice(&line);
                    }
                    Err(Stop::Trap(guard.kind))
                }
            }
            Inst::Call { dst, callee, args } => self.call_into(frame, callee, args, dst.as_ref(), depth),
            Inst::Drop(place) => {
                let (cell, path) = self.place(frame, place)?;
                let value = self.at(cell, &path)?.clone();
                let Some(ty) = frame.function.place_ty(place) else {
                    return unsupported("a place whose type does not match its path");
                };
                self.release(&value, &ty)?;
                *self.at_mut(cell, &path)? = zero(&ty);
                Ok(())
            }
            Inst::Assume(fact) => match self.operand(frame, fact)? {
                Value::Bool(true) => Ok(()),
                _ => Err(Stop::Unsupported("an assumed fact does not hold (a compiler bug)".into())),
            },
            // The lanes run one after another: a result never depends on how they are split.
            Inst::Transfer { dst, src, .. } => {
                // Device memory is host memory here, as under emulation (language §41).
                if let Value::View { len: 0, .. } = self.operand(frame, dst)? {
                    return Ok(());
                }
                let elements = match self.operand(frame, src)? {
                    view @ Value::View { .. } => self.view_elements(&view)?,
                    other => return unsupported(format!("a transfer from {other:?}")),
                };
                let Value::View { cell, path, start, len } = self.operand(frame, dst)? else {
                    return unsupported("a transfer into something other than a view");
                };
                if elements.len() != len {
                    return unsupported("a transfer between views of different lengths past their guard");
                }
                match self.at_mut(cell, &path)? {
                    Value::Array(items) if start + len <= items.len() => {
                        items[start..start + len].clone_from_slice(&elements);
                        Ok(())
                    }
                    other => unsupported(format!("a transfer into {other:?}")),
                }
            }
            // The in-order fold of emulation (language §41): the lane function over every index.
            Inst::DeviceReduce { lane, env, count, dest, .. } => {
                let args = [env.clone(), Operand::Const(Const::Int(0, IntTy::Usize)), count.clone()];
                self.call_into(frame, lane, &args, Some(dest), depth)
            }
            Inst::Parallel { lane, env, count, .. } => {
                let args = [env.clone(), Operand::Const(Const::Int(0, IntTy::Usize)), count.clone()];
                self.call_into(frame, lane, &args, None, depth)
            }
            Inst::CallIndirect { dst, callee, args } => {
                let Value::Fn(Some(symbol)) = self.operand(frame, callee)? else {
                    return Err(Stop::Unsupported("a call through the zero function value past its guard".into()));
                };
                self.call_into(frame, &symbol, args, dst.as_ref(), depth)
            }
            Inst::Print { stream, newline, args } => {
                let mut text = self.rendered(frame, args)?;
                if *newline {
                    text.push(b'\n');
                }
                match stream {
                    Stream::Stdout => self.stdout.extend_from_slice(&text),
                    Stream::Stderr => self.stderr.extend_from_slice(&text),
                }
                Ok(())
            }
            Inst::Format { dst, args } => {
                // The rendered text in a fresh cell, viewed whole (as a string literal is).
                let text = self.rendered(frame, args)?;
                let len = text.len();
                self.cells.push(Value::Array(text.into_iter().map(|b| Value::Int(i128::from(b), IntTy::U8)).collect()));
                let view = Value::View { cell: self.cells.len() - 1, path: Vec::new(), start: 0, len };
                let (cell, path) = self.place(frame, dst)?;
                *self.at_mut(cell, &path)? = view;
                Ok(())
            }
        }
    }

    // ----- places ----------------------------------------------------------------------------

    /// The cell and path a place names.
    fn place(&mut self, frame: &Frame<'f>, place: &Place) -> E<(usize, Vec<usize>)> {
        let mut cell = frame.cells[place.local.0 as usize];
        let mut path: Vec<usize> = Vec::new();
        for proj in &place.proj {
            match proj {
                Proj::Field(i) | Proj::Payload(i) => path.push(*i as usize),
                Proj::Index(index) => {
                    let i = match self.operand(frame, index)? {
                        Value::Int(v, _) => v as usize,
                        other => return unsupported(format!("an index {other:?}")),
                    };
                    match self.at(cell, &path)?.clone() {
                        Value::View { cell: c, path: p, start, len } => {
                            if i >= len {
                                return unsupported("an element past a view's end");
                            }
                            cell = c;
                            path = p;
                            path.push(start + i);
                        }
                        Value::Array(_) => path.push(i),
                        Value::Buf { cell: Some(c), len } => {
                            if i >= len {
                                return unsupported("an element past a Buf's end");
                            }
                            if !self.live.contains(&c) {
                                return unsupported("an element of a released Buf");
                            }
                            cell = c;
                            path = vec![i];
                        }
                        other => return unsupported(format!("indexing {other:?}")),
                    }
                }
                Proj::Deref => match self.at(cell, &path)?.clone() {
                    Value::Ptr { cell: c, path: p } => {
                        cell = c;
                        path = p;
                    }
                    other => return unsupported(format!("a deref of {other:?}")),
                },
            }
        }
        Ok((cell, path))
    }

    fn at(&self, cell: usize, path: &[usize]) -> E<&Value> {
        let mut value = &self.cells[cell];
        for &i in path {
            value = match value {
                Value::Record(fields) | Value::Array(fields) => {
                    fields.get(i).ok_or(Stop::Unsupported("a path".into()))?
                }
                Value::Sum(_, Some(payload)) => payload,
                other => return unsupported(format!("a path into {other:?}")),
            };
        }
        Ok(value)
    }

    fn at_mut(&mut self, cell: usize, path: &[usize]) -> E<&mut Value> {
        let mut value = &mut self.cells[cell];
        for &i in path {
            value = match value {
                Value::Record(fields) | Value::Array(fields) => {
                    fields.get_mut(i).ok_or(Stop::Unsupported("a path".into()))?
                }
                Value::Sum(_, Some(payload)) => payload,
                other => return unsupported(format!("a path into {other:?}")),
            };
        }
        Ok(value)
    }

    /// Releases every heap cell `value` (of type `ty`) owns, innermost first.
    fn release(&mut self, value: &Value, ty: &MTy) -> E<()> {
        match (ty.resolved(), value) {
            (MTy::Buf(elem), Value::Buf { cell: Some(cell), .. }) => {
                if !self.live.remove(cell) {
                    return unsupported("a release of a Buf that was released before (a double free)");
                }
                let held = std::mem::replace(&mut self.cells[*cell], Value::Void);
                if let Value::Array(items) = &held {
                    for item in items {
                        self.release(item, elem)?;
                    }
                }
                Ok(())
            }
            // A Dyn owns the block its first word points into, and its last word is the drop entry
            // of what the block holds; the zero value's words are all empty.
            (MTy::DynBox(_), Value::Record(words)) => {
                let held = words.iter().skip(1).any(|w| matches!(w, Value::Fn(Some(_))));
                let Some(object @ Value::Ptr { cell, .. }) = words.first().cloned() else { return Ok(()) };
                if !self.live.contains(&cell) {
                    if held {
                        return unsupported("a release of a Dyn that was released before (a double free)");
                    }
                    return Ok(());
                }
                if let Some(Value::Fn(Some(entry))) = words.last() {
                    let function =
                        *self.functions.get(&**entry).ok_or_else(|| Stop::Unsupported(format!("no {entry}")))?;
                    self.call(function, vec![object], 0)?;
                }
                self.live.remove(&cell);
                self.cells[cell] = Value::Void;
                Ok(())
            }
            (MTy::Record { fields, .. }, Value::Record(items)) => {
                fields.iter().zip(items).try_for_each(|(t, v)| self.release(v, t))
            }
            (MTy::Array(elem, _), Value::Array(items)) => items.iter().try_for_each(|v| self.release(v, elem)),
            (MTy::Sum { variants, .. }, Value::Sum(v, Some(payload))) => match variants.get(*v as usize) {
                Some(Some(t)) => self.release(payload, t),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    fn view_elements(&self, view: &Value) -> E<Vec<Value>> {
        match view {
            Value::View { cell, path, start, len } => match self.at(*cell, path)? {
                Value::Array(items) => Ok(items[*start..*start + *len].to_vec()),
                other => unsupported(format!("a view of {other:?}")),
            },
            other => unsupported(format!("elements of {other:?}")),
        }
    }

    // ----- values ----------------------------------------------------------------------------

    /// Calls the function `symbol` with `args` and stores its result at `dst`.
    fn call_into(
        &mut self,
        frame: &Frame<'f>,
        symbol: &str,
        args: &[Operand],
        dst: Option<&Place>,
        depth: usize,
    ) -> E<()> {
        let function = *self.functions.get(symbol).ok_or_else(|| Stop::Unsupported(format!("no {symbol}")))?;
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.operand(frame, arg)?);
        }
        let result = self.call(function, values, depth + 1)?;
        if let Some(dst) = dst {
            let (cell, path) = self.place(frame, dst)?;
            *self.at_mut(cell, &path)? = result;
        }
        Ok(())
    }

    fn operand(&mut self, frame: &Frame<'f>, operand: &Operand) -> E<Value> {
        match operand {
            Operand::Copy(place) => {
                let (cell, path) = self.place(frame, place)?;
                Ok(self.at(cell, &path)?.clone())
            }
            Operand::Const(c) => Ok(match c {
                Const::Int(v, t) => Value::Int(*v, *t),
                Const::Float(bits, FloatTy::F32) => Value::F32(f32::from_bits(*bits as u32)),
                Const::Float(bits, FloatTy::F64) => Value::F64(f64::from_bits(*bits)),
                Const::Bool(b) => Value::Bool(*b),
                Const::Fn(symbol) => Value::Fn(Some(symbol.clone())),
                Const::Tag(t, _) => Value::Tag(*t),
                Const::Str(bytes) => {
                    // A string literal: bytes in a fresh cell, viewed whole.
                    self.cells
                        .push(Value::Array(bytes.iter().map(|b| Value::Int(i128::from(*b), IntTy::U8)).collect()));
                    Value::View { cell: self.cells.len() - 1, path: Vec::new(), start: 0, len: bytes.len() }
                }
            }),
        }
    }

    fn rvalue(&mut self, frame: &Frame<'f>, value: &Rvalue, ty: &MTy) -> E<Value> {
        match value {
            Rvalue::Use(o) => self.operand(frame, o),
            Rvalue::Binary(op, a, b) => {
                let a = self.operand(frame, a)?;
                let b = self.operand(frame, b)?;
                binary(*op, a, b)
            }
            Rvalue::Unary(op, a) => {
                let a = self.operand(frame, a)?;
                unary(*op, a)
            }
            Rvalue::Cast(to, a) => {
                let a = self.operand(frame, a)?;
                cast(to, a)
            }
            Rvalue::Record(_, fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for f in fields {
                    values.push(self.operand(frame, f)?);
                }
                Ok(Value::Record(values))
            }
            Rvalue::Variant(_, index, payload) => {
                let payload = match payload {
                    Some(p) => Some(Box::new(self.operand(frame, p)?)),
                    None => None,
                };
                Ok(Value::Sum(*index, payload))
            }
            Rvalue::Tag(place) => {
                let (cell, path) = self.place(frame, place)?;
                match self.at(cell, &path)? {
                    Value::Tag(t) | Value::Sum(t, _) => Ok(Value::Int(i128::from(*t), IntTy::U32)),
                    other => unsupported(format!("the tag of {other:?}")),
                }
            }
            Rvalue::Len(place) => {
                let (cell, path) = self.place(frame, place)?;
                match self.at(cell, &path)? {
                    Value::View { len, .. } => Ok(Value::Int(*len as i128, IntTy::Usize)),
                    Value::Array(items) => Ok(Value::Int(items.len() as i128, IntTy::Usize)),
                    Value::Buf { len, .. } => Ok(Value::Int(*len as i128, IntTy::Usize)),
                    other => unsupported(format!("the length of {other:?}")),
                }
            }
            Rvalue::View(place, bounds) => {
                let bounds = match bounds {
                    Some((lo, hi)) => match (self.operand(frame, lo)?, self.operand(frame, hi)?) {
                        (Value::Int(lo, _), Value::Int(hi, _)) => Some((lo as usize, hi as usize)),
                        _ => return unsupported("part bounds"),
                    },
                    None => None,
                };
                let (cell, path) = self.place(frame, place)?;
                let (cell, path, start, len) = match self.at(cell, &path)?.clone() {
                    Value::View { cell, path, start, len } => (cell, path, start, len),
                    Value::Array(items) => (cell, path, 0, items.len()),
                    Value::Buf { cell: Some(c), len } => (c, Vec::new(), 0, len),
                    // The zero value lends an empty view (its cell is never read).
                    Value::Buf { cell: None, .. } => (cell, path, 0, 0),
                    other => return unsupported(format!("a view of {other:?}")),
                };
                Ok(match bounds {
                    Some((lo, hi)) => Value::View { cell, path, start: start + lo, len: hi - lo },
                    None => Value::View { cell, path, start, len },
                })
            }
            Rvalue::Ref(place) => {
                let (cell, path) = self.place(frame, place)?;
                Ok(Value::Ptr { cell, path })
            }
            Rvalue::Zeroed => Ok(zero(ty)),
            Rvalue::Alloc(elem, count, _) => {
                let n = match self.operand(frame, count)? {
                    Value::Int(n, _) => n,
                    other => return unsupported(format!("a count {other:?}")),
                };
                if n > 1 << 24 {
                    return unsupported("an allocation larger than the evaluator models");
                }
                if n == 0 {
                    return Ok(Value::Buf { cell: None, len: 0 });
                }
                self.cells.push(Value::Array((0..n).map(|_| zero(elem)).collect()));
                let cell = self.cells.len() - 1;
                self.live.insert(cell);
                Ok(Value::Buf { cell: Some(cell), len: n as usize })
            }
            Rvalue::Select(c, a, b) => {
                let c = self.operand(frame, c)?;
                if c == Value::Bool(true) { self.operand(frame, a) } else { self.operand(frame, b) }
            }
            Rvalue::AtomicRmw(op, place, v) => {
                let Value::Int(v, _) = self.operand(frame, v)? else {
                    return unsupported("an atomic of a non-integer");
                };
                let (cell, path) = self.place(frame, place)?;
                let slot = self.at_mut(cell, &path)?;
                let Value::Int(old, ty) = *slot else { return unsupported("an atomic element that is no integer") };
                let new = match op {
                    crate::AtomicOp::AddWrap => wrap(old + v, ty),
                    crate::AtomicOp::Min => old.min(v),
                    crate::AtomicOp::Max => old.max(v),
                    crate::AtomicOp::And => old & v,
                    crate::AtomicOp::Or => old | v,
                    crate::AtomicOp::Xor => wrap(old ^ v, ty),
                };
                *slot = Value::Int(new, ty);
                Ok(Value::Int(old, ty))
            }
            Rvalue::AtomicCas(place, expected, desired) => {
                let expected = self.operand(frame, expected)?;
                let desired = self.operand(frame, desired)?;
                let (cell, path) = self.place(frame, place)?;
                let slot = self.at_mut(cell, &path)?;
                let old = slot.clone();
                if old == expected {
                    *slot = desired;
                }
                Ok(old)
            }
        }
    }

    /// Whether a fact of a discharged guard holds here (`range::Fact`).
    fn fact_holds(&mut self, frame: &Frame<'f>, fact: &crate::range::Fact) -> E<bool> {
        let mut exact = |o: &Operand| -> E<i128> {
            match self.operand(frame, o)? {
                Value::Int(v, _) => Ok(v),
                Value::Bool(b) => Ok(i128::from(b)),
                other => unsupported(format!("a range fact about {other:?}")),
            }
        };
        Ok(match fact {
            crate::range::Fact::Within(o, lo, hi) => {
                let v = exact(o)?;
                *lo <= v && v <= *hi
            }
            crate::range::Fact::AtMost(a, b, k) => exact(a)? <= exact(b)? + k,
        })
    }

    fn holds(&mut self, frame: &Frame<'f>, check: &Check) -> E<bool> {
        let int = |v: Value| match v {
            Value::Int(v, _) => Ok(v),
            other => unsupported(format!("an integer check on {other:?}")),
        };
        Ok(match check {
            Check::Callable(f) => matches!(self.operand(frame, f)?, Value::Fn(Some(_))),
            // The evaluator's heap never runs out (it refuses what it cannot model).
            Check::Allocated(_) => true,
            Check::NoOverflow(op, ty, a, b) => {
                let (a, b) = (int(self.operand(frame, a)?)?, int(self.operand(frame, b)?)?);
                let exact = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    _ => a.checked_mul(b),
                };
                let (lo, hi) = ty.range();
                exact.is_some_and(|v| lo <= v && v <= hi)
            }
            Check::NegNoOverflow(ty, a) => {
                let a = int(self.operand(frame, a)?)?;
                let (lo, hi) = ty.range();
                lo <= -a && -a <= hi
            }
            Check::Division(ty, a, b) => {
                let (a, b) = (int(self.operand(frame, a)?)?, int(self.operand(frame, b)?)?);
                b != 0 && !(ty.signed() && a == ty.range().0 && b == -1)
            }
            Check::Fits(_, to, a) => {
                let MTy::Int(to) = to else { return Ok(true) };
                let (lo, hi) = to.range();
                match self.operand(frame, a)? {
                    Value::Int(v, _) => lo <= v && v <= hi,
                    Value::F32(f) => fits_float(f64::from(f), lo, hi),
                    Value::F64(f) => fits_float(f, lo, hi),
                    _ => true,
                }
            }
            Check::ShiftCount(ty, k) => int(self.operand(frame, k)?)? < i128::from(ty.bits()),
            Check::InBounds(i, n) => int(self.operand(frame, i)?)? < int(self.operand(frame, n)?)?,
            Check::PartInBounds(lo, hi, n) => {
                let (lo, hi, n) =
                    (int(self.operand(frame, lo)?)?, int(self.operand(frame, hi)?)?, int(self.operand(frame, n)?)?);
                lo <= hi && hi <= n
            }
            Check::PartLength(lo, hi, n) => {
                let (lo, hi, n) =
                    (int(self.operand(frame, lo)?)?, int(self.operand(frame, hi)?)?, int(self.operand(frame, n)?)?);
                hi - lo == n
            }
            Check::Unreachable => false,
            Check::Assert(c, _) => self.operand(frame, c)? == Value::Bool(true),
            Check::AssertEq(_, a, b, _) => {
                let (a, b) = (self.operand(frame, a)?, self.operand(frame, b)?);
                match (a, b) {
                    (Value::F64(x), Value::F64(y)) => x == y,
                    (Value::F32(x), Value::F32(y)) => x == y,
                    (x, y) => x == y,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Value;

    #[test]
    fn values_are_equal_when_their_bits_are() {
        assert_ne!(Value::F64(0.0), Value::F64(-0.0));
        assert_eq!(Value::F64(f64::NAN), Value::F64(f64::NAN));
        assert_ne!(Value::F32(0.0), Value::F32(-0.0));
        assert_eq!(Value::Record(vec![Value::F32(f32::NAN)]), Value::Record(vec![Value::F32(f32::NAN)]));
        assert_ne!(Value::Sum(0, Some(Box::new(Value::F64(-0.0)))), Value::Sum(0, Some(Box::new(Value::F64(0.0)))));
    }
}
