//! What the server knows: the open documents, the programs they belong to (one salsa workspace
//! each), and the read-only [`Snapshot`] of it all that the features and the diagnostics read.
//!
//! Invariant: only the analysis thread (`analysis`) changes this state, between requests; a
//! request reads it through a `Snapshot`, which holds shared references only, so nothing that
//! answers a request or computes a diagnostic can edit a document or a workspace.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use cairn_hir::{CheckOutcome, Workspace};

use crate::convert::path_to_uri;

/// A read-only view of the analysis state, for one request or one round of diagnostics.
#[derive(Clone, Copy)]
pub struct Snapshot<'a> {
    /// The open documents, by URI.
    pub docs: &'a HashMap<String, Doc>,
    /// The programs being analysed, by the index a [`Doc`] names (`None`: dropped).
    pub projects: &'a [Option<Project>],
    /// Where the card texts and the packaged library were written for links and definitions.
    pub materialized: Option<&'a Path>,
}

impl<'a> Snapshot<'a> {
    /// An open document and the program it belongs to.
    pub fn document(&self, uri: &str) -> Option<(&'a Doc, &'a Project)> {
        let doc = self.docs.get(uri)?;
        Some((doc, self.projects.get(doc.project)?.as_ref()?))
    }

    /// The URI and text of a workspace file (a packaged library module: its written copy).
    pub fn file_location(&self, project: &Project, file: usize) -> Option<(String, String)> {
        let state = project.workspace.files().get(file)?;
        if !state.library {
            let uri = project.files.get(file)?.uri.clone();
            return Some((uri, state.text().to_string()));
        }
        let dir = self.materialized?;
        Some((path_to_uri(&dir.join(&state.name)), state.text().to_string()))
    }
}

/// An open document.
#[derive(Debug, Clone)]
pub struct Doc {
    pub version: i32,
    pub project: usize,
    /// Its index among the project's files.
    pub file: usize,
    /// The size of a text over the source limit, which is not analysed (it stands as empty
    /// text) and is answered with `E-SOURCE-LIMIT` until a whole-text change brings it under.
    pub oversized: Option<usize>,
}

/// One file of a project.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    pub name: String,
    pub uri: String,
    pub path: Option<PathBuf>,
}

/// A program being analysed: a project, or one file.
pub struct Project {
    /// The manifest's path, the file's path, or the URI of an unsaved document.
    pub key: String,
    pub files: Vec<ProjectFile>,
    pub workspace: Workspace,
    /// Bumped by every edit.
    pub generation: u64,
    /// The generation a background precompute is running for.
    pub warming: Option<u64>,
    /// Diagnostics are due.
    pub dirty: bool,
    pub outcome: Option<CheckOutcome>,
    /// Documents diagnostics were published to.
    pub published: HashSet<String>,
    /// The manifest above the document that could not be loaded: the document is analysed
    /// alone, and this is the one diagnostic it gets (as `cairn check` refuses such a project).
    pub environment: Option<Environment>,
}

/// A project whose manifest could not be loaded (invalid TOML, a listed source missing, …).
#[derive(Debug, Clone)]
pub struct Environment {
    pub manifest: PathBuf,
    /// `cairn_vfs`'s message, the one the command line prints.
    pub message: String,
}
