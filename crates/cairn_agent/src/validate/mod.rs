//! Validation of an implementation (tools.md §3.14): one implementation run side by side with
//! its reference on generated edge-case inputs — evidence from finitely many cases, not a proof.
//! `cairn validate` and implementation sessions (protocol.md §9) both ask [`validate`].
//!
//! The inputs come from the signature and the tiles (`cases.rs`); each case is a `test` block of a
//! generated harness (`harness.rs`) appended to the implementation's file, built twice: once with
//! no selection of the reference (its blocks run the reference, and the implementation where its
//! condition holds) and once with `plan f use g;` (its blocks run the reference under the
//! dispatch). Building and running is IO, which this crate does not do: a [`Runner`] handed in by
//! the caller builds a program and runs each block in its own process. Agreement (`agree.rs`):
//! both trap, or the same values (integers and booleans bit-equal, floats within the policy's
//! tolerance). A failing case is shrunk over simpler neighbours (smaller extents, scalars at
//! zero, zeroed views); the caller keeps it in the regressions file ([`Regressions`]), which later
//! runs pass back as `kept` and try first.
//!
//! Z3's bounded comparison runs beside the cases (`smt.rs`): under the condition, for the
//! implementation or a tuned instance, its counterexample replayed natively as one more case.
//! The record goes to the candidate history (`record.rs`) when the caller keeps one.
//!
//! Device code runs only emulated (`--emulate`: the runner builds it for host threads, judged
//! against a device target); the runner says so ([`Runner::emulation`]) and the evidence is then
//! `finite-tested-emulated`. Without emulation a program doing device work cannot be built here,
//! and the validation is `unknown` with the build's reason.

pub mod agree;
pub mod cases;
pub mod harness;
mod record;
mod smt;
pub mod timing;

pub use record::history_record;
use smt::smt_check;
pub use smt::{Replay, Smt};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cairn_hir::body::{BinaryOp, Expr, ExprId};
use cairn_hir::check::Resolution;
use cairn_hir::instance::{Instance, InstanceArg};
use cairn_hir::{Item, ItemKind, Resolver, SourceText, Workspace};
use cairn_syntax::ast::{self, AstNode};

pub use agree::Outcome;
pub use cases::Case;
use cases::Shape;
use harness::{Callee, Run};

/// Builds programs and runs their blocks: the IO a validation needs, handed in by its caller.
pub trait Runner: Sync {
    /// Builds `files` (a program) as a test runner, then runs each of `blocks` (test names) in a
    /// process of its own with standard input on the null device, within `seconds`: each block's
    /// outcome, or why it decided nothing (it timed out, or could not start). `Err` when the
    /// program did not build.
    fn run(
        &self,
        files: &[SourceText],
        blocks: &[String],
        seconds: u64,
    ) -> Result<Vec<Result<Outcome, String>>, String>;

    /// `cairn.explain/1` of the functions `symbols` names (all when empty) in the program `files`:
    /// a reading of the code this toolchain emits (the edit host's `explain` request asks it).
    fn explain(&self, files: &[SourceText], symbols: &[String]) -> Result<serde_json::Map<String, Value>, String> {
        let _ = (files, symbols);
        Err("this host does not compile to machine code, so it cannot read the emitted code".into())
    }

    /// How the runs since the last call were confined (agent-written code: docs/sandbox.md), for
    /// the record; `None` from a runner that runs nothing natively.
    fn confinement(&self) -> Option<Value> {
        None
    }

    /// What the builds since the last call emulated: `Some` when one of them ran device work on
    /// host threads (`--emulate`), which makes the evidence `finite-tested-emulated`.
    fn emulation(&self) -> Option<Emulation> {
        None
    }

    /// Builds `files` like [`Runner::run`], then runs each of `blocks` once under a profiler:
    /// each block's reading (the tool and its event counts), or why it has none. `Err` when the
    /// program did not build or this runner has no profiler.
    fn profile(
        &self,
        files: &[SourceText],
        blocks: &[String],
        seconds: u64,
    ) -> Result<Vec<Result<Reading, String>>, String> {
        let _ = (files, blocks, seconds);
        Err("this runner has no profiler".into())
    }

