//! Writing files back for the hosts: atomically, all or none, through a journal, under a
//! project lock, never outside the project — and `cairn undo`.
//!
//! Every write-back of a program's files is one *entry* in `.cairn/journal/` beside the program
//! (the directory of its manifest, or of its one file): for each file, its content before (kept
//! as a file of the journal: a hard link to the replaced file when the file system allows one,
//! else a copy) and the SHA-256 of its content before and after. Under the advisory lock on
//! `.cairn/lock` (so two servers, or a server and `cairn undo`, never interleave) a write-back
//!
//! 1. recovers any entry a crash left pending (see [`Journal::recover`]);
//! 2. checks that each file still holds the content the caller judged against (fail-closed:
//!    any difference refuses the whole write, naming the files);
//! 3. stages each new content beside its file (`.<name>.cairn-write`, created exclusively) and
//!    fsyncs it; keeps each file's content before; writes the entry and fsyncs the journal's
//!    directory: the entry is *pending* while it has no marker;
//! 4. per file, re-reads it (same inode, same bytes as judged) immediately before swapping the
//!    staged file in with `renameat2(RENAME_EXCHANGE)`, then checks what was swapped out: if an
//!    editor's save landed in between (in place or by its own rename), the swap is reversed, the
//!    files already swapped are put back and the write-back answers [`WriteError::Conflict`]
//!    with the editor's content kept;
//! 5. fsyncs the directories of the written files and marks the entry `committed`.
//!
//! Recovery of a pending entry (one rule, [`plan`], shared with the read-only view): every file
//! at its content after → the write happened, the entry is completed; otherwise each file at
//! its content after is put back to its content before and the entry is rolled back (files at
//! neither are left alone and reported as foreign). So a process killed anywhere leaves each
//! file whole, and a multi-file write-back is never left half done. Because a pending entry
//! whose files all moved is completed, the committed marker needs no fsync of its own: the
//! directory fsync of step 5 is the last one before the answer (docs/security.md has the
//! durability argument).
//!
//! Confinement (docs/security.md): every file is reached through [`crate::safe::Dir`] — each
//! directory opened without following a symbolic link, each file opened `O_NOFOLLOW`, staged
//! names created `O_EXCL` — so a planted link never redirects a write, a read or a removal
//! outside the project. An entry is validated before recovery or undo touches anything (names
//! plain and relative, digests well formed, kept contents present and matching their digests,
//! no link on the way); an entry that fails is *quarantined* (a marker beside it), reported,
//! and never applied.
//!
//! Entries are named `<seq>.write.json` or `<seq>.undo-<seq reverted>.json`, the kept contents
//! `<seq>.<i>.before`, markers `<seq>.committed`, `<seq>.rolled-back` and `<seq>.quarantined`,
//! so the journal's state is read from the directory listing alone. The content after a write
//! is kept as a digest only: it is what undo and recovery compare the file with.
//!
//! Test hooks ([`Hooks`]): a write-back passes named points (`stored`, `before-swap`,
//! `swapped`) where a test may pause it (from the environment, for a child process that is
//! killed there) or act inside its window (a callback).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::safe::{self, Dir, Kind, ReadError, Stat};

/// The directory beside a program that holds the journal and the lock.
pub const STATE_DIR: &str = ".cairn";
/// How many entries the journal keeps (older ones are pruned after a commit).
const KEEP: usize = 64;
/// The most files one entry may name.
const ENTRY_FILES: usize = 1024;
/// The largest entry file read back.
const ENTRY_BYTES: u64 = 1 << 20;
/// The largest file a write-back reads or writes (a source is at most 16,000,000 bytes, plus a
/// byte-order mark; a little room for what an editor may have grown it to).
const FILE_BYTES: u64 = 64 << 20;

/// One file to write: where it is, how the caller names it, what it must still hold, and its
/// new content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the journal's root, `/`-separated plain names.
    pub name: String,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

/// Why a write-back or an undo did not happen. Nothing was changed in any case.
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
    /// Files that held neither content and were left alone.
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

/// What an undo reverted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The entry reverted.
    pub seq: u64,
    pub files: Vec<String>,
}

/// An entry's content (immutable once written).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Entry {
    schema: String,
    seq: u64,
    files: Vec<EntryFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    name: String,
    before_sha256: String,
    after_sha256: String,
}

/// What the listing says about one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    seq: u64,
    /// For an undo: the entry it reverts.
    reverts: Option<u64>,
    state: State,
    file: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Committed,
    RolledBack,
    Quarantined,
}

