//! Confined runs of agent-written code (issue 18; docs/sandbox.md has the threat model): a program
//! an agent wrote runs in a disposable workspace, never in the project tree, under bubblewrap when
//! it is installed and usable, and always under resource limits.
//!
//! Under bubblewrap the program sees the system's programs and libraries read-only (`/usr`, the
//! `/lib`s, `/bin`), its own executable read-only, the workspace read-write, a fresh `/tmp` of
//! bounded size, and nothing else: no home, no project, no other file of this machine; no network
//! (its own network namespace, with only a loopback that nothing listens on), its own PID, IPC and
//! UTS namespaces, a new session (no terminal to inject into), and it dies with its parent. Without
//! bubblewrap it runs in the workspace with a cleared environment and the same limits, and the
//! report says it was not sandboxed.
//!
//! Limits (set before `exec`, inherited by everything it starts): address space, CPU seconds, the
//! size of any file it writes, the number of processes, no core dumps. The wall-clock deadline, the
//! output cap and the workspace's disk use (sampled while it runs) are watched by the caller's wait
//! ([`crate::process::wait_captured_watching`]). After the run, the workspace's manifest (each
//! path's kind, content digest, mode and link target) is compared with the one before: the
//! [`Changeset`] is reported and the workspace deleted — nothing it did is applied to the tree.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The limits of one confined run.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Limits {
    /// Address space, in MiB.
    pub memory_mib: u64,
    /// CPU time, in seconds (the kernel stops the program past it).
    pub cpu_seconds: u64,
    /// The largest file it may write, in MiB.
    pub file_mib: u64,
    /// Processes and threads it may have at once.
    pub processes: u64,
    /// The workspace's (and `/tmp`'s) size, in MiB.
    pub disk_mib: u64,
}

impl Limits {
    /// The limits of a run that may take `seconds` of wall time and `memory_mib` of memory.
    pub fn for_run(seconds: u64, memory_mib: u64) -> Limits {
        Limits { memory_mib, cpu_seconds: seconds.saturating_add(1), file_mib: 64, processes: 64, disk_mib: 256 }
    }
}

/// What a run changed in its workspace (never applied to the tree), by path relative to it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Changeset {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub modified: Vec<String>,
    pub mode_changed: Vec<String>,
}

impl Changeset {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty() && self.mode_changed.is_empty()
    }

    pub fn len(&self) -> usize {
        self.added.len() + self.removed.len() + self.modified.len() + self.mode_changed.len()
    }
}

/// How a run was confined, for its record.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Report {
    /// True when bubblewrap ran it.
    pub sandboxed: bool,
    /// `bubblewrap`, or `limits only` with why.
    pub confinement: String,
    pub limits: Limits,
    /// What the run changed in its workspace, discarded with it.
    pub changeset: Changeset,
    /// Set when the disk watch stopped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The bubblewrap executable, when it is installed and can make a sandbox on this machine
/// (user namespaces allowed); asked once per process.
pub fn bubblewrap() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let bwrap = crate::process::on_path("bwrap")?;
            let mut probe = Command::new(&bwrap);
            probe.args(system_binds()).args(["--unshare-all", "--die-with-parent", "--", "/usr/bin/true"]);
            // As the runs will: as `nobody` when this process is root.
            as_unprivileged(&mut probe);
            let works = probe
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            works.then_some(bwrap)
        })
        .as_deref()
}

/// The user a root toolchain runs sandboxes as (`nobody`): processes of root are exempt from the
/// process limit, so confined code must not run as root, even inside its own user namespace.
const NOBODY: u32 = 65534;

/// True when this process runs as root.
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Makes `command` drop to `nobody` before exec when this process is root.
fn as_unprivileged(command: &mut Command) {
    if !is_root() {
        return;
    }
    // SAFETY: the closure runs in the forked child before exec and calls only setgroups, setgid
    // and setuid, which are async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(NOBODY) != 0 || libc::setuid(NOBODY) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Why a run is not sandboxed, when it is not.
fn unsandboxed_reason() -> &'static str {
    "limits only: bubblewrap is not installed or cannot make a sandbox here (apt-get install bubblewrap); the program ran with this user's rights in a private directory"
}

