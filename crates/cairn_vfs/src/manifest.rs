//! The project manifest, `cairn.toml` (tools.md §2): data only, read strictly.
//!
//! Invariant: a manifest that reads without error names only known tables and keys, a valid
//! project name, 1..1024 distinct `.cairn` sources, 0..128 distinct `.json` tests, known build
//! choices, and dependency and foreign tables within their limits. Paths are checked for shape
//! here and for existence and containment when the project is loaded.

use std::path::Path;

use toml::{Table, Value};

use crate::{EnvironmentError, is_canonical_relative, lower};

/// The largest manifest read, in bytes.
pub const MANIFEST_LIMIT: usize = 65_536;

/// The system libraries a project's own externs may link (`[build] libraries`). A closed table:
/// a manifest names rows, never flags or paths.
pub const SYSTEM_LIBRARIES: &[&str] = &["dl", "m", "pthread", "rt", "z"];

const ARCHES_X86: &[&str] = &["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"];
const ARCHES_ARM: &[&str] = &["armv8-a", "armv8.2-a", "armv9-a"];

/// Library or executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuildKind {
    #[default]
    Library,
    Exe,
}

/// The `[build]` table, with defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildConfig {
    pub kind: BuildKind,
    pub arch: String,
    pub target: String,
    pub libraries: Vec<String>,
    pub device_target: Option<String>,
}

impl Default for BuildConfig {
    fn default() -> BuildConfig {
        BuildConfig {
            kind: BuildKind::Library,
            arch: "baseline".to_string(),
            target: "hosted".to_string(),
            libraries: Vec::new(),
            device_target: None,
        }
    }
}

/// A manifest as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub name: String,
    pub sources: Vec<String>,
    pub tests: Vec<String>,
    pub build: BuildConfig,
    /// `[dependencies]`: name → directory, in the manifest's order.
    pub dependencies: Vec<(String, String)>,
    /// `[foreign]`: source → C symbols, in the manifest's order.
    pub foreign: Vec<(String, Vec<String>)>,
}