/// The journal of one program's directory.
#[derive(Debug, Clone)]
pub struct Journal {
    root: PathBuf,
    hooks: Hooks,
}

/// What a write-back does at its named points (`stored`, `before-swap`, `swapped`): nothing,
/// unless a test asked. From the environment, `CAIRN_WRITEBACK_PAUSE_MS=<n>` sleeps `n` ms at
/// `swapped` or, with `CAIRN_WRITEBACK_PAUSE_AT=<point>`, at that point; a test in process
/// installs a callback instead ([`Journal::with_hook`]).
#[derive(Clone, Default)]
struct Hooks {
    pause: Option<(String, u64)>,
    callback: Option<std::sync::Arc<dyn Fn(&str) + Send + Sync>>,
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
    entries: Dir,
}

/// A validated entry: its files resolved inside the root, its kept contents read and checked.
struct Checked {
    entry: Entry,
    kept: Vec<Vec<u8>>,
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
    pub fn with_hook(self, hook: std::sync::Arc<dyn Fn(&str) + Send + Sync>) -> Journal {
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
        Ok(Some(Open { root, entries }))
    }

    /// Takes the project lock, exclusive (blocking while another process holds it).
    fn lock(&self) -> Result<(Open, File), WriteError> {
        let open = self.open(true)?.ok_or_else(|| WriteError::Io("cannot create the journal".into()))?;
        let state = open.root.subdir(STATE_DIR, false).map_err(|e| io("open .cairn", &e))?;
        let file = state.open_lock("lock", true).map_err(|e| io("open the project lock .cairn/lock", &e))?;
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
        self.recover_locked(&open)
    }

