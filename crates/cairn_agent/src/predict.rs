//! `cairn predict` (tools.md §3.16): a function's running time estimated from the checker's work
//! counts priced by a machine profile, without building or running anything; and the calibration
//! that fits a profile to this host.
//!
//! Work counts: the body is walked once; every operator, builtin call and comparison is an
//! *operation*, every element read or written through an index is an *access*; a loop multiplies
//! its body by its trip count (`for i in lo..hi`: `hi − lo` when both are parameters, literals,
//! `len` of a view or their quotients by literals; `for x in xs`: the view's extent), a `parallel`
//! region or a `parallel` collector does the same and marks the work as split over the lanes; an
//! `if` counts its dearer branch; a call of a declared function counts the callee's work with its
//! parameters replaced by the caller's arguments (parameters and literals; anything else is an
//! unknown size). What cannot be counted — a `while`, a trip count from data, recursion — is the
//! unknown size `?` (1,000 when priced) and makes the confidence `low`; parallel work `medium`.
//!
//! Price: `ns = ops·ns_per_op + accesses·ns_per_access`, parallel work divided by the profile's
//! effective lanes. A profile is fitted (`calibrate`) by least squares to measured times of a few
//! calibration kernels on this host, and its accuracy stated on *other* kernels never used for the
//! fit: Kendall's τ between predicted and measured times over every (kernel, size) point, and the
//! median relative error.

use std::collections::BTreeMap;

use cairn_hir::body::{BinaryOp, Block, Body, Else, Expr, ExprId, Literal, Stmt, fn_body};
use cairn_hir::check::{CallTarget, representative_check};
use cairn_hir::scopes::{LocalRef, body_scopes};
use cairn_hir::types::{Extent, Ty};
use cairn_hir::{Item, SourceText, Workspace};
use serde::{Deserialize, Serialize};

use crate::validate::Runner;
use crate::validate::cases::Shape;

/// The unknown size.
const UNKNOWN: &str = "?";
/// What the unknown size is priced at.
const UNKNOWN_VALUE: f64 = 1000.0;

/// A machine profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub protocol: String,
    /// How the profile was made (`default (uncalibrated)`, or the calibration's host).
    pub source: String,
    pub ns_per_op: f64,
    pub ns_per_access: f64,
    /// How many lanes' worth of speed parallel work gets.
    pub effective_lanes: f64,
}

impl Profile {
    /// The profile used without a calibrated one.
    pub fn default_for(lanes: u32) -> Profile {
        Profile {
            protocol: "cairn.profile/1".into(),
            source: "default (uncalibrated)".into(),
            ns_per_op: 0.4,
            ns_per_access: 0.4,
            effective_lanes: f64::from(lanes.max(1)),
        }
    }
}

/// Work as a sum of monomials: per (sizes multiplied, parallel), its operations and accesses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Work {
    terms: BTreeMap<(Vec<String>, bool), (f64, f64)>,
}

impl Work {
    fn ops(n: f64) -> Work {
        Work::unit(n, 0.0)
    }

    fn unit(ops: f64, accesses: f64) -> Work {
        let mut work = Work::default();
        if ops != 0.0 || accesses != 0.0 {
            work.terms.insert((Vec::new(), false), (ops, accesses));
        }
        work
    }

    fn add(&mut self, other: &Work) {
        for (key, (o, a)) in &other.terms {
            let entry = self.terms.entry(key.clone()).or_insert((0.0, 0.0));
            entry.0 += o;
            entry.1 += a;
        }
    }

    /// The work times a trip count; `parallel` marks it split over the lanes.
    fn times(&self, trips: &Size, parallel: bool) -> Work {
        let mut out = Work::default();
        for ((vars, was_parallel), (o, a)) in &self.terms {
            for (coefficient, factor) in &trips.terms {
                let mut vars = vars.clone();
                vars.extend(factor.iter().cloned());
                vars.sort();
                let entry = out.terms.entry((vars, *was_parallel || parallel)).or_insert((0.0, 0.0));
                entry.0 += o * coefficient;
                entry.1 += a * coefficient;
            }
        }
        out
    }

