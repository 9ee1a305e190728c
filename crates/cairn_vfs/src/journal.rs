//! Writing files back for the hosts: atomically, all or none, through a journal, under a
//! project lock — and `cairn undo`.
//!
//! Every write-back of a program's files is one *entry* in `.cairn/journal/` beside the program
//! (the directory of its manifest, or of its one file): for each file, its content before (kept
//! as a file of the journal: a hard link to the replaced file when the file system allows one,
//! else a copy) and the SHA-256 of its content after. Under the advisory lock on `.cairn/lock`
//! (so two servers, or a server and `cairn undo`, never interleave) a write-back
//!
//! 1. finishes any entry a crash left pending (rolls it back: see [`Journal::recover`]);
//! 2. checks that each file still holds the content the caller judged against (fail-closed:
//!    any difference refuses the whole write, naming the files);
//! 3. keeps each file's content before, and writes the entry (written beside, fsynced, renamed
//!    in): it is *pending* while it has no marker;
//! 4. writes each file beside itself, fsyncs it and renames it over the original;
//! 5. marks the entry `committed` (an empty marker file beside it).
//!
//! Entries are named `<seq>.write.json` or `<seq>.undo-<seq reverted>.json`, the kept contents
//! `<seq>.<i>.before`, markers `<seq>.committed` and `<seq>.rolled-back`, so the journal's state
//! is read from the directory listing alone; an entry's content is read only to recover it or
//! undo it. The content after a write is kept as a digest only: it is what undo and recovery
//! compare the file with, and a link to it would follow an editor's later in-place save.
//!
//! A process killed anywhere in 3–5 leaves each file whole (a rename is atomic) and a pending
//! entry; the next writer, `cairn undo`, or a server touching the program rolls the files that
//! moved back to their content before, so a write-back is never left half done. Undo reverts the
//! newest committed write-back that no undo reverted yet, itself as a journaled write-back, and
//! refuses (changing nothing) when any of its files no longer holds what that write-back wrote.
//!
//! Test hook: with `CAIRN_WRITEBACK_PAUSE_MS=<n>` in the environment, a write-back sleeps `n`
//! milliseconds after each renamed file, so a test can kill the process between two files.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The directory beside a program that holds the journal and the lock.
pub const STATE_DIR: &str = ".cairn";
/// How many entries the journal keeps (older ones are pruned after a commit).
const KEEP: usize = 64;

/// One file to write: where it is, how the caller names it, what it must still hold, and its
/// new content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// As the manifest names it (relative to the journal's root), `/`-separated.
    pub name: String,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

/// Why a write-back or an undo did not happen. Nothing was changed in either case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// These files (sorted names) no longer hold what the caller judged against.
    Changed(Vec<String>),
    /// Undo found no write-back to revert.
    NothingToUndo,
    /// The file system refused (after restoring whatever had been renamed already).
    Io(String),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Changed(files) => write!(f, "changed since: {}", files.join(", ")),
            WriteError::NothingToUndo => f.write_str("no write-back to undo"),
            WriteError::Io(why) => f.write_str(why),
        }
    }
}

/// What [`Journal::recover`] did with an entry a crash left pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub seq: u64,
    /// Files put back to their content before the interrupted write.
    pub restored: Vec<String>,
    /// Files that held neither content and were left alone.
    pub foreign: Vec<String>,
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
struct Entry {
    schema: String,
    seq: u64,
    files: Vec<EntryFile>,
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
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct EntryFile {
    name: String,
    before_sha256: String,
    after_sha256: String,
}

/// The journal of one program's directory.
#[derive(Debug, Clone)]
pub struct Journal {
    root: PathBuf,
}

impl Journal {
    /// The journal of the program whose files live under `root`.
    pub fn new(root: &Path) -> Journal {
        Journal { root: root.to_path_buf() }
    }

    fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    fn entries_dir(&self) -> PathBuf {
        self.state_dir().join("journal")
    }

    /// Takes the project lock (blocking while another process holds it).
    fn lock(&self) -> Result<File, WriteError> {
        fs::create_dir_all(self.entries_dir()).map_err(|e| io("create the journal directory", &e))?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.state_dir().join("lock"))
            .map_err(|e| io("open the project lock", &e))?;
        file.lock().map_err(|e| io("take the project lock", &e))?;
        Ok(file)
    }

