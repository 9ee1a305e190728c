//! Packets (protocol §2.4, §14): what an agent is shown of a session — the target's source, its
//! dependencies with their evidence, the types its texts mention, the rule cards they select,
//! the terms, the draft of a reply, and on a site its `focus` — and the seal that binds a
//! session's digest to what was disclosed.
//!
//! Invariant: cards and terms are sent once per host; a later packet names what it leaves out
//! in `sent_before`. A card is shown trimmed to its overview and the paragraphs the shown text
//! selects, within a budget (`cairn_diagnostics::trim`); a paragraph is sent once, and the codes
//! of a selected card's paragraphs neither shown now nor sent before are named in
//! `rules_not_shown`. A focused packet shows interfaces of its neighbours, a component packet
//! their sources.

use std::collections::{BTreeMap, BTreeSet};

use cairn_diagnostics::selection::Signals;
use cairn_diagnostics::trim::{CARD_BUDGET, select_paragraphs, trim};
use cairn_hir::{Item, Workspace};
use serde::Serialize;
use serde_json::Value;

use super::contract::{Evidence, Shown};
use super::records::Named;
use super::refusal::Refusal;
use super::sessions::Session;
use super::sessions::site_index;
use super::terms::{Terms, terms_for};
use super::{EditHost, OpenRequest, Sources};
use crate::canonical::digest;
use crate::compiler::implementation_hash;
use crate::program::{
    NotShown, all_types, callers_of, first_comment_line, row_of, source_of, traits_used, type_declaration,
    types_mentioned,
};

/// A packet (`cairn.packet/2` focused, `cairn.packet/1` component). The fields marked as
/// `cairn inspect`'s are present only in the session-level packet it prints.
#[derive(Debug, Serialize)]
pub(super) struct Packet {
    protocol: &'static str,
    /// `cairn inspect`'s: the session digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    /// The handle requests name (absent from `cairn inspect`'s packet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    symbol: String,
    /// The host's task object as it gave it: the host's own, so it stays JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<Value>,
    allowed_effects: Vec<String>,
    /// The target's row, when a focused packet's ceiling differs from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    effects: Option<Vec<String>>,
    types: String,
    context: Vec<Context>,
    rule_cards: Named<String>,
    /// Per card shown, the codes of its paragraphs this packet leaves out (never sent before).
    #[serde(skip_serializing_if = "Named::is_empty")]
    rules_not_shown: Named<Vec<&'static str>>,
    dependencies: Named<Dependency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    callers: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_shown: Option<NotShown>,
    /// The target's parallel regions (language §24), by stable id; absent when it has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    regions: Vec<RegionEntry>,
    scope: &'static str,
    terms: Terms,
    /// Cards (by name) and `terms` this host sent before and leaves out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sent_before: Vec<&'static str>,
    /// `cairn inspect`'s: the digests the session is sealed over.
    #[serde(skip_serializing_if = "Option::is_none")]
    contract_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    implementation_sha256: Option<String>,
    draft_protocol: Draft,
    #[serde(skip_serializing_if = "Option::is_none")]
    focus: Option<Focus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expand_protocol: Option<Hint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain_protocol: Option<Hint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state_protocol: Option<Hint>,
}

