//! Where servers keep their session tables: `.cairn/sessions/` in the directory a server
//! started in — one checkpoint file per live server, its lock, and the handle counter they
//! share.
//!
//! A server claims a table `<id>.json` by holding an exclusive lock on `<id>.lock` for its
//! whole life; a table whose lock can be taken has no live server, so a starting server may
//! adopt it ([`SessionDir::orphans`]). A checkpoint replaces the table atomically (staged,
//! fsynced, renamed, the directory fsynced), sealed like the journal (`mac`, the HMAC-SHA256 of
//! the table under the user's key): a table that does not carry this user's seal is never
//! adopted. Handles come from `handles`, a counter read and advanced under its own lock (a server reserves
//! a block at a time), so
//! two servers started in one directory, or a server and its successor, never issue the same
//! handle. The table's content is the server's (`cairn_mcp`): this module keeps bytes.
//!
//! Confinement as everywhere (`safe.rs`): no symbolic link is followed, only regular files
//! are read, and no read exceeds [`TABLE_BYTES`].

use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::journal::STATE_DIR;
use crate::key::{hmac_hex, journal_key, same_digest};
use crate::safe::{Dir, ReadError};

/// The largest table read back.
pub const TABLE_BYTES: u64 = 16 << 20;

/// A table on disk: the server's content and its seal.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sealed {
    mac: String,
    table: Value,
}

/// The open `.cairn/sessions/` of one start directory.
pub struct SessionDir {
    dir: Dir,
}

/// A table this process holds (its lock is held while this lives).
pub struct Claim {
    pub id: String,
    _lock: File,
}

/// A table whose server is gone, adopted: its content, and the claim on it (release it by
/// [`SessionDir::remove`] once its sessions live in the adopter's table).
pub struct Orphan {
    pub claim: Claim,
    pub table: Value,
}

impl SessionDir {
    /// Opens (creating) `.cairn/sessions/` under `start` (a trusted, canonical directory).
    pub fn open(start: &Path) -> std::io::Result<SessionDir> {
        let dir = Dir::root(start)?.subdir(STATE_DIR, true)?.subdir("sessions", true)?;
        Ok(SessionDir { dir })
    }

