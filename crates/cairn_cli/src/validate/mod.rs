//! `cairn validate` (tools.md §3.14): one implementation run side by side with its reference on
//! generated edge-case inputs — evidence from finitely many cases, not a proof.
//!
//! The inputs come from the signature and the tiles (`cases.rs`); each case is a `test` block of a
//! generated harness (`harness.rs`) appended to the program, built twice: once with no selection
//! of the reference (its blocks run the reference, and the implementation where its condition
//! holds) and once with `plan f use g;` (its blocks run the reference under the dispatch). Every
//! block runs in its own process, standard input on the null device. Agreement (`agree.rs`): both
//! trap, or the same values (integers and booleans bit-equal, floats within the policy's
//! tolerance). A failing case is shrunk over simpler neighbours (smaller extents, scalars at
//! zero, zeroed views) and kept in the regressions file, which later runs try first and which is
//! written identically every run.
//!
//! Not in this build: Z3's separate bounded check (`smt` says `not-run`), `--history`,
//! `--emulate` and device targets.
//!
//! Exit: 0 passed; 1 failed or rejected; 2 unknown.

mod agree;
mod cases;
mod harness;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use cairn_hir::body::{BinaryOp, Expr, ExprId};
use cairn_hir::check::Resolution;
use cairn_hir::instance::{Instance, InstanceArg};
use cairn_hir::{Item, ItemKind, Resolver, Workspace};
use cairn_syntax::ast::{self, AstNode};

use crate::build::{BuildFlags, Purpose, build_program};
use crate::output::{Output, to_map};
use crate::process::{OUTPUT_CAP, limit, wait_captured};
use cases::{Case, Shape};
use harness::{Callee, Run};

/// `cairn validate` options.
#[derive(Debug, clap::Args)]
pub struct ValidateFlags {
    /// A .cairn file, a project directory (its cairn.toml), or a manifest.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The implementation, or one instance of a tuned one (`g[16]`).
    #[arg(long, value_name = "G")]
    pub symbol: String,
    /// The validation policy (strict JSON, at most 200,000 bytes): `tolerance`, `domain`,
    /// `budget`, `seed`, `probes`, `seconds`.
    #[arg(long, value_name = "POLICY.json")]
    pub policy: Option<PathBuf>,
    /// Where failing cases are kept (default: `regressions/<reference>.json` in the project).
    #[arg(long, value_name = "FILE")]
    pub regressions: Option<PathBuf>,
}

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
struct Regressions {
    protocol: String,
    reference: String,
    policy: Policy,
    cases: Vec<Kept>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    implementation: String,
    case: Case,
}

const REGRESSIONS: &str = "cairn.regressions/1";
const PROTOCOL: &str = "cairn.validation/1";

/// The `cairn.validation/1` record.
#[derive(Serialize, Default)]
struct Record {
    protocol: &'static str,
    status: &'static str,
    implementation: String,
    reference: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    finite: Option<Finite>,
    smt: Smt,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<String>,
    agreement: agree::Statement,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Coverage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    instances: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    compiler: String,
}

#[derive(Serialize, Default)]
struct Finite {
    status: &'static str,
    cases: usize,
    implementation_ran: usize,
    kept_cases: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed: Option<Failed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kept: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Serialize)]
struct Failed {
    inputs: Case,
    reference: agree::Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    implementation: Option<agree::Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dispatch: Option<agree::Outcome>,
}

#[derive(Serialize)]
struct Smt {
    status: &'static str,
    reason: &'static str,
}

impl Default for Smt {
    fn default() -> Smt {
        Smt { status: "not-run", reason: "Z3's bounded check of implementations is not in this build" }
    }
}

#[derive(Serialize, Default)]
struct Coverage {
    generated: usize,
    kept: usize,
    ran: usize,
    extents: Vec<u64>,
    tiles: Vec<u64>,
}

pub fn run(flags: &ValidateFlags, out: Output) -> u8 {
    let (record, code) = validate(flags);
    let record = to_map(&record);
    let detail = format!(
        "{} against {}",
        record.get("implementation").and_then(|v| v.as_str()).unwrap_or(""),
        record.get("reference").and_then(|v| v.as_str()).unwrap_or("")
    );
    out.summary(&record, code == 0, &detail);
    code
}

