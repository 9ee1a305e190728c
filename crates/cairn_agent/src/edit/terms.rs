//! The terms block of a packet (protocol §14.3): what the host's words mean, sent once per host.
//!
//! Invariant: each entry is remembered by its key and value once sent; a later packet leaves
//! out what was sent before (and says so with `"terms"` in `sent_before`), so an entry whose
//! text changes (the scope of a component session after a focused one) is sent again.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::sessions::Session;
use super::{EXPAND_LIMIT, REPLACEMENT_LIMIT};

/// The terms not sent before, in their documented order.
#[derive(Debug, Default, Serialize)]
pub(super) struct Terms {
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<Limits>,
    #[serde(skip_serializing_if = "Option::is_none")]
    boundaries: Option<[&'static str; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refusal: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admission: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    /// What each evidence class shown in the packet means, by class.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    evidence: BTreeMap<&'static str, &'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'static str>,
}

/// The limits a reply and an expand keep.
#[derive(Debug, Clone, Copy, Serialize)]
struct Limits {
    replacement_bytes: usize,
    one_authored_function: bool,
    expand: usize,
}

const BOUNDARIES: [&str; 3] = [
    "Parameters, imports, target flags, tests and the task are the host's: a reply changes only the one body or expression.",
    "Every reply is checked against the complete linked program, however little of it the packet shows.",
    "typed means the checker accepted the program; it does not mean correct, terminating, equivalent or fast, and no success rate of fresh models has been measured.",
];

/// The terms entries of `session`'s packet not yet sent by this host (`sent_terms` remembers
/// them), and whether any were withheld. `classes` are the evidence classes the packet shows.
pub(super) fn terms_for(
    sent_terms: &mut BTreeSet<String>,
    session: &Session,
    classes: &BTreeSet<&str>,
) -> (Terms, bool) {
    let mut offer = Offer { sent_terms, withheld: false };
    let scope = if session.focused {
        "focused: the target with the interfaces of its callees and callers; anything else by expand"
    } else {
        "component: every function connected to the target through calls, either way, and every type"
    };
    let mut terms = Terms {
        profile: offer.take("profile", crate::compiler::profile()),
        scope: offer.take("scope", scope),
        limits: offer.take(
            "limits",
            Limits { replacement_bytes: REPLACEMENT_LIMIT, one_authored_function: true, expand: EXPAND_LIMIT },
        ),
        boundaries: offer.take("boundaries", BOUNDARIES),
        refusal: offer.take(
            "refusal",
            "A refusal comes from the checker, proves nothing about behaviour, and never changes the source by itself.",
        ),
        admission: offer.take(
            "admission",
            "typed: the complete program passed the checker with the reply spliced in and no byte outside its range moved; nothing was built, tested, proved or timed, and guard-site numbers are counted statically.",
        ),
        state: offer.take(
            "state",
            "A state request answers with the program as it now stands: per module, each function as [signature, row], sealed by a digest; a delta request with since answers with the differences only.",
        ),
        evidence: BTreeMap::new(),
        task: None,
    };
    for class in classes {
        let Some((class, text)) = evidence_class(class) else { continue };
        if let Some(text) = offer.take(&format!("evidence.{class}"), text) {
            terms.evidence.insert(class, text);
        }
    }
    if !session.contract.contains_key("task") {
        terms.task = offer.take("task", "No task was supplied, so none is to be assumed.");
    }
    (terms, offer.withheld)
}

/// The entries a host offers, against the ones it sent before.
struct Offer<'a> {
    sent_terms: &'a mut BTreeSet<String>,
    withheld: bool,
}

impl Offer<'_> {
    /// `value` unless the entry `key` was sent with it before (then it is withheld).
    fn take<T: Serialize>(&mut self, key: &str, value: T) -> Option<T> {
        let memo = format!("{key}={}", serde_json::to_string(&value).unwrap_or_default());
        if self.sent_terms.contains(&memo) {
            self.withheld = true;
            return None;
        }
        self.sent_terms.insert(memo);
        Some(value)
    }
}

/// What an evidence class means (protocol §6.1), for the classes a packet can show.
fn evidence_class(class: &str) -> Option<(&'static str, &'static str)> {
    Some(match class {
        "interface" => (
            "interface",
            "the compiler's signature, row, types and extents, and nothing about behaviour; expand the body before relying on what it does",
        ),
        "declared" => {
            ("declared", "the host's own description, checked by nobody; expand the body before relying on it")
        }
        "smt-equivalent" => (
            "smt-equivalent",
            "Z3 found no allowed input where the function and the host's reference differ in result, leftovers or traps, decided when this session opened, within the modelled fragment: the reference stands in for the body",
        ),
        "comment" => ("comment", "the first comment line above the declaration: the author's claim, unchecked"),
        _ => return None,
    })
}
