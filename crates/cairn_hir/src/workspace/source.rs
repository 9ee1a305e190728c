//! A file's text and syntax tree as the workspace keeps them between edits.
//!
//! An edit inside one function's body changes one top-level declaration. Rebuilding the file's
//! root for it would copy every top-level child (thousands in a large file), and applying it to
//! the text would copy the whole text, twice per judged edit (the edit, then its undo): work in
//! proportion to the file, not to the edit (issue 22). So such an edit only *patches* the file:
//! the declaration's new green node is kept by its index among the root's children, and the
//! file's text and tree are made again, once for any number of patches, only when something reads
//! them. A patch that puts back what the file held (an undo) is dropped, so an edit and its undo
//! leave nothing to make. Patches are kept only for a file without syntax errors and bodies that
//! parse without error, so the text and tree made from them have none either
//! (`cairn_syntax::splice_declarations`); every other edit replaces the text and tree whole.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use cairn_syntax::{GreenNode, Parse};

/// A top-level declaration replaced since the base was made: where it lay in the base text, and
/// its new node.
#[derive(Debug, Clone)]
struct Patch {
    base_start: usize,
    base_len: usize,
    green: GreenNode,
}

impl Patch {
    fn len(&self) -> usize {
        usize::from(self.green.text_len())
    }
}

#[derive(Debug)]
pub(super) struct FileSource {
    text: String,
    parse: Parse,
    /// Top-level declarations replaced since `text` and `parse` were made, by their index among
    /// the root's children.
    patches: BTreeMap<usize, Patch>,
    /// `text` with the patches in, made on first read (a copy of the base between the patched
    /// spans: no tree is touched).
    text_made: OnceLock<String>,
    /// `parse` with the patches in, made on first read (one rebuild of the root).
    parse_made: OnceLock<Parse>,
    /// The allocation of a text no longer in use, which the next making of the text fills
    /// (a fresh 2 MB allocation costs more in page faults than writing the text).
    spare: Mutex<String>,
}

impl Clone for FileSource {
    fn clone(&self) -> FileSource {
        FileSource {
            text: self.text.clone(),
            parse: self.parse.clone(),
            patches: self.patches.clone(),
            text_made: self.text_made.clone(),
            parse_made: self.parse_made.clone(),
            spare: Mutex::new(String::new()),
        }
    }
}

impl FileSource {
    pub(super) fn new(text: String, parse: Parse) -> FileSource {
        FileSource {
            text,
            parse,
            patches: BTreeMap::new(),
            text_made: OnceLock::new(),
            parse_made: OnceLock::new(),
            spare: Mutex::new(String::new()),
        }
    }

    pub(super) fn text(&self) -> &str {
        if self.patches.is_empty() { &self.text } else { self.text_made.get_or_init(|| self.make_text()) }
    }

    pub(super) fn parse(&self) -> &Parse {
        if self.patches.is_empty() {
            return &self.parse;
        }
        self.parse_made.get_or_init(|| self.make_parse())
    }

    /// The file's syntax errors, without making its tree: a patched file has none.
    pub(super) fn errors(&self) -> &[cairn_syntax::SyntaxError] {
        self.parse.errors()
    }

    /// The first error that stops the original's lexer (`Parse::lexer_stop`), likewise.
    pub(super) fn lexer_stop(&self) -> Option<&cairn_syntax::SyntaxError> {
        self.parse.lexer_stop()
    }

    /// True when the file parses without error, so a body edit may be patched in.
    pub(super) fn patchable(&self) -> bool {
        self.parse.ok()
    }

    /// How many declarations wait to be spliced into the text or the tree (0 once reads made
    /// both).
    pub(super) fn patched(&self) -> usize {
        if self.text_made.get().is_some() && self.parse_made.get().is_some() { 0 } else { self.patches.len() }
    }

    /// Replaces the text and tree whole.
    pub(super) fn replace(&mut self, text: String, parse: Parse) {
        let old = std::mem::replace(&mut self.text, text);
        self.keep_spare(old);
        self.parse = parse;
        self.patches.clear();
        self.text_made = OnceLock::new();
        self.parse_made = OnceLock::new();
    }