    /// Opens `.cairn/sessions/` under `start` if it exists.
    pub fn existing(start: &Path) -> std::io::Result<Option<SessionDir>> {
        let state = match Dir::root(start)?.subdir(STATE_DIR, false) {
            Ok(state) => state,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match state.subdir("sessions", false) {
            Ok(dir) => Ok(Some(SessionDir { dir })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Claims the table `id` (a fresh name of the caller's choosing: `[0-9a-f]+`).
    pub fn claim(&self, id: &str) -> std::io::Result<Claim> {
        let lock = self.dir.open_lock(&format!("{id}.lock"), true)?;
        lock.try_lock()
            .map_err(|_| std::io::Error::other(format!("the session table {id} is held by another server")))?;
        Ok(Claim { id: id.to_string(), _lock: lock })
    }

    /// The tables no live server holds, claimed for the caller, with their content. Tables
    /// that are not sealed by this user (or do not parse) are left where they are, unread.
    pub fn orphans(&self, own: &str) -> Vec<Orphan> {
        let Ok(names) = self.dir.names() else { return Vec::new() };
        let mut ids: Vec<&str> = names
            .iter()
            .filter_map(|n| n.strip_suffix(".lock"))
            .filter(|id| *id != own && !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit()))
            .collect();
        ids.sort_unstable();
        let mut out = Vec::new();
        for id in ids {
            let Ok(lock) = self.dir.open_lock(&format!("{id}.lock"), false) else { continue };
            if lock.try_lock().is_err() {
                continue;
            }
            let claim = Claim { id: id.to_string(), _lock: lock };
            match self.read(id) {
                Some(table) => out.push(Orphan { claim, table }),
                // A lock with no table (its server died before its first checkpoint).
                None if matches!(self.dir.stat(&format!("{id}.json")), Ok(None)) => self.remove(claim),
                None => {}
            }
        }
        out
    }

    fn read(&self, id: &str) -> Option<Value> {
        let bytes = match self.dir.read_regular(&format!("{id}.json"), TABLE_BYTES) {
            Ok(bytes) => bytes,
            Err(ReadError::Missing) => return None,
            Err(_) => return None,
        };
        let sealed: Sealed = serde_json::from_slice(&bytes).ok()?;
        let key = journal_key().ok()?;
        let expected = hmac_hex(key, &serde_json::to_vec(&sealed.table).ok()?);
        same_digest(&sealed.mac, &expected).then_some(sealed.table)
    }

    /// Checkpoints a claimed table: replaces its content atomically, reusing the staged file
    /// of the last checkpoint so no block is freed (`Dir::replace_reusing`; the fault point
    /// `during-checkpoint` lies between the staging and the exchange). `synced` also fsyncs the
    /// file and the directory, so the table survives an OS crash; without it the table survives
    /// the death of the process, and after an OS crash it is the old one or fails its seal.
    pub fn write(&self, claim: &Claim, table: &Value, synced: bool) -> std::io::Result<()> {
        self.write_serialized(claim, &serde_json::to_vec(table).map_err(std::io::Error::other)?, synced)
    }

    /// [`SessionDir::write`] of a table already serialized: `bytes` must be exactly what
    /// `serde_json::to_vec` makes of the table's `Value` (a reader serializes it again to check
    /// the seal).
    pub fn write_serialized(&self, claim: &Claim, bytes: &[u8], synced: bool) -> std::io::Result<()> {
        let key = journal_key().map_err(std::io::Error::other)?;
        // The sealed form `{"mac":…,"table":…}` around the bytes the seal covers, serialized once
        // (the reader parses it as `Sealed` and seals the table again to compare).
        let mac = hmac_hex(key, bytes);
        let mut text = Vec::with_capacity(bytes.len() + mac.len() + 20);
        text.extend_from_slice(b"{\"mac\":\"");
        text.extend_from_slice(mac.as_bytes());
        text.extend_from_slice(b"\",\"table\":");
        text.extend_from_slice(bytes);
        text.push(b'}');
        let name = format!("{}.json", claim.id);
        let during = || crate::fault::point("during-checkpoint");
        self.dir.replace_reusing(&name, &text, synced, during)
    }

    /// Removes a claimed table and its lock (the lock goes last, so no one adopts it between).
    pub fn remove(&self, claim: Claim) {
        let _ = self.dir.remove(&format!("{}.json", claim.id));
        let _ = self.dir.remove(&format!("{}.json.new", claim.id));
        let _ = self.dir.remove(&format!("{}.lock", claim.id));
        let _ = self.dir.sync();
        drop(claim);
    }

    /// Reserves `count` handle numbers above `at_least`: the shared counter read and advanced
    /// under its lock (durable before any of them is used). Returns the first.
    pub fn reserve_handles(&self, at_least: u64, count: u64) -> std::io::Result<u64> {
        let lock = self.dir.open_lock("handles.lock", true)?;
        lock.lock()?;
        let current = match self.dir.read_regular("handles", 64) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).trim().parse::<u64>().unwrap_or(0),
            Err(ReadError::Missing) => 0,
            Err(error) => return Err(std::io::Error::other(error.to_string())),
        };
        let first = current.max(at_least) + 1;
        let last = first.saturating_add(count.max(1) - 1);
        self.dir.replace("handles", last.to_string().as_bytes(), || {})?;
        Ok(first)
    }
}

/// A fresh identity: 16 random bytes as hex (for a server's table and for sessions).
pub fn fresh_id() -> String {
    let mut bytes = [0u8; 16];
    if crate::key::random(&mut bytes).is_err() {
        // No randomness source: the time and the process still make it unique on this machine.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes[..8].copy_from_slice(&(now.as_nanos() as u64).to_le_bytes());
        bytes[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower-case hex SHA-256 of some bytes (a session table's pinned digests).
pub fn sha256(bytes: &[u8]) -> String {
    crate::journal::sha256(bytes)
}
