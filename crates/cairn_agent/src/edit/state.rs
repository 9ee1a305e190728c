//! `state` and `delta` requests (protocol §7.1–§7.2): a session's program as it now stands —
//! the latest admitted candidate, else the pinned original — with each admission as evidence,
//! and the difference from a state this host sent before.
//!
//! Invariant: every state a host sends is remembered by its digest (the plain state and the one
//! with evidence alike), so any of them can be a later delta's `since`.

use serde::Serialize;
use serde_json::{Map, Value};

use super::records::SiteCounts;
use super::{Answer, EditHost};

/// One admission of the session, as a state's `evidence` lists it.
#[derive(Debug, Serialize)]
struct Evidence<'a> {
    symbol: &'a str,
    status: &'static str,
    effects: &'a [String],
    check_sites: &'a SiteCounts,
}

impl EditHost {
    /// Remembers a state this host sent.
    pub fn remember_state(&mut self, state: &Map<String, Value>) {
        if let Some(d) = state.get("digest").and_then(Value::as_str) {
            self.states.insert(d.to_string(), state.clone());
        }
    }

    /// A state this host sent, by digest.
    pub fn sent_state(&self, digest: &str) -> Option<&Map<String, Value>> {
        self.states.get(digest)
    }

    /// Answers a `state` request of session `index`.
    pub(super) fn state(&mut self, index: usize) -> Answer {
        Answer::ok(self.current_state(index))
    }

    /// Answers a `delta` request of session `index` since the state digested `since`.
    pub(super) fn delta(&mut self, index: usize, since: &str) -> Answer {
        let Some(before) = self.states.get(since).cloned() else {
            return self.rejection("E-SESSION", "since names no state this host sent.").into();
        };
        let now = self.current_state(index);
        match crate::delta(&before, &now) {
            Ok(delta) => Answer::ok(delta),
            Err(e) => self.rejection("E-REQUEST", e.0).into(),
        }
    }

    /// The session's program as it now stands: the latest admitted candidate, else the original.
    fn current_state(&mut self, index: usize) -> Map<String, Value> {
        let session = &self.sessions[index];
        let evidence: Vec<Evidence<'_>> = session
            .admitted
            .iter()
            .map(|c| Evidence { symbol: &session.symbol, status: "typed", effects: &c.row, check_sites: &c.sites })
            .collect();
        let evidence = serde_json::to_value(evidence).unwrap_or_default();
        let mut sources = self.programs[session.program].sources.clone();
        if let Some(candidate) = session.admitted.last() {
            let file = &mut sources.files[session.file];
            file.text = candidate.change.apply(&file.text);
        }
        let state = self.program_state(sources, false);
        let state = crate::state::with_evidence(state, evidence);
        self.remember_state(&state);
        state
    }
}
