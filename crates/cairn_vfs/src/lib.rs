//! Reading CAIRN programs from disk: the only place the compiler's inputs come from.
//!
//! A program is named by one path (tools.md §1.1): a `.cairn` file (the whole program), a project
//! directory (its `cairn.toml`), or a manifest of any name ending in `.toml`. [`load`] resolves it,
//! reads the manifest as strictly as §2 demands (every manifest of a build, dependencies included),
//! and returns the sources in load order: dependencies first, depth-first, then the root's
//! `sources` as listed. Every failure is an [`EnvironmentError`], which the commands report as
//! `E-PROJECT-OR-ENVIRONMENT` (exit 2): it describes the setup, never the program.
//!
//! Invariants: nothing outside the project's root is read, no symbolic link is followed, a
//! byte-order mark is dropped (and remembered), and text that is not UTF-8 is refused with the
//! file and byte offset rather than decoded lossily.

pub mod fault;
pub mod history;
pub mod journal;
mod key;

pub use key::{hmac_hex, random, same_digest};
mod manifest;
mod namespaces;
pub mod safe;
pub mod sessions;
pub mod stdio;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::safe::Dir;

pub use manifest::{
    BuildConfig, BuildKind, MANIFEST_LIMIT, Manifest, SYSTEM_LIBRARIES, check_arch, check_device_target, read_manifest,
    valid_project_name,
};

/// The most bytes all sources of one program may hold together (language §1, `E-SOURCE-LIMIT`).
pub const SOURCE_LIMIT: usize = 16_000_000;

/// A failure to read the program's setup: a bad path, manifest, file or encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentError {
    pub message: String,
}

impl EnvironmentError {
    pub fn new(message: impl Into<String>) -> EnvironmentError {
        EnvironmentError { message: message.into() }
    }
}

impl fmt::Display for EnvironmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EnvironmentError {}

/// One source file of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The file as the manifest names it (a dependency's as `<dep dir>/<file>`); for a one-file
    /// program, the file's name.
    pub name: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// Its text, without a leading byte-order mark.
    pub text: String,
    /// Whether the file began with a byte-order mark (restored when a host writes it back).
    pub had_bom: bool,
    /// The project (root or dependency) the file belongs to.
    pub project: String,
}

/// A vendored dependency, as loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub name: String,
    /// Its directory, relative to the root project's directory.
    pub path: String,
}

/// A program read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The project's name (a one-file program: the file stem).
    pub name: String,
    /// The directory that holds the manifest (or the one file).
    pub root: PathBuf,
    /// The manifest's path, when there is one.
    pub manifest_path: Option<PathBuf>,
    /// The root manifest's build choices (defaults for a one-file program).
    pub build: BuildConfig,
    /// The root manifest's `tests` entries.
    pub tests: Vec<String>,
    /// Vendored dependencies in load order.
    pub dependencies: Vec<Dependency>,
    /// The root manifest's `[foreign]` sources (tier 3: read and validated, not built).
    pub foreign: Vec<String>,
    /// Every source, in load order.
    pub files: Vec<SourceFile>,
}

impl Program {
    /// The file named `name`, if the program has it.
    pub fn file(&self, name: &str) -> Option<&SourceFile> {
        self.files.iter().find(|file| file.name == name)
    }

    /// True for a program given as one `.cairn` file.
    pub fn is_single_file(&self) -> bool {
        self.manifest_path.is_none()
    }
}

