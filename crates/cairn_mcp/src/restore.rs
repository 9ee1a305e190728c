//! The server's side of durable sessions (docs/durability.md): its sessions written as a table
//! (`checkpoint`), a dormant session brought back under its handle (`restore`; a plan or
//! implementation session by `restore_host`), and a path session to and from its saved form. `durable.rs` keeps the table itself, the ledger records
//! seen and the handles; it knows nothing of the server.

use cairn_agent::edit::{ImplementationOpen, OpenRequest};
use cairn_agent::validate::{Policy, Regressions};
use serde_json::{Map, Value};

use crate::durable::{HostKind, Saved};
use crate::tools::{PathSession, Server, ToolResult};

impl Server {
    /// Checkpoints the session table. `synced` at adoption and before a plan or implementation
    /// session's write (what a restart must find even after an OS crash); without it after an
    /// open, an expansion or an edit session's write, which a kill of the server cannot lose
    /// but an OS crash may (the ledger still says what became of the write; a session the
    /// table lost is opened again by the client).
    pub(crate) fn checkpoint(&mut self, synced: bool) {
        let sessions: Vec<Saved> = self.sessions.iter().map(|(handle, s)| s.saved(handle)).collect();
        // Plan sessions answered or reopened are gone from the host, and from the table — but
        // not while a write of theirs is under way (a reply's successor takes its place after).
        let host = &self.host;
        self.host_sessions.retain(|key, saved| {
            saved.writing.is_some()
                || match saved.kind {
                    HostKind::Plan => host.plan_session(key).is_some(),
                    HostKind::Implementation => host.implementation_reference(key).is_some(),
                }
        });
        let hosts = self.host_sessions.values().cloned().collect();
        let said = self.host.said();
        self.durable.checkpoint(sessions, hosts, said, synced);
    }

    /// Brings back the dormant plan or implementation session `key`, if there is one, on the
    /// program as the files hold it now: only while they hold what it pinned (or what its write
    /// under way was to leave). `Err` is the refusal a session that cannot come back answers.
    pub(crate) fn restore_host(&mut self, key: &str) -> Result<(), ToolResult> {
        let Some(saved) = self.durable.dormant_hosts.get(key).cloned() else { return Ok(()) };
        if let Some(said) = self.durable.said.take() {
            self.host.hear_said(&said);
        }
        let what = match saved.kind {
            HostKind::Plan => "plan session",
            HostKind::Implementation => "implementation session",
        };
        let refuse = |server: &Server, message: String, files: Vec<String>| {
            let details = if files.is_empty() { vec![] } else { vec![("files", Value::from(files))] };
            ToolResult::error(server.host.refusal("E-SESSION", message, details))
        };
        // A program that cannot be read now may be readable later: the session stays dormant.
        let Ok(loaded) = self.load_path(&saved.path) else {
            return Err(refuse(
                self,
                format!(
                    "{key} was a {what} on {} before the server restarted, and that program cannot be read now: make it readable and ask again, or open a new session.",
                    saved.path
                ),
                vec![],
            ));
        };
        // From here the session comes back, or is refused for good.
        self.durable.dormant_hosts.remove(key);
        let Some(disk) = loaded.disk.clone() else { return Ok(()) };
        let (pinned, manifest) = disk.digests(&loaded.sources);
        let changed = changed_files(&saved.pinned, &saved.manifest_sha256, &pinned, &manifest);
        let landed = saved
            .writing
            .as_deref()
            .is_some_and(|after| changed_files(after, &saved.manifest_sha256, &pinned, &manifest).is_empty());
        if !changed.is_empty() && !landed {
            return Err(refuse(
                self,
                format!(
                    "{key} came back after the server restarted, but files changed on disk since it pinned them; open a new {what} on the program as it is now."
                ),
                changed,
            ));
        }
        let taken_back = match saved.kind {
            HostKind::Plan => {
                self.host.plan_resume(loaded.sources.clone(), &disk.identity, &saved.symbol, saved.generation, key)
            }
            HostKind::Implementation => {
                let file = disk.root.join("regressions").join(cairn_agent::validate::regressions_name(&saved.symbol));
                let kept = std::fs::read(&file).ok().and_then(|bytes| Regressions::parse(&bytes).ok());
                let policy: Option<Policy> = saved.policy.clone().and_then(|p| serde_json::from_value(p).ok());
                let open = ImplementationOpen {
                    reference: saved.symbol.clone(),
                    policy: policy.unwrap_or_default(),
                    kept,
                    emulate: saved.emulate.clone(),
                    handle: Some(key.to_string()),
                };
                let answer = self.host.implementation_open(loaded.sources.clone(), open);
                if !answer.refused {
                    self.regressions.insert(key.to_string(), file);
                }
                !answer.refused
            }
        };
        if !taken_back {
            // A plan session's digest names the program it stood on: after its reply was
            // written, the files hold its successor's program, and the reply is not taken again.
            return Err(refuse(
                self,
                format!(
                    "{key} could not be taken back after the server restarted (a plan session answered before the restart is spent; what it wrote stays written): open a new {what}."
                ),
                vec![],
            ));
        }
        self.pinned.insert(key.to_string(), (disk, loaded.sources));
        let mut saved = saved;
        saved.pinned = pinned;
        saved.writing = None;
        self.host_sessions.insert(key.to_string(), saved);
        self.checkpoint(false);
        Ok(())
    }

