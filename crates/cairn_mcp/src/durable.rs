//! Durable sessions (docs/durability.md): the server's session table, checkpointed under
//! `.cairn/sessions/` of the directory it started in, and what a restarted server does with
//! the table its predecessor left.
//!
//! The table holds every path session: its handle and identity, how it was opened, the SHA-256
//! of each file (and the manifest) it pinned, the expansions it made, and — once it wrote — the
//! key and the answer of its write; beside them the cards and terms the server has said once,
//! and per program the effect ledger's record it has seen. It is checkpointed (atomically,
//! sealed) after every request that changes a session: an open, an expansion, a write.
//!
//! A server starts by adopting the tables no live server holds ([`Durable::start`]): it
//! recovers each program they name (the journal, then the ledger's open intents — settled by
//! what the files hold), learns what became of each session's last write, and keeps the
//! sessions *dormant*. A client that names a dormant handle gets it back (`restore.rs`): the program is read again, and while every pinned digest still
//! matches the files the session is opened again under its handle and its expansions are
//! replayed; a session whose write completed comes back spent, answering the resend of that
//! request with the first answer; a session whose write was escalated (the files hold neither
//! side) answers `E-SESSION` and touches nothing.
//!
//! Plan and implementation sessions on a path are kept beside them ([`SavedHost`]): how each
//! was opened, the digests it pinned and, while a write of it is under way, the digests the
//! files hold once it landed. A client naming one of them gets it back on the same program
//! (`restore.rs`); a plan session's digest covers its program, so it comes back only on exactly
//! what it stood on.
//!
//! Boundary: sessions on `source` are not checkpointed (they never write; the client holds the
//! text and opens again). A table that cannot be written (a read-only directory) turns
//! checkpoints off with one line on standard error; the server goes on without them.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use cairn_agent::edit::Said;
use cairn_vfs::journal::Journal;
use cairn_vfs::journal::ledger::Settled;
use cairn_vfs::sessions::{Claim, SessionDir, fresh_id};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema of the table this version writes and adopts.
const SCHEMA: &str = "cairn.sessions/1";
/// How many handle numbers a server reserves at a time.
const HANDLE_BLOCK: u64 = 64;

/// The table on disk.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    schema: String,
    sessions: Vec<Saved>,
    said: Said,
    /// Per program directory, the ledger record this table has seen.
    ledgers: BTreeMap<String, u64>,
    /// The plan and implementation sessions on paths.
    #[serde(default)]
    hosts: Vec<SavedHost>,
}

/// A plan or implementation session on a path, as the table keeps it: enough to open it again
/// on the same program after a restart (`restore.rs`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SavedHost {
    pub kind: HostKind,
    /// A plan session's digest, or an implementation session's handle: what a client names.
    pub key: String,
    /// The `path` argument it was opened with, and the program's directory.
    pub path: String,
    pub root: String,
    /// A plan session's function (its full name), or an implementation session's reference.
    pub symbol: String,
    /// A plan session's generation (its digest covers it).
    #[serde(default)]
    pub generation: u64,
    /// An implementation session's policy, and the device target it emulates.
    #[serde(default)]
    pub policy: Option<Value>,
    #[serde(default)]
    pub emulate: Option<String>,
    /// Each pinned file's SHA-256 by its name relative to `root`, and the manifest's.
    pub pinned: Vec<(String, String)>,
    pub manifest_sha256: Option<String>,
    /// While a write of the session is under way: the digests the files hold once it landed
    /// (a restart finds the files holding either side).
    #[serde(default)]
    pub writing: Option<Vec<(String, String)>>,
}

/// Which host a [`SavedHost`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum HostKind {
    Plan,
    Implementation,
}

/// One path session as the table keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Saved {
    pub handle: String,
    pub id: String,
    pub open: OpenArgs,
    /// The program's directory (where its journal and ledger live).
    pub root: String,
    /// Each pinned file's SHA-256, by its name relative to `root`.
    pub pinned: Vec<(String, String)>,
    pub manifest_sha256: Option<String>,
    /// The `symbols` of each expansion, in order.
    pub expanded: Vec<Value>,
    pub written: Option<Written>,
    /// The files of an escalated write (the session refuses everything).
    pub escalated: Option<Vec<String>>,
}

