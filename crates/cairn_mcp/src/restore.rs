//! The server's side of durable sessions (docs/durability.md): its sessions written as a table
//! (`checkpoint`), a dormant session brought back under its handle (`restore`), and a path
//! session to and from its saved form. `durable.rs` keeps the table itself, the ledger records
//! seen and the handles; it knows nothing of the server.

use cairn_agent::edit::OpenRequest;
use serde_json::{Map, Value};

use crate::durable::Saved;
use crate::tools::{PathSession, Server, ToolResult};

impl Server {
    /// Checkpoints the session table. `synced` after a write and at adoption (what a restart
    /// must find even after an OS crash); without it after an open or an expansion, which a kill
    /// of the server cannot lose but an OS crash may (the client then opens again).
    pub(crate) fn checkpoint(&mut self, synced: bool) {
        let sessions: Vec<Saved> = self.sessions.iter().map(|(handle, s)| s.saved(handle)).collect();
        let said = self.host.said();
        self.durable.checkpoint(sessions, said, synced);
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
        let mut changed: Vec<String> = saved
            .pinned
            .iter()
            .filter(|(name, digest)| !pinned.iter().any(|(n, d)| n == name && d == digest))
            .map(|(name, _)| name.clone())
            .collect();
        changed
            .extend(pinned.iter().filter(|(n, _)| !saved.pinned.iter().any(|(m, _)| m == n)).map(|(n, _)| n.clone()));
        if manifest != saved.manifest_sha256 {
            changed.push("(manifest)".into());
        }
        if !changed.is_empty() {
            changed.sort();
            changed.dedup();
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