    /// Brings back the dormant session `handle`, if there is one (see the module comment).
    /// `Err` is the refusal a session that cannot come back answers.
    pub(crate) fn restore(&mut self, handle: &str) -> Result<(), ToolResult> {
        let Some(saved) = self.durable.dormant.remove(handle) else { return Ok(()) };
        if let Some(said) = self.durable.said.take() {
            self.host.hear_said(&said);
        }
        if saved.written.is_some() || saved.escalated.is_some() {
            self.sessions.insert(handle.to_string(), PathSession::spent(saved));
            return Ok(());
        }
        let refuse = |server: &Server, message: String, files: Vec<String>| {
            let details = if files.is_empty() { vec![] } else { vec![("files", Value::from(files))] };
            ToolResult::error(server.host.refusal("E-SESSION", message, details))
        };
        let loaded = match self.load_path(&saved.open.path) {
            Ok(loaded) => loaded,
            Err(_) => {
                return Err(refuse(
                    self,
                    format!(
                        "{handle} was a session on {} before the server restarted, and that program cannot be read now; open a new session.",
                        saved.open.path
                    ),
                    vec![],
                ));
            }
        };
        let Some(disk) = loaded.disk.clone() else { return Ok(()) };
        let (pinned, manifest) = disk.digests(&loaded.sources);
        let changed = changed_files(&saved.pinned, &saved.manifest_sha256, &pinned, &manifest);
        if !changed.is_empty() {
            return Err(refuse(
                self,
                format!(
                    "{handle} came back after the server restarted, but files changed on disk since it pinned them; open a new session on the program as it is now."
                ),
                changed,
            ));
        }
        let request = OpenRequest {
            symbol: saved.open.symbol.clone(),
            scope: saved.open.scope.clone(),
            contract: saved.open.contract.clone(),
            include: Vec::new(),
            site: saved.open.site.clone(),
            handle: Some(handle.to_string()),
        };
        let answer = self.host.open(loaded.sources, request);
        if answer.refused {
            return Err(refuse(
                self,
                format!("{handle} could not be opened again after the server restarted; open a new session."),
                vec![],
            ));
        }
        for symbols in &saved.expanded {
            let mut expand = Map::new();
            expand.insert("protocol".into(), Value::from("cairn.edit/2"));
            expand.insert("handle".into(), Value::from(handle));
            expand.insert("kind".into(), Value::from("expand"));
            expand.insert("symbols".into(), symbols.clone());
            let _ = self.host.request(&Value::Object(expand));
        }
        self.sessions.insert(handle.to_string(), PathSession::live(saved, disk));
        Ok(())
    }
}

/// What moved between the digests a session pinned and the files now: each file whose digest
/// changed, each file the program gained, and `(manifest)`; sorted, each once. Empty: the
/// session stands on the files as they are.
fn changed_files(
    pinned: &[(String, String)],
    manifest: &Option<String>,
    now: &[(String, String)],
    manifest_now: &Option<String>,
) -> Vec<String> {
    let mut changed: Vec<String> = pinned
        .iter()
        .filter(|(name, digest)| !now.iter().any(|(n, d)| n == name && d == digest))
        .map(|(name, _)| name.clone())
        .collect();
    changed.extend(now.iter().filter(|(n, _)| !pinned.iter().any(|(m, _)| m == n)).map(|(n, _)| n.clone()));
    if manifest_now != manifest {
        changed.push("(manifest)".into());
    }
    changed.sort();
    changed.dedup();
    changed
}

impl PathSession {
    /// The session as the table keeps it.
    pub(crate) fn saved(&self, handle: &str) -> Saved {
        Saved {
            handle: handle.to_string(),
            id: self.id.clone(),
            open: self.open.clone(),
            root: self.root.clone(),
            pinned: self.pinned.clone(),
            manifest_sha256: self.manifest_sha256.clone(),
            expanded: self.expanded.clone(),
            written: self.written.clone(),
            escalated: self.escalated.clone(),
        }
    }

    /// A session restored spent or escalated: the server answers it, the host holds nothing.
    fn spent(saved: Saved) -> PathSession {
        PathSession {
            id: saved.id,
            open: saved.open,
            root: saved.root,
            pinned: saved.pinned,
            manifest_sha256: saved.manifest_sha256,
            disk: None,
            expanded: saved.expanded,
            written: saved.written,
            escalated: saved.escalated,
        }
    }

    /// A session restored live: opened again on `disk`, which matched its pinned digests.
    fn live(saved: Saved, disk: crate::writeback::Disk) -> PathSession {
        PathSession { disk: Some(disk), ..PathSession::spent(saved) }
    }
}