    /// Sizes renamed (a callee's parameters to the caller's sizes).
    fn renamed(&self, names: &BTreeMap<String, Size>) -> Work {
        let mut out = Work::default();
        for ((vars, parallel), (o, a)) in &self.terms {
            let mut size = Size::constant(1.0);
            for var in vars {
                let factor = names.get(var).cloned().unwrap_or_else(Size::unknown);
                size = size.product(&factor);
            }
            out.add(&Work { terms: [((Vec::new(), *parallel), (*o, *a))].into_iter().collect() }.times(&size, false));
        }
        out
    }

    fn unknown(&self) -> bool {
        self.terms.keys().any(|(vars, _)| vars.iter().any(|v| v == UNKNOWN))
    }

    fn parallel(&self) -> bool {
        self.terms.keys().any(|(_, parallel)| *parallel)
    }

    /// The counts at `sizes` (missing sizes are unknown): (serial ops, serial accesses, parallel ops, parallel accesses).
    fn at(&self, sizes: &BTreeMap<String, f64>) -> [f64; 4] {
        let mut out = [0.0; 4];
        for ((vars, parallel), (o, a)) in &self.terms {
            let factor: f64 = vars.iter().map(|v| sizes.get(v).copied().unwrap_or(UNKNOWN_VALUE)).product();
            let at = if *parallel { 2 } else { 0 };
            out[at] += o * factor;
            out[at + 1] += a * factor;
        }
        out
    }

    /// The formula, term by term (`3·n ops + 1·n accesses ∥`).
    fn formula(&self) -> Vec<String> {
        self.terms
            .iter()
            .map(|((vars, parallel), (o, a))| {
                let size = if vars.is_empty() { "1".to_string() } else { vars.join("·") };
                format!("{size}: {o} ops, {a} accesses{}", if *parallel { " (split over the lanes)" } else { "" })
            })
            .collect()
    }
}

/// A trip count: a sum of (coefficient, sizes multiplied).
#[derive(Debug, Clone, PartialEq)]
struct Size {
    terms: Vec<(f64, Vec<String>)>,
}

impl Size {
    fn constant(c: f64) -> Size {
        Size { terms: vec![(c, Vec::new())] }
    }

    fn var(name: &str) -> Size {
        Size { terms: vec![(1.0, vec![name.to_string()])] }
    }

    fn unknown() -> Size {
        Size::var(UNKNOWN)
    }

    fn product(&self, other: &Size) -> Size {
        let mut terms = Vec::new();
        for (a, x) in &self.terms {
            for (b, y) in &other.terms {
                let mut vars = x.clone();
                vars.extend(y.iter().cloned());
                vars.sort();
                terms.push((a * b, vars));
            }
        }
        Size { terms }
    }

    fn scaled(&self, c: f64) -> Size {
        Size { terms: self.terms.iter().map(|(k, v)| (k * c, v.clone())).collect() }
    }

    fn minus(&self, other: &Size) -> Size {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().map(|(k, v)| (-k, v.clone())));
        Size { terms }
    }
}

/// Counts work over the checked program.
struct Counter<'a> {
    workspace: &'a Workspace,
    /// Functions being counted (a call back into one is recursion: unknown).
    active: Vec<Item>,
    memo: BTreeMap<String, Work>,
}

impl Counter<'_> {
    fn function(&mut self, item: Item) -> Work {
        let db = self.workspace.db();
        let name = cairn_hir::Resolver::new(db).full_name(item).to_string();
        if let Some(work) = self.memo.get(&name) {
            return work.clone();
        }
        if self.active.contains(&item) || self.active.len() > 32 {
            return Work::ops(1.0).times(&Size::unknown(), false);
        }
        self.active.push(item);
        let body = fn_body(db, item);
        let mut cx = BodyCx { counter: self, item, body: body.clone() };
        let work = cx.block(&body.root);
        self.active.pop();
        self.memo.insert(name, work.clone());
        work
    }
}

struct BodyCx<'a, 'b> {
    counter: &'a mut Counter<'b>,
    item: Item,
    body: std::sync::Arc<Body>,
}

impl BodyCx<'_, '_> {
    fn block(&mut self, block: &Block) -> Work {
        let mut work = Work::default();
        for &stmt in block.iter() {
            let w = self.stmt(stmt);
            work.add(&w);
        }
        work
    }

