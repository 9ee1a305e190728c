//! Every refusal the edit host sends (protocol §4, tools.md §1.4): the host's own (`line: 0`),
//! a reply's parse refusals (located in the reply), and the compiler's (located in the reply
//! when they fall inside it, else at the candidate's line), with the `E-CALLEE` hint a host
//! gives.
//!
//! Invariant: a [`Refusal`]'s fields are in the documented key order — the header, the rule's
//! own details, where it is, then how to fix it — so the record needs no sorting; until the terms
//! were sent it carries the teaching fields (`protocol`, `trust`, `automatic_edit`,
//! `acceptance_boundary`), after that it drops them.

use std::collections::BTreeSet;

use cairn_diagnostics::registry::card_of;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{ACCEPTANCE_BOUNDARY, Answer, EditHost};

/// A refusal on its way to the agent: its record, boxed (a refusal is the `Err` of every step
/// of opening and judging, and the steps' `Ok` values are small).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub(super) struct Refusal(Box<Record>);

/// A refusal record.
#[derive(Debug, Clone, Serialize)]
struct Record {
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'static str>,
    status: &'static str,
    code: String,
    message: String,
    line: u32,
    column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    trust: Option<&'static str>,
    /// The rule's own fields (`symbol`, `fields`, `added_effects`, a compiler diagnostic's
    /// `expected_type`, …), in the order given. Each rule has its own, so this stays a map.
    #[serde(flatten)]
    details: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(rename = "in", skip_serializing_if = "Option::is_none")]
    within: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_line: Option<String>,
    /// The card that owns the code; `Some(None)` (shown as `null`) for a reply's refusal whose
    /// code no card owns.
    #[serde(skip_serializing_if = "Option::is_none")]
    card: Option<Option<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repair_hint: Option<String>,
    /// The sentences of the card that state the rule, when no packet of this host showed them
    /// (packets show cards trimmed; docs/decisions.md "Trimmed cards").
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    automatic_edit: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    acceptance_boundary: Option<&'static str>,
}

impl Refusal {
    /// Adds one of the rule's own fields (a key given again replaces its value in place).
    ///
    /// Invariant: a detail is never one of the record's own fields (the details sit between
    /// `trust` and `file`, the place tools.md §1.4 gives them).
    pub(super) fn detail(mut self, key: &str, value: Value) -> Refusal {
        debug_assert!(!OWN_FIELDS.contains(&key), "{key} is a field of every refusal, not a detail");
        self.0.details.insert(key.to_string(), value);
        self
    }

    /// The repair hint, replacing the card's.
    pub(super) fn hint(mut self, hint: impl Into<String>) -> Refusal {
        self.0.repair_hint = Some(hint.into());
        self
    }

    /// Located inside the reply: its 1-based line and column there, and that line.
    fn in_reply(mut self, (line, column, source_line): (u32, u32, String)) -> Refusal {
        self.0.line = line;
        self.0.column = column;
        self.0.within = Some("reply");
        self.0.source_line = Some(source_line);
        self
    }
}

impl From<Refusal> for Answer {
    fn from(refusal: Refusal) -> Answer {
        Answer { record: super::records::to_map(&refusal), refused: true, admitted: None }
    }
}

/// The keys of a refusal record that are its own fields, not a rule's details.
const OWN_FIELDS: [&str; 16] = [
    "protocol",
    "status",
    "code",
    "message",
    "line",
    "column",
    "trust",
    "file",
    "module",
    "in",
    "source_line",
    "card",
    "repair_hint",
    "rule",
    "automatic_edit",
    "acceptance_boundary",
];

/// Where a reply sits in a candidate: its start, its length as spliced, and the wrapping
/// parenthesis of an expression reply.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReplySpan {
    pub start: usize,
    pub replacement_len: usize,
    pub prefix: usize,
}

impl EditHost {
    /// A host refusal (no position), taught until the terms were sent.
    pub(super) fn rejection(&self, code: &str, message: impl Into<String>) -> Refusal {
        let teaching = !self.terms_sent;
        Refusal(Box::new(Record {
            protocol: teaching.then_some("cairn.diagnostic/2"),
            status: "rejected",
            code: code.to_string(),
            message: message.into(),
            line: 0,
            column: 0,
            trust: teaching.then_some("prototype-not-verified"),
            details: Map::new(),
            file: None,
            within: None,
            source_line: None,
            card: card_of(code).map(|card| Some(card.name)),
            repair_hint: cairn_diagnostics::hints::host_hint(code).map(str::to_string),
            rule: None,
            automatic_edit: teaching.then_some(false),
            acceptance_boundary: teaching.then_some(ACCEPTANCE_BOUNDARY),
        }))
    }

    /// A request that must have exactly the keys `expected` (`fields` names the ones missing
    /// or extra); `form` names the request in the message ("A body request").
    pub(super) fn exact_keys(
        &self,
        request: &Map<String, Value>,
        expected: &BTreeSet<&str>,
        form: &str,
    ) -> Result<(), Refusal> {
        let given: BTreeSet<&str> = request.keys().map(String::as_str).collect();
        let fields: Vec<&str> = expected.symmetric_difference(&given).copied().collect();
        if fields.is_empty() {
            return Ok(());
        }
        let keys = expected.iter().copied().collect::<Vec<_>>().join(", ");
        Err(self
            .rejection("E-REQUEST", format!("{form} has exactly the keys {keys}."))
            .detail("fields", Value::from(fields)))
    }

