//! Equivalence of two CAIRN functions with Z3 (protocol §6.2 `smt-equivalent`).
//!
//! Both versions run symbolically (`exec`) on the same inputs — bit-vectors of the exact widths,
//! IEEE floats, records, enums, sums, and views as Z3 arrays with a symbolic length — and their
//! observations are compared: the return value, what every view or borrow argument holds
//! afterwards, and whether the run traps. A trap is an outcome of its own. The solver is asked,
//! each query under a timeout, whether some allowed input makes the two differ; `sat` gives a
//! witness that is replayed on the MIR evaluator before it is believed, `unknown` and timeouts
//! are never counted as equivalence, and a loop that can run past the unroll limit, a float
//! observation that can be NaN, or anything outside the fragment makes the answer `unknown`.
//!
//! Every query's SMT-LIB text is kept (`Query`), so `--obligations` can write it and `z3` can
//! re-check it. Z3 runs on the calling thread's context; a comparison is self-contained.

mod exec;
mod float;
mod probe;
pub mod replay;
mod value;

use std::sync::Arc;

use cairn_mir::{Function, IntTy, MTy};

use sha2::{Digest, Sha256};
use z3::ast::{Array, Ast, BV, Bool};
use z3::{Model, Params, SatResult, Solver};

use exec::{Exec, Limits, Run, State};
use value::{SV, has_nan, same, sort_of, usize_const};

/// How hard to try.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Per solver query, in milliseconds.
    pub timeout_ms: u32,
    /// Loop iterations followed on one path before the path is cut (`unknown`).
    pub unroll: u32,
    /// Blocks executed over all paths of one version before giving up.
    pub steps: u64,
    /// The longest view a witness may hold (it is replayed, so it must be built).
    pub max_view: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options { timeout_ms: 3000, unroll: 16, steps: 200_000, max_view: 256 }
    }
}

/// A concrete value of a witness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WValue {
    Void,
    Int(i128),
    Bool(bool),
    /// A float by its IEEE bits.
    Float(u64),
    Tag(u32),
    Record(Vec<WValue>),
    Sum(u32, Option<Box<WValue>>),
    Array(Vec<WValue>),
}

/// What one version did on a witness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// A guard failed.
    Trap,
    /// It returned `value`; `leftovers[i]` is what view or borrow parameter `i` holds after
    /// the call (`None` for a parameter passed by value).
    Returned { value: WValue, leftovers: Vec<Option<WValue>> },
    /// The replay could not run (why).
    NotRun(String),
}

/// An input on which the versions differ, and what each did on it (from the replay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// Parameter name and value, in order.
    pub inputs: Vec<(String, WValue)>,
    pub before: Observed,
    pub after: Observed,
    /// What found it: `"probe"` (concrete inputs tried on the evaluator) or `"solver"` (a Z3
    /// model, then replayed).
    pub found_by: &'static str,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No allowed input makes them differ (within the fragment).
    Equivalent,
    /// A witness, replayed.
    Differs(Witness),
    /// The reference traps on an allowed input (`before` is the reference's trap).
    ReferenceTraps(Witness),
    /// No input satisfies the assumption.
    EmptyDomain,
    /// Nothing decided, and why.
    Unknown(String),
}

/// One solver query, as SMT-LIB, and what the solver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub purpose: &'static str,
    pub smt2: String,
    /// `sat`, `unsat` or `unknown`.
    pub answer: String,
}

impl Query {
    pub fn sha256(&self) -> String {
        Sha256::digest(self.smt2.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A comparison's verdict and every query it asked.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub verdict: Verdict,
    pub queries: Vec<Query>,
}

/// One function of one program: the program's MIR (with every callee) and the symbol.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub functions: &'a [Arc<Function>],
    pub symbol: &'a str,
}

impl<'a> Side<'a> {
    fn function(&self) -> Option<&'a Function> {
        self.functions.iter().find(|f| &*f.symbol == self.symbol).map(|f| &**f)
    }
}

/// What to compare.
pub struct Request<'a> {
    /// The original, or the reference.
    pub old: Side<'a>,
    /// The candidate.
    pub new: Side<'a>,
    /// A precondition: a function with the same parameters returning `bool`; inputs where it
    /// traps or returns false are outside the domain.
    pub assume: Option<Side<'a>>,
    /// Refuse a reference (`old`) that traps on an allowed input.
    pub reference_must_not_trap: bool,
    pub options: Options,
}

