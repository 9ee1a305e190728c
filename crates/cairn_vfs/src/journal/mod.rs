//! Writing files back for the hosts: atomically, all or none, through a journal, under a
//! project lock, never outside the project and never over a concurrent save — and `cairn undo`.
//!
//! Every write-back of a program's files is one *entry* in `.cairn/journal/` beside the program
//! (the directory of its manifest, or of its one file; `entry.rs` has the format and its seal).
//! Under the advisory lock on `.cairn/lock` (so two servers, or a server and `cairn undo`, never
//! interleave) a write-back
//!
//! 1. recovers any entry a crash left pending (see [`Journal::recover`]);
//! 2. checks that each file still holds the content the caller judged against (fail-closed:
//!    any difference refuses the whole write, naming the files);
//! 3. stages each new content beside its file (created exclusively, fsynced), keeps each file's
//!    content before (a hard link to it, or a copy), writes the sealed entry — synced with the
//!    journal's directory when it names several files, which recovery may have to put back; a
//!    one-file write is whole on either side of its swap (docs/durability.md, "Why these
//!    syncs") — and the entry is *pending* while it has no marker;
//! 4. swaps each file in (`swap.rs`: re-read just before a `RENAME_EXCHANGE`, check what came
//!    out); a save that landed in the window reverses that swap and every earlier one that still
//!    holds exactly what was swapped in — a file saved after its swap keeps the save — and the
//!    write-back answers [`WriteError::Conflict`];
//! 5. fsyncs the directories of the written files and marks the entry `committed` (a second
//!    name of its file). Pruning the oldest entries is left to [`Journal::tidy`] by recorded
//!    writes (their host calls it after answering).
//!
//! Recovery of a pending entry (one rule, [`plan`], which the read-only view shares): every
//! file at its content after → the write happened, the entry is completed; otherwise each file
//! at its content after is put back (by the same verified swap, so a save made meanwhile is
//! kept) and the entry is rolled back; files at neither content are left alone and reported.
//! A process killed anywhere leaves each file whole and a multi-file write-back never half done;
//! because an all-moved entry is completed, the committed marker needs no fsync of its own.
//!
//! Confinement (docs/security.md): every file is reached through [`crate::safe::Dir`] — each
//! directory opened without following a symbolic link, each file opened `O_NOFOLLOW`, staged
//! names created `O_EXCL` — and a write-back writes only program sources (plain relative `.cairn`
//! paths with no hidden component). Before recovery, undo or the view acts on an entry it is
//! validated, its seal first (an entry this user's toolchain did not write is never trusted); an
//! entry that fails is quarantined (by writers), reported, and never applied.
//!
//! Test hooks ([`Hooks`]): a write-back passes named points (`stored`, `before-swap`,
//! `swapped`) where a test may pause it (from the environment, for a child process that is
//! killed there) or act inside its window (a callback).

mod entry;
pub mod ledger;
#[cfg(test)]
mod ledger_tests;
mod swap;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use self::entry::{Entry, EntryFile, MAX_SEQ, SCHEMA, State, check, kept, list, mark, prune, quarantine, store};
use self::swap::{Expect, FILE_BYTES, Staged, keep, stage, staged_name, swap_in, swap_out, unstage};
use crate::safe::{self, Dir, ReadError, Stat};

pub(crate) use self::entry::sha256;

/// The directory beside a program that holds the journal and the lock.
pub const STATE_DIR: &str = ".cairn";
/// How many entries the journal keeps (older ones are pruned after a commit).
const KEEP: usize = 64;
/// How many of the newest entries a tidy syncs.
const TIDY_SYNCS: usize = 4;

/// One file to write: where it is, how the caller names it, what it must still hold, and its
/// new content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the journal's root: `/`-separated plain names, a `.cairn` file.
    pub name: String,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
    /// The SHA-256 of `before` (lowercase hex) when the caller holds it already (a session
    /// pinned the file by it), so the write does not hash the file again; `None`: computed.
    /// It must be the digest of `before`: recovery tells "before" from "after" by it.
    pub before_sha256: Option<String>,
}

