//! Work counts (`cairn predict`): the body walked once; every operator, builtin call and
//! comparison an *operation*, every element read or written through an index an *access*, each
//! term kept per [`Lane`] — one host thread, the host's pool of lanes, device lanes (and the
//! launches of device regions, and the elements a `transfer` moves over the host link). The
//! module comment of `predict` says how loops, branches and calls count.

use std::collections::BTreeMap;

use cairn_hir::body::{BinaryOp, Block, Body, Else, Expr, ExprId, Literal, Stmt, fn_body};
use cairn_hir::builtins::Builtin;
use cairn_hir::check::CallTarget;
use cairn_hir::representative_check;
use cairn_hir::scopes::{LocalRef, body_scopes};
use cairn_hir::types::{Extent, Ty};
use cairn_hir::{Item, Workspace};

use super::{UNKNOWN, UNKNOWN_VALUE};

/// Where counted work runs, and what it is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Lane {
    /// One host thread: operations and accesses.
    Serial,
    /// A host `parallel` region or collector: split over the lanes.
    Pool,
    /// Device lanes: operations and accesses on the device.
    Device,
    /// Device regions started (their count in the operations' place).
    Launch,
    /// Elements transferred between host and device (in the accesses' place).
    Link,
}

/// Work as a sum of monomials: per (sizes multiplied, lane), its operations and accesses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Work {
    terms: BTreeMap<(Vec<String>, Lane), (f64, f64)>,
}

/// Work counted at some sizes, lane by lane: (operations, accesses).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Counts {
    pub serial: (f64, f64),
    pub pool: (f64, f64),
    pub device: (f64, f64),
    pub launches: f64,
    pub link: f64,
}

impl Counts {
    /// Everything counted, as one number (which branch is dearer).
    fn total(&self) -> f64 {
        self.serial.0
            + self.serial.1
            + self.pool.0
            + self.pool.1
            + self.device.0
            + self.device.1
            + self.launches
            + self.link
    }
}

impl Work {
    fn ops(n: f64) -> Work {
        Work::unit(n, 0.0)
    }

    fn unit(ops: f64, accesses: f64) -> Work {
        Work::on(Lane::Serial, ops, accesses)
    }

