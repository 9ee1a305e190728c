//! The records of named choices (protocol §11): the semantic contract, the packet a model is
//! shown, the `body` request a fill makes of the edit host, a fill's receipt, the semantic
//! check, the finite search, and what a sketch's digest covers.
//!
//! Invariant: a record's JSON keys come out in the order of its fields (serde_json keeps
//! insertion order in this workspace), so a record type *is* its documented key order; a key
//! that is sometimes absent is an `Option` skipped when `None`. The sketch hands its records out
//! as JSON maps ([`crate::edit::records::to_map`]). Deliberately `Value`: what the caller or
//! the model wrote (the task, the choices) and what the edit host answered (a fill's judgement).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::equiv::{OutcomeRecord, Receipt};
use crate::named::Named;

/// The protocol of named choices.
pub(super) const CHOICES: &str = "cairn.choices/1";

/// What a packet says when the caller gave no task.
pub(super) const NO_TASK: &str = "No task was supplied, so none is to be assumed.";

/// What every semantic answer holds true only within.
pub(super) const BOUNDARY: &str = "SMT-equivalent holds within the modelled fragment for the inputs the assumption allows; the assumption is not checked at run time.";

/// The scalar reference a sketch's candidates are checked against; the packet shows it as it
/// is, and the sketch's digest covers it.
#[derive(Debug, Clone, Serialize)]
pub struct SemanticContract {
    /// A program declaring the reference function.
    pub reference_source: String,
    /// The function (the sketched one's name).
    pub symbol: String,
    /// A precondition over the parameters (`"true"`: none).
    pub assume: String,
    pub allow_reference_traps: bool,
}

/// A binding in scope at a slot, as the checker gave it (`type`: `null` when unknown).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Binding {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub mutable: bool,
}

/// The packet (§11.2): what the model is shown and how it answers. It holds no digest.
#[derive(Serialize)]
pub(super) struct Packet<'a> {
    pub protocol: &'static str,
    /// The caller's task, as given (else [`NO_TASK`]).
    pub task: Value,
    pub source: String,
    pub slots: Named<SlotShown<'a>>,
    pub allowed_effects: Vec<String>,
    pub rule_cards: Vec<&'static str>,
    pub semantic_contract: Option<ShownContract<'a>>,
    /// The reply's shape: every slot with its original expression.
    pub reply: Named<&'a str>,
    pub instructions: &'static str,
    pub acceptance: &'static str,
    pub identity_binding: &'static str,
}

impl<'a> Packet<'a> {
    /// The packet of these parts, with the protocol's fixed words.
    pub fn new(
        task: Value,
        source: String,
        slots: Named<SlotShown<'a>>,
        allowed_effects: Vec<String>,
        semantic_contract: Option<ShownContract<'a>>,
        reply: Named<&'a str>,
    ) -> Packet<'a> {
        Packet {
            protocol: CHOICES,
            task,
            source,
            slots,
            allowed_effects,
            rule_cards: vec!["sketches"],
            semantic_contract,
            reply,
            instructions: "Answer only with the JSON object mapping every slot name to one CAIRN expression; nothing else.",
            acceptance: "The host fills the expressions in and checks the whole module; a typed answer says nothing about behaviour.",
            identity_binding: "The reply is bound to this host's sealed sketch and is not an authorized patch on its own.",
        }
    }
}

/// One slot as the packet shows it.
#[derive(Serialize)]
pub(super) struct SlotShown<'a> {
    pub original: &'a str,
    pub expected_type: Option<&'a str>,
    pub bindings: &'a [Binding],
}

/// The semantic contract as the packet shows it: the builder inserts no guard for the
/// assumption, and says so.
#[derive(Serialize)]
pub(super) struct ShownContract<'a> {
    #[serde(flatten)]
    pub contract: &'a SemanticContract,
    pub runtime_precondition_guard: &'static str,
}