    /// A runner like this one that builds device work for host threads, judged against device
    /// target `target` (an implementation session opened with `emulate`); `Err` says why this
    /// runner cannot.
    fn emulating(&self, target: &str) -> Result<Box<dyn Runner + '_>, String> {
        Err(format!("this server's runner cannot emulate {target}: its builds run host code only"))
    }
}

/// A profiler's reading of one run (protocol §18.4, kind `profile`): the tool as it names itself
/// and its event counts by the tool's own event names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub tool: String,
    pub counts: BTreeMap<String, u64>,
}

/// A record's `emulation` (tools.md §4.2): the device target emulated work was judged against,
/// and what its results are evidence of. `cairn build`, `run`, `test` and `validate` write it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Emulation {
    pub judged_against: String,
    pub claim: String,
}

impl Emulation {
    /// The emulation of device target `target`.
    pub fn of(target: &str) -> Emulation {
        Emulation {
            judged_against: target.to_string(),
            claim: format!(
                "device work ran on host threads as an emulation of {target}: evidence about the program's results, never about the device"
            ),
        }
    }
}

/// The evidence class of a passed or failed finite validation whose runs were native.
pub const FINITE: &str = "finite-tested";
/// The evidence class of one whose runs emulated device work on host threads.
pub const FINITE_EMULATED: &str = "finite-tested-emulated";

/// The policy (tools.md §3.14, protocol.md §9.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    pub tolerance: Tolerance,
    pub domain: Domain,
    /// At most this many generated cases (kept regressions come on top).
    pub budget: usize,
    pub seed: u64,
    /// At most this many simpler neighbours tried when shrinking a failing case.
    pub probes: usize,
    /// Each call's limit, in seconds.
    pub seconds: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tolerance {
    pub absolute: f64,
    pub relative: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Domain {
    /// The largest extent a case uses. Absent: 256, or past the largest threshold the `when`
    /// condition compares an extent with (at most 2^20), so that the implementation runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_extent: Option<u64>,
}

/// The largest extent without a policy's, before the `when` condition's thresholds.
const LARGEST: u64 = 256;

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            tolerance: Tolerance::default(),
            domain: Domain::default(),
            budget: 96,
            seed: 1,
            probes: 16,
            seconds: 10,
        }
    }
}

/// The regressions file: the policy it pinned and the failing cases kept, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regressions {
    pub protocol: String,
    pub reference: String,
    pub policy: Policy,
    pub cases: Vec<Kept>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kept {
    pub implementation: String,
    pub case: Case,
}

pub const REGRESSIONS: &str = "cairn.regressions/1";
const PROTOCOL: &str = "cairn.validation/1";

/// The `cairn.validation/1` record.
#[derive(Serialize, Default)]
pub struct Record {
    pub protocol: &'static str,
    pub status: &'static str,
    pub implementation: String,
    pub reference: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finite: Option<Finite>,
    pub smt: Smt,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<&'static str>,
    /// Set when device work ran on host threads: the evidence is then `finite-tested-emulated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<Emulation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    pub agreement: agree::Statement,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub compiler: String,
    /// How the runs were confined (the runner's account: sandboxed or not, the limits, what the
    /// runs changed in their disposable workspaces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confinement: Option<Value>,
    /// The id of the candidate-history record made of this validation, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
}