/// Why a write-back or an undo did not happen. Nothing was changed in any case (a file saved
/// meanwhile keeps its save).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// These files (sorted names) no longer hold what the caller judged against.
    Changed(Vec<String>),
    /// A save landed on these files while they were being written: the write-back was
    /// reversed and the saved content kept.
    Conflict(Vec<String>),
    /// Undo found no write-back to revert.
    NothingToUndo,
    /// The file system refused, or a path is not confined to the project (after restoring
    /// whatever had been swapped already).
    Io(String),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Changed(files) => write!(f, "changed since: {}", files.join(", ")),
            WriteError::Conflict(files) => write!(f, "saved while being written: {}", files.join(", ")),
            WriteError::NothingToUndo => f.write_str("no write-back to undo"),
            WriteError::Io(why) => f.write_str(why),
        }
    }
}

/// What [`Journal::recover`] did with an entry a crash left pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub seq: u64,
    pub outcome: Outcome,
    /// Files put back to their content before the interrupted write.
    pub restored: Vec<String>,
    /// Files that held neither content (or were saved during recovery) and were left alone.
    pub foreign: Vec<String>,
}

/// How a pending entry ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every file held its content after: the write happened.
    Completed,
    /// The write was undone (or never reached a file).
    RolledBack,
    /// The entry failed validation (the reason); nothing it names was touched.
    Quarantined(String),
}

/// What [`Journal::write_recorded`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// Wrote the change: the journal entry, the sequence number of the ledger's record that
    /// completed it (what a checkpoint says it has seen), and the SHA-256 of each file's new
    /// content, in the order of the changes (so a caller need not hash what it wrote again).
    Written { entry: u64, ledger: u64, after_sha256: Vec<String> },
    /// The key's write was complete already: the answer its intent recorded.
    Earlier(serde_json::Value),
}

/// What an undo reverted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The entry reverted.
    pub seq: u64,
    pub files: Vec<String>,
}

/// The journal of one program's directory.
#[derive(Debug, Clone)]
pub struct Journal {
    root: PathBuf,
    hooks: Hooks,
}

/// A test's callback at a write-back's named points.
type Hook = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// What a write-back does at its named points (`stored`, `before-swap`, `swapped`): nothing,
/// unless a test asked. From the environment, `CAIRN_WRITEBACK_PAUSE_MS=<n>` sleeps `n` ms at
/// `swapped` or, with `CAIRN_WRITEBACK_PAUSE_AT=<point>`, at that point; a test in process
/// installs a callback instead ([`Journal::with_hook`]).
#[derive(Clone, Default)]
struct Hooks {
    pause: Option<(String, u64)>,
    callback: Option<Hook>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").field("pause", &self.pause).field("callback", &self.callback.is_some()).finish()
    }
}

impl Hooks {
    fn from_environment() -> Hooks {
        let ms = std::env::var("CAIRN_WRITEBACK_PAUSE_MS").ok().and_then(|v| v.parse::<u64>().ok());
        let at = std::env::var("CAIRN_WRITEBACK_PAUSE_AT").unwrap_or_else(|_| "swapped".into());
        Hooks { pause: ms.map(|ms| (at, ms)), callback: None }
    }

    fn point(&self, name: &str) {
        crate::fault::point(if name == "swapped" { "after-rename" } else { name });
        if let Some((at, ms)) = &self.pause
            && at == name
        {
            std::thread::sleep(std::time::Duration::from_millis(*ms));
        }
        if let Some(callback) = &self.callback {
            callback(name);
        }
    }
}

/// The open directories of one journal operation.
struct Open {
    root: Dir,
    /// `.cairn` (the lock, the ledger).
    state: Dir,
    entries: Dir,
}

/// What recovery does with a pending entry ([`plan`]).
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    Complete,
    /// Indices of files to put back, and of files at neither content.
    RollBack {
        restore: Vec<usize>,
        foreign: Vec<usize>,
    },
}

impl Journal {
    /// The journal of the program whose files live under `root` (a trusted, canonical path).
    pub fn new(root: &Path) -> Journal {
        Journal { root: root.to_path_buf(), hooks: Hooks::from_environment() }
    }

    /// The same journal, calling `hook` with the name of each point a write-back passes
    /// (`stored`, `before-swap`, `swapped`): for tests that act inside a write-back's window.
    pub fn with_hook(self, hook: Hook) -> Journal {
        Journal { hooks: Hooks { callback: Some(hook), ..self.hooks }, ..self }
    }

