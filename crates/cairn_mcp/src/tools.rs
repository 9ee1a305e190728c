//! The tools of the MCP server (protocol §16.2), as plain functions over one [`Server`]:
//! arguments in, `(record, isError)` out. The plan and implementation tools live in `hosts.rs`. No transport here — `server.rs` puts this behind
//! rmcp — so tests drive the tools directly.
//!
//! One [`EditHost`] lives for the whole process: every tool reads its compiles (a program is
//! compiled once; an edit re-checks one body), and cards and terms reach the agent once. Path
//! sessions remember where every file and the manifest came from (the host keeps their pinned
//! text, shared by all sessions of one program); an admitted edit is
//! written back through the program's journal (`cairn_vfs::journal`) only if nothing changed on
//! disk since, and a session writes at most once (protocol §16.4).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use cairn_agent::edit::{EditHost, OpenRequest, SourceText, Sources};
use cairn_vfs::journal::Recorded;
use cairn_vfs::journal::ledger::Intent;

use crate::durable::{Durable, OpenArgs, Written, request_key};
use crate::writeback::{Disk, PinnedFile, WriteFailure, changed_files, write_back};
use serde::Serialize;
use serde_json::{Map, Value};

/// One tool of protocol §16.2: its name, its argument keys, and whether this server offers it.
pub struct ToolEntry {
    pub name: &'static str,
    pub keys: &'static [&'static str],
    /// Listed by `tools/list` and answered; a tool not offered is answered with a refusal.
    pub offered: bool,
}

/// The nine tools in protocol order (the order `tools/list` keeps for those offered).
pub const TOOLS: &[ToolEntry] = &[
    ToolEntry { name: "check", keys: &["path", "source"], offered: true },
    ToolEntry { name: "edit_open", keys: &["path", "source", "symbol", "scope", "site", "preserve"], offered: true },
    ToolEntry { name: "edit_request", keys: &["request"], offered: true },
    ToolEntry { name: "plan_open", keys: &["path", "source", "symbol", "sizes"], offered: true },
    ToolEntry { name: "plan_reply", keys: &["reply"], offered: true },
    ToolEntry {
        name: "implementation_open",
        keys: &["path", "source", "reference", "policy", "emulate"],
        offered: true,
    },
    ToolEntry { name: "implementation_submit", keys: &["request"], offered: true },
    ToolEntry { name: "state", keys: &["path", "source", "symbol", "since", "whole"], offered: true },
    ToolEntry {
        name: "find",
        keys: &["path", "source", "words", "takes", "returns", "effects", "limit"],
        offered: true,
    },
];

/// The tool named `name`, offered or not.
pub fn tool_named(name: &str) -> Option<&'static ToolEntry> {
    TOOLS.iter().find(|tool| tool.name == name)
}

/// The message for a tool name that is none of the nine: it lists the tools offered.
pub fn unknown_tool(name: &str) -> String {
    let names: Vec<&str> = TOOLS.iter().filter(|tool| tool.offered).map(|tool| tool.name).collect();
    format!("Unknown tool {name:?}; the tools are {}.", names.join(", "))
}

/// The answer of one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub record: Map<String, Value>,
    pub is_error: bool,
}

impl ToolResult {
    fn ok(record: Map<String, Value>) -> ToolResult {
        ToolResult { record, is_error: false }
    }

    pub(crate) fn error(record: Map<String, Value>) -> ToolResult {
        ToolResult { record, is_error: true }
    }
}

/// A program read for a tool: its sources, and for a path, where they came from.
pub(crate) struct Loaded {
    pub(crate) sources: Sources,
    pub(crate) disk: Option<Disk>,
}

