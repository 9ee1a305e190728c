//! `cairn state` and `cairn doc` end to end (tools.md §3.6–§3.7): records, deltas that apply,
//! the Markdown reference, and exit statuses.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

struct Run {
    status: i32,
    stdout: String,
}

fn cairn(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env_remove("CAIRN_FORMAT")
        .env("NO_COLOR", "1")
        .output()
        .expect("run cairn");
    Run { status: output.status.code().unwrap_or(-1), stdout: String::from_utf8_lossy(&output.stdout).to_string() }
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).to_string_lossy().to_string()
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-state-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write");
        path.to_string_lossy().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/cli"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

fn object(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => map,
        other => panic!("not a JSON object: {other:?} from {text}"),
    }
}

const PROGRAM: &str = "struct Pair { a:u64; b:u64; }\n\n// One more than x.\nfn step(x:u64) -> u64 {\n  return x + 1;\n}\n\nfn fill(n:usize, out:rw<u64>[n]) {\n  for i in 0..n {\n    out[i] = step(u64(i));\n  }\n}\n";

#[test]
fn the_state_of_an_accepted_program() {
    let scratch = Scratch::new("typed");
    let file = scratch.write("p.cairn", PROGRAM);
    let run = cairn(&["state", &file, "--format", "json"]);
    assert_eq!(run.status, 0);
    settings().bind(|| insta::assert_snapshot!("state_typed", run.stdout));
}

#[test]
fn the_state_of_a_refused_program_exits_one_and_names_the_refusal() {
    let scratch = Scratch::new("refused");
    let file = scratch.write("p.cairn", &PROGRAM.replace("return x + 1;", "return true;"));
    let run = cairn(&["state", &file, "--format", "json"]);
    assert_eq!(run.status, 1);
    settings().bind(|| insta::assert_snapshot!("state_refused", run.stdout));
}

#[test]
fn a_delta_from_a_saved_state_applies_to_it() {
    let scratch = Scratch::new("since");
    let file = scratch.write("p.cairn", PROGRAM);
    let before = cairn(&["state", &file, "--format", "json"]).stdout;
    let saved = scratch.write("state.json", &before);
    scratch.write("p.cairn", &PROGRAM.replace("    out[i] = step(u64(i));\n", "    out[i] = 1;\n    println(i);\n"));
    let delta = cairn(&["state", &file, "--since", &saved, "--format", "json"]);
    assert_eq!(delta.status, 0);
    let delta = object(&delta.stdout);
    assert_eq!(delta["protocol"], "cairn.state-delta/1");
    let moved: Vec<&String> = delta["modules"][""].as_object().expect("the root module moved").keys().collect();
    assert_eq!(moved, ["fill"]);
    let after = object(&cairn(&["state", &file, "--format", "json"]).stdout);
    let applied = cairn_agent::apply_delta(&object(&before), &delta).expect("applies");
    assert_eq!(applied, after);
}

#[test]
fn an_unreadable_saved_state_is_an_environment_error() {
    let scratch = Scratch::new("bad-since");
    let file = scratch.write("p.cairn", PROGRAM);
    let saved = scratch.write("state.json", "[1, 2]");
    for since in [saved, scratch.0.join("missing.json").to_string_lossy().to_string()] {
        let run = cairn(&["state", &file, "--since", &since, "--format", "json"]);
        assert_eq!(run.status, 2);
        assert_eq!(object(&run.stdout)["code"], "E-PROJECT-OR-ENVIRONMENT");
    }
}

#[test]
fn the_reference_of_a_program_and_of_a_project() {
    let scratch = Scratch::new("doc");
    let file = scratch.write("p.cairn", PROGRAM);
    let single = cairn(&["doc", &file]);
    assert_eq!(single.status, 0);
    settings().bind(|| insta::assert_snapshot!("doc_single", single.stdout));
    let project = cairn(&["doc", &repo("examples/weather")]);
    assert_eq!(project.status, 0);
    settings().bind(|| insta::assert_snapshot!("doc_project", project.stdout));
    let one_module = cairn(&["doc", &repo("examples/weather"), "--module", "weather.units"]);
    assert!(one_module.stdout.starts_with("# weather.units\n"), "{}", one_module.stdout);
    assert!(!one_module.stdout.contains("weather.app"));
}

#[test]
fn the_reference_of_the_standard_library() {
    let core = cairn(&["doc", "--std", "--module", "core"]);
    assert_eq!(core.status, 0);
    assert!(core.stdout.starts_with("# std.core\n\n```cairn\n"), "{}", core.stdout);
    assert!(core.stdout.contains("pub enum Option[T] { Some(T); None; }"));
    let unknown = cairn(&["doc", "--std", "--module", "nosuch", "--format", "json"]);
    assert_eq!(unknown.status, 2);
}

#[test]
fn a_refused_program_is_not_documented() {
    let scratch = Scratch::new("doc-refused");
    let file = scratch.write("p.cairn", &PROGRAM.replace("return x + 1;", "return true;"));
    let run = cairn(&["doc", &file, "--format", "json"]);
    assert_eq!(run.status, 1);
    assert_eq!(object(&run.stdout)["code"], "E-TYPE-MISMATCH");
}
