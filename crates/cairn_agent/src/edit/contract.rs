//! The host contract of a session (protocol §2.1, §6.1), judged at open in §3.1's order: its
//! shape and symbol, `allowed_effects` (shape, legality, baseline), `preserve`, and the evidence
//! requests (`contracts`, `references`, `tests`: shapes, names, one kind per function, the
//! task), then the evidence each request establishes.
//!
//! Boundary: a `references` entry is decided here, once, with Z3 (the reference against the
//! pinned function); `tests` need the native task runner, which this build lacks, so they fall
//! back to `declared` with `check: "unknown"` — never a pass.

use std::collections::{BTreeMap, BTreeSet};

use cairn_hir::types::{Mode, Ty};
use cairn_hir::{Item, Workspace};
use serde::Serialize;
use serde_json::{Map, Value};

use super::refusal::Refusal;
use super::{EditHost, OpenRequest};
use crate::equiv;

/// The evidence a contract asked for about one function (protocol §6.1).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Evidence {
    /// The host's text, checked by nobody.
    Declared(String),
    /// A check the host asked for (a reference, finite tests) that this build cannot decide: the
    /// class falls back to `declared`, shows the host's request, and names the status the check
    /// reached (protocol §6.1: an undecided check never counts as a pass).
    Undecided { contract: Shown, check: &'static str },
    /// Z3 found the dependency equivalent to the host's reference, at session open: the
    /// reference stands in for the body (protocol §6.1).
    Smt { contract: Shown },
}

/// How a packet shows the host's request for evidence about a dependency (its `contract`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(super) enum Shown {
    /// A `contracts` entry: the host's text.
    Text(String),
    /// A `references` entry.
    Reference {
        reference: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        assume: Option<String>,
    },
    /// A `tests` entry: how many cases, and the first eight as the host wrote them (its own
    /// values, so they stay JSON).
    Tests { cases: usize, shown: Vec<Value> },
}

/// The keys a host contract may have.
const CONTRACT_KEYS: [&str; 7] = ["symbol", "task", "allowed_effects", "preserve", "contracts", "references", "tests"];

impl EditHost {
    /// The contract as an object (absent or `null`: empty), naming the session's symbol if any,
    /// with no key outside [`CONTRACT_KEYS`].
    pub(super) fn contract_shape(&self, request: &OpenRequest) -> Result<Map<String, Value>, Refusal> {
        let contract = match &request.contract {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(self.rejection("E-CONTRACT", "The host contract must be a JSON object.")),
        };
        if let Some(symbol) = contract.get("symbol")
            && symbol.as_str() != Some(request.symbol.as_str())
        {
            return Err(self.rejection("E-CONTRACT", "The contract names another symbol than the session's."));
        }
        if let Some(key) = contract.keys().find(|key| !CONTRACT_KEYS.contains(&key.as_str())) {
            return Err(self.rejection("E-CONTRACT", format!("The contract has an unknown key {key}.")));
        }
        Ok(contract)
    }