fn rejected(implementation: &str, reason: String) -> (Record, u8) {
    let record = Record {
        protocol: PROTOCOL,
        status: "rejected",
        implementation: implementation.to_string(),
        reason: Some(reason),
        compiler: cairn_agent::profile(),
        ..Record::default()
    };
    (record, 1)
}

fn unknown(mut record: Record, reason: String) -> (Record, u8) {
    record.status = "unknown";
    record.reason = Some(reason);
    (record, 2)
}

fn validate(flags: &ValidateFlags) -> (Record, u8) {
    let policy = match read_policy(flags.policy.as_deref()) {
        Ok(policy) => policy,
        Err(reason) => return rejected(&flags.symbol, reason),
    };
    let program = match cairn_vfs::load(&flags.path) {
        Ok(program) => program,
        Err(error) => return rejected(&flags.symbol, error.message),
    };
    let mut workspace = crate::check::load_workspace(&program);
    if let Some(refusal) = workspace.check().refusal {
        let first = format!("{}: {}", refusal.first.code, refusal.first.message);
        return rejected(&flags.symbol, format!("The program is refused: {first}"));
    }
    let (written, values) = split_symbol(&flags.symbol);
    let db = workspace.db();
    let scope = Resolver::new(db);
    let Some(item) = own_functions(&workspace).find(|&i| *scope.full_name(i) == *written) else {
        return rejected(&flags.symbol, format!("No function {written} in the program."));
    };
    let Some(reference) = cairn_hir::implementations::implementation_reference(db, item) else {
        return rejected(&flags.symbol, format!("{written} is not an implementation (`implements f`)."));
    };
    let reference_name = scope.full_name(reference).to_string();
    let mut record = Record {
        protocol: PROTOCOL,
        implementation: flags.symbol.clone(),
        reference: reference_name.clone(),
        agreement: agree::Statement::of(&policy.tolerance),
        compiler: cairn_agent::profile(),
        ..Record::default()
    };
    // The instance: a tuned implementation is validated one instance at a time.
    let tuned = cairn_hir::implementations::tuned_instances(db, item);
    let instance = if tuned.is_empty() {
        if !values.is_empty() {
            return rejected(&flags.symbol, format!("{written} is not tuned: name it without values."));
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
    let (tiles, thresholds) = tiles(&workspace, instance, reference);
    let largest = policy
        .domain
        .largest_extent
        .unwrap_or_else(|| thresholds.iter().map(|t| t + 1).max().unwrap_or(0).clamp(LARGEST, 1 << 20));
    let mut tiles = tiles;
    tiles.extend(thresholds.iter().copied());
    tiles.sort_unstable();
    tiles.dedup();
    let extents = cases::extents(&tiles, largest);
    let generated = cases::generate(&shape, &extents, policy.budget, policy.seed);
    // Kept regressions first (those of this implementation), then the generated cases.
    let regressions_path = flags
        .regressions
        .clone()
        .unwrap_or_else(|| program.root.join("regressions").join(format!("{}.json", reference_name.replace('.', "_"))));
    let mut kept = match read_regressions(&regressions_path) {
        Ok(kept) => kept,
        Err(reason) => return rejected(&flags.symbol, reason),
    };
    if let Some(kept) = &kept
        && kept.reference != reference_name
    {
        return rejected(
            &flags.symbol,
            format!("{} keeps the cases of {}, not {reference_name}.", regressions_path.display(), kept.reference),
        );
    }
    let kept_cases: Vec<Case> = kept
        .iter()
        .flat_map(|k| k.cases.iter())
        .filter(|k| k.implementation == flags.symbol)
        .map(|k| k.case.clone())
        .collect();
    let mut all: Vec<Case> = kept_cases.clone();
    all.extend(generated.iter().filter(|c| !kept_cases.contains(c)).cloned());
    record.coverage = Some(Coverage {
        generated: generated.len(),
        kept: kept_cases.len(),
        ran: all.len(),
        extents: extents.clone(),
        tiles: tiles.clone(),
    });
    let setup = Setup::new(&workspace, &program, item, instance, reference, &shape, &policy);
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
    let failing: Vec<usize> = (0..all.len()).filter(|&i| !results[i].agrees(&shape, &all[i], &policy)).collect();
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
            match (0..probes.len()).find(|&i| !probed[i].agrees(&shape, &probes[i], &policy)) {
                Some(i) => (case, result) = (probes[i].clone(), probed[i].clone()),
                None => break,
            }
        }
        let file = kept.get_or_insert_with(|| Regressions {
            protocol: REGRESSIONS.into(),
            reference: reference_name.clone(),
            policy: policy.clone(),
            cases: Vec::new(),
        });
        let entry = Kept { implementation: flags.symbol.clone(), case: case.clone() };
        if !file.cases.contains(&entry) {
            file.cases.push(entry);
        }
        match write_regressions(&regressions_path, file) {
            Ok(()) => finite.kept = Some(regressions_path.display().to_string()),
            Err(reason) => finite.reason = Some(reason),
        }
        // The implementation's own outcome where it ran and differs, else the dispatch's.
        let printed = shape.printed(&case);
        let implementation =
            result.implementation.clone().filter(|i| !agree::agrees(&printed, &result.reference, i, &policy.tolerance));
        let dispatch = implementation.is_none().then(|| result.dispatch.clone());
        finite.status = "failed";
        finite.failed = Some(Failed { inputs: case, reference: result.reference.clone(), implementation, dispatch });
        record.status = "failed";
        record.finite = Some(finite);
        record.evidence = Some("finite-tested");
        return (record, 1);
    }
    if let Some(reason) = results.iter().find_map(|r| r.undecided.clone()) {
        finite.status = "unknown";
        finite.reason = Some(reason.clone());
        record.finite = Some(finite);
        return unknown(record, reason);
    }
    record.status = "passed";
    record.finite = Some(finite);
    record.evidence = Some("finite-tested");
    (record, 0)
}