    /// Finishes what a crash left pending: each file of a pending entry that holds its new
    /// content gets its old content back; the entry becomes `rolled-back`.
    pub fn recover(&self) -> Result<Vec<Recovered>, WriteError> {
        if !self.entries_dir().is_dir() {
            return Ok(Vec::new());
        }
        let _lock = self.lock()?;
        self.recover_locked()
    }

    fn recover_locked(&self) -> Result<Vec<Recovered>, WriteError> {
        let mut out = Vec::new();
        for listed in self.list()?.into_iter().filter(|e| e.state == State::Pending) {
            let entry = self.read(&listed)?;
            let mut recovered = Recovered { seq: entry.seq, restored: Vec::new(), foreign: Vec::new() };
            for (i, file) in entry.files.iter().enumerate() {
                let path = self.path_of(&file.name)?;
                let _ = fs::remove_file(beside(&path));
                let current = fs::read(&path).ok().map(|bytes| sha256(&bytes));
                if current.as_deref() == Some(file.after_sha256.as_str()) && file.after_sha256 != file.before_sha256 {
                    let before = self.kept(entry.seq, i, file)?;
                    replace(&path, &before)?;
                    recovered.restored.push(file.name.clone());
                } else if current.as_deref() != Some(file.before_sha256.as_str()) {
                    recovered.foreign.push(file.name.clone());
                }
            }
            sync_dirs(&self.root, entry.files.iter().map(|f| f.name.as_str()));
            self.mark(entry.seq, "rolled-back")?;
            out.push(recovered);
        }
        Ok(out)
    }

    /// The content a file had before entry `seq` wrote it, checked against its digest.
    fn kept(&self, seq: u64, index: usize, file: &EntryFile) -> Result<Vec<u8>, WriteError> {
        let bytes = fs::read(self.entries_dir().join(format!("{seq:08}.{index}.before")))
            .map_err(|e| io(&format!("read the kept content of {}", file.name), &e))?;
        if sha256(&bytes) != file.before_sha256 {
            return Err(WriteError::Io(format!(
                "the journal's kept content of {} was changed; move .cairn/journal aside to go on",
                file.name
            )));
        }
        Ok(bytes)
    }

    /// Writes `changes` as one write-back (see the module comment). The names are relative to
    /// the journal's root.
    pub fn write(&self, changes: &[FileChange]) -> Result<u64, WriteError> {
        let _lock = self.lock()?;
        self.recover_locked()?;
        self.apply(changes, None)
    }

    /// Reverts the newest committed write-back not yet reverted (see the module comment).
    pub fn undo(&self) -> Result<Undone, WriteError> {
        let _lock = self.lock()?;
        self.recover_locked()?;
        let listed = self.list()?;
        let reverted: Vec<u64> =
            listed.iter().filter(|e| e.state == State::Committed).filter_map(|e| e.reverts).collect();
        let Some(last) = listed
            .iter()
            .rev()
            .find(|e| e.reverts.is_none() && e.state == State::Committed && !reverted.contains(&e.seq))
        else {
            return Err(WriteError::NothingToUndo);
        };
        let seq = last.seq;
        let last = self.read(last)?;
        let mut changes = Vec::new();
        let mut changed = Vec::new();
        for (i, file) in last.files.iter().enumerate() {
            let current = fs::read(self.path_of(&file.name)?).unwrap_or_default();
            if sha256(&current) != file.after_sha256 {
                changed.push(file.name.clone());
                continue;
            }
            changes.push(FileChange { name: file.name.clone(), before: current, after: self.kept(seq, i, file)? });
        }
        if !changed.is_empty() {
            changed.sort();
            return Err(WriteError::Changed(changed));
        }
        self.apply(&changes, Some(seq))?;
        Ok(Undone { seq, files: last.files.iter().map(|f| f.name.clone()).collect() })
    }

