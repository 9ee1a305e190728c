//! Sessions, the compiles they pin, and the host's cache of them: opening a program (loading
//! and checking it unless cached), evicting compiles beyond [`PROGRAM_CACHE`] and sessions
//! beyond [`SESSION_LIMIT`], and the write-back hooks that move a compile forward to a written
//! candidate ([`EditHost::advance`], [`EditHost::settle`]).
//!
//! Invariant: a session names its program by index and its target by name; a compile may be
//! evicted and rebuilt from the pinned text at any time, so nothing keeps an `Item` across
//! requests.

use std::collections::{BTreeMap, BTreeSet};

use cairn_hir::{Item, Workspace};
use cairn_syntax::{TextEdit, TextRange};
use serde_json::{Map, Value};

use super::contract::Evidence;
use super::records::SiteCounts;
use super::sources::program_key;
use super::{Admitted, EditHost, PROGRAM_CACHE, SESSION_LIMIT, Sources};

/// A program the host has loaded: its pinned files, and its compile while cached.
pub(super) struct HostProgram {
    pub key: String,
    pub sources: Sources,
    /// The checked workspace; `None` once evicted.
    pub workspace: Option<Workspace>,
    /// When it was last used (the host's clock of requests).
    pub used: u64,
    /// SHA-256 of the combined source, computed once.
    pub source_sha: std::cell::OnceCell<String>,
}

impl HostProgram {
    pub(super) fn source_sha(&self) -> &str {
        self.source_sha.get_or_init(|| self.sources.sha256())
    }
}

/// One session: what was pinned and disclosed at open, and what was admitted since.
pub(super) struct Session {
    pub handle: String,
    /// When it was last used (the host's clock).
    pub used: u64,
    pub digest: String,
    pub symbol: String,
    pub focused: bool,
    /// The host contract as given (validated at open): the host's own object, sealed into the
    /// digest and shown back in part (`task`), so it stays a map.
    pub contract: Map<String, Value>,
    pub program: usize,
    pub file: usize,
    /// The replaced span of a `body` reply, in the file: the body's start to the function's end.
    pub body: TextRange,
    /// Expression sites `x0`, `x1`, … in the file.
    pub sites: Vec<TextRange>,
    pub ceiling: BTreeSet<String>,
    /// Evidence the contract asked for, by function.
    pub evidence: BTreeMap<String, Evidence>,
    pub row: Vec<String>,
    pub sites_before: SiteCounts,
    pub visible: BTreeSet<String>,
    /// Functions whose sources an `expand` showed, in order, and types it named.
    pub expanded: Vec<String>,
    pub expanded_types: Vec<String>,
    /// Admitted candidates, in order, each relative to the pinned original.
    pub admitted: Vec<Candidate>,
}

/// One admitted candidate of a session: the change, and the target's row and sites after it.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub change: Admitted,
    pub row: Vec<String>,
    pub sites: SiteCounts,
}