/// Reads the program that `path` names (see the module comment). What a crash left pending in
/// the program's journal is read as recovery will leave it ([`journal::Journal::pending_view`]),
/// without writing anything.
pub fn load(path: &Path) -> Result<Program, EnvironmentError> {
    let link = std::fs::symlink_metadata(path)
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", path.display(), lower(&err))))?;
    let metadata = std::fs::metadata(path)
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", path.display(), lower(&err))))?;
    if metadata.is_dir() {
        let directory = path
            .canonicalize()
            .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", path.display(), lower(&err))))?;
        match Dir::root(&directory).and_then(|d| d.stat("cairn.toml")) {
            Ok(Some(stat)) if stat.kind == safe::Kind::File => {}
            Ok(Some(stat)) if stat.kind == safe::Kind::Symlink => {
                return Err(EnvironmentError::new(format!(
                    "`{}/cairn.toml` is a symbolic link; a manifest is read only as a file of its project (links are never followed into or out of a program).",
                    path.display()
                )));
            }
            _ => {
                return Err(EnvironmentError::new(format!(
                    "The directory `{}` has no cairn.toml; pass a .cairn file, a project directory, or a manifest.",
                    path.display()
                )));
            }
        }
        return load_project(&directory.join("cairn.toml"));
    }
    if link.file_type().is_symlink() {
        // A linked file would put the program's directory (its journal and lock) wherever
        // the link points.
        return Err(EnvironmentError::new(format!(
            "`{}` is a symbolic link; pass the file itself (links are never followed into or out of a program).",
            path.display()
        )));
    }
    match path.extension().and_then(|ext| ext.to_str()) {
        Some("cairn") => with_pending_view(load_single_file(path)?),
        Some("toml") => load_project(path),
        _ => Err(EnvironmentError::new(format!(
            "`{}` is neither a .cairn file, a project directory, nor a manifest ending in .toml.",
            path.display()
        ))),
    }
}

/// Reads a file the user named by path (a saved state, a witness): it must be a regular file
/// (a FIFO or device is refused without blocking) of at most `limit` bytes. A link the user
/// typed is followed; nothing below a program's root is read this way.
pub fn read_user_file(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let resolved = path.canonicalize().map_err(|err| lower(&err))?;
    let name = resolved.file_name().and_then(|n| n.to_str()).ok_or("not a file name")?.to_string();
    let parent = resolved.parent().map(Path::to_path_buf).unwrap_or(directory);
    let dir = Dir::root(&parent).map_err(|err| lower(&err))?;
    dir.read_regular(&name, limit).map_err(|err| err.to_string())
}

/// The bytes of a program's files (named relative to its root) as a reader sees them: each
/// reached without a symbolic link, regular, within the source limit, and read as a pending
/// write-back's recovery will leave it. `None` for a file that cannot be read so.
pub fn read_program_files(root: &Path, relatives: &[&str]) -> Vec<Option<Vec<u8>>> {
    let view = journal::Journal::new(root).pending_view().unwrap_or_default();
    let dir = Dir::root(root).ok();
    relatives
        .iter()
        .map(|relative| {
            if let Some((_, bytes)) = view.iter().find(|(name, _)| name == relative) {
                return Some(bytes.clone());
            }
            let (dirs, name) = safe::split(relative);
            let dir = dir.as_ref()?.walk(dirs, false).ok()?;
            dir.read_regular(name, SOURCE_LIMIT as u64 + 3).ok()
        })
        .collect()
}

/// Whether each of a program's files (named relative to its root) holds exactly its `prefix`
/// then its `body`, as [`read_program_files`] would read it — compared as it is read, with no
/// buffer of the file's size (a session's check before it writes, on every written edit).
pub fn program_files_hold(root: &Path, files: &[(&str, &[u8], &[u8])]) -> Vec<bool> {
    let view = journal::Journal::new(root).pending_view().unwrap_or_default();
    let dir = Dir::root(root).ok();
    files
        .iter()
        .map(|(relative, prefix, body)| {
            if let Some((_, bytes)) = view.iter().find(|(name, _)| name == relative) {
                return bytes.len() == prefix.len() + body.len()
                    && bytes.starts_with(prefix)
                    && &bytes[prefix.len()..] == *body;
            }
            let (dirs, name) = safe::split(relative);
            let Some(dir) = dir.as_ref().and_then(|d| d.walk(dirs, false).ok()) else { return false };
            matches!(dir.regular_holds_parts(name, &[prefix, body]), Ok((true, _)))
        })
        .collect()
}

