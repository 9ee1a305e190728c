//! Writing an admitted change of a path session back into its file (protocol §16.4): what a
//! session pinned on disk, whether the files still hold it, and the write itself — through the
//! program's journal, recorded in its effect ledger (`cairn_vfs::journal`), so a server that
//! dies in the middle, and a client that resends, never see a change lost or applied twice.

use cairn_agent::edit::{Admitted, Sources};
use cairn_vfs::journal::ledger::Intent;
use std::path::PathBuf;

use cairn_vfs::journal::{FileChange, Journal, Recorded, WriteError};

/// What a path session pinned: the program's directory, its files, the manifest's bytes. The
/// files' pinned text is the host's (one copy per program, not per session).
#[derive(Debug, Clone)]
pub(crate) struct Disk {
    /// The program's identity for implicit state deltas: its manifest, or its one file
    /// (canonical), however the path argument spelled it.
    pub(crate) identity: String,
    pub(crate) root: PathBuf,
    pub(crate) manifest: Option<(PathBuf, Vec<u8>)>,
    pub(crate) files: Vec<PinnedFile>,
}

#[derive(Debug, Clone)]
pub(crate) struct PinnedFile {
    /// As the manifest names it.
    pub(crate) name: String,
    /// Relative to the program's directory (the journal's root).
    pub(crate) relative: String,
    pub(crate) had_bom: bool,
    pub(crate) vendored: bool,
}

impl Disk {
    /// The SHA-256 of each pinned file's bytes as they stood on disk (byte-order mark and
    /// all), by its relative name, and of the manifest: what a restored session must find.
    pub(crate) fn digests(&self, pinned: &Sources) -> (Vec<(String, String)>, Option<String>) {
        let files = self
            .files
            .iter()
            .zip(&pinned.files)
            .map(|(file, text)| {
                let digest = digests::of(&self.root.join(&file.relative), file.bytes_of(&text.text));
                (file.relative.clone(), digest)
            })
            .collect();
        (files, self.manifest.as_ref().map(|(_, bytes)| cairn_vfs::sessions::sha256(bytes)))
    }
}

impl PinnedFile {
    /// The bytes a file holds when it holds `text` (after a byte-order mark exactly when it
    /// had one).
    pub(crate) fn bytes_of(&self, text: &str) -> Vec<u8> {
        let mut bytes = if self.had_bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
        bytes.extend_from_slice(text.as_bytes());
        bytes
    }
}

/// The pinned files (and `(manifest)`) whose bytes on disk differ now, sorted. A file holds
/// what was pinned when it is the pinned text, after a byte-order mark exactly when it had one
/// (compared as it is read: this runs before every written edit).
pub(crate) fn changed_files(disk: &Disk, pinned: Option<&Sources>) -> Vec<String> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let expected: Vec<(&str, &[u8], &[u8])> = disk
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let text = pinned.and_then(|p| p.files.get(i)).map_or(&[][..], |s| s.text.as_bytes());
            (f.relative.as_str(), if f.had_bom { BOM } else { &[][..] }, text)
        })
        .collect();
    let holds = cairn_vfs::program_files_hold(&disk.root, &expected);
    let mut changed: Vec<String> = disk
        .files
        .iter()
        .zip(holds)
        .enumerate()
        .filter(|(i, (_, holds))| !holds || pinned.and_then(|p| p.files.get(*i)).is_none())
        .map(|(_, (f, _))| f.name.clone())
        .collect();
    changed.sort();
    if let Some((path, bytes)) = &disk.manifest
        && cairn_vfs::read_user_file(path, cairn_vfs::MANIFEST_LIMIT as u64).ok().as_deref() != Some(bytes.as_slice())
    {
        changed.push("(manifest)".into());
    }
    changed
}

pub(crate) enum WriteFailure {
    Changed(Vec<String>),
    /// Saved by someone else while being written: the write was reversed, their save kept.
    Conflict(Vec<String>),
    /// The written program would pass the source limit (`E-SOURCE-LIMIT`).
    Limit(String),
    Environment(String),
}