/// The Z3 library's version.
pub fn z3_version() -> String {
    z3::full_version().to_string()
}

/// How an input reads back from a model: the names and sorts of its constants (not terms, so a
/// worker thread with its own Z3 context can rebuild them).
#[derive(Clone)]
enum Shape {
    Int(String, IntTy),
    Bool(String),
    /// A float's bit pattern, and its width.
    Float(String, u32),
    Tag(String),
    Record(Vec<Shape>),
    Sum(String, Vec<Option<Shape>>),
    View {
        array: String,
        len: String,
        element: MTy,
    },
    Ptr(Box<Shape>),
}

struct Inputs {
    args: Vec<SV>,
    shapes: Vec<Shape>,
    objs: Vec<SV>,
    /// Constraints every input satisfies (tags within their variants).
    domain: Vec<Bool>,
    /// Per parameter: the object whose contents are observed after the call.
    observed: Vec<Option<usize>>,
}

fn make_input(name: &str, ty: &MTy, inputs: &mut Inputs) -> Result<(SV, Shape), String> {
    Ok(match ty {
        MTy::Bool => (SV::Bool(Bool::new_const(name)), Shape::Bool(name.into())),
        MTy::Int(i) => (SV::Int(BV::new_const(name, i.bits()), *i), Shape::Int(name.into(), *i)),
        MTy::Float(f) => {
            let width = float::bits_of(*f);
            let bits = BV::new_const(name, width);
            (SV::Float(float::from_bits(&bits, *f), *f), Shape::Float(name.into(), width))
        }
        MTy::Enum { variants, .. } => {
            let b = BV::new_const(name, 32);
            inputs.domain.push(b.bvult(BV::from_u64(u64::from(*variants), 32)));
            (SV::Tag(b), Shape::Tag(name.into()))
        }
        MTy::Record { fields, .. } => {
            let mut values = Vec::new();
            let mut shapes = Vec::new();
            for (i, field) in fields.iter().enumerate() {
                let (v, s) = make_input(&format!("{name}.{i}"), field, inputs)?;
                values.push(v);
                shapes.push(s);
            }
            (SV::Record(values), Shape::Record(shapes))
        }
        MTy::Sum { variants, .. } => {
            let tag_name = format!("{name}.tag");
            let tag = BV::new_const(tag_name.as_str(), 32);
            inputs.domain.push(tag.bvult(BV::from_u64(variants.len() as u64, 32)));
            let mut values = Vec::new();
            let mut shapes = Vec::new();
            for (j, variant) in variants.iter().enumerate() {
                match variant {
                    Some(t) => {
                        let (v, s) = make_input(&format!("{name}.{j}"), t, inputs)?;
                        values.push(Some(v));
                        shapes.push(Some(s));
                    }
                    None => {
                        values.push(None);
                        shapes.push(None);
                    }
                }
            }
            (SV::Sum(tag, values), Shape::Sum(tag_name, shapes))
        }
        MTy::View(element) => {
            if !value::scalar(element) {
                return Err(format!("a view of {element} (only views of scalars are modelled)"));
            }
            let sort = sort_of(element).map_err(|u| u.0)?;
            let (array_name, len_name) = (format!("{name}.data"), format!("{name}.len"));
            let array = Array::new_const(array_name.as_str(), &z3::Sort::bitvector(64), &sort);
            let len = BV::new_const(len_name.as_str(), 64);
            inputs.objs.push(SV::Smt(array, (**element).clone()));
            let obj = inputs.objs.len() - 1;
            (
                SV::View { obj, path: Vec::new(), start: usize_const(0), len },
                Shape::View { array: array_name, len: len_name, element: (**element).clone() },
            )
        }
        MTy::Ptr(inner) => {
            let (v, s) = make_input(&format!("{name}.target"), inner, inputs)?;
            inputs.objs.push(v);
            (SV::Ptr { obj: inputs.objs.len() - 1, path: Vec::new() }, Shape::Ptr(Box::new(s)))
        }
        other => return Err(format!("a parameter of {other}")),
    })
}

fn signed_value(raw: u64, t: IntTy) -> i128 {
    let w = t.bits();
    if t.signed() {
        let shift = 128 - w;
        ((raw as i128) << shift) >> shift
    } else {
        raw as i128
    }
}