/// A session opened on a path: what its checkpoint keeps (`durable.rs`), and what it pinned.
pub(crate) struct PathSession {
    /// The session's identity (what the ledger's keys digest).
    pub(crate) id: String,
    pub(crate) open: OpenArgs,
    /// The program's directory, and the SHA-256 of each pinned file and of the manifest.
    pub(crate) root: String,
    pub(crate) pinned: Vec<(String, String)>,
    pub(crate) manifest_sha256: Option<String>,
    /// What it pinned; `None` for a session restored spent or escalated, which the host no
    /// longer holds.
    pub(crate) disk: Option<Disk>,
    /// The `symbols` of each expansion, in order.
    pub(crate) expanded: Vec<Value>,
    /// Its write, once it wrote.
    pub(crate) written: Option<Written>,
    /// The files of a write a crash left neither done nor undone.
    pub(crate) escalated: Option<Vec<String>>,
}

/// The journals a call wrote, to tidy after its answer (`Journal::tidy`: the syncs the answer
/// did not wait for, then the oldest entries dropped).
#[must_use = "a journal left untidy keeps growing and its last write is not yet synced"]
pub struct Tidy(std::collections::BTreeSet<PathBuf>);

impl Tidy {
    pub fn run(self) {
        for root in self.0 {
            if let Err(error) = cairn_vfs::journal::Journal::new(&root).tidy() {
                eprintln!("cairn mcp: cannot tidy the journal of {}: {error}", root.display());
            }
        }
    }
}

/// The server's state across requests.
pub struct Server {
    /// The directory the server started in; `path` arguments resolve inside it.
    start: PathBuf,
    pub(crate) host: EditHost,
    pub(crate) sessions: HashMap<String, PathSession>,
    pub(crate) durable: Durable,
    /// The newest state digest sent per (path, symbol), for implicit deltas.
    last_state: HashMap<(String, String), String>,
    /// What builds and runs a validation's harness (`implement.rs`); `None`: submissions cannot
    /// be validated here, and are refused `E-VALIDATION` saying so.
    pub(crate) runner: Option<Box<dyn cairn_agent::validate::Runner + Send>>,
    /// Per implementation session on a project, its regressions file.
    pub(crate) regressions: HashMap<String, PathBuf>,
    /// Per plan or implementation session on a path (by handle or session digest): what it
    /// pinned, and the program as it pinned it — what a validated implementation or an admitted
    /// plan is written against (`hosts.rs`).
    pub(crate) pinned: HashMap<String, (crate::writeback::Disk, cairn_agent::edit::Sources)>,
    /// Per plan or implementation session on a path, what its checkpoint keeps (`durable.rs`).
    pub(crate) host_sessions: HashMap<String, crate::durable::SavedHost>,
    /// The programs written since the last `settle`, whose journals it tidies.
    pub(crate) untidy: std::collections::BTreeSet<PathBuf>,
    /// A checkpoint of the session table left for `settle` (after an edit session's write).
    checkpoint_after: bool,
}

impl Server {
    /// A server whose paths resolve inside `start`. Adopts the session tables that servers
    /// started there left behind, recovering the programs they wrote to (`durable.rs`); any
    /// other write-back a crash left pending is finished when its program is next written.
    pub fn new(start: &Path) -> Server {
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        let durable = Durable::start(&start);
        let adopted = !durable.dormant.is_empty();
        let mut server = Server {
            start,
            host: EditHost::new(),
            sessions: HashMap::new(),
            durable,
            last_state: HashMap::new(),
            runner: None,
            regressions: HashMap::new(),
            pinned: HashMap::new(),
            host_sessions: HashMap::new(),
            untidy: Default::default(),
            checkpoint_after: false,
        };
        if adopted {
            server.checkpoint(true);
        }
        server
    }

    /// Work a call left for after its answer: moving a compile forward to a written edit, and
    /// the session table's checkpoint after an edit session's write. What
    /// it returns, the tidying of the journals written ([`Tidy::run`]), needs none of the
    /// server's state: run it after releasing the server, so the next call does not wait for
    /// its syncs.
    pub fn settle(&mut self) -> Tidy {
        // The checkpoint first: it reads nothing the compile's move changes, and a kill between
        // the answer and it is the window the ledger covers (kept short).
        if std::mem::take(&mut self.checkpoint_after) {
            self.checkpoint(false);
        }
        self.host.settle();
        Tidy(std::mem::take(&mut self.untidy))
    }