    fn stmt(&mut self, id: cairn_hir::body::StmtId) -> Work {
        let body = self.body.clone();
        match body.stmt(id) {
            Stmt::Let { init, .. } => self.expr(*init),
            Stmt::Assign { target, value, .. } => {
                let mut work = self.expr(*value);
                work.add(&self.expr(*target));
                work
            }
            Stmt::Expr(e) | Stmt::Return(Some(e)) => self.expr(*e),
            Stmt::If { cond, then, els } => {
                let mut work = self.expr(*cond);
                let then = self.block(then);
                let other = match els {
                    Some(Else::Block(block)) => self.block(block),
                    Some(Else::If(nested)) => self.stmt(*nested),
                    None => Work::default(),
                };
                // The dearer branch, judged at a large size.
                let big: BTreeMap<String, f64> = BTreeMap::new();
                let cost = |w: &Work| w.at(&big).iter().sum::<f64>();
                work.add(if cost(&then) >= cost(&other) { &then } else { &other });
                work
            }
            Stmt::While { cond, body: inner } => {
                let mut work = self.expr(*cond);
                work.add(&self.block(inner));
                work.times(&Size::unknown(), false)
            }
            Stmt::ForRange { lo, hi, body: inner, .. } => {
                let trips = self.size(*hi).minus(&self.size(*lo));
                let mut work = self.block(inner);
                work.add(&Work::ops(1.0));
                work.times(&trips, false)
            }
            Stmt::ForEach { iterable, body: inner, .. } => {
                let trips = self.extent_of(*iterable);
                let mut work = self.block(inner);
                work.add(&Work::unit(1.0, 1.0));
                work.times(&trips, false)
            }
            Stmt::Each { count, body: inner, .. } => {
                let trips = self.size(*count);
                self.block(inner).times(&trips, false)
            }
            Stmt::Parallel { count, body: inner, .. } => {
                let trips = self.size(*count);
                self.block(inner).times(&trips, true)
            }
            Stmt::Collect(collector) => {
                let trips = self.size(collector.count);
                let mut work = self.expr(collector.value);
                if let Some(pred) = collector.pred {
                    work.add(&self.expr(pred));
                }
                work.add(&Work::unit(1.0, 1.0));
                work.times(&trips, collector.parallel)
            }
            Stmt::Match { subject, arms } => {
                let mut work = self.expr(*subject);
                let mut dearest = Work::default();
                let big: BTreeMap<String, f64> = BTreeMap::new();
                for arm in arms.iter() {
                    let w = self.block(&arm.body);
                    if w.at(&big).iter().sum::<f64>() > dearest.at(&big).iter().sum::<f64>() {
                        dearest = w;
                    }
                }
                work.add(&dearest);
                work
            }
            Stmt::Block(block) | Stmt::Unsafe(block) => self.block(block),
            Stmt::Defer(inner) => self.stmt(*inner),
            Stmt::Unpack { value, .. } => self.expr(*value),
            _ => Work::default(),
        }
    }

    fn expr(&mut self, e: ExprId) -> Work {
        let body = self.body.clone();
        match body.expr(e) {
            Expr::Paren(inner) | Expr::Try(inner) => self.expr(*inner),
            Expr::Field { base, .. } => self.expr(*base),
            Expr::Unary { operand, .. } => {
                let mut work = self.expr(*operand);
                work.add(&Work::ops(1.0));
                work
            }
            Expr::Binary { lhs, rhs, .. } => {
                let mut work = self.expr(*lhs);
                work.add(&self.expr(*rhs));
                work.add(&Work::ops(1.0));
                work
            }
            Expr::Index { base, indices } => {
                let mut work = self.expr(*base);
                for &i in indices.iter() {
                    work.add(&self.expr(i));
                }
                work.add(&Work::unit(0.0, 1.0));
                work
            }
            Expr::Part { base, lo, hi } => {
                let mut work = self.expr(*base);
                work.add(&self.expr(*lo));
                work.add(&self.expr(*hi));
                work
            }
            Expr::Call { args, .. } => {
                let mut work = Work::default();
                for &a in args.iter() {
                    work.add(&self.expr(a));
                }
                let db = self.counter.workspace.db();
                match representative_check(db, self.item).call_target(e) {
                    Some(CallTarget::Function(callee, _)) => {
                        let callee = *callee;
                        let names = self.arguments(callee, args);
                        let inner = self.counter.function(callee);
                        work.add(&inner.renamed(&names));
                        work.add(&Work::ops(1.0));
                    }
                    Some(CallTarget::Indirect | CallTarget::Dynamic { .. }) => {
                        work.add(&Work::ops(1.0).times(&Size::unknown(), false));
                    }
                    _ => work.add(&Work::ops(1.0)),
                }
                work
            }
            _ => Work::default(),
        }
    }

