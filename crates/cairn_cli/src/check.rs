//! `cairn check`: decide whether a program is accepted (tools.md §3.1).
//!
//! Load → parse → check through the semantic core, reporting every independent refusal: the
//! first is what a check that stops at the first would report, then up to 20 more in source
//! order, with `not_judged` counting the functions left without a verdict.

use std::path::Path;

use cairn_agent::edit::{SourceText, Sources};
use cairn_diagnostics::record::refusal_record;
use cairn_hir::Workspace;
use serde::Serialize;

use crate::output::{Output, to_map};

pub fn run(path: &Path, generics: bool, std_library: bool, device: &crate::device::DeviceFlags, out: Output) -> u8 {
    check_once(path, generics, std_library, device, true, out).0
}

/// `cairn check --watch`: a check now, then one each time the manifest or a listed source
/// changes (modification time and size, polled four times a second); a program that does not
/// load is watched at its path until it does. Ctrl-C ends it with exit 0. JSON records are one
/// per line; human mode starts each round with `-- <HH:MM:SS> <path>`.
pub fn watch(path: &Path, generics: bool, out: Output) -> u8 {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    extern "C" fn stop(_: libc::c_int) {
        STOP.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, stop as *const () as libc::sighandler_t);
    }
    let out = out.lines();
    loop {
        if matches!(out.format, crate::output::FormatChoice::Human) {
            out.text(&format!("-- {} {}\n", clock(), path.display()));
        }
        let (_, watched) = check_once(path, generics, false, &Default::default(), false, out);
        let stamps = |files: &[std::path::PathBuf]| -> Vec<Option<(std::time::SystemTime, u64)>> {
            files.iter().map(|f| std::fs::metadata(f).ok().and_then(|m| Some((m.modified().ok()?, m.len())))).collect()
        };
        let before = stamps(&watched);
        loop {
            if STOP.load(std::sync::atomic::Ordering::SeqCst) {
                return 0;
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
            if stamps(&watched) != before {
                break;
            }
        }
    }
}

/// The local time of day as `HH:MM:SS`.
fn clock() -> String {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as libc::time_t;
    // SAFETY: `localtime_r` writes only into the `tm` it is given.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe { libc::localtime_r(&now, &mut tm) };
    format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec)
}