    /// Under the lock: check the bases, journal, write, commit.
    fn apply(&self, changes: &[FileChange], reverts: Option<u64>) -> Result<u64, WriteError> {
        let mut paths = Vec::new();
        let mut changed = Vec::new();
        for change in changes {
            let path = self.path_of(&change.name)?;
            if fs::read(&path).ok().as_deref() != Some(change.before.as_slice()) {
                changed.push(change.name.clone());
            }
            paths.push(path);
        }
        if !changed.is_empty() {
            changed.sort();
            return Err(WriteError::Changed(changed));
        }
        let seq = self.list()?.last().map_or(1, |e| e.seq + 1);
        let mut files = Vec::new();
        for (i, (change, path)) in changes.iter().zip(&paths).enumerate() {
            let before_sha256 = sha256(&change.before);
            self.keep(seq, i, path, &change.before)?;
            files.push(EntryFile { name: change.name.clone(), before_sha256, after_sha256: sha256(&change.after) });
        }
        let entry = Entry { schema: "cairn.journal/2".into(), seq, files };
        self.store(&entry, reverts)?;
        let pause = std::env::var("CAIRN_WRITEBACK_PAUSE_MS").ok().and_then(|v| v.parse::<u64>().ok());
        for (i, (change, path)) in changes.iter().zip(&paths).enumerate() {
            if let Err(error) = replace(path, &change.after) {
                // Put back what was renamed already; the entry then says rolled-back.
                for (done, path) in changes.iter().zip(&paths).take(i) {
                    let _ = replace(path, &done.before);
                }
                let _ = self.mark(seq, "rolled-back");
                return Err(error);
            }
            if let Some(ms) = pause {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
        }
        sync_dirs(&self.root, entry.files.iter().map(|f| f.name.as_str()));
        self.mark(seq, "committed")?;
        self.prune();
        Ok(seq)
    }

    /// Keeps a file's content before entry `seq` writes it: a hard link to the file itself
    /// (which the write then replaces by a rename, so the link alone holds that content), or a
    /// copy where the file system cannot link. Undo and recovery check it against its digest.
    fn keep(&self, seq: u64, index: usize, path: &Path, before: &[u8]) -> Result<(), WriteError> {
        let kept = self.entries_dir().join(format!("{seq:08}.{index}.before"));
        let _ = fs::remove_file(&kept);
        // The link is made after the caller's content was compared with the file, under the
        // lock; its length is checked once more (a cheap guard against a save in between).
        let linked =
            fs::hard_link(path, &kept).is_ok() && fs::metadata(&kept).is_ok_and(|m| m.len() == before.len() as u64);
        if !linked {
            let _ = fs::remove_file(&kept);
            replace(&kept, before)?;
        }
        Ok(())
    }

    /// The entries as the listing shows them, in order of `seq`.
    fn list(&self) -> Result<Vec<Listed>, WriteError> {
        let dir = match fs::read_dir(self.entries_dir()) {
            Ok(dir) => dir,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("read the journal", &e)),
        };
        let mut entries: Vec<Listed> = Vec::new();
        let mut markers: Vec<(u64, State)> = Vec::new();
        for item in dir.flatten() {
            let name = item.file_name().to_string_lossy().to_string();
            let Some((seq, rest)) = name.split_once('.') else { continue };
            let Ok(seq) = seq.parse::<u64>() else { continue };
            match rest {
                "write.json" => entries.push(Listed { seq, reverts: None, state: State::Pending, file: name }),
                "committed" => markers.push((seq, State::Committed)),
                "rolled-back" => markers.push((seq, State::RolledBack)),
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
            // A rolled-back marker wins over a committed one (a failed undo of a write cannot
            // leave both, but be strict if it ever did).
            if markers.contains(&(entry.seq, State::RolledBack)) {
                entry.state = State::RolledBack;
            } else if markers.contains(&(entry.seq, State::Committed)) {
                entry.state = State::Committed;
            }
        }
        entries.sort_by_key(|e| e.seq);
        Ok(entries)
    }

    /// An entry's content. An unreadable entry is an error (fail-closed).
    fn read(&self, listed: &Listed) -> Result<Entry, WriteError> {
        let text =
            fs::read_to_string(self.entries_dir().join(&listed.file)).map_err(|e| io("read a journal entry", &e))?;
        serde_json::from_str(&text).map_err(|e| {
            WriteError::Io(format!("the journal entry {} is damaged ({e}); move it aside to go on", listed.file))
        })
    }

    fn store(&self, entry: &Entry, reverts: Option<u64>) -> Result<(), WriteError> {
        let text = serde_json::to_string(entry).map_err(|e| WriteError::Io(e.to_string()))?;
        let name = match reverts {
            None => format!("{:08}.write.json", entry.seq),
            Some(r) => format!("{:08}.undo-{r:08}.json", entry.seq),
        };
        replace(&self.entries_dir().join(name), text.as_bytes())?;
        self.sync_entries();
        Ok(())
    }

    /// Marks an entry `committed` or `rolled-back`.
    fn mark(&self, seq: u64, state: &str) -> Result<(), WriteError> {
        // An empty file: its name is the whole content, so the directory's fsync makes it durable.
        let path = self.entries_dir().join(format!("{seq:08}.{state}"));
        File::create(&path).map_err(|e| io("mark a journal entry", &e))?;
        self.sync_entries();
        Ok(())
    }

    fn sync_entries(&self) {
        if let Ok(dir) = File::open(self.entries_dir()) {
            let _ = dir.sync_all();
        }
    }

    /// Drops the oldest entries beyond [`KEEP`] that are no longer pending.
    fn prune(&self) {
        let Ok(entries) = self.list() else { return };
        if entries.len() <= KEEP {
            return;
        }
        for entry in &entries[..entries.len() - KEEP] {
            if entry.state != State::Pending {
                let _ = fs::remove_file(self.entries_dir().join(&entry.file));
                for i in 0..1024 {
                    if fs::remove_file(self.entries_dir().join(format!("{:08}.{i}.before", entry.seq))).is_err() {
                        break;
                    }
                }
                let _ = fs::remove_file(self.entries_dir().join(format!("{:08}.committed", entry.seq)));
                let _ = fs::remove_file(self.entries_dir().join(format!("{:08}.rolled-back", entry.seq)));
            }
        }
    }

    /// The path of a file named relative to the root; names that leave the root are refused.
    fn path_of(&self, name: &str) -> Result<PathBuf, WriteError> {
        let plain = !name.is_empty()
            && !name.starts_with('/')
            && !name.contains('\\')
            && name.split('/').all(|s| !s.is_empty() && s != "." && s != "..");
        if !plain {
            return Err(WriteError::Io(format!("{name} is not a path inside the program's directory")));
        }
        Ok(self.root.join(name))
    }
}

/// The temporary file a write goes to before its rename: beside the target, hidden.
fn beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    path.with_file_name(format!(".{name}.cairn-write"))
}