    /// The callee's parameters as the caller's sizes (an omitted extent: its view's extent).
    fn arguments(&self, callee: Item, args: &[ExprId]) -> BTreeMap<String, Size> {
        let db = self.counter.workspace.db();
        let signature = cairn_hir::fn_signature(db, callee);
        let omitted =
            !signature.extent_params.is_empty() && args.len() + signature.extent_params.len() == signature.params.len();
        let mut given = args.iter();
        let mut names: BTreeMap<String, Size> = BTreeMap::new();
        let mut views: Vec<(String, ExprId)> = Vec::new();
        for (index, param) in signature.params.iter().enumerate() {
            if omitted && signature.extent_params.contains(&index) {
                continue;
            }
            let Some(&arg) = given.next() else { break };
            names.insert(param.name.to_string(), self.size(arg));
            if matches!(param.ty, Ty::View(_)) {
                views.push((param.name.to_string(), arg));
            }
        }
        // Omitted extents: the length of the first view bound to each.
        for &index in signature.extent_params.iter() {
            let extent = signature.params[index].name.to_string();
            if names.contains_key(&extent) {
                continue;
            }
            let first = signature
                .params
                .iter()
                .position(|p| matches!(&p.ty, Ty::View(v) if v.extent == Extent::Name(extent.as_str().into())));
            if let Some((_, arg)) = first.and_then(|i| views.iter().find(|(n, _)| *n == *signature.params[i].name)) {
                names.insert(extent, self.extent_of(*arg));
            }
        }
        names
    }

    /// A trip count or size: literals, parameters, `len` of a view, products and quotients by
    /// literals, sums and differences; anything else unknown.
    fn size(&self, e: ExprId) -> Size {
        let body = &self.body;
        match body.expr(e) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Size::constant(*v as f64),
            Expr::Paren(inner) => self.size(*inner),
            Expr::Name(_) => match self.param_of(e) {
                Some(name) => Size::var(&name),
                None => Size::unknown(),
            },
            Expr::Call { args, .. } if args.len() == 1 && self.is_builtin(e, "len") => self.extent_of(args[0]),
            Expr::Call { args, .. } if args.len() == 1 => self.size(args[0]),
            Expr::Binary { op: BinaryOp::Mul, lhs, rhs } => self.size(*lhs).product(&self.size(*rhs)),
            Expr::Binary { op: BinaryOp::Div, lhs, rhs } => match body.expr(*rhs) {
                Expr::Literal(Literal::Int { value: Some(v), .. }) if *v > 0 => self.size(*lhs).scaled(1.0 / *v as f64),
                _ => Size::unknown(),
            },
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } => {
                let mut size = self.size(*lhs);
                size.terms.extend(self.size(*rhs).terms);
                size
            }
            Expr::Binary { op: BinaryOp::Sub, lhs, rhs } => self.size(*lhs).minus(&self.size(*rhs)),
            _ => Size::unknown(),
        }
    }

    /// How many elements a view expression holds: its extent parameter, a part's `hi − lo`.
    fn extent_of(&self, e: ExprId) -> Size {
        let body = &self.body;
        match body.expr(e) {
            Expr::Paren(inner) => self.extent_of(*inner),
            Expr::Part { lo, hi, .. } => self.size(*hi).minus(&self.size(*lo)),
            Expr::Name(_) => {
                let db = self.counter.workspace.db();
                let Some(LocalRef::Param(i)) = body_scopes(db, self.item).resolve(e) else { return Size::unknown() };
                let signature = cairn_hir::fn_signature(db, self.item);
                match signature.params.get(i as usize).map(|p| &p.ty) {
                    Some(Ty::View(view)) => match &view.extent {
                        Extent::Name(name) => Size::var(name),
                        Extent::Literal(n) => Size::constant(*n as f64),
                        _ => Size::unknown(),
                    },
                    _ => Size::unknown(),
                }
            }
            _ => Size::unknown(),
        }
    }

    fn param_of(&self, e: ExprId) -> Option<String> {
        let db = self.counter.workspace.db();
        match body_scopes(db, self.item).resolve(e)? {
            LocalRef::Param(i) => self.body.params.get(i as usize).map(|n| n.to_string()),
            LocalRef::Binder(_) => None,
        }
    }

    fn is_builtin(&self, e: ExprId, name: &str) -> bool {
        let db = self.counter.workspace.db();
        matches!(representative_check(db, self.item).call_target(e), Some(CallTarget::Builtin(b)) if b.name() == name)
    }
}

