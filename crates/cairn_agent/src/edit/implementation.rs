//! The implementation host (protocol §9): sessions that admit new implementations of one pinned
//! reference, each validated before it is kept; selecting one stays the host's decision.
//!
//! Open pins the reference (its declaration's tokens), the tolerance and numerical policy, the
//! test policy and the permitted inputs, each by digest, and answers the packet. A submission is
//! judged in the protocol's order: its keys (a key reaching a pinned part is refused by that
//! part's code before anything is compiled), its parse, its declarations (functions only, exactly
//! one `implements` function, of this reference, named apart from the program's other functions),
//! then the whole program with the submission inserted right after the reference (the compiler's
//! refusals located in the submission), rows of other functions that grew (`E-CALLER-EFFECT`),
//! and finally validation of the implementation — of every instance a `tune` list names —
//! against the reference under the pinned policy (`crate::validate`, through the caller's
//! [`Runner`]). Only a validated submission advances the session's source.
//!
//! A session opened with `emulate` (a device target) validates through a runner that builds
//! device work for host threads ([`Runner::emulating`]): its evidence is `finite-tested-emulated`,
//! and its packet and answers say what that is evidence of.
//!
//! Shares the edit host's compiles, cards and terms: a card one host sent is not sent again.
//! Not built: the `changed` field of the answer.

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use cairn_syntax::ast::{self, AstNode};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::packet::{offer_cards, signals};
use super::refusal::{Refusal, ReplySpan};
use super::{Answer, EditHost, Sources};
use crate::plans::when_text;
use crate::validate::{Policy, Regressions, Runner, Tolerance};

/// The protocol of implementation sessions.
pub const IMPLEMENTATION: &str = "cairn.implementation/1";

/// The most bytes a submission's source may hold.
const SUBMISSION_LIMIT: usize = 64_000;

/// One implementation session.
pub(super) struct ImplSession {
    pub(super) handle: String,
    /// The program as the session stands (advanced by each validated submission).
    pub(super) sources: Sources,
    /// The reference's full name.
    pub(super) reference: String,
    pub(super) policy: Policy,
    /// The kept failing cases (the caller persists them).
    pub(super) regressions: Regressions,
    /// The device target device work is emulated for, when the session was opened so.
    pub(super) emulate: Option<String>,
}

/// What a session pinned (protocol §9.1).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Pins {
    tolerance: Tolerance,
    tests: Tests,
    domain: crate::validate::Domain,
    reference_sha256: String,
    tolerance_sha256: String,
    tests_sha256: String,
    domain_sha256: String,
    agreement_sha256: String,
    agreement: String,
}

#[derive(Debug, Clone, Serialize)]
struct Tests {
    budget: usize,
    seed: u64,
    probes: usize,
    seconds: u64,
}

fn digest_of(value: &impl Serialize) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

impl Pins {
    fn new(reference_tokens: &str, policy: &Policy) -> Pins {
        let tests = Tests { budget: policy.budget, seed: policy.seed, probes: policy.probes, seconds: policy.seconds };
        let agreement = crate::validate::agree::Statement::of(&policy.tolerance);
        Pins {
            reference_sha256: Sha256::digest(reference_tokens.as_bytes()).iter().map(|b| format!("{b:02x}")).collect(),
            tolerance_sha256: digest_of(&policy.tolerance),
            tests_sha256: digest_of(&tests),
            domain_sha256: digest_of(&policy.domain),
            agreement_sha256: digest_of(&(agreement.protocol, &agreement.statement)),
            agreement: agreement.statement,
            tolerance: policy.tolerance,
            tests,
            domain: policy.domain.clone(),
        }
    }
}

/// The packet of an implementation session (protocol §9.2).
#[derive(Serialize)]
struct Packet {
    protocol: &'static str,
    handle: String,
    reference: Reference,
    implementations: BTreeMap<String, Existing>,
    pinned: Pins,
    rule_cards: crate::named::Named<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sent_before: Vec<&'static str>,
    reply: Reply,
    note: &'static str,
    boundaries: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    emulation: Option<String>,
}

#[derive(Serialize)]
struct Reference {
    symbol: String,
    source: String,
    effects: Vec<String>,
    /// The declared ceiling, or a note that it declares none.
    ceiling: Value,
}

#[derive(Serialize)]
struct Existing {
    when: Option<String>,
    identity: Option<String>,
}

#[derive(Serialize)]
struct Reply {
    protocol: &'static str,
    handle: String,
    kind: &'static str,
    source: String,
}