/// A dependency as a packet or an expansion shows it: its interface, and the evidence about
/// what it does.
#[derive(Debug, Serialize)]
pub(super) struct Dependency {
    pub signature: String,
    pub effects: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<Shown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<&'static str>,
    /// The first comment line above it (focused packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// One parallel region of the target: its stable id (`<function>@<8 hex>`, unchanged by edits
/// elsewhere, comments and reformatting), kind, binder, count as written, and line.
#[derive(Debug, Serialize)]
pub(super) struct RegionEntry {
    id: String,
    kind: &'static str,
    binder: String,
    count: String,
    line: u32,
}

/// A function whose source is shown.
#[derive(Debug, Serialize)]
pub(super) struct Context {
    pub symbol: String,
    pub source: String,
}

impl EditHost {
    /// The packet of `session` on `target` (whose callers are `callers`), focused on `site` if
    /// given. Sends the cards and terms it shows (they are not sent again).
    pub(super) fn packet(&mut self, session: &Session, target: Item, callers: &[String], site: Option<&str>) -> Packet {
        let program = &self.programs[session.program];
        let workspace = program.workspace.as_ref().expect("the program was loaded at the start of the request");
        let shown = Disclosed::of(workspace, session, target);
        let texts: Vec<&str> = shown.texts.iter().map(String::as_str).collect();
        let types = if session.focused { types_mentioned(workspace, &texts) } else { all_types(workspace) };
        let types = with_declarations(workspace, types, &session.expanded_types);
        // The traits and impls the function dispatches through (protocol §4: what it uses).
        let types = traits_used(workspace, target).into_iter().fold(types, |mut types, declaration| {
            if !types.lines().any(|l| l == declaration) {
                if !types.is_empty() {
                    types.push('\n');
                }
                types.push_str(&declaration);
            }
            types
        });
        let Offer { rule_cards, rules_not_shown, mut sent_before } =
            offer_cards(&mut self.sent_cards, &texts, signals(&texts, &types, session.focused));
        let (terms, withheld_terms) = terms_for(&mut self.sent_terms, session, &shown.classes);
        self.terms_sent = true;
        if withheld_terms {
            sent_before.push("terms");
        }
        let row_set: BTreeSet<&String> = session.row.iter().collect();
        Packet {
            protocol: if session.focused { "cairn.packet/2" } else { "cairn.packet/1" },
            session: None,
            handle: Some(session.handle.clone()),
            symbol: session.symbol.clone(),
            task: session.contract.get("task").cloned(),
            allowed_effects: session.ceiling.iter().cloned().collect(),
            effects: (session.focused && row_set != session.ceiling.iter().collect()).then(|| session.row.clone()),
            types,
            context: shown.context,
            rule_cards,
            rules_not_shown,
            dependencies: shown.dependencies,
            callers: session.focused.then(|| callers.to_vec()),
            not_shown: session.focused.then(|| NotShown::of(workspace, &session.visible)),
            regions: workspace
                .regions_of(target)
                .into_iter()
                .map(|r| RegionEntry {
                    id: r.id.to_string(),
                    kind: r.kind,
                    binder: r.binder.to_string(),
                    count: r.count.to_string(),
                    line: r.line,
                })
                .collect(),
            scope: if session.focused { "focused" } else { "component" },
            terms,
            sent_before,
            contract_sha256: None,
            source_sha256: None,
            implementation_sha256: None,
            draft_protocol: draft(&program.sources, session, site),
            focus: site.map(|site| focus(workspace, &program.sources, session, target, site)),
            expand_protocol: session.focused.then(|| Hint { symbols: Some(["name"]), ..Hint::of(session, "expand") }),
            explain_protocol: Some(Hint::of(session, "explain")),
            state_protocol: Some(Hint::of(session, "state")),
        }
    }

