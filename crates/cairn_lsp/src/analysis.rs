//! The analysis thread: it opens, edits and closes documents, keeps the programs they belong to
//! checked (the state is `world`'s), and publishes their diagnostics (computed by `diagnostics`).
//!
//! Messages arrive in order from the main loop; everything already queued is handled before
//! diagnostics are computed, so a run of changes is checked once, at its last text. A check that
//! needs the whole-program pass (the first, or after an edit outside bodies) is precomputed on a
//! clone of the database on another thread; an edit meanwhile writes to the database, which makes
//! salsa cancel that thread's queries (they unwind with `salsa::Cancelled`), and the pass starts
//! again for the new text. A check that only re-checks edited bodies runs here at once (a fraction
//! of a millisecond). Requests are answered here too, after every edit before them: never on a
//! stale text. `features` answers them from a read-only `world::Snapshot`, so a request cannot
//! change what the thread holds.
//!
//! A document on disk that a `cairn.toml` above it lists is analysed with its whole project (the
//! other files from disk unless open); any other document is a one-file program. A manifest that
//! does not load is the document's one diagnostic (`E-PROJECT-OR-ENVIRONMENT`), as for `cairn
//! check`. Every `didOpen` publishes for its document. A `workspace/didChangeWatchedFiles` naming a
//! `cairn.toml` opens again the open documents under it, so a fixed (or new, or removed) manifest
//! takes effect without reopening anything (the VS Code extension watches `**/cairn.toml`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use cairn_agent::edit::SourceText;
use cairn_hir::{CheckOutcome, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};
use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification, Request, Response};
use serde_json::{Value, json};

use crate::convert::{LineMap, path_to_uri, uri_to_path};
use crate::diagnostics::diagnostics_for;
use crate::protocol::Failure;
use crate::transport::Outgoing;
use crate::world::{Doc, Environment, Project, ProjectFile, Snapshot};

/// The analysis state.
pub struct Analysis {
    out: Sender<Outgoing>,
    pub docs: HashMap<String, Doc>,
    pub projects: Vec<Option<Project>>,
    warmed_sender: Sender<(usize, u64)>,
    warmed: Receiver<(usize, u64)>,
    /// Where the card texts and the packaged library were written for links and definitions.
    pub materialized: Option<PathBuf>,
    pub stats: std::sync::Arc<Stats>,
}

/// Counts of background precomputes, for tests and traces: started, finished, cancelled.
#[derive(Debug, Default)]
pub struct Stats {
    pub started: std::sync::atomic::AtomicUsize,
    pub finished: std::sync::atomic::AtomicUsize,
    pub cancelled: std::sync::atomic::AtomicUsize,
}

impl Analysis {
    pub fn new(out: Sender<Outgoing>) -> Analysis {
        let (warmed_sender, warmed) = crossbeam_channel::unbounded();
        Analysis {
            out,
            docs: HashMap::new(),
            projects: Vec::new(),
            warmed_sender,
            warmed,
            materialized: materialize(),
            stats: std::sync::Arc::default(),
        }
    }

