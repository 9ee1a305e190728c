//! The decisions of `cairn diff` (tools.md §3.12): every function of two accepted versions of a
//! program classified — a template through each instance the program makes (`twice[u32]`) —
//! `identical-code` (the same MIR up to renaming, itself and its callees),
//! `smt-equivalent`, `behavior-changed` (a witness replayed on the MIR evaluator, then natively),
//! `signature-changed`, `added`, `removed`, `renamed`, `unknown` (with a reason) — what changed
//! about each, and the semantic-version level the changes prove.
//!
//! Boundary: no IO. What needs the outside world is the caller's, through [`Host`]: writing the
//! SMT-LIB obligations, running a witness natively (compile, link, run) and the clock of the
//! solver budget. A native run that disagrees with the evaluator makes the answer `unknown`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cairn_hir::{ItemKind, Workspace};
use cairn_mir::Function;
use cairn_smt::{Observed, Options, Query, Verdict, WValue};
use serde::Serialize;

use crate::equiv::{self, Lowered, OutcomeRecord, Receipt, WitnessRecord};

/// What a diff asks of its caller: the IO the agent crate does not do.
pub trait Host {
    /// True once the solver budget of the whole diff is spent (functions past it are
    /// `unknown`); the caller keeps the clock.
    fn budget_spent(&self) -> bool;

    /// Writes the SMT-LIB queries of the comparison of function `name` where the caller was
    /// asked to, and names the files (none when it was not asked). `Err` stops the diff.
    fn obligations(&mut self, name: &str, queries: &[Query]) -> Result<Vec<String>, String>;

    /// Runs a witness's inputs natively on both versions — each program compiled with a replay
    /// entry for its function, linked and run — and says what each did.
    fn replay(&mut self, old: Replayed<'_>, new: Replayed<'_>, inputs: &[WValue]) -> (Observed, Observed);
}

/// One version of a function to replay: every function of its program, and the function.
#[derive(Clone, Copy)]
pub struct Replayed<'a> {
    pub functions: &'a [Arc<Function>],
    pub target: &'a Function,
}

/// One side of a diff: an accepted program and its MIR.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub workspace: &'a Workspace,
    pub lowered: &'a Lowered,
}

/// How a diff runs.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// The solver's options (Z3's limit per query).
    pub options: Options,
    /// How many witnesses are replayed natively.
    pub replays: usize,
    /// Whether each function gets a predicted cost ratio.
    pub predict: bool,
}

/// The class of a function between the two versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    IdenticalCode,
    /// A template no instance of which is made, its tokens unchanged (no code to compare).
    IdenticalSource,
    SmtEquivalent,
    BehaviorChanged,
    SignatureChanged,
    Added,
    Removed,
    Renamed,
    Unknown,
}

impl Class {
    /// The two classes of a function that did not change.
    pub fn unchanged(self) -> bool {
        matches!(self, Class::IdenticalCode | Class::IdenticalSource)
    }

    pub fn name(self) -> &'static str {
        match self {
            Class::IdenticalCode => "identical-code",
            Class::IdenticalSource => "identical-source",
            Class::SmtEquivalent => "smt-equivalent",
            Class::BehaviorChanged => "behavior-changed",
            Class::SignatureChanged => "signature-changed",
            Class::Added => "added",
            Class::Removed => "removed",
            Class::Renamed => "renamed",
            Class::Unknown => "unknown",
        }
    }
}

/// One function of a diff, as the `cairn.diff/1` record shows it.
#[derive(Debug, Serialize)]
pub struct FunctionDiff {
    pub class: Class,
    /// A renamed function's new name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Witness>,
    /// Why the class is `unknown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_cost_ratio: Option<f64>,
}

impl FunctionDiff {
    fn of(class: Class) -> FunctionDiff {
        FunctionDiff {
            class,
            to: None,
            receipt: None,
            witness: None,
            reason: None,
            changes: None,
            predicted_cost_ratio: None,
        }
    }
}

/// What moved about a function present in both versions.
#[derive(Debug, Default, Serialize)]
pub struct Changes {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<BeforeAfter<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effects: Option<EffectChanges>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guards: Option<BeforeAfter<BTreeMap<String, u32>>>,
}

#[derive(Debug, Serialize)]
pub struct BeforeAfter<T> {
    pub before: T,
    pub after: T,
}

/// A function's row before and after, and the effects it gained and lost.
#[derive(Debug, Serialize)]
pub struct EffectChanges {
    pub before: Vec<String>,
    pub after: Vec<String>,
    pub gained: Vec<String>,
    pub lost: Vec<String>,
}

