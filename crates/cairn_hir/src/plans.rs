//! Plans (language §26): `plan f { grain G; lanes L; fuse K; … }` chooses how `f`'s regions are
//! split, never what they compute, so a plan cannot change a result, a row or a guard.
//!
//! [`plan_def`] reads a plan's declaration; [`plan_refusal`] judges it (`E-PLAN`: a plan naming
//! no function with a `parallel` statement, an unknown or repeated item, a value out of range, a
//! device item for a function with no device region, a `fuse` with no two regions it may join);
//! [`second_plans`] refuses a second schedule plan of one function. [`fn_schedule`] is what the
//! lowering reads: the grain, lane cap and fusion width of a function's regions, and
//! [`fusion_chains`] the runs of regions a `fuse` joins. Fusion needs adjacent regions in one
//! block over a count spelled the same way, lanes touching arrays only at their own index, and
//! bodies that cannot trap, loop unboundedly or be observed: in this build, assignments, `let`,
//! `if` and `for` over constant bounds, over operators that cannot trap (comparisons, bitwise and
//! logical operators, float arithmetic, `min`, `max`, conversions to a float) and calls of
//! functions whose rows do none of that, given values. A bound `reduce` over the same extent
//! whose yield is such an expression may end a chain (it is judged with the chain, and runs after
//! the fused regions). A plan selecting an implementation (`plan f use g;`, §27) is judged with
//! the implementations (`implementations.rs`).

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::body::{BinaryOp, BinderId, Block, Else, Expr, ExprId, Stmt, StmtId, UnaryOp, fn_body};
use crate::builtins::Builtin;
use crate::check::{CallTarget, FnCheck, check_fn};
use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::input::{Item, ItemKind, Program};
use crate::scope::{Lookup, Resolver};
use crate::types::{Extent, Ty};

/// One item of a plan, as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanItem {
    pub word: Arc<str>,
    /// `None` when the value was not a natural literal (the parser refused it, `E-STATIC`).
    pub value: Option<u64>,
}

/// A plan's declaration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PlanDef {
    /// The function it plans, as written.
    pub target: Arc<[Arc<str>]>,
    /// `plan f use g;`: a selection of an implementation, not a schedule.
    pub selection: bool,
    pub items: Arc<[PlanItem]>,
}

/// How a function's host regions are split (what the lowering reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// At least this many indices per claim (`0`: the default, 8,192 elements' work).
    pub grain: u64,
    /// At most this many lanes (`0`: every lane of the pool).
    pub lanes: u32,
    /// At most this many adjacent regions run as one traversal (`0`: none).
    pub fuse: u32,
    /// Device regions: the threads of a block (`0`: the default, 256).
    pub block: u32,
    /// Device regions: the consecutive indices each thread runs (`0`: one).
    pub per_lane: u32,
}

#[salsa::tracked(returns(ref))]
pub fn plan_def(db: &dyn Db, item: Item) -> PlanDef {
    let node = item.syntax(db).syntax_node();
    let Some(plan) = ast::Plan::cast(node) else { return PlanDef::default() };
    let target: Vec<Arc<str>> = plan
        .target()
        .map(|p| p.segments().map(|s| Arc::from(s.syntax().text().to_string().trim())).collect())
        .unwrap_or_default();
    let items: Vec<PlanItem> = plan
        .items()
        .map(|it| PlanItem {
            word: it.word().map_or_else(|| Arc::from(""), |t| Arc::from(t.text())),
            value: it.value().and_then(|t| t.text().parse::<u64>().ok()),
        })
        .collect();
    PlanDef { target: Arc::from(target), selection: plan.plan_use().is_some(), items: Arc::from(items) }
}

/// The function a plan names, if it names one.
pub fn plan_target(db: &dyn Db, plan: Item) -> Option<Item> {
    let def = plan_def(db, plan);
    let scope = Resolver::new(db);
    let module = scope.module_of(plan);
    match scope.resolve_path(&module, &def.target, |k| k == ItemKind::Fn) {
        Lookup::Found(decl) if !crate::foreign::is_extern(db, decl.item) => Some(decl.item),
        _ => None,
    }
}

