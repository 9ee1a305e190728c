//! The plan host (protocol §8): sessions that choose how one function's parallel regions are
//! split — never what they compute — so a reply carries item names and whole numbers only.
//!
//! Open names a function with a parallel region and answers the packet: its items with their
//! ranges (`grain`, `lanes`; `fuse` with two regions or more), the plan it has now, and where a
//! plan is written. A reply is judged in the protocol's order: its shape, its session (a session
//! answered once is spent; the admitted candidate is the successor, `generation + 1`), each item
//! (open, and `0` or within its range), then the program with the plan written after the
//! function (any other schedule plan of it removed), checked whole, every function's row and
//! guard sites unchanged. The device items wait for device regions (issue 21).

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use serde::Serialize;
use serde_json::{Map, Value};

use super::refusal::Refusal;
use super::{Answer, EditHost, Sources};
use crate::plans::{FUSE, HOST_ITEMS, current_plan, plan_text, write_plan};

/// The protocol of plan sessions.
pub const PLAN: &str = "cairn.plan/1";

/// One plan session.
pub(super) struct PlanSession {
    /// The session digest: its only name.
    pub(super) session: String,
    pub(super) sources: Sources,
    /// The function's full name.
    pub(super) symbol: String,
    /// Where the program came from (a manifest or file path, or `source`): two programs of the same
    /// text opened from different places are different sessions.
    pub(super) origin: String,
    pub(super) generation: u64,
    /// Answered once (or succeeded by a reopen): a reply to it is `E-SESSION`.
    pub(super) spent: bool,
}

#[derive(Serialize)]
struct Packet {
    protocol: &'static str,
    session: String,
    symbol: String,
    signature: String,
    effects: Vec<String>,
    current: BTreeMap<String, u64>,
    items: BTreeMap<&'static str, Range>,
    written_in: WrittenIn,
    pinned: Vec<&'static str>,
    reply: Reply,
    note: &'static str,
    /// With sizes: the function's predictions (`cairn predict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted: Option<crate::predict::FunctionPrediction>,
}

#[derive(Serialize)]
struct Range {
    region: &'static str,
    least: u64,
    most: u64,
}

#[derive(Serialize, Clone)]
struct WrittenIn {
    module: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    after_line: Option<u32>,
}

#[derive(Serialize)]
struct Reply {
    protocol: &'static str,
    session: String,
    items: BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
struct Admission {
    protocol: &'static str,
    status: &'static str,
    symbol: String,
    plan: String,
    written_in: WrittenIn,
    candidate_sha256: String,
    rows_unchanged: bool,
    formal_status: &'static str,
    next_session: String,
}

const PINNED: [&str; 4] = [
    "every function's body, signature, row and guards",
    "the numerical contract",
    "every other plan",
    "what every region computes: a plan decides only how its indices are split",
];
const NOTE: &str =
    "A reply sets items only, each a whole number in its range; 0 or a missing item leaves the runtime's choice.";

/// What an admitted plan reply changes, for a caller that writes it: the file and its new text.
pub struct PlanWritten {
    pub file: String,
    pub text: String,
}

impl EditHost {
    /// Opens a plan session on `symbol` of `sources` (from `origin`: the program's manifest or file
    /// path, or `source` for inline text); with `sizes` (each a map from size names to values) the
    /// packet carries the function's predictions under `profile`.
    pub fn plan_open(
        &mut self,
        sources: Sources,
        origin: &str,
        symbol: &str,
        sizes: &[BTreeMap<String, f64>],
        profile: &crate::predict::Profile,
    ) -> Answer {
        self.settle();
        match self.try_plan_open(sources, origin, symbol, sizes, profile) {
            Ok(record) => Answer::ok(record),
            Err(refusal) => refusal.into(),
        }
    }

