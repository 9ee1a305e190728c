//! The program a host is given: its files, its combined source (tools.md §2.2) and the key the
//! host caches its compile under, and an admitted change of one of its files.
//!
//! Invariant: the layout of the combined source is written once, in [`Sources::pieces`]; every
//! `source_sha256` (states, seals, site keys, receipts) and every character offset into the
//! combined source is read from it.

use crate::edit::SourceText;

/// A program as the host receives it: its files in load order, and whether it is a project
/// (whose combined source separates files by `// source:` lines, tools.md §2.2) or one file.
#[derive(Debug, Clone)]
pub struct Sources {
    pub files: Vec<SourceText>,
    pub project: bool,
}

impl Sources {
    /// A one-file program.
    pub fn single(name: impl Into<String>, text: impl Into<String>) -> Sources {
        Sources { files: vec![SourceText { name: name.into(), text: text.into() }], project: false }
    }

    /// The combined source (tools.md §2.2), which digests name.
    pub fn combined(&self) -> String {
        self.pieces().into_iter().map(|piece| piece.text).collect()
    }

    /// SHA-256 of the combined source, without building it: the one `source_sha256` of states,
    /// seals and receipts, whoever computes it (the hosts, `cairn state`, `cairn build`).
    pub fn sha256(&self) -> String {
        let mut hasher = crate::canonical::Hasher::new();
        for piece in self.pieces() {
            hasher.update(piece.text.as_bytes());
        }
        hasher.finish_hex()
    }

    /// Where byte `offset` of file `file` lies in the combined source, in characters.
    pub fn combined_chars(&self, file: usize, offset: usize) -> usize {
        let mut at = 0;
        for piece in self.pieces() {
            if piece.file == file && piece.own_text {
                let text = piece.text;
                return at + text[..offset.min(text.len())].chars().count();
            }
            at += piece.text.chars().count();
        }
        at
    }

    /// The combined source in order, piece by piece: a one-file program's text exactly;
    /// otherwise, per file in load order, the line `// source: <name>`, the text, and a newline.
    ///
    /// Invariant: the only place the combined source's layout is written; [`Sources::combined`],
    /// [`Sources::sha256`] and [`Sources::combined_chars`] all read it from here.
    fn pieces(&self) -> Vec<Piece<'_>> {
        if !self.project && self.files.len() == 1 {
            return vec![Piece { file: 0, text: &self.files[0].text, own_text: true }];
        }
        let mut pieces = Vec::with_capacity(self.files.len() * 5);
        for (file, source) in self.files.iter().enumerate() {
            let parts =
                [("// source: ", false), (&*source.name, false), ("\n", false), (&*source.text, true), ("\n", false)];
            pieces.extend(parts.into_iter().map(|(text, own_text)| Piece { file, text, own_text }));
        }
        pieces
    }
}

/// An admitted change of one file: its index among the program's files, the byte range of the
/// pinned original it replaces, and the text put there (an expression reply with its wrapping
/// parentheses). The rest of the file is the pinned original, unmoved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub file: usize,
    pub replaced: std::ops::Range<usize>,
    pub text: String,
}

impl Admitted {
    /// The change of file `file` from `before` to `after`: the one range between their common
    /// prefix and suffix (on character boundaries), and its replacement — the syntax crate's
    /// smallest edit, so a host writing whole new texts writes back only what changed.
    pub fn between(file: usize, before: &str, after: &str) -> Admitted {
        let edit = cairn_syntax::TextEdit::smallest(before, after, 0);
        let replaced = usize::from(edit.delete.start())..usize::from(edit.delete.end());
        Admitted { file, replaced, text: edit.insert }
    }

    /// The file's whole new text, given its pinned original.
    pub fn apply(&self, original: &str) -> String {
        let start = self.replaced.start.min(original.len());
        let end = self.replaced.end.clamp(start, original.len());
        format!("{}{}{}", &original[..start], self.text, &original[end..])
    }
}

/// The key of a program in the host's cache: the digest of its combined source (which names
/// the files of a project), the kind of program, and the files' names.
pub(super) fn program_key(sources: &Sources, source_sha: &str) -> String {
    let mut key = format!("{source_sha}:{}", if sources.project { "project" } else { "file" });
    for file in &sources.files {
        key.push(':');
        key.push_str(&file.name);
    }
    key
}

/// One piece of a combined source: the file it belongs to, its text, and whether that is the
/// file's own text (not a header or separator).
#[derive(Debug, Clone, Copy)]
struct Piece<'a> {
    file: usize,
    text: &'a str,
    own_text: bool,
}

#[cfg(test)]
mod tests {
    use super::Admitted;

    #[test]
    fn a_change_is_the_range_between_the_common_prefix_and_suffix() {
        let admitted = Admitted::between(0, "fn f() {}\nfn main() {}\n", "fn f() {}\n\nfn g() {}\nfn main() {}\n");
        assert_eq!((admitted.replaced.clone(), admitted.text.as_str()), (10..10, "\nfn g() {}\n"));
        assert_eq!(admitted.apply("fn f() {}\nfn main() {}\n"), "fn f() {}\n\nfn g() {}\nfn main() {}\n");
        let admitted = Admitted::between(1, "aé", "aè");
        assert_eq!((admitted.file, admitted.replaced, admitted.text.as_str()), (1, 1..3, "è"));
    }
}
