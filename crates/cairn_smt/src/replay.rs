//! Witnesses made concrete: a MIR entry function that builds a witness's inputs, calls the
//! function under test, and prints every observable scalar on its own line (the return value,
//! then what each view or borrow argument holds afterwards). The same entry runs on the MIR
//! evaluator here and, compiled, natively in `cairn diff`; the printed lines read back into an
//! `Observed` by the function's types.

use std::sync::Arc;

use cairn_mir::eval::{self, Ending};
use cairn_mir::{
    Block, BlockId, Const, FloatTy, FnKind, Function, Inst, IntTy, LocalDecl, MTy, Operand, Place, PrintArg, Proj,
    Rvalue, Stream, Terminator, UnOp,
};

use crate::{Observed, WValue};

/// The symbol of the replay entry.
pub const ENTRY: &str = "cairn$replay";

struct Builder {
    locals: Vec<LocalDecl>,
    blocks: Vec<Block>,
    current: usize,
}

impl Builder {
    fn local(&mut self, ty: MTy) -> cairn_mir::Local {
        self.locals.push(LocalDecl { name: None, ty });
        cairn_mir::Local(self.locals.len() as u32 - 1)
    }

    fn push(&mut self, inst: Inst) {
        let block = &mut self.blocks[self.current];
        block.insts.push(inst);
        block.anchors.push(None);
    }

    fn new_block(&mut self) -> usize {
        self.blocks.push(Block {
            insts: Vec::new(),
            anchors: Vec::new(),
            term: Terminator::Unreachable,
            term_anchor: None,
        });
        self.blocks.len() - 1
    }

    /// An operand holding `value` of type `ty` (temporaries for aggregates).
    fn value(&mut self, value: &WValue, ty: &MTy) -> Result<Operand, String> {
        Ok(match (value, ty) {
            (WValue::Int(v), MTy::Int(t)) => Operand::Const(Const::Int(*v, *t)),
            (WValue::Bool(b), MTy::Bool) => Operand::Const(Const::Bool(*b)),
            (WValue::Float(bits), MTy::Float(t)) => Operand::Const(Const::Float(*bits, *t)),
            (WValue::Tag(t), MTy::Enum { variants, .. }) => Operand::Const(Const::Tag(*t, *variants)),
            (WValue::Record(items), MTy::Record { fields, .. }) if items.len() == fields.len() => {
                let mut operands = Vec::new();
                for (item, field) in items.iter().zip(fields.iter()) {
                    operands.push(self.value(item, field)?);
                }
                let temp = self.local(ty.clone());
                self.push(Inst::Assign(Place::local(temp), Rvalue::Record(ty.clone(), operands)));
                Operand::Copy(Place::local(temp))
            }
            (WValue::Sum(tag, payload), MTy::Sum { variants, .. }) => {
                let variant = variants.get(*tag as usize).ok_or("a variant past the sum's end")?;
                let payload = match (payload, variant) {
                    (Some(p), Some(t)) => Some(self.value(p, t)?),
                    (None, None) => None,
                    _ => return Err("a payload that does not match its variant".into()),
                };
                let temp = self.local(ty.clone());
                self.push(Inst::Assign(Place::local(temp), Rvalue::Variant(ty.clone(), *tag, payload)));
                Operand::Copy(Place::local(temp))
            }
            _ => return Err(format!("a witness value that does not fit {ty}")),
        })
    }

