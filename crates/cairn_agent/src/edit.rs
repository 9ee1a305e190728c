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

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cairn_diagnostics::registry::card_of;
use cairn_diagnostics::selection::{Signals, select_cards};
/// The text of one file of a program (re-exported so the servers need no edge to `cairn_hir`).
pub use cairn_hir::SourceText;
use cairn_hir::{Item, Workspace};
use cairn_syntax::ast::AstNode;
use cairn_syntax::{SyntaxKind, TextEdit, TextRange, TextSize};
use serde_json::{Map, Value, json};

use crate::canonical::{digest, sha256_hex};
use crate::equiv;
use crate::state::profile;

/// The byte limit of a replacement (protocol §3.4).
pub const REPLACEMENT_LIMIT: usize = 64_000;
/// How many names one `expand` may ask for.
pub const EXPAND_LIMIT: usize = 32;
/// The constant of every model-facing refusal (tools.md §1.4).
pub const ACCEPTANCE_BOUNDARY: &str = "frontend only; not a semantic or machine proof";
const RUNTIME_COST: &str = "guard-site counts are static counts of checks in the code, not run-time costs";

/// The evidence a contract asked for about one function (protocol §6.1).
#[derive(Debug, Clone, PartialEq)]
enum Evidence {
    /// The host's text, checked by nobody.
    Declared(String),
    /// A check the host asked for (a reference, finite tests) that this build cannot decide: the
    /// class falls back to `declared`, shows the host's request, and names the status the check
    /// reached (protocol §6.1: an undecided check never counts as a pass).
    Undecided { contract: Value, check: &'static str },
    /// Z3 found the dependency equivalent to the host's reference, at session open: the
    /// reference stands in for the body (protocol §6.1).
    Smt { contract: Value },
}

/// An answer of the host: the record, and whether it is a refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub record: Map<String, Value>,
    pub refused: bool,
    /// For an admitted `body`/`expr`: what to write.
    pub admitted: Option<Admitted>,
}

/// An admitted change of one file: its index among the program's files, the byte range of the
/// pinned original it replaces, and the text put there (an expression reply with its wrapping
/// parentheses). The rest of the file is the pinned original, unmoved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub file: usize,
    pub replaced: std::ops::Range<usize>,
    pub text: String,
}

impl Admitted {
    /// The file's whole new text, given its pinned original.
    pub fn apply(&self, original: &str) -> String {
        let start = self.replaced.start.min(original.len());
        let end = self.replaced.end.clamp(start, original.len());
        format!("{}{}{}", &original[..start], self.text, &original[end..])
    }
}

/// One admitted candidate of a session: the change, and the target's row and sites after it.
#[derive(Debug, Clone)]
struct Candidate {
    change: Admitted,
    row: Vec<String>,
    sites: Map<String, Value>,
}

impl Answer {
    fn ok(record: Map<String, Value>) -> Answer {
        Answer { record, refused: false, admitted: None }
    }

    /// A refusal's keys in their documented order.
    fn finished(mut self) -> Answer {
        if self.refused {
            self.record = ordered(std::mem::take(&mut self.record));
        }
        self
    }
}

/// A program as the host receives it: its files in load order, and whether it is a project
/// (whose combined source separates files by `// source:` lines, tools.md §2.2) or one file.
#[derive(Debug, Clone)]
pub struct Sources {
    pub files: Vec<SourceText>,
    pub project: bool,
}

impl Sources {
    /// A one-file program.
    pub fn single(name: impl Into<String>, text: impl Into<String>) -> Sources {
        Sources { files: vec![SourceText { name: name.into(), text: text.into() }], project: false }
    }

    /// The combined source (tools.md §2.2), which digests name.
    pub fn combined(&self) -> String {
        self.pieces().into_iter().map(|piece| piece.text).collect()
    }

    /// SHA-256 of the combined source, without building it: the one `source_sha256` of states,
    /// seals and receipts, whoever computes it (the hosts, `cairn state`, `cairn build`).
    pub fn sha256(&self) -> String {
        let mut hasher = crate::canonical::Hasher::new();
        for piece in self.pieces() {
            hasher.update(piece.text.as_bytes());
        }
        hasher.finish_hex()
    }

    /// Where byte `offset` of file `file` lies in the combined source, in characters.
    pub fn combined_chars(&self, file: usize, offset: usize) -> usize {
        let mut at = 0;
        for piece in self.pieces() {
            if piece.file == file && piece.own_text {
                let text = piece.text;
                return at + text[..offset.min(text.len())].chars().count();
            }
            at += piece.text.chars().count();
        }
        at
    }

    /// The combined source in order, piece by piece: a one-file program's text exactly;
    /// otherwise, per file in load order, the line `// source: <name>`, the text, and a newline.
    ///
    /// Invariant: the only place the combined source's layout is written; [`Sources::combined`],
    /// [`Sources::sha256`] and [`Sources::combined_chars`] all read it from here.
    fn pieces(&self) -> Vec<Piece<'_>> {
        if !self.project && self.files.len() == 1 {
            return vec![Piece { file: 0, text: &self.files[0].text, own_text: true }];
        }
        let mut pieces = Vec::with_capacity(self.files.len() * 5);
        for (file, source) in self.files.iter().enumerate() {
            let parts =
                [("// source: ", false), (&*source.name, false), ("\n", false), (&*source.text, true), ("\n", false)];
            pieces.extend(parts.into_iter().map(|(text, own_text)| Piece { file, text, own_text }));
        }
        pieces
    }
}

/// One piece of a combined source: the file it belongs to, its text, and whether that is the
/// file's own text (not a header or separator).
#[derive(Debug, Clone, Copy)]
struct Piece<'a> {
    file: usize,
    text: &'a str,
    own_text: bool,
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
}

/// The edit host: its sessions, the cards and terms it has sent, the states it has sent.
#[derive(Default)]
pub struct EditHost {
    programs: Vec<HostProgram>,
    sessions: Vec<Session>,
    sent_cards: BTreeSet<&'static str>,
    sent_terms: BTreeSet<String>,
    states: HashMap<String, Map<String, Value>>,
    terms_sent: bool,
    clock: u64,
    /// Compiles to move forward to written candidates ([`EditHost::advance`]).
    pending: Vec<(usize, Admitted)>,
    /// The number of the last handle issued.
    handles: u64,
}

/// The most programs whose compiles the host keeps (tools.md §6); the least recently used
/// compile is dropped first and rebuilt if a session of it speaks again.
pub const PROGRAM_CACHE: usize = 16;
/// The most sessions a host keeps; opening one more forgets the least recently used, whose
/// handle is then `E-SESSION` (a long-lived server must not grow without bound).
pub const SESSION_LIMIT: usize = 256;

/// A program the host has loaded: its pinned files, and its compile while cached.
struct HostProgram {
    key: String,
    sources: Sources,
    /// The checked workspace; `None` once evicted.
    workspace: Option<Workspace>,
    /// When it was last used (the host's clock of requests).
    used: u64,
    /// SHA-256 of the combined source, computed once.
    source_sha: std::cell::OnceCell<String>,
}

impl HostProgram {
    fn source_sha(&self) -> &str {
        self.source_sha.get_or_init(|| self.sources.sha256())
    }
}

struct Session {
    handle: String,
    /// When it was last used (the host's clock).
    used: u64,
    digest: String,
    symbol: String,
    focused: bool,
    contract: Map<String, Value>,
    program: usize,
    file: usize,
    /// The replaced span of a `body` reply, in the file: the body's start to the function's end.
    body: TextRange,
    /// Expression sites `x0`, `x1`, … in the file.
    sites: Vec<TextRange>,
    ceiling: BTreeSet<String>,
    /// Evidence the contract asked for, by function.
    evidence: BTreeMap<String, Evidence>,
    row: Vec<String>,
    sites_before: Map<String, Value>,
    visible: BTreeSet<String>,
    /// Functions whose sources an `expand` showed, in order, and types it named.
    expanded: Vec<String>,
    expanded_types: Vec<String>,
    /// Admitted candidates, in order, each relative to the pinned original.
    admitted: Vec<Candidate>,
}

impl EditHost {
    pub fn new() -> EditHost {
        EditHost::default()
    }

    /// True once the terms were sent (later answers leave out what they explain).
    pub fn terms_sent(&self) -> bool {
        self.terms_sent
    }