    /// Opens the root and the journal's directories; `create` makes the missing ones. `None`
    /// when not creating and there is no journal. A symbolic link at `.cairn` or
    /// `.cairn/journal` is an error.
    fn open(&self, create: bool) -> Result<Option<Open>, WriteError> {
        let root = Dir::root(&self.root).map_err(|e| io(&format!("open {}", self.root.display()), &e))?;
        let state = match root.subdir(STATE_DIR, create) {
            Ok(state) => state,
            Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io("open the project's .cairn directory", &e)),
        };
        let entries = match state.subdir("journal", create) {
            Ok(entries) => entries,
            Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io("open the journal directory .cairn/journal", &e)),
        };
        Ok(Some(Open { root, state, entries }))
    }

    /// Takes the project lock, exclusive (blocking while another process holds it).
    fn lock(&self) -> Result<(Open, File), WriteError> {
        let open = self.open(true)?.ok_or_else(|| WriteError::Io("cannot create the journal".into()))?;
        let file = open.state.open_lock("lock", true).map_err(|e| io("open the project lock .cairn/lock", &e))?;
        file.lock().map_err(|e| io("take the project lock", &e))?;
        Ok((open, file))
    }

    /// Recovers what a crash left pending (see the module comment). Entries that fail
    /// validation are quarantined and reported, never applied.
    pub fn recover(&self) -> Result<Vec<Recovered>, WriteError> {
        if self.open(false)?.is_none() {
            return Ok(Vec::new());
        }
        let (open, _lock) = self.lock()?;
        self.recover_locked(&open).map(|(recovered, ..)| recovered)
    }

    /// Under the lock: recovers the journal's pending entries, then settles the effect
    /// ledger's open intents by what the files hold after that (`ledger.rs`). Also gives the
    /// newest entry's `seq` (recovery adds none), from which the next entry is numbered.
    fn recover_locked(&self, open: &Open) -> Result<(Vec<Recovered>, ledger::Ledger, u64), WriteError> {
        let (recovered, last) = self.recover_entries(open)?;
        let mut ledger = ledger::read(open)?;
        ledger::settle(open, &mut ledger)?;
        Ok((recovered, ledger, last))
    }

    /// Recovers the pending entries; with the newest entry's `seq` (0: none).
    fn recover_entries(&self, open: &Open) -> Result<(Vec<Recovered>, u64), WriteError> {
        let mut out = Vec::new();
        let listed = list(open)?;
        let last = listed.last().map_or(0, |e| e.seq);
        for listed in listed.into_iter().filter(|e| e.state == State::Pending) {
            let entry = match check(open, &listed) {
                Ok(entry) => entry,
                Err(why) => {
                    quarantine(open, listed.seq, &why)?;
                    out.push(Recovered {
                        seq: listed.seq,
                        outcome: Outcome::Quarantined(why),
                        restored: Vec::new(),
                        foreign: Vec::new(),
                    });
                    continue;
                }
            };
            for file in &entry.files {
                if let Ok((dir, name)) = resolve(open, &file.name) {
                    let _ = dir.remove(&staged_name(name));
                }
            }
            let names =
                |indices: &[usize]| -> Vec<String> { indices.iter().map(|&i| entry.files[i].name.clone()).collect() };
            let recovered = match plan(&entry, &current_digests(open, &entry, &HashMap::new())) {
                Plan::Complete => {
                    mark(open, entry.seq, "committed")?;
                    Recovered { seq: entry.seq, outcome: Outcome::Completed, restored: Vec::new(), foreign: Vec::new() }
                }
                Plan::RollBack { restore, mut foreign } => {
                    let mut restored = Vec::new();
                    for &i in &restore {
                        let file = &entry.files[i];
                        let (dir, name) = resolve(open, &file.name)?;
                        let mode = dir.stat(name).ok().flatten().map_or(0o644, |s| s.mode);
                        let mut staged = stage(dir, name, &kept(open, &entry, i)?, mode)?;
                        // Put back only what still holds the interrupted write's content: a
                        // save made meanwhile is kept (and reported as foreign).
                        match swap_in(
                            open,
                            &mut staged,
                            &Expect::Digest(&file.after_sha256),
                            None,
                            &self.hooks,
                            &file.name,
                        ) {
                            Ok(()) => restored.push(i),
                            Err(WriteError::Conflict(_)) => foreign.push(i),
                            Err(error) => {
                                unstage(&staged);
                                return Err(error);
                            }
                        }
                        unstage(&staged);
                    }
                    sync_dirs(open, entry.files.iter().map(|f| f.name.as_str()));
                    mark(open, entry.seq, "rolled-back")?;
                    foreign.sort_unstable();
                    Recovered {
                        seq: entry.seq,
                        outcome: Outcome::RolledBack,
                        restored: names(&restored),
                        foreign: names(&foreign),
                    }
                }
            };
            out.push(recovered);
        }
        Ok((out, last))
    }

    /// The content the program's files will have once the pending entries are recovered, for the
    /// files recovery would put back — without writing anything (the read-only commands read
    /// through it, so they never build a write that recovery will roll back). Entries are
    /// followed in order, as recovery follows them; an entry that fails validation is skipped,
    /// as recovery never applies it. Takes the lock shared when the lock file exists, so a
    /// write-back in progress is waited for.
    pub fn pending_view(&self) -> Result<Vec<(String, Vec<u8>)>, WriteError> {
        let Some(open) = self.open(false)? else { return Ok(Vec::new()) };
        if !list(&open)?.iter().any(|e| e.state == State::Pending) {
            return Ok(Vec::new());
        }
        let _lock = match open.root.subdir(STATE_DIR, false).and_then(|state| state.open_lock("lock", false)) {
            Ok(file) => {
                file.lock_shared().map_err(|e| io("take the project lock", &e))?;
                Some(file)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io("open the project lock .cairn/lock", &e)),
        };
        let mut view: HashMap<String, Vec<u8>> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        for listed in list(&open)?.into_iter().filter(|e| e.state == State::Pending) {
            let Ok(entry) = check(&open, &listed) else { continue };
            if let Plan::RollBack { restore, .. } = plan(&entry, &current_digests(&open, &entry, &view)) {
                for i in restore {
                    let name = entry.files[i].name.clone();
                    if !view.contains_key(&name) {
                        order.push(name.clone());
                    }
                    view.insert(name, kept(&open, &entry, i)?);
                }
            }
        }
        Ok(order.into_iter().filter_map(|name| view.remove(&name).map(|bytes| (name, bytes))).collect())
    }

    /// Writes `changes` as one write-back (see the module comment). The names are relative to
    /// the journal's root.
    pub fn write(&self, changes: &[FileChange]) -> Result<u64, WriteError> {
        for change in changes {
            if !entry::writable_name(&change.name) {
                return Err(WriteError::Io(format!(
                    "{} is not a program source inside the program's directory (a plain relative .cairn path)",
                    change.name
                )));
            }
        }
        let (open, _lock) = self.lock()?;
        let (_, _, last) = self.recover_locked(&open)?;
        // A `complete` not yet synced must be on disk before a file it settles changes again.
        ledger::sync(&open);
        let seq = apply(&open, changes, &digests(changes), last, None, &self.hooks)?;
        prune(&open, KEEP);
        Ok(seq)
    }

    /// Drops the oldest journal entries beyond the 64 kept, and makes the empty file the next
    /// entry will take (`Dir::keep_spare`), under the lock. A recorded write
    /// ([`Journal::write_recorded`]) leaves this to its caller, to do after the answer: on a
    /// file system mounted with `discard`, removing an entry's kept content waits for the
    /// device, and making a file can take a third of a millisecond.
    ///
    /// It also makes durable what the answer did not wait for (docs/durability.md, "Why these
    /// syncs"): the ledger (its last `complete`) and the journal's entries and directory. When
    /// another process holds the lock, nothing is done now (the next tidy does it): a server
    /// never waits on another writer after it answered.
    pub fn tidy(&self) -> Result<(), WriteError> {
        let Some(open) = self.open(false)? else { return Ok(()) };
        let file = open.state.open_lock("lock", true).map_err(|e| io("open the project lock .cairn/lock", &e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(()),
            Err(std::fs::TryLockError::Error(e)) => return Err(io("take the project lock", &e)),
        }
        ledger::sync(&open);
        // The newest few: a tidy skipped while a write held the lock left its entry unsynced
        // (syncing a file that is already on disk costs little).
        let listed = list(&open)?;
        entry::sync(&open, listed.iter().rev().take(TIDY_SYNCS).map(|e| e.file.as_str()));
        prune(&open, KEEP);
        open.entries.keep_spare(entry::SPARE).map_err(|e| io("keep a spare journal entry", &e))
    }

    /// Writes `changes` as one write-back recorded in the effect ledger (`ledger.rs`) — its
    /// caller then calls [`Journal::tidy`], after answering: under
    /// the project lock, held from the intent to its settling record, after recovery has
    /// settled whatever a crash left open, the intent is appended (durable) before any file is
    /// touched, the write goes through the journal, and `complete` (or `not-applied`, when the
    /// journal refused) follows. A key whose write is already complete is not written again:
    /// the answer its intent recorded comes back ([`Recorded::Earlier`]).
    pub fn write_recorded(&self, changes: &[FileChange], intent: &ledger::Intent) -> Result<Recorded, WriteError> {
        for change in changes {
            if !entry::writable_name(&change.name) {
                return Err(WriteError::Io(format!(
                    "{} is not a program source inside the program's directory (a plain relative .cairn path)",
                    change.name
                )));
            }
        }
        let (open, _lock) = self.lock()?;
        let (_, mut ledger, last) = self.recover_locked(&open)?;
        if let Some(ledger::Settled::Complete(answer)) = ledger.settled(&intent.key) {
            return Ok(Recorded::Earlier(answer));
        }
        // Each file's digests, taken once (the intent and the journal's entry both record
        // them), on a second thread while this one checks the bases and stages the new
        // contents, whose sync is the longest wait of a write-back.
        let (digests, prepared) = std::thread::scope(|scope| {
            let hashing = scope.spawn(|| digests(changes));
            let prepared = prepare(&open, changes);
            (hashing.join(), prepared)
        });
        let digests = match digests {
            Ok(digests) => digests,
            Err(_) => {
                if let Ok(prepared) = prepared {
                    prepared.abandon();
                }
                return Err(WriteError::Io("hashing the changed files failed".into()));
            }
        };
        if let Err(error) = ledger::intend(&open, &mut ledger, intent, changes, &digests) {
            if let Ok(prepared) = prepared {
                prepared.abandon();
            }
            return Err(error);
        }
        crate::fault::point("after-intent");
        match prepared.and_then(|prepared| finish(&open, changes, &digests, prepared, last, None, &self.hooks)) {
            Ok(seq) => {
                crate::fault::point("before-completion");
                let completed = ledger::complete(&open, &mut ledger, &intent.key, seq)?;
                crate::fault::point("after-completion");
                ledger::compact(&open, &mut ledger);
                let after_sha256 = digests.iter().map(|(_, after)| after.clone()).collect();
                Ok(Recorded::Written { entry: seq, ledger: completed, after_sha256 })
            }
            Err(error) => {
                // Nothing of the change stands (the journal reversed it, or never began); say
                // so. Should this append fail, the next lock holder settles the intent by the
                // files.
                let _ = ledger::not_applied(&open, &mut ledger, &intent.key);
                Err(error)
            }
        }
    }

    /// How the ledger says the write of `key` ended (`None`: the ledger has no such key). Takes
    /// the lock shared, so a write in progress is waited for; writes nothing (an intent a
    /// crash left open reads [`ledger::Settled::Open`] until a writer settles it).
    pub fn settled(&self, key: &str) -> Result<Option<ledger::Settled>, WriteError> {
        let Some(open) = self.open(false)? else { return Ok(None) };
        let _lock = match open.state.open_lock("lock", false) {
            Ok(file) => {
                file.lock_shared().map_err(|e| io("take the project lock", &e))?;
                Some(file)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io("open the project lock .cairn/lock", &e)),
        };
        Ok(ledger::read(&open)?.settled(key))
    }

    /// Recovers the journal and settles the ledger (as every writer does first), then says, for
    /// each of `sessions` (their identities), the key of its newest intent and how that write
    /// ended — among the intents after the ledger's record `after` (what the caller had
    /// seen); a session with no such intent is left out. How a restarted server learns what
    /// became of the writes its sessions were making when it died. A program never written
    /// through the journal has nothing to recover (and gets no `.cairn/`).
    pub fn recover_sessions(
        &self,
        sessions: &[String],
        after: u64,
    ) -> Result<Vec<(String, String, ledger::Settled)>, WriteError> {
        if self.open(false)?.is_none() {
            return Ok(Vec::new());
        }
        let (open, _lock) = self.lock()?;
        let (_, ledger, _) = self.recover_locked(&open)?;
        let mut out = Vec::new();
        for session in sessions {
            if let Some(intent) = ledger.newest_intent_of(session).filter(|i| i.seq > after)
                && let Some(settled) = ledger.settled(&intent.key)
            {
                out.push((session.clone(), intent.key.clone(), settled));
            }
        }
        Ok(out)
    }

    /// Reverts the newest committed write-back not yet reverted (see the module comment).
    pub fn undo(&self) -> Result<Undone, WriteError> {
        let (open, _lock) = self.lock()?;
        self.recover_locked(&open)?;
        // A `complete` not yet synced must be on disk before undo puts its files back: else a
        // crash could settle the write `not-applied`, and its resend would apply it again.
        ledger::sync(&open);
        let listed = list(&open)?;
        let reverted: Vec<u64> =
            listed.iter().filter(|e| e.state == State::Committed).filter_map(|e| e.reverts).collect();
        let Some(last) = listed
            .iter()
            .rev()
            .find(|e| e.reverts.is_none() && e.state == State::Committed && !reverted.contains(&e.seq))
        else {
            return Err(WriteError::NothingToUndo);
        };
        let entry = match check(&open, last) {
            Ok(entry) => entry,
            Err(why) => {
                quarantine(&open, last.seq, &why)?;
                return Err(WriteError::Io(format!(
                    "the journal entry {} cannot be trusted ({why}); it was quarantined and nothing was changed",
                    last.seq
                )));
            }
        };
        let mut changes = Vec::new();
        let mut changed = Vec::new();
        for (i, file) in entry.files.iter().enumerate() {
            let (dir, name) = resolve(&open, &file.name)?;
            let current = match dir.read_regular(name, FILE_BYTES) {
                Ok(bytes) => bytes,
                Err(ReadError::Missing) => Vec::new(),
                Err(error) => return Err(WriteError::Io(format!("cannot read {}: {error}", file.name))),
            };
            if sha256(&current) != file.after_sha256 {
                changed.push(file.name.clone());
                continue;
            }
            changes.push(FileChange {
                name: file.name.clone(),
                before: current,
                after: kept(&open, &entry, i)?,
                before_sha256: Some(file.after_sha256.clone()),
            });
        }
        if !changed.is_empty() {
            changed.sort();
            return Err(WriteError::Changed(changed));
        }
        let newest = listed.last().map_or(0, |e| e.seq);
        apply(&open, &changes, &digests(&changes), newest, Some(last.seq), &self.hooks)?;
        prune(&open, KEEP);
        Ok(Undone { seq: last.seq, files: entry.files.iter().map(|f| f.name.clone()).collect() })
    }
}