/// A validated submission's answer (protocol §9.3).
#[derive(Serialize)]
struct Validated {
    protocol: &'static str,
    status: &'static str,
    implementation: String,
    #[serde(flatten)]
    facts: InstanceFacts,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    instances: BTreeMap<String, InstanceFacts>,
    select_with: String,
    claim: String,
    candidate_sha256: String,
    selected: bool,
}

#[derive(Serialize, Default)]
struct InstanceFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    when: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effects: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    requires: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finite: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    smt: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    emulation: Option<crate::validate::Emulation>,
}

/// What a submission produced: the answer, the kept cases when this submission kept one (to
/// persist), and the session's new program when it was validated.
pub struct Submitted {
    pub answer: Answer,
    pub regressions: Option<Regressions>,
    pub program: Option<Sources>,
    /// The candidate-history records of this submission's validations (the caller appends them).
    pub records: Vec<crate::history::Record>,
}

const CLAIM: &str =
    "finitely tested on generated edge cases against the reference under the pinned policy; not a proof";
const NOTE: &str = "A submission holds one function that implements the reference (with its `when` condition and, for naturals, a `tune` list) and any helper functions it calls; nothing else. It is inserted after the reference, checked with the whole program, and validated against the reference before it is kept. It is never selected here: selecting it (`plan <ref> use <impl>;`) is the host's decision.";
const BOUNDARIES: [&str; 6] = [
    "the reference's declaration, signature, row, ceiling and roundings",
    "the tolerance and the numerical policy",
    "the test policy (budget, seed, probes, seconds)",
    "the permitted inputs (the domain)",
    "which implementation runs (selection is the host's)",
    "no test blocks, types, constants, plans or imports in a submission",
];

/// How an implementation session is opened (protocol §9.1).
#[derive(Debug, Clone, Default)]
pub struct ImplementationOpen {
    /// The reference, bare or qualified.
    pub reference: String,
    pub policy: Policy,
    /// The cases a regressions file kept, when the caller has one.
    pub kept: Option<Regressions>,
    /// The device target device work is emulated for (the caller has checked its spelling).
    pub emulate: Option<String>,
    /// The handle to give the session (a server numbering handles itself, or one taking back a
    /// session after a restart); `None`: the host numbers it (`i<n>`).
    pub handle: Option<String>,
}

impl EditHost {
    /// Opens an implementation session on `sources` as `open` says.
    pub fn implementation_open(&mut self, sources: Sources, open: ImplementationOpen) -> Answer {
        self.settle();
        let ImplementationOpen { reference, policy, kept, emulate, handle } = open;
        match self.try_implementation_open(sources, &reference, policy, kept, emulate, handle) {
            Ok(record) => Answer::ok(record),
            Err(refusal) => refusal.into(),
        }
    }

    fn try_implementation_open(
        &mut self,
        sources: Sources,
        reference: &str,
        policy: Policy,
        kept: Option<Regressions>,
        emulate: Option<String>,
        handle: Option<String>,
    ) -> Result<Map<String, Value>, Refusal> {
        let (index, _) = self.program(sources.clone());
        if let Some(refusal) = self.ws_mut(index).check().refusal {
            return Err(self.compiler_refusal(&refusal.first, Some(index)));
        }
        let workspace = self.ws(index);
        let db = workspace.db();
        let item = match crate::program::resolve_function(workspace, reference) {
            Ok(item) if !cairn_hir::implementations::is_implementation(db, item) => item,
            Ok(_) => {
                return Err(self
                    .rejection(
                        "E-SYMBOL",
                        format!("{reference} is an implementation; open a session on its reference."),
                    )
                    .detail("symbol", Value::from(reference)));
            }
            Err(matches) => {
                let why = if matches == 0 { "names no function" } else { "names more than one function" };
                return Err(self
                    .rejection(
                        "E-SYMBOL",
                        format!("{reference} {why}: name exactly one function, qualified with its module."),
                    )
                    .detail("symbol", Value::from(reference)));
            }
        };
        let scope = cairn_hir::Resolver::new(db);
        let full = scope.full_name(item).to_string();
        let source = crate::program::source_of(workspace, item);
        let packet_reference = reference_facts(workspace, item, &source);
        let implementations = existing(workspace, item);
        let tokens = tokens_of(&item.syntax(db).syntax_node());
        let pins = Pins::new(&tokens, &policy);
        let bare = full.rsplit('.').next().unwrap_or(&full).to_string();
        let params = item
            .syntax(db)
            .syntax_node()
            .children()
            .find_map(ast::ParamList::cast)
            .map(|p| p.syntax().to_string())
            .unwrap_or_else(|| "()".into());
        let texts = [source.as_str(), "fn g() implements f"];
        let offer = offer_cards(&mut self.sent_cards, &texts, signals(&texts, "", true));
        let handle = handle.unwrap_or_else(|| {
            self.impl_handles += 1;
            format!("i{}", self.impl_handles)
        });
        let regressions = kept.unwrap_or_else(|| Regressions::new(&full, &policy));
        self.implementations.retain(|s| s.handle != handle);
        self.implementations.push(ImplSession {
            handle: handle.clone(),
            sources,
            reference: full.clone(),
            policy,
            regressions,
            emulate: emulate.clone(),
        });
        let packet = Packet {
            protocol: IMPLEMENTATION,
            handle: handle.clone(),
            reference: packet_reference,
            implementations,
            pinned: pins,
            rule_cards: offer.rule_cards,
            sent_before: offer.sent_before,
            reply: Reply {
                protocol: IMPLEMENTATION,
                handle,
                kind: "submit",
                source: format!("fn NAME{params} implements {bare} when CONDITION {{ ... }}"),
            },
            note: NOTE,
            boundaries: BOUNDARIES.to_vec(),
            emulation: emulate.map(|target| {
                format!(
                    "device code is validated on host threads against {target}: the evidence is {}, never evidence about the device",
                    crate::validate::FINITE_EMULATED
                )
            }),
        };
        self.terms_sent = true;
        Ok(super::records::to_map(&packet))
    }