    /// Calls a tool. `Err` is a JSON-RPC error (unknown tool or arguments not an object):
    /// `(code, message)`.
    pub fn call(&mut self, name: &str, arguments: &Value) -> Result<ToolResult, (i64, String)> {
        let Some(ToolEntry { keys, .. }) = tool_named(name) else {
            return Err((-32602, unknown_tool(name)));
        };
        let arguments = match arguments {
            Value::Null => Map::new(),
            Value::Object(map) => map.clone(),
            _ => return Err((-32602, "arguments must be an object.".into())),
        };
        let unknown: Vec<&str> = arguments.keys().map(String::as_str).filter(|k| !keys.contains(k)).collect();
        if !unknown.is_empty() {
            return Ok(self.request_refusal(
                format!("{name} takes no argument {}; its arguments are {}.", unknown.join(", "), keys.join(", ")),
                vec![("fields", Value::from(unknown))],
            ));
        }
        Ok(match name {
            "check" => self.check(&arguments),
            "edit_open" => self.edit_open(&arguments),
            "edit_request" => self.edit_request(&arguments),
            "state" => self.state(&arguments),
            "find" => self.find(&arguments),
            "plan_open" => self.plan_open(&arguments),
            "plan_reply" => self.plan_reply(&arguments),
            "implementation_open" => self.implementation_open(&arguments),
            "implementation_submit" => self.implementation_submit(&arguments),
            other => Err((-32602, unknown_tool(other)))?,
        })
    }

    pub(crate) fn request_refusal(&self, message: impl Into<String>, details: Vec<(&str, Value)>) -> ToolResult {
        ToolResult::error(self.host.refusal("E-REQUEST", message, details))
    }

    fn environment(&self, message: &str) -> ToolResult {
        ToolResult::error(to_map(&EnvironmentRecord {
            status: "unknown",
            code: "E-PROJECT-OR-ENVIRONMENT",
            message,
            card: "commands",
        }))
    }

    // ----- arguments -------------------------------------------------------------------------

    /// A non-empty string argument that must be given (`what` says what it names).
    pub(crate) fn required_text(
        &self,
        arguments: &Map<String, Value>,
        key: &str,
        what: &str,
    ) -> Result<String, ToolResult> {
        self.text_argument(arguments, key)?
            .ok_or_else(|| self.request_refusal(format!("{key} is required: {what}."), vec![]))
    }

    /// A non-empty string argument, if given.
    pub(crate) fn text_argument(
        &self,
        arguments: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<String>, ToolResult> {
        match arguments.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if !text.is_empty() => Ok(Some(text.clone())),
            Some(_) => Err(self.request_refusal(format!("{key} must be a non-empty string."), vec![])),
        }
    }

    /// The program a tool names: exactly one of `path` and `source` (at most one when
    /// `optional`).
    pub(crate) fn program(
        &mut self,
        arguments: &Map<String, Value>,
        optional: bool,
    ) -> Result<Option<Loaded>, ToolResult> {
        let path = self.text_argument(arguments, "path")?;
        let source = self.text_argument(arguments, "source")?;
        match (path, source) {
            (Some(_), Some(_)) => Err(self.request_refusal("Give the program as path or as source, not both.", vec![])),
            (None, None) if optional => Ok(None),
            (None, None) => Err(self.request_refusal(
                "Give the program as path (a file, project directory or manifest) or as source.",
                vec![],
            )),
            (None, Some(text)) if text.len() > cairn_vfs::SOURCE_LIMIT => Err(ToolResult::error(self.host.refusal(
                "E-SOURCE-LIMIT",
                format!(
                    "source holds {} bytes; a program's sources hold at most {} bytes together. Check a smaller program.",
                    text.len(),
                    cairn_vfs::SOURCE_LIMIT
                ),
                vec![],
            ))),
            (None, Some(text)) => Ok(Some(Loaded { sources: Sources::single("source.cairn", text), disk: None })),
            (Some(path), None) => self.load_path(&path).map(Some),
        }
    }