    fn try_plan_open(
        &mut self,
        sources: Sources,
        origin: &str,
        symbol: &str,
        sizes: &[BTreeMap<String, f64>],
        profile: &crate::predict::Profile,
    ) -> Result<Map<String, Value>, Refusal> {
        let (index, _) = self.program(sources.clone());
        if let Some(refusal) = self.ws_mut(index).check().refusal {
            return Err(self.compiler_refusal(&refusal.first, Some(index)));
        }
        let workspace = self.ws(index);
        let item = match crate::program::resolve_function(workspace, symbol) {
            Ok(item) => item,
            Err(matches) => {
                let names = crate::program::qualified_names(workspace, symbol);
                let why = if matches == 0 { "names no function" } else { "is declared by more than one module" };
                return Err(self
                    .rejection("E-SYMBOL", format!("{symbol} {why}: name the function with its module."))
                    .detail("symbols", Value::from(names)));
            }
        };
        if let Some(name) = crate::predict::stray_size(workspace, &[item], sizes) {
            return Err(self.rejection("E-REQUEST", format!("sizes: {name} is no parameter of {symbol}.")));
        }
        let db = workspace.db();
        let full = cairn_hir::Resolver::new(db).full_name(item).to_string();
        let regions = cairn_hir::regions::fn_regions(db, item).len();
        if regions == 0 {
            return Err(self.rejection(
                "E-PLAN",
                format!("{full} has no parallel region for a plan to split: a plan schedules `parallel` statements."),
            ));
        }
        let items = open_items(regions);
        let current = current_plan(workspace, item);
        let written_in = written_in(workspace, item, &sources);
        let signature = crate::program::source_of(workspace, item)
            .lines()
            .next()
            .unwrap_or_default()
            .trim_end_matches('{')
            .trim()
            .to_string();
        let effects = crate::program::row_of(workspace.last_rows().as_deref(), item);
        let predicted = (!sizes.is_empty())
            .then(|| crate::predict::predict(&crate::predict::work_of(workspace, item), sizes, profile));
        // A reopen spends the function's live session of the same program.
        for session in self.plans.iter_mut().filter(|s| s.symbol == full && s.origin == origin) {
            session.spent = true;
        }
        let session = plan_digest(&sources, origin, &full, 0);
        self.plans.retain(|s| s.session != session);
        self.plans.push(PlanSession {
            session: session.clone(),
            sources,
            symbol: full.clone(),
            origin: origin.to_string(),
            generation: 0,
            spent: false,
        });
        let packet = Packet {
            protocol: PLAN,
            session: session.clone(),
            symbol: full,
            signature,
            effects,
            current,
            reply: Reply { protocol: PLAN, session, items: items.keys().map(|k| (*k, 0)).collect() },
            items,
            written_in,
            pinned: PINNED.to_vec(),
            note: NOTE,
            predicted,
        };
        Ok(super::records::to_map(&packet))
    }

    /// Takes back a plan session that a restarted server kept (docs/durability.md): the session
    /// of `symbol` (its full name) of `sources` from `origin` at `generation`, when that is the
    /// session `session` names — its digest covers all four, so a session comes back only on
    /// exactly the program it stood on. False when it is not.
    pub fn plan_resume(
        &mut self,
        sources: Sources,
        origin: &str,
        symbol: &str,
        generation: u64,
        session: &str,
    ) -> bool {
        if plan_digest(&sources, origin, symbol, generation) != session {
            return false;
        }
        self.plans.retain(|s| s.session != session);
        self.plans.push(PlanSession {
            session: session.to_string(),
            sources,
            symbol: symbol.to_string(),
            origin: origin.to_string(),
            generation,
            spent: false,
        });
        true
    }

    /// Where plan session `session` stands, for a checkpoint: its function's full name and its
    /// generation, while it is live (not yet answered or reopened).
    pub fn plan_session(&self, session: &str) -> Option<(String, u64)> {
        self.plans.iter().find(|s| s.session == session && !s.spent).map(|s| (s.symbol.clone(), s.generation))
    }

    /// Judges one `cairn.plan/1` reply (protocol §8.3); an admitted one also says what to write.
    pub fn plan_reply(&mut self, reply: &Value) -> (Answer, Option<PlanWritten>) {
        self.settle();
        match self.try_plan_reply(reply) {
            Ok((record, written)) => (Answer::ok(record), Some(written)),
            Err(refusal) => (refusal.into(), None),
        }
    }