/// An input's value in a model, its constants rebuilt by name on the model's context.
fn read_model(model: &Model, shape: &Shape) -> WValue {
    let bits = |b: &BV| model.eval(b, true).and_then(|v| v.as_u64()).unwrap_or(0);
    match shape {
        Shape::Int(name, t) => WValue::Int(signed_value(bits(&BV::new_const(name.as_str(), t.bits())), *t)),
        Shape::Bool(name) => {
            WValue::Bool(model.eval(&Bool::new_const(name.as_str()), true).and_then(|v| v.as_bool()).unwrap_or(false))
        }
        Shape::Float(name, width) => WValue::Float(bits(&BV::new_const(name.as_str(), *width))),
        Shape::Tag(name) => WValue::Tag(bits(&BV::new_const(name.as_str(), 32)) as u32),
        Shape::Record(items) => WValue::Record(items.iter().map(|s| read_model(model, s)).collect()),
        Shape::Sum(tag, payloads) => {
            let t = bits(&BV::new_const(tag.as_str(), 32)) as u32;
            let payload = payloads.get(t as usize).and_then(|p| p.as_ref()).map(|s| Box::new(read_model(model, s)));
            WValue::Sum(t, payload)
        }
        Shape::View { array, len, element } => {
            let Ok(sort) = sort_of(element) else { return WValue::Array(Vec::new()) };
            let array = Array::new_const(array.as_str(), &z3::Sort::bitvector(64), &sort);
            let n = bits(&BV::new_const(len.as_str(), 64));
            let items = (0..n)
                .map(|i| {
                    let cell = array.select(&usize_const(i));
                    match element {
                        MTy::Bool => WValue::Bool(
                            cell.as_bool()
                                .and_then(|b| model.eval(&b, true))
                                .and_then(|v| v.as_bool())
                                .unwrap_or(false),
                        ),
                        MTy::Float(_) => WValue::Float(cell.as_float().map(|x| bits(&x.to_ieee_bv())).unwrap_or(0)),
                        MTy::Enum { .. } => WValue::Tag(cell.as_bv().map(|b| bits(&b)).unwrap_or(0) as u32),
                        MTy::Int(t) => WValue::Int(signed_value(cell.as_bv().map(|b| bits(&b)).unwrap_or(0), *t)),
                        _ => WValue::Void,
                    }
                })
                .collect();
            WValue::Array(items)
        }
        Shape::Ptr(inner) => read_model(model, inner),
    }
}

/// One version's observations, per returning path.
struct Observation {
    trap: Bool,
    cut: Bool,
    paths: Vec<(Bool, SV, Vec<Option<SV>>)>,
}

fn observe(run: Run, inputs: &Inputs) -> Observation {
    let trap = Bool::or(&run.traps);
    let cut = Bool::or(&run.cuts);
    let paths = run
        .returns
        .into_iter()
        .map(|(state, value)| {
            let leftovers = inputs.observed.iter().map(|o| o.map(|obj| state.objs[obj].clone())).collect();
            (state.pc, value, leftovers)
        })
        .collect();
    Observation { trap, cut, paths }
}

fn returns(o: &Observation) -> Bool {
    Bool::or(&o.paths.iter().map(|p| p.0.clone()).collect::<Vec<_>>())
}

/// `a` and `b` differ somewhere (an array differs at a fresh index within `len`).
fn leftover_differs(a: &SV, b: &SV, len: Option<&BV>, name: &str) -> Result<Bool, String> {
    match (a, b, len) {
        (SV::Smt(x, _), SV::Smt(y, _), Some(len)) => {
            let k = BV::fresh_const(&format!("{name}.at"), 64);
            let (u, v) = (x.select(&k), y.select(&k));
            Ok(Bool::and(&[k.bvult(len), u.eq(&v).not()]))
        }
        _ => same(a, b).map(|s| s.not()).map_err(|u| u.0),
    }
}

fn leftover_nan(a: &SV, len: Option<&BV>, name: &str) -> Bool {
    match (a, len) {
        (SV::Smt(x, MTy::Float(_)), Some(len)) => {
            let k = BV::fresh_const(&format!("{name}.nan_at"), 64);
            let cell = x.select(&k).as_float().map(|f| f.is_nan()).unwrap_or_else(|| Bool::from_bool(false));
            Bool::and(&[k.bvult(len), cell])
        }
        _ => has_nan(a),
    }
}

