//! Journal entries on disk: their format, their seal, their validation, and the listing that
//! gives each its state.
//!
//! An entry is `<seq>.write.json` (or `<seq>.undo-<reverted>.json`): the files it writes, with
//! the SHA-256 of each file's content before and after, and `mac`, the HMAC-SHA256 of the rest
//! under the user's journal key (`crate::key`). Beside it: the kept contents `<seq>.<i>.before`
//! and the markers `<seq>.committed`, `<seq>.rolled-back`, `<seq>.quarantined`.
//!
//! Invariant: nothing acts on an entry that [`check`] did not accept — sealed by this user's
//! key, names that are plain relative `.cairn` paths with no hidden component (so never
//! `.git/config`, `.cairn/lock` or a dotfile), reached without a link, digests well formed, kept
//! contents regular files of bounded total size whose digests match. Kept contents are hashed
//! streaming and read into memory only to restore one file ([`kept`]).

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Open, WriteError, io, resolve};
use crate::key::{hmac_hex, journal_key, same_digest};
use crate::safe::{Kind, Stat};

/// The schema of the entries this version writes and reads.
pub(super) const SCHEMA: &str = "cairn.journal/3";
/// The most files one entry may name.
const ENTRY_FILES: usize = 1024;
/// The largest entry file read back.
const ENTRY_BYTES: u64 = 1 << 20;
/// The most bytes the kept contents of one entry may hold together (a program's sources are at
/// most 16,000,000 bytes; twice that leaves room for byte-order marks and growth).
const KEPT_BYTES: u64 = 32 << 20;
/// The largest sequence number (the listing's names have room for twelve digits).
pub(super) const MAX_SEQ: u64 = 999_999_999_999;

/// An entry's content (immutable once written).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct Entry {
    pub schema: String,
    pub seq: u64,
    pub files: Vec<EntryFile>,
    /// The seal: HMAC-SHA256 of the entry with `mac` empty, under the user's journal key.
    #[serde(default)]
    pub mac: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct EntryFile {
    pub name: String,
    pub before_sha256: String,
    pub after_sha256: String,
}

impl Entry {
    /// The entry's bytes as sealed: its JSON with an empty `mac`.
    fn sealed_bytes(&self) -> Vec<u8> {
        let unsealed = Entry { mac: String::new(), ..self.clone() };
        serde_json::to_vec(&unsealed).unwrap_or_default()
    }

    /// Seals the entry under the user's key.
    pub fn seal(&mut self) -> Result<(), WriteError> {
        let key = journal_key().map_err(WriteError::Io)?;
        self.mac = hmac_hex(key, &self.sealed_bytes());
        Ok(())
    }

    /// True when the entry carries this user's seal.
    fn sealed_here(&self) -> bool {
        match journal_key() {
            Ok(key) => same_digest(&self.mac, &hmac_hex(key, &self.sealed_bytes())),
            Err(_) => false,
        }
    }
}

/// What the listing says about one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Listed {
    pub seq: u64,
    /// For an undo: the entry it reverts.
    pub reverts: Option<u64>,
    pub state: State,
    pub file: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Pending,
    Committed,
    RolledBack,
    Quarantined,
}

/// True when `relative` may be named by an entry (and written by a write-back): `/`-separated
/// plain components, none hidden (starting with `.`), ending in `.cairn`.
pub(super) fn writable_name(relative: &str) -> bool {
    !relative.is_empty()
        && !relative.contains('\\')
        && relative.ends_with(".cairn")
        && relative.split('/').all(|c| crate::safe::is_component(c) && !c.starts_with('.'))
}