    /// The program a session judges against, and its file names.
    pub fn session_files(&self, handle: &str) -> Option<Vec<String>> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some(self.programs[session.program].sources.files.iter().map(|s| s.name.clone()).collect())
    }

    /// The file a session's admitted edits go to.
    pub fn session_file(&self, handle: &str) -> Option<String> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some(self.programs[session.program].sources.files[session.file].name.clone())
    }

    /// The pinned text of every file of a session's program.
    /// A session's file, the span a `body` reply replaces, and its expression sites (`x0`, …),
    /// all in that file's text.
    pub fn session_span(&self, handle: &str) -> Option<(usize, TextRange, Vec<TextRange>)> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some((session.file, session.body, session.sites.clone()))
    }

    /// A session's digest (what binds a reply to it).
    pub fn session_digest(&self, handle: &str) -> Option<String> {
        self.sessions.iter().find(|s| s.handle == handle).map(|s| s.digest.clone())
    }

    pub fn session_sources(&self, handle: &str) -> Option<&Sources> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some(&self.programs[session.program].sources)
    }

    /// Says that the files now hold the session's latest admitted candidate (a server wrote it
    /// back): the program's compile moves forward to the candidate — one body re-checked — and
    /// is kept under the candidate's text, so the next open of the files as they are now starts
    /// from it instead of compiling again (protocol §16.6). Sessions still pinned to the old text
    /// get a compile of it rebuilt when they next speak.
    ///
    /// The move is noted here and made by [`EditHost::settle`], which a server calls once its
    /// answer is on the wire (and every entry point of the host calls first), so the agent does
    /// not wait for it.
    pub fn advance(&mut self, handle: &str) {
        if let Some(session) = self.sessions.iter().find(|s| s.handle == handle)
            && let Some(candidate) = session.admitted.last()
        {
            self.pending.push((session.program, candidate.change.clone()));
        }
    }

    /// Makes the moves [`EditHost::advance`] noted.
    pub fn settle(&mut self) {
        for (index, change) in std::mem::take(&mut self.pending) {
            self.move_forward(index, change);
        }
    }

    fn move_forward(&mut self, index: usize, change: Admitted) {
        if self.programs[index].sources.files.is_empty() {
            return;
        }
        let mut sources = self.programs[index].sources.clone();
        let original = sources.files[change.file].text.clone();
        sources.files[change.file].text = change.apply(&original);
        let source_sha = sources.sha256();
        let key = program_key(&sources, &source_sha);
        if self.programs.iter().any(|p| p.key == key) {
            return;
        }
        let Some(mut workspace) = self.programs[index].workspace.take() else { return };
        let edit = TextEdit::smallest(&original[change.replaced.clone()], &change.text, change.replaced.start);
        workspace.edit_file(change.file, &edit);
        workspace.check();
        self.clock += 1;
        let used = self.clock;
        self.programs.push(HostProgram {
            key,
            sources,
            workspace: Some(workspace),
            used,
            source_sha: source_sha.into(),
        });
    }

    /// Forgets the last admission of a session (when writing it back failed).
    pub fn forget_admission(&mut self, handle: &str) {
        if let Some(session) = self.sessions.iter_mut().find(|s| s.handle == handle) {
            session.admitted.pop();
        }
    }

    /// The index of a program, loading and checking it unless it is cached; `cached` says
    /// whether its compile was already there.
    fn program(&mut self, sources: Sources) -> (usize, bool) {
        let source_sha = sources.sha256();
        let key = program_key(&sources, &source_sha);
        let index = match self.programs.iter().position(|p| p.key == key) {
            Some(index) => {
                if self.programs[index].sources.files.is_empty() {
                    self.programs[index].sources = sources;
                }
                index
            }
            None => {
                self.programs.push(HostProgram {
                    key,
                    sources,
                    workspace: None,
                    used: 0,
                    source_sha: source_sha.into(),
                });
                self.programs.len() - 1
            }
        };
        let cached = self.programs[index].workspace.is_some();
        self.load(index);
        (index, cached)
    }

    /// Makes sure a program's compile is present (rebuilding an evicted one) and marks it used;
    /// evicts the least recently used compile beyond [`PROGRAM_CACHE`].
    fn load(&mut self, index: usize) {
        self.clock += 1;
        let program = &mut self.programs[index];
        program.used = self.clock;
        if program.workspace.is_none() {
            let mut workspace = Workspace::new(program.sources.files.clone());
            workspace.check();
            program.workspace = Some(workspace);
        }
        let loaded = self.programs.iter().filter(|p| p.workspace.is_some()).count();
        if loaded > PROGRAM_CACHE
            && let Some(oldest) = self
                .programs
                .iter_mut()
                .enumerate()
                .filter(|(i, p)| *i != index && p.workspace.is_some())
                .min_by_key(|(_, p)| p.used)
                .map(|(_, p)| p)
        {
            oldest.workspace = None;
            self.release_unpinned();
        }
    }

    /// Keeps at most [`SESSION_LIMIT`] sessions (the least recently used go first), and lets
    /// go of the text of programs no session pins and no cached compile holds.
    fn forget_old_sessions(&mut self) {
        while self.sessions.len() > SESSION_LIMIT {
            let Some(oldest) = self.sessions.iter().enumerate().min_by_key(|(_, s)| s.used).map(|(i, _)| i) else {
                break;
            };
            self.sessions.remove(oldest);
        }
        self.release_unpinned();
    }

    /// Drops the text of programs that neither a session nor a cached compile needs (their
    /// cache entry stays, tiny, and takes the text back if the same program comes again).
    fn release_unpinned(&mut self) {
        let pinned: BTreeSet<usize> = self.sessions.iter().map(|s| s.program).collect();
        for (index, program) in self.programs.iter_mut().enumerate() {
            if program.workspace.is_none() && !pinned.contains(&index) && !program.sources.files.is_empty() {
                program.sources.files = Vec::new();
            }
        }
    }

    /// True while the host keeps the session `handle`.
    pub fn has_session(&self, handle: &str) -> bool {
        self.sessions.iter().any(|s| s.handle == handle)
    }

    /// How many sessions the host keeps now.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// How many compiles the host holds now.
    pub fn cached_programs(&self) -> usize {
        self.programs.iter().filter(|p| p.workspace.is_some()).count()
    }

    fn ws(&self, index: usize) -> &Workspace {
        self.programs[index].workspace.as_ref().expect("the program was loaded at the start of the request")
    }

    fn ws_mut(&mut self, index: usize) -> &mut Workspace {
        self.programs[index].workspace.as_mut().expect("the program was loaded at the start of the request")
    }

    /// The target of a session in its program's current compile (items are re-resolved by
    /// name, so a rebuilt compile serves old sessions).
    fn target(&self, session: &Session) -> Option<Item> {
        self.ws(session.program).function_named(&session.symbol)
    }

    /// Checks a program (the MCP `check` tool shares the host's compiles): its refusal record or
    /// its summary, and whether the compile was already cached.
    pub fn check(&mut self, sources: Sources) -> (Map<String, Value>, bool, bool) {
        self.settle();
        let (index, cached) = self.program(sources);
        let outcome = self.ws_mut(index).check();
        match outcome.refusal {
            None => {
                let mut record = Map::new();
                record.insert("status".into(), json!("typed"));
                record.insert("functions".into(), json!(outcome.functions));
                record.insert("library_functions".into(), json!(outcome.library_functions));
                record.insert("cached".into(), json!(cached));
                record.insert("formal_status".into(), json!("not-verified"));
                (record, false, cached)
            }
            Some(refusal) => {
                let mut record = cairn_diagnostics::record::refusal_record(&refusal);
                record.insert("cached".into(), json!(cached));
                (record, true, cached)
            }
        }
    }

    /// The state of a program (`cairn.state/1`), remembered so a later delta can name it.
    pub fn program_state(&mut self, sources: Sources, with_file: bool) -> Map<String, Value> {
        self.settle();
        let (index, _) = self.program(sources);
        let view = self.ws_mut(index).state_view(false);
        let state = crate::state_record(&view, &profile(), self.programs[index].source_sha(), with_file);
        self.remember_state(&state);
        state
    }

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

    // ----- opening ----------------------------------------------------------------------------

    /// Opens an edit session: the handle-level packet, or a refusal.
    pub fn open(&mut self, sources: Sources, request: OpenRequest) -> Answer {
        self.settle();
        match self.try_open(sources, request) {
            Ok(record) => Answer::ok(record),
            Err(refusal) => refusal.finished(),
        }
    }

    // The refusal is the answer itself; it is built once per open, so its size costs nothing.
    #[allow(clippy::result_large_err)]
    fn try_open(&mut self, sources: Sources, request: OpenRequest) -> Result<Map<String, Value>, Answer> {
        let focused = match request.scope.as_deref() {
            None | Some("focused") => true,
            Some("component") => false,
            Some(other) => {
                return Err(self.refuse(
                    "E-REQUEST",
                    format!("The scope {other:?} is neither focused nor component."),
                    vec![],
                ));
            }
        };
        let contract = match &request.contract {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(self.refuse("E-CONTRACT", "The host contract must be a JSON object.", vec![])),
        };
        if let Some(symbol) = contract.get("symbol")
            && symbol.as_str() != Some(request.symbol.as_str())
        {
            return Err(self.refuse("E-CONTRACT", "The contract names another symbol than the session's.", vec![]));
        }
        for key in contract.keys() {
            if !["symbol", "task", "allowed_effects", "preserve", "contracts", "references", "tests"]
                .contains(&key.as_str())
            {
                return Err(self.refuse("E-CONTRACT", format!("The contract has an unknown key {key}."), vec![]));
            }
        }
        let (index, _) = self.program(sources);
        if let Some(refusal) = self.ws(index).syntax_refusal() {
            return Err(self.compiler_refusal(&refusal.first, Some(index)));
        }
        let Some(item) = self.ws(index).function_named(&request.symbol) else {
            return Err(self.refuse(
                "E-SYMBOL",
                format!(
                    "{} is not a function of this program; name it as the program declares it (module.name).",
                    request.symbol
                ),
                vec![("symbol", json!(request.symbol))],
            ));
        };
        let syntax = item.syntax(self.ws(index).db()).syntax_node();
        if syntax.children().any(|c| c.kind() == SyntaxKind::GENERIC_PARAM_LIST) {
            return Err(self.refuse(
                "E-EDIT-PROFILE",
                format!("{} is a template; an edit session takes a concrete function.", request.symbol),
                vec![],
            ));
        }
        let outcome = self.ws_mut(index).check();
        if let Some(refusal) = outcome.refusal {
            return Err(self.compiler_refusal(&refusal.first, Some(index)));
        }
        let workspace = self.ws(index);
        let rows = workspace.last_rows().ok_or_else(|| self.refuse_internal("no rows after a check"))?;
        let row: Vec<String> = rows.row(item).map(|r| r.iter().map(|e| e.to_string()).collect()).unwrap_or_default();
        // The ceiling: the contract's, or the current row.
        let ceiling: BTreeSet<String> = match contract.get("allowed_effects") {
            None => row.iter().cloned().collect(),
            Some(Value::Array(items)) => {
                let mut ceiling = BTreeSet::new();
                for entry in items {
                    let Some(effect) = entry.as_str() else {
                        return Err(self.refuse("E-CONTRACT", "allowed_effects must be a list of strings.", vec![]));
                    };
                    if !legal_effect(workspace, item, effect) {
                        return Err(self.refuse(
                            "E-CONTRACT",
                            format!("{effect} cannot be allowed for {}.", request.symbol),
                            vec![],
                        ));
                    }
                    ceiling.insert(effect.to_string());
                }
                if let Some(outside) = row.iter().find(|e| !ceiling.contains(*e)) {
                    return Err(self.refuse(
                        "E-CONTRACT",
                        format!("The function's row already holds {outside}, outside the allowed effects."),
                        vec![],
                    ));
                }
                ceiling
            }
            Some(_) => return Err(self.refuse("E-CONTRACT", "allowed_effects must be a list of strings.", vec![])),
        };
        match contract.get("preserve") {
            None | Some(Value::Null) => {}
            Some(Value::String(p)) if p == "identical" || p == "equivalent" => {}
            Some(_) => return Err(self.refuse("E-CONTRACT", "preserve is identical or equivalent.", vec![])),
        }
        // Evidence requests: shapes, then names, then one kind per function, then the task.
        let mut evidence: BTreeMap<String, Evidence> = BTreeMap::new();
        let mut requested: Vec<(&str, String)> = Vec::new();
        for key in ["contracts", "references", "tests"] {
            let Some(value) = contract.get(key) else { continue };
            let Value::Object(entries) = value else {
                return Err(self.refuse("E-CONTRACT", format!("{key} must be an object from function names."), vec![]));
            };
            for (name, entry) in entries {
                let shape_ok = match key {
                    "contracts" => entry.is_string(),
                    "references" => match entry {
                        Value::Object(r) => {
                            r.get("reference").is_some_and(Value::is_string)
                                && r.get("assume").is_none_or(Value::is_string)
                                && r.keys().all(|k| k == "reference" || k == "assume")
                        }
                        _ => false,
                    },
                    _ => match entry {
                        Value::Object(t) => {
                            t.get("symbol").is_none_or(|s| s.as_str() == Some(name.as_str()))
                                && t.get("cases").is_some_and(Value::is_array)
                        }
                        _ => false,
                    },
                };
                if !shape_ok {
                    let shape = match key {
                        "contracts" => "a text",
                        "references" => "{\"reference\": source[, \"assume\": condition]}",
                        _ => "a cairn.task/1 object for that function",
                    };
                    return Err(self.refuse("E-CONTRACT", format!("{key}.{name} must be {shape}."), vec![]));
                }
                requested.push((key, name.clone()));
            }
        }
        for (_, name) in &requested {
            if workspace.function_named(name).is_none() {
                return Err(self.refuse(
                    "E-SYMBOL",
                    format!("The contract asks for evidence about {name}, which is not a function of this program."),
                    vec![("symbol", json!(name))],
                ));
            }
        }
        for (i, (key, name)) in requested.iter().enumerate() {
            if let Some((other, _)) = requested[..i].iter().find(|(_, n)| n == name) {
                return Err(self.refuse(
                    "E-CONTRACT",
                    format!("The contract asks for two kinds of evidence about {name} ({other} and {key}); keep one."),
                    vec![],
                ));
            }
        }
        if let Some(Value::Object(task)) = contract.get("task")
            && let Some(symbol) = task.get("symbol")
            && symbol.as_str() != Some(request.symbol.as_str())
        {
            return Err(self.refuse("E-CONTRACT", "The task names another function than the session's.", vec![]));
        }
        for name in &request.include {
            if workspace.function_named(name).is_none() && resolve_function(workspace, name).is_err() {
                return Err(self.refuse(
                    "E-SYMBOL",
                    format!("{name} names no function of this program."),
                    vec![("symbol", json!(name))],
                ));
            }
        }
        for (key, name) in &requested {
            match *key {
                "contracts" => {
                    let text = contract["contracts"][name.as_str()].as_str().unwrap_or("").to_string();
                    evidence.insert(name.clone(), Evidence::Declared(text));
                }
                "references" => {
                    let mut shown = Map::new();
                    let entry = &contract["references"][name.as_str()];
                    shown.insert("reference".into(), entry["reference"].clone());
                    if let Some(assume) = entry.get("assume") {
                        shown.insert("assume".into(), assume.clone());
                    }
                    let reference = entry["reference"].as_str().unwrap_or("");
                    let assume = entry.get("assume").and_then(Value::as_str).unwrap_or("true");
                    let decided = match reference_check(workspace, name, reference, assume) {
                        Ok(()) => Evidence::Smt { contract: Value::Object(shown) },
                        Err(check) => Evidence::Undecided { contract: Value::Object(shown), check },
                    };
                    evidence.insert(name.clone(), decided);
                }
                _ => {
                    let cases = contract["tests"][name.as_str()]
                        .get("cases")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let shown: Vec<Value> = cases.iter().take(8).cloned().collect();
                    // Running them needs the native task runner, which this build lacks.
                    evidence.insert(
                        name.clone(),
                        Evidence::Undecided {
                            contract: json!({"cases": cases.len(), "shown": shown}),
                            check: "unknown",
                        },
                    );
                }
            }
        }
        // The disclosed set.
        let target_name = workspace.full_name(item).to_string();
        let mut visible: BTreeSet<String> = BTreeSet::new();
        visible.insert(target_name.clone());
        let callers = callers_of(workspace, item);
        if focused {
            for callee in workspace.callees(item) {
                visible.insert(workspace.full_name(callee).to_string());
            }
            for caller in &callers {
                visible.insert(caller.clone());
            }
        } else {
            for name in component_of(workspace, item) {
                visible.insert(name);
            }
        }
        for name in &request.include {
            if let Some(found) = workspace.function_named(name).or_else(|| resolve_function(workspace, name).ok()) {
                visible.insert(workspace.full_name(found).to_string());
            }
        }
        let (file, entry) = workspace.entry_of(item).ok_or_else(|| self.refuse_internal("no entry for the target"))?;
        let start = entry.start;
        let body = syntax
            .children()
            .find(|c| matches!(c.kind(), SyntaxKind::BLOCK | SyntaxKind::EXPR_BODY))
            .ok_or_else(|| self.refuse_internal("the target has no body"))?;
        let span = TextRange::new(start + body.text_range().start(), start + syntax.text_range().end());
        let sites = expression_sites(&body, start);
        let sites_before = sites_object(workspace.function_sites(item));
        self.handles += 1;
        let handle = format!("e{}", self.handles);
        let mut session = Session {
            handle: handle.clone(),
            used: self.clock,
            digest: String::new(),
            symbol: target_name,
            focused,
            contract,
            program: index,
            file,
            body: span,
            sites,
            ceiling,
            evidence,
            row,
            sites_before,
            visible,
            expanded: Vec::new(),
            expanded_types: Vec::new(),
            admitted: Vec::new(),
        };
        session.digest = self.seal(&session);
        if let Some(site) = &request.site
            && site_index(site).is_none_or(|i| i >= session.sites.len())
        {
            return Err(self.refuse(
                "E-SITE",
                format!("{site} is not an expression site of {}.", session.symbol),
                vec![],
            ));
        }
        let packet = self.packet(&session, item, &callers, request.site.as_deref());
        self.sessions.push(session);
        self.forget_old_sessions();
        Ok(packet)
    }

    /// The session-level packet `cairn inspect` prints (tools.md §3.8): opens a session on a
    /// fresh view of the cards and terms, discloses `expand` as an expand request would, and
    /// keeps the fields the edit host strips (`session`, the three `_sha256` digests) with a
    /// `cairn.edit/1` draft bound to the session digest.
    pub fn inspect(&mut self, sources: Sources, request: OpenRequest, expand: &[String]) -> Answer {
        self.settle();
        let site = request.site.clone();
        let handle = match self.open(sources, request) {
            Answer { refused: true, record, .. } => return Answer { record, refused: true, admitted: None },
            answer => answer.record.get("handle").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        let Some(index) = self.sessions.iter().position(|s| s.handle == handle) else {
            return self.refuse_internal("the inspected session vanished").finished();
        };
        if !expand.is_empty() {
            let names = Value::Array(expand.iter().map(|n| json!(n)).collect());
            let answer = self.expand(index, &names);
            if answer.refused {
                return answer.finished();
            }
        }
        // Everything is shown again, as to an agent that saw nothing before.
        self.sent_cards.clear();
        self.sent_terms.clear();
        let session = self.sessions.remove(index);
        let Some(target) = self.target(&session) else {
            return self.refuse_internal("the inspected function vanished").finished();
        };
        let callers = callers_of(self.ws(session.program), target);
        let mut packet = self.packet(&session, target, &callers, site.as_deref());
        let program = &self.programs[session.program];
        for key in ["handle", "expand_protocol", "explain_protocol", "state_protocol"] {
            packet.shift_remove(key);
        }
        let mut out = Map::new();
        for (key, value) in packet {
            if key == "draft_protocol" {
                out.insert("contract_sha256".into(), json!(digest(&Value::Object(session.contract.clone()))));
                out.insert("source_sha256".into(), json!(program.source_sha()));
                out.insert("implementation_sha256".into(), json!(implementation_hash()));
                let mut draft = Map::new();
                draft.insert("protocol".into(), json!("cairn.edit/1"));
                draft.insert("session".into(), json!(session.digest));
                for (k, v) in value.as_object().into_iter().flatten() {
                    if !["protocol", "handle", "site"].contains(&k.as_str()) {
                        draft.insert(k.clone(), v.clone());
                    }
                    if k == "site"
                        && let Some(i) = v.as_str().and_then(site_index)
                    {
                        draft.insert("site".into(), json!(self.site_key(&session, i)));
                    }
                }
                out.insert(key, Value::Object(draft));
            } else {
                out.insert(key.clone(), value);
                if key == "protocol" {
                    out.insert("session".into(), json!(session.digest));
                }
            }
        }
        self.sessions.insert(index, session);
        Answer::ok(out)
    }

    /// The `cairn.edit/1` key of expression site `index` (protocol §2.3).
    fn site_key(&self, session: &Session, index: usize) -> String {
        let sources = &self.programs[session.program].sources;
        let range = session.sites[index];
        let start = sources.combined_chars(session.file, usize::from(range.start()));
        let end = sources.combined_chars(session.file, usize::from(range.end()));
        digest(&json!([self.programs[session.program].source_sha(), session.symbol, start, end]))
    }

    /// Answers a `cairn.edit/1` request, bound to a session digest rather than a handle
    /// (protocol §3.3): the session object's own API, which `cairn inspect`'s draft targets.
    /// The edit host's handle requests ([`EditHost::request`]) refuse this form.
    pub fn request_v1(&mut self, value: &Value) -> Answer {
        self.settle();
        self.answer_v1(value).finished()
    }

    fn answer_v1(&mut self, value: &Value) -> Answer {
        let Value::Object(request) = value else {
            return self.refuse("E-REQUEST", "A request is a JSON object.", vec![]);
        };
        let kind = request.get("kind").and_then(Value::as_str).unwrap_or("");
        let mut expected: BTreeSet<&str> = ["protocol", "session", "kind", "replacement"].into_iter().collect();
        if kind == "expr" {
            expected.insert("site");
        }
        let given: BTreeSet<&str> = request.keys().map(String::as_str).collect();
        let fields: Vec<&str> = expected.symmetric_difference(&given).copied().collect();
        if !fields.is_empty() {
            return self.refuse(
                "E-REQUEST",
                format!(
                    "A cairn.edit/1 {kind} request has exactly the keys {}.",
                    expected.iter().copied().collect::<Vec<_>>().join(", ")
                ),
                vec![("fields", json!(fields))],
            );
        }
        if request.get("protocol").and_then(Value::as_str) != Some("cairn.edit/1") {
            return self.refuse("E-REQUEST", "protocol must be \"cairn.edit/1\" for a session-bound request.", vec![]);
        }
        let digest_given = request.get("session").and_then(Value::as_str).unwrap_or("");
        let Some(index) = self.sessions.iter().position(|s| s.digest == digest_given) else {
            return self.refuse(
                "E-SESSION",
                "The session digest is not a current session's; take the digest from the newest packet.",
                vec![],
            );
        };
        if kind != "body" && kind != "expr" {
            return self.refuse("E-REQUEST", "A cairn.edit/1 request is of kind body or expr.", vec![]);
        }
        let Some(replacement) = request.get("replacement").and_then(Value::as_str) else {
            return self.refuse("E-REQUEST", "replacement must be a string.", vec![]);
        };
        if replacement.len() > REPLACEMENT_LIMIT {
            return self.refuse("E-REQUEST", format!("A replacement holds at most {REPLACEMENT_LIMIT} bytes."), vec![]);
        }
        let program = self.sessions[index].program;
        self.load(program);
        let site = if kind == "expr" {
            let key = request.get("site").and_then(Value::as_str).unwrap_or("");
            let count = self.sessions[index].sites.len();
            match (0..count).find(|i| self.site_key(&self.sessions[index], *i) == key) {
                Some(i) => Some(i),
                None => return self.refuse("E-SITE", "The site key names no expression site of this session.", vec![]),
            }
        } else {
            None
        };
        self.judge(index, site, replacement)
    }

    fn seal(&self, session: &Session) -> String {
        let program = &self.programs[session.program];
        let mut input = Map::new();
        input.insert("source".into(), json!(program.source_sha()));
        input.insert("symbol".into(), json!(session.symbol));
        input.insert("contract".into(), Value::Object(session.contract.clone()));
        input.insert("visible".into(), json!(session.visible.iter().collect::<Vec<_>>()));
        input.insert("implementation".into(), json!(implementation_hash()));
        if session.focused {
            input.insert("scope".into(), json!("focused"));
        }
        digest(&Value::Object(input))
    }

    // ----- packets ----------------------------------------------------------------------------

    fn packet(
        &mut self,
        session: &Session,
        target: Item,
        callers: &[String],
        site: Option<&str>,
    ) -> Map<String, Value> {
        let program = &self.programs[session.program];
        let workspace = program.workspace.as_ref().expect("loaded");
        let db = workspace.db();
        let rows = workspace.last_rows();
        let row_of = |item: Item| -> Vec<String> {
            rows.as_ref()
                .and_then(|r| r.row(item))
                .map(|r| r.iter().map(|e| e.to_string()).collect())
                .unwrap_or_default()
        };
        let target_source = source_of(workspace, target);
        let mut shown_texts: Vec<String> = vec![target_source.clone()];
        let expanded: Vec<(String, String)> = session
            .expanded
            .iter()
            .filter_map(|name| workspace.function_named(name).map(|item| (name.clone(), source_of(workspace, item))))
            .collect();
        shown_texts.extend(expanded.iter().map(|(_, source)| source.clone()));
        let mut dependencies = Map::new();
        let mut classes: BTreeSet<&str> = BTreeSet::new();
        for name in session.visible.iter().filter(|n| **n != session.symbol) {
            let Some(item) = workspace.function_named(name) else { continue };
            let signature = cairn_hir::render::signature_text(db, item, true);
            // A focused packet shows the dependency's signature; a component packet its source.
            shown_texts.push(if session.focused { signature.clone() } else { source_of(workspace, item) });
            let mut entry = Map::new();
            entry.insert("signature".into(), json!(signature));
            entry.insert("effects".into(), json!(row_of(item)));
            match session.evidence.get(name) {
                Some(Evidence::Declared(text)) => {
                    entry.insert("evidence".into(), json!("declared"));
                    entry.insert("contract".into(), json!(text));
                    classes.insert("declared");
                }
                Some(Evidence::Undecided { contract, check }) => {
                    entry.insert("evidence".into(), json!("declared"));
                    entry.insert("contract".into(), contract.clone());
                    entry.insert("check".into(), json!(check));
                    classes.insert("declared");
                }
                Some(Evidence::Smt { contract }) => {
                    entry.insert("evidence".into(), json!("smt-equivalent"));
                    entry.insert("contract".into(), contract.clone());
                    classes.insert("smt-equivalent");
                }
                None if session.focused => {
                    entry.insert("evidence".into(), json!("interface"));
                    classes.insert("interface");
                }
                None => {}
            }
            if session.focused {
                let comment = first_comment_line(workspace, item);
                if !comment.is_empty() {
                    entry.insert("comment".into(), json!(comment));
                    classes.insert("comment");
                }
            }
            dependencies.insert(name.clone(), Value::Object(entry));
        }
        if !session.focused {
            // A component packet lists the target among its dependencies too.
            let mut entry = Map::new();
            entry.insert("signature".into(), json!(cairn_hir::render::signature_text(db, target, true)));
            entry.insert("effects".into(), json!(session.row));
            dependencies.insert(session.symbol.clone(), Value::Object(entry));
        }
        let texts: Vec<&str> = shown_texts.iter().map(String::as_str).collect();
        let mut types = if session.focused { types_mentioned(workspace, &texts) } else { all_types(workspace) };
        for name in &session.expanded_types {
            if let Some(text) = type_declaration(workspace, name)
                && !types.contains(&text)
            {
                if !types.is_empty() {
                    types.push('\n');
                }
                types.push_str(&text);
            }
        }
        let cards = select_cards(&texts, signals(&texts, &types, session.focused));
        let mut rule_cards = Map::new();
        let mut sent_before = Vec::new();
        for card in cards {
            if self.sent_cards.contains(card.name) {
                sent_before.push(json!(card.name));
            } else {
                rule_cards.insert(card.name.to_string(), json!(card.text()));
                self.sent_cards.insert(card.name);
            }
        }
        let mut context = vec![json!({"symbol": session.symbol, "source": target_source})];
        for (name, source) in &expanded {
            context.push(json!({"symbol": name, "source": source}));
        }
        if !session.focused {
            for name in session.visible.iter().filter(|n| **n != session.symbol) {
                if let Some(item) = workspace.function_named(name) {
                    context.push(json!({"symbol": name, "source": source_of(workspace, item)}));
                }
            }
        }
        let mut packet = Map::new();
        packet.insert("protocol".into(), json!(if session.focused { "cairn.packet/2" } else { "cairn.packet/1" }));
        packet.insert("handle".into(), json!(session.handle));
        packet.insert("symbol".into(), json!(session.symbol));
        if let Some(task) = session.contract.get("task") {
            packet.insert("task".into(), task.clone());
        }
        packet.insert("allowed_effects".into(), json!(session.ceiling.iter().collect::<Vec<_>>()));
        let row_set: BTreeSet<&String> = session.row.iter().collect();
        if session.focused && row_set != session.ceiling.iter().collect() {
            packet.insert("effects".into(), json!(session.row));
        }
        packet.insert("types".into(), json!(types));
        packet.insert("context".into(), Value::Array(context));
        packet.insert("rule_cards".into(), Value::Object(rule_cards));
        packet.insert("dependencies".into(), Value::Object(dependencies));
        if session.focused {
            packet.insert("callers".into(), json!(callers));
            packet.insert("not_shown".into(), Value::Object(not_shown(workspace, &session.visible)));
        }
        packet.insert("scope".into(), json!(if session.focused { "focused" } else { "component" }));
        let terms = terms_for(&mut self.sent_terms, session, &classes);
        self.terms_sent = true;
        let withheld_terms = terms.1;
        packet.insert("terms".into(), Value::Object(terms.0));
        if withheld_terms {
            sent_before.push(json!("terms"));
        }
        if !sent_before.is_empty() {
            packet.insert("sent_before".into(), Value::Array(sent_before));
        }
        let draft = match site {
            Some(site) => {
                let index = site_index(site).unwrap_or(0);
                let range = session.sites[index];
                let text =
                    &program.sources.files[session.file].text[usize::from(range.start())..usize::from(range.end())];
                json!({"protocol":"cairn.edit/2","handle":session.handle,"kind":"expr","site":site,"replacement":text})
            }
            None => json!({"protocol":"cairn.edit/2","handle":session.handle,"kind":"body","replacement":"{ ... }"}),
        };
        packet.insert("draft_protocol".into(), draft);
        if let Some(site) = site {
            let index = site_index(site).unwrap_or(0);
            let range = session.sites[index];
            let text = &program.sources.files[session.file].text[usize::from(range.start())..usize::from(range.end())];
            let sources = &program.sources;
            let mut focus = Map::new();
            focus.insert("symbol".into(), json!(session.symbol));
            focus.insert("start".into(), json!(sources.combined_chars(session.file, usize::from(range.start()))));
            focus.insert("end".into(), json!(sources.combined_chars(session.file, usize::from(range.end()))));
            let relative = workspace.locate(target).map(|(_, start)| range - start);
            match relative.and_then(|r| cairn_hir::site::site_facts(db, target, r)) {
                Some(facts) => {
                    focus.insert("tag".into(), json!(facts.tag));
                    focus.insert("type".into(), json!(facts.ty));
                    focus.insert("expected_type".into(), json!(facts.expected));
                    let bindings: Map<String, Value> = facts
                        .bindings
                        .into_iter()
                        .map(|b| (b.name, json!({"type": b.ty, "mutable": b.mutable, "constant": b.constant})))
                        .collect();
                    focus.insert("bindings".into(), Value::Object(bindings));
                }
                None => {
                    focus.insert("tag".into(), json!("other"));
                    focus.insert("type".into(), Value::Null);
                    focus.insert("expected_type".into(), Value::Null);
                    focus.insert("bindings".into(), json!({}));
                }
            }
            focus.insert("source".into(), json!(text));
            focus.insert("site".into(), json!(site));
            packet.insert("focus".into(), Value::Object(focus));
        }
        if session.focused {
            packet.insert(
                "expand_protocol".into(),
                json!({"protocol":"cairn.edit/2","handle":session.handle,"kind":"expand","symbols":["name"]}),
            );
        }
        packet.insert(
            "explain_protocol".into(),
            json!({"protocol":"cairn.edit/2","handle":session.handle,"kind":"explain"}),
        );
        packet
            .insert("state_protocol".into(), json!({"protocol":"cairn.edit/2","handle":session.handle,"kind":"state"}));
        packet
    }
}