impl EditHost {
    /// The program a session judges against, and its file names.
    pub fn session_files(&self, handle: &str) -> Option<Vec<String>> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some(self.programs[session.program].sources.files.iter().map(|s| s.name.clone()).collect())
    }

    /// The file a session's admitted edits go to.
    pub fn session_file(&self, handle: &str) -> Option<String> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some(self.programs[session.program].sources.files[session.file].name.clone())
    }

    /// A session's file, the span a `body` reply replaces, and its expression sites (`x0`, …),
    /// all in that file's text.
    pub fn session_span(&self, handle: &str) -> Option<(usize, TextRange, Vec<TextRange>)> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some((session.file, session.body, session.sites.clone()))
    }

    /// A session's digest (what binds a reply to it).
    pub fn session_digest(&self, handle: &str) -> Option<String> {
        self.sessions.iter().find(|s| s.handle == handle).map(|s| s.digest.clone())
    }

    /// The pinned text of every file of a session's program.
    pub fn session_sources(&self, handle: &str) -> Option<&Sources> {
        let session = self.sessions.iter().find(|s| s.handle == handle)?;
        Some(&self.programs[session.program].sources)
    }

    /// Says that the files now hold the session's latest admitted candidate (a server wrote it
    /// back): the program's compile moves forward to the candidate — one body re-checked — and
    /// is kept under the candidate's text, so the next open of the files as they are now starts
    /// from it instead of compiling again (protocol §16.6). Sessions still pinned to the old text
    /// get a compile of it rebuilt when they next speak.
    ///
    /// The move is noted here and made by [`EditHost::settle`], which a server calls once its
    /// answer is on the wire (and every entry point of the host calls first), so the agent does
    /// not wait for it.
    pub fn advance(&mut self, handle: &str) {
        if let Some(session) = self.sessions.iter().find(|s| s.handle == handle)
            && let Some(candidate) = session.admitted.last()
        {
            self.pending.push((session.program, candidate.change.clone()));
        }
    }

    /// Makes the moves [`EditHost::advance`] noted, then lets go of the text of programs
    /// nothing pins any more (a retired session's).
    pub fn settle(&mut self) {
        let moved = !self.pending.is_empty();
        for (index, change) in std::mem::take(&mut self.pending) {
            self.move_forward(index, change);
        }
        if moved {
            self.release_unpinned();
        }
    }

    /// Forgets a session whose change a server wrote back: it is spent (protocol §2.1: every
    /// request of it but the resend, which the server answers from its own record, is
    /// `E-SESSION`), so once its program's compile has moved forward ([`EditHost::settle`])
    /// nothing keeps that program's text. Without this, every written edit kept a whole copy of
    /// the program until 256 sessions later.
    pub fn retire(&mut self, handle: &str) {
        self.sessions.retain(|s| s.handle != handle);
        // A program whose compile is still here keeps its text (a pending move needs both).
        self.release_unpinned();
    }

    /// Moves a program's compile forward to an admitted change (see [`EditHost::advance`]).
    fn move_forward(&mut self, index: usize, change: Admitted) {
        if self.programs[index].sources.files.is_empty() {
            return;
        }
        let mut sources = self.programs[index].sources.clone();
        let original = sources.files[change.file].text.clone();
        sources.files[change.file].text = change.apply(&original);
        let source_sha = sources.sha256();
        let key = program_key(&sources, &source_sha);
        if self.programs.iter().any(|p| p.key == key) {
            return;
        }
        let Some(mut workspace) = self.programs[index].workspace.take() else { return };
        let edit = TextEdit::smallest(&original[change.replaced.clone()], &change.text, change.replaced.start);
        workspace.edit_file(change.file, &edit);
        workspace.check();
        self.clock += 1;
        let used = self.clock;
        self.programs.push(HostProgram {
            key,
            sources,
            workspace: Some(workspace),
            used,
            source_sha: source_sha.into(),
        });
    }

    /// Forgets the last admission of a session (when writing it back failed).
    pub fn forget_admission(&mut self, handle: &str) {
        if let Some(session) = self.sessions.iter_mut().find(|s| s.handle == handle) {
            session.admitted.pop();
        }
    }

    /// The index of a program, loading and checking it unless it is cached; `cached` says
    /// whether its compile was already there.
    pub(super) fn program(&mut self, sources: Sources) -> (usize, bool) {
        // A text byte for byte the same as a held program's is that program: comparing the
        // bytes costs a fraction of hashing them (SHA-256 of 2.3 MB is about 1.3 ms here).
        let same = |held: &Sources| {
            !held.files.is_empty()
                && held.project == sources.project
                && held.files.len() == sources.files.len()
                && held.files.iter().zip(&sources.files).all(|(a, b)| a.name == b.name && a.text == b.text)
        };
        let index = match self.programs.iter().position(|p| same(&p.sources)) {
            Some(index) => index,
            None => self.program_by_digest(sources),
        };
        let cached = self.programs[index].workspace.is_some();
        self.load(index);
        (index, cached)
    }

    /// The held program whose sources hash to what `sources` hash to, or a new one for them.
    fn program_by_digest(&mut self, sources: Sources) -> usize {
        let source_sha = sources.sha256();
        let key = program_key(&sources, &source_sha);
        match self.programs.iter().position(|p| p.key == key) {
            Some(index) => {
                if self.programs[index].sources.files.is_empty() {
                    self.programs[index].sources = sources;
                }
                index
            }
            None => {
                self.programs.push(HostProgram {
                    key,
                    sources,
                    workspace: None,
                    used: 0,
                    source_sha: source_sha.into(),
                });
                self.programs.len() - 1
            }
        }
    }

    /// Makes sure a program's compile is present (rebuilding an evicted one) and marks it used;
    /// evicts the least recently used compile beyond [`PROGRAM_CACHE`].
    pub(super) fn load(&mut self, index: usize) {
        self.clock += 1;
        let program = &mut self.programs[index];
        program.used = self.clock;
        if program.workspace.is_none() {
            let mut workspace = Workspace::new(program.sources.files.clone());
            workspace.check();
            program.workspace = Some(workspace);
        }
        let loaded = self.programs.iter().filter(|p| p.workspace.is_some()).count();
        if loaded > PROGRAM_CACHE
            && let Some(oldest) = self
                .programs
                .iter_mut()
                .enumerate()
                .filter(|(i, p)| *i != index && p.workspace.is_some())
                .min_by_key(|(_, p)| p.used)
                .map(|(_, p)| p)
        {
            oldest.workspace = None;
            self.release_unpinned();
        }
    }

    /// Keeps at most [`SESSION_LIMIT`] sessions (the least recently used go first), and lets
    /// go of the text of programs no session pins and no cached compile holds.
    pub(super) fn forget_old_sessions(&mut self) {
        while self.sessions.len() > SESSION_LIMIT {
            let Some(oldest) = self.sessions.iter().enumerate().min_by_key(|(_, s)| s.used).map(|(i, _)| i) else {
                break;
            };
            self.sessions.remove(oldest);
        }
        self.release_unpinned();
    }

    /// Drops the text of programs that neither a session nor a cached compile needs (their
    /// cache entry stays, tiny, and takes the text back if the same program comes again).
    fn release_unpinned(&mut self) {
        let pinned: BTreeSet<usize> = self.sessions.iter().map(|s| s.program).collect();
        for (index, program) in self.programs.iter_mut().enumerate() {
            if program.workspace.is_none() && !pinned.contains(&index) && !program.sources.files.is_empty() {
                program.sources.files = Vec::new();
            }
        }
    }

    /// True while the host keeps the session `handle`.
    pub fn has_session(&self, handle: &str) -> bool {
        self.sessions.iter().any(|s| s.handle == handle)
    }

    /// How many sessions the host keeps now.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// How many compiles the host holds now.
    pub fn cached_programs(&self) -> usize {
        self.programs.iter().filter(|p| p.workspace.is_some()).count()
    }

    pub(super) fn ws(&self, index: usize) -> &Workspace {
        self.programs[index].workspace.as_ref().expect("the program was loaded at the start of the request")
    }

    pub(super) fn ws_mut(&mut self, index: usize) -> &mut Workspace {
        self.programs[index].workspace.as_mut().expect("the program was loaded at the start of the request")
    }

    /// The target of a session in its program's current compile (items are re-resolved by
    /// name, so a rebuilt compile serves old sessions).
    pub(super) fn target(&self, session: &Session) -> Option<Item> {
        self.ws(session.program).function_named(&session.symbol)
    }
}

/// The index of a site written `x<n>`: decimal digits, without a leading zero (so `x01` names
/// no site).
pub(super) fn site_index(site: &str) -> Option<usize> {
    let digits = site.strip_prefix('x')?;
    let canonical =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    if canonical { digits.parse().ok() } else { None }
}