    /// Replaces top-level child `child`, which starts at byte `start` of the current text, by
    /// `green`, a declaration whose body was edited and parsed again without error. False (and
    /// nothing changed) when the file has no such child.
    pub(super) fn patch(&mut self, child: usize, start: usize, green: GreenNode) -> bool {
        debug_assert!(self.patchable(), "patches are kept only for a file without syntax errors");
        // After a read made the text or the tree, or once many declarations wait, the patches
        // become the new base (what was not made is made: a copy of the text, or one root
        // rebuild), so nothing made is ever read stale, patches never pile up, and the next read
        // copies the text instead of writing out every declaration edited since.
        if self.text_made.get().is_some() || self.parse_made.get().is_some() || self.patches.len() >= MAX_PATCHES {
            self.settle();
        }
        let Some(base) = self.parse.green().children().nth(child).and_then(|c| c.into_node()).map(|n| n.to_owned())
        else {
            return false;
        };
        if *base == *green {
            self.patches.remove(&child);
            return true;
        }
        let (base_start, base_len) = match self.patches.get(&child) {
            Some(patch) => (patch.base_start, patch.base_len),
            None => {
                let moved: i64 = self.patches.range(..child).map(|(_, p)| p.len() as i64 - p.base_len as i64).sum();
                ((start as i64 - moved) as usize, usize::from(base.text_len()))
            }
        };
        self.patches.insert(child, Patch { base_start, base_len, green });
        true
    }

    /// Makes the text and tree with the patches in and keeps them as the new base.
    fn settle(&mut self) {
        if self.patches.is_empty() {
            // Nothing waits: what was made is the base itself.
            self.text_made = OnceLock::new();
            self.parse_made = OnceLock::new();
            return;
        }
        let text = match self.text_made.take() {
            Some(text) => text,
            None => self.make_text(),
        };
        let parse = match self.parse_made.take() {
            Some(parse) => parse,
            None => self.make_parse(),
        };
        let old = std::mem::replace(&mut self.text, text);
        self.keep_spare(old);
        self.parse = parse;
        self.patches.clear();
    }

    /// The current text's length.
    pub(super) fn len(&self) -> usize {
        let moved: i64 = self.patches.values().map(|p| p.len() as i64 - p.base_len as i64).sum();
        (self.text.len() as i64 + moved) as usize
    }

    /// Bytes `range` of the current text, without making it when they lie outside every patched
    /// declaration or inside one (a range across a patch's edge makes the text).
    pub(super) fn slice(&self, range: Range<usize>) -> Cow<'_, str> {
        if self.patches.is_empty() || self.text_made.get().is_some() {
            return Cow::Borrowed(&self.text()[range]);
        }
        let mut moved: i64 = 0;
        for patch in self.patches.values() {
            let start = (patch.base_start as i64 + moved) as usize;
            let end = start + patch.len();
            if range.end <= start {
                break;
            }
            if range.start >= start && range.end <= end {
                let mut text = String::with_capacity(patch.len());
                write_text(&mut text, &patch.green);
                return Cow::Owned(text[range.start - start..range.end - start].to_string());
            }
            if range.start < end {
                return Cow::Borrowed(&self.text()[range]);
            }
            moved += patch.len() as i64 - patch.base_len as i64;
        }
        let shift = |at: usize| (at as i64 - moved) as usize;
        Cow::Borrowed(&self.text[shift(range.start)..shift(range.end)])
    }

    /// The base text with each patched declaration's span rewritten: copies, no tree work.
    fn make_text(&self) -> String {
        let mut out = std::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
        out.clear();
        // Room to spare, so the buffer still fits after the edits until the next making.
        let needed = self.len() + 4096;
        if out.capacity() < needed {
            out = String::with_capacity(needed + needed / 8);
        }
        let mut at = 0usize;
        for patch in self.patches.values() {
            out.push_str(&self.text[at..patch.base_start]);
            write_text(&mut out, &patch.green);
            at = patch.base_start + patch.base_len;
        }
        out.push_str(&self.text[at..]);
        out
    }

    /// The base tree with each patched declaration in: one rebuild of the root.
    fn make_parse(&self) -> Parse {
        let replaced: Vec<(usize, GreenNode)> = self.patches.iter().map(|(i, p)| (*i, p.green.clone())).collect();
        cairn_syntax::splice_declarations(&self.parse, &replaced)
    }

    fn keep_spare(&mut self, text: String) {
        *self.spare.get_mut().unwrap_or_else(|e| e.into_inner()) = text;
    }
}

/// How many edited declarations may wait before they become the base.
const MAX_PATCHES: usize = 64;

/// Appends a node's text, token by token (`Display` goes through the formatting machinery per
/// token, several times slower).
fn write_text(out: &mut String, node: &cairn_syntax::GreenNodeData) {
    for child in node.children() {
        match child {
            cairn_syntax::NodeOrToken::Node(node) => write_text(out, node),
            cairn_syntax::NodeOrToken::Token(token) => out.push_str(token.text()),
        }
    }
}