/// The work of `item` in the accepted program of `workspace`.
pub fn work_of(workspace: &Workspace, item: Item) -> Work {
    Counter { workspace, active: Vec::new(), memo: BTreeMap::new() }.function(item)
}

/// One prediction.
#[derive(Debug, Serialize, Clone)]
pub struct Prediction {
    pub sizes: BTreeMap<String, f64>,
    pub ns: f64,
    pub confidence: &'static str,
}

/// The predictions of one function.
#[derive(Debug, Serialize)]
pub struct FunctionPrediction {
    pub formula: Vec<String>,
    pub predictions: Vec<Prediction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<&'static str>,
}

/// Prices `work` at each of `sizes` with `profile`.
pub fn predict(work: &Work, sizes: &[BTreeMap<String, f64>], profile: &Profile) -> FunctionPrediction {
    let confidence = if work.unknown() {
        "low"
    } else if work.parallel() {
        "medium"
    } else {
        "high"
    };
    let predictions =
        sizes.iter().map(|at| Prediction { sizes: at.clone(), ns: price(work, at, profile), confidence }).collect();
    FunctionPrediction {
        formula: work.formula(),
        predictions,
        unknown: if work.unknown() {
            vec!["a size the checker cannot count (a while loop, data, recursion)"]
        } else {
            Vec::new()
        },
    }
}

fn price(work: &Work, at: &BTreeMap<String, f64>, profile: &Profile) -> f64 {
    // A trip count `hi − lo` below its start runs no iterations: no count is negative; and a price
    // past what a number holds is the largest one (a record never carries an infinity).
    let [so, sa, po, pa] = work.at(at).map(|count| count.max(0.0));
    let ns = so * profile.ns_per_op
        + sa * profile.ns_per_access
        + (po * profile.ns_per_op + pa * profile.ns_per_access) / profile.effective_lanes.max(1.0);
    if ns.is_finite() { ns.max(0.0) } else { f64::MAX }
}

/// A size as every caller takes one (`--at`, a packet's `sizes`): a whole count from 0 to the
/// largest `u64`, written as a number (`1e6` is a million).
pub fn size_value(value: f64) -> Option<f64> {
    (value.is_finite() && (0.0..=u64::MAX as f64).contains(&value) && value.fract() == 0.0).then_some(value)
}

/// Sizes given as JSON (a packet's `sizes`): a list of objects from size names to sizes.
pub fn sizes_from_json(value: &serde_json::Value) -> Result<Vec<BTreeMap<String, f64>>, String> {
    let Some(list) = value.as_array().filter(|l| l.len() <= 16) else {
        return Err("sizes is a list of up to 16 objects from size names to whole numbers.".into());
    };
    let mut points = Vec::new();
    for entry in list {
        let Some(object) = entry.as_object() else {
            return Err("each entry of sizes is an object from size names to whole numbers.".into());
        };
        let mut point = BTreeMap::new();
        for (name, value) in object {
            let Some(size) = value.as_f64().and_then(size_value) else {
                return Err(format!("sizes: {name} is {value}, not a whole number from 0 to 2^64 - 1."));
            };
            point.insert(name.clone(), size);
        }
        points.push(point);
    }
    Ok(points)
}

