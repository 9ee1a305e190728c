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

use std::collections::BTreeMap;
use std::sync::OnceLock;

use cairn_syntax::{GreenNode, Parse};

#[derive(Debug, Clone)]
pub(super) struct FileSource {
    text: String,
    parse: Parse,
    /// Top-level declarations replaced since `text` and `parse` were made, by their index among
    /// the root's children.
    patches: BTreeMap<usize, GreenNode>,
    /// `text` and `parse` with the patches in, made on first read.
    current: OnceLock<(String, Parse)>,
}

impl FileSource {
    pub(super) fn new(text: String, parse: Parse) -> FileSource {
        FileSource { text, parse, patches: BTreeMap::new(), current: OnceLock::new() }
    }

    pub(super) fn text(&self) -> &str {
        if self.patches.is_empty() { &self.text } else { &self.current().0 }
    }

    pub(super) fn parse(&self) -> &Parse {
        if self.patches.is_empty() { &self.parse } else { &self.current().1 }
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

    /// How many declarations wait to be spliced into the text and tree (0 once a read made them).
    pub(super) fn patched(&self) -> usize {
        if self.current.get().is_some() { 0 } else { self.patches.len() }
    }

    /// Replaces the text and tree whole.
    pub(super) fn replace(&mut self, text: String, parse: Parse) {
        *self = FileSource::new(text, parse);
    }

    /// Replaces top-level child `child` by `green`, a declaration whose body was edited and
    /// parsed again without error.
    pub(super) fn patch(&mut self, child: usize, green: GreenNode) {
        debug_assert!(self.patchable(), "patches are kept only for a file without syntax errors");
        // What a read made is kept as the new base, so patches never pile up.
        if let Some((text, parse)) = self.current.take() {
            self.text = text;
            self.parse = parse;
            self.patches.clear();
        }
        let unchanged = self.parse.green().children().nth(child).and_then(|c| c.into_node()) == Some(&*green);
        if unchanged {
            self.patches.remove(&child);
        } else {
            self.patches.insert(child, green);
        }
    }

    fn current(&self) -> &(String, Parse) {
        self.current.get_or_init(|| {
            let replaced: Vec<(usize, GreenNode)> = self.patches.iter().map(|(i, g)| (*i, g.clone())).collect();
            cairn_syntax::splice_declarations(&self.text, &self.parse, &replaced)
        })
    }
}
