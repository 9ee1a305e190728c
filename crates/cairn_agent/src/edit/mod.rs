//! The edit host (protocol §2–§5, §14–§15): sessions on one function, packets, and the judging
//! of every reply against the whole program.
//!
//! A session pins the program's text at open. Every `body`/`expr` reply is spliced into that
//! pinned original (never into an earlier admitted candidate), its tokens outside the span must
//! lex as before, and the whole program is re-checked through the shared salsa workspace — an
//! edit of one body re-checks that body and the whole-program record, nothing else
//! (docs/semantics.md). The workspace is then put back to the original, so the original's
//! memos stay valid for the next reply. Admission checks run in the spec's order.
//!
//! Cards and the terms block are sent once per host. Refusals are taught records (§4); from the
//! first packet on they drop the fields the terms explain.
//!
//! This file holds the host and its public entry points only. The rooms: `sources` (the program
//! as given, its combined source), `sessions` (sessions, the compile cache, write-back),
//! `open` and `contract` (opening a session, the host contract and its evidence), `packet` and
//! `terms` (what an agent is shown), `request` and `v1` (the `cairn.edit/2` and `cairn.edit/1`
//! requests), `admission` (judging a reply, one rule per step), `expand`, `state`, `refusal`
//! (every refusal record) and `records` (the typed protocol records); `implementation` is the
//! implementation host (protocol §9), which shares the compiles, cards and terms; `plan` is the
//! plan host (protocol §8). The read-only questions over a checked workspace are the crate's
//! `program`, which the tools outside a session share.

mod admission;
mod contract;
mod expand;
mod implementation;
mod investigate;
mod open;
mod packet;
mod plan;
mod predict;
pub(crate) mod records;
mod refusal;
mod request;
mod sessions;
mod sources;
mod state;
mod terms;
mod v1;

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The text of one file of a program (re-exported so the servers need no edge to `cairn_hir`).
pub use cairn_hir::SourceText;
use serde_json::{Map, Value};

pub use self::implementation::{IMPLEMENTATION, ImplementationOpen, Submitted};
pub use self::plan::{PLAN, PlanWritten};
use self::sessions::{HostProgram, Session};
pub use self::sources::{Admitted, Sources};

/// The byte limit of a replacement (protocol §3.4).
pub const REPLACEMENT_LIMIT: usize = 64_000;
/// How many names one `expand` may ask for.
pub const EXPAND_LIMIT: usize = 32;
/// The constant of every model-facing refusal (tools.md §1.4).
pub const ACCEPTANCE_BOUNDARY: &str = "frontend only; not a semantic or machine proof";
/// The most programs whose compiles the host keeps (tools.md §6); the least recently used
/// compile is dropped first and rebuilt if a session of it speaks again.
pub const PROGRAM_CACHE: usize = 16;
/// The most sessions a host keeps; opening one more forgets the least recently used, whose
/// handle is then `E-SESSION` (a long-lived server must not grow without bound).
pub const SESSION_LIMIT: usize = 256;

/// An answer of the host: the record, and whether it is a refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub record: Map<String, Value>,
    pub refused: bool,
    /// For an admitted `body`/`expr`: what to write.
    pub admitted: Option<Admitted>,
}

impl Answer {
    fn ok(record: Map<String, Value>) -> Answer {
        Answer { record, refused: false, admitted: None }
    }
}

/// What `open` needs.
#[derive(Debug, Clone, Default)]
pub struct OpenRequest {
    pub symbol: String,
    /// `focused` (default) or `component`.
    pub scope: Option<String>,
    /// The host contract object.
    pub contract: Option<Value>,
    /// Extra names to disclose.
    pub include: Vec<String>,
    /// An expression site to focus (`x<n>`).
    pub site: Option<String>,
    /// The handle to give the session (a server that issues its own, so they stay unique
    /// across its restarts); else the host numbers it. A session of the host with this handle
    /// is replaced.
    pub handle: Option<String>,
}

