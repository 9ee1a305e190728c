//! Putting one file's new content in place without ever losing a concurrent save: stage it
//! beside the file, re-read the file right before the swap, swap with `RENAME_EXCHANGE`, and
//! check what came out; reverse it when anything but the expected content came out. The same
//! discipline serves a write-back, its reversal, and a recovery's rollback.
//!
//! Invariant: a swap replaces only content that is, at the instant of the exchange, what the
//! caller expected (an inode and its bytes, or a digest); a reversal replaces only content that
//! is still exactly what this process put there. Whatever else is found is left in place and
//! reported as a conflict.

use std::io::Write;

use super::entry::{kept_name, sha256};
use super::{Hooks, Open, WriteError, io};
use crate::safe::{self, Dir, ReadError, Stat};

/// The largest file a swap reads (sources are at most 16,000,000 bytes; room for growth).
pub(super) const FILE_BYTES: u64 = 64 << 20;

/// What the file must hold just before its swap.
pub(super) enum Expect<'a> {
    /// Exactly these bytes in this inode (a write-back's judged base).
    Judged { bytes: &'a [u8], stat: Stat },
    /// Content with this digest, in whatever inode (a recovery's "after").
    Digest(&'a str),
}

impl Expect<'_> {
    fn holds(&self, found: &Result<(Vec<u8>, Stat), ReadError>, same_inode_as: Option<&Stat>) -> bool {
        let Ok((bytes, stat)) = found else { return false };
        let inode = |other: &Stat| other.ino == stat.ino && other.dev == stat.dev;
        let content = match self {
            Expect::Judged { bytes: judged, stat: judged_stat } => inode(judged_stat) && bytes == judged,
            Expect::Digest(digest) => sha256(bytes) == *digest,
        };
        content && same_inode_as.is_none_or(inode)
    }

    /// Whether the file `name` in `dir` holds what is expected (and, given `same_inode_as`,
    /// in that inode); its identity as read. Judged bytes are compared block by block as the
    /// file is read; a digest needs the whole content.
    fn found_in(&self, dir: &Dir, name: &str, same_inode_as: Option<&Stat>) -> (bool, Option<Stat>) {
        match self {
            Expect::Judged { bytes, stat: judged } => match dir.regular_holds(name, bytes) {
                Ok((same, stat)) => {
                    let inode = |other: &Stat| other.ino == stat.ino && other.dev == stat.dev;
                    (same && inode(judged) && same_inode_as.is_none_or(inode), Some(stat))
                }
                Err(_) => (false, None),
            },
            Expect::Digest(_) => {
                let found = dir.read_regular_stat(name, FILE_BYTES);
                let stat = found.as_ref().map(|(_, s)| *s).ok();
                (self.holds(&found, same_inode_as), stat)
            }
        }
    }
}

/// A file whose new content is staged beside it.
pub(super) struct Staged {
    pub dir: Dir,
    pub name: String,
    pub staged: String,
    /// The staged file's identity (what a reversal checks is still in place).
    pub staged_stat: Stat,
    /// Whether the swap was an exchange (else a rename, or not yet made).
    pub exchanged: bool,
    pub swapped: bool,
}

/// Writes `bytes` to the staged name beside `name` (created exclusively, mode `mode`), durably.
pub(super) fn stage(dir: Dir, name: &str, bytes: &[u8], mode: u32) -> Result<Staged, WriteError> {
    let staged = staged_name(name);
    // The staged name is the toolchain's own; whatever stands there (a leftover, or a planted
    // link) is removed itself — never followed — and the name is then created exclusively.
    let _ = dir.remove(&staged);
    let result = (|| -> std::io::Result<Stat> {
        let mut file = dir.create_new(&staged, mode & 0o777)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        safe::fstat(&file)
    })();
    match result {
        Ok(staged_stat) => {
            Ok(Staged { dir, name: name.to_string(), staged, staged_stat, exchanged: false, swapped: false })
        }
        Err(e) => {
            let _ = dir.remove(&staged);
            Err(io(&format!("stage {name}"), &e))
        }
    }
}