impl<'a> ShownContract<'a> {
    pub fn of(contract: &'a SemanticContract) -> ShownContract<'a> {
        ShownContract { contract, runtime_precondition_guard: "not-inserted-by-builder" }
    }
}

/// The `cairn.edit/2` `body` request a fill makes of the sketch's session.
#[derive(Serialize)]
pub(super) struct BodyRequest<'a> {
    pub protocol: &'static str,
    pub handle: &'a str,
    pub kind: &'static str,
    pub replacement: &'a str,
}

impl<'a> BodyRequest<'a> {
    pub fn new(handle: &'a str, replacement: &'a str) -> BodyRequest<'a> {
        BodyRequest { protocol: "cairn.edit/2", handle, kind: "body", replacement }
    }
}

/// A fill's receipt (§11.3): the edit host's judgement of the filled body, then what binds it to
/// the sketch and the choices it was made of.
#[derive(Serialize)]
pub(super) struct FillReceipt {
    /// The edit host's answer to the `body` request, its keys first and in its order.
    #[serde(flatten)]
    pub judged: Map<String, Value>,
    pub sketch_sha256: String,
    pub candidate_sha256: String,
    /// The choices, as the reply gave them.
    pub slots: Map<String, Value>,
    pub only_declared_expressions_changed: bool,
    pub semantic_status: &'static str,
}

/// The semantic check of a candidate against the reference, as the feedback a model may see,
/// with the solver's receipt for the host. What is present depends on the status: a
/// counterexample has the witness's inputs and both outcomes, a refusal or an `unknown` a
/// reason; `not-run` has nothing else.
#[derive(Serialize)]
pub(super) struct SemanticCheck {
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Named<Value>>,
    /// What the reference does on the counterexample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<OutcomeRecord>,
    /// What the candidate does on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<OutcomeRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concrete_replay: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported_profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boundary: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smt_queries: Option<usize>,
    /// For the host (not model feedback): what the answer rests on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
}

impl SemanticCheck {
    /// A check that ended in `status` and nothing else.
    pub fn status(status: &'static str) -> SemanticCheck {
        SemanticCheck {
            status,
            counterexample: None,
            expected: None,
            actual: None,
            concrete_replay: None,
            reason: None,
            unsupported_profile: None,
            boundary: None,
            smt_queries: None,
            receipt: None,
        }
    }

    /// A check that could not ask the solver: its status, why, and the boundary.
    pub fn failed(status: &'static str, reason: &str) -> SemanticCheck {
        SemanticCheck { reason: Some(reason.to_string()), boundary: Some(BOUNDARY), ..SemanticCheck::status(status) }
    }
}

/// A finite search's answer (§11.3): its counts and, when a candidate was certified, that
/// candidate, its choices and its semantic receipt.
#[derive(Serialize)]
pub(super) struct FiniteSearch {
    pub status: &'static str,
    pub mode: &'static str,
    pub attempts: usize,
    pub candidate_product: usize,
    pub solver_calls: usize,
    pub smt_queries: usize,
    pub cache_rejections: usize,
    pub counterexamples: usize,
    pub front_end_refusals: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choices: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_receipt: Option<SemanticReceipt>,
}

/// What a certified candidate's equivalence rests on: the sketch and candidate digests, the
/// status, and the solver's receipt.
#[derive(Serialize)]
pub(super) struct SemanticReceipt {
    pub sketch_sha256: String,
    pub candidate_sha256: String,
    pub status: &'static str,
    pub solver: Option<Receipt>,
}

/// What a sketch's digest covers: the source, the session, the function, the contract, the
/// compiler and every slot (`[name, start, end, original]`). Digested as canonical JSON, so the
/// order of its keys does not matter.
#[derive(Serialize)]
pub(super) struct SketchIdentity<'a> {
    pub source: String,
    pub session: Option<String>,
    pub symbol: &'a str,
    pub contract: Option<&'a SemanticContract>,
    pub compiler: String,
    pub slots: Vec<(&'a str, u32, u32, &'a str)>,
}
