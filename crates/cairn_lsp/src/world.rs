//! What the server knows: the open documents and the programs they belong to (one salsa
//! workspace each).
//!
//! Invariant: only the analysis thread (`analysis`) changes this state, between requests.

use std::collections::HashSet;
use std::path::PathBuf;

use cairn_hir::{CheckOutcome, Workspace};

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