/// The read-only binds of the system's programs and libraries (`/lib` and its kin as links where
/// the system merged them into `/usr`).
fn system_binds() -> Vec<String> {
    let mut args: Vec<String> = vec!["--ro-bind".into(), "/usr".into(), "/usr".into()];
    for dir in ["/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"] {
        match std::fs::read_link(dir) {
            Ok(target) => args.extend(["--symlink".into(), target.display().to_string(), dir.into()]),
            Err(_) if Path::new(dir).is_dir() => args.extend(["--ro-bind".into(), dir.into(), dir.into()]),
            Err(_) => {}
        }
    }
    args.extend(["--ro-bind-try".into(), "/etc/ld.so.cache".into(), "/etc/ld.so.cache".into()]);
    args
}

/// A disposable workspace: a private directory a confined program runs in, deleted when done.
pub struct Workspace {
    dir: PathBuf,
    before: BTreeMap<String, Entry>,
}

impl Workspace {
    /// Where the workspace is (the confined process sees it at the same path).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A fresh, empty workspace under `parent`.
    pub fn empty(parent: &Path, name: &str) -> std::io::Result<Workspace> {
        let dir = parent.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        Ok(Workspace { before: manifest(&dir), dir })
    }

    /// A workspace holding a copy of `project` (reflinked where the file system can), so a program
    /// that reads its project's files finds them, and what it writes stays in the copy. Build
    /// products and histories (`build/`, `.cairn/`, `.git/`, `target/`) are not the program's to
    /// see, and are not copied at all: a project's `build/` grows with every build.
    pub fn copy_of(project: &Path, parent: &Path, name: &str) -> std::io::Result<Workspace> {
        const SKIPPED: [&str; 4] = ["build", ".cairn", ".git", "target"];
        let workspace = Workspace::empty(parent, name)?;
        let entries: Vec<PathBuf> = std::fs::read_dir(project)?
            .flatten()
            .filter(|e| !SKIPPED.iter().any(|s| e.file_name() == *s))
            .map(|e| e.path())
            .collect();
        if !entries.is_empty() {
            let status = Command::new("cp")
                .args(["-a", "--reflink=auto", "--target-directory"])
                .arg(&workspace.dir)
                .args(&entries)
                .status()?;
            if !status.success() {
                return Err(std::io::Error::other(format!("cp could not copy {}", project.display())));
            }
        }
        Ok(Workspace { before: manifest(&workspace.dir), dir: workspace.dir })
    }

    /// The workspace a program's run gets: a project copied whole, a lone file alone (its
    /// directory may hold anything).
    pub fn of_program(program: &cairn_vfs::Program, parent: &Path, name: &str) -> std::io::Result<Workspace> {
        if !program.is_single_file() {
            return Workspace::copy_of(&program.root, parent, name);
        }
        let workspace = Workspace::empty(parent, name)?;
        for file in &program.files {
            std::fs::copy(&file.path, workspace.dir.join(&file.name))?;
        }
        Ok(Workspace { before: manifest(&workspace.dir), dir: workspace.dir })
    }

    /// The command that runs `program` with `args` confined to this workspace under `limits`;
    /// whether it is sandboxed.
    pub fn command(&self, program: &Path, args: &[String], limits: &Limits) -> (Command, bool) {
        self.wrapped(&[], program, args, limits)
    }