/// Swaps a staged file in when the file holds what `expect` says (see the module comment).
/// `kept` names the journal's hard link to the file's inode, used to see an in-place save where
/// the file system has no exchange. A conflict leaves the file as it was found.
pub(super) fn swap_in(
    open: &Open,
    staged: &mut Staged,
    expect: &Expect<'_>,
    kept: Option<&str>,
    hooks: &Hooks,
    shown: &str,
) -> Result<(), WriteError> {
    let conflict = || WriteError::Conflict(vec![shown.to_string()]);
    let (holds, before_stat) = expect.found_in(&staged.dir, &staged.name, None);
    if !holds {
        return Err(conflict());
    }
    hooks.point("before-swap");
    let exchanged = staged.dir.exchange(&staged.staged, &staged.name).map_err(|e| io(&format!("write {shown}"), &e))?;
    if exchanged {
        staged.exchanged = true;
        staged.swapped = true;
        // What came out must be the file as expected, in the inode that was read: a rename-save
        // in the window put another inode there, an in-place save other bytes.
        if expect.found_in(&staged.dir, &staged.staged, before_stat.as_ref()).0 {
            return Ok(());
        }
        let _ = staged.dir.exchange(&staged.staged, &staged.name);
        staged.exchanged = false;
        staged.swapped = false;
        return Err(conflict());
    }
    // No exchange on this file system: rename, then read the replaced inode through the
    // journal's link to it (an in-place save in the window shows there; a rename-save in the
    // window cannot be seen without an exchange: docs/security.md).
    staged.dir.rename(&staged.staged, &staged.dir, &staged.name).map_err(|e| io("write a file", &e))?;
    staged.swapped = true;
    if let (Some(kept), Some(before_stat)) = (kept, before_stat) {
        let linked = open.entries.stat(kept).ok().flatten().is_some_and(|s| s.ino == before_stat.ino);
        if linked
            && let Ok(saved) = open.entries.read_regular(kept, FILE_BYTES)
            && !expect.holds(&Ok((saved.clone(), before_stat)), None)
        {
            // Put the saved content back; the entry is then rolled back.
            let _ = replace(&staged.dir, &staged.name, &saved);
            staged.swapped = false;
            return Err(conflict());
        }
    }
    Ok(())
}

/// Reverses a swapped-in file — only while it still holds exactly what was swapped in, `new`
/// (the same inode, the same bytes). Returns false when something else stands there now (a
/// save made after the swap), which is then left in place.
pub(super) fn swap_out(staged: &mut Staged, new: &[u8], old: &[u8]) -> bool {
    if !staged.swapped {
        return true;
    }
    let ours = match staged.dir.regular_holds(&staged.name, new) {
        Ok((same, stat)) => same && stat.ino == staged.staged_stat.ino && stat.dev == staged.staged_stat.dev,
        Err(_) => false,
    };
    if !ours {
        return false;
    }
    let reversed = if staged.exchanged {
        staged.dir.exchange(&staged.staged, &staged.name).unwrap_or(false)
    } else {
        replace(&staged.dir, &staged.name, old).is_ok()
    };
    staged.swapped = !reversed;
    reversed
}

/// Removes the staged name (after a swap it holds the replaced inode, which the journal's kept
/// link preserves; before one, the unused new content).
pub(super) fn unstage(staged: &Staged) {
    let _ = staged.dir.remove(&staged.staged);
}

/// The name a file's new content is staged under: beside it, hidden.
pub(super) fn staged_name(name: &str) -> String {
    format!(".{name}.cairn-write")
}

/// Keeps a file's content before entry `seq` writes it: a hard link to the file itself (the swap
/// then moves the file's name away, so the link alone holds that content), or a copy where the
/// file system cannot link. Returns whether it is a link.
pub(super) fn keep(
    open: &Open,
    seq: u64,
    index: usize,
    dir: &Dir,
    name: &str,
    stat: &Stat,
    before: &[u8],
) -> Result<bool, WriteError> {
    let kept = kept_name(seq, index);
    let _ = open.entries.remove(&kept);
    let linked = dir.link(name, &open.entries, &kept).is_ok()
        && open.entries.stat(&kept).ok().flatten().is_some_and(|s| s.ino == stat.ino && s.dev == stat.dev);
    if !linked {
        let _ = open.entries.remove(&kept);
        let result = (|| -> std::io::Result<()> {
            let mut file = open.entries.create_new(&kept, 0o600)?;
            file.write_all(before)?;
            file.sync_all()
        })();
        result.map_err(|e| io("keep a file's content in the journal", &e))?;
    }
    Ok(linked)
}

/// Replaces a file's content atomically without checks (a reversal where no exchange exists).
fn replace(dir: &Dir, name: &str, bytes: &[u8]) -> Result<(), WriteError> {
    let staged = staged_name(name);
    let _ = dir.remove(&staged);
    let mode = dir.stat(name).ok().flatten().map(|s| s.mode & 0o777).unwrap_or(0o644);
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