    /// Judges one `cairn.implementation/1` submission (protocol §9.3), validating through `runner`.
    pub fn implementation_submit(&mut self, request: &Value, runner: &dyn Runner) -> Submitted {
        self.settle();
        let mut submitted =
            Submitted { answer: Answer::ok(Map::new()), regressions: None, program: None, records: Vec::new() };
        match self.try_submit(request, runner, &mut submitted) {
            Ok(record) => submitted.answer = Answer::ok(record),
            Err(refusal) => submitted.answer = refusal.into(),
        }
        submitted
    }

    fn try_submit(
        &mut self,
        request: &Value,
        runner: &dyn Runner,
        submitted: &mut Submitted,
    ) -> Result<Map<String, Value>, Refusal> {
        let Value::Object(request) = request else {
            return Err(self.rejection("E-REQUEST", "A submission is a JSON object."));
        };
        // Keys first: one that reaches a pinned part is refused by that part's code.
        for key in request.keys() {
            let code = match key.as_str() {
                "protocol" | "handle" | "kind" | "source" => continue,
                "tolerance" | "tolerances" | "absolute" | "relative" | "agreement" => "E-TOLERANCE",
                "tests" | "test_policy" | "budget" | "seed" | "cases" | "probes" | "seconds" | "policy" => {
                    "E-TEST-POLICY"
                }
                "domain" | "inputs" | "assume" | "precondition" | "largest_extent" => "E-DOMAIN",
                "reference" => "E-REFERENCE",
                _ => "E-REQUEST",
            };
            return Err(self
                .rejection(code, format!("A submission has no key {key}: it holds exactly protocol, handle, kind and source; what {key} would set is pinned by the session."))
                .detail("fields", Value::from(vec![key.clone()])));
        }
        let text = |key: &str| request.get(key).and_then(Value::as_str);
        if text("protocol") != Some(IMPLEMENTATION) || text("kind") != Some("submit") {
            return Err(self.rejection(
                "E-REQUEST",
                format!("A submission is {{\"protocol\":\"{IMPLEMENTATION}\",\"handle\":…,\"kind\":\"submit\",\"source\":…}}."),
            ));
        }
        let handle = text("handle").unwrap_or_default().to_string();
        let Some(at) = self.implementations.iter().position(|s| s.handle == handle) else {
            return Err(self.rejection("E-SESSION", format!("No implementation session {handle:?}: open one first.")));
        };
        let Some(source) = text("source") else {
            return Err(self.rejection("E-REQUEST", "source is required: the submission's functions, as text."));
        };
        if source.len() > SUBMISSION_LIMIT {
            return Err(self.rejection(
                "E-REQUEST",
                format!("source holds {} bytes; a submission holds at most {SUBMISSION_LIMIT}.", source.len()),
            ));
        }
        let source = source.trim_end().to_string();
        let parse = cairn_syntax::parse(&source);
        if let Some(error) = parse.errors().first() {
            return Err(self.reply_refusal("E-PARSE", &error.message, &source, usize::from(error.range.start())));
        }
        let session = &self.implementations[at];
        let reference = session.reference.clone();
        let bare = reference.rsplit('.').next().unwrap_or(&reference).to_string();
        // The declarations: functions only, one implementation of this reference.
        let mut implementation: Option<String> = None;
        let mut helpers: Vec<String> = Vec::new();
        for declaration in parse.tree().items() {
            let function = match declaration {
                ast::Item::Fn(function) => function,
                ast::Item::Test(_) => {
                    return Err(self.rejection(
                        "E-TEST-POLICY",
                        "A submission holds no test block: the session's test policy is pinned; validation tests the implementation.",
                    ));
                }
                other => {
                    let kind = match other {
                        ast::Item::Module(_) => "a module",
                        ast::Item::Import(_) => "an import",
                        ast::Item::Const(_) => "a constant",
                        ast::Item::Struct(_) => "a record",
                        ast::Item::Enum(_) => "an enum",
                        ast::Item::ExternFn(_) => "a foreign function",
                        ast::Item::Trait(_) => "a trait",
                        ast::Item::Impl(_) => "an impl",
                        ast::Item::Family(_) => "a family",
                        ast::Item::Recipe(_) => "a recipe",
                        ast::Item::Derive(_) => "a derivation",
                        ast::Item::Plan(_) => "a plan",
                        _ => "a declaration that is not a function",
                    };
                    return Err(self.rejection(
                        "E-DECLARATION",
                        format!("A submission holds functions only, and this one declares {kind}."),
                    ));
                }
            };
            let name = function.name().map(|n| n.text().to_string()).unwrap_or_default();
            if name == bare {
                return Err(self.rejection(
                    "E-REFERENCE",
                    format!("The submission declares {name}, the reference: implement it under another name and leave it as it is."),
                ));
            }
            match function.implements_clause() {
                Some(clause) => {
                    let implemented = clause.reference().map(|p| p.syntax().to_string()).unwrap_or_default();
                    if implemented.trim() != bare && implemented.trim() != reference {
                        return Err(self.rejection(
                            "E-REFERENCE",
                            format!(
                                "{name} implements {}, and this session implements {reference}.",
                                implemented.trim()
                            ),
                        ));
                    }
                    if implementation.replace(name.clone()).is_some() {
                        return Err(self.rejection(
                            "E-DECLARATION",
                            "A submission holds exactly one implementation (helpers are plain functions).",
                        ));
                    }
                }
                None => helpers.push(name),
            }
        }
        let Some(name) = implementation else {
            return Err(self.rejection(
                "E-DECLARATION",
                format!("A submission holds exactly one function that `implements {bare}`, and this one holds none."),
            ));
        };
        // Names: the implementation may replace an implementation of the same name; nothing
        // may replace another function.
        let sources = session.sources.clone();
        let (index, _) = self.program(sources.clone());
        let workspace = self.ws(index);
        let db = workspace.db();
        let Some(reference_item) = workspace.function_named(&reference) else {
            return Err(self.refuse_internal("the pinned reference is gone"));
        };
        let module = cairn_hir::Resolver::new(db).module_of(reference_item).to_string();
        let qualified = |n: &str| if module.is_empty() { n.to_string() } else { format!("{module}.{n}") };
        let replaced = workspace.function_named(&qualified(&name));
        if replaced.is_some_and(|item| !cairn_hir::implementations::is_implementation(db, item)) {
            return Err(self.rejection(
                "E-DECLARATION",
                format!("{name} names a function of the program that is not an implementation: choose another name."),
            ));
        }
        if let Some(helper) = helpers.iter().find(|h| workspace.function_named(&qualified(h)).is_some()) {
            return Err(self.rejection(
                "E-DECLARATION",
                format!("The helper {helper} would replace the program's function of that name: rename the helper."),
            ));
        }
        let (candidate, file, span) = insert(workspace, &sources, reference_item, replaced, &source);
        // The whole program, with every rule of implementations.
        let (candidate_index, _) = self.program(candidate.clone());
        if let Some(refusal) = self.ws_mut(candidate_index).check().refusal {
            let text = candidate.files[file].text.clone();
            return Err(self.compiler_refusal_at(&refusal.first, Some(candidate_index), Some((file, &text, span))));
        }
        // No other function's row may grow.
        let before = rows_by_name(self.ws(index));
        let after = rows_by_name(self.ws(candidate_index));
        for (function, row) in &before {
            let Some(now) = after.get(function) else { continue };
            let added: Vec<&String> = now.iter().filter(|e| !row.contains(e)).collect();
            if !added.is_empty() {
                let added: Vec<Value> = added.iter().map(|e| Value::from(e.as_str())).collect();
                return Err(self
                    .rejection("E-CALLER-EFFECT", format!("With the submission, {function}'s row grows."))
                    .detail("symbol", Value::from(function.as_str()))
                    .detail("added_effects", Value::Array(added)));
            }
        }
        // Validation: the implementation, or each instance its `tune` lists name.
        let workspace = self.ws(candidate_index);
        let db = workspace.db();
        let Some(item) = workspace.function_named(&qualified(&name)) else {
            return Err(self.refuse_internal("the submitted implementation is not in the candidate"));
        };
        let tuned = cairn_hir::implementations::tuned_instances(db, item);
        let symbols: Vec<String> = if tuned.is_empty() {
            vec![qualified(&name)]
        } else {
            tuned.iter().map(|args| cairn_hir::instance::Instance::new(db, item, args.clone()).display(db)).collect()
        };
        let when = when_text(db, item);
        let effects = crate::program::row_of(workspace.last_rows().as_deref(), item);
        let session = &self.implementations[at];
        let (policy, mut regressions) = (session.policy.clone(), session.regressions.clone());
        // An emulating session validates through a runner that builds device work for host threads.
        let emulating = match &session.emulate {
            None => None,
            Some(target) => match runner.emulating(target) {
                Ok(emulating) => Some(emulating),
                Err(why) => {
                    return Err(self.rejection(
                        "E-VALIDATION",
                        format!("{name} could not be validated against {reference}: {why}."),
                    ));
                }
            },
        };
        let runner: &dyn Runner = emulating.as_deref().unwrap_or(runner);
        let target = session.emulate.clone();
        let mut facts: BTreeMap<String, InstanceFacts> = BTreeMap::new();
        for symbol in &symbols {
            let kept = regressions.of(symbol);
            let validation = crate::validate::validate(workspace, symbol, &policy, &kept, runner);
            submitted.records.extend(crate::validate::history_record(workspace, &validation, &policy));
            let record = serde_json::to_value(&validation.record).unwrap_or_default();
            if validation.code != 0 {
                let kept_now = validation.keep.is_some();
                if let Some(case) = validation.keep {
                    regressions.keep(symbol, case);
                }
                if kept_now {
                    self.implementations[at].regressions = regressions.clone();
                    submitted.regressions = Some(regressions);
                }
                let finite = record.get("finite").cloned().unwrap_or(Value::Null);
                let failed = finite.get("failed").cloned();
                let mut refusal = self
                    .rejection(
                        "E-VALIDATION",
                        match record.get("reason").and_then(Value::as_str) {
                            Some(reason) if validation.code == 2 => {
                                format!("{symbol} could not be validated against {reference}: {reason}")
                            }
                            _ => format!("{symbol} disagrees with {reference} on an input its condition admits."),
                        },
                    )
                    .detail("implementation", Value::from(symbol.as_str()))
                    .detail("finite", finite)
                    .detail("smt", record.get("smt").cloned().unwrap_or(Value::Null))
                    .detail("identity", record.get("identity").cloned().unwrap_or(Value::Null));
                if let Some(failed) = failed {
                    refusal = refusal.detail("failed", failed);
                }
                return Err(refusal);
            }
            facts.insert(
                symbol.clone(),
                InstanceFacts {
                    identity: validation.record.identity.clone(),
                    when: when.clone(),
                    effects: Some(effects.clone()),
                    requires: Some(Vec::new()),
                    finite: record.get("finite").cloned(),
                    smt: record.get("smt").cloned(),
                    evidence: validation.record.evidence,
                    emulation: validation.record.emulation.clone(),
                },
            );
        }
        let candidate_sha256 = candidate.sha256();
        self.implementations[at].sources = candidate.clone();
        submitted.program = Some(candidate);
        let (flat, instances) = if tuned.is_empty() {
            (facts.into_values().next().unwrap_or_default(), BTreeMap::new())
        } else {
            (InstanceFacts::default(), facts)
        };
        let select =
            if tuned.is_empty() { name.clone() } else { symbols[0].rsplit('.').next().unwrap_or("").to_string() };
        let answer = Validated {
            protocol: IMPLEMENTATION,
            status: "validated",
            implementation: name,
            facts: flat,
            instances,
            select_with: format!("plan {bare} use {select};"),
            claim: match &target {
                Some(target) => format!(
                    "{CLAIM}; its device code ran on host threads as an emulation of {target}, never on the device"
                ),
                None => CLAIM.to_string(),
            },
            candidate_sha256,
            selected: false,
        };
        Ok(super::records::to_map(&answer))
    }