/// The recovery rule for a pending entry, given each file's current digest (`None`: missing
/// or unreadable). One home: recovery applies it, the read-only view reads it.
fn plan(entry: &Entry, current: &[Option<String>]) -> Plan {
    let at = |i: usize, digest: &str| current[i].as_deref() == Some(digest);
    if (0..entry.files.len()).all(|i| at(i, &entry.files[i].after_sha256)) {
        return Plan::Complete;
    }
    let mut restore = Vec::new();
    let mut foreign = Vec::new();
    for (i, file) in entry.files.iter().enumerate() {
        if at(i, &file.before_sha256) {
            continue;
        }
        if at(i, &file.after_sha256) {
            restore.push(i);
        } else {
            foreign.push(i);
        }
    }
    Plan::RollBack { restore, foreign }
}

/// The SHA-256 of each change's `before` and `after` bytes, in order (`before`'s as the caller
/// gave it, when it did).
fn digests(changes: &[FileChange]) -> Vec<(String, String)> {
    changes
        .iter()
        .map(|c| {
            debug_assert!(c.before_sha256.as_ref().is_none_or(|d| *d == sha256(&c.before)), "a wrong digest of before");
            (c.before_sha256.clone().unwrap_or_else(|| sha256(&c.before)), sha256(&c.after))
        })
        .collect()
}