    /// The session-level packet of `cairn inspect` ([`EditHost::inspect`]): a session opened and
    /// expanded as asked, then its packet on a fresh view of the cards and terms, with the
    /// digests and a `cairn.edit/1` draft instead of the handle and the request hints.
    pub(super) fn try_inspect(
        &mut self,
        sources: Sources,
        request: OpenRequest,
        expand: &[String],
    ) -> Result<(Packet, Vec<String>), Refusal> {
        let site = request.site.clone();
        let handle = self.try_open(sources, request)?.handle.unwrap_or_default();
        let Some(index) = self.sessions.iter().position(|s| s.handle == handle) else {
            return Err(self.refuse_internal("the inspected session vanished"));
        };
        if !expand.is_empty() {
            self.try_expand(index, &Value::from(expand.to_vec()))?;
        }
        // Everything is shown again, as to an agent that saw nothing before.
        self.sent_cards.clear();
        self.sent_terms.clear();
        let session = self.sessions.remove(index);
        let Some(target) = self.target(&session) else {
            return Err(self.refuse_internal("the inspected function vanished"));
        };
        let callers = callers_of(self.ws(session.program), target);
        let mut packet = self.packet(&session, target, &callers, site.as_deref());
        packet.session = Some(session.digest.clone());
        packet.handle = None;
        packet.contract_sha256 = Some(digest(&Value::Object(session.contract.clone())));
        packet.source_sha256 = Some(self.programs[session.program].source_sha().to_string());
        packet.implementation_sha256 = Some(implementation_hash());
        let draft = &mut packet.draft_protocol;
        draft.protocol = "cairn.edit/1";
        draft.handle = None;
        draft.session = Some(session.digest.clone());
        draft.site = draft.site.as_deref().and_then(site_index).map(|i| self.site_key(&session, i));
        packet.expand_protocol = None;
        packet.explain_protocol = None;
        packet.state_protocol = None;
        let visible = session.visible.iter().cloned().collect();
        self.sessions.insert(index, session);
        Ok((packet, visible))
    }