#[derive(Serialize, Default)]
pub struct Finite {
    pub status: &'static str,
    pub cases: usize,
    pub implementation_ran: usize,
    pub kept_cases: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<Failed>,
    /// Where the failing case was kept (the caller writes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Serialize)]
pub struct Failed {
    pub inputs: Case,
    pub reference: agree::Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implementation: Option<agree::Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<agree::Outcome>,
}

#[derive(Serialize, Default)]
pub struct Coverage {
    generated: usize,
    kept: usize,
    /// Kept cases that no longer fit the signature (left out).
    #[serde(skip_serializing_if = "is_zero")]
    kept_skipped: usize,
    ran: usize,
    extents: Vec<u64>,
    tiles: Vec<u64>,
}

/// What a validation found: its record, the exit status `cairn validate` gives it (0 passed;
/// 1 failed or rejected; 2 unknown), and the failing case to keep.
pub struct Validation {
    pub record: Record,
    pub code: u8,
    pub keep: Option<Case>,
}

/// A `rejected` validation of `implementation`.
pub fn rejected(implementation: &str, reason: String) -> Validation {
    let record = Record {
        protocol: PROTOCOL,
        status: "rejected",
        implementation: implementation.to_string(),
        reason: Some(reason),
        compiler: crate::compiler::profile(),
        ..Record::default()
    };
    Validation { record, code: 1, keep: None }
}

fn unknown(mut record: Record, reason: String) -> Validation {
    record.status = "unknown";
    record.reason = Some(reason);
    Validation { record, code: 2, keep: None }
}

/// Validates `symbol` — an implementation `g`, or one instance `g[8]` of a tuned one — of the
/// program in `workspace` (checked and accepted by the caller) under `policy`, trying `kept`
/// (this implementation's kept cases) first.
pub fn validate(
    workspace: &Workspace,
    symbol: &str,
    policy: &Policy,
    kept: &[Case],
    runner: &dyn Runner,
) -> Validation {
    let mut validation = validate_runs(workspace, symbol, policy, kept, runner);
    validation.record.confinement = runner.confinement();
    // Cases that ran device work on host threads are evidence about results, not the device.
    if let Some(emulation) = runner.emulation() {
        if validation.record.evidence.is_some() {
            validation.record.evidence = Some(FINITE_EMULATED);
        }
        validation.record.emulation = Some(emulation);
    }
    validation
}

/// [`validate`] without the runner's account of confinement.
fn validate_runs(
    workspace: &Workspace,
    symbol: &str,
    policy: &Policy,
    kept: &[Case],
    runner: &dyn Runner,
) -> Validation {
    let (written, values) = split_symbol(symbol);
    let db = workspace.db();
    let scope = Resolver::new(db);
    let Some(item) = own_functions(workspace).find(|&i| *scope.full_name(i) == *written) else {
        return rejected(symbol, format!("No function {written} in the program."));
    };
    let Some(reference) = cairn_hir::implementations::implementation_reference(db, item) else {
        return rejected(symbol, format!("{written} is not an implementation (`implements f`)."));
    };
    let reference_name = scope.full_name(reference).to_string();
    let mut record = Record {
        protocol: PROTOCOL,
        implementation: symbol.to_string(),
        reference: reference_name.clone(),
        agreement: agree::Statement::of(&policy.tolerance),
        compiler: crate::compiler::profile(),
        ..Record::default()
    };
    // The instance: a tuned implementation is validated one instance at a time.
    let tuned = cairn_hir::implementations::tuned_instances(db, item);
    let instance = if tuned.is_empty() {
        if !values.is_empty() {
            return rejected(symbol, format!("{written} is not tuned: name it without values."));
        }
        Instance::monomorphic(db, item)
    } else {
        let args: Vec<InstanceArg> = values.iter().map(|&v| InstanceArg::Nat(v)).collect();
        match tuned.iter().find(|t| ***t == *args) {
            Some(args) => Instance::new(db, item, args.clone()),
            None => {
                record.instances = tuned.iter().map(|args| Instance::new(db, item, args.clone()).display(db)).collect();
                return unknown(record, format!("{written} is tuned: name one of its instances."));
            }
        }
    };
    record.identity = cairn_hir::implementations::identity(db, instance);
    let signature = cairn_hir::fn_signature(db, reference);
    let shape = match Shape::of(signature) {
        Ok(shape) => shape,
        Err(why) => return unknown(record, format!("The signature cannot be fed: {why}.")),
    };
    let (tiles, thresholds, scalar_values) = tiles(workspace, instance, reference);
    // Without a policy's largest extent: far enough to reach every tile's partial second tile and
    // past every threshold (at least 256, at most 2^20), so that what the code names is tried.
    let largest = policy.domain.largest_extent.unwrap_or_else(|| {
        let reach = tiles.iter().map(|t| t + (t / 2).max(1)).chain(thresholds.iter().map(|t| t + 1)).max().unwrap_or(0);
        reach.clamp(LARGEST, 1 << 20)
    });
    let mut tiles = tiles;
    tiles.extend(thresholds.iter().copied());
    tiles.sort_unstable();
    tiles.dedup();
    let extents = cases::extents(&tiles, largest);
    let generated = cases::generate(&shape, &extents, &scalar_values, policy.budget, policy.seed);
    // Kept cases first (those that still fit the signature), then the generated cases.
    let kept_cases: Vec<Case> = kept.iter().filter(|c| shape.fits(c).is_ok()).cloned().collect();
    let kept_skipped = kept.len() - kept_cases.len();
    let mut all: Vec<Case> = kept_cases.clone();
    all.extend(generated.iter().filter(|c| !kept_cases.contains(c)).cloned());
    record.coverage = Some(Coverage {
        generated: generated.len(),
        kept: kept_cases.len(),
        kept_skipped,
        ran: all.len(),
        extents: extents.clone(),
        tiles: tiles.clone(),
    });
    let setup = Setup::new(workspace, item, instance, reference, &shape, policy, runner);
    let results = match setup.run(&all) {
        Ok(results) => results,
        Err(reason) => return unknown(record, reason),
    };
    let implementation_ran = results.iter().filter(|r| r.implementation.is_some()).count();
    let mut finite = Finite {
        status: "passed",
        cases: all.len(),
        implementation_ran,
        kept_cases: kept_cases.len(),
        ..Finite::default()
    };
    let failing: Vec<usize> = (0..all.len()).filter(|&i| !results[i].agrees(&shape, &all[i], policy)).collect();
    if let Some(&first) = failing.iter().min_by_key(|&&i| simplicity(&all[i])) {
        // Shrink: simpler neighbours of the simplest failing case, while one still fails.
        let (mut case, mut result) = (all[first].clone(), results[first].clone());
        let mut budget = policy.probes;
        while budget > 0 {
            let mut probes = cases::probes(&case, &extents, &shape);
            probes.truncate(budget);
            if probes.is_empty() {
                break;
            }
            budget -= probes.len();
            let Ok(probed) = setup.run(&probes) else { break };
            match (0..probes.len()).find(|&i| !probed[i].agrees(&shape, &probes[i], policy)) {
                Some(i) => (case, result) = (probes[i].clone(), probed[i].clone()),
                None => break,
            }
        }
        // The implementation's own outcome where it ran and differs, else the dispatch's.
        let printed = shape.printed(&case);
        let implementation =
            result.implementation.clone().filter(|i| !agree::agrees(&printed, &result.reference, i, &policy.tolerance));
        let dispatch = implementation.is_none().then(|| result.dispatch.clone());
        finite.status = "failed";
        finite.failed =
            Some(Failed { inputs: case.clone(), reference: result.reference.clone(), implementation, dispatch });
        record.status = "failed";
        record.finite = Some(finite);
        record.evidence = Some(FINITE);
        return Validation { record, code: 1, keep: Some(case) };
    }
    if implementation_ran == 0 {
        let reason = "No generated case satisfied the implementation's condition, so it never ran: nothing was compared. Widen the policy's domain (largest_extent) or the condition.".to_string();
        finite.status = "unknown";
        finite.reason = Some(reason.clone());
        record.finite = Some(finite);
        return unknown(record, reason);
    }
    if let Some(reason) = results.iter().find_map(|r| r.undecided.clone()) {
        finite.status = "unknown";
        finite.reason = Some(reason.clone());
        record.finite = Some(finite);
        return unknown(record, reason);
    }
    // Z3, asked separately; its counterexample replayed natively.
    let (smt, replayed) = smt_check(workspace, &setup, reference, instance, &shape, policy);
    record.smt = smt;
    if let Some((case, result)) = replayed {
        let printed = shape.printed(&case);
        let implementation =
            result.implementation.clone().filter(|i| !agree::agrees(&printed, &result.reference, i, &policy.tolerance));
        let dispatch = implementation.is_none().then(|| result.dispatch.clone());
        finite.failed =
            Some(Failed { inputs: case.clone(), reference: result.reference.clone(), implementation, dispatch });
        record.status = "failed";
        record.finite = Some(finite);
        record.evidence = Some(FINITE);
        return Validation { record, code: 1, keep: Some(case) };
    }
    if record.smt.replay.as_ref().is_some_and(|r| r.status == "unknown") {
        record.finite = Some(finite);
        return unknown(record, "Z3's counterexample could not be decided when run natively.".into());
    }
    record.status = "passed";
    record.finite = Some(finite);
    record.evidence = Some(FINITE);
    Validation { record, code: 0, keep: None }
}

/// The instance `symbol` names (`g`, or `g[8]` of a tuned implementation), when it is one.
pub fn instance_named<'db>(workspace: &'db Workspace, symbol: &str) -> Option<Instance<'db>> {
    let db = workspace.db();
    let (name, values) = split_symbol(symbol);
    let item = workspace.function_named(&name)?;
    Some(if values.is_empty() {
        Instance::monomorphic(db, item)
    } else {
        Instance::new(db, item, values.iter().map(|&v| InstanceArg::Nat(v)).collect::<std::sync::Arc<[InstanceArg]>>())
    })
}

