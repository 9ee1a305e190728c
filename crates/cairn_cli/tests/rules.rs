//! `cairn rules` end to end (tools.md §3.5): the list, a card by name, the card of a code led by the
//! sentences naming it, the cards a program selects, and the `E-RULE` refusal, from the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_diagnostics::card_text::sentences;
use cairn_diagnostics::registry::{CardKind, card_named, cards, codes_named_in};
use serde_json::Value;

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn cairn_in(dir: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.args(args).env_remove("CAIRN_FORMAT").env("NO_COLOR", "1");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run cairn");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).to_string(),
        stderr: String::from_utf8_lossy(&output.stderr).to_string(),
    }
}

fn cairn(args: &[&str]) -> Run {
    cairn_in(None, args, &[])
}

/// The JSON record of `cairn rules ARGS --format json`, after checking the exit status.
#[track_caller]
fn rules(args: &[&str], status: i32) -> Value {
    let mut all = vec!["rules"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let run = cairn(&all);
    assert_eq!(run.status, status, "{args:?}: {}{}", run.stdout, run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", run.stdout))
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).to_string_lossy().to_string()
}

/// A scratch directory for one test, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-rules-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(&path, bytes).expect("write");
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

fn names(record: &Value) -> Vec<String> {
    record["cards"].as_array().expect("cards").iter().map(|c| c["name"].as_str().expect("name").to_string()).collect()
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().expect("object").keys().map(String::as_str).collect()
}

/// Every sentence of a text, sorted: what leading with a code must keep.
fn sorted_sentences(text: &str) -> Vec<String> {
    let mut all: Vec<String> = text.lines().flat_map(sentences).map(str::to_string).collect();
    all.sort();
    all
}

const SHAPES: &str = r#"// A record, a sum, a match and a borrow: records, sums and views.
struct Point { x: u32, y: u32 }
enum Shape { Dot(Point), Empty }
fn width(s: ro<Shape>) -> u32 {
  match s {
    Dot(p) => { return p.x; }
    Empty => { return 0; }
  }
  return 0;
}
fn main() -> i32 { return 0; }
"#;

#[test]
fn the_list_names_every_card_language_then_tool_without_text() {
    let listed = rules(&["--list"], 0);
    assert_eq!(keys(&listed), ["schema", "cards"]);
    assert_eq!(listed["schema"], "cairn.rules/1");
    let expected: Vec<&str> = cards().iter().map(|card| card.name).collect();
    assert_eq!(names(&listed), expected);
    for card in listed["cards"].as_array().expect("cards") {
        assert_eq!(keys(card), ["name", "kind", "codes", "words"]);
        for list in ["codes", "words"] {
            let items: Vec<&str> = card[list].as_array().expect("list").iter().filter_map(Value::as_str).collect();
            let mut sorted = items.clone();
            sorted.sort_unstable();
            assert_eq!(items, sorted, "{} {list}", card["name"]);
        }
        if card["kind"] == "tool" {
            assert_eq!(card["words"], serde_json::json!([]));
        }
    }
    assert_eq!(rules(&[], 0), listed, "nothing asked is the list");
    settings()
        .bind(|| insta::assert_snapshot!("rules_list_json", serde_json::to_string_pretty(&listed).expect("json")));
}

#[test]
fn the_human_list_is_one_line_a_card() {
    let run = cairn(&["rules", "--list", "--format", "human"]);
    assert_eq!(run.status, 0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), cards().len());
    assert!(lines[0].starts_with("base            E-BUILTIN-NAME, E-DUPLICATE, "), "{}", lines[0]);
    assert!(lines.contains(&"floats          (no codes)"), "{}", run.stdout);
}

#[test]
fn a_card_by_name_is_printed_as_written() {
    for name in ["tasks", "limits"] {
        let record = rules(&[name], 0);
        assert_eq!(keys(&record), ["schema", "asked", "cards"]);
        assert_eq!(record["asked"], name);
        let card = card_named(name).expect("card");
        let mut codes = card.codes.clone();
        codes.sort_unstable();
        assert_eq!(
            record["cards"],
            serde_json::json!([{"name": name, "kind": card.kind.as_str(), "codes": codes, "text": card.text()}])
        );
    }
}