    /// The session's digest over what it pinned and disclosed.
    pub(super) fn seal(&self, session: &Session) -> String {
        let seal = Seal {
            source: self.programs[session.program].source_sha(),
            symbol: &session.symbol,
            contract: &session.contract,
            visible: &session.visible,
            implementation: implementation_hash(),
            scope: session.focused.then_some("focused"),
        };
        digest(&serde_json::to_value(&seal).unwrap_or_default())
    }
}

/// The declarations of the types `names` (an expand's), appended to `types` unless it holds
/// them already, one per line.
pub(super) fn with_declarations(workspace: &Workspace, mut types: String, names: &[String]) -> String {
    for name in names {
        if let Some(text) = type_declaration(workspace, name)
            && !types.contains(&text)
        {
            if !types.is_empty() {
                types.push('\n');
            }
            types.push_str(&text);
        }
    }
    types
}

/// What a packet or an expansion shows of the rule cards.
pub(super) struct Offer {
    /// Each selected card with a paragraph shown now: those paragraphs, one per line.
    pub rule_cards: Named<String>,
    /// Per selected card, the codes its paragraphs name that were neither shown now nor sent.
    pub rules_not_shown: Named<Vec<&'static str>>,
    /// The selected cards of which nothing is shown now, because what was selected was sent.
    pub sent_before: Vec<&'static str>,
}

/// The card paragraphs `texts` select that this host has not sent, trimmed to the budget (now
/// marked sent). `sent` holds, per card, the paragraphs sent.
pub(super) fn offer_cards(
    sent: &mut BTreeMap<&'static str, BTreeSet<usize>>,
    texts: &[&str],
    signals: Signals,
) -> Offer {
    let selection = select_paragraphs(texts, signals);
    let shown = trim(&selection, |card, index| sent.get(card).is_some_and(|s| s.contains(&index)), CARD_BUDGET);
    let mut offer = Offer { rule_cards: Named::default(), rules_not_shown: Named::default(), sent_before: Vec::new() };
    for (card, indexes) in &shown {
        let text: Vec<&str> = indexes.iter().map(|&index| card.paragraphs[index]).collect();
        offer.rule_cards.insert(card.name, text.join("\n"));
        sent.entry(card.name).or_default().extend(indexes.iter().copied());
    }
    for selected in &selection {
        let card = selected.card;
        let before = sent.get(card.name);
        if !shown.iter().any(|(shown, _)| shown.name == card.name) {
            offer.sent_before.push(card.name);
        }
        let is_sent = |index: usize| before.is_some_and(|s| s.contains(&index));
        let named_sent: BTreeSet<&str> = (0..card.paragraphs.len())
            .filter(|&index| is_sent(index))
            .flat_map(|index| cairn_diagnostics::registry::codes_named_in(card.paragraphs[index]))
            .collect();
        let mut left: Vec<&'static str> = Vec::new();
        for (index, paragraph) in card.paragraphs.iter().enumerate() {
            if is_sent(index) {
                continue;
            }
            for code in cairn_diagnostics::registry::codes_named_in(paragraph) {
                if card.codes.contains(&code) && !named_sent.contains(code) && !left.contains(&code) {
                    left.push(code);
                }
            }
        }
        if !left.is_empty() {
            offer.rules_not_shown.insert(card.name, left);
        }
    }
    offer
}

/// The card signals beyond tokens (protocol §14.2): `views` when a shown function has a borrow
/// parameter; `records` when a shown type is a record or a tag-only enum; `sums` when one is a sum;
/// `lends` (focused scope only) when one lends a part. `types` holds one declaration per line (for a
/// component packet: every type of the program).
pub(super) fn signals(texts: &[&str], types: &str, focused: bool) -> Signals {
    let borrow_parameter = texts.iter().any(|text| {
        let words = super::admission::significant_tokens(text);
        words.windows(2).any(|w| (w[0] == "ro" || w[0] == "rw") && w[1] == "<")
    });
    let declarations: Vec<&str> = types.lines().map(str::trim_start).collect();
    let enums = declarations.iter().filter(|d| d.starts_with("enum ") || d.starts_with("pub enum "));
    let sum_type = enums.clone().any(|d| d.contains('('));
    let record_type = declarations.iter().any(|d| d.starts_with("struct ") || d.starts_with("pub struct "))
        || enums.clone().any(|d| !d.contains('('));
    let lending_type = focused && declarations.iter().any(|d| d.contains(" lends "));
    Signals { borrow_parameter, record_type, sum_type, lending_type }
}

/// The draft of a reply: `cairn.edit/2` (by handle), or in `cairn inspect`'s packet
/// `cairn.edit/1` (by session digest, the site by its key).
#[derive(Debug, Serialize)]
struct Draft {
    protocol: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    handle: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<String>,
    replacement: String,
}

/// The site a packet was opened on: where it is in the combined source (characters), and the
/// checker's record of it (`cairn_hir::site`).
#[derive(Debug, Serialize)]
struct Focus {
    symbol: String,
    start: usize,
    end: usize,
    tag: &'static str,
    #[serde(rename = "type")]
    ty: Option<String>,
    expected_type: Option<String>,
    bindings: Named<Binding>,
    source: String,
    site: String,
}

/// A name in scope at the focused site.
#[derive(Debug, Serialize)]
struct Binding {
    #[serde(rename = "type")]
    ty: Option<String>,
    mutable: bool,
    constant: bool,
}

/// How to send another kind of request in this session.
#[derive(Debug, Serialize)]
struct Hint {
    protocol: &'static str,
    handle: String,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    symbols: Option<[&'static str; 1]>,
}

impl Hint {
    fn of(session: &Session, kind: &'static str) -> Hint {
        Hint { protocol: "cairn.edit/2", handle: session.handle.clone(), kind, symbols: None }
    }
}

/// What a session seals (protocol §2.3): the digest of this in canonical JSON.
#[derive(Serialize)]
struct Seal<'a> {
    source: &'a str,
    symbol: &'a str,
    /// The host contract as given.
    contract: &'a serde_json::Map<String, Value>,
    visible: &'a BTreeSet<String>,
    implementation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'static str>,
}

/// What a packet discloses of its functions: the sources it shows (`context`), the
/// dependencies, the evidence classes they carry, and every text shown (for types and cards).
struct Disclosed {
    context: Vec<Context>,
    dependencies: Named<Dependency>,
    classes: BTreeSet<&'static str>,
    texts: Vec<String>,
}

impl Disclosed {
    fn of(workspace: &Workspace, session: &Session, target: Item) -> Disclosed {
        let db = workspace.db();
        let rows = workspace.last_rows();
        let target_source = source_of(workspace, target);
        let mut texts = vec![target_source.clone()];
        let mut context = vec![Context { symbol: session.symbol.clone(), source: target_source }];
        for name in &session.expanded {
            if let Some(item) = workspace.function_named(name) {
                let source = source_of(workspace, item);
                texts.push(source.clone());
                context.push(Context { symbol: name.clone(), source });
            }
        }
        let mut dependencies = Named::default();
        let mut classes = BTreeSet::new();
        for name in session.visible.iter().filter(|n| **n != session.symbol) {
            let Some(item) = workspace.function_named(name) else { continue };
            let signature = cairn_hir::render::signature_text(db, item, true);
            // A focused packet shows the dependency's signature; a component packet its source.
            texts.push(if session.focused { signature.clone() } else { source_of(workspace, item) });
            let (evidence, contract, check) = match session.evidence.get(name) {
                Some(Evidence::Declared(text)) => (Some("declared"), Some(Shown::Text(text.clone())), None),
                Some(Evidence::Undecided { contract, check }) => {
                    (Some("declared"), Some(contract.clone()), Some(*check))
                }
                Some(Evidence::Smt { contract }) => (Some("smt-equivalent"), Some(contract.clone()), None),
                None if session.focused => (Some("interface"), None, None),
                None => (None, None, None),
            };
            classes.extend(evidence);
            let comment = session.focused.then(|| first_comment_line(workspace, item)).filter(|c| !c.is_empty());
            if comment.is_some() {
                classes.insert("comment");
            }
            let effects = row_of(rows.as_deref(), item);
            dependencies.insert(name.clone(), Dependency { signature, effects, evidence, contract, check, comment });
        }
        if !session.focused {
            // A component packet lists the target among its dependencies too, and shows every
            // disclosed function's source.
            let signature = cairn_hir::render::signature_text(db, target, true);
            let effects = session.row.clone();
            let entry = Dependency { signature, effects, evidence: None, contract: None, check: None, comment: None };
            dependencies.insert(session.symbol.clone(), entry);
            for name in session.visible.iter().filter(|n| **n != session.symbol) {
                if let Some(item) = workspace.function_named(name) {
                    context.push(Context { symbol: name.clone(), source: source_of(workspace, item) });
                }
            }
        }
        Disclosed { context, dependencies, classes, texts }
    }
}

/// The draft of the next reply: on a site, that expression as it is; else a body.
fn draft(sources: &Sources, session: &Session, site: Option<&str>) -> Draft {
    let (kind, site, replacement) = match site {
        Some(site) => ("expr", Some(site.to_string()), site_text(sources, session, site).to_string()),
        None => ("body", None, "{ ... }".to_string()),
    };
    Draft { protocol: "cairn.edit/2", handle: Some(session.handle.clone()), session: None, kind, site, replacement }
}

/// The focus of a packet opened on `site` (which the open checked).
fn focus(workspace: &Workspace, sources: &Sources, session: &Session, target: Item, site: &str) -> Focus {
    let range = session.sites[site_index(site).unwrap_or(0)];
    let relative = workspace.locate(target).map(|(_, start)| range - start);
    let facts = relative.and_then(|r| cairn_hir::site::site_facts(workspace.db(), target, r));
    let (tag, ty, expected_type, bindings) = match facts {
        Some(facts) => {
            let bindings = facts
                .bindings
                .into_iter()
                .map(|b| (b.name, Binding { ty: b.ty, mutable: b.mutable, constant: b.constant }))
                .collect();
            (facts.tag, facts.ty, facts.expected, bindings)
        }
        None => ("other", None, None, Named::default()),
    };
    Focus {
        symbol: session.symbol.clone(),
        start: sources.combined_chars(session.file, usize::from(range.start())),
        end: sources.combined_chars(session.file, usize::from(range.end())),
        tag,
        ty,
        expected_type,
        bindings,
        source: site_text(sources, session, site).to_string(),
        site: site.to_string(),
    }
}

/// The text of expression site `site` in the session's pinned file.
fn site_text<'a>(sources: &'a Sources, session: &Session, site: &str) -> &'a str {
    let range = session.sites[site_index(site).unwrap_or(0)];
    &sources.files[session.file].text[usize::from(range.start())..usize::from(range.end())]
}