/// The directory `name` directly under a program's root (`build`), created when missing and
/// never through a link: a repository that ships `build -> /elsewhere` does not make a build
/// write there.
pub fn project_subdir(root: &Path, name: &str) -> Result<PathBuf, String> {
    let dir = Dir::root(root).map_err(|err| format!("cannot open {}: {}", root.display(), lower(&err)))?;
    dir.subdir(name, true).map_err(|err| format!("cannot use {}/{name}: {}", root.display(), lower(&err)))?;
    Ok(root.join(name))
}

/// Replaces the text of files that a pending journal entry will put back.
fn with_pending_view(mut program: Program) -> Result<Program, EnvironmentError> {
    let view = journal::Journal::new(&program.root).pending_view().map_err(|error| {
        EnvironmentError::new(format!("The journal of `{}` cannot be read: {error}.", program.root.display()))
    })?;
    for (relative, bytes) in view {
        let root = program.root.clone();
        if let Some(file) =
            program.files.iter_mut().find(|f| f.path.strip_prefix(&root).is_ok_and(|p| p == Path::new(&relative)))
        {
            let (text, had_bom) = decode_source(bytes, &file.name)?;
            file.text = text;
            file.had_bom = had_bom;
        }
    }
    Ok(program)
}

fn load_single_file(path: &Path) -> Result<Program, EnvironmentError> {
    let canonical = path
        .canonicalize()
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", path.display(), lower(&err))))?;
    let root = canonical.parent().map(Path::to_path_buf).unwrap_or_default();
    let file_name = canonical.file_name().and_then(|n| n.to_str()).unwrap_or("main.cairn").to_string();
    let name = canonical.file_stem().and_then(|n| n.to_str()).unwrap_or("main").to_string();
    let dir = open_root(&root)?;
    let (text, had_bom) = read_source(&dir, &file_name, &file_name, SOURCE_LIMIT)?;
    let file = SourceFile { name: file_name, path: canonical, text, had_bom, project: name.clone() };
    namespaces::check(std::slice::from_ref(&file), &name)?;
    Ok(Program {
        name: name.clone(),
        root,
        manifest_path: None,
        build: BuildConfig::default(),
        foreign: Vec::new(),
        tests: Vec::new(),
        dependencies: Vec::new(),
        files: vec![file],
    })
}

fn load_project(manifest_path: &Path) -> Result<Program, EnvironmentError> {
    // The directory is resolved (it is the user's choice); the manifest itself never through a
    // link, or the project's root (its journal, its sources) would be wherever the link points.
    let cannot = |err: std::io::Error| {
        EnvironmentError::new(format!("Cannot read `{}`: {}.", manifest_path.display(), lower(&err)))
    };
    let parent = match manifest_path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let root = parent.canonicalize().map_err(cannot)?;
    let file_name = manifest_path.file_name().ok_or_else(|| cannot(std::io::Error::other("not a file name")))?;
    let manifest_path = root.join(file_name);
    let manifest = read_manifest(&manifest_path)?;
    let root_dir = open_root(&root)?;
    let mut loader = Loader {
        files: Vec::new(),
        dependencies: Vec::new(),
        seen: vec![(root.clone(), manifest.name.clone())],
        total: 0,
    };
    loader.dependencies(&root_dir, &root, "", &manifest, 0)?;
    for relative in &manifest.sources {
        let path = contained_file(&root_dir, &root, relative, "cairn")?;
        loader.add_file(&root_dir, relative, relative.clone(), path, manifest.name.clone())?;
    }
    for relative in &manifest.tests {
        contained_file(&root_dir, &root, relative, "json")?;
    }
    namespaces::check(&loader.files, &manifest.name)?;
    with_pending_view(Program {
        name: manifest.name.clone(),
        root,
        manifest_path: Some(manifest_path),
        build: manifest.build.clone(),
        foreign: manifest.foreign.iter().map(|(source, _)| source.clone()).collect(),
        tests: manifest.tests.clone(),
        dependencies: loader.dependencies,
        files: loader.files,
    })
}