/// `g[16, 2]` → (`g`, [16, 2]).
pub fn split_symbol(symbol: &str) -> (String, Vec<u64>) {
    match symbol.split_once('[') {
        Some((name, rest)) => {
            let values = rest.trim_end_matches(']').split(',').filter_map(|v| v.trim().parse().ok()).collect();
            (name.trim().to_string(), values)
        }
        None => (symbol.trim().to_string(), Vec::new()),
    }
}

fn own_functions(workspace: &Workspace) -> impl Iterator<Item = Item> + '_ {
    workspace
        .files()
        .iter()
        .filter(|f| !f.library && f.generated.is_none())
        .flat_map(|f| f.items.iter())
        .filter(|i| i.key.kind == ItemKind::Fn)
        .map(|i| i.item)
}

/// How simple a case is (smaller first): its extent, then its pattern, then its scalars' sizes.
fn simplicity(case: &Case) -> (u64, cases::Pattern, usize) {
    (case.extent, case.pattern, case.scalars.values().map(String::len).sum())
}

/// The tiles a validation tries extents around: the instance's naturals, the divisors the
/// implementation names (in its condition or body), the literal factors its index expressions
/// multiply by, and the host pool's cutoff when a region of either function may split; then the
/// thresholds its `when` condition compares with (`n >= 65536`).
fn tiles(
    workspace: &Workspace,
    instance: Instance<'_>,
    reference: Item,
) -> (Vec<u64>, Vec<u64>, BTreeMap<String, Vec<String>>) {
    let db = workspace.db();
    let item = instance.item(db);
    let mut out: Vec<u64> =
        instance.args(db).iter().filter_map(|a| if let InstanceArg::Nat(n) = a { Some(*n) } else { None }).collect();
    let body = cairn_hir::body::fn_body(db, item);
    let check = cairn_hir::check::instance_check(db, instance);
    let constant = |e: ExprId| -> Option<u64> {
        match body.expr(body.unparen(e)) {
            Expr::Literal(cairn_hir::body::Literal::Int { value: Some(v), .. }) => u64::try_from(*v).ok(),
            Expr::Name(_) => match check.resolutions.get(body.unparen(e).0 as usize) {
                Some(Resolution::Natural(n)) => Some(*n),
                _ => None,
            },
            _ => None,
        }
    };
    for expr in body.exprs.iter() {
        match expr {
            Expr::Binary { op: BinaryOp::Rem | BinaryOp::Div, rhs, .. } => {
                out.extend(constant(*rhs));
            }
            Expr::Index { indices, .. } => {
                for &at in indices.iter() {
                    if let Expr::Binary { op: BinaryOp::Mul, lhs, rhs } = body.expr(body.unparen(at)) {
                        out.extend(constant(*lhs).or_else(|| constant(*rhs)));
                    }
                }
            }
            _ => {}
        }
    }
    if !cairn_hir::regions::fn_regions(db, item).is_empty() || !cairn_hir::regions::fn_regions(db, reference).is_empty()
    {
        out.push(16_384);
    }
    out.retain(|&t| t > 1);
    out.sort_unstable();
    out.dedup();
    // What the condition compares with: an extent's thresholds, a scalar's values around them.
    let signature = cairn_hir::fn_signature(db, item);
    let scopes = cairn_hir::scopes::body_scopes(db, item);
    let mut thresholds = Vec::new();
    let mut scalars: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(condition) = body.when {
        let mut work = vec![condition];
        while let Some(e) = work.pop() {
            match body.expr(e) {
                Expr::Binary { op, lhs, rhs } => {
                    if matches!(
                        op,
                        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
                    ) {
                        let (value, side) = match (constant(*lhs), constant(*rhs)) {
                            (Some(v), None) => (Some(v), *rhs),
                            (None, Some(v)) => (Some(v), *lhs),
                            _ => (None, *lhs),
                        };
                        let param = match scopes.resolve(body.unparen(side)) {
                            Some(cairn_hir::scopes::LocalRef::Param(i)) => signature.params.get(i as usize),
                            _ => None,
                        };
                        match (value, param) {
                            (Some(v), Some(p))
                                if !signature
                                    .extent_params
                                    .contains(&signature.param_index(&p.name).unwrap_or(usize::MAX)) =>
                            {
                                if let cairn_hir::types::Ty::Int(int) = p.ty {
                                    let (lo, hi) = int.range();
                                    let around = [i128::from(v) - 1, i128::from(v), i128::from(v) + 1];
                                    scalars
                                        .entry(p.name.to_string())
                                        .or_default()
                                        .extend(around.iter().filter(|&&x| x >= lo && x <= hi).map(i128::to_string));
                                }
                            }
                            (Some(v), _) => thresholds.push(v),
                            _ => {}
                        }
                    }
                    work.extend([*lhs, *rhs]);
                }
                Expr::Unary { operand, .. } | Expr::Paren(operand) => work.push(*operand),
                Expr::Call { args, .. } => work.extend(args.iter().copied()),
                _ => {}
            }
        }
    }
    thresholds.retain(|&t| t > 1 && t <= 1 << 20);
    (out, thresholds, scalars)
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A policy from its JSON (strict, at most 200,000 bytes), held to its ranges.
pub fn parse_policy(bytes: &[u8]) -> Result<Policy, String> {
    if bytes.len() > 200_000 {
        return Err("A policy is at most 200,000 bytes.".into());
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| format!("Not a validation policy: {e}."))?;
    if !value.is_object() {
        return Err("A policy is a JSON object.".into());
    }
    let policy: Policy = serde_json::from_value(value).map_err(|e| format!("Not a validation policy: {e}."))?;
    policy.checked()
}

impl Policy {
    /// The policy, if its values are in range.
    pub fn checked(self) -> Result<Policy, String> {
        if self.budget == 0 || self.budget > 4096 || self.seconds == 0 || self.seconds > 300 {
            return Err("A policy's budget is 1..4096 cases and seconds 1..300.".into());
        }
        if self.domain.largest_extent.is_some_and(|l| l > 1 << 20) {
            return Err("A policy's largest extent is at most 2^20.".into());
        }
        if !(self.tolerance.absolute >= 0.0 && self.tolerance.relative >= 0.0) {
            return Err("A tolerance is zero or positive.".into());
        }
        Ok(self)
    }
}

/// The regressions file of `reference` (its full name) inside a project's `regressions/`
/// directory: `m.f.json` for `m.f`, so references of different modules never share one.
pub fn regressions_name(reference: &str) -> String {
    format!("{reference}.json")
}

impl Regressions {
    /// An empty file for `reference`, pinning `policy`.
    pub fn new(reference: &str, policy: &Policy) -> Regressions {
        Regressions {
            protocol: REGRESSIONS.into(),
            reference: reference.into(),
            policy: policy.clone(),
            cases: Vec::new(),
        }
    }

    pub fn parse(bytes: &[u8]) -> Result<Regressions, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("not a regressions file: {e}"))
    }

    /// The file's text: the same for the same cases (fixed field order, a final newline).
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The kept cases of `implementation`, in order.
    pub fn of(&self, implementation: &str) -> Vec<Case> {
        self.cases.iter().filter(|k| k.implementation == implementation).map(|k| k.case.clone()).collect()
    }

    /// Keeps `case` for `implementation` (once).
    pub fn keep(&mut self, implementation: &str, case: Case) {
        let entry = Kept { implementation: implementation.to_string(), case };
        if !self.cases.contains(&entry) {
            self.cases.push(entry);
        }
    }
}