    /// The read-only view a request or a round of diagnostics reads.
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { docs: &self.docs, projects: &self.projects, materialized: self.materialized.as_deref() }
    }

    /// Serves messages from `inbox` until it closes.
    pub fn run(mut self, inbox: Receiver<Message>) {
        loop {
            crossbeam_channel::select! {
                recv(inbox) -> message => {
                    let Ok(message) = message else { break };
                    self.handle(message);
                    while let Ok(message) = inbox.try_recv() {
                        self.handle(message);
                    }
                    self.refresh();
                }
                recv(self.warmed) -> done => {
                    if let Ok((project, generation)) = done {
                        self.warmed_up(project, generation);
                    }
                }
            }
        }
    }

    fn send(&self, message: Message) {
        let _ = self.out.send(Outgoing::Message(message));
    }

    /// One message: a notification changes the documents, a request is answered.
    pub fn handle(&mut self, message: Message) {
        match message {
            Message::Notification(notification) => {
                // A failing notification is dropped (protocol §17); a panic too.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.notification(notification)));
            }
            Message::Request(request) => {
                let id = request.id.clone();
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.request(request)))
                    .unwrap_or_else(|_| Err((-32603, "internal error while answering; the server goes on".into())));
                let response = match answer {
                    Ok(value) => Response::new_ok(id, value),
                    Err((code, message)) => Response::new_err(id, code, message),
                };
                self.send(Message::Response(response));
            }
            Message::Response(_) => {}
        }
    }

    fn notification(&mut self, notification: Notification) {
        let params = &notification.params;
        let uri = params.pointer("/textDocument/uri").and_then(Value::as_str).unwrap_or_default().to_string();
        match notification.method.as_str() {
            "textDocument/didOpen" => {
                // Without a URI or a text there is no document to open: dropped.
                let Some(text) = params.pointer("/textDocument/text").and_then(Value::as_str) else { return };
                if uri.is_empty() {
                    return;
                }
                let version = params.pointer("/textDocument/version").and_then(Value::as_i64).unwrap_or(0) as i32;
                self.open(&uri, text, version);
            }
            "textDocument/didChange" => {
                let version = params.pointer("/textDocument/version").and_then(Value::as_i64).unwrap_or(0) as i32;
                let changes = params.get("contentChanges").and_then(Value::as_array).cloned().unwrap_or_default();
                self.change(&uri, version, &changes);
            }
            "textDocument/didClose" => self.close(&uri),
            "workspace/didChangeWatchedFiles" => {
                // A manifest created, changed or deleted: the open documents under its directory
                // are opened again, so they take the project as the manifest now says.
                let changes = params.get("changes").and_then(Value::as_array).cloned().unwrap_or_default();
                let directories: Vec<PathBuf> = changes
                    .iter()
                    .filter_map(|c| c.get("uri").and_then(Value::as_str))
                    .filter(|u| u.ends_with("/cairn.toml"))
                    .filter_map(uri_to_path)
                    .filter_map(|p| p.parent().map(Path::to_path_buf))
                    .collect();
                if !directories.is_empty() {
                    self.reload_under(&directories);
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, request: Request) -> Result<Value, Failure> {
        let params = request.params;
        crate::protocol::check_params(&request.method, &params)?;
        if let Some(uri) = params.pointer("/textDocument/uri").and_then(Value::as_str) {
            if !self.docs.contains_key(uri) {
                // The rule (docs/decisions.md): a request about a document that is not open
                // is an error that says so.
                return Err((-32602, format!("{uri} is not open: send textDocument/didOpen first")));
            }
            self.settle(uri);
        }
        crate::features::answer(&self.snapshot(), &request.method, &params)
    }

    // ----- documents --------------------------------------------------------------------------

    fn open(&mut self, uri: &str, text: &str, version: i32) {
        if self.docs.contains_key(uri) {
            self.close(uri);
        }
        if text.len() > cairn_vfs::SOURCE_LIMIT {
            // Not analysed: the document stands as empty text, and its diagnostic says why.
            self.open(uri, "", version);
            if let Some(doc) = self.docs.get_mut(uri) {
                doc.oversized = Some(text.len());
            }
            if let Some(doc) = self.docs.get(uri)
                && let Some(project) = self.projects[doc.project].as_mut()
            {
                project.dirty = true;
            }
            return;
        }
        let path = uri_to_path(uri);
        // A project file that is already being analysed: take this text. Every `didOpen` gets
        // its diagnostics: a changed text with the check it makes due, the same text (the disk
        // text another open file already brought) at once, from the project's current check.
        if let Some((project, file)) = self.find_file(uri) {
            self.docs.insert(uri.to_string(), Doc { version, project, file, oversized: None });
            self.set_text(project, file, text.to_string());
            if let Some(p) = self.projects[project].as_ref()
                && !p.dirty
                && p.outcome.is_some()
            {
                let diagnostics = diagnostics_for(&self.snapshot(), uri);
                self.send(publish(uri, Some(version), diagnostics));
                if let Some(p) = self.projects[project].as_mut() {
                    p.published.insert(uri.to_string());
                }
            }
            return;
        }
        let index = self.projects.len();
        let project = match path.as_deref().and_then(|p| load_project(p, uri, text)) {
            Some(Ok(project)) => project,
            Some(Err(environment)) => {
                let mut project = one_file(uri, path.as_deref(), text);
                project.environment = Some(environment);
                project
            }
            None => one_file(uri, path.as_deref(), text),
        };
        let file = project.files.iter().position(|f| f.uri == uri).unwrap_or(0);
        self.projects.push(Some(project));
        // Other open documents of the same project bring their texts.
        let others: Vec<(String, usize)> = self
            .docs
            .iter()
            .filter(|(other, _)| other.as_str() != uri)
            .filter_map(|(other, _)| {
                self.projects[index].as_ref()?.files.iter().position(|f| f.uri == *other).map(|i| (other.clone(), i))
            })
            .collect();
        self.docs.insert(uri.to_string(), Doc { version, project: index, file, oversized: None });
        for (other, i) in others {
            let old = self.docs[&other].project;
            let text = self.text_of(old, self.docs[&other].file).to_string();
            if let Some(doc) = self.docs.get_mut(&other) {
                doc.project = index;
                doc.file = i;
            }
            self.set_text(index, i, text);
            self.drop_if_unused(old);
        }
        if let Some(project) = self.projects[index].as_mut() {
            project.dirty = true;
        }
    }

    fn find_file(&self, uri: &str) -> Option<(usize, usize)> {
        self.projects.iter().enumerate().find_map(|(i, p)| {
            let file = p.as_ref()?.files.iter().position(|f| f.uri == uri)?;
            Some((i, file))
        })
    }

    /// The current text of a project's file.
    pub fn text_of(&self, project: usize, file: usize) -> &str {
        self.projects[project].as_ref().map_or("", |p| p.workspace.files()[file].text())
    }

    fn set_text(&mut self, project: usize, file: usize, text: String) {
        let Some(p) = self.projects[project].as_mut() else { return };
        let old = &p.workspace.files()[file].text();
        if *old == text {
            return;
        }
        // The smallest edit with the same result, so an edit in one body stays one body's.
        let edit = TextEdit::smallest(old, &text, 0);
        p.workspace.edit_file(file, &edit);
        p.generation += 1;
        p.dirty = true;
    }

    fn change(&mut self, uri: &str, version: i32, changes: &[Value]) {
        let Some(doc) = self.docs.get_mut(uri) else { return };
        doc.version = version;
        let (project, file) = (doc.project, doc.file);
        if changes.len() > 1 && doc.oversized.is_none() {
            return self.change_many(uri, project, file, changes);
        }
        for change in changes {
            let Some(text) = change.get("text").and_then(Value::as_str) else { continue };
            let oversized = self.docs.get(uri).and_then(|d| d.oversized);
            match change.get("range") {
                None if text.len() > cairn_vfs::SOURCE_LIMIT => self.mark_oversized(uri, text.len()),
                None => {
                    if let Some(doc) = self.docs.get_mut(uri) {
                        doc.oversized = None;
                    }
                    self.set_text(project, file, text.to_string());
                }
                // Range edits of a text that is not held cannot be applied: the document waits
                // for a whole-text change (or a reopen).
                Some(_) if oversized.is_some() => {}
                Some(range) => {
                    let Some(p) = self.projects[project].as_ref() else { return };
                    let current = &p.workspace.files()[file];
                    let at = |key: &str| -> usize {
                        let line = range.pointer(&format!("/{key}/line")).and_then(Value::as_u64).unwrap_or(0) as u32;
                        let character =
                            range.pointer(&format!("/{key}/character")).and_then(Value::as_u64).unwrap_or(0) as u32;
                        crate::convert::file_offset(current, line, character)
                    };
                    let (start, end) = (at("start"), at("end"));
                    let (start, end) = (start.min(end), start.max(end));
                    let grown = current.len() - (end - start) + text.len();
                    if grown > cairn_vfs::SOURCE_LIMIT {
                        self.mark_oversized(uri, grown);
                        continue;
                    }
                    let Some(p) = self.projects[project].as_mut() else { return };
                    let edit = TextEdit {
                        delete: TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32)),
                        insert: text.to_string(),
                    };
                    p.workspace.edit_file(file, &edit);
                    p.generation += 1;
                    p.dirty = true;
                }
            }
        }
    }

    /// Several changes of one notification: applied to the text in order, then handed to the
    /// workspace as one edit (the smallest with the same result), so a notification costs one
    /// re-parse and one check however many changes it carries.
    fn change_many(&mut self, uri: &str, project: usize, file: usize, changes: &[Value]) {
        let mut text = self.text_of(project, file).to_string();
        for change in changes {
            let Some(insert) = change.get("text").and_then(Value::as_str) else { continue };
            match change.get("range") {
                None => text = insert.to_string(),
                Some(range) => {
                    let map = LineMap::new(&text);
                    let at = |key: &str| -> usize {
                        let line = range.pointer(&format!("/{key}/line")).and_then(Value::as_u64).unwrap_or(0) as u32;
                        let character =
                            range.pointer(&format!("/{key}/character")).and_then(Value::as_u64).unwrap_or(0) as u32;
                        map.offset(&text, line, character)
                    };
                    let (start, end) = (at("start"), at("end"));
                    let (start, end) = (start.min(end), start.max(end));
                    text.replace_range(start..end, insert);
                }
            }
            if text.len() > cairn_vfs::SOURCE_LIMIT {
                return self.mark_oversized(uri, text.len());
            }
        }
        self.set_text(project, file, text);
    }

    /// Stops analysing a document whose text passed the source limit.
    fn mark_oversized(&mut self, uri: &str, size: usize) {
        let Some(doc) = self.docs.get_mut(uri) else { return };
        doc.oversized = Some(size);
        let (project, file) = (doc.project, doc.file);
        self.set_text(project, file, String::new());
        if let Some(p) = self.projects[project].as_mut() {
            p.dirty = true;
        }
    }

    fn close(&mut self, uri: &str) {
        let Some(doc) = self.docs.remove(uri) else { return };
        self.send(publish(uri, None, Vec::new()));
        if let Some(p) = self.projects[doc.project].as_mut() {
            p.published.remove(uri);
        }
        // The file goes back to what is on disk (an editor closing discards unsaved text).
        let on_disk = self.projects[doc.project]
            .as_ref()
            .and_then(|p| p.files.get(doc.file))
            .and_then(|f| f.path.as_ref())
            .and_then(|path| cairn_vfs::read_user_file(path, cairn_vfs::SOURCE_LIMIT as u64).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if let Some(text) = on_disk {
            self.set_text(doc.project, doc.file, text.trim_start_matches('\u{feff}').to_string());
        }
        self.drop_if_unused(doc.project);
    }

    /// Opens again every open document under one of `directories`, with its current text.
    fn reload_under(&mut self, directories: &[PathBuf]) {
        let affected: Vec<(String, String, i32)> = self
            .docs
            .iter()
            .filter(|(uri, _)| uri_to_path(uri).is_some_and(|p| directories.iter().any(|d| p.starts_with(d))))
            .map(|(uri, doc)| (uri.clone(), self.text_of(doc.project, doc.file).to_string(), doc.version))
            .collect();
        for (uri, _, _) in &affected {
            self.close(uri);
        }
        for (uri, text, version) in affected {
            self.open(&uri, &text, version);
        }
    }

    fn drop_if_unused(&mut self, project: usize) {
        if !self.docs.values().any(|d| d.project == project) {
            self.projects[project] = None;
        }
    }

    // ----- checking ---------------------------------------------------------------------------

    /// Checks every project that changed and publishes its diagnostics, or starts the
    /// precompute it needs first.
    fn refresh(&mut self) {
        for index in 0..self.projects.len() {
            let Some(project) = self.projects[index].as_mut() else { continue };
            if !project.dirty {
                continue;
            }
            if project.workspace.needs_whole_pass() {
                if project.warming == Some(project.generation) {
                    continue;
                }
                project.warming = Some(project.generation);
                let db = project.workspace.db().clone();
                let generation = project.generation;
                let done = self.warmed_sender.clone();
                let stats = self.stats.clone();
                stats.started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = cairn_hir::stack::spawn("cairn-lsp-precompute", move || {
                    let finished = salsa::Cancelled::catch(|| cairn_hir::precompute(&db)).is_ok();
                    // Dropping the clone lets a waiting write go on.
                    drop(db);
                    let counter = if finished { &stats.finished } else { &stats.cancelled };
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if finished {
                        let _ = done.send((index, generation));
                    }
                });
                continue;
            }
            self.check_and_publish(index);
        }
    }

    fn warmed_up(&mut self, index: usize, generation: u64) {
        let Some(project) = self.projects.get_mut(index).and_then(Option::as_mut) else { return };
        if project.generation != generation || !project.dirty {
            return;
        }
        project.warming = None;
        self.check_and_publish(index);
    }

    /// Makes sure the document's project has been checked at its current text (a request needs
    /// the answers of the text it was sent about).
    fn settle(&mut self, uri: &str) {
        let Some(doc) = self.docs.get(uri) else { return };
        let index = doc.project;
        if self.projects[index].as_ref().is_some_and(|p| p.dirty) {
            self.check_and_publish(index);
        }
    }

    fn check_and_publish(&mut self, index: usize) {
        let Some(project) = self.projects[index].as_mut() else { return };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| project.workspace.check()));
        project.dirty = false;
        project.warming = None;
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(_) => {
                let diagnostic = cairn_diagnostics::Diagnostic::new(
                    "E-INTERNAL",
                    "internal error in the compiler while checking this program; the server goes on",
                );
                CheckOutcome {
                    refusal: cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]),
                    functions: 0,
                    library_functions: 0,
                }
            }
        };
        project.outcome = Some(outcome);
        let uris: Vec<String> =
            self.docs.iter().filter(|(_, d)| d.project == index).map(|(uri, _)| uri.clone()).collect();
        for uri in uris {
            let diagnostics = diagnostics_for(&self.snapshot(), &uri);
            let version = self.docs.get(&uri).map(|d| d.version);
            self.send(publish(&uri, version, diagnostics));
            if let Some(p) = self.projects[index].as_mut() {
                p.published.insert(uri);
            }
        }
    }
}