/// The terms entries not yet sent by this host, and whether any were withheld.
fn terms_for(
    sent_terms: &mut BTreeSet<String>,
    session: &Session,
    classes: &BTreeSet<&str>,
) -> (Map<String, Value>, bool) {
    let scope = if session.focused {
        "focused: the target with the interfaces of its callees and callers; anything else by expand"
    } else {
        "component: every function connected to the target through calls, either way, and every type"
    };
    let mut entries: Vec<(String, Value)> = vec![
        ("profile".into(), json!(profile())),
        ("scope".into(), json!(scope)),
        (
            "limits".into(),
            json!({"replacement_bytes": REPLACEMENT_LIMIT, "one_authored_function": true, "expand": EXPAND_LIMIT}),
        ),
        (
            "boundaries".into(),
            json!([
                "Parameters, imports, target flags, tests and the task are the host's: a reply changes only the one body or expression.",
                "Every reply is checked against the complete linked program, however little of it the packet shows.",
                "typed means the checker accepted the program; it does not mean correct, terminating, equivalent or fast, and no success rate of fresh models has been measured."
            ]),
        ),
        (
            "refusal".into(),
            json!(
                "A refusal comes from the checker, proves nothing about behaviour, and never changes the source by itself."
            ),
        ),
        (
            "admission".into(),
            json!(
                "typed: the complete program passed the checker with the reply spliced in and no byte outside its range moved; nothing was built, tested, proved or timed, and guard-site numbers are counted statically."
            ),
        ),
        (
            "state".into(),
            json!(
                "A state request answers with the program as it now stands: per module, each function as [signature, row], sealed by a digest; a delta request with since answers with the differences only."
            ),
        ),
    ];
    for class in classes {
        let text = match *class {
            "interface" => {
                "the compiler's signature, row, types and extents, and nothing about behaviour; expand the body before relying on what it does"
            }
            "declared" => "the host's own description, checked by nobody; expand the body before relying on it",
            "smt-equivalent" => {
                "Z3 found no allowed input where the function and the host's reference differ in result, leftovers or traps, decided when this session opened, within the modelled fragment: the reference stands in for the body"
            }
            "comment" => "the first comment line above the declaration: the author's claim, unchecked",
            _ => continue,
        };
        entries.push((format!("evidence.{class}"), json!(text)));
    }
    if !session.contract.contains_key("task") {
        entries.push(("task".into(), json!("No task was supplied, so none is to be assumed.")));
    }
    let mut out = Map::new();
    let mut withheld = false;
    for (key, value) in entries {
        let memo = format!("{key}={value}");
        if sent_terms.contains(&memo) {
            withheld = true;
            continue;
        }
        sent_terms.insert(memo);
        match key.split_once('.') {
            Some((outer, inner)) => {
                let slot = out.entry(outer.to_string()).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = slot {
                    map.insert(inner.to_string(), value);
                }
            }
            None => {
                out.insert(key, value);
            }
        }
    }
    (out, withheld)
}