/// `g[16, 2]` → (`g`, [16, 2]).
fn split_symbol(symbol: &str) -> (String, Vec<u64>) {
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
fn tiles(workspace: &Workspace, instance: Instance<'_>, reference: Item) -> (Vec<u64>, Vec<u64>) {
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
    let mut thresholds = Vec::new();
    if let Some(condition) = body.when {
        let mut work = vec![condition];
        while let Some(e) = work.pop() {
            match body.expr(e) {
                Expr::Binary { op, lhs, rhs } => {
                    if matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq) {
                        thresholds.extend(constant(*lhs).or_else(|| constant(*rhs)));
                    }
                    work.extend([*lhs, *rhs]);
                }
                Expr::Unary { operand, .. } | Expr::Paren(operand) => work.push(*operand),
                _ => {}
            }
        }
    }
    thresholds.retain(|&t| t > 1 && t <= 1 << 20);
    (out, thresholds)
}

fn read_policy(path: Option<&Path>) -> Result<Policy, String> {
    let Some(path) = path else { return Ok(Policy::default()) };
    let bytes = std::fs::read(path).map_err(|e| format!("Cannot read the policy {}: {e}.", path.display()))?;
    if bytes.len() > 200_000 {
        return Err(format!("The policy {} is over 200,000 bytes.", path.display()));
    }
    let policy: Policy = serde_json::from_slice(&bytes)
        .map_err(|e| format!("The policy {} is not a validation policy: {e}.", path.display()))?;
    if policy.budget == 0 || policy.budget > 4096 || policy.seconds == 0 || policy.seconds > 300 {
        return Err("A policy's budget is 1..4096 cases and seconds 1..300.".into());
    }
    if policy.domain.largest_extent.is_some_and(|l| l > 1 << 20) {
        return Err("A policy's largest extent is at most 2^20.".into());
    }
    if !(policy.tolerance.absolute >= 0.0 && policy.tolerance.relative >= 0.0) {
        return Err("A tolerance is zero or positive.".into());
    }
    Ok(policy)
}

fn read_regressions(path: &Path) -> Result<Option<Regressions>, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<Regressions>(&bytes)
            .map(Some)
            .map_err(|e| format!("{} is not a regressions file: {e}.", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("Cannot read {}: {e}.", path.display())),
    }
}