#[test]
fn a_code_leads_its_card_with_the_sentences_that_name_it() {
    for (code, owner) in [("E-VIEW-ALIAS", "views"), ("E-TYPE-MISMATCH", "base"), ("E-RULE", "commands")] {
        let record = rules(&[code], 0);
        assert_eq!(keys(&record), ["schema", "asked", "code", "cards"]);
        assert_eq!((record["asked"].as_str(), record["code"].as_str()), (Some(code), Some(code)));
        let [card] = record["cards"].as_array().expect("cards").as_slice() else { panic!("one card: {record}") };
        assert_eq!(card["name"], owner);
        let text = card["text"].as_str().expect("text");
        let (first, rest) = text.split_once('\n').expect("several paragraphs");
        assert!(codes_named_in(first).contains(&code), "{code}: {first}");
        assert!(!rest.lines().any(|paragraph| codes_named_in(paragraph).contains(&code)), "{code}: {rest}");
        let written = card_named(owner).expect("card").text();
        assert_eq!(sorted_sentences(text), sorted_sentences(&written), "{code} kept every sentence once");
        assert_ne!(text, written, "{code}: the card was reordered");
    }
    // E-VIEW-ALIAS is named in the first and the seventh paragraph; both sentences lead.
    let record = rules(&["E-VIEW-ALIAS"], 0);
    let first = record["cards"][0]["text"].as_str().expect("text").lines().next().expect("first").to_string();
    assert!(first.starts_with("Binding a borrow to a local is refused (E-VIEW-ALIAS),"), "{first}");
    assert!(first.contains("it may be written only as a call argument where a view is expected (E-VIEW-ALIAS)."));
}