    /// The effect ceiling: the contract's `allowed_effects` (each legal for the target, and
    /// holding the target's current row), or the current row.
    pub(super) fn ceiling(
        &self,
        workspace: &Workspace,
        item: Item,
        symbol: &str,
        contract: &Map<String, Value>,
        row: &[String],
    ) -> Result<BTreeSet<String>, Refusal> {
        let not_a_list = || self.rejection("E-CONTRACT", "allowed_effects must be a list of strings.");
        let items = match contract.get("allowed_effects") {
            None => return Ok(row.iter().cloned().collect()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(not_a_list()),
        };
        let mut ceiling = BTreeSet::new();
        for entry in items {
            let Some(effect) = entry.as_str() else { return Err(not_a_list()) };
            if !legal_effect(workspace, item, effect) {
                return Err(self.rejection("E-CONTRACT", format!("{effect} cannot be allowed for {symbol}.")));
            }
            ceiling.insert(effect.to_string());
        }
        if let Some(outside) = row.iter().find(|e| !ceiling.contains(*e)) {
            return Err(self.rejection(
                "E-CONTRACT",
                format!("The function's row already holds {outside}, outside the allowed effects."),
            ));
        }
        Ok(ceiling)
    }

    /// `preserve` is absent, `null`, `identical` or `equivalent`.
    pub(super) fn preserve_shape(&self, contract: &Map<String, Value>) -> Result<(), Refusal> {
        match contract.get("preserve") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(p)) if p == "identical" || p == "equivalent" => Ok(()),
            Some(_) => Err(self.rejection("E-CONTRACT", "preserve is identical or equivalent.")),
        }
    }

    /// The evidence requests, in the contract's order as `(kind, function)`: each entry of the
    /// right shape, naming a function of the program, one kind per function; and a task naming
    /// the session's function.
    pub(super) fn evidence_requests(
        &self,
        workspace: &Workspace,
        symbol: &str,
        contract: &Map<String, Value>,
    ) -> Result<Vec<(&'static str, String)>, Refusal> {
        let mut requested: Vec<(&'static str, String)> = Vec::new();
        for key in ["contracts", "references", "tests"] {
            let Some(value) = contract.get(key) else { continue };
            let Value::Object(entries) = value else {
                return Err(self.rejection("E-CONTRACT", format!("{key} must be an object from function names.")));
            };
            for (name, entry) in entries {
                if !request_shape_ok(key, name, entry) {
                    let shape = match key {
                        "contracts" => "a text",
                        "references" => "{\"reference\": source[, \"assume\": condition]}",
                        _ => "a cairn.task/1 object for that function",
                    };
                    return Err(self.rejection("E-CONTRACT", format!("{key}.{name} must be {shape}.")));
                }
                requested.push((key, name.clone()));
            }
        }
        if let Some((_, name)) = requested.iter().find(|(_, name)| workspace.function_named(name).is_none()) {
            return Err(self
                .rejection(
                    "E-SYMBOL",
                    format!("The contract asks for evidence about {name}, which is not a function of this program."),
                )
                .detail("symbol", Value::String(name.clone())));
        }
        for (i, (key, name)) in requested.iter().enumerate() {
            if let Some((other, _)) = requested[..i].iter().find(|(_, n)| n == name) {
                return Err(self.rejection(
                    "E-CONTRACT",
                    format!("The contract asks for two kinds of evidence about {name} ({other} and {key}); keep one."),
                ));
            }
        }
        if let Some(Value::Object(task)) = contract.get("task")
            && let Some(task_symbol) = task.get("symbol")
            && task_symbol.as_str() != Some(symbol)
        {
            return Err(self.rejection("E-CONTRACT", "The task names another function than the session's."));
        }
        Ok(requested)
    }
}