/// `textDocument/publishDiagnostics`.
fn publish(uri: &str, version: Option<i32>, diagnostics: Vec<Value>) -> Message {
    let mut params = json!({"uri": uri, "diagnostics": diagnostics});
    if let Some(version) = version {
        params["version"] = json!(version);
    }
    Message::Notification(Notification::new("textDocument/publishDiagnostics".into(), params))
}

/// The project a file on disk belongs to: the nearest `cairn.toml` above it that lists it, or
/// why that manifest cannot be loaded (one that cannot be read at all may be the file's: it
/// counts as listing it).
fn load_project(path: &Path, uri: &str, text: &str) -> Option<Result<Project, Environment>> {
    let mut dir = path.parent();
    while let Some(current) = dir {
        let manifest = current.join("cairn.toml");
        let program = match manifest.is_file().then(|| cairn_vfs::load(&manifest)) {
            Some(Ok(program)) => Some(program),
            Some(Err(error)) => {
                let listed = match cairn_vfs::read_manifest(&manifest) {
                    Ok(read) => read.sources.iter().any(|source| same_file(&current.join(source), path)),
                    Err(_) => true,
                };
                if listed {
                    return Some(Err(Environment { manifest, message: error.message }));
                }
                None
            }
            None => None,
        };
        if let Some(program) = program
            && let Some(index) = program.files.iter().position(|f| same_file(&f.path, path))
        {
            let mut files = Vec::new();
            let mut sources = Vec::new();
            for (i, file) in program.files.iter().enumerate() {
                let file_uri = if i == index { uri.to_string() } else { path_to_uri(&file.path) };
                files.push(ProjectFile { name: file.name.clone(), uri: file_uri, path: Some(file.path.clone()) });
                let body = if i == index { text.trim_start_matches('\u{feff}').to_string() } else { file.text.clone() };
                sources.push(SourceText { name: file.name.clone(), text: body });
            }
            return Some(Ok(new_project(manifest.to_string_lossy().to_string(), files, sources)));
        }
        dir = current.parent();
    }
    None
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(x, y)| x == y)
}