    fn try_plan_reply(&mut self, reply: &Value) -> Result<(Map<String, Value>, PlanWritten), Refusal> {
        let Some(reply) = reply.as_object() else {
            return Err(self.rejection("E-REQUEST", "A plan reply is a JSON object."));
        };
        let keys: Vec<&str> = reply.keys().map(String::as_str).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        if sorted != ["items", "protocol", "session"] || reply.get("protocol").and_then(Value::as_str) != Some(PLAN) {
            return Err(self.rejection(
                "E-REQUEST",
                format!("A plan reply is exactly {{\"protocol\":\"{PLAN}\",\"session\":…,\"items\":{{…}}}}."),
            ));
        }
        let Some(given) = reply.get("items").and_then(Value::as_object) else {
            return Err(self.rejection("E-REQUEST", "items is an object from item names to whole numbers."));
        };
        let session = reply.get("session").and_then(Value::as_str).unwrap_or_default();
        let Some(at) = self.plans.iter().position(|s| s.session == session) else {
            return Err(self.rejection("E-SESSION", "No plan session has this digest: open one with plan_open."));
        };
        if self.plans[at].spent {
            return Err(self.rejection(
                "E-SESSION",
                "This plan session was answered already (or reopened): reply to its successor (next_session).",
            ));
        }
        let (sources, symbol, generation) =
            (self.plans[at].sources.clone(), self.plans[at].symbol.clone(), self.plans[at].generation);
        let origin = self.plans[at].origin.clone();
        let (index, _) = self.program(sources.clone());
        let workspace = self.ws(index);
        let Some(item) = workspace.function_named(&symbol) else {
            return Err(self.refuse_internal("the function is gone"));
        };
        let db = workspace.db();
        let open = open_items(cairn_hir::regions::fn_regions(db, item).len());
        let mut chosen: Vec<(&'static str, u64)> = Vec::new();
        for (name, value) in given {
            let Some(value) = value.as_u64().filter(|_| value.is_u64()) else {
                return Err(self.rejection("E-REQUEST", format!("The item {name} is not a whole number.")));
            };
            let Some((&word, range)) = open.get_key_value(name.as_str()) else {
                let names: Vec<&str> = open.keys().copied().collect();
                return Err(self.rejection(
                    "E-PLAN",
                    format!("{name} is not an item open for {symbol}: its items are {}.", names.join(", ")),
                ));
            };
            if value != 0 && !(range.least..=range.most).contains(&value) {
                return Err(self.rejection(
                    "E-PLAN",
                    format!(
                        "{name} {value} is out of range: {name} takes {} to {} (0: the runtime's choice).",
                        range.least, range.most
                    ),
                ));
            }
            if value != 0 {
                chosen.push((word, value));
            }
        }
        // The plan, its items in their documented order, under the name the function's own
        // module gives it, after the function.
        let plan = plan_text(&symbol, &chosen);
        let (files, file) = write_plan(workspace, &sources.files, item, (!chosen.is_empty()).then_some(plan.as_str()));
        let candidate = Sources { files, project: sources.project };
        let before = receipts(workspace);
        let (candidate_index, _) = self.program(candidate.clone());
        if let Some(refusal) = self.ws_mut(candidate_index).check().refusal {
            return Err(self.compiler_refusal(&refusal.first, Some(candidate_index)));
        }
        let after = receipts(self.ws(candidate_index));
        if before != after {
            return Err(
                self.rejection("E-PLAN", "The plan changed a function's row or guards, which a plan never may.")
            );
        }
        let written_in = written_in(
            self.ws(candidate_index),
            item_named(self.ws(candidate_index), &symbol).unwrap_or(item),
            &candidate,
        );
        let next = plan_digest(&candidate, &origin, &symbol, generation + 1);
        self.plans[at].spent = true;
        // A long-lived host keeps at most this many: the oldest spent sessions go first.
        while self.plans.len() >= super::SESSION_LIMIT {
            match self.plans.iter().position(|s| s.spent) {
                Some(oldest) => self.plans.remove(oldest),
                None => self.plans.remove(0),
            };
        }
        self.plans.push(PlanSession {
            session: next.clone(),
            sources: candidate.clone(),
            symbol: symbol.clone(),
            origin,
            generation: generation + 1,
            spent: false,
        });
        let admission = Admission {
            protocol: PLAN,
            status: "admitted",
            symbol,
            plan,
            written_in,
            candidate_sha256: candidate.sha256(),
            rows_unchanged: true,
            formal_status: "not-verified",
            next_session: next,
        };
        let written =
            PlanWritten { file: candidate.files[file].name.clone(), text: candidate.files[file].text.clone() };
        Ok((super::records::to_map(&admission), written))
    }
}

/// The items open for a function with `regions` regions (all host regions in this build).
fn open_items(regions: usize) -> BTreeMap<&'static str, Range> {
    let mut items: BTreeMap<&'static str, Range> =
        HOST_ITEMS.iter().map(|&(w, least, most)| (w, Range { region: "host", least, most })).collect();
    if regions >= 2 {
        items.insert(FUSE.0, Range { region: "either", least: FUSE.1, most: FUSE.2 });
    }
    items
}

/// Where a plan of `item` is written: its module, and for a project its file and line.
fn written_in(workspace: &Workspace, item: Item, sources: &Sources) -> WrittenIn {
    let db = workspace.db();
    let module = cairn_hir::Resolver::new(db).module_of(item).to_string();
    let module = if module.is_empty() { "(root)".to_string() } else { module };
    let located = workspace.locate(item).map(|(file, start)| {
        let state = &workspace.files()[file];
        let end = start + item.syntax(db).syntax_node().text_range().len();
        (state.name.clone(), state.line_index().line_column(&state.text(), end).line)
    });
    match located {
        Some((file, line)) if sources.project => WrittenIn { module, file: Some(file), after_line: Some(line) },
        _ => WrittenIn { module, file: None, after_line: None },
    }
}

/// Every own function's row and guard sites, by full name (what a plan may not change).
fn receipts(workspace: &Workspace) -> BTreeMap<String, (Vec<String>, Vec<(&'static str, u32)>)> {
    workspace
        .function_facts()
        .into_iter()
        .filter(|f| !f.library)
        .map(|f| {
            let name = if f.module.is_empty() { f.name.to_string() } else { format!("{}.{}", f.module, f.name) };
            (name, (f.row.unwrap_or_default().iter().map(|e| e.to_string()).collect(), f.sites))
        })
        .collect()
}

fn item_named(workspace: &Workspace, full: &str) -> Option<Item> {
    workspace.function_named(full)
}

/// A plan session's digest (protocol §2.3).
fn plan_digest(sources: &Sources, origin: &str, symbol: &str, generation: u64) -> String {
    let value = serde_json::to_value((PLAN, sources.sha256(), origin, symbol, generation)).unwrap_or_default();
    crate::canonical::digest(&value)
}
