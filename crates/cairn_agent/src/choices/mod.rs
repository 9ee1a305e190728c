//! Named choices (`cairn.choices/1`, protocol §11): a host marks expression slots inside one
//! function, the model answers one expression per slot, and the host fills them in and judges
//! the result like any `body` reply — then, against a scalar reference, with Z3.
//!
//! A `Sketch` owns an edit host and one session on the function, opened when the sketch is
//! made. Slots name expression sites of that session by their exact text (and an occurrence
//! index when the text occurs more than once). The first packet or fill seals the slot map and
//! fixes the sketch's digest (`sketch_sha256`), which every fill's receipt and every semantic
//! check must carry. A host-process API: there is no MCP tool for it.
//!
//! This file holds the sketch and its logic; `records` holds the records it answers with, which
//! it hands out as JSON maps.

mod records;

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use cairn_smt::{Options, Verdict, WValue};
use cairn_syntax::{TextRange, TextSize};
use serde_json::{Map, Value};

pub use self::records::SemanticContract;
use self::records::{
    BOUNDARY, Binding, BodyRequest, FillReceipt, FiniteSearch, NO_TASK, Packet, SemanticCheck, SemanticReceipt,
    ShownContract, SketchIdentity, SlotShown,
};
use crate::canonical::digest;
use crate::edit::records::to_map;
use crate::edit::{EditHost, OpenRequest, Sources};
use crate::equiv::{self, Assumption, Lowered, Reference};
use crate::named::Named;

/// At most this many slots.
pub const MAX_SLOTS: usize = 16;
/// A reply's size limit, and the choices' total.
pub const REPLY_LIMIT: usize = 128_000;
pub const CHOICES_LIMIT: usize = 64_000;

#[derive(Debug, Clone)]
struct Slot {
    name: String,
    range: TextRange,
    original: String,
    expected_type: Option<String>,
    bindings: Vec<Binding>,
}

/// A candidate the sketch issued.
#[derive(Debug, Clone)]
struct Issued {
    sources: Sources,
    choices: Map<String, Value>,
}

/// A sketch: one function, its slots, and what it issued.
pub struct Sketch {
    host: EditHost,
    sources: Sources,
    handle: String,
    symbol: String,
    task: Option<Value>,
    contract: Option<SemanticContract>,
    file: usize,
    body: TextRange,
    sites: Vec<TextRange>,
    slots: Vec<Slot>,
    sealed: Option<String>,
    issued: BTreeMap<String, Issued>,
    /// Inputs that rejected earlier candidates (replayed first by `solve_finite`).
    counterexamples: Vec<Vec<WValue>>,
    /// The pinned program, checked once, and the sketched function in it.
    workspace: Workspace,
    item: Item,
    /// The reference and its assumption, loaded at the first semantic check (or why not: the
    /// status and the reason).
    reference: Option<Result<Prepared, (&'static str, String)>>,
    pub options: Options,
}

/// The semantic contract, compiled.
struct Prepared {
    reference: Reference,
    assumption: Option<Assumption>,
}

/// A candidate's MIR (the function and what it calls) and its symbol.
type CandidateCode = (Lowered, std::sync::Arc<str>);

type Refusal = Map<String, Value>;

const RESERVED: &[&str] = &[
    "fn", "let", "mut", "if", "else", "while", "for", "in", "return", "match", "struct", "enum", "const", "import",
    "module", "test", "true", "false", "break", "continue", "try", "pub", "pure", "effects", "stack", "each", "fold",
    "require", "parallel", "spawn", "after", "into", "shared", "barrier", "asm", "extern", "impl", "trait", "when",
    "plan", "use", "family", "derive", "layout", "recipe", "linear",
];

impl Sketch {
    /// A sketch of `symbol` in `sources`; `task` as an edit session's, `include` names to
    /// disclose. A contract for another function is `E-SKETCH-CONTRACT`.
    pub fn new(
        sources: Sources,
        symbol: &str,
        task: Option<Value>,
        include: Vec<String>,
        contract: Option<SemanticContract>,
    ) -> Result<Sketch, Refusal> {
        let mut host = EditHost::new();
        if let Some(c) = &contract
            && c.symbol != symbol
            && c.symbol.rsplit('.').next() != symbol.rsplit('.').next()
        {
            return Err(host.refusal(
                "E-SKETCH-CONTRACT",
                format!("The semantic reference is for {}, not for the sketched function {symbol}.", c.symbol),
                vec![],
            ));
        }
        let mut host_contract = Map::new();
        if let Some(task) = &task {
            host_contract.insert("task".into(), task.clone());
        }
        let request = OpenRequest {
            symbol: symbol.to_string(),
            contract: if host_contract.is_empty() { None } else { Some(Value::Object(host_contract)) },
            include,
            ..OpenRequest::default()
        };
        let packet = host.open(sources.clone(), request);
        if packet.refused {
            return Err(packet.record);
        }
        let handle = packet.record["handle"].as_str().unwrap_or_default().to_string();
        let symbol = packet.record["symbol"].as_str().unwrap_or(symbol).to_string();
        let (file, body, sites) =
            host.session_span(&handle).ok_or_else(|| host.refusal("E-SESSION", "no session", vec![]))?;
        // The pinned program, checked once for slot facts and the packet.
        let mut workspace = Workspace::new(sources.files.clone());
        workspace.check();
        let item =
            workspace.function_named(&symbol).ok_or_else(|| host.refusal("E-SYMBOL", "no such function", vec![]))?;
        Ok(Sketch {
            host,
            sources,
            handle,
            symbol,
            task,
            contract,
            file,
            body,
            sites,
            slots: Vec::new(),
            sealed: None,
            issued: BTreeMap::new(),
            counterexamples: Vec::new(),
            workspace,
            item,
            reference: None,
            options: Options::default(),
        })
    }