/// Under the lock: check the bases, stage, journal, swap in, commit. `digests` are the changes'
/// (`digests`), taken once by the caller.
fn apply(
    open: &Open,
    changes: &[FileChange],
    digests: &[(String, String)],
    last: u64,
    reverts: Option<u64>,
    hooks: &Hooks,
) -> Result<u64, WriteError> {
    let prepared = prepare(open, changes)?;
    finish(open, changes, digests, prepared, last, reverts, hooks)
}

/// A write-back's files judged and staged, not yet journaled or swapped ([`prepare`]).
struct Prepared<'a> {
    /// Each change's directory, name and identity as judged.
    judged: Vec<(Dir, &'a str, Stat)>,
    staged: Vec<Staged>,
}

impl Prepared<'_> {
    /// Gives up a prepared write: its staged files go (nothing was swapped).
    fn abandon(self) {
        self.staged.iter().for_each(unstage);
    }
}

/// Under the lock, the first half of a write-back: each file must hold its `before`
/// ([`WriteError::Changed`] names those that do not), then each new content is staged beside
/// its file, durable. A staged file is a hidden name beside its file that nothing reads; a
/// crash leaves it behind, and the next write-back of that file removes it (so does settling
/// an intent that names the file, when the crash came after the intent).
fn prepare<'a>(open: &Open, changes: &'a [FileChange]) -> Result<Prepared<'a>, WriteError> {
    let mut judged = Vec::new();
    let mut changed = Vec::new();
    for change in changes {
        let (dir, name) = resolve(open, &change.name)?;
        match dir.regular_holds(name, &change.before) {
            Ok((same, stat)) => {
                if !same {
                    changed.push(change.name.clone());
                }
                judged.push((dir, name, stat));
            }
            Err(ReadError::Missing) => changed.push(change.name.clone()),
            Err(error) => return Err(WriteError::Io(format!("cannot write {}: {error}", change.name))),
        }
    }
    if !changed.is_empty() {
        changed.sort();
        return Err(WriteError::Changed(changed));
    }
    // Stage every new content beside its file, durable before any swap.
    let mut staged: Vec<Staged> = Vec::new();
    for (change, (_, name, stat)) in changes.iter().zip(&judged) {
        let result = resolve(open, &change.name).and_then(|(dir, _)| stage(dir, name, &change.after, stat.mode));
        match result {
            Ok(one) => staged.push(one),
            Err(error) => {
                staged.iter().for_each(unstage);
                return Err(error);
            }
        }
    }
    Ok(Prepared { judged, staged })
}