fn open_root(root: &Path) -> Result<Dir, EnvironmentError> {
    Dir::root(root).map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", root.display(), lower(&err))))
}

struct Loader {
    files: Vec<SourceFile>,
    dependencies: Vec<Dependency>,
    /// Directories already loaded, with their project names (the root first).
    seen: Vec<(PathBuf, String)>,
    total: usize,
}

/// How deep dependencies may be vendored (tools.md §2.1).
const DEPENDENCY_DEPTH: usize = 4;

impl Loader {
    fn add_file(
        &mut self,
        home: &Dir,
        relative: &str,
        name: String,
        path: PathBuf,
        project: String,
    ) -> Result<(), EnvironmentError> {
        let (dirs, file_name) = safe::split(relative);
        let dir = home
            .walk(dirs, false)
            .map_err(|err| EnvironmentError::new(format!("Cannot read `{name}`: {}.", lower(&err))))?;
        let (text, had_bom) = read_source(&dir, file_name, &name, SOURCE_LIMIT - self.total.min(SOURCE_LIMIT))?;
        self.total += text.len();
        if self.total > SOURCE_LIMIT {
            return Err(EnvironmentError::new(format!(
                "The program's sources exceed the {SOURCE_LIMIT}-byte limit at `{name}`."
            )));
        }
        self.files.push(SourceFile { name, path, text, had_bom, project });
        Ok(())
    }

    /// Loads the dependencies `manifest` lists, depth-first, each before its dependent.
    /// `prefix` is the manifest's directory relative to the root project ("" for the root).
    fn dependencies(
        &mut self,
        home_dir: &Dir,
        home: &Path,
        prefix: &str,
        manifest: &Manifest,
        depth: usize,
    ) -> Result<(), EnvironmentError> {
        if !manifest.dependencies.is_empty() && depth >= DEPENDENCY_DEPTH {
            return Err(EnvironmentError::new(format!(
                "Dependencies are vendored at most {DEPENDENCY_DEPTH} levels deep; `{}` goes deeper.",
                manifest.name
            )));
        }
        for (name, relative) in &manifest.dependencies {
            let (directory, dependency_dir) = contained_dir(home_dir, home, relative)?;
            let dependency_manifest = read_manifest(&directory.join("cairn.toml"))?;
            if &dependency_manifest.name != name {
                return Err(EnvironmentError::new(format!(
                    "The dependency `{name}` at `{relative}` is a project named `{}`; the key must be its name.",
                    dependency_manifest.name
                )));
            }
            if self.seen.iter().any(|(dir, _)| dir == &directory) {
                continue; // A diamond loads once, where it was first mentioned.
            }
            if self.seen.iter().any(|(_, seen_name)| seen_name == name) {
                return Err(EnvironmentError::new(format!(
                    "Two projects of this build are named `{name}`; a name pins one project."
                )));
            }
            self.seen.push((directory.clone(), name.clone()));
            let nested_prefix = if prefix.is_empty() { relative.clone() } else { format!("{prefix}/{relative}") };
            self.dependencies(&dependency_dir, &directory, &nested_prefix, &dependency_manifest, depth + 1)?;
            for source in &dependency_manifest.sources {
                let path = contained_file(&dependency_dir, &directory, source, "cairn")?;
                self.add_file(&dependency_dir, source, format!("{nested_prefix}/{source}"), path, name.clone())?;
            }
            for test in &dependency_manifest.tests {
                contained_file(&dependency_dir, &directory, test, "json")?;
            }
            self.dependencies.push(Dependency { name: name.clone(), path: nested_prefix });
        }
        Ok(())
    }
}

