//! Named choices (`cairn.choices/1`, protocol §11): a host marks expression slots inside one
//! function, the model answers one expression per slot, and the host fills them in and judges
//! the result like any `body` reply — then, against a scalar reference, with Z3.
//!
//! A `Sketch` owns an edit host and one session on the function, opened when the sketch is
//! made. Slots name expression sites of that session by their exact text (and an occurrence
//! index when the text occurs more than once). The first packet or fill seals the slot map and
//! fixes the sketch's digest (`sketch_sha256`), which every fill's receipt and every semantic
//! check must carry. A host-process API: there is no MCP tool for it.

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use cairn_smt::{Options, Verdict, WValue};
use cairn_syntax::{TextRange, TextSize};
use serde_json::{Map, Value, json};

use crate::canonical::digest;
use crate::edit::{EditHost, OpenRequest, Sources};
use crate::equiv::{self, Assumption, Lowered, Reference};

/// At most this many slots.
pub const MAX_SLOTS: usize = 16;
/// A reply's size limit, and the choices' total.
pub const REPLY_LIMIT: usize = 128_000;
pub const CHOICES_LIMIT: usize = 64_000;

/// The scalar reference a sketch's candidates are checked against.
#[derive(Debug, Clone)]
pub struct SemanticContract {
    /// A program declaring the reference function.
    pub reference_source: String,
    /// The function (the sketched one's name).
    pub symbol: String,
    /// A precondition over the parameters (`"true"`: none).
    pub assume: String,
    pub allow_reference_traps: bool,
}