/// Replaces a file's content atomically: write beside, fsync, rename over.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let temporary = beside(path);
    let result = (|| -> std::io::Result<()> {
        let mut file = File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Ok(metadata) = fs::metadata(path) {
            let _ = fs::set_permissions(&temporary, metadata.permissions());
        }
        fs::rename(&temporary, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&temporary);
        io(&format!("write {}", path.display()), &e)
    })
}

/// Makes the renames durable: fsyncs each directory that holds a written file.
fn sync_dirs<'a>(root: &Path, names: impl Iterator<Item = &'a str>) {
    let mut dirs: Vec<PathBuf> = names.filter_map(|n| root.join(n).parent().map(Path::to_path_buf)).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        if let Ok(handle) = File::open(&dir) {
            let _ = handle.sync_all();
        }
    }
}

/// Lower-case hex SHA-256.
fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn io(what: &str, error: &std::io::Error) -> WriteError {
    WriteError::Io(format!("cannot {what}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempdir::Dir, Journal) {
        let dir = tempdir::Dir::new();
        fs::write(dir.path().join("a.cairn"), "fn a() {}\n").unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/b.cairn"), "fn b() {}\n").unwrap();
        let journal = Journal::new(dir.path());
        (dir, journal)
    }

    fn change(name: &str, before: &str, after: &str) -> FileChange {
        FileChange { name: name.into(), before: before.into(), after: after.into() }
    }

    #[test]
    fn a_write_changes_every_file_and_undo_restores_them() {
        let (dir, journal) = project();
        let changes =
            [change("a.cairn", "fn a() {}\n", "fn a() { }\n"), change("src/b.cairn", "fn b() {}\n", "fn b() { }\n")];
        assert_eq!(journal.write(&changes), Ok(1));
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() { }\n");
        assert_eq!(fs::read_to_string(dir.path().join("src/b.cairn")).unwrap(), "fn b() { }\n");
        let undone = journal.undo().unwrap();
        assert_eq!(undone.seq, 1);
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() {}\n");
        assert_eq!(fs::read_to_string(dir.path().join("src/b.cairn")).unwrap(), "fn b() {}\n");
        assert_eq!(journal.undo(), Err(WriteError::NothingToUndo));
        // No temporary file is left beside the sources.
        let names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert!(names.iter().all(|n| !n.ends_with(".cairn-write")), "{names:?}");
    }

    #[test]
    fn a_changed_base_refuses_the_whole_write() {
        let (dir, journal) = project();
        fs::write(dir.path().join("src/b.cairn"), "fn b() { /* saved */ }\n").unwrap();
        let changes =
            [change("a.cairn", "fn a() {}\n", "fn a() { }\n"), change("src/b.cairn", "fn b() {}\n", "fn b() { }\n")];
        assert_eq!(journal.write(&changes), Err(WriteError::Changed(vec!["src/b.cairn".into()])));
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() {}\n");
    }

    #[test]
    fn undo_refuses_when_a_file_changed_after_the_write() {
        let (dir, journal) = project();
        journal.write(&[change("a.cairn", "fn a() {}\n", "fn a() { }\n")]).unwrap();
        fs::write(dir.path().join("a.cairn"), "fn a() { edited(); }\n").unwrap();
        assert_eq!(journal.undo(), Err(WriteError::Changed(vec!["a.cairn".into()])));
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() { edited(); }\n");
    }

    #[test]
    fn an_in_place_save_after_the_write_makes_undo_refuse() {
        let (dir, journal) = project();
        journal.write(&[change("a.cairn", "fn a() {}\n", "fn a() { }\n")]).unwrap();
        // An editor that writes into the same inode (no rename).
        let mut file = OpenOptions::new().write(true).truncate(true).open(dir.path().join("a.cairn")).unwrap();
        file.write_all(b"fn a() { saved(); }\n").unwrap();
        drop(file);
        assert_eq!(journal.undo(), Err(WriteError::Changed(vec!["a.cairn".into()])));
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() { saved(); }\n");
    }

    #[test]
    fn undo_walks_back_through_write_backs_in_order() {
        let (dir, journal) = project();
        journal.write(&[change("a.cairn", "fn a() {}\n", "one\n")]).unwrap();
        journal.write(&[change("a.cairn", "one\n", "two\n")]).unwrap();
        journal.undo().unwrap();
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "one\n");
        journal.undo().unwrap();
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() {}\n");
    }

    #[test]
    fn a_pending_entry_is_rolled_back_on_recovery() {
        let (dir, journal) = project();
        // What a crash after the first of two renames leaves: a pending entry, one file moved.
        let file = |name: &str, before: &str, after: &str| EntryFile {
            name: name.into(),
            before_sha256: sha256(before.as_bytes()),
            after_sha256: sha256(after.as_bytes()),
        };
        let entry = Entry {
            schema: "cairn.journal/2".into(),
            seq: 1,
            files: vec![file("a.cairn", "fn a() {}\n", "new a\n"), file("src/b.cairn", "fn b() {}\n", "new b\n")],
        };
        fs::create_dir_all(journal.entries_dir()).unwrap();
        fs::write(journal.entries_dir().join("00000001.0.before"), "fn a() {}\n").unwrap();
        fs::write(journal.entries_dir().join("00000001.1.before"), "fn b() {}\n").unwrap();
        journal.store(&entry, None).unwrap();
        fs::write(dir.path().join("a.cairn"), "new a\n").unwrap();
        let recovered = journal.recover().unwrap();
        assert_eq!(recovered, vec![Recovered { seq: 1, restored: vec!["a.cairn".into()], foreign: vec![] }]);
        assert_eq!(fs::read_to_string(dir.path().join("a.cairn")).unwrap(), "fn a() {}\n");
        assert_eq!(fs::read_to_string(dir.path().join("src/b.cairn")).unwrap(), "fn b() {}\n");
        // Nothing is left to undo: the interrupted write never happened.
        assert_eq!(journal.undo(), Err(WriteError::NothingToUndo));
    }

    #[test]
    fn names_outside_the_root_are_refused() {
        let (_dir, journal) = project();
        assert!(matches!(journal.write(&[change("../x", "", "y")]), Err(WriteError::Io(_))));
    }

    /// A temporary directory removed on drop (std has none; a dependency would buy nothing).
    mod tempdir {
        use std::path::{Path, PathBuf};

        pub struct Dir(PathBuf);

        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static NEXT: AtomicU32 = AtomicU32::new(0);
                let n = NEXT.fetch_add(1, Ordering::Relaxed);
                let path = std::env::temp_dir().join(format!("cairn-journal-{}-{n}", std::process::id()));
                let _ = std::fs::remove_dir_all(&path);
                std::fs::create_dir_all(&path).unwrap();
                Dir(path)
            }

            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}