/// What each evidence request establishes (the requests were judged by
/// [`EditHost::evidence_requests`]): a `references` entry is decided with Z3 here.
pub(super) fn decide_evidence(
    workspace: &Workspace,
    contract: &Map<String, Value>,
    requested: &[(&'static str, String)],
) -> BTreeMap<String, Evidence> {
    let mut evidence = BTreeMap::new();
    for (key, name) in requested {
        let entry = &contract[*key][name.as_str()];
        let decided = match *key {
            "contracts" => Evidence::Declared(entry.as_str().unwrap_or("").to_string()),
            "references" => {
                let reference = entry["reference"].as_str().unwrap_or("");
                let assume = entry.get("assume").and_then(Value::as_str);
                let shown = Shown::Reference { reference: reference.to_string(), assume: assume.map(str::to_string) };
                match reference_check(workspace, name, reference, assume.unwrap_or("true")) {
                    Ok(()) => Evidence::Smt { contract: shown },
                    Err(check) => Evidence::Undecided { contract: shown, check },
                }
            }
            _ => {
                let cases = entry.get("cases").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                // Running them needs the native task runner, which this build lacks.
                let shown = Shown::Tests { cases: cases.len(), shown: cases.iter().take(8).cloned().collect() };
                Evidence::Undecided { contract: shown, check: "unknown" }
            }
        };
        evidence.insert(name.clone(), decided);
    }
    evidence
}

/// An evidence entry of kind `key` for the function `name` has the shape §6.1 gives it.
fn request_shape_ok(key: &str, name: &str, entry: &Value) -> bool {
    match (key, entry) {
        ("contracts", entry) => entry.is_string(),
        ("references", Value::Object(r)) => {
            r.get("reference").is_some_and(Value::is_string)
                && r.get("assume").is_none_or(Value::is_string)
                && r.keys().all(|k| k == "reference" || k == "assume")
        }
        ("tests", Value::Object(t)) => {
            t.get("symbol").is_none_or(|s| s.as_str() == Some(name)) && t.get("cases").is_some_and(Value::is_array)
        }
        _ => false,
    }
}

/// Decides a `references` entry at session open: the function `name` of the pinned program
/// against the function of the same name in `reference` (a program of its own), under
/// `assume`. `Err` names the status the check ended in (protocol §6.1).
fn reference_check(workspace: &Workspace, name: &str, reference: &str, assume: &str) -> Result<(), &'static str> {
    let Some(item) = workspace.function_named(name) else { return Err("invalid-contract") };
    let reference = equiv::Reference::load(reference, name, workspace, item)?;
    let assumption = equiv::assumption(workspace, name, assume).map_err(|_| "invalid-domain")?;
    let new = equiv::Lowered::closure(workspace, item).ok_or("unknown")?;
    let new_symbol = equiv::symbol_of(workspace, item);
    let comparison = equiv::compare(
        &reference.lowered,
        &reference.symbol,
        &new,
        &new_symbol,
        assumption.as_ref(),
        true,
        cairn_smt::Options::default(),
    );
    match comparison.verdict {
        cairn_smt::Verdict::Equivalent => Ok(()),
        cairn_smt::Verdict::Differs(_) => Err("counterexample"),
        cairn_smt::Verdict::ReferenceTraps(_) => Err("invalid-reference"),
        cairn_smt::Verdict::EmptyDomain => Err("invalid-domain"),
        cairn_smt::Verdict::Unknown(_) => Err("unknown"),
    }
}

/// An effect a contract may allow for `item`: a known name, a family, or a footprint of one of its
/// borrowed parameters (`write:` only for an `rw` one).
fn legal_effect(workspace: &Workspace, item: Item, effect: &str) -> bool {
    const KNOWN: &[&str] = &[
        "alloc",
        "free",
        "zero_init",
        "stack_storage",
        "gpu_alloc",
        "gpu_free",
        "spawn",
        "join",
        "atomic",
        "lock",
        "indirect_call",
        "dispatch",
        "io",
        "mmio",
        "asm",
        "fence",
        "barrier",
        "trap",
        "diverge",
        "ffi_precondition",
        "local_read",
        "local_write",
    ];
    if KNOWN.contains(&effect) || ["ffi:", "transfer:", "par:", "asm:"].iter().any(|p| effect.starts_with(p)) {
        return true;
    }
    let signature = cairn_hir::fn_signature(workspace.db(), item);
    let param = |name: &str| signature.params.iter().find(|p| &*p.name == name).map(|p| p.ty.clone());
    match effect.split_once(':') {
        Some(("read", name)) => matches!(param(name), Some(Ty::View(_) | Ty::Borrow(..))),
        Some(("write", name)) => match param(name) {
            Some(Ty::View(v)) => v.mode == Mode::Rw,
            Some(Ty::Borrow(mode, _)) => mode == Mode::Rw,
            _ => false,
        },
        _ => false,
    }
}
