//! `cairn new` (tools.md §3.22): a project that checks and runs at once, from a template.
//!
//! Templates (`templates/`, compiled into the binary, `@NAME@` replaced by the project's name):
//! `default` (a `math` module with test blocks and a `main` that uses it), `cli` (arguments through
//! std.env), `lib` (a library with tests), `service` (a TCP line service over std.net that checks
//! itself on localhost) and `parallel` (a parallel region and a reduction). Every project gets a
//! `cairn.toml` and a `.gitignore` holding `build/`. Never overwrites: an existing directory, even
//! empty, is an environment error, as is a name outside the project-name pattern.
//!
//! Decided: the default template's tests are `test` blocks in `src/math.cairn`, not the task
//! contract `tests/average.json` of tools.md §3.22 — this build does not run task contracts, and
//! a new project's `cairn test` must pass. `--from-sol-execbench` is not built (an environment
//! error says so).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::output::{Output, to_map};

/// The templates `--template` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Template {
    Default,
    Cli,
    Lib,
    Service,
    Parallel,
}

impl Template {
    fn name(self) -> &'static str {
        match self {
            Template::Default => "default",
            Template::Cli => "cli",
            Template::Lib => "lib",
            Template::Service => "service",
            Template::Parallel => "parallel",
        }
    }

    /// The template's files: (path in the project, text with `@NAME@`), and the manifest's
    /// sources and kind.
    fn files(self) -> (&'static [(&'static str, &'static str)], &'static str) {
        match self {
            Template::Default => (
                &[
                    ("src/math.cairn", include_str!("../templates/default/math.cairn")),
                    ("src/main.cairn", include_str!("../templates/default/main.cairn")),
                ],
                "exe",
            ),
            Template::Cli => (&[("src/main.cairn", include_str!("../templates/cli/main.cairn"))], "exe"),
            Template::Lib => (&[("src/lib.cairn", include_str!("../templates/lib/lib.cairn"))], "library"),
            Template::Service => (&[("src/main.cairn", include_str!("../templates/service/main.cairn"))], "exe"),
            Template::Parallel => (&[("src/main.cairn", include_str!("../templates/parallel/main.cairn"))], "exe"),
        }
    }
}

#[derive(Serialize)]
struct Created {
    status: &'static str,
    project: String,
    template: &'static str,
    network_access: bool,
}

pub fn run(dir: &Path, template: Template, from_benchmark: Option<&Path>, out: Output) -> u8 {
    if from_benchmark.is_some() {
        out.environment("--from-sol-execbench is not built in this version of cairn: make a project from a template.");
        return 2;
    }
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    if !cairn_vfs::valid_project_name(&name) {
        out.environment(&format!(
            "The project name `{name}` (the directory's name) must match [A-Za-z][A-Za-z0-9_-]{{0,63}}."
        ));
        return 2;
    }
    if dir.exists() {
        out.environment(&format!(
            "{} exists already; `cairn new` never overwrites: name a new directory.",
            dir.display()
        ));
        return 2;
    }
    match write(dir, &name, template) {
        Ok(root) => {
            let record = Created {
                status: "created",
                project: root.display().to_string(),
                template: template.name(),
                network_access: false,
            };
            let detail =
                format!("{} ({} template); try `cairn run {}`", record.project, record.template, dir.display());
            out.summary(&to_map(&record), true, &detail);
            0
        }
        Err(message) => {
            let _ = std::fs::remove_dir_all(dir);
            out.environment(&message);
            2
        }
    }
}

fn write(dir: &Path, name: &str, template: Template) -> Result<PathBuf, String> {
    let (files, kind) = template.files();
    let fail = |what: &Path, e: std::io::Error| format!("cannot write {}: {e}", what.display());
    std::fs::create_dir_all(dir.join("src")).map_err(|e| fail(dir, e))?;
    // A library's module is named after the project, which may hold a `-`: use `_` there.
    let module = name.replace('-', "_");
    let sources: Vec<String> = files.iter().map(|(path, _)| format!("\"{path}\"")).collect();
    let manifest = format!(
        "[project]\nname = \"{name}\"\nsources = [{}]\n\n[build]\nkind = \"{kind}\"\narch = \"baseline\"\n",
        sources.join(", ")
    );
    let root = dir.canonicalize().map_err(|e| fail(dir, e))?;
    std::fs::write(root.join("cairn.toml"), manifest).map_err(|e| fail(&root.join("cairn.toml"), e))?;
    std::fs::write(root.join(".gitignore"), "build/\n").map_err(|e| fail(&root.join(".gitignore"), e))?;
    for (path, text) in files {
        let target = root.join(path);
        std::fs::write(&target, text.replace("@NAME@", &module)).map_err(|e| fail(&target, e))?;
    }
    Ok(root)
}