    pub(crate) fn load_path(&mut self, argument: &str) -> Result<Loaded, ToolResult> {
        let joined = self.start.join(argument);
        let resolved =
            joined.canonicalize().map_err(|e| self.environment(&format!("Cannot read `{argument}`: {e}.")))?;
        if !resolved.starts_with(&self.start) {
            return Err(self.request_refusal(
                format!("path must resolve inside the directory the server started in ({}).", self.start.display()),
                vec![],
            ));
        }
        // A write-back a crash left pending is read as recovery will leave it; only a write
        // (through the journal) recovers it, so this read-only step never writes.
        let program = cairn_vfs::load(&resolved).map_err(|e| self.environment(&e.message))?;
        let manifest = match &program.manifest_path {
            Some(path) => Some((
                path.clone(),
                cairn_vfs::read_user_file(path, cairn_vfs::MANIFEST_LIMIT as u64)
                    .map_err(|e| self.environment(&format!("Cannot read the manifest: {e}.")))?,
            )),
            None => None,
        };
        let mut files = Vec::new();
        for file in &program.files {
            let relative = file
                .path
                .strip_prefix(&program.root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| file.name.clone());
            files.push(PinnedFile {
                name: file.name.clone(),
                relative,
                had_bom: file.had_bom,
                vendored: file.project != program.name,
            });
        }
        let sources = Sources {
            files: program.files.iter().map(|f| SourceText { name: f.name.clone(), text: f.text.clone() }).collect(),
            project: !program.is_single_file(),
        };
        let identity = program.manifest_path.clone().unwrap_or(resolved).to_string_lossy().to_string();
        Ok(Loaded { sources, disk: Some(Disk { identity, root: program.root.clone(), manifest, files }) })
    }

    /// A `request`/`reply` argument: an object, or JSON text parsed strictly.
    pub(crate) fn request_argument(&self, arguments: &Map<String, Value>, key: &str) -> Result<Value, ToolResult> {
        match arguments.get(key) {
            None => Err(self.request_refusal(format!("{key} is required."), vec![])),
            Some(Value::Object(map)) => Ok(Value::Object(map.clone())),
            Some(Value::String(text)) => match cairn_agent::strict::parse(text) {
                Ok(value @ Value::Object(_)) => Ok(value),
                Ok(_) => Err(self.request_refusal(format!("{key} must be a JSON object."), vec![])),
                Err(why) => Err(self.request_refusal(format!("{key} is not valid JSON: {why}."), vec![])),
            },
            Some(_) => Err(self.request_refusal(format!("{key} must be an object or JSON text."), vec![])),
        }
    }

    // ----- the tools -------------------------------------------------------------------------