    /// The choices of a candidate this sketch issued, and its filled sources.
    pub fn issued(&self, candidate_sha256: &str) -> Option<(&Map<String, Value>, &Sources)> {
        self.issued.get(candidate_sha256).map(|i| (&i.choices, &i.sources))
    }

    fn refuse(&self, code: &str, message: impl Into<String>, details: Vec<(&str, Value)>) -> Refusal {
        self.host.refusal(code, message, details)
    }

    fn text(&self) -> &str {
        &self.sources.files[self.file].text
    }

    /// Adds a slot named `name` at the expression whose source text is exactly `text` (the
    /// `occurrence`-th, from 0, when it occurs more than once).
    pub fn add_slot(&mut self, name: &str, text: &str, occurrence: Option<usize>) -> Result<(), Refusal> {
        if self.sealed.is_some() {
            return Err(self.refuse("E-SKETCH-SEALED", "The slot map was sealed by the first packet or fill.", vec![]));
        }
        let identifier = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.len() >= 2;
        if !identifier || RESERVED.contains(&name) {
            return Err(self.refuse(
                "E-SKETCH-NAME",
                format!("{name:?} is not a descriptive identifier (or is a reserved word)."),
                vec![("slot", Value::from(name))],
            ));
        }
        if self.slots.iter().any(|s| s.name == name) {
            return Err(self.refuse(
                "E-SKETCH-NAME",
                format!("The slot {name} is declared twice."),
                vec![("slot", Value::from(name))],
            ));
        }
        if self.slots.len() == MAX_SLOTS {
            return Err(self.refuse("E-SKETCH-NAME", format!("A sketch holds at most {MAX_SLOTS} slots."), vec![]));
        }
        let matches: Vec<TextRange> = self
            .sites
            .iter()
            .copied()
            .filter(|r| &self.text()[usize::from(r.start())..usize::from(r.end())] == text)
            .collect();
        let range = match (occurrence, matches.len()) {
            (None, 1) => matches[0],
            (Some(i), n) if i < n => matches[i],
            (None, n) => {
                return Err(self.refuse(
                    "E-SKETCH-SITE",
                    if n == 0 {
                        format!("No expression of {} is written exactly {text:?}.", self.symbol)
                    } else {
                        format!("{text:?} is written at {n} expressions; give an occurrence index.")
                    },
                    vec![("matches", Value::from(n))],
                ));
            }
            (Some(i), n) => {
                return Err(self.refuse(
                    "E-SKETCH-SITE",
                    format!("Occurrence {i} of {text:?} does not exist; there are {n}."),
                    vec![("matches", Value::from(n))],
                ));
            }
        };
        if let Some(other) = self.slots.iter().find(|s| {
            s.range.intersect(range).is_some_and(|r| !r.is_empty())
                || s.range.contains_range(range)
                || range.contains_range(s.range)
        }) {
            return Err(self.refuse(
                "E-SKETCH-OVERLAP",
                format!("The slot {name} would overlap or nest with the slot {}.", other.name),
                vec![("slot", Value::from(other.name.as_str()))],
            ));
        }
        let (expected_type, bindings) = self.facts(range);
        self.slots.push(Slot { name: name.into(), range, original: text.into(), expected_type, bindings });
        Ok(())
    }