/// The first size name of `points` that is no parameter of any of `items` (a misspelt size would
/// otherwise be priced as unknown without a word).
pub fn stray_size(workspace: &Workspace, items: &[Item], points: &[BTreeMap<String, f64>]) -> Option<String> {
    let names: Vec<String> = items
        .iter()
        .flat_map(|&item| cairn_hir::fn_signature(workspace.db(), item).params.iter().map(|p| p.name.to_string()))
        .collect();
    points.iter().flat_map(BTreeMap::keys).find(|name| !names.contains(name)).cloned()
}

/// The sizes a function is predicted at without `--at`: its extent parameters at 10^3, 10^5, 10^7.
pub fn default_sizes(workspace: &Workspace, item: Item) -> Vec<BTreeMap<String, f64>> {
    let signature = cairn_hir::fn_signature(workspace.db(), item);
    let extents: Vec<String> = signature.extent_params.iter().map(|&i| signature.params[i].name.to_string()).collect();
    [1e3, 1e5, 1e7].iter().map(|&v| extents.iter().map(|e| (e.clone(), v)).collect()).collect()
}

/// A calibration kernel: a program, its function, and whether it is held out of the fit.
struct Kernel {
    name: &'static str,
    source: &'static str,
    held_out: bool,
}

const KERNELS: [Kernel; 7] = [
    Kernel {
        name: "sum",
        source: "fn sum(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n { s = add_wrap(s, xs[i]); }\n  return s;\n}\n",
        held_out: false,
    },
    Kernel {
        name: "scale",
        source: "fn scale(n:usize, xs:ro<f64>[n], ys:rw<f64>[n]) {\n  for i in 0..n { ys[i] = xs[i] * 2.5 + 1.0; }\n}\n",
        held_out: false,
    },
    Kernel {
        name: "mix",
        source: "fn mix(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 1;\n  for i in 0..n { s = add_wrap(mul_wrap(s, 31), xs[i] ^ shr(s, 3)); }\n  return s;\n}\n",
        held_out: false,
    },
    Kernel {
        name: "fill",
        source: "fn fill(n:usize, out:rw<u64>[n]) {\n  parallel i in n { out[i] = u64(i) * 3 + 1; }\n}\n",
        held_out: false,
    },
    Kernel {
        name: "dot",
        source: "fn dot(n:usize, xs:ro<f64>[n], ys:ro<f64>[n]) -> f64 {\n  let mut s:f64 = 0.0;\n  for i in 0..n { s = s + xs[i] * ys[i]; }\n  return s;\n}\n",
        held_out: true,
    },
    Kernel {
        name: "saxpy",
        source: "fn saxpy(n:usize, a:f64, xs:ro<f64>[n], ys:rw<f64>[n]) {\n  parallel i in n { ys[i] = a * xs[i] + ys[i]; }\n}\n",
        held_out: true,
    },
    Kernel {
        name: "window",
        source: "fn window(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n / 4 {\n    for j in 0..4 { s = add_wrap(s, xs[4 * i + j] & 255); }\n  }\n  return s;\n}\n",
        held_out: true,
    },
];

const SIZES: [u64; 3] = [10_000, 100_000, 1_000_000];

/// One calibration point.
#[derive(Debug, Serialize)]
pub struct Point {
    pub kernel: &'static str,
    pub n: u64,
    pub measured_ns: u64,
    pub predicted_ns: f64,
    pub held_out: bool,
}

/// What a calibration made and how well its profile predicts kernels it never saw.
#[derive(Debug, Serialize)]
pub struct Calibration {
    pub protocol: &'static str,
    pub profile: Profile,
    pub points: Vec<Point>,
    pub held_out: Accuracy,
}

#[derive(Debug, Serialize)]
pub struct Accuracy {
    pub points: usize,
    pub kendall_tau: f64,
    pub median_relative_error: f64,
}