/// A witness of a behaviour change as protocol §3.6 shows it (the inputs and both versions'
/// outcomes, [`equiv::witness_record`]), and how it was replayed.
#[derive(Debug, Serialize)]
pub struct Witness {
    /// [`equiv::witness_record`]'s record, which `verify` and the hosts show too.
    #[serde(flatten)]
    pub shown: WitnessRecord,
    pub replay: Replay,
}

/// How a witness was replayed: on the evaluator (which found or confirmed it), and natively.
#[derive(Debug, Serialize)]
pub struct Replay {
    pub evaluator: &'static str,
    pub native: Native,
}

/// The native replay of a witness, judged against what the evaluator showed.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Native {
    NotRun {
        reason: String,
    },
    Reproduced {
        compiler: &'static str,
    },
    /// The native runs did something else than the evaluator showed: what they did (boxed:
    /// the rare variant should not size the common ones).
    Disagrees {
        before: Box<OutcomeRecord>,
        after: Box<OutcomeRecord>,
    },
}

/// The semantic-version level the diff proves, and why.
#[derive(Debug, Serialize)]
pub struct Semver {
    pub level: &'static str,
    /// When some function is `unknown`: the level the known changes prove.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_least: Option<&'static str>,
    pub reasons: Vec<String>,
}

/// One function that is not `identical-code`, for the human and Markdown renderings: its class,
/// name, and what establishes the class.
#[derive(Debug)]
pub struct Note {
    pub class: Class,
    pub name: String,
    pub evidence: Option<String>,
}

/// The classification of every function between two versions.
#[derive(Debug)]
pub struct Outcome {
    pub functions: BTreeMap<String, FunctionDiff>,
    /// How many functions have each class, by class name.
    pub counts: BTreeMap<&'static str, usize>,
    pub semver: Semver,
    /// In the order the functions were judged: the old version's, then the added ones.
    pub notes: Vec<Note>,
    /// The functions whose predicted cost ratio is not 1, with it.
    pub predicted: Vec<(String, f64)>,
}

impl Outcome {
    /// True when every function is `identical-code` (what `--require identical` asks); an
    /// un-instantiated template whose tokens are unchanged (`identical-source`) is unchanged too.
    pub fn all_identical(&self) -> bool {
        self.functions.values().all(|f| f.class.unchanged())
    }

    /// True when every function is `identical-code`, `identical-source` or `smt-equivalent`.
    pub fn all_equivalent(&self) -> bool {
        self.functions.values().all(|f| f.class.unchanged() || f.class == Class::SmtEquivalent)
    }
}

/// A diff between two sides, its facts read and its renames found (before any solver work).
pub struct Diff<'a> {
    old: Side<'a>,
    new: Side<'a>,
    old_facts: BTreeMap<String, Fact>,
    new_facts: BTreeMap<String, Fact>,
    /// Old name to new name.
    renamed: BTreeMap<String, String>,
}