/// The items a host region takes, and their ranges.
const HOST_ITEMS: [(&str, u64, u64); 3] = [("grain", 1, (1 << 63) - 1), ("lanes", 1, 1024), ("fuse", 2, 16)];
/// The items of device regions, and their ranges (`block` also a multiple of 32, `vector` a
/// power of two).
const DEVICE_ITEMS: [(&str, u64, u64); 5] =
    [("block", 32, 1024), ("per_lane", 1, 65536), ("unroll", 1, 32), ("vector", 2, 16), ("stage", 1, 32)];

/// `E-PLAN` for one schedule plan, judged alone (a selection is judged with the implementations).
pub(crate) fn plan_refusal(db: &dyn Db, plan: Item) -> Option<Diag> {
    let def = plan_def(db, plan);
    let refuse = |message: String| Some(Diag::new("E-PLAN", message, Anchor::Item));
    let written = def.target.join(".");
    // A selection is an implementation rule, judged with the others (`implementations.rs`).
    if def.selection {
        return None;
    }
    let Some(function) = plan_target(db, plan) else {
        return refuse(format!("The plan names {written}, and no function of that name is visible here."));
    };
    let body = fn_body(db, function);
    let regions = parallel_statements(&body);
    // A device `reduce` is a kernel of its own: `block` and `per_lane` shape it, even in a
    // function with no region.
    let reduce_only = regions.is_empty() && has_device_reduce(body, check_fn(db, function));
    if regions.is_empty() && !reduce_only {
        return refuse(format!(
            "{written} has no `parallel` statement for a plan to split (a collector is split by its count alone): remove the plan, or write the loop as `parallel i in n {{ … }}`."
        ));
    }
    // Which kinds of region the function has (a region's lanes are device lanes when the check
    // said so).
    let check = check_fn(db, function);
    let device_regions: Vec<&crate::check::Region> =
        check.regions.iter().filter(|r| r.device && regions.contains(&r.stmt)).collect();
    let host_regions = regions.len() > device_regions.len() || check.error.is_some();
    let words: Vec<&str> = def.items.iter().map(|i| &*i.word).collect();
    for (a, b) in [("vector", "fuse"), ("stage", "vector"), ("stage", "fuse")] {
        if words.contains(&a) && words.contains(&b) {
            return refuse(format!(
                "`{a}` and `{b}` cannot share a plan: each reshapes how a lane reaches its arrays. Keep one."
            ));
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for item in def.items.iter() {
        let word: &str = &item.word;
        if seen.contains(&word) {
            return refuse(format!("The plan for {written} sets `{word}` twice: keep one."));
        }
        seen.push(word);
        if reduce_only && !matches!(word, "block" | "per_lane") {
            return refuse(format!(
                "{written} has no `parallel` statement, and the kernel of its device `reduce` takes only `block` and `per_lane`: remove `{word}`."
            ));
        }
        if let Some(&(_, lo, hi)) = DEVICE_ITEMS.iter().find(|(w, _, _)| *w == word) {
            if device_regions.is_empty() && !reduce_only {
                return refuse(format!(
                    "`{word}` splits device regions, and {written} has none (its regions run on host threads): use `grain`, `lanes` or `fuse`."
                ));
            }
            if let Some(value) = item.value {
                let shaped = match word {
                    "block" => value % 32 == 0,
                    "vector" => value.is_power_of_two(),
                    _ => true,
                };
                if !(lo..=hi).contains(&value) || !shaped {
                    let shape = match word {
                        "block" => ", a multiple of 32",
                        "vector" => ", a power of two",
                        _ => "",
                    };
                    return refuse(format!("`{word} {value}` is out of range: `{word}` takes {lo} to {hi}{shape}."));
                }
                if let Some(message) = device_item_fit(word, value, &device_regions, &written) {
                    return refuse(message);
                }
            }
            continue;
        }
        if matches!(word, "grain" | "lanes") && !host_regions {
            return refuse(format!(
                "`{word}` splits host regions, and every region of {written} runs as device lanes: use `block`, `per_lane`, `unroll`, `vector` or `stage`."
            ));
        }
        let Some(&(_, lo, hi)) = HOST_ITEMS.iter().find(|(w, _, _)| *w == word) else {
            return refuse(format!(
                "A plan has no item `{word}`: host regions take `grain`, `lanes` and `fuse`; device regions `block`, `per_lane`, `unroll`, `vector` and `stage`."
            ));
        };
        if let Some(value) = item.value
            && !(lo..=hi).contains(&value)
        {
            return refuse(format!("`{word} {value}` is out of range: `{word}` takes {lo} to {hi}."));
        }
    }
    if let Some(fuse) = def.items.iter().find(|i| &*i.word == "fuse").and_then(|i| i.value) {
        let params = crate::signature::fn_signature(db, function).params.iter().map(|p| p.ty.clone()).collect();
        let row_of = |item: Item| crate::effects::effect_row(db, item).clone();
        if check.error.is_none() && chains(&body, check, params, &row_of, fuse as u32).is_empty() {
            return refuse(format!(
                "`fuse {fuse}` finds no two regions of {written} it may join: fusion needs adjacent `parallel` statements in one block over a count spelled the same way, whose lanes touch arrays only at their own index and whose bodies cannot trap, loop, call or be observed."
            ));
        }
    }
    None
}

/// Whether a device item with a valid value finds something to reshape in the function's device
/// regions: `vector W` chunks the arrays touched only at `[i]` (`W` elements in at most 16 bytes),
/// `stage R` tiles the read-only arrays read at `[i + d]` with `0 < |d| <= R`.
fn device_item_fit(word: &str, value: u64, regions: &[&crate::check::Region], written: &str) -> Option<String> {
    let arrays = || regions.iter().flat_map(|r| r.arrays.iter());
    match word {
        "vector" => {
            let chunked: Vec<_> = arrays().filter(|a| a.own_only).collect();
            if chunked.is_empty() {
                return Some(format!(
                    "`vector {value}` finds nothing to chunk in {written}: it groups adjacent indices' accesses to arrays the lanes touch only at their own index `[i]`, and none is."
                ));
            }
            if let Some(wide) = chunked.iter().find(|a| a.elem_bytes * value > 16) {
                return Some(format!(
                    "`vector {value}` would load {value} elements of {} ({} bytes each) in one access, and one access is at most 16 bytes: use `vector {}`.",
                    wide.name,
                    wide.elem_bytes,
                    (16 / wide.elem_bytes.max(1)).max(1)
                ));
            }
            None
        }
        "stage" => {
            let staged = arrays().any(|a| !a.written && a.offsets.iter().any(|d| *d != 0 && d.unsigned_abs() <= value));
            (!staged).then(|| {
                format!(
                    "`stage {value}` finds nothing to stage in {written}: it tiles read-only arrays the lanes read at neighbouring indices `x[i + d]` with `d` between -{value} and {value}, and none is."
                )
            })
        }
        _ => None,
    }
}

/// `E-PLAN` for a second schedule plan of one function: the first met in declaration order.
pub(crate) fn second_plans(db: &dyn Db) -> Option<(Item, Diag)> {
    let program = Program::get(db);
    let mut planned: Vec<Item> = Vec::new();
    for entry in program.items(db).iter().filter(|e| e.key.kind == ItemKind::Plan) {
        if plan_def(db, entry.item).selection {
            continue;
        }
        let Some(function) = plan_target(db, entry.item) else { continue };
        if planned.contains(&function) {
            let name = Resolver::new(db).full_name(function);
            return Some((
                entry.item,
                Diag::new(
                    "E-PLAN",
                    format!("{name} has a schedule plan already: put every item in one `plan {name} {{ … }}`."),
                    Anchor::Item,
                ),
            ));
        }
        planned.push(function);
    }
    None
}

/// Every planned function's schedule, from its first schedule plan, read once for the program.
/// Plans are not judged here: a program with a refused plan is never lowered.
#[salsa::tracked(returns(ref))]
fn schedules(db: &dyn Db, program: Program) -> std::collections::HashMap<Item, Schedule> {
    let mut out = std::collections::HashMap::new();
    for entry in program.items(db).iter().filter(|e| e.key.kind == ItemKind::Plan) {
        let def = plan_def(db, entry.item);
        let Some(function) = plan_target(db, entry.item).filter(|_| !def.selection) else { continue };
        let value = |word: &str| def.items.iter().find(|i| &*i.word == word).and_then(|i| i.value).unwrap_or(0);
        out.entry(function).or_insert(Schedule {
            grain: value("grain"),
            lanes: value("lanes") as u32,
            fuse: value("fuse") as u32,
            block: value("block") as u32,
            per_lane: value("per_lane") as u32,
        });
    }
    out
}

/// The schedule of `function`'s regions: its schedule plan's, or the defaults. A projection of
/// [`schedules`], so a lowering re-runs only when its own function's plan moved.
#[salsa::tracked]
pub fn fn_schedule(db: &dyn Db, function: Item) -> Schedule {
    schedules(db, Program::get(db)).get(&function).copied().unwrap_or_default()
}

/// The runs of `function`'s regions its plan's `fuse` joins, each of two or more regions.
#[salsa::tracked(returns(ref))]
pub fn fusion_chains(db: &dyn Db, function: Item) -> Arc<[Arc<[StmtId]>]> {
    let schedule = fn_schedule(db, function);
    let check = check_fn(db, function);
    if schedule.fuse < 2 || check.error.is_some() {
        return Arc::from(Vec::new());
    }
    let body = fn_body(db, function);
    let params = crate::signature::fn_signature(db, function).params.iter().map(|p| p.ty.clone()).collect();
    let row_of = |item: Item| crate::effects::effect_row(db, item).clone();
    // The regions of each chain (a `reduce` ending one is judged with it, and runs after it).
    let regions = chains(&body, check, params, &row_of, schedule.fuse)
        .into_iter()
        .map(|chain| chain.into_iter().filter(|s| matches!(body.stmt(*s), Stmt::Parallel { .. })).collect::<Vec<_>>())
        .filter(|chain| chain.len() >= 2)
        .map(Arc::from)
        .collect::<Vec<_>>();
    Arc::from(regions)
}

/// Whether a body has a device `reduce` (a collector whose lanes the check found are device
/// lanes).
fn has_device_reduce(body: &crate::body::Body, check: &FnCheck) -> bool {
    check.regions.iter().any(|r| {
        r.device && matches!(body.stmt(r.stmt), Stmt::Collect(c) if c.kind == crate::body::CollectKind::Reduce)
    })
}

/// Every `parallel` statement of a body.
fn parallel_statements(body: &crate::body::Body) -> Vec<StmtId> {
    (0..body.stmts.len()).map(|i| StmtId(i as u32)).filter(|&s| matches!(body.stmt(s), Stmt::Parallel { .. })).collect()
}

/// The fusable runs of adjacent regions in every block of a body, cut at `width`.
fn chains(
    body: &crate::body::Body,
    check: &FnCheck,
    params: Vec<Ty>,
    row_of: &dyn Fn(Item) -> Option<crate::effects::Row>,
    width: u32,
) -> Vec<Vec<StmtId>> {
    let mut blocks: Vec<Block> = vec![body.root.clone()];
    for stmt in &body.stmts {
        match stmt {
            Stmt::If { then, els, .. } => {
                blocks.push(then.clone());
                if let Some(Else::Block(b)) = els {
                    blocks.push(b.clone());
                }
            }
            Stmt::While { body: b, .. }
            | Stmt::ForRange { body: b, .. }
            | Stmt::ForEach { body: b, .. }
            | Stmt::Each { body: b, .. }
            | Stmt::Block(b)
            | Stmt::Unsafe(b) => blocks.push(b.clone()),
            Stmt::Match { arms, .. } => blocks.extend(arms.iter().map(|a| a.body.clone())),
            _ => {}
        }
    }
    let fuse = Fuse { body, check, params, row_of };
    let mut out = Vec::new();
    for block in blocks {
        let mut run: Vec<StmtId> = Vec::new();
        let mut flush = |run: &mut Vec<StmtId>| {
            for chunk in run.chunks(width.max(2) as usize) {
                if chunk.len() >= 2 {
                    out.push(chunk.to_vec());
                }
            }
            run.clear();
        };
        for &stmt in block.iter() {
            // A `reduce` over the same extent may end a chain.
            if !run.is_empty() && fuse.ends_chain(stmt) && fuse.same_count(run[run.len() - 1], stmt) {
                run.push(stmt);
                flush(&mut run);
                continue;
            }
            let joins = fuse.fusable(stmt) && run.last().is_none_or(|&prev| fuse.same_count(prev, stmt));
            if joins {
                run.push(stmt);
            } else {
                flush(&mut run);
                if fuse.fusable(stmt) {
                    run.push(stmt);
                }
            }
        }
        flush(&mut run);
    }
    out
}

/// The fusion rules over one checked body.
struct Fuse<'a> {
    body: &'a crate::body::Body,
    check: &'a FnCheck,
    /// The function's parameter types.
    params: Vec<Ty>,
    /// The callees' rows (a call in a fused body must be unable to trap, loop, write or be
    /// observed).
    row_of: &'a dyn Fn(Item) -> Option<crate::effects::Row>,
}

impl Fuse<'_> {
    /// The type of the binding a name expression means.
    fn local_ty(&self, e: ExprId) -> Option<&Ty> {
        match self.check.resolution(e) {
            crate::check::Resolution::Local(crate::scopes::LocalRef::Param(k)) => self.params.get(k as usize),
            crate::check::Resolution::Local(crate::scopes::LocalRef::Binder(b)) => {
                self.check.binder_types.get(b.0 as usize)
            }
            _ => None,
        }
    }

    fn ty(&self, e: ExprId) -> &Ty {
        self.check.expr_types.get(e.0 as usize).unwrap_or(&Ty::Error)
    }

    /// The count of a region or collector.
    fn count(&self, stmt: StmtId) -> Option<ExprId> {
        match self.body.stmt(stmt) {
            Stmt::Parallel { count, .. } => Some(*count),
            Stmt::Collect(c) => Some(c.count),
            _ => None,
        }
    }

    /// A bound `reduce` whose yield cannot trap and reads arrays only at its own index: it may
    /// end a chain (language §26).
    fn ends_chain(&self, stmt: StmtId) -> bool {
        let Stmt::Collect(c) = self.body.stmt(stmt) else { return false };
        if c.kind != crate::body::CollectKind::Reduce || c.target.is_some() {
            return false;
        }
        let checked = c.op == Some(crate::body::ReduceOp::Add) && !self.ty(c.value).is_float();
        let extent = match self.body.expr(self.body.unparen(c.count)) {
            Expr::Name(name) => Extent::Name(name.clone()),
            Expr::Literal(crate::body::Literal::Int { value: Some(v), .. }) => Extent::Literal(*v as u64),
            _ => return false,
        };
        !checked && (Lane { fuse: self, binder: c.binder, extent }).expr(c.value)
    }

    /// Two regions count over the same extent, spelled the same way (one name meaning one
    /// binding, or one literal).
    fn same_count(&self, a: StmtId, b: StmtId) -> bool {
        let (Some(ca), Some(cb)) = (self.count(a), self.count(b)) else {
            return false;
        };
        let (ca, cb) = (self.body.unparen(ca), self.body.unparen(cb));
        match (self.body.expr(ca), self.body.expr(cb)) {
            (Expr::Name(x), Expr::Name(y)) => x == y && self.check.resolution(ca) == self.check.resolution(cb),
            (Expr::Literal(x), Expr::Literal(y)) => x == y,
            _ => false,
        }
    }

    /// A region whose lanes touch arrays only at their own index and cannot trap, loop, call or
    /// be observed.
    fn fusable(&self, stmt: StmtId) -> bool {
        let Stmt::Parallel { binder, count, body } = self.body.stmt(stmt) else { return false };
        let extent = match self.body.expr(self.body.unparen(*count)) {
            Expr::Name(name) => Extent::Name(name.clone()),
            Expr::Literal(crate::body::Literal::Int { value: Some(v), .. }) => Extent::Literal(*v as u64),
            _ => return false,
        };
        let lane = Lane { fuse: self, binder: *binder, extent };
        lane.block(body)
    }
}