/// How a path session was opened: the `edit_open` arguments that matter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenArgs {
    pub path: String,
    pub symbol: String,
    pub scope: Option<String>,
    pub site: Option<String>,
    pub contract: Option<Value>,
}

/// A session's write: its key (the digest of session and request) and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Written {
    pub key: String,
    pub answer: Map<String, Value>,
}

/// The server's side of durability: its table's place and claim, its handles, and the
/// sessions adopted from a predecessor that no client has named yet.
pub(crate) struct Durable {
    start: PathBuf,
    id: String,
    dir: Option<SessionDir>,
    claim: Option<Claim>,
    /// Tables adopted at start, removed once this server's first checkpoint holds them.
    adopted: Vec<Claim>,
    next_handle: u64,
    block_end: u64,
    pub dormant: HashMap<String, Saved>,
    /// Plan and implementation sessions adopted, by key, until a client names them.
    pub dormant_hosts: HashMap<String, SavedHost>,
    /// What the predecessors said, heard by the host when a client names a dormant handle.
    pub said: Option<Said>,
    pub ledgers: BTreeMap<String, u64>,
    /// Why checkpoints are off, once they failed.
    off: Option<String>,
    /// Each session of the last checkpoint, by handle, with its serialized form: a session
    /// that did not change since is not serialized again ([`table_bytes`]).
    serialized: HashMap<String, (Saved, Vec<u8>)>,
}

impl Durable {
    /// Adopts the tables no live server under `start` holds, recovering the programs they name
    /// (see the module comment). Never creates `.cairn/` where there is none.
    pub fn start(start: &Path) -> Durable {
        let mut durable = Durable {
            start: start.to_path_buf(),
            id: fresh_id(),
            dir: None,
            claim: None,
            adopted: Vec::new(),
            next_handle: 0,
            block_end: 0,
            dormant: HashMap::new(),
            dormant_hosts: HashMap::new(),
            said: None,
            ledgers: BTreeMap::new(),
            off: None,
            serialized: HashMap::new(),
        };
        let Ok(Some(dir)) = SessionDir::existing(start) else { return durable };
        let mut said = Said::default();
        for orphan in dir.orphans(&durable.id) {
            let Ok(table) = serde_json::from_value::<Table>(orphan.table) else { continue };
            if table.schema != SCHEMA {
                continue;
            }
            for saved in table.sessions {
                durable.next_handle = durable.next_handle.max(handle_number(&saved.handle));
                durable.dormant.insert(saved.handle.clone(), saved);
            }
            for saved in table.hosts {
                durable.next_handle = durable.next_handle.max(handle_number(&saved.key));
                durable.dormant_hosts.insert(saved.key.clone(), saved);
            }
            said.cards.extend(table.said.cards);
            said.terms.extend(table.said.terms);
            said.terms_sent |= table.said.terms_sent;
            for (root, seq) in table.ledgers {
                // The lowest across the adopted tables: a session a table holds unwritten may
                // have written after that table's last checkpoint (it comes after the answer),
                // and its intent must not fall below what another table had seen.
                durable.ledgers.entry(root).and_modify(|seen| *seen = (*seen).min(seq)).or_insert(seq);
            }
            durable.adopted.push(orphan.claim);
        }
        said.cards.sort();
        said.cards.dedup();
        said.terms.sort();
        said.terms.dedup();
        durable.said = (!durable.dormant.is_empty() || !durable.dormant_hosts.is_empty()).then_some(said);
        durable.dir = Some(dir);
        durable.recover();
        durable.block_end = durable.next_handle;
        durable
    }

    /// Recovers every program a dormant session names and learns how its last write ended.
    fn recover(&mut self) {
        let mut by_root: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for saved in self.dormant.values().filter(|s| s.written.is_none() && s.escalated.is_none()) {
            by_root.entry(saved.root.clone()).or_default().push(saved.id.clone());
        }
        for (root, ids) in by_root {
            let after = self.ledgers.get(&root).copied().unwrap_or(0);
            let settled = match Journal::new(Path::new(&root)).recover_sessions(&ids, after) {
                Ok(settled) => settled,
                Err(error) => {
                    eprintln!("cairn mcp: cannot recover {root}: {error}; its sessions are not restored");
                    self.dormant.retain(|_, s| s.root != root);
                    continue;
                }
            };
            for (id, key, settled) in settled {
                let Some(saved) = self.dormant.values_mut().find(|s| s.id == id) else { continue };
                match settled {
                    Settled::Complete(Value::Object(answer)) => saved.written = Some(Written { key, answer }),
                    Settled::Complete(_) => saved.escalated = Some(Vec::new()),
                    Settled::NotApplied => {}
                    Settled::Escalated(files) => saved.escalated = Some(files),
                    // Settled under the lock just now, so never open; refuse rather than guess.
                    Settled::Open => saved.escalated = Some(Vec::new()),
                }
            }
        }
    }

