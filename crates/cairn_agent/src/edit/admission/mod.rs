//! Judging a `body` or `expr` reply (protocol §3.4–§3.6, docs/edit-host.md "Judging a reply"):
//! one rule per step, in the spec's order, each step its own function in its own file.
//!
//! 1. `parse`: the reply parsed alone (a block or `= expr;` for a body, one expression for a
//!    site);
//! 2. `splice`: spliced into the pinned original;
//! 3. `tokens`: every token outside the span lexes as before;
//! 4. `splice`: the whole program checked with the reply in (the smallest edit), then the
//!    original restored — a compiler refusal is located in the reply;
//! 5. `declarations`: the signature and the set of functions stay;
//! 6. `effects`: the target's row within the ceiling;
//! 7. `closure`: every callee disclosed;
//! 8. `effects`: no other function's row gains an effect;
//! 9. `contracts`: under `preserve`, the change is of an admitted class.
//!
//! Invariant: whatever the verdict, the workspace rests at the pinned original afterwards, its
//! last record the original's (step 4 undoes its edit before anything else is judged).

mod checked;
mod closure;
mod contracts;
mod declarations;
mod effects;
mod parse;
mod splice;
mod tokens;

use std::collections::BTreeMap;

use serde::Serialize;

pub(super) use self::tokens::significant_tokens;
use super::records::{Named, SiteCounts};
use super::refusal::Refusal;
use super::sessions::Candidate;
use super::{Admitted, Answer, EditHost};

/// Other functions whose rows moved, by module, then by name: `[signature, row]`.
type Changed = BTreeMap<String, Named<(String, Vec<String>)>>;

const RUNTIME_COST: &str = "guard-site counts are static counts of checks in the code, not run-time costs";

/// An admission (`cairn.admission/1`): the target's row and sites with the reply in, and until
/// the terms were sent what the admission does and does not establish.
#[derive(Debug, Serialize)]
struct Admission {
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'static str>,
    status: &'static str,
    symbol: String,
    effects: Vec<String>,
    check_sites: SiteCounts,
    /// The sites before, when they moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    check_sites_before: Option<SiteCounts>,
    /// Other functions whose rows moved, by module and name: `[signature, row]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<Changed>,
    /// The class of the change, kept whenever the session has a preserve contract (protocol
    /// §3.5 [port]).
    #[serde(skip_serializing_if = "Option::is_none")]
    equivalence: Option<&'static str>,
    #[serde(flatten)]
    teaching: Option<Teaching>,
}

/// What an admission establishes and what it does not, sent until the terms were.
#[derive(Debug, Serialize)]
struct Teaching {
    runtime_cost: &'static str,
    source_outside_edit_unchanged: bool,
    contract_unchanged: bool,
    full_module_rechecked: bool,
    native_build: &'static str,
    behavioral_tests: &'static str,
    /// `not-proved` when no preserve contract gave the change a class.
    #[serde(skip_serializing_if = "Option::is_none")]
    equivalence: Option<&'static str>,
    formal_status: &'static str,
}

impl EditHost {
    /// Judges a `body` reply, or an `expr` reply at a site (an index the caller checked). The
    /// session's program is loaded.
    pub(super) fn judge(&mut self, index: usize, site: Option<usize>, replacement: &str) -> Answer {
        match self.try_judge(index, site, replacement) {
            Ok(answer) => answer,
            Err(refusal) => refusal.into(),
        }
    }

    fn try_judge(&mut self, index: usize, site: Option<usize>, replacement: &str) -> Result<Answer, Refusal> {
        let is_expr = site.is_some();
        self.parse_alone(index, replacement, is_expr)?;
        let session = &self.sessions[index];
        let item = self
            .target(session)
            .ok_or_else(|| self.refuse_internal("the session's function vanished from its pinned program"))?;
        let splice = self.splice(index, site, replacement);
        self.tokens_preserved(&splice)?;
        let checked = self.check_spliced(index, item, &splice)?;
        self.declarations_kept(index, &checked)?;
        self.within_ceiling(index, &checked)?;
        self.callees_disclosed(index, &checked)?;
        self.callers_unmoved(&checked)?;
        let equivalence = self.preserved(index, item, &checked)?;
        Ok(self.admit(index, splice, checked, equivalence))
    }

    /// Records the admitted candidate in its session and answers with the admission.
    fn admit(
        &mut self,
        index: usize,
        splice: splice::Splice,
        checked: checked::Checked,
        equivalence: Option<&'static str>,
    ) -> Answer {
        let teaching = !self.terms_sent;
        let session = &mut self.sessions[index];
        let change = Admitted { file: splice.file, replaced: splice.start..splice.end, text: splice.wrapped };
        let candidate = Candidate { change: change.clone(), row: checked.row.clone(), sites: checked.sites.clone() };
        session.admitted.push(candidate);
        let mut changed: Changed = BTreeMap::new();
        for moved in checked.moved {
            changed.entry(moved.module).or_default().insert(moved.local, (moved.signature, moved.row));
        }
        let admission = Admission {
            protocol: teaching.then_some("cairn.admission/1"),
            status: "typed",
            symbol: session.symbol.clone(),
            effects: checked.row,
            check_sites_before: (checked.sites != session.sites_before).then(|| session.sites_before.clone()),
            check_sites: checked.sites,
            changed: (!changed.is_empty()).then_some(changed),
            equivalence,
            teaching: teaching.then(|| Teaching {
                runtime_cost: RUNTIME_COST,
                source_outside_edit_unchanged: true,
                contract_unchanged: true,
                full_module_rechecked: true,
                native_build: "not-run",
                behavioral_tests: "not-run",
                equivalence: equivalence.is_none().then_some("not-proved"),
                formal_status: "not-verified",
            }),
        };
        Answer { record: super::records::to_map(&admission), refused: false, admitted: Some(change) }
    }
}