/// The body of one region being judged for fusion.
struct Lane<'a, 'b> {
    fuse: &'a Fuse<'b>,
    binder: BinderId,
    extent: Extent,
}

impl Lane<'_, '_> {
    fn block(&self, block: &Block) -> bool {
        block.iter().all(|&s| self.stmt(s))
    }

    fn stmt(&self, id: StmtId) -> bool {
        let body = self.fuse.body;
        match body.stmt(id) {
            Stmt::Let { init, .. } => self.expr(*init),
            Stmt::Assign { target, op, value } => {
                let target_ok = match body.expr(body.unparen(*target)) {
                    Expr::Name(_) => true,
                    Expr::Index { .. } => self.expr(*target),
                    _ => false,
                };
                let op_ok = match op {
                    None => true,
                    Some(op) => self.operator(*op, *target),
                };
                target_ok && op_ok && self.expr(*value)
            }
            // A loop over constant bounds ends.
            Stmt::ForRange { lo, hi, body: inner, .. } => {
                let constant = |e: ExprId| {
                    matches!(body.expr(body.unparen(e)), Expr::Literal(_))
                        || matches!(self.fuse.check.resolution(body.unparen(e)), crate::check::Resolution::Const(_))
                };
                constant(*lo) && constant(*hi) && self.block(inner)
            }
            Stmt::If { cond, then, els } => {
                self.expr(*cond)
                    && self.block(then)
                    && match els {
                        None => true,
                        Some(Else::Block(b)) => self.block(b),
                        Some(Else::If(nested)) => self.stmt(*nested),
                    }
            }
            _ => false,
        }
    }