    /// [`Workspace::command`] run by `wrapper` (a system tool and its arguments, such as a
    /// profiler, which then runs `program`); empty: `program` itself.
    pub fn wrapped(&self, wrapper: &[String], program: &Path, args: &[String], limits: &Limits) -> (Command, bool) {
        std::fs::create_dir_all(self.dir.join(".tmp")).ok();
        let (mut command, sandboxed) = match bubblewrap() {
            Some(bwrap) => {
                let mut command = Command::new(bwrap);
                let dir = self.dir.display().to_string();
                let exe = program.display().to_string();
                // A root toolchain hands the workspace to `nobody`, who runs the sandbox.
                if is_root() {
                    chown_tree(&self.dir, NOBODY);
                }
                as_unprivileged(&mut command);
                // The process limit is set inside the sandbox, where it counts the sandbox's own
                // processes only (its user namespace); set on bubblewrap it would count every
                // process of the user and could stop the sandbox from starting.
                let nproc = format!("--nproc={}", limits.processes);
                command
                    .args(["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"])
                    .args(system_binds())
                    .args(["--proc", "/proc", "--dev", "/dev"])
                    .args(["--size", &(limits.disk_mib << 20).to_string(), "--tmpfs", "/tmp"])
                    .args(["--bind", &dir, &dir, "--ro-bind", &exe, &exe, "--chdir", &dir])
                    .args(["--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", &dir])
                    .args(["--setenv", "TMPDIR", "/tmp", "--", "/usr/bin/prlimit", &nproc, "--"])
                    .args(wrapper)
                    .arg(program)
                    .args(args);
                (command, true)
            }
            None => {
                let mut command = match wrapper.split_first() {
                    Some((tool, rest)) => {
                        let mut command = Command::new(tool);
                        command.args(rest).arg(program);
                        command
                    }
                    None => Command::new(program),
                };
                command
                    .args(args)
                    .current_dir(&self.dir)
                    .env_clear()
                    .env("PATH", "/usr/bin:/bin")
                    .env("HOME", &self.dir)
                    .env("TMPDIR", self.dir.join(".tmp"));
                (command, false)
            }
        };
        set_limits(&mut command, *limits);
        (command, sandboxed)
    }

    /// Bytes the workspace holds now (what the disk watch compares with the limit).
    pub fn disk_bytes(&self) -> u64 {
        fn walk(dir: &Path, total: &mut u64, budget: &mut usize) {
            let Ok(entries) = std::fs::read_dir(dir) else { return };
            for entry in entries.flatten() {
                if *budget == 0 {
                    return;
                }
                *budget -= 1;
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_dir() {
                    walk(&entry.path(), total, budget);
                } else {
                    *total += meta.blocks() * 512;
                }
            }
        }
        let (mut total, mut budget) = (0, 100_000);
        walk(&self.dir, &mut total, &mut budget);
        total
    }

    /// What the run changed, then the workspace is deleted.
    pub fn finish(self) -> Changeset {
        let after = manifest(&self.dir);
        let mut changes = Changeset::default();
        for (path, entry) in &after {
            match self.before.get(path) {
                None => changes.added.push(path.clone()),
                Some(old) if old.kind != entry.kind || old.digest != entry.digest || old.target != entry.target => {
                    changes.modified.push(path.clone())
                }
                Some(old) if old.mode != entry.mode => changes.mode_changed.push(path.clone()),
                Some(_) => {}
            }
        }
        changes.removed = self.before.keys().filter(|p| !after.contains_key(*p)).cloned().collect();
        let _ = make_removable(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
        changes
    }
}

/// A run's report, given how it was confined and what it changed.
pub fn report(sandboxed: bool, limits: Limits, changeset: Changeset, stopped: Option<String>) -> Report {
    Report {
        sandboxed,
        confinement: if sandboxed { "bubblewrap".into() } else { unsandboxed_reason().into() },
        limits,
        changeset,
        stopped,
    }
}

/// Sets `limits` in the child before `exec` (inherited by all it starts); the process limit is set
/// inside the sandbox instead ([`Workspace::command`]).
fn set_limits(command: &mut Command, limits: Limits) {
    let cap = |value: u64| libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
    let memory = cap(limits.memory_mib.saturating_mul(1 << 20));
    let cpu = cap(limits.cpu_seconds);
    let file = cap(limits.file_mib.saturating_mul(1 << 20));
    let core = cap(0);
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit, which is
    // async-signal-safe; the values are computed before the fork.
    unsafe {
        command.pre_exec(move || {
            libc::setrlimit(libc::RLIMIT_CORE, &core);
            libc::setrlimit(libc::RLIMIT_AS, &memory);
            libc::setrlimit(libc::RLIMIT_CPU, &cpu);
            libc::setrlimit(libc::RLIMIT_FSIZE, &file);
            Ok(())
        });
    }
}

/// One path of a workspace, as the changeset compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: &'static str,
    digest: Option<[u8; 32]>,
    mode: u32,
    target: Option<PathBuf>,
}