impl<'a> Diff<'a> {
    /// The facts of both sides, and the renames: a function only on one side whose code and
    /// signature (up to its name) match one only on the other side.
    pub fn new(old: Side<'a>, new: Side<'a>) -> Diff<'a> {
        let (old_facts, new_facts) = (facts(old), facts(new));
        let added: Vec<&String> = new_facts.keys().filter(|k| !old_facts.contains_key(*k)).collect();
        let mut renamed: BTreeMap<String, String> = BTreeMap::new();
        let mut taken: BTreeSet<&String> = BTreeSet::new();
        // An instance is not renamed: its template's name is kept, or the template went.
        for (name, fact) in old_facts.iter().filter(|(k, f)| !new_facts.contains_key(*k) && f.instance_of.is_none()) {
            let same = |to: &String| new_facts[to].digest == fact.digest && new_facts[to].key == fact.key;
            if let Some(to) = added.iter().copied().find(|to| !taken.contains(to) && same(to)) {
                taken.insert(to);
                renamed.insert(name.clone(), (*to).clone());
            }
        }
        Diff { old, new, old_facts, new_facts, renamed }
    }

    /// Classifies every function. `Err` is the caller's own failure ([`Host::obligations`]).
    pub fn classify(&self, config: &Config, host: &mut dyn Host) -> Result<Outcome, String> {
        let mut run = Run { diff: self, config, host, replays_left: config.replays, reasons: Vec::new() };
        let mut functions = BTreeMap::new();
        let mut notes = Vec::new();
        let mut predicted = Vec::new();
        for (name, fact) in &self.old_facts {
            let Some(now) = self.new_facts.get(name) else {
                let (entry, note) = run.gone(name, fact);
                functions.insert(name.clone(), entry);
                notes.push(note);
                continue;
            };
            let (mut entry, evidence) = run.kept(name, fact, now)?;
            if config.predict && fact.insts > 0 {
                let ratio = (now.insts as f64 / fact.insts as f64 * 100.0).round() / 100.0;
                entry.predicted_cost_ratio = Some(ratio);
                if (ratio - 1.0).abs() > f64::EPSILON {
                    predicted.push((name.clone(), ratio));
                }
            }
            if !entry.class.unchanged() {
                notes.push(Note { class: entry.class, name: name.clone(), evidence: Some(evidence) });
            }
            functions.insert(name.clone(), entry);
        }
        let taken: BTreeSet<&String> = self.renamed.values().collect();
        let mut minor = false;
        for (name, fact) in
            self.new_facts.iter().filter(|(k, _)| !self.old_facts.contains_key(*k) && !taken.contains(k))
        {
            // An instance the program makes now, of a template it had: nothing new to call.
            let template = fact.instance_of.as_deref().or(fact.template.then_some(name.as_str()));
            let kept_template = template.is_some_and(|t| self.old.workspace.function_named(t).is_some());
            minor |= !kept_template;
            functions.insert(name.clone(), FunctionDiff::of(Class::Added));
            notes.push(Note { class: Class::Added, name: name.clone(), evidence: None });
        }
        let mut reasons = run.reasons;
        reasons.extend(changed_types(self.old.workspace, self.new.workspace));
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for entry in functions.values() {
            *counts.entry(entry.class.name()).or_default() += 1;
        }
        let semver = semver(reasons, minor, counts.contains_key("unknown"));
        Ok(Outcome { functions, counts, semver, notes, predicted })
    }
}

/// Judges a witness's native replay (`before` and `after`, what the two versions did) against
/// what the evaluator showed.
pub fn judge_replay(before: &Observed, after: &Observed, witness: &cairn_smt::Witness, old: &Function) -> Native {
    match (before, after) {
        (Observed::NotRun(why), _) | (_, Observed::NotRun(why)) => Native::NotRun { reason: why.clone() },
        _ if *before == witness.before && *after == witness.after => {
            Native::Reproduced { compiler: "cairn-rs llvm-19 -O2" }
        }
        _ => Native::Disagrees {
            before: Box::new(equiv::outcome_record(before, old)),
            after: Box::new(equiv::outcome_record(after, old)),
        },
    }
}

/// What the diff knows of one function of one side.
struct Fact {
    symbol: Arc<str>,
    signature: String,
    /// The signature up to names (what decides `signature-changed`).
    key: String,
    row: Vec<String>,
    sites: BTreeMap<String, u32>,
    digest: String,
    insts: usize,
    /// An uninstantiated template: no code, its digest is its text's.
    template: bool,
    /// For an instance (`twice[u8]`), its template's full name.
    instance_of: Option<String>,
}

/// The facts of every own function of a side, by full name.
fn facts(side: Side<'_>) -> BTreeMap<String, Fact> {
    let mut out = BTreeMap::new();
    let digests = side.lowered.code_digests();
    for fact in side.workspace.function_facts() {
        if fact.library || !matches!(fact.kind, ItemKind::Fn | ItemKind::Method) {
            continue;
        }
        // Named as an agent names it: `module.name`, a method of a trait's impl `Area.Rect.area`.
        let item = fact.item;
        let full = side.workspace.full_name(item).to_string();
        let symbol = equiv::symbol_of(side.workspace, item);
        let signature = cairn_hir::render::signature_text(side.workspace.db(), item, true);
        let key = equiv::signature_key(side.workspace, item);
        let row: Vec<String> = fact.row.unwrap_or_default().iter().map(|e| e.to_string()).collect();
        let sites: BTreeMap<String, u32> = fact.sites.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        let insts_of = |f: &Arc<Function>| -> usize { f.blocks.iter().map(|b| b.insts.len() + 1).sum() };
        let fact_of = |symbol: Arc<str>, template: bool| Fact {
            digest: digests.get(&*symbol).cloned().unwrap_or_default(),
            insts: side.lowered.get(&symbol).map_or(0, insts_of),
            symbol,
            signature: signature.clone(),
            key: key.clone(),
            row: row.clone(),
            sites: sites.clone(),
            template,
            instance_of: None,
        };
        if cairn_hir::generics::fn_generics(side.workspace.db(), item).is_empty() {
            out.insert(full, fact_of(symbol, false));
            continue;
        }
        // A template has no code of its own: each instance the program makes is compared as a
        // function of its own (`twice[u32]`); one never instantiated, by its text.
        let instances = equiv::instance_symbols(side.workspace, side.lowered, item);
        for instance in &instances {
            let args = &instance[symbol.len()..];
            let fact = Fact { instance_of: Some(full.clone()), ..fact_of(instance.clone(), false) };
            out.insert(format!("{full}{args}"), fact);
        }
        if instances.is_empty() {
            let text = crate::program::source_of(side.workspace, item);
            let mut template = fact_of(symbol, true);
            template.digest = crate::canonical::sha256_hex(text.as_bytes());
            out.insert(full, template);
        }
    }
    out
}