    pub(super) fn refuse_internal(&self, why: &str) -> Refusal {
        self.rejection("E-INTERNAL", format!("internal error in the edit host: {why}"))
    }

    /// A refusal of the reply itself (its form, its parse), at byte `at` of the reply.
    pub(super) fn reply_refusal(&self, code: &str, message: &str, reply: &str, at: usize) -> Refusal {
        let mut refusal = self.rejection(code, message).in_reply(line_column(reply, at));
        refusal.0.card = Some(card_of(code).map(|c| c.name));
        refusal
    }

    /// A compiler refusal of `program`, at the line the compiler gave.
    pub(super) fn compiler_refusal(&self, first: &cairn_diagnostics::Diagnostic, program: Option<usize>) -> Refusal {
        self.compiler_refusal_at(first, program, None)
    }

    /// A compiler refusal of `program`, located in the reply when it falls inside it (`reply`:
    /// the edited file, the candidate's text and where the reply sits in it).
    pub(super) fn compiler_refusal_at(
        &self,
        first: &cairn_diagnostics::Diagnostic,
        program: Option<usize>,
        reply: Option<(usize, &str, ReplySpan)>,
    ) -> Refusal {
        let mut refusal = self.rejection(&first.code, first.message.clone());
        // `related` places are lines of the whole file, while a host's record is placed in the
        // reply: the host leaves them out (the message still says what happened where).
        for (key, value) in first.details.iter().filter(|(key, _)| key != "related") {
            refusal = refusal.detail(key, value.clone());
        }
        if let Some(hint) = &first.repair_hint {
            refusal = refusal.hint(hint);
        }
        refusal.0.rule = self.unsent_rule(&first.code);
        if first.line == 0 {
            return refusal;
        }
        refusal.0.line = first.line;
        refusal.0.column = first.column;
        let Some(program) = program.map(|p| &self.programs[p]) else { return refusal };
        let file = match &first.file {
            Some(name) => program.sources.files.iter().position(|s| &s.name == name),
            None => Some(reply.map_or(0, |r| r.0)),
        };
        let Some(file) = file else { return refusal };
        if program.sources.files.len() > 1 {
            refusal.0.file = Some(program.sources.files[file].name.clone());
        }
        let text: &str = match reply {
            Some((reply_file, candidate, span)) if reply_file == file => {
                let offset = offset_of(candidate, first.line, first.column);
                let inner_start = span.start + span.prefix;
                let inner_end = span.start + span.replacement_len - span.prefix;
                if offset >= inner_start && offset <= inner_end && inner_end > inner_start {
                    let reply_text = &candidate[inner_start..inner_end];
                    return refusal.in_reply(line_column(reply_text, (offset - inner_start).min(reply_text.len())));
                }
                candidate
            }
            _ => &program.sources.files[file].text,
        };
        let line = text.lines().nth(first.line as usize - 1).unwrap_or("");
        refusal.0.source_line = Some(line.chars().take(500).collect());
        refusal
    }

    /// The sentences of a language card that name `code`, unless a packet of this host showed
    /// a paragraph naming it.
    fn unsent_rule(&self, code: &str) -> Option<String> {
        let card = card_of(code).filter(|card| card.kind == cairn_diagnostics::CardKind::Language)?;
        let names =
            |index: &usize| cairn_diagnostics::registry::codes_named_in(card.paragraphs[*index]).contains(&code);
        if self.sent_cards.get(card.name).is_some_and(|sent| sent.iter().any(names)) {
            return None;
        }
        let lead = cairn_diagnostics::card_text::paragraphs_led_by(card, code).into_iter().next()?;
        cairn_diagnostics::registry::codes_named_in(&lead).contains(&code).then_some(lead)
    }

    /// The `E-CALLEE` hint inside a host (protocol §5.3): close matches among the builtins and
    /// the names the session disclosed (never an undisclosed function), and that a function must
    /// be expanded before a reply calls it.
    pub(super) fn callee_hint(&self, index: usize, first: &cairn_diagnostics::Diagnostic) -> Option<String> {
        let name = first.message.strip_prefix("Unknown callable ")?.split(':').next()?;
        if first.code != "E-CALLEE" {
            return None;
        }
        let session = &self.sessions[index];
        let mut names: Vec<std::sync::Arc<str>> = Vec::new();
        for full in &session.visible {
            names.push(full.as_str().into());
            if let Some(local) = full.rsplit('.').next() {
                names.push(local.into());
            }
        }
        let near = cairn_hir::check::close_callables(name, &names);
        let expand =
            "a function not shown in the packet must be disclosed by an expand request before a reply calls it";
        Some(if near.is_empty() {
            format!("Only declared functions and builtins can be called; {expand}.")
        } else {
            format!("Perhaps {}? Otherwise, {expand}.", near.join(" or "))
        })
    }
}

/// 1-based line and column (in characters) of a byte offset, and that line's text.
fn line_column(text: &str, offset: usize) -> (u32, u32, String) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() as u32 + 1;
    let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
    (line, column, text[line_start..line_end].chars().take(500).collect())
}

/// The byte offset of a 1-based line and column (in characters).
fn offset_of(text: &str, line: u32, column: u32) -> usize {
    let mut offset = 0;
    for (i, l) in text.split('\n').enumerate() {
        if i + 1 == line as usize {
            let within: usize = l.chars().take(column.saturating_sub(1) as usize).map(char::len_utf8).sum();
            return offset + within;
        }
        offset += l.len() + 1;
    }
    text.len()
}