struct Asker {
    options: Options,
    queries: Vec<Query>,
}

impl Asker {
    /// Asks whether `facts` can all hold; with `shapes`, a `sat` answer comes with the inputs'
    /// values. The query runs on a worker thread with its own Z3 context, from its SMT-LIB text,
    /// under Z3's timeout and a hard deadline of ours: a query past the deadline is `unknown`
    /// even if Z3 has not stopped (its timer is not checked in every phase), and its thread is
    /// left to finish on its own.
    fn ask(
        &mut self,
        purpose: &'static str,
        facts: &[&Bool],
        shapes: Option<&[Shape]>,
    ) -> (SatResult, Option<Vec<WValue>>) {
        let printer = Solver::new();
        for fact in facts {
            printer.assert(*fact);
        }
        let mut smt2 = printer.to_smt2();
        if !smt2.contains("(check-sat)") {
            smt2.push_str("(check-sat)\n");
        }
        let timeout = self.options.timeout_ms;
        let (sender, receiver) = std::sync::mpsc::channel();
        let text = smt2.clone();
        let shapes: Option<Vec<Shape>> = shapes.map(<[Shape]>::to_vec);
        let spawned = std::thread::Builder::new().name("cairn-smt-query".into()).spawn(move || {
            let solver = Solver::new();
            let mut params = Params::new();
            params.set_u32("timeout", timeout);
            solver.set_params(&params);
            solver.from_string(text);
            let result = solver.check();

            let values = match (&result, shapes) {
                (SatResult::Sat, Some(shapes)) => {
                    solver.get_model().map(|model| shapes.iter().map(|s| read_model(&model, s)).collect::<Vec<_>>())
                }
                _ => None,
            };
            let _ = sender.send((result, values));
        });
        let deadline = std::time::Duration::from_millis(u64::from(timeout) * 5 / 4 + 250);
        let (result, values) = match spawned {
            Ok(_) => receiver.recv_timeout(deadline).unwrap_or((SatResult::Unknown, None)),
            Err(_) => (SatResult::Unknown, None),
        };
        let answer = match result {
            SatResult::Sat => "sat",
            SatResult::Unsat => "unsat",
            SatResult::Unknown => "unknown",
        };
        self.queries.push(Query { purpose, smt2, answer: answer.into() });
        (result, values)
    }
}

fn unknown_reason(purpose: &str) -> String {
    format!("the solver gave no answer within its time limit ({purpose})")
}