/// Written identically for the same cases: pretty JSON in a fixed field order, a final newline.
fn write_regressions(path: &Path, file: &Regressions) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("Cannot make {}: {e}.", parent.display()))?;
    }
    let text = serde_json::to_string_pretty(file).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("Cannot write {}: {e}.", path.display()))
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
    program: &'a cairn_vfs::Program,
    /// The file the harness is appended to (the implementation's), and its text without any
    /// selection of the reference.
    file: usize,
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
        program: &'a cairn_vfs::Program,
        item: Item,
        instance: Instance<'_>,
        reference: Item,
        shape: &'a Shape,
        policy: &Policy,
    ) -> Setup<'a> {
        let db = workspace.db();
        let (file, _) = workspace.locate(item).unwrap_or((0, 0.into()));
        let state = &workspace.files()[file];
        // Remove every selection of the reference (the plain build runs the reference alone).
        let mut plain = state.text.clone();
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
        Setup {
            program,
            file,
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
        let plain = self.build(&format!("{}{text}", self.plain))?;
        let text = harness::harness(self.shape, cases, &[Run::Dispatch], &self.reference_call, &self.callee);
        let dispatch = self.build(&format!("{}{}{text}", self.plain, self.selection))?;
        let mut results = Vec::with_capacity(cases.len());
        let jobs: Vec<(usize, Run)> = (0..cases.len())
            .flat_map(|i| [(i, Run::Reference), (i, Run::Implementation), (i, Run::Dispatch)])
            .collect();
        let outcomes = std::sync::Mutex::new(BTreeMap::new());
        let next = std::sync::Mutex::new(0usize);
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let position = {
                            let mut next = next.lock().expect("the job counter");
                            *next += 1;
                            *next - 1
                        };
                        let Some(&(case, run)) = jobs.get(position) else { break };
                        let built = if run == Run::Dispatch { &dispatch } else { &plain };
                        let outcome = self.run_block(built, &harness::block_name(case, run));
                        outcomes.lock().expect("the outcomes").insert((case, run.name()), outcome);
                    }
                });
            }
        });
        let mut outcomes = outcomes.into_inner().unwrap_or_default();
        for i in 0..cases.len() {
            let mut take = |run: Run| outcomes.remove(&(i, run.name())).unwrap_or(Err("not run".into()));
            let (reference, implementation, dispatch) =
                (take(Run::Reference), take(Run::Implementation), take(Run::Dispatch));
            let undecided = [&reference, &implementation, &dispatch].iter().find_map(|o| o.as_ref().err().cloned());
            let unwrap = |o: Result<agree::Outcome, String>| o.unwrap_or_else(|_| agree::Outcome::default());
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

    /// Builds the program with `text` in place of the implementation's file.
    fn build(&self, text: &str) -> Result<(PathBuf, Vec<(String, String, u32)>), String> {
        let mut program = self.program.clone();
        program.files[self.file].text = text.to_string();
        let scratch = std::env::temp_dir().join(format!("cairn-validate-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).map_err(|e| format!("Cannot make {}: {e}.", scratch.display()))?;
        // The harness must check: a refusal here is this tool's fault, said as such.
        let mut workspace = crate::check::load_workspace(&program);
        if let Some(refusal) = workspace.check().refusal {
            let first = format!("{}: {}", refusal.first.code, refusal.first.message);
            return Err(format!("internal error (E-INTERNAL): the validation harness was refused: {first}"));
        }
        let flags = BuildFlags { keep_guards: false, out: Some(scratch), debug: false, timeout: 600 };
        let output = Output::choose(Some(crate::output::FormatChoice::Json));
        let built = build_program(program, Purpose::Tests, &flags, output)
            .map_err(|_| "internal error (E-INTERNAL): the validation harness did not build".to_string())?;
        let result = (built.artifact.clone(), built.tests.clone());
        std::mem::forget(built.workspace);
        Ok(result)
    }

    /// Runs one block in its own process: its ending and what it printed.
    fn run_block(&self, built: &(PathBuf, Vec<(String, String, u32)>), name: &str) -> Result<agree::Outcome, String> {
        let (artifact, tests) = built;
        let index = tests.iter().position(|(n, _, _)| n == name || n.rsplit('.').next() == Some(name));
        let index = index.ok_or_else(|| format!("internal error (E-INTERNAL): no block {name}"))?;
        let mut command = Command::new(artifact);
        command.arg(index.to_string()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        limit(&mut command, Some(1024));
        let child = command.spawn().map_err(|e| format!("could not start a case: {e}"))?;
        let captured = wait_captured(child, Duration::from_secs(self.seconds), OUTPUT_CAP);
        if captured.timed_out {
            return Err(format!("a call ran past {} s", self.seconds));
        }
        if captured.capped {
            return Err("a call wrote more than the output cap".into());
        }
        let status = captured.status.ok_or("a case could not be waited for")?;
        let stdout = String::from_utf8_lossy(&captured.stdout).lines().map(str::to_string).collect();
        Ok(agree::Outcome::new(status.success(), stdout, &String::from_utf8_lossy(&captured.stderr)))
    }
}