    /// The checker's type of the expression at `range` and the bindings in scope there.
    fn facts(&self, range: TextRange) -> (Option<String>, Vec<Binding>) {
        let Some((_, entry)) = self.workspace.entry_of(self.item) else { return (None, Vec::new()) };
        let relative = range - entry.start;
        match cairn_hir::site::site_facts(self.workspace.db(), self.item, relative) {
            Some(facts) => (
                facts.expected.clone().or(facts.ty.clone()),
                facts
                    .bindings
                    .iter()
                    .map(|b| Binding { name: b.name.clone(), ty: b.ty.clone(), mutable: b.mutable })
                    .collect(),
            ),
            None => (None, Vec::new()),
        }
    }

    fn seal(&mut self) -> Result<String, Refusal> {
        if let Some(sha) = &self.sealed {
            return Ok(sha.clone());
        }
        if self.slots.is_empty() {
            return Err(self.refuse("E-SKETCH-EMPTY", "A sketch needs at least one slot before it is sealed.", vec![]));
        }
        let sha = self.binding();
        self.sealed = Some(sha.clone());
        Ok(sha)
    }

    /// The digest binding replies to this sketch: source, contract, context, compiler and slots.
    fn binding(&self) -> String {
        let identity = SketchIdentity {
            source: self.sources.sha256(),
            session: self.host.session_digest(&self.handle),
            symbol: &self.symbol,
            contract: self.contract.as_ref(),
            compiler: crate::compiler::implementation_hash(),
            slots: self
                .slots
                .iter()
                .map(|s| (s.name.as_str(), u32::from(s.range.start()), u32::from(s.range.end()), s.original.as_str()))
                .collect(),
        };
        digest(&serde_json::to_value(&identity).unwrap_or_default())
    }

    /// The packet (§11.2). Seals the slot map.
    pub fn packet(&mut self) -> Result<Map<String, Value>, Refusal> {
        self.seal()?;
        let text = self.text();
        let mut shown = Vec::new();
        let workspace = &self.workspace;
        for file in workspace.files().iter().filter(|f| !f.library) {
            for entry in &file.items {
                if let Some(t) = cairn_hir::render::declaration_text(workspace.db(), entry.item) {
                    shown.push(t);
                }
            }
        }
        for callee in workspace.callees(self.item) {
            shown.push(cairn_hir::render::signature_text(workspace.db(), callee, true));
        }
        let start = workspace.entry_of(self.item).map_or(usize::from(self.body.start()), |(_, e)| usize::from(e.start));
        shown.push(text[start..usize::from(self.body.end())].to_string());
        let slots: Named<SlotShown<'_>> = self
            .slots
            .iter()
            .map(|s| {
                let shown = SlotShown {
                    original: &s.original,
                    expected_type: s.expected_type.as_deref(),
                    bindings: &s.bindings,
                };
                (s.name.clone(), shown)
            })
            .collect();
        let reply: Named<&str> = self.slots.iter().map(|s| (s.name.clone(), s.original.as_str())).collect();
        let row: Vec<String> = workspace
            .last_rows()
            .and_then(|r| r.row(self.item).map(|r| r.iter().map(|e| e.to_string()).collect()))
            .unwrap_or_default();
        let packet = Packet::new(
            self.task.clone().unwrap_or_else(|| Value::from(NO_TASK)),
            shown.join("\n\n"),
            slots,
            row,
            self.contract.as_ref().map(ShownContract::of),
            reply,
        );
        Ok(to_map(&packet))
    }