/// Reads and checks the manifest at `path`.
pub fn read_manifest(path: &Path) -> Result<Manifest, EnvironmentError> {
    let shown = path.file_name().and_then(|n| n.to_str()).unwrap_or("cairn.toml").to_string();
    // The manifest itself is never read through a link, and a FIFO or device is refused.
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let cannot = |why: String| EnvironmentError::new(format!("Cannot read the manifest `{}`: {why}.", path.display()));
    let dir = crate::safe::Dir::root(parent).map_err(|err| cannot(lower(&err)))?;
    let bytes = dir.read_regular(&shown, MANIFEST_LIMIT as u64).map_err(|err| match err {
        crate::safe::ReadError::TooLarge(_) => {
            EnvironmentError::new(format!("The manifest `{shown}` exceeds {MANIFEST_LIMIT} bytes."))
        }
        other => cannot(other.to_string()),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| EnvironmentError::new(format!("The manifest `{shown}` is not UTF-8 text.")))?;
    parse_manifest(&text).map_err(|message| EnvironmentError::new(format!("{shown}: {message}")))
}

/// Checks manifest text; the error is a sentence without the file name.
pub fn parse_manifest(text: &str) -> Result<Manifest, String> {
    let table: Table = text
        .parse()
        .map_err(|err: toml::de::Error| format!("not valid TOML: {}", err.message().trim_end_matches('.')))?;
    for key in table.keys() {
        if !matches!(key.as_str(), "project" | "build" | "dependencies" | "foreign") {
            return Err(format!(
                "unknown table `{key}`; a manifest holds only [project], [build], [dependencies] and [foreign] (hooks are not supported)."
            ));
        }
    }
    let project = sub_table(&table, "project")?.ok_or("the [project] table is missing.")?;
    only_keys(project, "project", &["name", "sources", "tests"])?;
    let name = match project.get("name") {
        Some(Value::String(name)) if valid_project_name(name) => name.clone(),
        Some(Value::String(name)) => {
            return Err(format!("the project name `{name}` must match [A-Za-z][A-Za-z0-9_-]{{0,63}}."));
        }
        _ => return Err("[project] needs `name`, a string.".to_string()),
    };
    let sources =
        path_list(project, "sources", 1, 1024, "cairn")?.ok_or("[project] needs `sources`, a list of .cairn paths.")?;
    let tests = path_list(project, "tests", 0, 128, "json")?.unwrap_or_default();

    let mut build = BuildConfig::default();
    if let Some(table) = sub_table(&table, "build")? {
        only_keys(table, "build", &["kind", "arch", "target", "libraries", "device_target"])?;
        if let Some(kind) = string_key(table, "build", "kind")? {
            build.kind = match kind.as_str() {
                "library" => BuildKind::Library,
                "exe" => BuildKind::Exe,
                other => {
                    return Err(format!("`kind = \"{other}\"` is unknown; use \"library\" or \"exe\"."));
                }
            };
        }
        if let Some(arch) = string_key(table, "build", "arch")? {
            check_arch(&arch)?;
            build.arch = arch;
        }
        if let Some(target) = string_key(table, "build", "target")? {
            if !matches!(target.as_str(), "hosted" | "aarch64-virt") {
                return Err(format!("`target = \"{target}\"` is unknown; known targets are aarch64-virt and hosted."));
            }
            build.target = target;
        }
        if let Some(value) = table.get("libraries") {
            let Value::Array(items) = value else {
                return Err("`libraries` must be a list of library names.".to_string());
            };
            if items.len() > 8 {
                return Err("`libraries` names at most 8 libraries.".to_string());
            }
            for item in items {
                let Value::String(library) = item else {
                    return Err("`libraries` must be a list of library names.".to_string());
                };
                if !SYSTEM_LIBRARIES.contains(&library.as_str()) {
                    return Err(format!(
                        "`{library}` is not a known system library; known: {}.",
                        SYSTEM_LIBRARIES.join(", ")
                    ));
                }
                if build.libraries.contains(library) {
                    return Err(format!("`libraries` names `{library}` twice."));
                }
                build.libraries.push(library.clone());
            }
            if !build.libraries.is_empty() && build.target != "hosted" {
                return Err("a freestanding image links no system library; remove `libraries`.".to_string());
            }
        }
        if let Some(device_target) = string_key(table, "build", "device_target")? {
            check_device_target(&device_target)?;
            build.device_target = Some(device_target);
        }
    }

    let mut dependencies = Vec::new();
    if let Some(table) = sub_table(&table, "dependencies")? {
        if table.len() > 64 {
            return Err("[dependencies] holds at most 64 entries.".to_string());
        }
        for (key, value) in table {
            let Value::String(directory) = value else {
                return Err(format!("the dependency `{key}` must name a relative directory as a string."));
            };
            if !is_canonical_relative(directory) {
                return Err(format!(
                    "the dependency `{key}` must be a relative directory inside the project, not `{directory}`."
                ));
            }
            dependencies.push((key.clone(), directory.clone()));
        }
    }

    let mut foreign = Vec::new();
    if let Some(table) = sub_table(&table, "foreign")? {
        if table.len() > 64 {
            return Err("[foreign] holds at most 64 entries.".to_string());
        }
        for (key, value) in table {
            if !is_canonical_relative(key) || !(key.ends_with(".cpp") || key.ends_with(".cc") || key.ends_with(".cu")) {
                return Err(format!("the foreign source `{key}` must be a relative .cpp, .cc or .cu path."));
            }
            let Value::Array(items) = value else {
                return Err(format!("the foreign source `{key}` must list the C symbols it defines."));
            };
            if items.len() > 256 {
                return Err(format!("the foreign source `{key}` names more than 256 symbols."));
            }
            let mut symbols: Vec<String> = Vec::new();
            for item in items {
                match item {
                    Value::String(symbol) if is_c_identifier(symbol) && !symbols.contains(symbol) => {
                        symbols.push(symbol.clone())
                    }
                    _ => {
                        return Err(format!("the foreign source `{key}` must list distinct C identifiers."));
                    }
                }
            }
            foreign.push((key.clone(), symbols));
        }
    }
    Ok(Manifest { name, sources, tests, build, dependencies, foreign })
}

fn sub_table<'a>(table: &'a Table, key: &str) -> Result<Option<&'a Table>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(Value::Table(inner)) => Ok(Some(inner)),
        Some(_) => Err(format!("`{key}` must be a table.")),
    }
}