/// One classification in progress: the replays left, and the reasons for a major version.
struct Run<'d, 'h> {
    diff: &'d Diff<'d>,
    config: &'d Config,
    host: &'h mut dyn Host,
    replays_left: usize,
    reasons: Vec<String>,
}

impl Run<'_, '_> {
    /// A function only in the old version: renamed, or removed. An instance of a template the new
    /// version still has is removed without breaking anything: callers name the template.
    fn gone(&mut self, name: &str, fact: &Fact) -> (FunctionDiff, Note) {
        let template = fact.instance_of.as_deref().or(fact.template.then_some(name));
        if let Some(template) = template
            && self.diff.new.workspace.function_named(template).is_some()
        {
            let evidence = Some(format!("{template} is kept; the program no longer makes this instance"));
            return (
                FunctionDiff::of(Class::Removed),
                Note { class: Class::Removed, name: name.to_string(), evidence },
            );
        }
        match self.diff.renamed.get(name) {
            Some(to) => {
                self.reasons.push(format!("{name} renamed to {to}"));
                let evidence = Some(format!("now {to}, the same code"));
                let entry = FunctionDiff { to: Some(to.clone()), ..FunctionDiff::of(Class::Renamed) };
                (entry, Note { class: Class::Renamed, name: name.to_string(), evidence })
            }
            None => {
                self.reasons.push(format!("{name} removed"));
                (
                    FunctionDiff::of(Class::Removed),
                    Note { class: Class::Removed, name: name.to_string(), evidence: None },
                )
            }
        }
    }

    /// A function in both versions: what changed, its class, and what establishes the class.
    fn kept(&mut self, name: &str, fact: &Fact, now: &Fact) -> Result<(FunctionDiff, String), String> {
        let changes = self.changes(name, fact, now);
        let mut entry = FunctionDiff::of(Class::Unknown);
        let (class, evidence) = if now.key != fact.key {
            self.reasons.push(format!("{name} re-signed"));
            (Class::SignatureChanged, format!("{} -> {}", fact.signature, now.signature))
        } else if now.digest == fact.digest && fact.template {
            (Class::IdenticalSource, "the same tokens, and no instance of it is made".to_string())
        } else if now.digest == fact.digest {
            (Class::IdenticalCode, "the same emitted code, itself and its callees".to_string())
        } else if fact.template || now.template {
            entry.reason = Some("a template no instance of which is made: there is no code to compare".into());
            (Class::Unknown, "an uninstantiated template changed".to_string())
        } else if self.host.budget_spent() {
            entry.reason = Some("the diff's solver budget (--budget-s) was spent before this function".into());
            (Class::Unknown, "solver budget spent".to_string())
        } else {
            self.compared(name, fact, now, &mut entry)?
        };
        entry.class = class;
        let moved = changes.signature.is_some() || changes.effects.is_some() || changes.guards.is_some();
        entry.changes = moved.then_some(changes);
        Ok((entry, evidence))
    }

    /// The signature, row and guard sites that moved (a gained effect is a major reason).
    fn changes(&mut self, name: &str, fact: &Fact, now: &Fact) -> Changes {
        let mut changes = Changes::default();
        if now.signature != fact.signature {
            changes.signature = Some(BeforeAfter { before: fact.signature.clone(), after: now.signature.clone() });
        }
        if now.row != fact.row {
            let gained: Vec<String> = now.row.iter().filter(|e| !fact.row.contains(e)).cloned().collect();
            let lost: Vec<String> = fact.row.iter().filter(|e| !now.row.contains(e)).cloned().collect();
            if !gained.is_empty() {
                self.reasons.push(format!("{name} gained {}", gained.join(", ")));
            }
            changes.effects = Some(EffectChanges { before: fact.row.clone(), after: now.row.clone(), gained, lost });
        }
        if now.sites != fact.sites {
            changes.guards = Some(BeforeAfter { before: fact.sites.clone(), after: now.sites.clone() });
        }
        changes
    }