/// What a host has said once (cards and terms entries sent, and whether the terms went out),
/// so a restarted server that restores an agent's sessions does not teach it again.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Said {
    /// The card paragraphs sent, as `card#index`.
    pub cards: Vec<String>,
    pub terms: Vec<String>,
    pub terms_sent: bool,
}

/// The edit host: its sessions, the cards and terms it has sent, the states it has sent.
#[derive(Default)]
pub struct EditHost {
    programs: Vec<HostProgram>,
    sessions: Vec<Session>,
    /// Per card, the paragraphs sent.
    sent_cards: BTreeMap<&'static str, BTreeSet<usize>>,
    sent_terms: BTreeSet<String>,
    states: HashMap<String, Map<String, Value>>,
    terms_sent: bool,
    clock: u64,
    /// Compiles to move forward to written candidates ([`EditHost::advance`]).
    pending: Vec<(usize, Admitted)>,
    /// The number of the last handle issued.
    handles: u64,
    /// Implementation sessions (protocol §9), and the number of the last one's handle.
    implementations: Vec<implementation::ImplSession>,
    impl_handles: u64,
    /// Plan sessions (protocol §8), live and spent.
    plans: Vec<plan::PlanSession>,
}

impl EditHost {
    pub fn new() -> EditHost {
        EditHost::default()
    }

    /// What this host has said once.
    pub fn said(&self) -> Said {
        Said {
            cards: self
                .sent_cards
                .iter()
                .flat_map(|(card, paragraphs)| paragraphs.iter().map(move |index| format!("{card}#{index}")))
                .collect(),
            terms: self.sent_terms.iter().cloned().collect(),
            terms_sent: self.terms_sent,
        }
    }

    /// Takes `said` as said by this host too: `card#index` for one paragraph, a bare card name
    /// for the whole card; a name that is no card, or an index past its paragraphs, is ignored.
    pub fn hear_said(&mut self, said: &Said) {
        for entry in &said.cards {
            let (name, index) = match entry.split_once('#') {
                Some((name, index)) => (name, index.parse::<usize>().ok()),
                None => (entry.as_str(), None),
            };
            let Some(card) = cairn_diagnostics::registry::card_named(name) else { continue };
            let sent = self.sent_cards.entry(card.name).or_default();
            match index {
                Some(index) if index < card.paragraphs.len() => {
                    sent.insert(index);
                }
                Some(_) => {}
                None if entry.contains('#') => {}
                None => sent.extend(0..card.paragraphs.len()),
            }
        }
        self.sent_terms.extend(said.terms.iter().cloned());
        self.terms_sent |= said.terms_sent;
    }

    /// True once the terms were sent (later answers leave out what they explain).
    pub fn terms_sent(&self) -> bool {
        self.terms_sent
    }

    /// Checks a program (the MCP `check` tool shares the host's compiles): its refusal record or
    /// its summary, and whether the compile was already cached.
    pub fn check(&mut self, sources: Sources) -> (Map<String, Value>, bool, bool) {
        self.settle();
        let (index, cached) = self.program(sources);
        let outcome = self.ws_mut(index).check();
        match outcome.refusal {
            None => {
                let summary = records::CheckSummary {
                    status: "typed",
                    functions: outcome.functions,
                    library_functions: outcome.library_functions,
                    cached,
                    formal_status: "not-verified",
                };
                (records::to_map(&summary), false, cached)
            }
            Some(refusal) => {
                let mut record = cairn_diagnostics::record::refusal_record(&refusal);
                record.insert("cached".into(), Value::Bool(cached));
                (record, true, cached)
            }
        }
    }