/// Every path under `dir` (not following links), relative to it.
fn manifest(dir: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            let relative = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
            if relative == ".tmp" {
                continue;
            }
            let kind = if meta.file_type().is_symlink() {
                "symlink"
            } else if meta.is_dir() {
                "directory"
            } else if meta.is_file() {
                "file"
            } else {
                "other"
            };
            let digest = (kind == "file").then(|| {
                let mut hasher = Sha256::new();
                if let Ok(mut file) = std::fs::File::open(&path) {
                    use std::io::Read;
                    let mut buffer = vec![0u8; 64 * 1024];
                    while let Ok(n) = file.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        hasher.update(&buffer[..n]);
                    }
                }
                hasher.finalize().into()
            });
            let target = (kind == "symlink").then(|| std::fs::read_link(&path).ok()).flatten();
            if kind == "directory" {
                stack.push(path.clone());
            }
            out.insert(relative, Entry { kind, digest, mode: meta.mode() & 0o7777, target });
        }
    }
    out
}

/// Hands every path under `dir` (and `dir`) to `uid` (its group too), not following links.
fn chown_tree(dir: &Path, uid: u32) {
    let _ = std::os::unix::fs::lchown(dir, Some(uid), Some(uid));
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let _ = std::os::unix::fs::lchown(&path, Some(uid), Some(uid));
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            chown_tree(&path, uid);
        }
    }
}

/// Gives the owner write and search rights on every directory under `dir`, so a program that took
/// them away cannot keep its workspace from being deleted.
fn make_removable(dir: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.is_dir() {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(dir)?.flatten() {
            let _ = make_removable(&entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changeset_names_what_was_added_removed_modified_and_re_moded() {
        let parent = std::env::temp_dir().join(format!("cairn-sandbox-unit-{}", std::process::id()));
        std::fs::create_dir_all(&parent).expect("parent");
        let project = parent.join("project");
        std::fs::create_dir_all(project.join("src")).expect("project");
        std::fs::write(project.join("src/a.cairn"), "a").expect("write");
        std::fs::write(project.join("b.txt"), "b").expect("write");
        std::fs::write(project.join("c.txt"), "c").expect("write");
        std::fs::create_dir_all(project.join("target")).expect("target");
        std::fs::create_dir_all(project.join("build/app-1")).expect("build");
        std::fs::write(project.join("build/app-1/app"), "binary").expect("write");
        let workspace = Workspace::copy_of(&project, &parent, "ws").expect("a copy");
        assert!(!workspace.dir.join("target").exists(), "build products are not copied");
        assert!(!workspace.dir.join("build").exists(), "the project's builds are not copied");
        std::fs::write(workspace.dir.join("src/a.cairn"), "changed").expect("write");
        std::fs::remove_file(workspace.dir.join("b.txt")).expect("remove");
        std::fs::set_permissions(workspace.dir.join("c.txt"), std::fs::Permissions::from_mode(0o755)).expect("mode");
        std::fs::write(workspace.dir.join("new.txt"), "n").expect("write");
        let dir = workspace.dir.to_path_buf();
        let changes = workspace.finish();
        assert_eq!(changes.added, ["new.txt"]);
        assert_eq!(changes.removed, ["b.txt"]);
        assert_eq!(changes.modified, ["src/a.cairn"]);
        assert_eq!(changes.mode_changed, ["c.txt"]);
        assert!(!dir.exists(), "the workspace is gone");
        assert_eq!(std::fs::read_to_string(project.join("src/a.cairn")).expect("read"), "a", "the tree is untouched");
        std::fs::remove_dir_all(&parent).ok();
    }
}