    /// Prints every scalar of the value at `place`.
    fn print(&mut self, place: Place, ty: &MTy) -> Result<(), String> {
        match ty {
            MTy::Void => {}
            MTy::Int(_) | MTy::Bool => self.print_operand(Operand::Copy(place), ty.clone()),
            MTy::Float(f) => {
                let bits = self.local(MTy::Int(if *f == FloatTy::F32 { IntTy::U32 } else { IntTy::U64 }));
                self.push(Inst::Assign(Place::local(bits), Rvalue::Unary(UnOp::ToBits, Operand::Copy(place))));
                let ty = self.locals[bits.0 as usize].ty.clone();
                self.print_operand(Operand::Copy(Place::local(bits)), ty);
            }
            MTy::Enum { .. } => {
                let tag = self.local(MTy::Int(IntTy::U32));
                self.push(Inst::Assign(Place::local(tag), Rvalue::Tag(place)));
                self.print_operand(Operand::Copy(Place::local(tag)), MTy::Int(IntTy::U32));
            }
            MTy::Record { fields, .. } => {
                for (i, field) in fields.iter().enumerate() {
                    self.print(place.project(Proj::Field(i as u32)), field)?;
                }
            }
            MTy::Sum { variants, .. } => {
                let tag = self.local(MTy::Int(IntTy::U32));
                self.push(Inst::Assign(Place::local(tag), Rvalue::Tag(place.clone())));
                self.print_operand(Operand::Copy(Place::local(tag)), MTy::Int(IntTy::U32));
                let join = self.new_block();
                let mut cases = Vec::new();
                for (j, variant) in variants.iter().enumerate() {
                    let Some(payload) = variant else { continue };
                    let case = self.new_block();
                    cases.push((j as u64, BlockId(case as u32)));
                    let from = self.current;
                    self.current = case;
                    self.print(place.project(Proj::Payload(j as u32)), payload)?;
                    self.blocks[self.current].term = Terminator::Goto(BlockId(join as u32));
                    self.current = from;
                }
                self.blocks[self.current].term =
                    Terminator::Switch(Operand::Copy(Place::local(tag)), cases, BlockId(join as u32));
                self.current = join;
            }
            other => return Err(format!("printing a value of {other}")),
        }
        Ok(())
    }

    fn print_operand(&mut self, value: Operand, ty: MTy) {
        self.push(Inst::Print {
            stream: Stream::Stdout,
            newline: true,
            args: vec![PrintArg { ty, char: false, value }],
        });
    }
}

/// The replay entry for `target` on `inputs` (one per parameter).
pub fn entry(target: &Function, inputs: &[WValue]) -> Result<Function, String> {
    let params = target.params as usize;
    if inputs.len() != params {
        return Err("a witness with a different number of inputs than parameters".into());
    }
    let mut b = Builder { locals: Vec::new(), blocks: Vec::new(), current: 0 };
    b.new_block();
    let mut args = Vec::new();
    // What to print after the call: the storage behind each view and borrow argument.
    let mut after: Vec<(Place, MTy)> = Vec::new();
    for (value, decl) in inputs.iter().zip(&target.locals[..params]) {
        match (&decl.ty, value) {
            (MTy::View(element), WValue::Array(items)) => {
                let array_ty = MTy::Array(element.clone(), items.len() as u64);
                let array = b.local(array_ty.clone());
                b.push(Inst::Assign(Place::local(array), Rvalue::Zeroed));
                for (i, item) in items.iter().enumerate() {
                    let operand = b.value(item, element)?;
                    let at =
                        Place::local(array).project(Proj::Index(Operand::Const(Const::Int(i as i128, IntTy::Usize))));
                    b.push(Inst::Assign(at, Rvalue::Use(operand)));
                }
                let view = b.local(decl.ty.clone());
                b.push(Inst::Assign(Place::local(view), Rvalue::View(Place::local(array), None)));
                args.push(Operand::Copy(Place::local(view)));
                after.push((Place::local(array), array_ty));
            }
            (MTy::Ptr(inner), value) => {
                let operand = b.value(value, inner)?;
                let cell = b.local((**inner).clone());
                b.push(Inst::Assign(Place::local(cell), Rvalue::Use(operand)));
                let pointer = b.local(decl.ty.clone());
                b.push(Inst::Assign(Place::local(pointer), Rvalue::Ref(Place::local(cell))));
                args.push(Operand::Copy(Place::local(pointer)));
                after.push((Place::local(cell), (**inner).clone()));
            }
            (ty, value) => args.push(b.value(value, ty)?),
        }
    }
    let result = if target.ret == MTy::Void { None } else { Some(b.local(target.ret.clone())) };
    b.push(Inst::Call { dst: result.map(Place::local), callee: target.symbol.clone(), args });
    if let Some(result) = result {
        b.print(Place::local(result), &target.ret)?;
    }
    for (place, ty) in after {
        match &ty {
            MTy::Array(element, n) => {
                for i in 0..*n {
                    b.print(
                        place.project(Proj::Index(Operand::Const(Const::Int(i128::from(i as u32), IntTy::Usize)))),
                        element,
                    )?;
                }
            }
            _ => b.print(place, &ty)?,
        }
    }
    b.blocks[b.current].term = Terminator::Return(Some(Operand::Const(Const::Int(0, IntTy::I32))));
    Ok(Function {
        symbol: ENTRY.into(),
        name: ENTRY.into(),
        kind: FnKind::Function,
        params: 0,
        ret: MTy::Int(IntTy::I32),
        locals: b.locals,
        blocks: b.blocks,
        extents: Vec::new(),
        device: false,
    })
}