/// Writes an admitted change into its file through the journal, recorded in the effect ledger
/// as `intent`: the byte-order mark kept, the replaced text's lines ending as most of the file's
/// lines end (protocol §16.4 rule 4). `pinned_digest`: the SHA-256 the session pinned the file
/// by, when it has one (the journal then does not hash the file's old content again).
pub(crate) fn write_back(
    disk: &Disk,
    pinned: Option<&Sources>,
    admitted: &Admitted,
    intent: &Intent,
    pinned_digest: Option<&str>,
) -> Result<Recorded, WriteFailure> {
    let pinned_sources = pinned;
    let Some(file) = disk.files.get(admitted.file) else {
        return Err(WriteFailure::Environment("The admitted change names a file the session did not pin.".into()));
    };
    // Files are written by byte range, so a boundary of the combined source cannot move; still,
    // a reply may not add a separator line (protocol §16.4 rule 7: they must occur as before).
    if pinned.is_some_and(|p| p.project) && admitted.text.lines().any(|l| l.trim_start().starts_with("// source:")) {
        return Err(WriteFailure::Environment(
            "The reply holds a `// source:` line, which would add a file boundary to the combined source; nothing was written."
                .into(),
        ));
    }
    if file.vendored {
        return Err(WriteFailure::Environment(format!(
            "{} belongs to a vendored dependency; the host does not write into dependencies.",
            file.name
        )));
    }
    let Some(pinned) = pinned.and_then(|p| p.files.get(admitted.file)).map(|s| s.text.as_str()) else {
        return Err(WriteFailure::Environment("The session's pinned text is gone; open a new session.".into()));
    };
    let start = admitted.replaced.start.min(pinned.len());
    let end = admitted.replaced.end.clamp(start, pinned.len());
    let mut bytes = if file.had_bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
    bytes.extend_from_slice(&pinned.as_bytes()[..start]);
    bytes.extend_from_slice(with_endings(&admitted.text, majority_ending(pinned)).as_bytes());
    bytes.extend_from_slice(&pinned.as_bytes()[end..]);
    let mut before = if file.had_bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
    before.extend_from_slice(pinned.as_bytes());
    // The written program must stay within the source limit, as every reader will hold it to.
    let others: usize = pinned_sources.map_or(0, |p| {
        p.files.iter().enumerate().filter(|(i, _)| *i != admitted.file).map(|(_, f)| f.text.len()).sum()
    });
    if others + bytes.len() > cairn_vfs::SOURCE_LIMIT {
        return Err(WriteFailure::Limit(format!(
            "The change would make the program's sources {} bytes; they hold at most {} bytes together. Nothing was written.",
            others + bytes.len(),
            cairn_vfs::SOURCE_LIMIT
        )));
    }
    let change = FileChange {
        name: file.relative.clone(),
        before,
        after: bytes,
        before_sha256: pinned_digest.map(str::to_string),
    };
    match Journal::new(&disk.root).write_recorded(std::slice::from_ref(&change), intent) {
        Ok(recorded) => {
            if let Recorded::Written { after_sha256, .. } = &recorded
                && let Some(digest) = after_sha256.first()
            {
                digests::remember(disk.root.join(&file.relative), change.after, digest.clone());
            }
            Ok(recorded)
        }
        Err(WriteError::Changed(_)) => Err(WriteFailure::Changed(vec![file.name.clone()])),
        Err(WriteError::Conflict(_)) => Err(WriteFailure::Conflict(vec![file.name.clone()])),
        Err(other) => {
            Err(WriteFailure::Environment(format!("Writing {} failed: {other}; nothing was written.", file.name)))
        }
    }
}

/// The SHA-256 of the files this server last hashed or wrote, with their bytes: a session
/// pins each file by its digest, and an agent's loop opens the file it has just written, whose
/// 2.3 MB took 1.5 ms to hash at 86k lines (issue 22). A file's digest is taken from here only
/// when its bytes now are exactly the remembered ones (compared, which costs a tenth of hashing),
/// so a file changed by anyone else is hashed again. Bounded: 64 files, 8 MiB of bytes; the
/// server answers one request at a time, so one lock guards it.
mod digests {
    use std::collections::VecDeque;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    const FILES: usize = 64;
    const BYTES: usize = 8 << 20;