impl EditHost {
    // ----- requests ---------------------------------------------------------------------------

    /// Answers one `cairn.edit/2` request, given as JSON text (parsed strictly) or a value.
    pub fn request_text(&mut self, text: &str) -> Answer {
        match crate::strict::parse(text) {
            Ok(value) => self.request(&value),
            Err(why) => self.refuse("E-REQUEST", format!("The request is not valid JSON: {why}."), vec![]).finished(),
        }
    }

    /// Answers one `cairn.edit/2` request.
    pub fn request(&mut self, value: &Value) -> Answer {
        self.settle();
        self.answer_request(value).finished()
    }

    fn answer_request(&mut self, value: &Value) -> Answer {
        let Value::Object(request) = value else {
            return self.refuse("E-REQUEST", "A request is a JSON object.", vec![]);
        };
        if !crate::strict::finite(value) {
            return self.refuse("E-REQUEST", "A request holds no NaN or infinite number.", vec![]);
        }
        let kind = request.get("kind").and_then(Value::as_str).unwrap_or("");
        let extra: &[&str] = match kind {
            "body" => &["replacement"],
            "expr" => &["site", "replacement"],
            "expand" => &["symbols"],
            "explain" | "state" => &[],
            "predict" => &["sizes"],
            "shot" => &["functions"],
            "delta" => &["since"],
            _ => {
                return self.refuse(
                    "E-REQUEST",
                    "kind is one of body, expr, expand, explain, predict, shot, state, delta.",
                    vec![],
                );
            }
        };
        let expected: BTreeSet<&str> = ["protocol", "handle", "kind"].iter().chain(extra).copied().collect();
        let given: BTreeSet<&str> = request.keys().map(String::as_str).collect();
        let fields: Vec<&str> = expected.symmetric_difference(&given).copied().collect();
        if !fields.is_empty() {
            return self.refuse(
                "E-REQUEST",
                format!(
                    "A {kind} request has exactly the keys {}.",
                    expected.iter().copied().collect::<Vec<_>>().join(", ")
                ),
                vec![("fields", json!(fields))],
            );
        }
        if request.get("protocol").and_then(Value::as_str) != Some("cairn.edit/2") {
            return self.refuse("E-REQUEST", "protocol must be \"cairn.edit/2\".", vec![]);
        }
        let Some(handle) = request.get("handle").and_then(Value::as_str) else {
            return self.refuse("E-SESSION", "handle must be a string the host issued.", vec![]);
        };
        let Some(index) = self.sessions.iter().position(|s| s.handle == handle) else {
            return self.refuse("E-SESSION", format!("No session has the handle {handle}."), vec![]);
        };
        let program = self.sessions[index].program;
        self.load(program);
        self.sessions[index].used = self.clock;
        match kind {
            "body" | "expr" => {
                let Some(replacement) = request.get("replacement").and_then(Value::as_str) else {
                    return self.refuse("E-REQUEST", "replacement must be a string.", vec![]);
                };
                if replacement.len() > REPLACEMENT_LIMIT {
                    return self.refuse(
                        "E-REQUEST",
                        format!("A replacement holds at most {REPLACEMENT_LIMIT} bytes."),
                        vec![],
                    );
                }
                let site = match request.get("site") {
                    None => None,
                    Some(site) => {
                        let text = site.as_str().unwrap_or("");
                        match site_index(text).filter(|i| *i < self.sessions[index].sites.len()) {
                            Some(i) => Some(i),
                            None => {
                                return self.refuse(
                                    "E-SITE",
                                    format!("{site} is not an expression site of this session; the packet's sites are x0 to x{}.", self.sessions[index].sites.len().saturating_sub(1)),
                                    vec![],
                                );
                            }
                        }
                    }
                };
                self.judge(index, site, replacement)
            }
            "expand" => self.expand(index, request.get("symbols").unwrap_or(&Value::Null)),
            "state" => self.state(index),
            "delta" => {
                let since = request.get("since").and_then(Value::as_str).unwrap_or("");
                self.delta(index, since)
            }
            _ => self.refuse(
                "E-REQUEST",
                format!("{kind} needs native builds and the cost model, which this host does not offer yet."),
                vec![],
            ),
        }
    }