#[derive(Debug, Clone)]
struct Slot {
    name: String,
    range: TextRange,
    original: String,
    expected_type: Option<String>,
    bindings: Vec<Value>,
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
                vec![("slot", json!(name))],
            ));
        }
        if self.slots.iter().any(|s| s.name == name) {
            return Err(self.refuse(
                "E-SKETCH-NAME",
                format!("The slot {name} is declared twice."),
                vec![("slot", json!(name))],
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
                    vec![("matches", json!(n))],
                ));
            }
            (Some(i), n) => {
                return Err(self.refuse(
                    "E-SKETCH-SITE",
                    format!("Occurrence {i} of {text:?} does not exist; there are {n}."),
                    vec![("matches", json!(n))],
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
                vec![("slot", json!(other.name))],
            ));
        }
        let (expected_type, bindings) = self.facts(range);
        self.slots.push(Slot { name: name.into(), range, original: text.into(), expected_type, bindings });
        Ok(())
    }

    /// The checker's type of the expression at `range` and the bindings in scope there.
    fn facts(&self, range: TextRange) -> (Option<String>, Vec<Value>) {
        let Some((_, entry)) = self.workspace.entry_of(self.item) else { return (None, Vec::new()) };
        let relative = range - entry.start;
        match cairn_hir::site::site_facts(self.workspace.db(), self.item, relative) {
            Some(facts) => (
                facts.expected.clone().or(facts.ty.clone()),
                facts.bindings.iter().map(|b| json!({"name": b.name, "type": b.ty, "mutable": b.mutable})).collect(),
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
        let contract = self.contract.as_ref().map(|c| {
            json!({"reference_source": c.reference_source, "symbol": c.symbol, "assume": c.assume, "allow_reference_traps": c.allow_reference_traps})
        });
        digest(&json!({
            "source": self.sources.sha256(),
            "session": self.host.session_digest(&self.handle),
            "symbol": self.symbol,
            "contract": contract,
            "compiler": crate::edit::implementation_hash(),
            "slots": self.slots.iter().map(|s| json!([s.name, u32::from(s.range.start()), u32::from(s.range.end()), s.original])).collect::<Vec<_>>(),
        }))
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
        let mut slots = Map::new();
        let mut reply = Map::new();
        for s in &self.slots {
            slots.insert(
                s.name.clone(),
                json!({"original": s.original, "expected_type": s.expected_type, "bindings": s.bindings}),
            );
            reply.insert(s.name.clone(), json!(s.original));
        }
        let mut packet = Map::new();
        packet.insert("protocol".into(), json!("cairn.choices/1"));
        packet.insert(
            "task".into(),
            self.task.clone().unwrap_or_else(|| json!("No task was supplied, so none is to be assumed.")),
        );
        packet.insert("source".into(), json!(shown.join("\n\n")));
        packet.insert("slots".into(), Value::Object(slots));
        let row: Vec<String> = workspace
            .last_rows()
            .and_then(|r| r.row(self.item).map(|r| r.iter().map(|e| e.to_string()).collect()))
            .unwrap_or_default();
        packet.insert("allowed_effects".into(), json!(row));
        let cards: Vec<String> = vec!["sketches".into()];
        packet.insert("rule_cards".into(), json!(cards));
        packet.insert(
            "semantic_contract".into(),
            match &self.contract {
                Some(c) => json!({
                    "reference_source": c.reference_source,
                    "symbol": c.symbol,
                    "assume": c.assume,
                    "allow_reference_traps": c.allow_reference_traps,
                    "runtime_precondition_guard": "not-inserted-by-builder",
                }),
                None => Value::Null,
            },
        );
        packet.insert("reply".into(), Value::Object(reply));
        packet.insert(
            "instructions".into(),
            json!("Answer only with the JSON object mapping every slot name to one CAIRN expression; nothing else."),
        );
        packet.insert(
            "acceptance".into(),
            json!("The host fills the expressions in and checks the whole module; a typed answer says nothing about behaviour."),
        );
        packet.insert(
            "identity_binding".into(),
            json!("The reply is bound to this host's sealed sketch and is not an authorized patch on its own."),
        );
        Ok(packet)
    }

    /// Fills a reply (JSON text) in and judges the result as a `body` reply (§11.3). Seals.
    pub fn fill_json(&mut self, reply: &str) -> Result<Map<String, Value>, Refusal> {
        let sketch_sha = self.seal()?;
        if self.binding() != sketch_sha {
            return Err(self.refuse("E-SESSION", "The sketch's binding drifted since it was sealed.", vec![]));
        }
        let choices = self.parse_reply(reply)?;
        let (sources, _) = self.filled(&choices)?;
        let replacement =
            sources.files[self.file].text[usize::from(self.body.start())..self.filled_body_end(&choices)].to_string();
        let answer = self.host.request(&json!({
            "protocol": "cairn.edit/2",
            "handle": self.handle,
            "kind": "body",
            "replacement": replacement,
        }));
        if answer.refused {
            return Err(answer.record);
        }
        let candidate_sha = sources.sha256();
        let mut receipt = answer.record;
        receipt.insert("sketch_sha256".into(), json!(sketch_sha));
        receipt.insert("candidate_sha256".into(), json!(candidate_sha));
        receipt.insert("slots".into(), Value::Object(choices.clone()));
        receipt.insert("only_declared_expressions_changed".into(), json!(true));
        receipt.insert("semantic_status".into(), json!("not-run"));
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
                vec![("missing", json!(missing)), ("extra", json!(extra))],
            ));
        }
        let mut total = 0;
        for (name, value) in map {
            let Some(text) = value.as_str() else {
                return Err(bad(format!("The choice for {name} must be a string."), vec![("slot", json!(name))]));
            };
            if text.contains("//") || text.contains("/*") {
                return Err(bad(format!("The choice for {name} holds a comment."), vec![("slot", json!(name))]));
            }
            if text.trim().is_empty() {
                return Err(bad(format!("The choice for {name} is empty."), vec![("slot", json!(name))]));
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
                    vec![("slot", json!(name))],
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
        let Some(contract) = self.contract.clone() else { return Ok(json_map(json!({"status": "not-run"}))) };
        let sources = self.issued[candidate_sha256].sources.clone();
        let code = self.candidate_code(&sources);
        let (result, _) = self.semantic(&contract, &sources, &code);
        Ok(result)
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
    ) -> (Map<String, Value>, Option<Vec<WValue>>) {
        let boundary = "SMT-equivalent holds within the modelled fragment for the inputs the assumption allows; the assumption is not checked at run time.";
        let fail = |status: &str, reason: &str| {
            (json_map(json!({"status": status, "reason": reason, "boundary": boundary})), None)
        };
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
        let mut out = Map::new();
        let mut cex = None;
        match &comparison.verdict {
            Verdict::Equivalent => {
                out.insert("status".into(), json!("smt-equivalent"));
            }
            Verdict::Differs(w) => {
                let shown = equiv::witness_record(w, function);
                out.insert("status".into(), json!("counterexample"));
                out.insert("counterexample".into(), json!(shown.inputs));
                out.insert("expected".into(), json!(shown.before));
                out.insert("actual".into(), json!(shown.after));
                out.insert("concrete_replay".into(), json!(true));
                cex = Some(w.inputs.iter().map(|(_, v)| v.clone()).collect());
            }
            Verdict::ReferenceTraps(_) => {
                out.insert("status".into(), json!("invalid-reference"));
                out.insert("reason".into(), json!("the reference traps on an allowed input"));
            }
            Verdict::EmptyDomain => {
                out.insert("status".into(), json!("invalid-domain"));
                out.insert("reason".into(), json!("no input satisfies the assumption"));
            }
            Verdict::Unknown(reason) => {
                out.insert("status".into(), json!("unknown"));
                out.insert("reason".into(), json!(reason));
                if reason.contains("outside the modelled fragment") {
                    out.insert("unsupported_profile".into(), json!(reason));
                }
            }
        }
        out.insert("boundary".into(), json!(boundary));
        out.insert("smt_queries".into(), json!(comparison.queries.len()));
        // For the host (not model feedback): what the answer rests on.
        out.insert(
            "receipt".into(),
            json!(equiv::receipt(
                &crate::canonical::sha256_hex(contract.reference_source.as_bytes()),
                &sources.sha256(),
                &contract.assume,
                &comparison.queries,
                None,
            )),
        );
        (out, cex)
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
                        vec![("slot", json!(name))],
                    ));
                }
            }
        }
        let product = lists.iter().try_fold(1usize, |acc, l| acc.checked_mul(l.len())).unwrap_or(usize::MAX);
        if product > limit {
            return Err(self.refuse(
                "E-SKETCH-BUDGET",
                format!("The lists make {product} candidates, more than the limit {limit}."),
                vec![("candidates", json!(product))],
            ));
        }
        let (mut attempts, mut solver_calls, mut smt_queries, mut cache_rejections) = (0, 0, 0, 0);
        let mut refusals = 0;
        let mut index = vec![0usize; lists.len()];
        loop {
            attempts += 1;
            let mut choices = Map::new();
            for (k, name) in names.iter().enumerate() {
                choices.insert(name.clone(), json!(lists[k][index[k]]));
            }
            let reply = Value::Object(choices.clone()).to_string();
            match self.fill_json(&reply) {
                Err(_) => refusals += 1,
                Ok(receipt) => {
                    let candidate_sha = receipt["candidate_sha256"].as_str().unwrap_or_default().to_string();
                    let sources = self.issued[&candidate_sha].sources.clone();
                    let code = self.candidate_code(&sources);
                    if self.rejected_by_cache(&contract, &code) {
                        cache_rejections += 1;
                    } else {
                        solver_calls += 1;
                        let (result, cex) = self.semantic(&contract, &sources, &code);
                        smt_queries += result["smt_queries"].as_u64().unwrap_or(0);
                        if result["status"] == "smt-equivalent" {
                            return Ok(json_map(json!({
                                "status": "smt-equivalent",
                                "mode": "finite",
                                "attempts": attempts,
                                "candidate_product": product,
                                "solver_calls": solver_calls,
                                "smt_queries": smt_queries,
                                "cache_rejections": cache_rejections,
                                "counterexamples": self.counterexamples.len(),
                                "front_end_refusals": refusals,
                                "candidate": candidate_sha,
                                "choices": choices,
                                "semantic_receipt": {"sketch_sha256": sketch_sha, "candidate_sha256": receipt["candidate_sha256"], "status": "smt-equivalent", "solver": result["receipt"]},
                            })));
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
                    return Ok(json_map(json!({
                        "status": "no-certified-candidate",
                        "mode": "finite",
                        "attempts": attempts,
                        "candidate_product": product,
                        "solver_calls": solver_calls,
                        "smt_queries": smt_queries,
                        "cache_rejections": cache_rejections,
                        "counterexamples": self.counterexamples.len(),
                        "front_end_refusals": refusals,
                    })));
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

fn json_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