    /// Remembered files, the newest last: path, bytes, digest.
    static MEMO: Mutex<VecDeque<(PathBuf, Vec<u8>, String)>> = Mutex::new(VecDeque::new());

    /// The SHA-256 of `bytes`, the content of the file at `path`.
    pub(super) fn of(path: &Path, bytes: Vec<u8>) -> String {
        if let Ok(memo) = MEMO.lock()
            && let Some((_, _, digest)) = memo.iter().find(|(p, b, _)| p == path && *b == bytes)
        {
            return digest.clone();
        }
        let digest = cairn_vfs::sessions::sha256(&bytes);
        remember(path.to_path_buf(), bytes, digest.clone());
        digest
    }

    /// Remembers that the file at `path` holds `bytes`, whose SHA-256 is `digest`.
    pub(super) fn remember(path: PathBuf, bytes: Vec<u8>, digest: String) {
        let Ok(mut memo) = MEMO.lock() else { return };
        memo.retain(|(p, _, _)| *p != path);
        if bytes.len() > BYTES {
            return;
        }
        memo.push_back((path, bytes, digest));
        while memo.len() > FILES || memo.iter().map(|(_, b, _)| b.len()).sum::<usize>() > BYTES {
            memo.pop_front();
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_digest_is_reused_only_for_the_same_bytes_at_the_same_path() {
            let path = PathBuf::from("/nonexistent/memo-test/a.cairn");
            let text = b"fn main() -> i32 = 0;\n".to_vec();
            let real = cairn_vfs::sessions::sha256(&text);
            remember(path.clone(), text.clone(), "remembered".into());
            // The same bytes: the remembered digest (a planted one shows it was not recomputed).
            assert_eq!(of(&path, text.clone()), "remembered");
            // The same bytes at another path, while the planted entry stands: hashed.
            assert_eq!(of(Path::new("/nonexistent/memo-test/b.cairn"), text.clone()), real);
            assert_eq!(of(&path, text.clone()), "remembered");
            // Other bytes at that path: hashed.
            let mut changed = text.clone();
            changed[0] = b'F';
            assert_eq!(of(&path, changed.clone()), cairn_vfs::sessions::sha256(&changed));
        }
    }
}

/// `"\r\n"` when more of the text's lines end so than with a bare `"\n"`; `"\n"` otherwise.
/// A text without a carriage return (most) is known at the speed of a byte search; otherwise
/// counted byte by byte (a loop LLVM vectorises: a substring search over a 600 KB source took
/// most of a millisecond of every write-back).
fn majority_ending(text: &str) -> &'static str {
    let bytes = text.as_bytes();
    if !bytes.contains(&b'\r') {
        return "\n";
    }
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let crlf = bytes.windows(2).filter(|w| w[0] == b'\r' && w[1] == b'\n').count();
    if crlf > lines - crlf { "\r\n" } else { "\n" }
}

fn with_endings(text: &str, ending: &str) -> String {
    let plain = text.replace("\r\n", "\n");
    if ending == "\n" { plain } else { plain.replace('\n', ending) }
}

#[cfg(test)]
mod tests {
    use super::majority_ending;

    #[test]
    fn the_majority_of_line_endings_decides_a_written_change_s_endings() {
        assert_eq!(majority_ending("a\r\nb\r\nc\n"), "\r\n");
        assert_eq!(majority_ending("a\nb\r\n"), "\n", "a tie keeps the bare newline");
        assert_eq!(majority_ending("a\r\n\r\n\n"), "\r\n");
        assert_eq!(majority_ending("no newline at all"), "\n");
        assert_eq!(majority_ending(""), "\n");
        assert_eq!(majority_ending("\r\r\n"), "\r\n", "a lone carriage return is no line ending");
    }
}