#[test]
fn a_code_reads_as_a_card_under_a_heading_naming_it() {
    let run = cairn(&["rules", "E-WIDE", "--format", "human"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("\nE-WIDE is a rule of the wide card: E-WIDE\n\n"), "{}", run.stdout);
    settings().bind(|| insta::assert_snapshot!("rules_code_human", run.stdout));
    let card = cairn(&["rules", "floats", "--format", "human"]);
    assert!(card.stdout.starts_with("\nThe floats card\n\n"), "{}", card.stdout);
    let card = cairn(&["rules", "tasks", "--format", "human"]);
    assert!(card.stdout.starts_with("\nThe tasks card: E-LEASED, E-SPAWN\n\n"), "{}", card.stdout);
}

#[test]
fn a_program_gets_the_cards_its_tokens_select_beyond_the_core() {
    let hello = rules(&[&repo("examples/hello.cairn")], 0);
    assert_eq!(keys(&hello), ["schema", "asked", "always", "cards"]);
    assert_eq!(hello["always"], serde_json::json!(["base", "integers", "calls"]));
    assert_eq!(names(&hello), ["printing"]);
    assert_eq!(hello["cards"][0]["text"], card_named("printing").expect("card").text());

    let scratch = Scratch::new("shapes");
    let file = scratch.write("shapes.cairn", SHAPES.as_bytes());
    assert_eq!(names(&rules(&[&file], 0)), ["views", "records", "sums"]);
    scratch.write("project/cairn.toml", b"[project]\nname = \"p\"\nsources = [\"src/main.cairn\"]\n");
    scratch.write("project/src/main.cairn", SHAPES.as_bytes());
    let project = scratch.0.join("project").to_string_lossy().to_string();
    assert_eq!(names(&rules(&[&project], 0)), ["views", "records", "sums"]);

    let human = cairn(&["rules", &file, "--format", "human"]);
    assert!(
        human.stdout.starts_with(
            "Every program gets the base, integers and calls cards; `cairn rules CARD` prints any of them.\n\nThe views card: "
        ),
        "{}",
        human.stdout
    );
}

#[test]
fn an_unowned_code_or_an_unknown_word_is_refused_with_e_rule() {
    for asked in ["E-NO-SUCH-RULE", "no_such_card", ""] {
        let record = rules(&[asked], 1);
        assert_eq!(record["code"], "E-RULE", "{asked}");
        assert_eq!(record["card"], "commands");
        assert_eq!(record["status"], "rejected");
        assert_eq!((record["line"].as_u64(), record["column"].as_u64()), (Some(0), Some(0)));
        assert!(record.get("repair_hint").is_none(), "a tool code gets no hint outside a host");
        assert!(record["message"].as_str().is_some_and(|m| m.contains(&format!("`{asked}`"))), "{record}");
    }
    let human = cairn(&["rules", "E-NO-SUCH-RULE", "--format", "human"]);
    assert_eq!(human.status, 1);
    assert_eq!(human.stdout, "");
    assert!(human.stderr.starts_with("error[E-RULE]: No card owns the code `E-NO-SUCH-RULE`"), "{}", human.stderr);
}

#[test]
fn card_names_and_codes_outrank_paths() {
    let scratch = Scratch::new("order");
    scratch.write("views/cairn.toml", b"[project]\nname = \"views\"\nsources = [\"a.cairn\"]\n");
    scratch.write("views/a.cairn", b"fn f() { spawn g(); }\n");
    scratch.write("E-NOT-OWNED", b"fn f() { spawn g(); }\n");
    let run = |asked: &str| cairn_in(Some(&scratch.0), &["rules", asked, "--format", "json"], &[]);
    let by_name = run("views");
    assert_eq!(by_name.status, 0);
    assert!(by_name.stdout.contains("\"asked\":\"views\",\"cards\":[{\"name\":\"views\""), "{}", by_name.stdout);
    let shaped = run("E-NOT-OWNED");
    assert_eq!(shaped.status, 1, "a code-shaped name is never read as a path");
    assert!(shaped.stdout.contains("\"code\":\"E-RULE\""));
    let as_path = run("./views");
    assert_eq!(as_path.status, 0);
    assert!(as_path.stdout.contains("\"always\""), "{}", as_path.stdout);
}

#[test]
fn a_path_that_does_not_load_is_an_environment_error() {
    let scratch = Scratch::new("env");
    scratch.write("empty/readme.txt", b"no manifest here\n");
    let notes = scratch.write("notes.txt", b"not a program\n");
    for path in [scratch.0.join("empty").to_string_lossy().to_string(), notes] {
        let record = rules(&[&path], 2);
        assert_eq!(keys(&record), ["status", "code", "message", "card"]);
        assert_eq!(record["code"], "E-PROJECT-OR-ENVIRONMENT");
    }
}

#[test]
fn the_format_follows_the_flag_then_the_variable() {
    let piped = cairn(&["rules", "tasks"]);
    assert!(piped.stdout.starts_with('{'), "{}", piped.stdout);
    let by_variable = cairn_in(None, &["rules", "tasks"], &[("CAIRN_FORMAT", "human")]);
    assert!(by_variable.stdout.starts_with("\nThe tasks card"), "{}", by_variable.stdout);
    let by_flag = cairn_in(None, &["rules", "tasks", "--format", "json"], &[("CAIRN_FORMAT", "human")]);
    assert!(by_flag.stdout.starts_with('{'));
}

#[test]
fn list_and_an_argument_together_are_a_usage_error() {
    let run = cairn(&["rules", "tasks", "--list"]);
    assert_eq!(run.status, 2);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
}

#[test]
fn no_source_ever_selects_a_tool_card() {
    let scratch = Scratch::new("tools");
    let file = scratch.write("t.cairn", b"fn hosts() {}\nfn commands() {}\nfn limits() { launch k(); }\n");
    let record = rules(&[&file], 0);
    assert_eq!(names(&record), ["foreign"]);
    for card in record["cards"].as_array().expect("cards") {
        assert_eq!(card["kind"], "language");
    }
    assert!(cards().iter().any(|card| card.kind == CardKind::Tool));
}