fn only_keys(table: &Table, name: &str, allowed: &[&str]) -> Result<(), String> {
    for key in table.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(format!("unknown key `{key}` in [{name}]; allowed keys: {}.", allowed.join(", ")));
        }
    }
    Ok(())
}

fn string_key(table: &Table, name: &str, key: &str) -> Result<Option<String>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(Value::String(value)) => Ok(Some(value.clone())),
        Some(_) => Err(format!("`{key}` in [{name}] must be a string.")),
    }
}

fn path_list(table: &Table, key: &str, low: usize, high: usize, ext: &str) -> Result<Option<Vec<String>>, String> {
    let Some(value) = table.get(key) else {
        return Ok(None);
    };
    let Value::Array(items) = value else {
        return Err(format!("`{key}` must be a list of paths."));
    };
    if items.len() < low || items.len() > high {
        return Err(format!("`{key}` must hold {low}..{high} paths, not {}.", items.len()));
    }
    let mut paths: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let Value::String(path) = item else {
            return Err(format!("`{key}` must be a list of path strings."));
        };
        if !is_canonical_relative(path) || !path.ends_with(&format!(".{ext}")) {
            return Err(format!(
                "`{path}` in `{key}` must be a relative .{ext} path of plain `/`-separated names (no `.`, `..` or backslash)."
            ));
        }
        if paths.contains(path) {
            return Err(format!("`{key}` names `{path}` twice."));
        }
        paths.push(path.clone());
    }
    Ok(Some(paths))
}

pub fn valid_project_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic())
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A CPU profile of this host's family (tools.md §2.1: the manifest's `arch`, `--arch`).
pub fn check_arch(arch: &str) -> Result<(), String> {
    if arch == "baseline" {
        return Ok(());
    }
    let host_is_arm = cfg!(target_arch = "aarch64");
    let (own, other) = if host_is_arm { (ARCHES_ARM, ARCHES_X86) } else { (ARCHES_X86, ARCHES_ARM) };
    if own.contains(&arch) {
        return Ok(());
    }
    if other.contains(&arch) {
        return Err(format!(
            "`arch = \"{arch}\"` is not a profile of this host's family; cross compilation is not supported."
        ));
    }
    Err(format!("`arch = \"{arch}\"` is unknown; use baseline or one of {}.", own.join(", ")))
}

/// `sm_` + digits + optional `a` (from sm_90) or `f` (from sm_100) (tools.md §4.1).
pub fn check_device_target(spelling: &str) -> Result<(), String> {
    let bad =
        || format!("`{spelling}` is not a device target; write sm_ followed by the compute capability, as in sm_90a.");
    let rest = spelling.strip_prefix("sm_").ok_or_else(bad)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let suffix = &rest[digits.len()..];
    if digits.is_empty() || digits.len() > 4 || !matches!(suffix, "" | "a" | "f") {
        return Err(bad());
    }
    let capability: u32 = digits.parse().map_err(|_| bad())?;
    if suffix == "a" && capability < 90 {
        return Err(format!("`{spelling}`: the `a` suffix exists from sm_90 on."));
    }
    if suffix == "f" && capability < 100 {
        return Err(format!("`{spelling}`: the `f` suffix exists from sm_100 on."));
    }
    Ok(())
}

fn is_c_identifier(text: &str) -> bool {
    let mut bytes = text.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