/// A document analysed alone.
fn one_file(uri: &str, path: Option<&Path>, text: &str) -> Project {
    let name = path
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| uri.rsplit('/').next().unwrap_or("untitled.cairn").to_string());
    let files = vec![ProjectFile { name: name.clone(), uri: uri.to_string(), path: path.map(Path::to_path_buf) }];
    let key = path.map_or_else(|| uri.to_string(), |p| p.to_string_lossy().to_string());
    new_project(key, files, vec![SourceText { name, text: text.trim_start_matches('\u{feff}').to_string() }])
}

fn new_project(key: String, files: Vec<ProjectFile>, sources: Vec<SourceText>) -> Project {
    Project {
        key,
        files,
        workspace: Workspace::new(sources),
        generation: 0,
        warming: None,
        dirty: true,
        outcome: None,
        published: HashSet::new(),
        environment: None,
    }
}

/// Writes the card texts and the packaged library where links can point: `cards/<name>.md` and
/// `std/<file>` under the user's cache (`$XDG_CACHE_HOME/cairn/lsp-<version>`, else
/// `~/.cache/...`, else the temporary directory). `None` if nothing could be written.
fn materialize() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("cairn").join(format!("lsp-{}", env!("CARGO_PKG_VERSION")));
    // The agent skill's files (`cairn_diagnostics::skill`), so a diagnostic links the text an
    // agent's skill holds.
    std::fs::create_dir_all(dir.join("cards")).ok()?;
    for (name, text) in cairn_diagnostics::skill::render() {
        let path = dir.join(&name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text).ok()?;
        }
    }
    for module in cairn_hir::library::MODULES {
        let path = dir.join(module.file);
        std::fs::create_dir_all(path.parent()?).ok()?;
        if std::fs::read_to_string(&path).ok().as_deref() != Some(module.text) {
            std::fs::write(&path, module.text).ok()?;
        }
    }
    Some(dir)
}