/// The longest view among witness values.
fn longest_view(values: &[WValue]) -> usize {
    values
        .iter()
        .map(|v| match v {
            WValue::Array(items) => items.len(),
            WValue::Record(items) => longest_view(items),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// Whether two replays agree (both trap; values equal, floats by bits or both NaN).
pub fn agree(a: &Observed, b: &Observed) -> bool {
    match (a, b) {
        (Observed::Trap, Observed::Trap) => true,
        (Observed::Returned { value: x, leftovers: lx }, Observed::Returned { value: y, leftovers: ly }) => {
            nan_agnostic_eq(&Some(x.clone()), &Some(y.clone()))
                && lx.len() == ly.len()
                && lx.iter().zip(ly).all(|(p, q)| nan_agnostic_eq(p, q))
        }
        _ => false,
    }
}

fn nan_agnostic_eq(x: &Option<WValue>, y: &Option<WValue>) -> bool {
    fn eq(x: &WValue, y: &WValue) -> bool {
        match (x, y) {
            (WValue::Float(a), WValue::Float(b)) => a == b || (is_nan_bits(*a) && is_nan_bits(*b)),
            (WValue::Record(a), WValue::Record(b)) | (WValue::Array(a), WValue::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(p, q)| eq(p, q))
            }
            (WValue::Sum(s, a), WValue::Sum(t, b)) => {
                s == t
                    && match (a, b) {
                        (Some(a), Some(b)) => eq(a, b),
                        (None, None) => true,
                        _ => false,
                    }
            }
            _ => x == y,
        }
    }
    match (x, y) {
        (Some(a), Some(b)) => eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// NaN as either width's bits (an f32's bits sit in the low 32).
fn is_nan_bits(bits: u64) -> bool {
    if bits >> 32 == 0 { f32::from_bits(bits as u32).is_nan() } else { f64::from_bits(bits).is_nan() }
}

/// Compares two functions. Never panics on MIR it cannot model: that is `Unknown`.
pub fn compare(request: &Request<'_>) -> Comparison {
    let mut asker = Asker { options: request.options, queries: Vec::new() };
    let verdict = decide(request, &mut asker).unwrap_or_else(Verdict::Unknown);
    Comparison { verdict, queries: asker.queries }
}

/// True when a value of `ty` holds a function value somewhere.
fn holds_fn(ty: &MTy) -> bool {
    match ty {
        MTy::Fn { .. } => true,
        MTy::Record { fields, .. } => fields.iter().any(holds_fn),
        MTy::Sum { variants, .. } => variants.iter().flatten().any(holds_fn),
        MTy::Array(element, _) | MTy::View(element) | MTy::Ptr(element) => holds_fn(element),
        _ => false,
    }
}

fn decide(request: &Request<'_>, asker: &mut Asker) -> Result<Verdict, String> {
    let old = request.old.function().ok_or_else(|| format!("no function {}", request.old.symbol))?;
    let new = request.new.function().ok_or_else(|| format!("no function {}", request.new.symbol))?;
    let params = old.params as usize;
    if new.params as usize != params
        || old.ret != new.ret
        || old.locals[..params].iter().zip(&new.locals[..params]).any(|(a, b)| a.ty != b.ty)
    {
        return Err("the two signatures differ".into());
    }
    // A function value is a number within one run: two versions' are not comparable.
    if holds_fn(&old.ret) {
        return Err("the result holds a function value".into());
    }
    let names: Vec<String> = old.locals[..params]
        .iter()
        .enumerate()
        .map(|(i, l)| l.name.as_deref().map_or_else(|| format!("arg{i}"), str::to_string))
        .collect();
    let mut inputs =
        Inputs { args: Vec::new(), shapes: Vec::new(), objs: Vec::new(), domain: Vec::new(), observed: Vec::new() };
    let mut lens: Vec<Option<BV>> = Vec::new();
    for (name, decl) in names.iter().zip(&old.locals[..params]) {
        let (value, shape) = make_input(name, &decl.ty, &mut inputs)?;
        let observed = match &value {
            SV::View { obj, .. } | SV::Ptr { obj, .. } => Some(*obj),
            _ => None,
        };
        lens.push(match &value {
            SV::View { len, .. } => Some(len.clone()),
            _ => None,
        });
        inputs.observed.push(observed);
        inputs.args.push(value);
        inputs.shapes.push(shape);
    }
    // A view's length is what its signature fixes (callers pass the two together).
    for (view, extent) in &old.extents {
        let Some(Some(len)) = lens.get(view.0 as usize) else { continue };
        match extent {
            cairn_mir::ViewExtent::Literal(n) => inputs.domain.push(len.eq(usize_const(*n))),
            cairn_mir::ViewExtent::Param(p) => {
                if let Some(SV::Int(v, _)) = inputs.args.get(p.0 as usize) {
                    inputs.domain.push(len.eq(value::to_index(v)));
                }
            }
        }
    }
    let run = |side: &Side<'_>, unroll: u32| -> Result<Run, String> {
        Exec::new(side.functions, Limits { unroll, steps: request.options.steps })
            .run(side.symbol, inputs.args.clone(), State::new(inputs.objs.clone()))
            .map_err(|u| format!("{} is outside the modelled fragment: {}", side.symbol, u.0))
    };
    let mut domain: Vec<Bool> = inputs.domain.clone();
    if let Some(assume) = &request.assume {
        let a = run(assume, request.options.unroll)?;
        if !a.cuts.is_empty() {
            let (r, _) = asker.ask("assumption-cut", &[&Bool::and(&domain), &Bool::or(&a.cuts)], None);
            if r != SatResult::Unsat {
                return Err("the assumption runs a loop past the unroll limit".into());
            }
        }
        let holds: Vec<Bool> = a
            .returns
            .iter()
            .map(|(s, v)| match v {
                SV::Bool(b) => Ok(Bool::and(&[&s.pc, b])),
                _ => Err("the assumption does not return bool".to_string()),
            })
            .collect::<Result<_, _>>()?;
        domain.push(Bool::or(&holds));
        let (r, _) = asker.ask("domain", &[&Bool::and(&domain)], None);
        match r {
            SatResult::Unsat => return Ok(Verdict::EmptyDomain),
            SatResult::Unknown => return Err(unknown_reason("domain")),
            SatResult::Sat => {}
        }
    }
    let domain = Bool::and(&domain);
    let witness_of = |values: Option<Vec<WValue>>| -> Result<Vec<WValue>, String> {
        values.ok_or_else(|| "the solver's model could not be read".to_string())
    };
    let small_views: Vec<Bool> =
        lens.iter().flatten().map(|l| l.bvule(usize_const(request.options.max_view))).collect();
    let small = Bool::and(&small_views);
    let tiny_views: Vec<Bool> = lens.iter().flatten().map(|l| l.bvule(usize_const(8))).collect();
    let tiny = Bool::and(&tiny_views);

    // Concrete probing first: a disagreement on the evaluator is a witness without a solver.
    let assume_fn = request.assume.as_ref().and_then(|a| a.function().map(|f| (a.functions, f)));
    if let Some(found) =
        probe::probe(request.old.functions, old, request.new.functions, new, assume_fn, request.reference_must_not_trap)
    {
        let named = |values: Vec<WValue>| names.iter().cloned().zip(values).collect::<Vec<_>>();
        return Ok(match found {
            probe::Found::Differs(values, before, after) => {
                Verdict::Differs(Witness { inputs: named(values), before, after, found_by: "probe" })
            }
            probe::Found::ReferenceTraps(values, before) => Verdict::ReferenceTraps(Witness {
                inputs: named(values),
                before,
                after: Observed::NotRun("not compared".into()),
                found_by: "probe",
            }),
        });
    }

    // Loops are followed 2, 4, 8, then `unroll` iterations deep: a difference on short runs
    // is found on a small formula (every path that ends within the depth is exact), and only
    // a proof needs the whole depth.
    let full = request.options.unroll;
    let mut depths: Vec<u32> = [2, 4, 8].into_iter().filter(|d| *d < full).collect();
    depths.push(full);
    // A difference question the solver could not decide in its time at one depth is not asked
    // again deeper: the deeper formula holds the shallower one's paths and more, and asking it
    // again cost a whole timeout per depth (four for a float loop) to learn nothing. The other
    // questions are still asked deeper; a question given up stays the reason for `unknown`.
    let mut given_up: Vec<&'static str> = Vec::new();
    for (round, &depth) in depths.iter().enumerate() {
        let last = round + 1 == depths.len();
        let old_run = observe(run(&request.old, depth)?, &inputs);
        let new_run = observe(run(&request.new, depth)?, &inputs);

        if request.reference_must_not_trap {
            let trap = Bool::and(&[&old_run.trap, &old_run.cut.not()]);
            let (r, model) = asker.ask("reference-traps", &[&domain, &trap, &small], Some(&inputs.shapes));
            match r {
                SatResult::Sat => {
                    let values = witness_of(model)?;
                    let before = replay::evaluate(request.old.functions, old, &values);
                    if before == Observed::Trap {
                        let inputs = names.iter().cloned().zip(values).collect();
                        return Ok(Verdict::ReferenceTraps(Witness {
                            inputs,
                            before,
                            after: Observed::NotRun("not compared".into()),
                            found_by: "solver",
                        }));
                    }
                    return Err("the solver found a trapping input the evaluator did not reproduce".into());
                }
                SatResult::Unknown => return Err(unknown_reason("reference traps")),
                SatResult::Unsat => {}
            }
        }

        // Some allowed input where the observations differ: one version traps where the other
        // returns, or both return and something observed differs. Asked separately, so the
        // trap questions stay free of the values' arithmetic.
        let old_returns = returns(&old_run);
        let new_returns = returns(&new_run);
        let mut value_differs: Vec<Bool> = Vec::new();
        for (pc_old, value_old, left_old) in &old_run.paths {
            for (pc_new, value_new, left_new) in &new_run.paths {
                let mut unequal = vec![same(value_old, value_new).map_err(|u| u.0)?.not()];
                for (i, (a, b)) in left_old.iter().zip(left_new).enumerate() {
                    if let (Some(a), Some(b)) = (a, b) {
                        unequal.push(leftover_differs(a, b, lens[i].as_ref(), &names[i])?);
                    }
                }
                value_differs.push(Bool::and(&[pc_old, pc_new, &Bool::or(&unequal)]));
            }
        }
        let questions = [
            ("difference-old-traps", Bool::and(&[&old_run.trap, &new_returns])),
            ("difference-new-traps", Bool::and(&[&new_run.trap, &old_returns])),
            ("difference-values", Bool::or(&value_differs)),
        ];
        let mut undecided = None;
        for (purpose, question) in &questions {
            if question.simplify().as_bool() == Some(false) {
                continue;
            }
            if given_up.contains(purpose) {
                undecided = Some(*purpose);
                continue;
            }
            let (r, mut model) = asker.ask(purpose, &[&domain, question, &small], Some(&inputs.shapes));
            // A witness with a long view: ask once more for one with short views, which reads
            // better and replays faster (kept only if the solver finds one in time).
            if r == SatResult::Sat && !tiny_views.is_empty() && model.as_ref().is_some_and(|v| longest_view(v) > 8) {
                let (again, shorter) = asker.ask(purpose, &[&domain, question, &tiny], Some(&inputs.shapes));
                if again == SatResult::Sat && shorter.is_some() {
                    model = shorter;
                }
            }
            match r {
                SatResult::Sat => {
                    let values = witness_of(model)?;
                    let before = replay::evaluate(request.old.functions, old, &values);
                    let after = replay::evaluate(request.new.functions, new, &values);
                    for observed in [&before, &after] {
                        if let Observed::NotRun(why) = observed {
                            return Err(format!("the witness could not be replayed: {why}"));
                        }
                    }
                    if agree(&before, &after) {
                        return Err("the solver's witness did not reproduce on the evaluator".into());
                    }
                    let inputs = names.iter().cloned().zip(values).collect();
                    return Ok(Verdict::Differs(Witness { inputs, before, after, found_by: "solver" }));
                }
                SatResult::Unknown => {
                    undecided = Some(*purpose);
                    given_up.push(purpose);
                }
                SatResult::Unsat => {}
            }
        }
        if let Some(purpose) = undecided {
            // A deeper run may still show a difference through an easier question.
            if last {
                return Err(unknown_reason(purpose));
            }
            continue;
        }
        let differs = Bool::or(&questions.iter().map(|(_, q)| q.clone()).collect::<Vec<_>>());
        // Paths cut at this depth: look deeper, or give up at the last depth.
        let cut = Bool::or(&[&old_run.cut, &new_run.cut]);
        if cut.simplify().as_bool() != Some(false) {
            let (r, _) = asker.ask("unroll", &[&domain, &cut], None);
            match r {
                SatResult::Sat if !last => continue,
                SatResult::Sat => {
                    return Err(format!(
                        "a loop can run more than {full} iterations on an allowed input; nothing is known past that"
                    ));
                }
                SatResult::Unknown => return Err(unknown_reason("loop bounds")),
                SatResult::Unsat => {}
            }
        }
        if !small_views.is_empty() {
            let (r, _) = asker.ask("difference-long-views", &[&domain, &differs], None);
            match r {
                SatResult::Sat => {
                    return Err(format!(
                        "the versions differ only on views longer than {} elements, too long to replay",
                        request.options.max_view
                    ));
                }
                SatResult::Unknown => return Err(unknown_reason("difference on long views")),
                SatResult::Unsat => {}
            }
        }
        // A float observation that may be NaN is not decided (protocol §6.2).
        let mut nan = Vec::new();
        for run in [&old_run, &new_run] {
            for (pc, value, leftovers) in &run.paths {
                let mut parts = vec![has_nan(value)];
                for (i, left) in leftovers.iter().enumerate() {
                    if let Some(left) = left {
                        parts.push(leftover_nan(left, lens[i].as_ref(), &names[i]));
                    }
                }
                nan.push(Bool::and(&[pc, &Bool::or(&parts)]));
            }
        }
        let nan = Bool::or(&nan);
        if nan.simplify().as_bool() != Some(false) {
            let (r, _) = asker.ask("nan", &[&domain, &nan], None);
            match r {
                SatResult::Sat => {
                    return Err("a float result may be NaN on an allowed input; exclude it with an assumption".into());
                }
                SatResult::Unknown => return Err(unknown_reason("NaN results")),
                SatResult::Unsat => {}
            }
        }
        return Ok(Verdict::Equivalent);
    }
    unreachable!("the last depth always answers")
}