/// Reads the source `name` in `dir`: a regular file (never through a link, never a FIFO or
/// device) of at most `limit` bytes, UTF-8, byte-order mark dropped.
fn read_source(dir: &Dir, name: &str, shown_name: &str, limit: usize) -> Result<(String, bool), EnvironmentError> {
    let bytes = dir.read_regular(name, limit as u64).map_err(|err| match err {
        safe::ReadError::TooLarge(_) => {
            EnvironmentError::new(format!("`{shown_name}` exceeds its {limit}-byte input limit (E-SOURCE-LIMIT)."))
        }
        other => EnvironmentError::new(format!("Cannot read `{shown_name}`: {other}.")),
    })?;
    decode_source(bytes, shown_name)
}

/// Decodes source bytes: UTF-8 only, a leading byte-order mark dropped and reported.
pub fn decode_source(mut bytes: Vec<u8>, shown_name: &str) -> Result<(String, bool), EnvironmentError> {
    let had_bom = bytes.starts_with(b"\xEF\xBB\xBF");
    if had_bom {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, had_bom)),
        Err(err) => {
            let offset = err.utf8_error().valid_up_to() + if had_bom { 3 } else { 0 };
            Err(EnvironmentError::new(format!(
                "`{shown_name}` is not UTF-8 text (an invalid byte at offset {offset}); CAIRN sources are UTF-8."
            )))
        }
    }
}

/// True when `value` is a canonical relative path: `/`-separated plain segments, none `.` or `..`.
pub fn is_canonical_relative(value: &str) -> bool {
    !value.is_empty()
        && !value.contains('\\')
        && !value.starts_with('/')
        && value.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        })
}

/// Resolves a manifest path entry to a regular file inside `root` with extension `ext`,
/// reached without a symbolic link.
fn contained_file(root_dir: &Dir, root: &Path, value: &str, ext: &str) -> Result<PathBuf, EnvironmentError> {
    canonical_entry(value, &format!("a relative .{ext} path"))?;
    if !value.ends_with(&format!(".{ext}")) {
        return Err(EnvironmentError::new(format!("`{value}` must be a relative path ending in .{ext}.")));
    }
    let (dirs, name) = safe::split(value);
    let found = root_dir.walk(dirs, false).map_err(|err| linked(value, &err)).and_then(|dir| {
        dir.stat(name).map_err(|err| EnvironmentError::new(format!("Cannot read `{value}`: {}.", lower(&err))))
    })?;
    match found {
        Some(stat) if stat.kind == safe::Kind::File => Ok(root.join(value)),
        Some(stat) if stat.kind == safe::Kind::Symlink => Err(EnvironmentError::new(format!(
            "`{value}` passes through a symbolic link; links are not project inputs."
        ))),
        _ => Err(EnvironmentError::new(format!("The project input `{value}` is missing or not a file."))),
    }
}

/// A dependency directory inside `home`, reached without a symbolic link: its path and the
/// directory opened.
fn contained_dir(home_dir: &Dir, home: &Path, value: &str) -> Result<(PathBuf, Dir), EnvironmentError> {
    canonical_entry(value, "a relative directory inside the project")?;
    let dir = home_dir.walk(value, false).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => {
            EnvironmentError::new(format!("The dependency directory `{value}` is missing."))
        }
        _ => linked(value, &err),
    })?;
    Ok((home.join(value), dir))
}

fn canonical_entry(value: &str, what: &str) -> Result<(), EnvironmentError> {
    if !is_canonical_relative(value) {
        return Err(EnvironmentError::new(format!(
            "`{value}` is not {what}: paths are `/`-separated plain names, without `.`, `..`, backslashes or a leading `/`."
        )));
    }
    Ok(())
}

fn linked(value: &str, err: &std::io::Error) -> EnvironmentError {
    if err.kind() == std::io::ErrorKind::NotFound {
        return EnvironmentError::new(format!("The project input `{value}` is missing or not a file."));
    }
    EnvironmentError::new(format!(
        "`{value}` passes through a symbolic link; links are not project inputs ({}).",
        lower(err)
    ))
}

fn lower(err: &std::io::Error) -> String {
    let text = err.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
mod tests;