/// One check: its exit status, and the files a watch follows (the manifest and every source; the
/// path itself when the program does not load).
fn check_once(
    path: &Path,
    generics: bool,
    std_library: bool,
    device: &crate::device::DeviceFlags,
    one_shot: bool,
    out: Output,
) -> (u8, Vec<std::path::PathBuf>) {
    let mut watched = Vec::new();
    let mut manifest_target: Option<String> = None;
    let mut workspace = if std_library {
        // The packaged library alone: a program that imports every module of it.
        let text: String = cairn_hir::library::MODULES.iter().map(|m| format!("import {};\n", m.name)).collect();
        Workspace::new(vec![SourceText { name: "std.cairn".into(), text }])
    } else {
        match cairn_vfs::load(path) {
            Ok(program) => {
                watched.extend(program.manifest_path.iter().cloned());
                watched.extend(program.files.iter().map(|f| f.path.clone()));
                manifest_target = program.build.device_target.clone();
                load_workspace(&program)
            }
            Err(error) => {
                out.environment(&error.message);
                let manifest = path.join("cairn.toml");
                watched.push(if path.is_dir() { manifest } else { path.to_path_buf() });
                return (2, watched);
            }
        }
    };
    let outcome = workspace.check();
    let lines = |file: Option<&str>, line: u32| -> Option<String> {
        let files = workspace.files();
        let state = match file {
            Some(name) => files.iter().find(|f| f.name == name)?,
            None => files.first()?,
        };
        state.line_index().line_text(&state.text(), line).map(str::to_string)
    };
    // Device work is judged against its target once the program is accepted.
    let judged = if outcome.refusal.is_none() {
        crate::device::judge(&workspace, manifest_target.as_deref(), device, false)
    } else {
        Ok(Default::default())
    };
    let status = match (outcome.refusal, judged) {
        (None, Err(diagnostic)) => {
            let refusal = cairn_diagnostics::Refusal::from_diagnostics(vec![diagnostic]);
            if let Some(refusal) = refusal {
                out.refusal(&refusal_record(&refusal), &lines);
            }
            1
        }
        (Some(refusal), _) => {
            out.refusal(&refusal_record(&refusal), &lines);
            1
        }
        (None, Ok(verdict)) => {
            // `--generics`: each own template's verdict at its witnesses (language §19.2).
            let verdicts: Option<std::collections::BTreeMap<String, String>> = generics.then(|| {
                let verdicts =
                    if std_library { workspace.certify_library_generics() } else { workspace.certify_generics() };
                verdicts.into_iter().collect()
            });
            let failed: Vec<(&String, &String)> =
                verdicts.iter().flatten().filter(|(_, verdict)| verdict.as_str() != "ok").collect();
            let record = Typed {
                status: "typed",
                functions: outcome.functions,
                library_functions: outcome.library_functions,
                formal_status: "not-verified",
                generics: verdicts.clone(),
                device_target: verdict.target,
            };
            let own = outcome.functions - outcome.library_functions;
            let mut detail = plural(own, "function");
            if outcome.library_functions > 0 {
                detail.push_str(&format!(", and {} from the library", outcome.library_functions));
            }
            for (name, verdict) in &failed {
                detail.push_str(&format!("\n  {name}: {verdict}"));
            }
            out.summary(&to_map(&record), failed.is_empty(), &detail);
            if failed.is_empty() { 0 } else { 1 }
        }
    };
    // A one-shot process ends here: tearing down every tree and memo would only cost time. A
    // watch drops it (the next round loads the program again).
    if one_shot {
        std::mem::forget(workspace);
    }
    (status, watched)
}

/// The program at `path`, or `None` once the environment record saying why it does not load is
/// printed (the caller exits 2).
pub fn load_program(path: &Path, out: Output) -> Option<cairn_vfs::Program> {
    match cairn_vfs::load(path) {
        Ok(program) => Some(program),
        Err(error) => {
            out.environment(&error.message);
            None
        }
    }
}

/// A program loaded and checked, for the commands that need it accepted: its workspace, or the
/// exit status after the environment record (2) or the refusal (1) was printed.
pub fn load_checked(path: &Path, out: Output) -> Result<(cairn_vfs::Program, Workspace), u8> {
    let program = load_program(path, out).ok_or(2u8)?;
    let mut workspace = load_workspace(&program);
    if let Some(refusal) = workspace.check().refusal {
        let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
        out.refusal(&cairn_diagnostics::record::refusal_record(&refusal), &lines);
        return Err(1);
    }
    Ok((program, workspace))
}

/// The workspace of a loaded program.
pub fn load_workspace(program: &cairn_vfs::Program) -> Workspace {
    Workspace::new(sources_of(program).files)
}

/// A loaded program as the agent crate takes it: its files in load order, and whether it is a
/// project (which decides the layout of its combined source, tools.md §2.2).
pub fn sources_of(program: &cairn_vfs::Program) -> Sources {
    Sources {
        files: program.files.iter().map(|f| SourceText { name: f.name.clone(), text: f.text.clone() }).collect(),
        project: !program.is_single_file(),
    }
}

/// The success record of tools.md §3.1.
#[derive(Serialize)]
struct Typed {
    status: &'static str,
    /// Every function of the checked program, the library's included.
    functions: usize,
    library_functions: usize,
    formal_status: &'static str,
    /// With `--generics`: each own template's verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    generics: Option<std::collections::BTreeMap<String, String>>,
    /// The device target device work was judged against.
    #[serde(skip_serializing_if = "Option::is_none")]
    device_target: Option<crate::device::DeviceTarget>,
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("{n} {noun}") } else { format!("{n} {noun}s") }
}