    /// Different code under the same signature: compared with Z3, a witness replayed.
    fn compared(
        &mut self,
        name: &str,
        fact: &Fact,
        now: &Fact,
        entry: &mut FunctionDiff,
    ) -> Result<(Class, String), String> {
        let (old, new) = (self.diff.old.lowered, self.diff.new.lowered);
        let comparison = equiv::compare(old, &fact.symbol, new, &now.symbol, None, false, self.config.options);
        let files = self.host.obligations(name, &comparison.queries)?;
        entry.receipt = Some(equiv::receipt(&fact.digest, &now.digest, "all inputs", &comparison.queries, Some(files)));
        let old_fn = old.get(&fact.symbol).expect("the symbol was lowered").clone();
        Ok(match comparison.verdict {
            Verdict::Equivalent => (
                Class::SmtEquivalent,
                format!("Z3 found no input where they differ ({} queries)", comparison.queries.len()),
            ),
            Verdict::Differs(witness) => {
                let new_fn = new.get(&now.symbol).expect("the symbol was lowered").clone();
                let native = self.native(&old_fn, &new_fn, &witness);
                let disagrees = matches!(native, Native::Disagrees { .. });
                let shown = equiv::witness_record(&witness, &old_fn);
                entry.witness = Some(Witness { shown, replay: Replay { evaluator: "reproduced", native } });
                if disagrees {
                    entry.reason = Some("the native replay of the witness disagrees with the model".into());
                    (Class::Unknown, "the native replay disagrees with the model".to_string())
                } else {
                    self.reasons.push(format!("{name} has a witness"));
                    (Class::BehaviorChanged, equiv::witness_sentence(&witness, &old_fn))
                }
            }
            Verdict::Unknown(reason) => {
                entry.reason = Some(reason.clone());
                (Class::Unknown, reason)
            }
            Verdict::ReferenceTraps(_) | Verdict::EmptyDomain => {
                entry.reason = Some("unexpected solver answer".into());
                (Class::Unknown, "unexpected solver answer".to_string())
            }
        })
    }

    /// The native replay of a witness, while the `--replays` budget lasts.
    fn native(&mut self, old_fn: &Function, new_fn: &Function, witness: &cairn_smt::Witness) -> Native {
        if self.replays_left == 0 {
            return Native::NotRun { reason: "the --replays budget was spent".into() };
        }
        self.replays_left -= 1;
        let inputs: Vec<WValue> = witness.inputs.iter().map(|(_, v)| v.clone()).collect();
        let old = Replayed { functions: &self.diff.old.lowered.functions, target: old_fn };
        let new = Replayed { functions: &self.diff.new.lowered.functions, target: new_fn };
        let (before, after) = self.host.replay(old, new, &inputs);
        judge_replay(&before, &after, witness, old_fn)
    }
}

/// A major reason per own record or enum of the old version whose declaration changed or went.
fn changed_types(old: &Workspace, new: &Workspace) -> Vec<String> {
    let (old_types, new_types) = (types(old), types(new));
    old_types
        .iter()
        .filter(|(name, text)| new_types.get(*name) != Some(*text))
        .map(|(name, _)| format!("type {name} changed"))
        .collect()
}

/// The declarations of a program's own records and enums, as text, by full name.
fn types(workspace: &Workspace) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if let Some(text) = cairn_hir::render::declaration_text(workspace.db(), entry.item)
                && matches!(entry.key.kind, ItemKind::Struct | ItemKind::Enum)
            {
                map.insert(workspace.full_name(entry.item).to_string(), text);
            }
        }
    }
    map
}

/// The level the changes prove: `major` for any major reason, `minor` when functions were
/// added, else `patch`; `unknown` (at least that) when a function is unknown and no major
/// reason decides it.
fn semver(reasons: Vec<String>, minor: bool, any_unknown: bool) -> Semver {
    let proven = if !reasons.is_empty() {
        "major"
    } else if minor {
        "minor"
    } else {
        "patch"
    };
    if any_unknown && proven != "major" {
        Semver { level: "unknown", at_least: Some(proven), reasons }
    } else {
        Semver { level: proven, at_least: None, reasons }
    }
}