    fn on(lane: Lane, ops: f64, accesses: f64) -> Work {
        let mut work = Work::default();
        if ops != 0.0 || accesses != 0.0 {
            work.terms.insert((Vec::new(), lane), (ops, accesses));
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

    /// The work times a trip count; `into` moves its serial work into lanes (a region's).
    fn times(&self, trips: &Size, into: Option<Lane>) -> Work {
        let mut out = Work::default();
        for ((vars, lane), (o, a)) in &self.terms {
            let lane = match (lane, into) {
                (Lane::Serial, Some(into)) => into,
                (lane, _) => *lane,
            };
            for (coefficient, factor) in &trips.terms {
                let mut vars = vars.clone();
                vars.extend(factor.iter().cloned());
                vars.sort();
                let entry = out.terms.entry((vars, lane)).or_insert((0.0, 0.0));
                entry.0 += o * coefficient;
                entry.1 += a * coefficient;
            }
        }
        out
    }

    /// Sizes renamed (a callee's parameters to the caller's sizes).
    fn renamed(&self, names: &BTreeMap<String, Size>) -> Work {
        let mut out = Work::default();
        for ((vars, lane), (o, a)) in &self.terms {
            let mut size = Size::constant(1.0);
            for var in vars {
                let factor = names.get(var).cloned().unwrap_or_else(Size::unknown);
                size = size.product(&factor);
            }
            out.add(&Work::on(*lane, *o, *a).times(&size, None));
        }
        out
    }

    pub(super) fn unknown(&self) -> bool {
        self.terms.keys().any(|(vars, _)| vars.iter().any(|v| v == UNKNOWN))
    }

    pub(super) fn parallel(&self) -> bool {
        self.terms.keys().any(|(_, lane)| *lane != Lane::Serial)
    }

    /// True when some of the work runs on a device (or crosses the host link).
    pub fn device(&self) -> bool {
        self.terms.keys().any(|(_, lane)| matches!(lane, Lane::Device | Lane::Launch | Lane::Link))
    }

    /// The counts at `sizes` (missing sizes are unknown), lane by lane.
    pub(super) fn at(&self, sizes: &BTreeMap<String, f64>) -> Counts {
        let mut out = Counts::default();
        for ((vars, lane), (o, a)) in &self.terms {
            let factor: f64 = vars.iter().map(|v| sizes.get(v).copied().unwrap_or(UNKNOWN_VALUE)).product();
            let (o, a) = (o * factor, a * factor);
            match lane {
                Lane::Serial => (out.serial.0 += o, out.serial.1 += a),
                Lane::Pool => (out.pool.0 += o, out.pool.1 += a),
                Lane::Device => (out.device.0 += o, out.device.1 += a),
                Lane::Launch => (out.launches += o, ()),
                Lane::Link => (out.link += a, ()),
            };
        }
        out
    }

    /// The formula, term by term (`n: 3 ops, 1 accesses (split over the lanes)`).
    pub(super) fn formula(&self) -> Vec<String> {
        self.terms
            .iter()
            .map(|((vars, lane), (o, a))| {
                let size = if vars.is_empty() { "1".to_string() } else { vars.join("·") };
                match lane {
                    Lane::Serial => format!("{size}: {o} ops, {a} accesses"),
                    Lane::Pool => format!("{size}: {o} ops, {a} accesses (split over the lanes)"),
                    Lane::Device => format!("{size}: {o} ops, {a} accesses (device lanes)"),
                    Lane::Launch => format!("{size}: {o} device launches"),
                    Lane::Link => format!("{size}: {a} elements over the host link"),
                }
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

    fn is_unknown(&self) -> bool {
        self.terms.iter().any(|(_, vars)| vars.iter().any(|v| v == UNKNOWN))
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
            return Work::ops(1.0).times(&Size::unknown(), None);
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
                let cost = |w: &Work| w.at(&big).total();
                work.add(if cost(&then) >= cost(&other) { &then } else { &other });
                work
            }
            Stmt::While { cond, body: inner } => {
                let mut work = self.expr(*cond);
                work.add(&self.block(inner));
                work.times(&Size::unknown(), None)
            }
            Stmt::ForRange { lo, hi, body: inner, .. } => {
                let trips = self.size(*hi).minus(&self.size(*lo));
                let mut work = self.block(inner);
                work.add(&Work::ops(1.0));
                work.times(&trips, None)
            }
            Stmt::ForEach { iterable, body: inner, .. } => {
                let trips = self.extent_of(*iterable);
                let mut work = self.block(inner);
                work.add(&Work::unit(1.0, 1.0));
                work.times(&trips, None)
            }
            Stmt::Each { count, body: inner, .. } => {
                let trips = self.size(*count);
                self.block(inner).times(&trips, None)
            }
            Stmt::Parallel { count, body: inner, .. } => {
                let trips = self.size(*count);
                let mut work = self.block(inner).times(&trips, Some(self.lane_of(id)));
                work.add(&self.launch_of(id));
                work
            }
            Stmt::Collect(collector) => {
                let trips = self.size(collector.count);
                let mut work = self.expr(collector.value);
                if let Some(pred) = collector.pred {
                    work.add(&self.expr(pred));
                }
                work.add(&Work::unit(1.0, 1.0));
                // A device collector runs on device lanes however it is written; a host one is
                // split over the lanes when written `parallel`.
                let lane = match self.lane_of(id) {
                    Lane::Device => Some(Lane::Device),
                    _ => collector.parallel.then_some(Lane::Pool),
                };
                let mut work = work.times(&trips, lane);
                work.add(&self.launch_of(id));
                work
            }
            Stmt::Match { subject, arms } => {
                let mut work = self.expr(*subject);
                let mut dearest = Work::default();
                let big: BTreeMap<String, f64> = BTreeMap::new();
                for arm in arms.iter() {
                    let w = self.block(&arm.body);
                    if w.at(&big).total() > dearest.at(&big).total() {
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
                        work.add(&Work::ops(1.0).times(&Size::unknown(), None));
                    }
                    // A transfer moves its destination's elements (as many as its source's) over
                    // the host link: the side whose extent can be counted.
                    Some(CallTarget::Builtin(Builtin::Transfer)) if args.len() == 2 => {
                        let dst = self.extent_of(args[0]);
                        let elements = if dst.is_unknown() { self.extent_of(args[1]) } else { dst };
                        work.add(&Work::on(Lane::Link, 0.0, 1.0).times(&elements, None));
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
            Expr::Call { args, .. } if args.len() == 1 && self.is_builtin(e, Builtin::Len) => self.extent_of(args[0]),
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

    /// Where the lanes of region (or collector) `stmt` run: device lanes or the host's pool.
    fn lane_of(&self, stmt: cairn_hir::body::StmtId) -> Lane {
        let db = self.counter.workspace.db();
        match representative_check(db, self.item).region(stmt) {
            Some(region) if region.device => Lane::Device,
            _ => Lane::Pool,
        }
    }

    /// One launch when region (or collector) `stmt` runs on device lanes.
    fn launch_of(&self, stmt: cairn_hir::body::StmtId) -> Work {
        match self.lane_of(stmt) {
            Lane::Device => Work::on(Lane::Launch, 1.0, 0.0),
            _ => Work::default(),
        }
    }

    fn is_builtin(&self, e: ExprId, builtin: Builtin) -> bool {
        let db = self.counter.workspace.db();
        matches!(representative_check(db, self.item).call_target(e), Some(CallTarget::Builtin(b)) if *b == builtin)
    }
}

/// The work of `item` in the accepted program of `workspace`.
pub fn work_of(workspace: &Workspace, item: Item) -> Work {
    Counter { workspace, active: Vec::new(), memo: BTreeMap::new() }.function(item)
}