    /// True when `op` on the operands' type cannot trap.
    fn operator(&self, op: BinaryOp, operand: ExprId) -> bool {
        match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => self.fuse.ty(operand).is_float(),
            BinaryOp::Rem => false,
            _ => true,
        }
    }

    fn expr(&self, e: ExprId) -> bool {
        let body = self.fuse.body;
        match body.expr(e) {
            Expr::Literal(_) | Expr::Name(_) => true,
            Expr::Paren(inner) => self.expr(*inner),
            Expr::Field { base, .. } => self.expr(*base),
            Expr::Index { base, indices } => {
                // Only the lane's own element of a view whose extent is the count (its bounds
                // guard is proved).
                let own = matches!(&indices[..], [i] if matches!(body.expr(body.unparen(*i)), Expr::Name(_))
                    && self.fuse.check.resolution(body.unparen(*i)) == crate::check::Resolution::Local(crate::scopes::LocalRef::Binder(self.binder)));
                let extent_ok =
                    matches!(self.fuse.local_ty(body.unparen(*base)), Some(Ty::View(v)) if v.extent == self.extent);
                own && extent_ok && matches!(body.expr(body.unparen(*base)), Expr::Name(_))
            }
            Expr::Unary { op, operand } => {
                (matches!(op, UnaryOp::Not | UnaryOp::BitNot) || self.fuse.ty(e).is_float()) && self.expr(*operand)
            }
            Expr::Binary { op, lhs, rhs } => {
                let safe = match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => self.fuse.ty(e).is_float(),
                    BinaryOp::Rem => false,
                    _ => true,
                };
                safe && self.expr(*lhs) && self.expr(*rhs)
            }
            Expr::Call { args, .. } => {
                let builtin = match self.fuse.check.call_target(e) {
                    Some(CallTarget::Builtin(b)) => *b,
                    // A declared function whose row cannot trap, loop, write or be observed, given
                    // values only (a view or borrow would reach past the lane's own index).
                    Some(CallTarget::Function(callee, _)) => {
                        let quiet = (self.fuse.row_of)(*callee).is_some_and(|row| {
                            row.iter().all(|effect| {
                                matches!(&**effect, "ffi_precondition" | "local_read" | "stack_storage" | "zero_init")
                            })
                        });
                        let values = args
                            .iter()
                            .all(|a| !matches!(self.fuse.check.argument_type(*a), Some(Ty::View(_) | Ty::Borrow(..))));
                        return quiet && values && args.iter().all(|a| self.expr(*a));
                    }
                    _ => return false,
                };
                let safe = matches!(builtin, Builtin::Min | Builtin::Max | Builtin::F32 | Builtin::F64);
                safe && args.iter().all(|a| self.expr(*a))
            }
            _ => false,
        }
    }
}