/// Reads printed lines back into an observation of `target` on inputs shaped as `inputs`.
pub fn read_back(target: &Function, inputs: &[WValue], stdout: &str) -> Result<Observed, String> {
    let mut lines = stdout.lines();
    let ret = read_value(&target.ret, &mut lines)?;
    let mut leftovers = Vec::new();
    for (value, decl) in inputs.iter().zip(&target.locals[..target.params as usize]) {
        match (&decl.ty, value) {
            (MTy::View(element), WValue::Array(items)) => {
                let mut out = Vec::new();
                for _ in 0..items.len() {
                    out.push(read_value(element, &mut lines)?);
                }
                leftovers.push(Some(WValue::Array(out)));
            }
            (MTy::Ptr(inner), _) => leftovers.push(Some(read_value(inner, &mut lines)?)),
            _ => leftovers.push(None),
        }
    }
    if lines.next().is_some() {
        return Err("more output than the function's results".into());
    }
    Ok(Observed::Returned { value: ret, leftovers })
}

fn read_value<'a>(ty: &MTy, lines: &mut impl Iterator<Item = &'a str>) -> Result<WValue, String> {
    let mut line = || lines.next().ok_or_else(|| "less output than the function's results".to_string());
    Ok(match ty {
        MTy::Void => WValue::Void,
        MTy::Int(_) => WValue::Int(line()?.trim().parse().map_err(|_| "an integer line that is not one")?),
        MTy::Bool => WValue::Bool(line()?.trim() == "true"),
        MTy::Float(_) => WValue::Float(line()?.trim().parse().map_err(|_| "a float's bits that are not a number")?),
        MTy::Enum { .. } => WValue::Tag(line()?.trim().parse().map_err(|_| "a tag that is not a number")?),
        MTy::Record { fields, .. } => {
            let mut items = Vec::new();
            for field in fields.iter() {
                items.push(read_value(field, lines)?);
            }
            WValue::Record(items)
        }
        MTy::Sum { variants, .. } => {
            let tag: u32 = line()?.trim().parse().map_err(|_| "a tag that is not a number")?;
            let payload = match variants.get(tag as usize) {
                Some(Some(t)) => Some(Box::new(read_value(t, lines)?)),
                Some(None) => None,
                None => return Err("a tag past the sum's end".into()),
            };
            WValue::Sum(tag, payload)
        }
        other => return Err(format!("reading a value of {other}")),
    })
}

/// Runs the witness on the MIR evaluator (`functions` must hold the target and its callees).
pub fn evaluate(functions: &[Arc<Function>], target: &Function, inputs: &[WValue]) -> Observed {
    evaluate_with_fuel(functions, target, inputs, 50_000_000)
}

/// `evaluate` with a step budget (a run past it is `NotRun`).
pub fn evaluate_with_fuel(functions: &[Arc<Function>], target: &Function, inputs: &[WValue], fuel: u64) -> Observed {
    evaluate_counted(functions, target, inputs, fuel).0
}

/// [`evaluate_with_fuel`], and the evaluator's steps the run took.
pub fn evaluate_counted(
    functions: &[Arc<Function>],
    target: &Function,
    inputs: &[WValue],
    fuel: u64,
) -> (Observed, u64) {
    let entry = match entry(target, inputs) {
        Ok(entry) => entry,
        Err(why) => return (Observed::NotRun(why), 0),
    };
    let mut all: Vec<Arc<Function>> = functions.to_vec();
    all.push(Arc::new(entry));
    let outcome = eval::run(&all, ENTRY, fuel);
    let observed = match outcome.ending {
        Ending::Trap(_) => Observed::Trap,
        Ending::Exit(_) => match read_back(target, inputs, &String::from_utf8_lossy(&outcome.stdout)) {
            Ok(observed) => observed,
            Err(why) => Observed::NotRun(why),
        },
        Ending::OutOfFuel => Observed::NotRun("the evaluator's step budget ran out".into()),
        Ending::Unsupported(what) => Observed::NotRun(format!("the evaluator does not model {what}")),
    };
    (observed, outcome.steps)
}