    /// Judges a `body` reply, or an `expr` reply at a site (an index the caller checked). The
    /// session's program is loaded.
    fn judge(&mut self, index: usize, site: Option<usize>, replacement: &str) -> Answer {
        let session = &self.sessions[index];
        let (span, wrapped) = match site {
            Some(i) => (session.sites[i], format!("({replacement})")),
            None => (session.body, replacement.to_string()),
        };
        let is_expr = site.is_some();
        // The reply parsed alone.
        if let Some(answer) = self.parse_alone(index, replacement, is_expr) {
            return answer;
        }
        let session = &self.sessions[index];
        let Some(item) = self.target(session) else {
            return self.refuse_internal("the session's function vanished from its pinned program");
        };
        let program_index = session.program;
        let file = session.file;
        let symbol = session.symbol.clone();
        let original = self.programs[program_index].sources.files[file].text.clone();
        let start = usize::from(span.start());
        let end = usize::from(span.end());
        let candidate = format!("{}{}{}", &original[..start], wrapped, &original[end..]);
        // Token preservation outside the span.
        if !tokens_preserved(&original, &candidate, start, end, start + wrapped.len()) {
            return self.refuse(
                "E-DECLARATION",
                "A token outside the replaced range changed (a trailing comment can hide the rest of its line).",
                vec![],
            );
        }
        // Check the whole program with the reply spliced in, then put the original back.
        // The workspace gets the smallest edit with the same result (the reply usually keeps the
        // braces and most lines), so its fast path sees a change inside one body.
        let edit = TextEdit::smallest(&original[start..end], &wrapped, start);
        let undo = TextEdit {
            delete: TextRange::at(edit.delete.start(), TextSize::of(edit.insert.as_str())),
            insert: original[edit.delete].to_string(),
        };
        let preserve = self.sessions[index].contract.get("preserve").and_then(Value::as_str).map(str::to_string);
        let workspace = self.ws_mut(program_index);
        let before_rows = workspace.last_rows();
        let original_code = if preserve.is_some() { emitted_code(workspace, item) } else { None };
        let signature_before = cairn_hir::render::signature_text(workspace.db(), item, true);
        let functions_before = function_count(workspace);
        workspace.edit_file(file, &edit);
        let outcome = workspace.check();
        let result = match outcome.refusal {
            Some(refusal) => Err(refusal.first),
            None => {
                let after_rows = workspace.last_rows();
                let row: Vec<String> = after_rows
                    .as_ref()
                    .and_then(|r| r.row(item))
                    .map(|r| r.iter().map(|e| e.to_string()).collect())
                    .unwrap_or_default();
                let sites = sites_object(workspace.function_sites(item));
                let signature_after = cairn_hir::render::signature_text(workspace.db(), item, true);
                let functions_after = function_count(workspace);
                let callees: Vec<String> =
                    workspace.callees(item).iter().map(|c| workspace.full_name(*c).to_string()).collect();
                let moved = moved_rows(workspace, before_rows.as_deref(), after_rows.as_deref(), item);
                let code = if preserve.is_some() { emitted_code(workspace, item) } else { None };
                // The candidate's MIR, for the equivalence check of a preserve contract.
                let lowered = if preserve.is_some() && code != original_code {
                    equiv::Lowered::closure(workspace, item)
                } else {
                    None
                };
                Ok((
                    row,
                    sites,
                    signature_after != signature_before,
                    functions_after != functions_before,
                    callees,
                    moved,
                    code,
                    lowered,
                ))
            }
        };
        workspace.edit_file(file, &undo);
        // Back at the pinned original, checked again (one body), so the workspace's last record
        // — which packets, states and the next reply read — is the original's.
        workspace.check();
        match result {
            Err(first) => {
                let reply = ReplySpan { start, replacement_len: wrapped.len(), prefix: usize::from(is_expr) };
                let mut answer = self.compiler_refusal_at(&first, Some(program_index), Some((file, &candidate, reply)));
                if let Some(hint) = self.callee_hint(index, &first) {
                    answer.record.insert("repair_hint".into(), json!(hint));
                }
                answer
            }
            Ok((row, sites, signature_changed, functions_changed, callees, moved, code, candidate_lowered)) => {
                let session = &self.sessions[index];
                if signature_changed {
                    return self.refuse(
                        "E-SIGNATURE",
                        format!("The signature of {symbol} must stay as it is."),
                        vec![],
                    );
                }
                if functions_changed {
                    return self.refuse("E-DECLARATION", "The set of functions must stay as it is.", vec![]);
                }
                let added: Vec<&String> = row.iter().filter(|e| !session.ceiling.contains(*e)).collect();
                if !added.is_empty() {
                    let hint = effects_hint(&added);
                    let mut answer = self.refuse(
                        "E-EFFECT-EXPANSION",
                        format!("The new body of {symbol} does more than the host allows."),
                        vec![("added_effects", json!(added))],
                    );
                    answer.record.insert("repair_hint".into(), json!(hint));
                    return answer;
                }
                let undisclosed: Vec<&String> = callees.iter().filter(|c| !session.visible.contains(*c)).collect();
                if !undisclosed.is_empty() {
                    let mut answer = self.refuse(
                        "E-CONTEXT-CLOSURE",
                        format!(
                            "The new body calls functions this session has not disclosed: {}.",
                            undisclosed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                        vec![("symbols", json!(undisclosed))],
                    );
                    answer.record.insert(
                        "repair_hint".into(),
                        json!("Send an expand request naming them first, then use them."),
                    );
                    return answer;
                }
                if let Some((other, gained)) =
                    moved.iter().find(|m| !m.gained.is_empty()).map(|m| (m.name.clone(), m.gained.clone()))
                {
                    let hint = effects_hint(&gained.iter().collect::<Vec<_>>());
                    let mut answer = self.refuse(
                        "E-CALLER-EFFECT",
                        format!("The edit makes {other} do more: its row gains {}.", gained.join(", ")),
                        vec![("symbol", json!(other)), ("added_effects", json!(gained))],
                    );
                    answer.record.insert("repair_hint".into(), json!(hint));
                    return answer;
                }
                // A refactoring contract: only a change of an admitted class (§3.6). Different
                // code is compared with Z3: the original (the pinned program, which the
                // workspace holds again) against the candidate.
                let equivalence = match &preserve {
                    None => None,
                    Some(_) if code.is_some() && code == original_code => Some("identical-code"),
                    Some(kind) => {
                        let symbol_of = equiv::symbol_of(self.ws(program_index), item);
                        let verdict = match (&candidate_lowered, equiv::Lowered::closure(self.ws(program_index), item))
                        {
                            (Some(new), Some(old)) => {
                                let comparison = equiv::compare(
                                    &old,
                                    &symbol_of,
                                    new,
                                    &symbol_of,
                                    None,
                                    false,
                                    cairn_smt::Options::default(),
                                );
                                Some((comparison.verdict, old))
                            }
                            _ => None,
                        };
                        match (kind.as_str(), verdict) {
                            ("equivalent", Some((cairn_smt::Verdict::Equivalent, _))) => Some("smt-equivalent"),
                            (kind, verdict) => {
                                let (reason, witness, hint) = match &verdict {
                                    Some((cairn_smt::Verdict::Equivalent, _)) => (
                                        "not-identical-code: the emitted code differs from the original's, though Z3 finds the two equivalent (preserve: equivalent would admit it)".to_string(),
                                        Value::Null,
                                        "Keep the original's code: rename locals or reformat, but compute exactly what the original computes, the same way.".to_string(),
                                    ),
                                    Some((cairn_smt::Verdict::Differs(w), old)) => {
                                        let function = old.get(&symbol_of).expect("lowered");
                                        (
                                            "behavior-changed".to_string(),
                                            equiv::witness_json(w, function),
                                            format!(
                                                "{} Keep the original's answer on these inputs.",
                                                equiv::witness_sentence(w, function)
                                            ),
                                        )
                                    }
                                    Some((cairn_smt::Verdict::Unknown(why), _)) => (
                                        format!("unknown: {why}"),
                                        Value::Null,
                                        "Make a smaller change whose effect Z3 can decide, or keep the original's code.".to_string(),
                                    ),
                                    _ => (
                                        "unknown: the function could not be compared".to_string(),
                                        Value::Null,
                                        "Keep the original's code.".to_string(),
                                    ),
                                };
                                let mut answer = self.refuse(
                                    "E-PRESERVE",
                                    format!("Under preserve: {kind}, the new body of {symbol} must keep the original's behaviour, and this change could not be shown to."),
                                    vec![("reason", json!(reason)), ("witness", witness)],
                                );
                                answer.record.insert("repair_hint".into(), json!(hint));
                                return answer;
                            }
                        }
                    }
                };
                // Admitted.
                let session = &mut self.sessions[index];
                let change = Admitted { file, replaced: start..end, text: wrapped.clone() };
                session.admitted.push(Candidate { change: change.clone(), row: row.clone(), sites: sites.clone() });
                let mut record = Map::new();
                if !self.terms_sent {
                    record.insert("protocol".into(), json!("cairn.admission/1"));
                }
                record.insert("status".into(), json!("typed"));
                record.insert("symbol".into(), json!(symbol));
                record.insert("effects".into(), json!(row));
                record.insert("check_sites".into(), Value::Object(sites.clone()));
                if sites != session.sites_before {
                    record.insert("check_sites_before".into(), Value::Object(session.sites_before.clone()));
                }
                if !moved.is_empty() {
                    let mut changed: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
                    for m in &moved {
                        changed
                            .entry(m.module.clone())
                            .or_default()
                            .insert(m.local.clone(), json!([m.signature, m.row]));
                    }
                    record.insert(
                        "changed".into(),
                        Value::Object(changed.into_iter().map(|(k, v)| (k, Value::Object(v))).collect()),
                    );
                }
                if let Some(class) = equivalence {
                    // Kept whenever the session has a preserve contract (protocol §3.5 [port]).
                    record.insert("equivalence".into(), json!(class));
                }
                if !self.terms_sent {
                    record.insert("runtime_cost".into(), json!(RUNTIME_COST));
                    record.insert("source_outside_edit_unchanged".into(), json!(true));
                    record.insert("contract_unchanged".into(), json!(true));
                    record.insert("full_module_rechecked".into(), json!(true));
                    record.insert("native_build".into(), json!("not-run"));
                    record.insert("behavioral_tests".into(), json!("not-run"));
                    if equivalence.is_none() {
                        record.insert("equivalence".into(), json!("not-proved"));
                    }
                    record.insert("formal_status".into(), json!("not-verified"));
                }
                Answer { record, refused: false, admitted: Some(change) }
            }
        }
    }

    /// Parses a reply alone: a block or `= expr;` for a body, one expression for a site.
    fn parse_alone(&mut self, index: usize, replacement: &str, is_expr: bool) -> Option<Answer> {
        let session = &self.sessions[index];
        // The reply's first token decides its form (comments and spacing before it are fine).
        let first = cairn_syntax::lexer::lex(replacement).tokens.into_iter().map(|t| t.kind).find(|k| !k.is_trivia());
        let (text, prefix) = if is_expr {
            // Unwrapped, on lines of its own: it must be one expression to the end of its text
            // (checked below), and a trailing comment cannot hide the closing text here (the
            // splice judges that, as E-DECLARATION).
            (format!("fn __reply() {{ let __v = \n{replacement}\n; }}"), "fn __reply() { let __v = \n".len())
        } else if first == Some(SyntaxKind::L_CURLY) {
            (replacement.to_string(), 0)
        } else if first == Some(SyntaxKind::EQ) {
            let returns_nothing = match self.target(session) {
                Some(item) => {
                    cairn_hir::signature::fn_signature(self.ws(session.program).db(), item).ret
                        == cairn_hir::types::Ty::Void
                }
                None => false,
            };
            if returns_nothing {
                return Some(self.refuse(
                    "E-EXPRESSION-BODY",
                    format!("{} returns nothing, so its body cannot be `= expr;`: write a block.", session.symbol),
                    vec![],
                ));
            }
            (format!("fn __reply() -> u8 {replacement}"), "fn __reply() -> u8 ".len())
        } else {
            return Some(self.reply_refusal(
                "E-PARSE",
                "A body reply is a block `{ … }` or `= expr;`.",
                replacement,
                0,
            ));
        };
        let parse = if !is_expr && prefix == 0 { cairn_syntax::parse_block(&text) } else { cairn_syntax::parse(&text) };
        let error = parse.first_error().cloned();
        if let Some(error) = error {
            let at = usize::from(error.range.start()).saturating_sub(prefix).min(replacement.len());
            return Some(self.reply_refusal(error.code.as_str(), &error.message, replacement, at));
        }
        if is_expr {
            // Exactly one expression: the initializer of the one statement, spanning the reply.
            let root = parse.syntax_node();
            let span = non_trivia_span(replacement).map(|(a, b)| (a + prefix, b + prefix));
            let statements: Vec<cairn_syntax::SyntaxNode> = root
                .descendants()
                .find(|n| n.kind() == SyntaxKind::BLOCK)
                .map(|block| block.children().collect())
                .unwrap_or_default();
            let single = match statements.as_slice() {
                [statement] if statement.kind() == SyntaxKind::LET_STMT => {
                    statement.children().filter(|c| cairn_syntax::ast::Expr::can_cast(c.kind())).last().is_some_and(
                        |e| Some((usize::from(e.text_range().start()), usize::from(e.text_range().end()))) == span,
                    )
                }
                _ => false,
            };
            if !single {
                return Some(self.reply_refusal(
                    "E-PARSE",
                    "An expression reply is exactly one expression.",
                    replacement,
                    0,
                ));
            }
        } else if prefix != 0 {
            // `= expr;` and nothing after it.
            let root = parse.syntax_node();
            if root.children().filter(|c| !c.kind().is_trivia()).count() != 1 {
                return Some(self.reply_refusal(
                    "E-PARSE",
                    "A body reply `= expr;` is one expression and its `;`.",
                    replacement,
                    0,
                ));
            }
        }
        if !is_expr && prefix == 0 {
            // One block, and nothing after it.
            let root = parse.syntax_node();
            let blocks = root.children().filter(|c| c.kind() == SyntaxKind::BLOCK).count();
            let nodes = root.children().count();
            if blocks != 1 || nodes != 1 {
                return Some(self.reply_refusal("E-PARSE", "A body reply is exactly one block.", replacement, 0));
            }
        }
        None
    }

    fn reply_refusal(&mut self, code: &str, message: &str, reply: &str, at: usize) -> Answer {
        let (line, column, source_line) = line_column(reply, at);
        let mut answer = self.refuse(code, message, vec![]);
        answer.record.insert("line".into(), json!(line));
        answer.record.insert("column".into(), json!(column));
        answer.record.insert("in".into(), json!("reply"));
        answer.record.insert("source_line".into(), json!(source_line));
        answer.record.insert("card".into(), json!(card_of(code).map(|c| c.name)));
        if let Some(hint) = cairn_diagnostics::hints::host_hint(code) {
            answer.record.insert("repair_hint".into(), json!(hint));
        }
        answer
    }

    fn expand(&mut self, index: usize, symbols: &Value) -> Answer {
        if !self.sessions[index].focused {
            return self.refuse(
                "E-REQUEST",
                "expand is for focused sessions; a component session shows everything.",
                vec![],
            );
        }
        let Some(names) = symbols.as_array().filter(|a| !a.is_empty() && a.len() <= EXPAND_LIMIT) else {
            return self.refuse("E-REQUEST", format!("symbols is a list of 1 to {EXPAND_LIMIT} names."), vec![]);
        };
        let program = self.sessions[index].program;
        let workspace = self.ws(program);
        let mut functions = Vec::new();
        let mut type_names = Vec::new();
        for name in names {
            let Some(name) = name.as_str() else {
                return self.refuse("E-REQUEST", "symbols is a list of names.", vec![]);
            };
            let mut function = resolve_function(workspace, name);
            if function == Err(0)
                && name.contains('.')
                && let Some(target) = workspace.function_named(&self.sessions[index].symbol)
            {
                // A path as the target's module writes it (an import alias, `prices.discounted`).
                let scope = cairn_hir::scope::scope(workspace.db());
                let segments: Vec<std::sync::Arc<str>> = name.split('.').map(std::sync::Arc::from).collect();
                if let cairn_hir::scope::Lookup::Found(decl) =
                    scope.resolve_path(&scope.module_of(target), &segments, |k| k == cairn_hir::ItemKind::Fn)
                {
                    function = Ok(decl.item);
                }
            }
            let types = type_matches(workspace, name);
            match (function, types) {
                (Ok(item), 0) => {
                    if workspace.full_name(item).as_ref() == self.sessions[index].symbol {
                        return self.refuse(
                            "E-SYMBOL",
                            format!("{name} is the session's own function; its source is in the packet already."),
                            vec![("symbol", json!(name))],
                        );
                    }
                    functions.push(workspace.full_name(item).to_string());
                }
                (Err(0), 1) => type_names.push(name.to_string()),
                (Err(0), 0) => {
                    return self.refuse(
                        "E-SYMBOL",
                        format!(
                            "{name} names no function or type of this program; use a name from not_shown or the packet."
                        ),
                        vec![("symbol", json!(name))],
                    );
                }
                _ => {
                    return self.refuse(
                        "E-SYMBOL",
                        format!("{name} names more than one declaration; qualify it with its module."),
                        vec![("symbol", json!(name))],
                    );
                }
            }
        }
        let mut context = Vec::new();
        let mut texts = Vec::new();
        let mut dependencies = Map::new();
        let rows = workspace.last_rows();
        for name in &functions {
            let Some(item) = workspace.function_named(name) else { continue };
            let source = source_of(workspace, item);
            texts.push(source.clone());
            context.push(json!({"symbol": name, "source": source}));
            if !self.sessions[index].visible.contains(name) {
                let row: Vec<String> = rows
                    .as_ref()
                    .and_then(|r| r.row(item))
                    .map(|r| r.iter().map(|e| e.to_string()).collect())
                    .unwrap_or_default();
                dependencies.insert(
                    name.clone(),
                    json!({"signature": cairn_hir::render::signature_text(workspace.db(), item, true), "effects": row, "evidence": "interface"}),
                );
            }
        }
        let text_refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut types = types_mentioned(workspace, &text_refs);
        for name in &type_names {
            if let Some(text) = type_declaration(workspace, name)
                && !types.contains(&text)
            {
                if !types.is_empty() {
                    types.push('\n');
                }
                types.push_str(&text);
            }
        }
        let cards = select_cards(&text_refs, signals(&text_refs, &types, true));
        let mut rule_cards = Map::new();
        for card in cards {
            if !self.sent_cards.contains(card.name) {
                self.sent_cards.insert(card.name);
                rule_cards.insert(card.name.to_string(), json!(card.text()));
            }
        }
        let grew = functions.iter().any(|f| !self.sessions[index].visible.contains(f));
        let session = &mut self.sessions[index];
        for name in &type_names {
            if !session.expanded_types.contains(name) {
                session.expanded_types.push(name.clone());
            }
        }
        for name in functions {
            if !session.expanded.contains(&name) {
                session.expanded.push(name.clone());
            }
            session.visible.insert(name);
        }
        if grew {
            let sealed = self.seal(&self.sessions[index]);
            self.sessions[index].digest = sealed;
        }
        let mut record = Map::new();
        record.insert("protocol".into(), json!("cairn.expansion/1"));
        record.insert("context".into(), Value::Array(context));
        record.insert("types".into(), json!(types));
        record.insert("dependencies".into(), Value::Object(dependencies));
        record.insert("rule_cards".into(), Value::Object(rule_cards));
        Answer::ok(record)
    }

    /// The session's program as it now stands: the latest admitted candidate, else the original.
    fn current_state(&mut self, index: usize) -> Map<String, Value> {
        let session = &self.sessions[index];
        let program = session.program;
        let file = session.file;
        let candidate = session.admitted.last().map(|c| c.change.clone());
        let evidence: Vec<Value> = session
            .admitted
            .iter()
            .map(|c| json!({"symbol": session.symbol, "status": "typed", "effects": c.row, "check_sites": c.sites}))
            .collect();
        let mut sources = self.programs[program].sources.clone();
        if let Some(change) = candidate {
            sources.files[file].text = change.apply(&sources.files[file].text);
        }
        let mut state = self.program_state(sources, false);
        state.insert("evidence".into(), Value::Array(evidence));
        // Reseal with the evidence in.
        state.shift_remove("digest");
        let sealed = digest(&Value::Object(state.clone()));
        state.insert("digest".into(), json!(sealed));
        self.remember_state(&state);
        state
    }

    fn state(&mut self, index: usize) -> Answer {
        Answer::ok(self.current_state(index))
    }

    fn delta(&mut self, index: usize, since: &str) -> Answer {
        let Some(before) = self.states.get(since).cloned() else {
            return self.refuse("E-SESSION", "since names no state this host sent.", vec![]);
        };
        let now = self.current_state(index);
        match crate::delta(&before, &now) {
            Ok(delta) => Answer::ok(delta),
            Err(e) => self.refuse("E-REQUEST", e.0, vec![]),
        }
    }

    // ----- refusals ---------------------------------------------------------------------------

    /// The `E-CALLEE` hint inside a host (protocol §5.3): close matches among the builtins and
    /// the names the session disclosed (never an undisclosed function), and that a function must
    /// be expanded before a reply calls it.
    fn callee_hint(&self, index: usize, first: &cairn_diagnostics::Diagnostic) -> Option<String> {
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

    /// A finished host refusal record (no position), for the servers' own checks of their
    /// arguments: taught like every refusal of this host, keys in their documented order.
    pub fn refusal(&self, code: &str, message: impl Into<String>, details: Vec<(&str, Value)>) -> Map<String, Value> {
        self.refuse(code, message, details).finished().record
    }

    /// A host refusal (no position), taught.
    pub fn refuse(&self, code: &str, message: impl Into<String>, details: Vec<(&str, Value)>) -> Answer {
        let mut record = Map::new();
        if !self.terms_sent {
            record.insert("protocol".into(), json!("cairn.diagnostic/2"));
        }
        record.insert("status".into(), json!("rejected"));
        record.insert("code".into(), json!(code));
        record.insert("message".into(), json!(message.into()));
        record.insert("line".into(), json!(0));
        record.insert("column".into(), json!(0));
        if !self.terms_sent {
            record.insert("trust".into(), json!("prototype-not-verified"));
        }
        for (key, value) in details {
            record.insert(key.to_string(), value);
        }
        if let Some(card) = card_of(code) {
            record.insert("card".into(), json!(card.name));
        }
        if let Some(hint) = cairn_diagnostics::hints::host_hint(code) {
            record.insert("repair_hint".into(), json!(hint));
        }
        if !self.terms_sent {
            record.insert("automatic_edit".into(), json!(false));
            record.insert("acceptance_boundary".into(), json!(ACCEPTANCE_BOUNDARY));
        }
        Answer { record, refused: true, admitted: None }
    }

    fn refuse_internal(&self, why: &str) -> Answer {
        self.refuse("E-INTERNAL", format!("internal error in the edit host: {why}"), vec![])
    }

    fn compiler_refusal(&self, first: &cairn_diagnostics::Diagnostic, program: Option<usize>) -> Answer {
        self.compiler_refusal_at(first, program, None)
    }

    /// A compiler refusal of `program`, located in the reply when it falls inside it (`reply`:
    /// the edited file, the candidate's text and where the reply sits in it).
    fn compiler_refusal_at(
        &self,
        first: &cairn_diagnostics::Diagnostic,
        program: Option<usize>,
        reply: Option<(usize, &str, ReplySpan)>,
    ) -> Answer {
        let details: Vec<(&str, Value)> = first.details.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let mut answer = self.refuse(&first.code, first.message.clone(), details);
        if let Some(hint) = &first.repair_hint {
            answer.record.insert("repair_hint".into(), json!(hint));
        }
        if first.line == 0 {
            return answer;
        }
        answer.record.insert("line".into(), json!(first.line));
        answer.record.insert("column".into(), json!(first.column));
        let Some(program) = program.map(|p| &self.programs[p]) else { return answer };
        let file = match &first.file {
            Some(name) => program.sources.files.iter().position(|s| &s.name == name),
            None => Some(reply.map_or(0, |r| r.0)),
        };
        let Some(file) = file else { return answer };
        if program.sources.files.len() > 1 {
            answer.record.insert("file".into(), json!(program.sources.files[file].name));
        }
        let text: &str = match reply {
            Some((reply_file, candidate, _)) if reply_file == file => candidate,
            _ => &program.sources.files[file].text,
        };
        if let Some((reply_file, candidate, span)) = reply
            && reply_file == file
        {
            let offset = offset_of(candidate, first.line, first.column);
            let inner_start = span.start + span.prefix;
            let inner_end = span.start + span.replacement_len - span.prefix;
            if offset >= inner_start && offset <= inner_end && inner_end > inner_start {
                let reply_text = &candidate[inner_start..inner_end];
                let (line, column, source_line) = line_column(reply_text, (offset - inner_start).min(reply_text.len()));
                answer.record.insert("line".into(), json!(line));
                answer.record.insert("column".into(), json!(column));
                answer.record.insert("in".into(), json!("reply"));
                answer.record.insert("source_line".into(), json!(source_line));
                return answer;
            }
        }
        let line = text.lines().nth(first.line as usize - 1).unwrap_or("");
        answer.record.insert("source_line".into(), json!(line.chars().take(500).collect::<String>()));
        answer
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

/// A function's emitted code up to renaming: its MIR without names, source anchors or the
/// guarded expressions' ids (what `preserve: identical` compares).
fn emitted_code(workspace: &Workspace, item: Item) -> Option<cairn_mir::Function> {
    let mut function = cairn_mir::fn_mir(workspace.db(), item).as_ref().ok()?.as_ref().clone();
    for local in &mut function.locals {
        local.name = None;
    }
    for block in &mut function.blocks {
        block.anchors.iter_mut().for_each(|a| *a = None);
        block.term_anchor = None;
        for inst in &mut block.insts {
            if let cairn_mir::Inst::Guard(guard) = inst {
                guard.at = None;
            }
        }
    }
    Some(function)
}

/// Where a reply sits in a candidate: its start, its length as spliced, and the wrapping
/// parenthesis of an expression reply.
#[derive(Debug, Clone, Copy)]
struct ReplySpan {
    start: usize,
    replacement_len: usize,
    prefix: usize,
}

/// The implementation hash (protocol §2.2): the build identity plus the embedded sources.
pub fn implementation_hash() -> String {
    let mut text = profile();
    for module in cairn_hir::library::MODULES {
        text.push_str(module.file);
        text.push('\u{0}');
        text.push_str(module.text);
        text.push('\u{0}');
    }
    sha256_hex(text.as_bytes())
}

/// The key of a program in the host's cache: the digest of its combined source (which names
/// the files of a project), the kind of program, and the files' names.
fn program_key(sources: &Sources, source_sha: &str) -> String {
    let mut key = format!("{source_sha}:{}", if sources.project { "project" } else { "file" });
    for file in &sources.files {
        key.push(':');
        key.push_str(&file.name);
    }
    key
}

/// Puts a refusal record's keys in the order tools.md §1.4 and protocol §4 show them: the
/// header, then the rule's details, then where it is, then how to fix it. Details keep their
/// own order (the sort is stable).
fn ordered(record: Map<String, Value>) -> Map<String, Value> {
    let rank = |key: &str| match key {
        "protocol" => 0,
        "status" => 1,
        "code" => 2,
        "message" => 3,
        "line" => 4,
        "column" => 5,
        "trust" => 6,
        "file" | "module" => 8,
        "in" => 9,
        "source_line" => 10,
        "card" => 11,
        "repair_hint" => 12,
        "automatic_edit" => 13,
        "acceptance_boundary" => 14,
        _ => 7,
    };
    let mut entries: Vec<(String, Value)> = record.into_iter().collect();
    entries.sort_by_key(|(k, _)| rank(k));
    entries.into_iter().collect()
}

/// The index of a site written `x<n>`: decimal digits, without a leading zero (so `x01` names
/// no site).
fn site_index(site: &str) -> Option<usize> {
    let digits = site.strip_prefix('x')?;
    let canonical =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    if canonical { digits.parse().ok() } else { None }
}

/// The byte range from the first to the end of the last token that is not a comment or spacing.
fn non_trivia_span(text: &str) -> Option<(usize, usize)> {
    let mut at = 0usize;
    let mut span: Option<(usize, usize)> = None;
    for token in cairn_syntax::lexer::lex(text).tokens {
        let len = usize::from(token.len);
        if !token.kind.is_trivia() {
            span = Some((span.map_or(at, |s| s.0), at + len));
        }
        at += len;
    }
    span
}

fn sites_object(sites: Vec<(&'static str, u32)>) -> Map<String, Value> {
    sites.into_iter().map(|(k, n)| (k.to_string(), json!(n))).collect()
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
    let signature = cairn_hir::signature::fn_signature(workspace.db(), item);
    let param = |name: &str| signature.params.iter().find(|p| &*p.name == name).map(|p| p.ty.clone());
    use cairn_hir::types::{Mode, Ty};
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

/// The one function `name` names: its full name, or a module-local name only one module
/// declares. `Err` holds how many functions the name matched (0, or 2 and more).
fn resolve_function(workspace: &Workspace, name: &str) -> Result<Item, usize> {
    if let Some(item) = workspace.function_named(name) {
        return Ok(item);
    }
    let mut found = Vec::new();
    for file in workspace.files() {
        for entry in &file.items {
            if entry.key.kind == cairn_hir::ItemKind::Fn && *entry.key.name == *name {
                found.push(entry.item);
            }
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        _ => Err(found.len()),
    }
}

/// The names of the functions that call `item`, sorted (tests are not functions an agent
/// edits, so they are left out).
fn callers_of(workspace: &Workspace, item: Item) -> Vec<String> {
    let mut out: Vec<String> = workspace
        .callers(item)
        .into_iter()
        .filter(|c| *c != item && workspace.entry_of(*c).is_some_and(|(_, e)| e.key.kind == cairn_hir::ItemKind::Fn))
        .map(|c| workspace.full_name(c).to_string())
        .collect();
    out.sort();
    out
}

/// Every own function connected to `item` through calls, either way (the call graph of the
/// last check's rows).
fn component_of(workspace: &Workspace, item: Item) -> Vec<String> {
    let Some(rows) = workspace.last_rows() else { return vec![workspace.full_name(item).to_string()] };
    let own = |i: Item| {
        workspace
            .entry_of(i)
            .is_some_and(|(file, e)| !workspace.files()[file].library && e.key.kind == cairn_hir::ItemKind::Fn)
    };
    let mut seen: std::collections::HashSet<Item> = std::collections::HashSet::new();
    let mut stack = vec![item];
    seen.insert(item);
    while let Some(current) = stack.pop() {
        for next in rows.callees_of(current).into_iter().chain(rows.callers_of(current)) {
            if own(next) && seen.insert(next) {
                stack.push(next);
            }
        }
    }
    let mut names: Vec<String> = seen.into_iter().map(|i| workspace.full_name(i).to_string()).collect();
    names.sort();
    names
}

/// A function's source as written (its declaration text, without the comment above it).
fn source_of(workspace: &Workspace, item: Item) -> String {
    let node = item.syntax(workspace.db()).syntax_node();
    let text = node.text().to_string();
    let skip = significant_start(&node);
    text[skip..].trim_end().to_string()
}

/// The first line of the comment above a function (what a focused packet shows as `comment`).
fn first_comment_line(workspace: &Workspace, item: Item) -> String {
    let Some((file, entry)) = workspace.entry_of(item) else { return String::new() };
    let text = &workspace.files()[file].text;
    let start = usize::from(entry.start) + significant_start(&item.syntax(workspace.db()).syntax_node());
    cairn_syntax::comment_lines_above(text, start).first().map(|line| line.to_string()).unwrap_or_default()
}

/// Where a declaration's own text starts inside its node (past the comment attached to it).
fn significant_start(node: &cairn_syntax::SyntaxNode) -> usize {
    cairn_syntax::first_significant_token(node).map_or(0, |t| usize::from(t.text_range().start()))
}

/// How many of the program's types `name` names (exactly, or by a module-local name).
fn type_matches(workspace: &Workspace, name: &str) -> usize {
    let exact = workspace
        .files()
        .iter()
        .flat_map(|f| &f.items)
        .filter(|e| matches!(e.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum))
        .filter(|e| workspace.full_name(e.item).as_ref() == name)
        .count();
    if exact > 0 {
        return exact;
    }
    workspace
        .files()
        .iter()
        .flat_map(|f| &f.items)
        .filter(|e| {
            matches!(e.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum) && *e.key.name == *name
        })
        .count()
}

/// The declaration text of a type or constant named `name`.
fn type_declaration(workspace: &Workspace, name: &str) -> Option<String> {
    for file in workspace.files() {
        for entry in &file.items {
            if matches!(entry.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum)
                && (*entry.key.name == *name || workspace.full_name(entry.item).as_ref() == name)
            {
                return cairn_hir::render::declaration_text(workspace.db(), entry.item);
            }
        }
    }
    None
}

/// The card signals beyond tokens (protocol §14.2): `views` when a shown function has a borrow
/// parameter; `records` when a shown type is a record or a tag-only enum; `sums` when one is a sum;
/// `lends` (focused scope only) when one lends a part. `types` holds one declaration per line (for a
/// component packet: every type of the program).
fn signals(texts: &[&str], types: &str, focused: bool) -> Signals {
    let borrow_parameter = texts.iter().any(|text| {
        let tokens: Vec<String> = tokens(text, 0).into_iter().filter(|t| !t.2.is_trivia()).map(|t| t.3).collect();
        tokens.windows(2).any(|w| (w[0] == "ro" || w[0] == "rw") && w[1] == "<")
    });
    let declarations: Vec<&str> = types.lines().map(str::trim_start).collect();
    let enums = declarations.iter().filter(|d| d.starts_with("enum ") || d.starts_with("pub enum "));
    let sum_type = enums.clone().any(|d| d.contains('('));
    let record_type = declarations.iter().any(|d| d.starts_with("struct ") || d.starts_with("pub struct "))
        || enums.clone().any(|d| !d.contains('('));
    let lending_type = focused && declarations.iter().any(|d| d.contains(" lends "));
    Signals { borrow_parameter, record_type, sum_type, lending_type }
}

/// The declarations of the program's types that the texts mention by name.
fn types_mentioned(workspace: &Workspace, texts: &[&str]) -> String {
    let mut words: BTreeSet<String> = BTreeSet::new();
    for text in texts {
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            words.insert(word.to_string());
            if let Some(last) = word.rsplit('.').next() {
                words.insert(last.to_string());
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if matches!(entry.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum)
                && words.contains(&*entry.key.name)
                && let Some(text) = cairn_hir::render::declaration_text(workspace.db(), entry.item)
            {
                out.push(text);
            }
        }
    }
    out.join("\n")
}

fn all_types(workspace: &Workspace) -> String {
    let mut out: Vec<String> = Vec::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if matches!(entry.key.kind, cairn_hir::ItemKind::Struct | cairn_hir::ItemKind::Enum)
                && let Some(text) = cairn_hir::render::declaration_text(workspace.db(), entry.item)
            {
                out.push(text);
            }
        }
    }
    out.join("\n")
}

/// Every other own function, by module, named as its module writes it.
fn not_shown(workspace: &Workspace, visible: &BTreeSet<String>) -> Map<String, Value> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if entry.key.kind == cairn_hir::ItemKind::Fn {
                let full = workspace.full_name(entry.item);
                if !visible.contains(full.as_ref()) {
                    out.entry(entry.key.module.to_string()).or_default().push(entry.key.name.to_string());
                }
            }
        }
    }
    out.into_iter()
        .map(|(module, mut names)| {
            names.sort();
            (module, json!(names))
        })
        .collect()
}

fn function_count(workspace: &Workspace) -> usize {
    workspace.files().iter().map(|f| f.items.iter().filter(|e| e.key.kind == cairn_hir::ItemKind::Fn).count()).sum()
}

/// Another function whose row moved with an edit.
struct Moved {
    module: String,
    local: String,
    name: String,
    signature: String,
    row: Vec<String>,
    gained: Vec<String>,
}

/// The other own functions whose rows differ between two checks (none when the rows are shared).
fn moved_rows(
    workspace: &Workspace,
    before: Option<&cairn_hir::effects::Rows>,
    after: Option<&cairn_hir::effects::Rows>,
    target: Item,
) -> Vec<Moved> {
    let (Some(before), Some(after)) = (before, after) else { return Vec::new() };
    if std::ptr::eq(before, after) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for file in workspace.files().iter().filter(|f| !f.library) {
        for entry in &file.items {
            if entry.key.kind != cairn_hir::ItemKind::Fn || entry.item == target {
                continue;
            }
            let old = before.row(entry.item);
            let new = after.row(entry.item);
            if old == new {
                continue;
            }
            let new_row: Vec<String> = new.map(|r| r.iter().map(|e| e.to_string()).collect()).unwrap_or_default();
            let gained: Vec<String> = new_row
                .iter()
                .filter(|e| old.is_none_or(|o| !o.iter().any(|x| x.as_ref() == e.as_str())))
                .cloned()
                .collect();
            out.push(Moved {
                module: entry.key.module.to_string(),
                local: entry.key.name.to_string(),
                name: workspace.full_name(entry.item).to_string(),
                signature: cairn_hir::render::signature_text(workspace.db(), entry.item, true),
                row: new_row,
                gained,
            });
        }
    }
    out
}

fn effects_hint(added: &[&String]) -> String {
    let parts: Vec<String> = added.iter().map(|e| cairn_diagnostics::hints::effect_construct(e)).collect();
    format!("{}; the ceiling is the host's, so change the code rather than the ceiling.", parts.join("; "))
}

/// The expression sites of a body: every expression node, in source order (by start, then end).
fn expression_sites(body: &cairn_syntax::SyntaxNode, start: TextSize) -> Vec<TextRange> {
    let mut sites: Vec<TextRange> = body
        .descendants()
        .filter(|n| cairn_syntax::ast::Expr::can_cast(n.kind()))
        .map(|n| n.text_range() + start)
        .collect();
    sites.sort_by_key(|r| (r.start(), r.end()));
    sites.dedup();
    sites
}

/// Every token outside `[start, end)` of `original` lexes the same in `candidate`, where the
/// replacement ends at `new_end`: checked on the lines the span touches.
fn tokens_preserved(original: &str, candidate: &str, start: usize, end: usize, new_end: usize) -> bool {
    let line_start = original[..start].rfind('\n').map_or(0, |i| i + 1);
    let old_line_end = original[end..].find('\n').map_or(original.len(), |i| end + i);
    let new_line_end = candidate[new_end..].find('\n').map_or(candidate.len(), |i| new_end + i);
    let old_tokens = tokens(&original[line_start..old_line_end], line_start);
    let new_tokens = tokens(&candidate[line_start..new_line_end], line_start);
    // Spacing is not compared: the splice moves no byte outside the span, so only the lexing of
    // what touches it can change (a comment or a string the reply opens), and spacing merged
    // across the span's edges is not a change of any token.
    let significant = |tokens: Vec<(usize, usize, SyntaxKind, String)>| -> Vec<(usize, usize, SyntaxKind, String)> {
        tokens.into_iter().filter(|t| t.2 != SyntaxKind::WHITESPACE).collect()
    };
    let (old_tokens, new_tokens) = (significant(old_tokens), significant(new_tokens));
    let outside = |tokens: &[(usize, usize, SyntaxKind, String)], lo: usize, hi: usize| -> Vec<(SyntaxKind, String)> {
        tokens.iter().filter(|(s, e, _, _)| *e <= lo || *s >= hi).map(|(_, _, k, t)| (*k, t.clone())).collect()
    };
    // No token may straddle the span's edges in the candidate.
    let straddles = new_tokens.iter().any(|(s, e, _, _)| (*s < start && *e > start) || (*s < new_end && *e > new_end));
    !straddles && outside(&old_tokens, start, end) == outside(&new_tokens, start, new_end)
}

fn tokens(text: &str, base: usize) -> Vec<(usize, usize, SyntaxKind, String)> {
    let lexed = cairn_syntax::lexer::lex(text);
    let mut out = Vec::new();
    let mut at = 0usize;
    for token in lexed.tokens {
        let len = usize::from(token.len);
        out.push((base + at, base + at + len, token.kind, text[at..at + len].to_string()));
        at += len;
    }
    out
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