    /// Fills a reply (JSON text) in and judges the result as a `body` reply (§11.3). Seals.
    pub fn fill_json(&mut self, reply: &str) -> Result<Map<String, Value>, Refusal> {
        self.fill(reply).map(|receipt| to_map(&receipt))
    }

    /// [`Sketch::fill_json`]'s receipt, typed.
    fn fill(&mut self, reply: &str) -> Result<FillReceipt, Refusal> {
        let sketch_sha = self.seal()?;
        if self.binding() != sketch_sha {
            return Err(self.refuse("E-SESSION", "The sketch's binding drifted since it was sealed.", vec![]));
        }
        let choices = self.parse_reply(reply)?;
        let (sources, _) = self.filled(&choices)?;
        let replacement =
            sources.files[self.file].text[usize::from(self.body.start())..self.filled_body_end(&choices)].to_string();
        let request = serde_json::to_value(BodyRequest::new(&self.handle, &replacement)).unwrap_or_default();
        let answer = self.host.request(&request);
        if answer.refused {
            return Err(answer.record);
        }
        let candidate_sha = sources.sha256();
        let receipt = FillReceipt {
            judged: answer.record,
            sketch_sha256: sketch_sha,
            candidate_sha256: candidate_sha.clone(),
            slots: choices.clone(),
            only_declared_expressions_changed: true,
            semantic_status: "not-run",
        };
        self.issued.insert(candidate_sha, Issued { sources, choices });
        Ok(receipt)
    }

    fn parse_reply(&self, reply: &str) -> Result<Map<String, Value>, Refusal> {
        let bad =
            |s: &Self, message: String, details: Vec<(&str, Value)>| s.refuse("E-SKETCH-CHOICES", message, details);
        if reply.len() > REPLY_LIMIT {
            return Err(bad(self, format!("A reply holds at most {REPLY_LIMIT} bytes."), vec![]));
        }
        let value = crate::strict::parse(reply)
            .map_err(|why| bad(self, format!("The reply is not strict JSON: {why}"), vec![]))?;
        let Value::Object(map) = value else {
            return Err(bad(self, "The reply must be one JSON object from slot names to expressions.".into(), vec![]));
        };
        self.check_choices(&map)?;
        Ok(map)
    }

    fn check_choices(&self, map: &Map<String, Value>) -> Result<(), Refusal> {
        let bad = |message: String, details: Vec<(&str, Value)>| self.refuse("E-SKETCH-CHOICES", message, details);
        let missing: Vec<&str> = self.slots.iter().map(|s| s.name.as_str()).filter(|n| !map.contains_key(*n)).collect();
        let extra: Vec<&str> =
            map.keys().map(String::as_str).filter(|k| !self.slots.iter().any(|s| s.name == *k)).collect();
        if !missing.is_empty() || !extra.is_empty() {
            return Err(bad(
                "The reply must map every slot, and nothing else, to one expression.".into(),
                vec![("missing", Value::from(missing)), ("extra", Value::from(extra))],
            ));
        }
        let mut total = 0;
        for (name, value) in map {
            let Some(text) = value.as_str() else {
                return Err(bad(
                    format!("The choice for {name} must be a string."),
                    vec![("slot", Value::from(name.as_str()))],
                ));
            };
            if text.contains("//") || text.contains("/*") {
                return Err(bad(
                    format!("The choice for {name} holds a comment."),
                    vec![("slot", Value::from(name.as_str()))],
                ));
            }
            if text.trim().is_empty() {
                return Err(bad(
                    format!("The choice for {name} is empty."),
                    vec![("slot", Value::from(name.as_str()))],
                ));
            }
            total += text.len();
        }
        if total > CHOICES_LIMIT {
            return Err(bad(format!("The choices hold at most {CHOICES_LIMIT} bytes together."), vec![]));
        }
        Ok(())
    }