    /// The state of a program (`cairn.state/1`), remembered so a later delta can name it.
    pub fn program_state(&mut self, sources: Sources, with_file: bool) -> Map<String, Value> {
        self.settle();
        let (index, _) = self.program(sources);
        let view = self.ws_mut(index).state_view(false);
        let state =
            crate::state_record(&view, &crate::compiler::profile(), self.programs[index].source_sha(), with_file);
        self.remember_state(&state);
        state
    }

    /// Opens an edit session: the handle-level packet, or a refusal.
    pub fn open(&mut self, sources: Sources, request: OpenRequest) -> Answer {
        self.settle();
        match self.try_open(sources, request) {
            Ok(packet) => Answer::ok(records::to_map(&packet)),
            Err(refusal) => refusal.into(),
        }
    }

    /// The session-level packet `cairn inspect` prints (tools.md §3.8): opens a session on a
    /// fresh view of the cards and terms, discloses `expand` as an expand request would, and
    /// keeps the fields the edit host strips (`session`, the three `_sha256` digests) with a
    /// `cairn.edit/1` draft bound to the session digest.
    pub fn inspect(&mut self, sources: Sources, request: OpenRequest, expand: &[String]) -> Answer {
        self.settle();
        match self.try_inspect(sources, request, expand) {
            Ok((packet, _)) => Answer::ok(records::to_map(&packet)),
            Err(refusal) => refusal.into(),
        }
    }

    /// [`EditHost::inspect`] with `performance`: `native`'s `cairn.explain/1` of the disclosed
    /// functions (`cairn inspect --explain`).
    pub fn inspect_explained(
        &mut self,
        sources: Sources,
        request: OpenRequest,
        expand: &[String],
        native: &dyn crate::validate::Runner,
    ) -> Answer {
        self.settle();
        let files = sources.files.clone();
        match self.try_inspect(sources, request, expand) {
            Ok((packet, visible)) => match native.explain(&files, &visible) {
                Ok(performance) => {
                    let mut record = records::to_map(&packet);
                    record.insert("performance".into(), Value::Object(performance));
                    Answer::ok(record)
                }
                Err(why) => self.refuse_internal(&format!("explain failed: {why}")).into(),
            },
            Err(refusal) => refusal.into(),
        }
    }

    /// Answers one `cairn.edit/2` request, given as JSON text (parsed strictly) or a value.
    pub fn request_text(&mut self, text: &str) -> Answer {
        match crate::strict::parse(text) {
            Ok(value) => self.request(&value),
            Err(why) => self.rejection("E-REQUEST", format!("The request is not valid JSON: {why}.")).into(),
        }
    }

    /// Answers one `cairn.edit/2` request.
    pub fn request(&mut self, value: &Value) -> Answer {
        self.settle();
        self.answer_request(value, None)
    }

    /// Answers one `cairn.edit/2` request with `native` at hand for the kinds that read emitted
    /// code (`explain`).
    pub fn request_with(&mut self, value: &Value, native: &dyn crate::validate::Runner) -> Answer {
        self.settle();
        self.answer_request(value, Some(native))
    }

    /// Answers a `cairn.edit/1` request, bound to a session digest rather than a handle
    /// (protocol §3.3): the session object's own API, which `cairn inspect`'s draft targets.
    /// The edit host's handle requests ([`EditHost::request`]) refuse this form.
    pub fn request_v1(&mut self, value: &Value) -> Answer {
        self.settle();
        self.answer_v1(value)
    }

    /// A finished host refusal record (no position), for the servers' own checks of their
    /// arguments: taught like every refusal of this host, keys in their documented order.
    pub fn refusal(&self, code: &str, message: impl Into<String>, details: Vec<(&str, Value)>) -> Map<String, Value> {
        self.refuse(code, message, details).record
    }

    /// A host refusal (no position), taught.
    pub fn refuse(&self, code: &str, message: impl Into<String>, details: Vec<(&str, Value)>) -> Answer {
        let mut refusal = self.rejection(code, message);
        for (key, value) in details {
            refusal = refusal.detail(key, value);
        }
        refusal.into()
    }
}