/// Under the lock, the second half of a write-back ([`prepare`] made the first): keep each
/// file's old content, store the entry (numbered after `last`, the newest entry's `seq` as the
/// lock holder listed it), swap each file in, commit.
fn finish(
    open: &Open,
    changes: &[FileChange],
    digests: &[(String, String)],
    prepared: Prepared<'_>,
    last: u64,
    reverts: Option<u64>,
    hooks: &Hooks,
) -> Result<u64, WriteError> {
    let Prepared { judged, mut staged } = prepared;
    let Some(seq) = last.checked_add(1).filter(|s| *s <= MAX_SEQ) else {
        staged.iter().for_each(unstage);
        return Err(WriteError::Io("the journal's sequence is exhausted; move .cairn/journal aside to go on".into()));
    };
    let mut files = Vec::new();
    let mut linked = Vec::new();
    for (i, (change, (dir, name, stat))) in changes.iter().zip(&judged).enumerate() {
        match keep(open, seq, i, dir, name, stat, &change.before) {
            Ok(link) => linked.push(link),
            Err(error) => {
                staged.iter().for_each(unstage);
                return Err(error);
            }
        }
        files.push(EntryFile {
            name: change.name.clone(),
            before_sha256: digests[i].0.clone(),
            after_sha256: digests[i].1.clone(),
        });
    }
    let mut entry = Entry { schema: SCHEMA.into(), seq, files, mac: String::new() };
    // One file is whole before its swap and whole after it, so a crash anywhere leaves nothing
    // to roll back: its entry need not be durable before the swap (only several files need it).
    let durable_entry = changes.len() > 1;
    let stored = match entry.seal().and_then(|_| store(open, &entry, reverts, durable_entry)) {
        Ok(stored) => stored,
        Err(error) => {
            staged.iter().for_each(unstage);
            return Err(error);
        }
    };
    hooks.point("stored");
    for i in 0..staged.len() {
        let (change, (_, _, stat)) = (&changes[i], &judged[i]);
        let kept_link = linked[i].then(|| entry::kept_name(seq, i));
        let expect = Expect::Judged { bytes: &change.before, stat: *stat };
        let outcome = swap_in(open, &mut staged[i], &expect, kept_link.as_deref(), hooks, &change.name);
        if let Err(error) = outcome {
            // Reverse what was swapped in already — only where it still holds what was swapped
            // in; a file saved after its swap keeps the save and is named in the answer.
            let mut kept_saves = Vec::new();
            for (done, change) in staged[..i].iter_mut().zip(changes).rev() {
                if !swap_out(done, &change.after, &change.before) {
                    kept_saves.push(change.name.clone());
                }
            }
            staged.iter().for_each(unstage);
            let _ = mark(open, seq, "rolled-back");
            return Err(match error {
                WriteError::Conflict(mut files) => {
                    files.extend(kept_saves);
                    files.sort();
                    WriteError::Conflict(files)
                }
                other => other,
            });
        }
        hooks.point("swapped");
        if i + 1 < staged.len() {
            crate::fault::point("between-files");
        }
    }
    // The replaced contents live on in the journal's kept links; their staged names go.
    staged.iter().for_each(unstage);
    sync_dirs(open, entry.files.iter().map(|f| f.name.as_str()));
    // The write stands once swapped: a marker that cannot be made is recovery's to supply (an
    // entry whose files are all at "after" is completed), never a reason to say it failed.
    let _ = entry::mark_committed(open, seq, &stored);
    Ok(seq)
}