    /// The sources with every choice in its slot (in parentheses, last slot first), after
    /// proving each choice stayed one expression.
    fn filled(&self, choices: &Map<String, Value>) -> Result<(Sources, Vec<TextRange>), Refusal> {
        let mut order: Vec<&Slot> = self.slots.iter().collect();
        order.sort_by_key(|s| std::cmp::Reverse(s.range.start()));
        let mut text = self.text().to_string();
        for slot in &order {
            let choice = choices[&slot.name].as_str().unwrap_or("");
            text.replace_range(usize::from(slot.range.start())..usize::from(slot.range.end()), &format!("({choice})"));
        }
        // Where each filled slot ended up, in source order.
        let mut sorted: Vec<&Slot> = self.slots.iter().collect();
        sorted.sort_by_key(|s| s.range.start());
        let mut shift: i64 = 0;
        let mut placed = Vec::new();
        for slot in sorted {
            let choice = choices[&slot.name].as_str().unwrap_or("");
            let start = (i64::from(u32::from(slot.range.start())) + shift) as u32;
            let len = choice.len() as u32 + 2;
            placed.push((slot.name.clone(), TextRange::at(TextSize::from(start), TextSize::from(len))));
            shift += i64::from(len) - i64::from(u32::from(slot.range.len()));
        }
        let parse = cairn_syntax::parse(&text);
        let root = parse.syntax_node();
        for (name, range) in &placed {
            let exact = root
                .descendants()
                .any(|n| n.text_range() == *range && n.kind() == cairn_syntax::SyntaxKind::PAREN_EXPR);
            if !exact {
                return Err(self.refuse(
                    "E-SKETCH-CHOICES",
                    format!("The choice for {name} is not one expression."),
                    vec![("slot", Value::from(name.as_str()))],
                ));
            }
        }
        let mut sources = self.sources.clone();
        sources.files[self.file].text = text;
        Ok((sources, placed.into_iter().map(|(_, r)| r).collect()))
    }

    fn filled_body_end(&self, choices: &Map<String, Value>) -> usize {
        let growth: i64 = self
            .slots
            .iter()
            .map(|s| choices[&s.name].as_str().unwrap_or("").len() as i64 + 2 - i64::from(u32::from(s.range.len())))
            .sum();
        (usize::from(self.body.end()) as i64 + growth) as usize
    }

    /// The semantic check of a candidate this sketch issued, against the reference.
    pub fn check_semantics(
        &mut self,
        sketch_sha256: &str,
        candidate_sha256: &str,
    ) -> Result<Map<String, Value>, Refusal> {
        if self.sealed.as_deref() != Some(sketch_sha256) || !self.issued.contains_key(candidate_sha256) {
            return Err(self.refuse(
                "E-SESSION",
                "check_semantics needs a candidate this sketch issued (its sketch_sha256 and candidate_sha256).",
                vec![],
            ));
        }
        let Some(contract) = self.contract.clone() else { return Ok(to_map(&SemanticCheck::status("not-run"))) };
        let sources = self.issued[candidate_sha256].sources.clone();
        let code = self.candidate_code(&sources);
        let (result, _) = self.semantic(&contract, &sources, &code);
        Ok(to_map(&result))
    }

    /// The reference and its assumption, compiled once per sketch.
    fn prepared(&mut self, contract: &SemanticContract) -> &Result<Prepared, (&'static str, String)> {
        if self.reference.is_none() {
            let loaded = Reference::load(&contract.reference_source, &contract.symbol, &self.workspace, self.item)
                .map_err(|status| (status, format!("the reference is not usable ({status})")))
                .and_then(|reference| {
                    match equiv::assumption(&reference.workspace, &reference.name(), &contract.assume) {
                        Ok(assumption) => Ok(Prepared { reference, assumption }),
                        Err(bad) => Err(("invalid-domain", bad.0)),
                    }
                });
            self.reference = Some(loaded);
        }
        self.reference.as_ref().expect("just set")
    }

    /// A candidate's code: checked and lowered once, for the cache replay and the solver alike.
    fn candidate_code(&self, sources: &Sources) -> Result<CandidateCode, (&'static str, String)> {
        let mut candidate = Workspace::new(sources.files.clone());
        if candidate.check().refusal.is_some() {
            return Err(("rejected", "the candidate does not compile".into()));
        }
        let item = candidate
            .function_named(&self.symbol)
            .ok_or(("invalid-contract", "the candidate lost the function".to_string()))?;
        let lowered =
            Lowered::closure(&candidate, item).ok_or(("unknown", "the candidate could not be lowered".into()))?;
        Ok((lowered, equiv::symbol_of(&candidate, item)))
    }