/// Validates an entry before anything acts on it (see the module comment).
pub(super) fn check(open: &Open, listed: &Listed) -> Result<Entry, String> {
    let bytes = open.entries.read_regular(&listed.file, ENTRY_BYTES).map_err(|e| format!("the entry file: {e}"))?;
    let entry: Entry = serde_json::from_slice(&bytes).map_err(|e| format!("the entry is not a journal entry ({e})"))?;
    if !entry.sealed_here() {
        return Err("it does not carry this user's seal (it was not written by this user's cairn)".into());
    }
    if entry.schema != SCHEMA {
        return Err(format!("unknown schema {:?}", entry.schema));
    }
    if entry.seq != listed.seq {
        return Err(format!("it says it is entry {} but is named {}", entry.seq, listed.seq));
    }
    if entry.files.is_empty() || entry.files.len() > ENTRY_FILES {
        return Err(format!("it names {} files", entry.files.len()));
    }
    let mut names: Vec<&str> = entry.files.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err("it names a file twice".into());
    }
    let mut total = 0u64;
    for (i, file) in entry.files.iter().enumerate() {
        if !writable_name(&file.name) {
            return Err(format!("{} is not a program source (a plain relative .cairn path)", file.name));
        }
        if !hex_digest(&file.before_sha256) || !hex_digest(&file.after_sha256) {
            return Err(format!("a digest of {} is not a SHA-256", file.name));
        }
        let (dir, name) = resolve(open, &file.name).map_err(|e| e.to_string())?;
        match dir.stat(name) {
            Ok(None) | Ok(Some(Stat { kind: Kind::File, .. })) => {}
            Ok(Some(_)) => return Err(format!("{} is not a regular file", file.name)),
            Err(e) => return Err(format!("{}: {e}", file.name)),
        }
        let (kept, stat) = open
            .entries
            .open_regular(&kept_name(entry.seq, i))
            .map_err(|e| format!("the kept content of {}: {e}", file.name))?;
        total = total.saturating_add(stat.len);
        if total > KEPT_BYTES {
            return Err(format!("its kept contents hold more than {KEPT_BYTES} bytes"));
        }
        if sha256_of(&kept, KEPT_BYTES).as_deref() != Some(file.before_sha256.as_str()) {
            return Err(format!("the kept content of {} does not match its digest", file.name));
        }
    }
    Ok(entry)
}

/// The content a file had before entry `seq` wrote it (its `index`), checked against its digest.
pub(super) fn kept(open: &Open, entry: &Entry, index: usize) -> Result<Vec<u8>, WriteError> {
    let file = &entry.files[index];
    let bytes = open
        .entries
        .read_regular(&kept_name(entry.seq, index), KEPT_BYTES)
        .map_err(|e| WriteError::Io(format!("cannot read the kept content of {}: {e}", file.name)))?;
    if sha256(&bytes) != file.before_sha256 {
        return Err(WriteError::Io(format!(
            "the journal's kept content of {} was changed; move .cairn/journal aside to go on",
            file.name
        )));
    }
    Ok(bytes)
}

pub(super) fn kept_name(seq: u64, index: usize) -> String {
    format!("{seq:08}.{index}.before")
}

