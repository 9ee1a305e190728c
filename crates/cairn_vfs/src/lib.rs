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

pub mod journal;
mod manifest;

use std::fmt;
use std::path::{Path, PathBuf};

pub use manifest::{BuildConfig, BuildKind, Manifest, SYSTEM_LIBRARIES, read_manifest};

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

    /// The combined source (tools.md §2.2): a one-file program's text exactly; otherwise, per
    /// file in load order, the line `// source: <name>`, the text, and a newline.
    pub fn combined_source(&self) -> String {
        if self.is_single_file() && self.files.len() == 1 {
            return self.files[0].text.clone();
        }
        let mut out = String::new();
        for file in &self.files {
            out.push_str("// source: ");
            out.push_str(&file.name);
            out.push('\n');
            out.push_str(&file.text);
            out.push('\n');
        }
        out
    }
}

/// Reads the program that `path` names (see the module comment).
pub fn load(path: &Path) -> Result<Program, EnvironmentError> {
    let metadata = std::fs::metadata(path)
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", path.display(), lower(&err))))?;
    if metadata.is_dir() {
        let manifest = path.join("cairn.toml");
        if !manifest.is_file() {
            return Err(EnvironmentError::new(format!(
                "The directory `{}` has no cairn.toml; pass a .cairn file, a project directory, or a manifest.",
                path.display()
            )));
        }
        return load_project(&manifest);
    }
    match path.extension().and_then(|ext| ext.to_str()) {
        Some("cairn") => load_single_file(path),
        Some("toml") => load_project(path),
        _ => Err(EnvironmentError::new(format!(
            "`{}` is neither a .cairn file, a project directory, nor a manifest ending in .toml.",
            path.display()
        ))),
    }
}

fn load_single_file(path: &Path) -> Result<Program, EnvironmentError> {
    let canonical = path
        .canonicalize()
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", path.display(), lower(&err))))?;
    let root = canonical.parent().map(Path::to_path_buf).unwrap_or_default();
    let file_name = canonical.file_name().and_then(|n| n.to_str()).unwrap_or("main.cairn").to_string();
    let name = canonical.file_stem().and_then(|n| n.to_str()).unwrap_or("main").to_string();
    let (text, had_bom) = read_source(&canonical, &file_name, SOURCE_LIMIT)?;
    Ok(Program {
        name: name.clone(),
        root,
        manifest_path: None,
        build: BuildConfig::default(),
        tests: Vec::new(),
        dependencies: Vec::new(),
        files: vec![SourceFile { name: file_name, path: canonical, text, had_bom, project: name }],
    })
}

fn load_project(manifest_path: &Path) -> Result<Program, EnvironmentError> {
    let manifest_path = manifest_path
        .canonicalize()
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{}`: {}.", manifest_path.display(), lower(&err))))?;
    let root = manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
    let manifest = read_manifest(&manifest_path)?;
    let mut loader = Loader {
        files: Vec::new(),
        dependencies: Vec::new(),
        seen: vec![(root.clone(), manifest.name.clone())],
        total: 0,
    };
    loader.dependencies(&root, "", &manifest, 0)?;
    for relative in &manifest.sources {
        let path = contained_file(&root, relative, "cairn")?;
        loader.add_file(relative.clone(), path, manifest.name.clone())?;
    }
    for relative in &manifest.tests {
        contained_file(&root, relative, "json")?;
    }
    Ok(Program {
        name: manifest.name.clone(),
        root,
        manifest_path: Some(manifest_path),
        build: manifest.build.clone(),
        tests: manifest.tests.clone(),
        dependencies: loader.dependencies,
        files: loader.files,
    })
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
    fn add_file(&mut self, name: String, path: PathBuf, project: String) -> Result<(), EnvironmentError> {
        let (text, had_bom) = read_source(&path, &name, SOURCE_LIMIT)?;
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
            let directory = contained_dir(home, relative)?;
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
            self.dependencies(&directory, &nested_prefix, &dependency_manifest, depth + 1)?;
            for source in &dependency_manifest.sources {
                let path = contained_file(&directory, source, "cairn")?;
                self.add_file(format!("{nested_prefix}/{source}"), path, name.clone())?;
            }
            for test in &dependency_manifest.tests {
                contained_file(&directory, test, "json")?;
            }
            self.dependencies.push(Dependency { name: name.clone(), path: nested_prefix });
        }
        Ok(())
    }
}

/// Reads a source file: at most `limit` bytes, UTF-8, byte-order mark dropped.
pub fn read_source(path: &Path, shown_name: &str, limit: usize) -> Result<(String, bool), EnvironmentError> {
    let bytes = std::fs::read(path)
        .map_err(|err| EnvironmentError::new(format!("Cannot read `{shown_name}`: {}.", lower(&err))))?;
    if bytes.len() > limit {
        return Err(EnvironmentError::new(format!("`{shown_name}` exceeds its {limit}-byte input limit.")));
    }
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

/// Resolves a manifest path entry to a file inside `root` with extension `ext`.
fn contained_file(root: &Path, value: &str, ext: &str) -> Result<PathBuf, EnvironmentError> {
    let target = contained(root, value, &format!("a relative .{ext} path"))?;
    if !value.ends_with(&format!(".{ext}")) {
        return Err(EnvironmentError::new(format!("`{value}` must be a relative path ending in .{ext}.")));
    }
    if !target.is_file() {
        return Err(EnvironmentError::new(format!("The project input `{value}` is missing or not a file.")));
    }
    Ok(target)
}

fn contained_dir(root: &Path, value: &str) -> Result<PathBuf, EnvironmentError> {
    let target = contained(root, value, "a relative directory inside the project")?;
    if !target.is_dir() {
        return Err(EnvironmentError::new(format!("The dependency directory `{value}` is missing.")));
    }
    target.canonicalize().map_err(|err| EnvironmentError::new(format!("Cannot read `{value}`: {}.", lower(&err))))
}

fn contained(root: &Path, value: &str, what: &str) -> Result<PathBuf, EnvironmentError> {
    if !is_canonical_relative(value) {
        return Err(EnvironmentError::new(format!(
            "`{value}` is not {what}: paths are `/`-separated plain names, without `.`, `..`, backslashes or a leading `/`."
        )));
    }
    let mut target = root.to_path_buf();
    for segment in value.split('/') {
        target.push(segment);
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(EnvironmentError::new(format!(
                "`{value}` passes through a symbolic link; links are not project inputs."
            )));
        }
    }
    Ok(target)
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