    fn check(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let loaded = match self.program(arguments, false) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => unreachable!("a required program is present"),
            Err(refusal) => return refusal,
        };
        let files = loaded.sources.files.clone();
        let (mut record, refused, _) = self.host.check(loaded.sources);
        if refused {
            // A model-facing record (tools.md §1.4): the offending line, and the said-once
            // fields at the top level only.
            let line_of = |entry: &Map<String, Value>| -> Option<String> {
                let line = entry.get("line")?.as_u64()? as usize;
                let file = match entry.get("file").and_then(Value::as_str) {
                    Some(name) => files.iter().find(|f| f.name == name)?,
                    None => files.first()?,
                };
                let text = file.text.lines().nth(line.checked_sub(1)?)?;
                Some(text.chars().take(500).collect())
            };
            let source_line = line_of(&record);
            if let Some(Value::Array(further)) = record.get_mut("further") {
                for entry in further.iter_mut() {
                    if let Value::Object(diagnostic) = entry
                        && let Some(line) = line_of(diagnostic)
                    {
                        let diagnostic = std::mem::take(diagnostic);
                        *entry = Value::Object(to_map(&WithLine { diagnostic: &diagnostic, source_line: line }));
                    }
                }
            }
            record = to_map(&Taught {
                refusal: &record,
                source_line,
                automatic_edit: false,
                acceptance_boundary: cairn_agent::edit::ACCEPTANCE_BOUNDARY,
            });
        }
        ToolResult { record, is_error: refused }
    }

    fn edit_open(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let symbol = match self.required_text(arguments, "symbol", "the function to edit, qualified with its module") {
            Ok(symbol) => symbol,
            Err(refusal) => return refusal,
        };
        let scope = match arguments.get("scope") {
            None => None,
            Some(Value::String(scope)) => Some(scope.clone()),
            Some(_) => return self.request_refusal("scope is focused or component.", vec![]),
        };
        let site = match self.text_argument(arguments, "site") {
            Ok(site) => site,
            Err(refusal) => return refusal,
        };
        let contract = match arguments.get("preserve") {
            None | Some(Value::Null) => None,
            Some(preserve) => Some(Value::Object(to_map(&Contract { preserve }))),
        };
        let loaded = match self.program(arguments, false) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => unreachable!("a required program is present"),
            Err(refusal) => return refusal,
        };
        let path = arguments.get("path").and_then(Value::as_str).map(str::to_string);
        let open = OpenArgs {
            path: path.unwrap_or_default(),
            symbol: symbol.clone(),
            scope: scope.clone(),
            site: site.clone(),
            contract: contract.clone(),
        };
        let handle = self.durable.next_handle(loaded.disk.is_some());
        let request = OpenRequest { symbol, scope, contract, include: Vec::new(), site, handle: Some(handle.clone()) };
        let digests = loaded.disk.as_ref().map(|disk| disk.digests(&loaded.sources));
        let answer = self.host.open(loaded.sources, request);
        if answer.refused {
            return ToolResult::error(answer.record);
        }
        let mut record = answer.record;
        if let (Some(disk), Some((pinned, manifest_sha256))) = (loaded.disk, digests) {
            let write_back = self.host.session_file(&handle).unwrap_or_default();
            // The file an admitted change will be written to, after the packet's own keys (the
            // packet is not copied again: at 86k lines it names 15,000 functions).
            record.insert("write_back".into(), Value::String(write_back));
            let session = PathSession {
                id: cairn_vfs::sessions::fresh_id(),
                open,
                root: disk.root.to_string_lossy().to_string(),
                pinned,
                manifest_sha256,
                disk: Some(disk),
                expanded: Vec::new(),
                written: None,
                escalated: None,
            };
            self.sessions.insert(handle, session);
            let host = &self.host;
            self.sessions.retain(|handle, session| session.disk.is_none() || host.has_session(handle));
            self.forget_old_spent();
            self.checkpoint(false);
        }
        ToolResult::ok(record)
    }

    fn edit_request(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let request = match self.request_argument(arguments, "request") {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let kind = request.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let writing = matches!(kind.as_str(), "body" | "expr");
        let handle = request.get("handle").and_then(Value::as_str).unwrap_or_default().to_string();
        // A handle of the server this one replaced comes back when it is first named.
        if !self.sessions.contains_key(&handle)
            && let Err(refusal) = self.restore(&handle)
        {
            return refusal;
        }
        if let Some(session) = self.sessions.get(&handle)
            && let Some(refusal) = self.judge_durable(session, &request, writing)
        {
            return refusal;
        }
        // A writing request of a path session: the files must still be what the session pinned,
        // and the session must not have written already (protocol §16.4 rule 1). The request's
        // own shape is judged first, by the host, so a malformed request is E-REQUEST here too.
        if writing
            && well_formed(&request)
            && let Some(session) = self.sessions.get(&handle)
            && let Some(disk) = &session.disk
        {
            let pinned = self.host.session_sources(&handle);
            let changed = changed_files(disk, pinned);
            if !changed.is_empty() {
                return ToolResult::error(self.host.refusal(
                    "E-SESSION",
                    "Files changed on disk since the session opened; open a new session on the program as it is now.",
                    vec![("files", Value::from(changed))],
                ));
            }
        }
        let answer = match &self.runner {
            Some(runner) => self.host.request_with(&request, runner.as_ref()),
            None => self.host.request(&request),
        };
        if answer.refused {
            return ToolResult::error(answer.record);
        }
        let mut record = answer.record;
        if kind == "expand"
            && let Some(session) = self.sessions.get_mut(&handle)
        {
            session.expanded.push(request.get("symbols").cloned().unwrap_or(Value::Null));
            self.checkpoint(false);
        }
        if let Some(admitted) = answer.admitted
            && let Some(session) = self.sessions.get(&handle)
            && let Some(disk) = &session.disk
        {
            let key = request_key(&session.id, &request);
            let file = disk.files.get(admitted.file).map(|f| f.name.clone()).unwrap_or_default();
            let written = vec![file];
            let answer = to_map(&WithWritten { admission: &record, written: &written });
            let intent = Intent {
                key: key.clone(),
                session: session.id.clone(),
                handle: handle.clone(),
                answer: Value::Object(answer.clone()),
            };
            let relative = disk.files.get(admitted.file).map(|f| f.relative.as_str());
            let digest =
                session.pinned.iter().find(|(name, _)| Some(name.as_str()) == relative).map(|(_, d)| d.as_str());
            match write_back(disk, self.host.session_sources(&handle), &admitted, &intent, digest) {
                Ok(recorded) => {
                    self.untidy.insert(disk.root.clone());
                    record = match recorded {
                        Recorded::Written { ledger, .. } => {
                            let seen = self.durable.ledgers.entry(session.root.clone()).or_insert(0);
                            *seen = (*seen).max(ledger);
                            self.host.advance(&handle);
                            answer
                        }
                        Recorded::Earlier(Value::Object(earlier)) => earlier,
                        Recorded::Earlier(_) => answer,
                    };
                    if let Some(session) = self.sessions.get_mut(&handle) {
                        session.written = Some(Written { key, answer: record.clone() });
                        // Spent: the server answers its resend and refuses the rest; the host
                        // lets go of it (and, once the compile moved forward, of its text).
                        session.disk = None;
                    }
                    self.host.retire(&handle);
                    // After the answer (`settle`), and not synced: what became of the write is
                    // in the ledger, whose intent was synced before the file was touched, and a
                    // server restarted before this checkpoint learns it from there
                    // (docs/durability.md, "Why these syncs").
                    self.checkpoint_after = true;
                }
                Err(failure) => {
                    self.host.forget_admission(&handle);
                    return self.write_refusal(failure);
                }
            }
        }
        let is_error = record.get("status").and_then(Value::as_str) == Some("rejected");
        ToolResult { record, is_error }
    }

    /// What a path session's durable state says of a request before the host judges it: the
    /// resend of the request it wrote gets the first answer; every other request of a written
    /// (spent) session, and every request of an escalated one, is `E-SESSION`.
    fn judge_durable(&self, session: &PathSession, request: &Value, writing: bool) -> Option<ToolResult> {
        if let Some(files) = &session.escalated {
            return Some(ToolResult::error(self.host.refusal(
                "E-SESSION",
                "The server stopped while writing this session's change, and the files now hold neither the change nor what the session pinned (someone else changed them); nothing was touched. Look at the files, then open a new session.",
                vec![("files", Value::from(files.clone())), ("recovery", Value::from("escalated"))],
            )));
        }
        let written = session.written.as_ref()?;
        if writing && request_key(&session.id, request) == written.key {
            return Some(ToolResult::ok(written.answer.clone()));
        }
        let files = written.answer.get("written").cloned().unwrap_or(Value::Null);
        if writing {
            return Some(ToolResult::error(self.host.refusal(
                "E-SESSION",
                "The files already hold this session's written change; open a new session to change them again.",
                vec![("files", files)],
            )));
        }
        // Written, now or before a restart: the session is spent (protocol §2.1).
        Some(ToolResult::error(self.host.refusal(
            "E-SESSION",
            "This session's change was written; only the resend of that request is answered now. Open a new session to go on.",
            vec![("files", files)],
        )))
    }

    /// The refusal of a write-back that did not happen (nothing was written).
    pub(crate) fn write_refusal(&self, failure: WriteFailure) -> ToolResult {
        match failure {
            WriteFailure::Changed(files) => ToolResult::error(self.host.refusal(
                "E-SESSION",
                "A file changed on disk while the change was being written; nothing was written. Open a new session.",
                vec![("files", Value::from(files))],
            )),
            WriteFailure::Conflict(files) => ToolResult::error(self.host.refusal(
                "E-SESSION",
                "A file was saved while the change was being written; the save was kept and nothing of the change was written. Open a new session on the file as it is now.",
                vec![("files", Value::from(files))],
            )),
            WriteFailure::Limit(message) => ToolResult::error(self.host.refusal("E-SOURCE-LIMIT", message, vec![])),
            WriteFailure::Environment(message) => self.environment(&message),
        }
    }

    /// Keeps at most [`cairn_agent::edit::SESSION_LIMIT`] sessions restored spent (the host
    /// bounds the live ones).
    fn forget_old_spent(&mut self) {
        let mut spent: Vec<u64> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.disk.is_none())
            .map(|(h, _)| h.strip_prefix('e').and_then(|n| n.parse().ok()).unwrap_or(0))
            .collect();
        if spent.len() <= cairn_agent::edit::SESSION_LIMIT {
            return;
        }
        spent.sort_unstable();
        let cut = spent[spent.len() - cairn_agent::edit::SESSION_LIMIT];
        self.sessions.retain(|h, s| {
            s.disk.is_some() || h.strip_prefix('e').and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) >= cut
        });
    }

    fn state(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let whole = match arguments.get("whole") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return self.request_refusal("whole must be true or false.", vec![]),
        };
        let since = match arguments.get("since") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return self.request_refusal("since must be the digest of a state this server sent.", vec![]),
        };
        if whole && since.is_some() {
            return self
                .request_refusal("whole asks for the whole state; since asks for a delta: give one of them.", vec![]);
        }
        let symbol = match self.text_argument(arguments, "symbol") {
            Ok(symbol) => symbol,
            Err(refusal) => return refusal,
        };
        if symbol.is_some() && arguments.contains_key("source") {
            return self.request_refusal(
                "An investigation (symbol) needs path: its history lives beside the manifest.",
                vec![],
            );
        }
        let loaded = match self.program(arguments, false) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => unreachable!("a required program is present"),
            Err(refusal) => return refusal,
        };
        if let Some(symbol) = symbol {
            // The investigation, from the candidate history beside the program.
            let root = loaded.disk.as_ref().map(|d| d.root.join(".cairn").join("history"));
            let records = root
                .and_then(|dir| cairn_vfs::history::read(&dir).ok())
                .map(cairn_agent::history::records_of)
                .unwrap_or_default();
            let answer = self.host.investigation(loaded.sources, &symbol, &records);
            return ToolResult { record: answer.record, is_error: answer.refused };
        }
        let key = loaded.disk.as_ref().map(|d| (d.identity.clone(), String::new()));
        let with_file = loaded.sources.project;
        let state = self.host.program_state(loaded.sources, with_file);
        let typed = state.get("status").and_then(Value::as_str) == Some("typed");
        let digest = state.get("digest").and_then(Value::as_str).unwrap_or_default().to_string();
        let since =
            since.or_else(|| if whole { None } else { key.as_ref().and_then(|k| self.last_state.get(k).cloned()) });
        if let Some(key) = key {
            self.last_state.insert(key, digest);
        }
        let record = match since {
            None => state,
            Some(since) => {
                let Some(before) = self.host.sent_state(&since).cloned() else {
                    return ToolResult::error(self.host.refusal(
                        "E-SESSION",
                        "since names no state this server sent; ask with whole: true for the whole state.",
                        vec![],
                    ));
                };
                match cairn_agent::delta(&before, &state) {
                    Ok(delta) => delta,
                    Err(error) => return self.request_refusal(error.0, vec![]),
                }
            }
        };
        ToolResult { record, is_error: !typed }
    }

    fn find(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let text = |key: &str| -> Result<Option<String>, ToolResult> {
            match arguments.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(self.request_refusal(format!("{key} must be a string."), vec![])),
            }
        };
        let words = match text("words") {
            Ok(words) => words,
            Err(refusal) => return refusal,
        };
        let returns = match text("returns") {
            Ok(returns) => returns,
            Err(refusal) => return refusal,
        };
        let effects = match text("effects") {
            Ok(effects) => effects,
            Err(refusal) => return refusal,
        };
        let takes = match arguments.get("takes") {
            None => Vec::new(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                items.iter().filter_map(|t| t.as_str().map(str::to_string)).collect()
            }
            Some(_) => return self.request_refusal("takes must be a list of type strings.", vec![]),
        };
        let limit = match arguments.get("limit") {
            None => cairn_agent::find::DEFAULT_LIMIT,
            Some(value) => match value.as_i64() {
                Some(n) => match cairn_agent::find::limit_from(n) {
                    Ok(limit) => limit,
                    Err(diagnostic) => {
                        return ToolResult::error(self.host.refusal(&diagnostic.code, diagnostic.message, vec![]));
                    }
                },
                None => return self.request_refusal("limit must be an integer.", vec![]),
            },
        };
        let loaded = match self.program(arguments, true) {
            Ok(loaded) => loaded,
            Err(refusal) => return refusal,
        };
        let query = cairn_agent::find::FindQuery { words: words.into_iter().collect(), takes, returns, effects, limit };
        match cairn_agent::find::find(&query, loaded.as_ref().map(|l| &l.sources)) {
            Ok(record) => ToolResult::ok(record),
            Err(diagnostic) => {
                let details: Vec<(&str, Value)> =
                    diagnostic.details.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                ToolResult::error(self.host.refusal(&diagnostic.code, diagnostic.message.clone(), details))
            }
        }
    }
}