    /// The full name of an implementation session's reference.
    pub fn implementation_reference(&self, handle: &str) -> Option<&str> {
        self.implementations.iter().find(|s| s.handle == handle).map(|s| s.reference.as_str())
    }
}

/// The program with `source` inserted right after the reference (one blank line between), an
/// implementation of the same name it replaces removed: the sources, the file's index, and where
/// the submission sits.
fn insert(
    workspace: &Workspace,
    sources: &Sources,
    reference: Item,
    replaced: Option<Item>,
    source: &str,
) -> (Sources, usize, ReplySpan) {
    let db = workspace.db();
    let locate = |item: Item| -> Option<(String, usize, usize)> {
        let (file, start) = workspace.locate(item)?;
        let name = workspace.files()[file].name.clone();
        let start = usize::from(start);
        Some((name, start, start + usize::from(item.syntax(db).syntax_node().text_range().len())))
    };
    let (name, _, mut end) = locate(reference).unwrap_or_default();
    let file = sources.files.iter().position(|f| f.name == name).unwrap_or(0);
    let mut text = sources.files[file].text.clone();
    if let Some((other, start, stop)) = replaced.and_then(locate)
        && other == name
    {
        // The blank line an earlier insertion put before it goes with it, so that submitting
        // the same implementation again leaves the same text.
        let start = if text[..start].ends_with("\n\n") { start - 2 } else { start };
        text.replace_range(start..stop, "");
        if start < end {
            end -= stop - start;
        }
    }
    let inserted = format!("\n\n{source}");
    text.insert_str(end, &inserted);
    let mut candidate = sources.clone();
    candidate.files[file].text = text;
    let span = ReplySpan { start: end + 2, replacement_len: source.len(), prefix: 0 };
    (candidate, file, span)
}