/// Fits a profile to this host: times the calibration kernels through `runner`, fits
/// `ns_per_op`/`ns_per_access` on the serial fit kernels and the effective lanes on the parallel
/// one, and states the accuracy on the held-out kernels.
pub fn calibrate(runner: &dyn Runner, lanes: u32, host: &str) -> Result<Calibration, String> {
    let mut measured: Vec<(&Kernel, u64, u64, [f64; 4])> = Vec::new();
    for kernel in &KERNELS {
        let source = format!("{}\nfn main() -> i32 {{ return 0; }}\n", kernel.source);
        let files = vec![SourceText { name: format!("{}.cairn", kernel.name), text: source }];
        let mut workspace = Workspace::new(files.clone());
        if let Some(refusal) = workspace.check().refusal {
            return Err(format!(
                "internal error (E-INTERNAL): the calibration kernel {} was refused: {}",
                kernel.name, refusal.first.message
            ));
        }
        let item = workspace.function_named(kernel.name).ok_or("a calibration kernel is missing")?;
        let shape = Shape::of(cairn_hir::fn_signature(workspace.db(), item))?;
        let times = crate::tune::time_calls(&files, &shape, &SIZES, kernel.name, runner)?;
        let work = work_of(&workspace, item);
        for (&n, &ns) in SIZES.iter().zip(&times) {
            let at: BTreeMap<String, f64> = [("n".to_string(), n as f64)].into_iter().collect();
            measured.push((kernel, n, ns, work.at(&at)));
        }
    }
    // Serial kernels fit ns_per_op and ns_per_access (least squares, both at least 0.01 ns).
    let serial: Vec<&(&Kernel, u64, u64, [f64; 4])> =
        measured.iter().filter(|(k, _, _, c)| !k.held_out && c[2] == 0.0 && c[3] == 0.0).collect();
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (_, _, ns, c) in &serial {
        // Relative weighting: every point counts alike, whatever its size.
        let w = 1.0 / (*ns as f64).max(1.0).powi(2);
        a11 += w * c[0] * c[0];
        a12 += w * c[0] * c[1];
        a22 += w * c[1] * c[1];
        b1 += w * c[0] * *ns as f64;
        b2 += w * c[1] * *ns as f64;
    }
    let det = a11 * a22 - a12 * a12;
    let (mut op, mut access) =
        if det.abs() > f64::EPSILON { ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det) } else { (0.4, 0.4) };
    if op < 0.01 || access < 0.01 {
        // One price for both.
        let total: f64 = serial.iter().map(|(_, _, ns, c)| *ns as f64 / (c[0] + c[1]).max(1.0)).sum::<f64>()
            / serial.len().max(1) as f64;
        (op, access) = (total, total);
    }
    // The parallel fit kernel: how many lanes' worth its speed is.
    let parallel: Vec<f64> = measured
        .iter()
        .filter(|(k, n, _, c)| !k.held_out && (c[2] > 0.0 || c[3] > 0.0) && *n >= 100_000)
        .map(|(_, _, ns, c)| (c[2] * op + c[3] * access) / (*ns as f64).max(1.0))
        .collect();
    let effective =
        if parallel.is_empty() { f64::from(lanes) } else { parallel.iter().sum::<f64>() / parallel.len() as f64 };
    let profile = Profile {
        protocol: "cairn.profile/1".into(),
        source: format!("calibrated on {host}"),
        ns_per_op: op,
        ns_per_access: access,
        effective_lanes: effective.clamp(0.25, f64::from(lanes.max(1)) * 1.5),
    };
    let points: Vec<Point> = measured
        .iter()
        .map(|(k, n, ns, c)| Point {
            kernel: k.name,
            n: *n,
            measured_ns: *ns,
            predicted_ns: c[0] * profile.ns_per_op
                + c[1] * profile.ns_per_access
                + (c[2] * profile.ns_per_op + c[3] * profile.ns_per_access) / profile.effective_lanes,
            held_out: k.held_out,
        })
        .collect();
    let held: Vec<&Point> = points.iter().filter(|p| p.held_out).collect();
    let held_out = Accuracy {
        points: held.len(),
        kendall_tau: kendall_tau(&held.iter().map(|p| (p.predicted_ns, p.measured_ns as f64)).collect::<Vec<_>>()),
        median_relative_error: median(
            held.iter()
                .map(|p| (p.predicted_ns - p.measured_ns as f64).abs() / (p.measured_ns as f64).max(1.0))
                .collect(),
        ),
    };
    Ok(Calibration { protocol: "cairn.calibration/1", profile, points, held_out })
}