fn hex_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The SHA-256 of what `reader` yields, reading at most `limit` bytes (`None` past it or on an
/// error).
fn sha256_of(mut reader: impl Read, limit: u64) -> Option<String> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > limit {
            return None;
        }
        hasher.update(&buffer[..n]);
    }
    Some(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The entries as the listing shows them, in order of `seq`. Names whose number is out of range
/// are not entries.
pub(super) fn list(open: &Open) -> Result<Vec<Listed>, WriteError> {
    let names = open.entries.names().map_err(|e| io("read the journal", &e))?;
    let mut entries: Vec<Listed> = Vec::new();
    let mut markers: Vec<(u64, State)> = Vec::new();
    for name in names {
        let Some((seq, rest)) = name.split_once('.') else { continue };
        let Ok(seq) = seq.parse::<u64>() else { continue };
        if seq > MAX_SEQ {
            continue;
        }
        match rest {
            "write.json" => entries.push(Listed { seq, reverts: None, state: State::Pending, file: name }),
            "committed" => markers.push((seq, State::Committed)),
            "rolled-back" => markers.push((seq, State::RolledBack)),
            "quarantined" => markers.push((seq, State::Quarantined)),
            other => {
                if let Some(reverts) =
                    other.strip_prefix("undo-").and_then(|r| r.strip_suffix(".json")).and_then(|r| r.parse().ok())
                {
                    entries.push(Listed { seq, reverts: Some(reverts), state: State::Pending, file: name });
                }
            }
        }
    }
    for entry in &mut entries {
        // Quarantine wins over everything, rolled-back over committed (be strict if a planted
        // journal ever holds both).
        for state in [State::Quarantined, State::RolledBack, State::Committed] {
            if markers.contains(&(entry.seq, state)) {
                entry.state = state;
                break;
            }
        }
    }
    entries.sort_by_key(|e| e.seq);
    Ok(entries)
}

/// Writes a sealed entry under its final name, created exclusively; `durable`: synced, with
/// its directory, before this returns (a write-back of several files, which recovery may have
/// to roll back from it; docs/durability.md, "Why these syncs").
/// Returns the entry's file name.
pub(super) fn store(open: &Open, entry: &Entry, reverts: Option<u64>, durable: bool) -> Result<String, WriteError> {
    let text = serde_json::to_string(entry).map_err(|e| WriteError::Io(e.to_string()))?;
    let name = match reverts {
        None => format!("{:08}.write.json", entry.seq),
        Some(r) => format!("{:08}.undo-{r:08}.json", entry.seq),
    };
    // A crash while writing it leaves a damaged pending entry, which no file depended on yet
    // (the swaps come after the fsyncs), and which recovery quarantines.
    let _ = open.entries.remove(&name);
    let result = (|| -> std::io::Result<()> {
        let mut file = open.entries.create_from_spare(SPARE, &name)?;
        file.write_all(text.as_bytes())?;
        if durable {
            file.sync_all()?;
            open.entries.sync()?;
        }
        Ok(())
    })();
    result.map_err(|e| io("write the journal entry", &e)).map(|_| name)
}

/// Makes entries stored without a sync durable, with the journal's directory (their kept links
/// and markers): best effort, after the answer (`Journal::tidy`).
pub(super) fn sync<'a>(open: &Open, files: impl Iterator<Item = &'a str>) {
    for file in files {
        if let Ok((entry, _)) = open.entries.open_regular(file) {
            let _ = entry.sync_all();
        }
    }
    let _ = open.entries.sync();
}

/// The empty file the journal keeps for its next entry (`Dir::keep_spare`); not an entry's
/// name, so the listing never sees it.
pub(super) const SPARE: &str = "spare";

/// Marks the entry stored as `file` `committed`: the marker is a second name of the entry's
/// file (its name is all it says; a link allocates no inode), or an empty file where the file
/// system cannot link.
pub(super) fn mark_committed(open: &Open, seq: u64, file: &str) -> Result<(), WriteError> {
    let name = format!("{seq:08}.committed");
    let _ = open.entries.remove(&name);
    if open.entries.link(file, &open.entries, &name).is_ok() {
        return Ok(());
    }
    mark(open, seq, "committed")
}

/// Marks an entry `committed` or `rolled-back` (an empty file: its name is its content).
pub(super) fn mark(open: &Open, seq: u64, state: &str) -> Result<(), WriteError> {
    let name = format!("{seq:08}.{state}");
    let _ = open.entries.remove(&name);
    open.entries.create_new(&name, 0o600).map_err(|e| io("mark a journal entry", &e))?;
    Ok(())
}

/// Marks an entry quarantined, with the reason as its content.
pub(super) fn quarantine(open: &Open, seq: u64, why: &str) -> Result<(), WriteError> {
    let name = format!("{seq:08}.quarantined");
    let _ = open.entries.remove(&name);
    let mut file = open.entries.create_new(&name, 0o600).map_err(|e| io("quarantine a journal entry", &e))?;
    let _ = file.write_all(why.as_bytes());
    let _ = open.entries.sync();
    Ok(())
}

/// Drops the oldest entries beyond `keep` that are no longer pending.
pub(super) fn prune(open: &Open, keep: usize) {
    let Ok(entries) = list(open) else { return };
    if entries.len() <= keep {
        return;
    }
    for entry in &entries[..entries.len() - keep] {
        if entry.state == State::Pending {
            continue;
        }
        let _ = open.entries.remove(&entry.file);
        for i in 0..ENTRY_FILES {
            let kept = kept_name(entry.seq, i);
            if !matches!(open.entries.stat(&kept), Ok(Some(_))) {
                break;
            }
            let _ = open.entries.remove(&kept);
        }
        for marker in ["committed", "rolled-back", "quarantined"] {
            let _ = open.entries.remove(&format!("{:08}.{marker}", entry.seq));
        }
    }
}

/// Lower-case hex SHA-256.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