/// Every own function's row by full name.
fn rows_by_name(workspace: &Workspace) -> BTreeMap<String, Vec<String>> {
    let scope = cairn_hir::Resolver::new(workspace.db());
    let mut out = BTreeMap::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in file.items.iter().filter(|e| e.key.kind == cairn_hir::ItemKind::Fn) {
            out.insert(
                scope.full_name(entry.item).to_string(),
                crate::program::row_of(workspace.last_rows().as_deref(), entry.item),
            );
        }
    }
    out
}

/// The reference as the packet shows it.
fn reference_facts(workspace: &Workspace, item: Item, source: &str) -> Reference {
    let db = workspace.db();
    let ceiling = match &cairn_hir::fn_signature(db, item).ceiling {
        Some(ceiling) => {
            let mut list: Vec<String> = ceiling.effects.iter().map(|e| e.to_string()).collect();
            if ceiling.pure {
                list.insert(0, "pure".into());
            }
            Value::from(list)
        }
        None => Value::from("none declared: its own row is the ceiling"),
    };
    Reference {
        symbol: cairn_hir::Resolver::new(db).full_name(item).to_string(),
        source: source.to_string(),
        effects: crate::program::row_of(workspace.last_rows().as_deref(), item),
        ceiling,
    }
}

/// The program's implementations of `reference`: their conditions and identities.
fn existing(workspace: &Workspace, reference: Item) -> BTreeMap<String, Existing> {
    let db = workspace.db();
    let scope = cairn_hir::Resolver::new(db);
    cairn_hir::implementations::implementations_of(db, reference)
        .into_iter()
        .map(|g| {
            let identity = cairn_hir::generics::fn_generics(db, g)
                .is_empty()
                .then(|| cairn_hir::implementations::identity(db, cairn_hir::instance::Instance::monomorphic(db, g)))
                .flatten();
            (scope.full_name(g).to_string(), Existing { when: when_text(db, g), identity })
        })
        .collect()
}

/// A declaration's significant tokens joined by single spaces (what `reference_sha256` digests).
fn tokens_of(node: &cairn_syntax::SyntaxNode) -> String {
    let words: Vec<String> = node
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia())
        .map(|t| t.text().to_string())
        .collect();
    words.join(" ")
}