    /// The table's directory, opened (created) on first need; `None` once checkpoints are off.
    fn dir(&mut self) -> Option<&SessionDir> {
        if self.off.is_some() {
            return None;
        }
        if self.dir.is_none() {
            match SessionDir::open(&self.start) {
                Ok(dir) => self.dir = Some(dir),
                Err(error) => {
                    self.turn_off(format!("cannot create .cairn/sessions: {error}"));
                    return None;
                }
            }
        }
        self.dir.as_ref()
    }

    fn turn_off(&mut self, why: String) {
        eprintln!("cairn mcp: session checkpoints are off ({why}); sessions will not survive a restart");
        self.off = Some(why);
    }

    /// A fresh handle (`e<n>`), unique across every server started in this directory while
    /// the table's directory can be written (`create`: make it if it is missing).
    pub fn next_handle(&mut self, create: bool) -> String {
        if self.next_handle >= self.block_end {
            let at_least = self.next_handle;
            let reserved = if create || self.dir.is_some() {
                self.dir().map(|dir| dir.reserve_handles(at_least, HANDLE_BLOCK))
            } else {
                None
            };
            match reserved {
                Some(Ok(first)) => {
                    self.next_handle = first - 1;
                    self.block_end = first + HANDLE_BLOCK - 1;
                }
                Some(Err(error)) => {
                    self.turn_off(format!("cannot reserve handles: {error}"));
                    self.block_end = u64::MAX;
                }
                // Not durable yet: numbered in memory; a later block starts above these.
                None => self.block_end = self.next_handle + 1,
            }
        }
        self.next_handle += 1;
        format!("e{}", self.next_handle)
    }

    /// Checkpoints `sessions` and `hosts` and the dormant ones with what the host has said.
    pub fn checkpoint(&mut self, sessions: Vec<Saved>, hosts: Vec<SavedHost>, said: Said, synced: bool) {
        let mut all = sessions;
        all.extend(self.dormant.values().cloned());
        all.sort_by_key(|s| handle_number(&s.handle));
        let mut hosts = hosts;
        hosts.extend(self.dormant_hosts.values().cloned());
        hosts.sort_by(|a, b| a.key.cmp(&b.key));
        let Some(bytes) = table_bytes(&mut self.serialized, all, said, self.ledgers.clone(), hosts) else { return };
        if self.claim.is_none() {
            let id = self.id.clone();
            let Some(dir) = self.dir() else { return };
            match dir.claim(&id) {
                Ok(claim) => self.claim = Some(claim),
                Err(error) => return self.turn_off(format!("cannot claim a session table: {error}")),
            }
        }
        let (Some(dir), Some(claim)) = (self.dir.as_ref(), self.claim.as_ref()) else { return };
        if let Err(error) = dir.write_serialized(claim, &bytes, synced) {
            return self.turn_off(format!("cannot write the session table: {error}"));
        }
        for adopted in std::mem::take(&mut self.adopted) {
            dir.remove(adopted);
        }
    }
}

/// What stands for the sessions in the serialized table until their bytes are put in.
const SESSIONS_HERE: &str = "\u{1}cairn-sessions\u{1}";