/// The environment record of tools.md §1.3: exactly `status`, `code`, `message` and `card`.
/// Boundary: it is `cairn_diagnostics::record::EnvironmentRecord`'s shape, restated because the
/// crate graph keeps this crate off `cairn_diagnostics` (mcp → agent, vfs).
#[derive(Serialize)]
struct EnvironmentRecord<'a> {
    status: &'static str,
    code: &'static str,
    message: &'a str,
    card: &'static str,
}

/// A host's check refusal taught for a model (tools.md §1.4): the offending line, and the
/// said-once fields at the top level only. The refusal is the host's record, copied whole (its
/// keys are the host's to choose), so it stays a map; what this server adds comes after it.
#[derive(Serialize)]
struct Taught<'a> {
    #[serde(flatten)]
    refusal: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_line: Option<String>,
    automatic_edit: bool,
    acceptance_boundary: &'static str,
}

/// One `further` refusal of a taught check, with its offending line after the host's keys.
#[derive(Serialize)]
struct WithLine<'a> {
    #[serde(flatten)]
    diagnostic: &'a Map<String, Value>,
    source_line: String,
}

/// An admission (the host's record, copied whole) with the files it was written to.
#[derive(Serialize)]
struct WithWritten<'a> {
    #[serde(flatten)]
    admission: &'a Map<String, Value>,
    written: &'a [String],
}

/// The contract an `edit_open` hands the host: what the edit must preserve, as the agent gave it.
#[derive(Serialize)]
struct Contract<'a> {
    preserve: &'a Value,
}

/// The JSON object of a record. Every record type here serializes to an object, so the empty
/// fallback is never taken.
fn to_map<T: Serialize>(record: &T) -> Map<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// True when a request's envelope is what its kind needs (so the host would judge it, not
/// refuse its shape): the writing checks come after the shape, as the host's own order has it.
fn well_formed(request: &Value) -> bool {
    let Some(map) = request.as_object() else { return false };
    let expected: BTreeSet<&str> = match map.get("kind").and_then(Value::as_str) {
        Some("body") => ["protocol", "handle", "kind", "replacement"].into_iter().collect(),
        Some("expr") => ["protocol", "handle", "kind", "site", "replacement"].into_iter().collect(),
        _ => return false,
    };
    map.keys().map(String::as_str).collect::<BTreeSet<_>>() == expected
        && map.get("protocol").and_then(Value::as_str) == Some("cairn.edit/2")
}