/// What one case gave under each run.
#[derive(Clone)]
struct CaseResult {
    reference: agree::Outcome,
    /// `None` where the condition does not hold.
    implementation: Option<agree::Outcome>,
    dispatch: agree::Outcome,
    /// Why the case decided nothing (a run that timed out or could not start).
    undecided: Option<String>,
}

impl CaseResult {
    fn agrees(&self, shape: &Shape, case: &Case, policy: &Policy) -> bool {
        if self.undecided.is_some() {
            return true;
        }
        let printed = shape.printed(case);
        let implementation =
            self.implementation.as_ref().is_none_or(|i| agree::agrees(&printed, &self.reference, i, &policy.tolerance));
        implementation && agree::agrees(&printed, &self.reference, &self.dispatch, &policy.tolerance)
    }
}

/// The program and the implementation a validation builds its harnesses from.
struct Setup<'a> {
    /// The program's files.
    files: Vec<SourceText>,
    runner: &'a dyn Runner,
    /// The file the harness is appended to (the implementation's), and its text without any
    /// selection of the reference.
    file: String,
    plain: String,
    /// The selection the dispatch build adds (`plan f use g[8];`).
    selection: String,
    reference_call: String,
    callee: Callee,
    shape: &'a Shape,
    seconds: u64,
}