    /// The Z3 comparison of a candidate with the reference, as the feedback a model may see,
    /// and the counterexample inputs when there is one.
    fn semantic(
        &mut self,
        contract: &SemanticContract,
        sources: &Sources,
        code: &Result<CandidateCode, (&'static str, String)>,
    ) -> (SemanticCheck, Option<Vec<WValue>>) {
        let fail = |status: &'static str, reason: &str| (SemanticCheck::failed(status, reason), None);
        let options = self.options;
        let prepared = match self.prepared(contract) {
            Ok(p) => p,
            Err((status, reason)) => return fail(status, reason),
        };
        let (new, new_symbol) = match code {
            Ok(c) => c,
            Err((status, reason)) => return fail(status, reason),
        };
        let (old, old_symbol) = (&prepared.reference.lowered, &prepared.reference.symbol);
        let comparison = equiv::compare(
            old,
            old_symbol,
            new,
            new_symbol,
            prepared.assumption.as_ref(),
            !contract.allow_reference_traps,
            options,
        );
        let function = old.get(old_symbol).expect("lowered");
        let mut cex = None;
        let judged = match &comparison.verdict {
            Verdict::Equivalent => SemanticCheck::status("smt-equivalent"),
            Verdict::Differs(w) => {
                let shown = equiv::witness_record(w, function);
                cex = Some(w.inputs.iter().map(|(_, v)| v.clone()).collect());
                SemanticCheck {
                    counterexample: Some(shown.inputs),
                    expected: Some(shown.before),
                    actual: Some(shown.after),
                    concrete_replay: Some(true),
                    ..SemanticCheck::status("counterexample")
                }
            }
            Verdict::ReferenceTraps(_) => SemanticCheck {
                reason: Some("the reference traps on an allowed input".into()),
                ..SemanticCheck::status("invalid-reference")
            },
            Verdict::EmptyDomain => SemanticCheck {
                reason: Some("no input satisfies the assumption".into()),
                ..SemanticCheck::status("invalid-domain")
            },
            Verdict::Unknown(reason) => SemanticCheck {
                reason: Some(reason.clone()),
                unsupported_profile: reason.contains("outside the modelled fragment").then(|| reason.clone()),
                ..SemanticCheck::status("unknown")
            },
        };
        let receipt = equiv::receipt(
            &crate::canonical::sha256_hex(contract.reference_source.as_bytes()),
            &sources.sha256(),
            &contract.assume,
            &comparison.queries,
            None,
        );
        let checked = SemanticCheck {
            boundary: Some(BOUNDARY),
            smt_queries: Some(comparison.queries.len()),
            receipt: Some(receipt),
            ..judged
        };
        (checked, cex)
    }

    /// Finite search (§11.3): each combination of the candidate lists filled in, judged, and
    /// checked against the reference; the first certified one wins.
    pub fn solve_finite(&mut self, dimensions: &Value, limit: usize) -> Result<Map<String, Value>, Refusal> {
        let Some(contract) = self.contract.clone() else {
            return Err(self.refuse("E-SKETCH-CONTRACT", "A finite search needs a semantic reference.", vec![]));
        };
        if !(1..=4096).contains(&limit) {
            return Err(self.refuse("E-SKETCH-BUDGET", "The search limit lies between 1 and 4096.", vec![]));
        }
        let sketch_sha = self.seal()?;
        let Value::Object(dims) = dimensions else {
            return Err(self.refuse(
                "E-SKETCH-CHOICES",
                "The dimensions are an object from slot names to lists.",
                vec![],
            ));
        };
        let names: Vec<String> = self.slots.iter().map(|s| s.name.clone()).collect();
        if dims.len() != names.len() || names.iter().any(|n| !dims.contains_key(n)) {
            return Err(self.refuse("E-SKETCH-CHOICES", "The dimensions must be exactly the slots.", vec![]));
        }
        let mut lists: Vec<Vec<String>> = Vec::new();
        for name in &names {
            let list: Option<Vec<String>> =
                dims[name].as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect());
            match list {
                Some(l) if !l.is_empty() && l.len() == dims[name].as_array().map_or(0, Vec::len) => lists.push(l),
                _ => {
                    return Err(self.refuse(
                        "E-SKETCH-CHOICES",
                        format!("The dimension {name} must be a non-empty list of expression strings."),
                        vec![("slot", Value::from(name.as_str()))],
                    ));
                }
            }
        }
        let product = lists.iter().try_fold(1usize, |acc, l| acc.checked_mul(l.len())).unwrap_or(usize::MAX);
        if product > limit {
            return Err(self.refuse(
                "E-SKETCH-BUDGET",
                format!("The lists make {product} candidates, more than the limit {limit}."),
                vec![("candidates", Value::from(product))],
            ));
        }
        let (mut attempts, mut solver_calls, mut smt_queries, mut cache_rejections) = (0, 0, 0, 0);
        let mut refusals = 0;
        let mut index = vec![0usize; lists.len()];
        loop {
            attempts += 1;
            let mut choices = Map::new();
            for (k, name) in names.iter().enumerate() {
                choices.insert(name.clone(), Value::from(lists[k][index[k]].as_str()));
            }
            let reply = Value::Object(choices.clone()).to_string();
            match self.fill(&reply) {
                Err(_) => refusals += 1,
                Ok(receipt) => {
                    let candidate_sha = receipt.candidate_sha256;
                    let sources = self.issued[&candidate_sha].sources.clone();
                    let code = self.candidate_code(&sources);
                    if self.rejected_by_cache(&contract, &code) {
                        cache_rejections += 1;
                    } else {
                        solver_calls += 1;
                        let (result, cex) = self.semantic(&contract, &sources, &code);
                        smt_queries += result.smt_queries.unwrap_or(0);
                        if result.status == "smt-equivalent" {
                            let semantic_receipt = SemanticReceipt {
                                sketch_sha256: sketch_sha,
                                candidate_sha256: candidate_sha.clone(),
                                status: "smt-equivalent",
                                solver: result.receipt,
                            };
                            let search = FiniteSearch {
                                status: "smt-equivalent",
                                mode: "finite",
                                attempts,
                                candidate_product: product,
                                solver_calls,
                                smt_queries,
                                cache_rejections,
                                counterexamples: self.counterexamples.len(),
                                front_end_refusals: refusals,
                                candidate: Some(candidate_sha),
                                choices: Some(choices),
                                semantic_receipt: Some(semantic_receipt),
                            };
                            return Ok(to_map(&search));
                        }
                        if let Some(cex) = cex {
                            self.counterexamples.push(cex);
                        }
                    }
                }
            }
            // The next combination (the last slot turns fastest).
            let mut k = lists.len();
            loop {
                if k == 0 {
                    let search = FiniteSearch {
                        status: "no-certified-candidate",
                        mode: "finite",
                        attempts,
                        candidate_product: product,
                        solver_calls,
                        smt_queries,
                        cache_rejections,
                        counterexamples: self.counterexamples.len(),
                        front_end_refusals: refusals,
                        candidate: None,
                        choices: None,
                        semantic_receipt: None,
                    };
                    return Ok(to_map(&search));
                }
                k -= 1;
                index[k] += 1;
                if index[k] < lists[k].len() {
                    break;
                }
                index[k] = 0;
            }
        }
    }

    /// True when an earlier counterexample, replayed on the evaluator, already shows this
    /// candidate differing from the reference (never used to accept one).
    fn rejected_by_cache(
        &mut self,
        contract: &SemanticContract,
        code: &Result<CandidateCode, (&'static str, String)>,
    ) -> bool {
        if self.counterexamples.is_empty() {
            return false;
        }
        let counterexamples = std::mem::take(&mut self.counterexamples);
        let rejected = match (self.prepared(contract), code) {
            (Ok(prepared), Ok((new, new_symbol))) => {
                let old = &prepared.reference.lowered;
                match (old.get(&prepared.reference.symbol), new.get(new_symbol)) {
                    (Some(rf), Some(cf)) => counterexamples.iter().any(|inputs| {
                        let before = cairn_smt::replay::evaluate(&old.functions, rf, inputs);
                        let after = cairn_smt::replay::evaluate(&new.functions, cf, inputs);
                        !matches!(before, cairn_smt::Observed::NotRun(_))
                            && !matches!(after, cairn_smt::Observed::NotRun(_))
                            && !cairn_smt::agree(&before, &after)
                    }),
                    _ => false,
                }
            }
            _ => false,
        };
        self.counterexamples = counterexamples;
        rejected
    }
}