    fn recover_locked(&self, open: &Open) -> Result<Vec<Recovered>, WriteError> {
        let mut out = Vec::new();
        for listed in list(open)?.into_iter().filter(|e| e.state == State::Pending) {
            let checked = match check(open, &listed) {
                Ok(checked) => checked,
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
            let entry = &checked.entry;
            for file in &entry.files {
                remove_staged(open, &file.name);
            }
            let names =
                |indices: &[usize]| -> Vec<String> { indices.iter().map(|&i| entry.files[i].name.clone()).collect() };
            let recovered = match plan(entry, &current_digests(open, entry)) {
                Plan::Complete => {
                    mark(open, entry.seq, "committed")?;
                    Recovered { seq: entry.seq, outcome: Outcome::Completed, restored: Vec::new(), foreign: Vec::new() }
                }
                Plan::RollBack { restore, foreign } => {
                    for &i in &restore {
                        let (dir, name) = resolve(open, &entry.files[i].name)?;
                        replace(&dir, name, &checked.kept[i], None)?;
                    }
                    sync_dirs(open, entry.files.iter().map(|f| f.name.as_str()));
                    mark(open, entry.seq, "rolled-back")?;
                    Recovered {
                        seq: entry.seq,
                        outcome: Outcome::RolledBack,
                        restored: names(&restore),
                        foreign: names(&foreign),
                    }
                }
            };
            out.push(recovered);
        }
        Ok(out)
    }

    /// The content the program's files will have once a pending entry is recovered, for the
    /// files recovery would put back — without writing anything (the read-only commands read
    /// through it, so they never build a write that recovery will roll back). Takes the lock
    /// shared when the lock file exists, so a write-back in progress is waited for.
    pub fn pending_view(&self) -> Result<Vec<(String, Vec<u8>)>, WriteError> {
        let Some(open) = self.open(false)? else { return Ok(Vec::new()) };
        let listed = list(&open)?;
        if !listed.iter().any(|e| e.state == State::Pending) {
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
        let mut view = Vec::new();
        for listed in list(&open)?.into_iter().filter(|e| e.state == State::Pending) {
            // An entry that fails validation is never applied, so it changes nothing here.
            let Ok(checked) = check(&open, &listed) else { continue };
            if let Plan::RollBack { restore, .. } = plan(&checked.entry, &current_digests(&open, &checked.entry)) {
                for i in restore {
                    view.push((checked.entry.files[i].name.clone(), checked.kept[i].clone()));
                }
            }
        }
        Ok(view)
    }

    /// Writes `changes` as one write-back (see the module comment). The names are relative to
    /// the journal's root.
    pub fn write(&self, changes: &[FileChange]) -> Result<u64, WriteError> {
        let (open, _lock) = self.lock()?;
        self.recover_locked(&open)?;
        apply(&open, changes, None, &self.hooks)
    }

    /// Reverts the newest committed write-back not yet reverted (see the module comment).
    pub fn undo(&self) -> Result<Undone, WriteError> {
        let (open, _lock) = self.lock()?;
        self.recover_locked(&open)?;
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
        let checked = match check(&open, last) {
            Ok(checked) => checked,
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
        for (file, kept) in checked.entry.files.iter().zip(checked.kept) {
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
            changes.push(FileChange { name: file.name.clone(), before: current, after: kept });
        }
        if !changed.is_empty() {
            changed.sort();
            return Err(WriteError::Changed(changed));
        }
        apply(&open, &changes, Some(last.seq), &self.hooks)?;
        Ok(Undone { seq: last.seq, files: checked.entry.files.iter().map(|f| f.name.clone()).collect() })
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

/// A file about to be written: where it is, what it was when judged.
struct Target<'a> {
    change: &'a FileChange,
    dir: Dir,
    name: &'a str,
    stat: Stat,
    staged: String,
    /// Whether it was swapped in by exchange (else renamed, or not yet written).
    exchanged: bool,
}

/// Under the lock: check the bases, stage, journal, swap in, commit.
fn apply(open: &Open, changes: &[FileChange], reverts: Option<u64>, hooks: &Hooks) -> Result<u64, WriteError> {
    let mut targets = Vec::new();
    let mut changed = Vec::new();
    for change in changes {
        let (dir, name) = resolve(open, &change.name)?;
        match dir.read_regular_stat(name, FILE_BYTES) {
            Ok((bytes, stat)) => {
                if bytes != change.before {
                    changed.push(change.name.clone());
                }
                targets.push(Target { change, dir, name, stat, staged: staged_name(name), exchanged: false });
            }
            Err(ReadError::Missing) => changed.push(change.name.clone()),
            Err(error) => return Err(WriteError::Io(format!("cannot write {}: {error}", change.name))),
        }
    }
    if !changed.is_empty() {
        changed.sort();
        return Err(WriteError::Changed(changed));
    }
    let seq = list(open)?.last().map_or(1, |e| e.seq + 1);
    // Stage every new content beside its file, durable before any swap.
    for target in &targets {
        if let Err(error) = stage(target) {
            remove_all_staged(&targets);
            return Err(error);
        }
    }
    let mut files = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        if let Err(error) = keep(open, seq, i, target) {
            remove_all_staged(&targets);
            return Err(error);
        }
        files.push(EntryFile {
            name: target.change.name.clone(),
            before_sha256: sha256(&target.change.before),
            after_sha256: sha256(&target.change.after),
        });
    }
    let entry = Entry { schema: "cairn.journal/2".into(), seq, files };
    if let Err(error) = store(open, &entry, reverts) {
        remove_all_staged(&targets);
        return Err(error);
    }
    hooks.point("stored");
    for i in 0..targets.len() {
        let outcome = swap_in(open, seq, i, &mut targets[i], hooks);
        if let Err(error) = outcome {
            // Put back what was swapped in already; the entry then says rolled-back.
            for done in targets[..i].iter().rev() {
                swap_out(done);
            }
            remove_all_staged(&targets);
            let _ = mark(open, seq, "rolled-back");
            return Err(error);
        }
        hooks.point("swapped");
    }
    // The replaced contents live on in the journal's kept links; their staged names go.
    for target in &targets {
        let _ = target.dir.remove(&target.staged);
    }
    sync_dirs(open, entry.files.iter().map(|f| f.name.as_str()));
    mark(open, seq, "committed")?;
    prune(open);
    Ok(seq)
}

/// Writes a target's new content to its staged name (created exclusively, with the file's
/// mode) and makes it durable.
fn stage(target: &Target<'_>) -> Result<(), WriteError> {
    // The staged name is the toolchain's own; whatever stands there (a leftover, or a planted
    // link) is removed itself — never followed — and the name is then created exclusively.
    let _ = target.dir.remove(&target.staged);
    let result = (|| -> std::io::Result<()> {
        let mut file = target.dir.create_new(&target.staged, target.stat.mode & 0o777)?;
        file.write_all(&target.change.after)?;
        file.sync_all()
    })();
    result.map_err(|e| io(&format!("stage {}", target.change.name), &e))
}

/// Keeps a target's content before entry `seq` writes it: a hard link to the file itself (the
/// swap then moves the file's name away, so the link alone holds that content), or a copy
/// where the file system cannot link.
fn keep(open: &Open, seq: u64, index: usize, target: &Target<'_>) -> Result<(), WriteError> {
    let kept = format!("{seq:08}.{index}.before");
    let _ = open.entries.remove(&kept);
    let linked = target.dir.link(target.name, &open.entries, &kept).is_ok()
        && open
            .entries
            .stat(&kept)
            .ok()
            .flatten()
            .is_some_and(|s| s.ino == target.stat.ino && s.dev == target.stat.dev);
    if !linked {
        let _ = open.entries.remove(&kept);
        let result = (|| -> std::io::Result<()> {
            let mut file = open.entries.create_new(&kept, 0o600)?;
            file.write_all(&target.change.before)?;
            file.sync_all()
        })();
        result.map_err(|e| io("keep a file's content in the journal", &e))?;
    }
    Ok(())
}

/// Swaps one staged file in: re-reads the target (same inode, same bytes), exchanges the
/// names, and checks what came out. A save that landed in the window reverses the swap.
fn swap_in(open: &Open, seq: u64, index: usize, target: &mut Target<'_>, hooks: &Hooks) -> Result<(), WriteError> {
    let change: &FileChange = target.change;
    let judged = target.stat;
    let unchanged = |found: &Result<(Vec<u8>, Stat), ReadError>| match found {
        Ok((bytes, stat)) => stat.ino == judged.ino && stat.dev == judged.dev && *bytes == change.before,
        Err(_) => false,
    };
    let conflict = || WriteError::Conflict(vec![change.name.clone()]);
    if !unchanged(&target.dir.read_regular_stat(target.name, FILE_BYTES)) {
        return Err(conflict());
    }
    hooks.point("before-swap");
    let exchanged =
        target.dir.exchange(&target.staged, target.name).map_err(|e| io(&format!("write {}", change.name), &e))?;
    if exchanged {
        target.exchanged = true;
        // What was swapped out must be the file as judged: a rename-save in the window put
        // another inode there, an in-place save other bytes.
        if unchanged(&target.dir.read_regular_stat(&target.staged, FILE_BYTES)) {
            return Ok(());
        }
        swap_out(target);
        target.exchanged = false;
        return Err(conflict());
    }
    // No exchange on this file system: rename, then read the replaced inode through the
    // journal's link to it (an in-place save in the window shows there; a rename-save in the
    // window cannot be seen without an exchange: docs/security.md).
    target.dir.rename(&target.staged, &target.dir, target.name).map_err(|e| io("write a file", &e))?;
    let kept = format!("{seq:08}.{index}.before");
    let linked = open.entries.stat(&kept).ok().flatten().is_some_and(|s| s.ino == judged.ino && s.dev == judged.dev);
    if linked {
        let saved = open.entries.read_regular(&kept, FILE_BYTES);
        if let Ok(saved) = saved
            && saved != change.before
        {
            // Put the saved content back; the entry is then rolled back.
            let _ = replace(&target.dir, target.name, &saved, None);
            return Err(conflict());
        }
    }
    Ok(())
}

/// Reverses a swapped-in target (its old content comes back).
fn swap_out(target: &Target<'_>) {
    if target.exchanged {
        let _ = target.dir.exchange(&target.staged, target.name);
    } else {
        let _ = replace(&target.dir, target.name, &target.change.before, None);
    }
}

fn remove_all_staged(targets: &[Target<'_>]) {
    for target in targets {
        let _ = target.dir.remove(&target.staged);
    }
}

/// The name a file's new content is staged under: beside it, hidden.
fn staged_name(name: &str) -> String {
    format!(".{name}.cairn-write")
}

fn remove_staged(open: &Open, relative: &str) {
    if let Ok((dir, name)) = resolve(open, relative) {
        let _ = dir.remove(&staged_name(name));
    }
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

/// Replaces a file's content atomically: stage beside, fsync, rename over.
fn replace(dir: &Dir, name: &str, bytes: &[u8], mode: Option<u32>) -> Result<(), WriteError> {
    let staged = staged_name(name);
    let _ = dir.remove(&staged);
    let mode = mode.or_else(|| dir.stat(name).ok().flatten().map(|s| s.mode & 0o777)).unwrap_or(0o644);
    let result = (|| -> std::io::Result<()> {
        let mut file = dir.create_new(&staged, mode)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        dir.rename(&staged, dir, name)
    })();
    result.map_err(|e| {
        let _ = dir.remove(&staged);
        io(&format!("write {name}"), &e)
    })
}

/// Validates an entry before anything acts on it (see the module comment).
fn check(open: &Open, listed: &Listed) -> Result<Checked, String> {
    let bytes = open.entries.read_regular(&listed.file, ENTRY_BYTES).map_err(|e| format!("the entry file: {e}"))?;
    let entry: Entry = serde_json::from_slice(&bytes).map_err(|e| format!("the entry is not a journal entry ({e})"))?;
    if entry.schema != "cairn.journal/2" {
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
    let mut kept = Vec::new();
    for (i, file) in entry.files.iter().enumerate() {
        if !hex_digest(&file.before_sha256) || !hex_digest(&file.after_sha256) {
            return Err(format!("a digest of {} is not a SHA-256", file.name));
        }
        let (dir, name) = resolve(open, &file.name).map_err(|e| e.to_string())?;
        match dir.stat(name) {
            Ok(None) | Ok(Some(Stat { kind: Kind::File, .. })) => {}
            Ok(Some(_)) => return Err(format!("{} is not a regular file", file.name)),
            Err(e) => return Err(format!("{}: {e}", file.name)),
        }
        let content = open
            .entries
            .read_regular(&format!("{:08}.{i}.before", entry.seq), FILE_BYTES)
            .map_err(|e| format!("the kept content of {}: {e}", file.name))?;
        if sha256(&content) != file.before_sha256 {
            return Err(format!("the kept content of {} does not match its digest", file.name));
        }
        kept.push(content);
    }
    Ok(Checked { entry, kept })
}

fn hex_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Each file's current digest (`None` when missing, unreadable, or not a regular file).
fn current_digests(open: &Open, entry: &Entry) -> Vec<Option<String>> {
    entry
        .files
        .iter()
        .map(|file| {
            let (dir, name) = resolve(open, &file.name).ok()?;
            dir.read_regular(name, FILE_BYTES).ok().map(|bytes| sha256(&bytes))
        })
        .collect()
}

/// The entries as the listing shows them, in order of `seq`.
fn list(open: &Open) -> Result<Vec<Listed>, WriteError> {
    let names = open.entries.names().map_err(|e| io("read the journal", &e))?;
    let mut entries: Vec<Listed> = Vec::new();
    let mut markers: Vec<(u64, State)> = Vec::new();
    for name in names {
        let Some((seq, rest)) = name.split_once('.') else { continue };
        let Ok(seq) = seq.parse::<u64>() else { continue };
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

fn store(open: &Open, entry: &Entry, reverts: Option<u64>) -> Result<(), WriteError> {
    let text = serde_json::to_string(entry).map_err(|e| WriteError::Io(e.to_string()))?;
    let name = match reverts {
        None => format!("{:08}.write.json", entry.seq),
        Some(r) => format!("{:08}.undo-{r:08}.json", entry.seq),
    };
    // Created exclusively under its final name: a crash while writing it leaves a damaged
    // pending entry, which no file depended on yet (the swaps come after the fsyncs), and
    // which recovery quarantines.
    let _ = open.entries.remove(&name);
    let result = (|| -> std::io::Result<()> {
        let mut file = open.entries.create_new(&name, 0o600)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        open.entries.sync()
    })();
    result.map_err(|e| io("write the journal entry", &e))
}

/// Marks an entry `committed` or `rolled-back` (an empty file: its name is its content).
fn mark(open: &Open, seq: u64, state: &str) -> Result<(), WriteError> {
    let name = format!("{seq:08}.{state}");
    let _ = open.entries.remove(&name);
    open.entries.create_new(&name, 0o600).map_err(|e| io("mark a journal entry", &e))?;
    Ok(())
}

/// Marks an entry quarantined, with the reason as its content.
fn quarantine(open: &Open, seq: u64, why: &str) -> Result<(), WriteError> {
    let name = format!("{seq:08}.quarantined");
    let _ = open.entries.remove(&name);
    let mut file = open.entries.create_new(&name, 0o600).map_err(|e| io("quarantine a journal entry", &e))?;
    let _ = file.write_all(why.as_bytes());
    let _ = open.entries.sync();
    Ok(())
}

/// Drops the oldest entries beyond [`KEEP`] that are no longer pending.
fn prune(open: &Open) {
    let Ok(entries) = list(open) else { return };
    if entries.len() <= KEEP {
        return;
    }
    for entry in &entries[..entries.len() - KEEP] {
        if entry.state == State::Pending {
            continue;
        }
        let _ = open.entries.remove(&entry.file);
        for i in 0..ENTRY_FILES {
            let kept = format!("{:08}.{i}.before", entry.seq);
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

/// Lower-case hex SHA-256.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn io(what: &str, error: &std::io::Error) -> WriteError {
    WriteError::Io(format!("cannot {what}: {error}"))
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