impl<'a> Setup<'a> {
    fn new(
        workspace: &Workspace,
        item: Item,
        instance: Instance<'_>,
        reference: Item,
        shape: &'a Shape,
        policy: &Policy,
        runner: &'a dyn Runner,
    ) -> Setup<'a> {
        let db = workspace.db();
        let (file, _) = workspace.locate(item).unwrap_or((0, 0.into()));
        let state = &workspace.files()[file];
        // Remove every selection of the reference (the plain build runs the reference alone).
        let mut plain = state.text().to_string();
        let mut cuts: Vec<(usize, usize)> = state
            .items
            .iter()
            .filter(|i| i.key.kind == ItemKind::Plan)
            .filter(|i| {
                cairn_hir::implementations::selection_def(db, i.item)
                    .as_ref()
                    .is_some_and(|s| s.reference == Some(reference))
            })
            .map(|i| {
                let start = usize::from(i.start);
                (start, start + usize::from(i.item.syntax(db).syntax_node().text_range().len()))
            })
            .collect();
        cuts.sort_unstable();
        for (start, end) in cuts.into_iter().rev() {
            plain.replace_range(start..end, "");
        }
        let scope = Resolver::new(db);
        let name = |i: Item| -> String { scope.full_name(i).rsplit('.').next().unwrap_or_default().to_string() };
        let values: Vec<String> = instance
            .args(db)
            .iter()
            .filter_map(|a| if let InstanceArg::Nat(n) = a { Some(n.to_string()) } else { None })
            .collect();
        let brackets = if values.is_empty() { String::new() } else { format!("[{}]", values.join(", ")) };
        let g = format!("{}{brackets}", name(item));
        let node = item.syntax(db).syntax_node();
        let function = ast::Fn::cast(node.clone());
        let when = function.as_ref().and_then(|f| f.implements_clause()).and_then(|c| c.when_clause());
        let when = when.and_then(|w| w.condition()).map(|condition| {
            let params =
                function.as_ref().and_then(|f| f.param_list()).map(|p| p.syntax().to_string()).unwrap_or_default();
            let generics = node
                .children()
                .find(|c| c.kind() == cairn_syntax::SyntaxKind::GENERIC_PARAM_LIST)
                .map(|g| g.to_string())
                .unwrap_or_default();
            (
                format!("fn cairn_validate_when{generics}{params} -> bool = {};", condition.syntax()),
                format!("cairn_validate_when{brackets}"),
            )
        });
        let files = workspace.written_sources();
        Setup {
            files,
            runner,
            file: state.name.clone(),
            plain,
            selection: format!("\nplan {} use {g};\n", name(reference)),
            reference_call: name(reference),
            callee: Callee { call: g, when },
            shape,
            seconds: policy.seconds,
        }
    }

    /// Builds the two harnesses for `cases` and runs every block.
    fn run(&self, cases: &[Case]) -> Result<Vec<CaseResult>, String> {
        let plain_runs = [Run::Reference, Run::Implementation];
        let text = harness::harness(self.shape, cases, &plain_runs, &self.reference_call, &self.callee);
        let blocks: Vec<String> =
            (0..cases.len()).flat_map(|i| plain_runs.map(|run| harness::block_name(i, run))).collect();
        let plain = self.runner.run(&self.with(&format!("{}{text}", self.plain)), &blocks, self.seconds)?;
        let text = harness::harness(self.shape, cases, &[Run::Dispatch], &self.reference_call, &self.callee);
        let blocks: Vec<String> = (0..cases.len()).map(|i| harness::block_name(i, Run::Dispatch)).collect();
        let dispatch =
            self.runner.run(&self.with(&format!("{}{}{text}", self.plain, self.selection)), &blocks, self.seconds)?;
        if plain.len() != 2 * cases.len() || dispatch.len() != cases.len() {
            return Err("internal error (E-INTERNAL): the runner answered for other blocks".into());
        }
        let mut results = Vec::with_capacity(cases.len());
        for i in 0..cases.len() {
            let (reference, implementation, dispatch) = (&plain[2 * i], &plain[2 * i + 1], &dispatch[i]);
            let undecided = [reference, implementation, dispatch].iter().find_map(|o| o.as_ref().err().cloned());
            let unwrap = |o: &Result<agree::Outcome, String>| o.clone().unwrap_or_default();
            let implementation = unwrap(implementation);
            let ran = !implementation.stdout.first().is_some_and(|l| l == harness::NOT_RUN);
            results.push(CaseResult {
                reference: unwrap(reference),
                implementation: ran.then_some(implementation),
                dispatch: unwrap(dispatch),
                undecided,
            });
        }
        Ok(results)
    }

    /// The program's files with `text` in place of the implementation's.
    fn with(&self, text: &str) -> Vec<SourceText> {
        let mut files = self.files.clone();
        if let Some(file) = files.iter_mut().find(|f| f.name == self.file) {
            file.text = text.to_string();
        }
        files
    }
}