/// The table's JSON, exactly as `serde_json::to_vec(&serde_json::to_value(&table))` writes it
/// (what the seal covers and a reader serializes again to check it), with each session's part
/// taken from `serialized` when the session is the same as at the last checkpoint. A server
/// keeps up to 256 spent sessions with their answers: serializing all of them at every open and
/// every write was a fifth of a written edit. `serialized` is left holding this table's
/// sessions.
fn table_bytes(
    serialized: &mut HashMap<String, (Saved, Vec<u8>)>,
    sessions: Vec<Saved>,
    said: Said,
    ledgers: BTreeMap<String, u64>,
    hosts: Vec<SavedHost>,
) -> Option<Vec<u8>> {
    let mut array = vec![b'['];
    let mut kept = HashMap::with_capacity(sessions.len());
    for (i, saved) in sessions.into_iter().enumerate() {
        let bytes = match serialized.remove(&saved.handle) {
            Some((before, bytes)) if before == saved => bytes,
            _ => serde_json::to_vec(&serde_json::to_value(&saved).ok()?).ok()?,
        };
        if i > 0 {
            array.push(b',');
        }
        array.extend_from_slice(&bytes);
        kept.insert(saved.handle.clone(), (saved, bytes));
    }
    array.push(b']');
    *serialized = kept;
    let table = Table { schema: SCHEMA.into(), sessions: Vec::new(), said, ledgers, hosts };
    let mut value = serde_json::to_value(&table).ok()?;
    value["sessions"] = Value::from(SESSIONS_HERE);
    let outer = serde_json::to_vec(&value).ok()?;
    let marker = serde_json::to_vec(&Value::from(SESSIONS_HERE)).ok()?;
    let at = outer.windows(marker.len()).position(|w| w == marker.as_slice())?;
    Some([&outer[..at], &array[..], &outer[at + marker.len()..]].concat())
}

/// The number of a handle `e<n>` or `i<n>` (one numbering for edit and implementation
/// sessions; 0 for anything else, a plan session's digest included).
fn handle_number(handle: &str) -> u64 {
    handle.strip_prefix(['e', 'i']).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// The key of a writing request of a session: the digest of the session's identity and the
/// request's canonical JSON.
pub(crate) fn request_key(session: &str, request: &Value) -> String {
    let mut text = session.as_bytes().to_vec();
    text.push(b'\n');
    text.extend_from_slice(cairn_agent::canonical::canonical_json(request).as_bytes());
    cairn_agent::canonical::sha256_hex(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(handle: &str, answer: &str) -> Saved {
        Saved {
            handle: handle.into(),
            id: format!("id-{handle}"),
            open: OpenArgs { path: "a.cairn".into(), symbol: "f".into(), ..OpenArgs::default() },
            root: "/p".into(),
            pinned: vec![("a.cairn".into(), "00".repeat(32))],
            manifest_sha256: None,
            expanded: Vec::new(),
            written: (!answer.is_empty()).then(|| Written {
                key: "k".into(),
                answer: serde_json::from_str(&format!("{{\"status\":\"{answer}\",\"z\":1,\"a\":[2]}}")).unwrap(),
            }),
            escalated: None,
        }
    }

    /// The bytes a table is sealed over are `to_vec(to_value(table))`, whether each session's
    /// part was serialized now or kept from the last checkpoint.
    #[test]
    fn a_table_s_bytes_are_its_json_with_unchanged_sessions_reused() {
        let ledgers = BTreeMap::from([("/p".to_string(), 3u64)]);
        let direct = |sessions: &[Saved]| {
            let table = Table {
                schema: SCHEMA.into(),
                sessions: sessions.to_vec(),
                said: Said::default(),
                ledgers: ledgers.clone(),
                hosts: Vec::new(),
            };
            serde_json::to_vec(&serde_json::to_value(&table).unwrap()).unwrap()
        };
        let mut cache = HashMap::new();
        let mut sessions = vec![saved("e1", "admitted"), saved("e2", ""), saved("e3", "rejected")];
        let first = table_bytes(&mut cache, sessions.clone(), Said::default(), ledgers.clone(), Vec::new()).unwrap();
        assert_eq!(first, direct(&sessions));
        assert_eq!(cache.len(), 3);
        // One session changes, one goes, one comes: only those are serialized again.
        sessions[1].expanded.push(serde_json::json!(["g"]));
        sessions.remove(0);
        sessions.push(saved("e4", "admitted"));
        let stale = cache.get("e3").map(|(_, bytes)| bytes.clone());
        let second = table_bytes(&mut cache, sessions.clone(), Said::default(), ledgers.clone(), Vec::new()).unwrap();
        assert_eq!(second, direct(&sessions));
        assert_eq!(cache.get("e3").map(|(_, bytes)| bytes.clone()), stale);
        assert!(!cache.contains_key("e1") && cache.contains_key("e4"));
        // No sessions at all.
        assert_eq!(
            table_bytes(&mut cache, Vec::new(), Said::default(), ledgers.clone(), Vec::new()).unwrap(),
            direct(&[])
        );
    }
}