/// The directory (reached without a symbolic link) and file name of a relative name.
fn resolve<'a>(open: &Open, relative: &'a str) -> Result<(Dir, &'a str), WriteError> {
    if !plain(relative) {
        return Err(WriteError::Io(format!("{relative} is not a path inside the program's directory")));
    }
    let (dirs, name) = safe::split(relative);
    let dir = open
        .root
        .walk(dirs, false)
        .map_err(|e| WriteError::Io(format!("{relative} is not a path inside the program's directory: {e}")))?;
    Ok((dir, name))
}

/// A `/`-separated relative name of plain components (no `.`, `..`, empty part or backslash).
fn plain(relative: &str) -> bool {
    !relative.is_empty() && !relative.contains('\\') && relative.split('/').all(safe::is_component)
}

/// Each file's current digest (`None` when missing, unreadable, or not a regular file), as the
/// view has it where it has the file.
fn current_digests(open: &Open, entry: &Entry, view: &HashMap<String, Vec<u8>>) -> Vec<Option<String>> {
    entry
        .files
        .iter()
        .map(|file| {
            if let Some(bytes) = view.get(&file.name) {
                return Some(sha256(bytes));
            }
            let (dir, name) = resolve(open, &file.name).ok()?;
            dir.read_regular(name, FILE_BYTES).ok().map(|bytes| sha256(&bytes))
        })
        .collect()
}

/// Makes the swaps durable: fsyncs each directory that holds a written file.
fn sync_dirs<'a>(open: &Open, names: impl Iterator<Item = &'a str>) {
    let mut dirs: Vec<&str> = names.map(|n| safe::split(n).0).collect();
    dirs.sort();
    dirs.dedup();
    for dirs in dirs {
        if let Ok(dir) = open.root.walk(dirs, false) {
            let _ = dir.sync();
        }
    }
}

fn io(what: &str, error: &std::io::Error) -> WriteError {
    WriteError::Io(format!("cannot {what}: {error}"))
}