/// Kendall's τ-a between the two coordinates of `pairs`.
pub fn kendall_tau(pairs: &[(f64, f64)]) -> f64 {
    let (mut concordant, mut discordant) = (0i64, 0i64);
    for i in 0..pairs.len() {
        for j in i + 1..pairs.len() {
            let s = (pairs[i].0 - pairs[j].0) * (pairs[i].1 - pairs[j].1);
            if s > 0.0 {
                concordant += 1;
            } else if s < 0.0 {
                discordant += 1;
            }
        }
    }
    let n = pairs.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    (concordant - discordant) as f64 / (n * (n - 1.0) / 2.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(source: &str, name: &str) -> Work {
        let mut workspace = Workspace::new(vec![SourceText { name: "w.cairn".into(), text: source.into() }]);
        assert!(workspace.check().refusal.is_none());
        let item = workspace.function_named(name).expect("declared");
        work_of(&workspace, item)
    }

    #[test]
    fn loops_multiply_their_bodies_by_their_trip_counts() {
        let w = work(
            "fn f(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n { s = add_wrap(s, xs[i]); }\n  return s;\n}\n",
            "f",
        );
        let at = |n: f64| w.at(&[("n".to_string(), n)].into_iter().collect());
        // Per element: the loop's step, add_wrap, one access.
        assert_eq!(at(10.0)[1], 10.0);
        assert_eq!(at(1000.0)[0] / at(10.0)[0], 100.0);
        assert!(!w.unknown() && !w.parallel());
        // Nested: n/4 times 4; a call counts the callee at the caller's sizes.
        let nested = work(
            "fn g(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n / 4 { for j in 0..4 { s = add_wrap(s, xs[4 * i + j]); } }\n  return s;\n}\nfn h(m:usize, ys:ro<u64>[m]) -> u64 = g(m, ys);\n",
            "h",
        );
        assert_eq!(nested.at(&[("m".to_string(), 400.0)].into_iter().collect())[1], 400.0);
        // A while loop is an unknown size.
        let unknown =
            work("fn u(n:u64) -> u64 {\n  let mut k:u64 = n;\n  while k > 1 { k = k / 2; }\n  return k;\n}\n", "u");
        assert!(unknown.unknown());
        let parallel = work("fn p(n:usize, out:rw<u64>[n]) {\n  parallel i in n { out[i] = 1; }\n}\n", "p");
        assert!(parallel.parallel());
    }

    #[test]
    fn no_price_is_negative_or_past_a_number_and_sizes_are_whole_counts() {
        // `for i in 1..n` at n = 0 runs nothing: 1 − 0 iterations is clamped, not priced below zero.
        let w = work("fn f(n:usize, out:rw<u64>[n]) {\n  for i in 1..n { out[i] = 1; }\n}\n", "f");
        let profile = Profile::default_for(1);
        let zero = predict(&w, &[[("n".to_string(), 0.0)].into_iter().collect()], &profile);
        assert!(zero.predictions[0].ns >= 0.0, "{:?}", zero.predictions);
        let huge = predict(&w, &[[("n".to_string(), u64::MAX as f64)].into_iter().collect()], &profile);
        assert!(huge.predictions[0].ns.is_finite());
        assert_eq!(size_value(1e6), Some(1e6));
        for bad in [-1.0, 0.5, f64::INFINITY, f64::NAN, 1e20] {
            assert_eq!(size_value(bad), None, "{bad}");
        }
        let parsed = sizes_from_json(&serde_json::json!([{"n": 1e3}, {}]));
        assert_eq!(parsed.map(|p| p.len()), Ok(2));
        assert!(sizes_from_json(&serde_json::json!([{"n": 1e30}])).is_err());
        assert!(sizes_from_json(&serde_json::json!({"n": 1})).is_err());
    }

    #[test]
    fn kendall_tau_counts_agreeing_orders() {
        assert_eq!(kendall_tau(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]), 1.0);
        assert_eq!(kendall_tau(&[(1.0, 30.0), (2.0, 20.0), (3.0, 10.0)]), -1.0);
    }
}
