//! `cairn check` end to end: the records, renderings and exit statuses of tools.md §1 and §3.1,
//! produced by the real binary on real files.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn cairn(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.args(args).env_remove("CAIRN_FORMAT").env("NO_COLOR", "1");
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

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).to_string_lossy().to_string()
}

/// A scratch directory for one test, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-cli-{tag}-{}", std::process::id()));
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

    fn path(&self) -> String {
        self.0.to_string_lossy().to_string()
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

const BROKEN: &str = "fn main() -> i32 {\n  let x = 1\n  return x << 2;\n}\nfn b() { let y = ; }\n";

#[test]
fn a_clean_program_is_typed_and_exits_zero() {
    let run = cairn(&["check", &repo("examples/hello.cairn"), "--format", "json"], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout.trim(), @r#"{"status":"typed","functions":2,"library_functions":0,"formal_status":"not-verified"}"#);
}

#[test]
fn piped_output_defaults_to_json_and_the_flag_outranks_the_variable() {
    let file = repo("examples/hello.cairn");
    let piped = cairn(&["check", &file], &[]);
    assert!(piped.stdout.starts_with('{'), "{}", piped.stdout);
    let by_variable = cairn(&["check", &file], &[("CAIRN_FORMAT", "human")]);
    assert!(by_variable.stdout.starts_with("typed: 2 functions"), "{}", by_variable.stdout);
    let by_flag = cairn(&["check", &file, "--format", "json"], &[("CAIRN_FORMAT", "human")]);
    assert!(by_flag.stdout.starts_with('{'));
}

#[test]
fn syntax_errors_are_refused_with_every_independent_one() {
    let scratch = Scratch::new("broken");
    let file = scratch.write("broken.cairn", BROKEN.as_bytes());
    let json = cairn(&["check", &file, "--format", "json"], &[]);
    assert_eq!(json.status, 1);
    settings().bind(|| insta::assert_snapshot!("broken_json", json.stdout));
    let human = cairn(&["check", &file, "--format", "human"], &[]);
    assert_eq!(human.status, 1);
    assert_eq!(human.stdout, "");
    settings().bind(|| insta::assert_snapshot!("broken_human", human.stderr));
}

#[test]
fn projects_and_manifests_are_checked_like_files() {
    for path in ["examples/weather", "examples/weather/cairn.toml"] {
        let run = cairn(&["check", &repo(path), "--format", "json"], &[]);
        assert_eq!(run.status, 0, "{path}: {}", run.stderr);
        assert!(run.stdout.contains("\"functions\":2"), "{}", run.stdout);
    }
}

#[test]
fn a_lexical_stop_in_a_later_file_is_the_first_refusal() {
    let scratch = Scratch::new("order");
    scratch.write("cairn.toml", b"[project]\nname = \"order\"\nsources = [\"a.cairn\", \"b.cairn\"]\n");
    scratch.write("a.cairn", b"fn a() { let x = ; }\n");
    scratch.write("b.cairn", b"fn b() { let s = ?; }\n");
    let run = cairn(&["check", &scratch.path(), "--format", "json"], &[]);
    assert_eq!(run.status, 1);
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(record["code"], "E-LEX");
    assert_eq!(record["file"], "b.cairn");
    assert_eq!(record["further"][0]["code"], "E-NAME");
    assert_eq!(record["further"][0]["file"], "a.cairn");
}

#[test]
fn more_than_twenty_further_refusals_are_counted() {
    let scratch = Scratch::new("many");
    let text: String = (0..30).map(|i| format!("fn f{i}() {{ let x = ; }}\n")).collect();
    let file = scratch.write("many.cairn", text.as_bytes());
    let run = cairn(&["check", &file, "--format", "json"], &[]);
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(record["further"].as_array().map(Vec::len), Some(20));
    assert_eq!(record["further_omitted"], 9);
    let human = cairn(&["check", &file, "--format", "human"], &[]);
    assert!(human.stderr.trim_end().ends_with("error: 30 refusals, 9 not shown"), "{}", human.stderr);
}

#[test]
fn environment_faults_exit_two_with_the_small_record() {
    let scratch = Scratch::new("env");
    let latin1 = scratch.write("latin1.cairn", b"fn main() -> i32 { return 0; } // caf\xe9\n");
    let bad_manifest = scratch.write("bad/cairn.toml", b"[project]\nname = \"x\"\nsources = [\"a.cairn\"]\n[hooks]\n");
    // A dependency that declares in the root namespace (language §23.2).
    scratch.write(
        "vend/cairn.toml",
        b"[project]\nname = \"app\"\nsources = [\"main.cairn\"]\n[dependencies]\nlib = \"deps/lib\"\n",
    );
    scratch.write("vend/main.cairn", b"fn main() -> i32 { return 0; }\n");
    scratch.write("vend/deps/lib/cairn.toml", b"[project]\nname = \"lib\"\nsources = [\"lib.cairn\"]\n");
    scratch.write("vend/deps/lib/lib.cairn", b"pub fn helper() -> u32 = 1;\n");
    let std_module = scratch.write("stdmod.cairn", b"module std.mine;\npub fn f() -> u32 = 1;\n");
    let cases = [
        (scratch.path() + "/vend", "a dependency contributes only modules"),
        (std_module, "no project may declare one"),
        (latin1.clone(), "not UTF-8"),
        (scratch.path() + "/missing.cairn", "Cannot read"),
        (scratch.path() + "/bad", "unknown table `hooks`"),
        (bad_manifest, "unknown table `hooks`"),
        (scratch.path(), "has no cairn.toml"),
    ];
    for (path, fragment) in cases {
        let run = cairn(&["check", &path, "--format", "json"], &[]);
        assert_eq!(run.status, 2, "{path}");
        let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
        let keys: Vec<&str> = record.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys, ["status", "code", "message", "card"]);
        assert_eq!(record["code"], "E-PROJECT-OR-ENVIRONMENT");
        assert!(record["message"].as_str().is_some_and(|m| m.contains(fragment)), "{record}");
    }
    let human = cairn(&["check", &latin1, "--format", "human"], &[]);
    assert!(human.stderr.starts_with("unknown[E-PROJECT-OR-ENVIRONMENT]: "), "{}", human.stderr);
}

#[test]
fn a_byte_order_mark_is_dropped_before_parsing() {
    let scratch = Scratch::new("bom");
    let file = scratch.write("bom.cairn", b"\xef\xbb\xbffn main() -> i32 { return 0; }\n");
    let run = cairn(&["check", &file, "--format", "json"], &[]);
    assert_eq!(run.status, 0, "{}", run.stdout);
}

#[test]
fn generics_certifies_each_template_at_its_witnesses() {
    let scratch = Scratch::new("generics");
    let all_ok = scratch.0.join("ok.cairn");
    std::fs::write(
        &all_ok,
        "fn biggest[T:integer](a:T, b:T) -> T = max(a, b);\nfn stride[K:nat](i:usize) -> usize = i * K;\nfamily strided = stride[1..3];\nfn main() -> i32 { return 0; }\n",
    )
    .expect("write");
    let run = cairn(&["check", "--generics", "--format", "json", all_ok.to_str().unwrap()], &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("a record");
    assert_eq!(record["generics"], serde_json::json!({"biggest": "ok", "stride": "ok"}));
    // A body that works only at some of its witnesses, and parameters without witnesses.
    let failing = scratch.0.join("failing.cairn");
    std::fs::write(
        &failing,
        "fn bits[T:numeric](x:T) -> T = x & x;\nfn width[N:nat]() -> usize = N;\nfn same[T:copy](x:T) -> T = x;\nfn main() -> i32 {\n  let a = bits(u8(3));\n  let w = width[4]();\n  return 0;\n}\n",
    )
    .expect("write");
    let run = cairn(&["check", "--generics", "--format", "json", failing.to_str().unwrap()], &[]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("a record");
    assert!(record["generics"]["bits"].as_str().unwrap().starts_with("E-OPERATOR: "), "{record}");
    assert!(record["generics"]["width"].as_str().unwrap().starts_with("unknown: no family"), "{record}");
    assert_eq!(record["generics"]["same"], "ok", "{record}");
    // Without the flag the same program is simply typed.
    let run = cairn(&["check", "--format", "json", failing.to_str().unwrap()], &[]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert!(!run.stdout.contains("generics"), "{}", run.stdout);
}

#[test]
fn a_parameter_without_a_class_is_certified_at_an_opaque_witness() {
    // Each template is accepted at the instances the program requests (u64, a copy record), and
    // each but `fine` needs more than its bounds promise: the opaque witness finds it.
    let scratch = Scratch::new("opaque");
    let file = scratch.0.join("opaque.cairn");
    std::fs::write(
        &file,
        "import std.core (Ord, Eq, Hash);
         fn fine[T:Ord+copy](n:usize, xs:ro<T>[n]) -> T {
  let mut best = xs[0];
  for i in 1..n { if less(best, xs[i]) { best = xs[i]; } }
  return best;
}
         fn twice[T](x:T) -> T { let a = x; let b = x; return a; }
         fn hashed_eq[T:Hash](a:ro<T>, b:ro<T>) -> bool = same(a, b);
         fn below[T:Ord](a:T, b:T) -> bool = a < b;
         fn stored[T](n:usize) -> usize { let b = Buf[T](n); return len(b); }
         fn main() -> i32 {
  stack xs:u64[3] = zeroed;
  let m = fine(3, xs);
  let t = twice(u64(1));
  let h = hashed_eq(u64(1), u64(2));
  let l = below(u64(1), u64(2));
  let s = stored[u64](2);
  return 0;
}
",
    )
    .expect("write");
    let run = cairn(&["check", "--format", "json", file.to_str().unwrap()], &[]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let run = cairn(&["check", "--generics", "--format", "json", file.to_str().unwrap()], &[]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("a record");
    let verdict = |name: &str| record["generics"][name].as_str().unwrap_or_default().to_string();
    assert_eq!(verdict("fine"), "ok", "{record}");
    assert!(verdict("twice").starts_with("E-MOVED: "), "a linear witness is used once: {record}");
    assert!(verdict("hashed_eq").starts_with("E-TRAIT-IMPL: "), "Hash promises no Eq: {record}");
    assert!(verdict("below").starts_with("E-OPERATOR: "), "Ord promises less, not <: {record}");
    assert!(verdict("stored").starts_with("E-LINEAR-STORAGE: "), "no zeroed storage of a linear T: {record}");
    assert!(verdict("twice").ends_with("(at twice[T])"), "{record}");
}

#[test]
fn every_template_of_the_standard_library_certifies() {
    // Language §19.2: "exit status 1 unless all certify (all of std does)".
    let run = cairn(&["check", "--std", "--generics", "--format", "json"], &[]);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("a record");
    let verdicts = record["generics"].as_object().expect("verdicts");
    assert!(verdicts.len() >= 60, "{record}");
    for name in [
        "std.sort.sort",
        "std.sort.sort_by",
        "std.map.insert",
        "std.vec.push",
        "std.vec.Ord for Vec[T].less",
        "std.core.Eq for Buf[T].same",
        "std.core.Hash for Buf[T].hash",
    ] {
        assert_eq!(verdicts[name], "ok", "{name}: {record}");
    }
    assert!(verdicts.values().all(|v| v == "ok"), "{record}");
}

#[test]
fn watch_checks_again_when_a_source_changes_and_ends_cleanly() {
    use std::io::{BufRead, BufReader};
    let scratch = Scratch::new("watch");
    let file = scratch.0.join("w.cairn");
    std::fs::write(&file, "fn main() -> i32 { return 0; }\n").expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["check", "--watch", "--format", "json", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first: serde_json::Value = serde_json::from_str(&lines.next().expect("a record").expect("text")).expect("json");
    assert_eq!(first["status"], "typed");
    // A change of the source (its size moves too): a second round, one record per line.
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&file, "fn main() -> i32 { let x:u32 = 1; x = 2; return 0; }\n").expect("write");
    let second: serde_json::Value =
        serde_json::from_str(&lines.next().expect("a record").expect("text")).expect("json");
    assert_eq!(second["code"], "E-IMMUTABLE", "{second}");
    // SIGINT ends the watch with status 0.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
}

/// Each refusal that involves a second place names it (`related`): where the value moved, on
/// one path only, where a defer consumes or holds it, and where a name was first bound.
#[test]
fn a_refusal_names_the_second_place_its_rule_involves() {
    let scratch = Scratch::new("related");
    let head = "linear struct Permit { id:u32; }\nfn end(p:Permit) { let Permit(id) = p; }\nfn keep(b:Buf[u32]) -> u32 { return b[0]; }\n";
    let cases = [
        (
            "fn main() -> i32 {\n  let b = Buf[u32](4);\n  let t = keep(b);\n  return i32(keep(b));\n}\n",
            "E-MOVED",
            (7, 19),
            (6, 16, "moved here"),
        ),
        (
            "fn main() -> i32 {\n  let b = Buf[u32](4);\n  if len(b) > 2 {\n    let t = keep(b);\n  }\n  println(len(b));\n  return 0;\n}\n",
            "E-MOVED",
            (9, 15),
            (7, 18, "moved here on one path"),
        ),
        (
            "fn main() -> i32 {\n  let p = Permit(1);\n  defer end(p);\n  end(p);\n  return 0;\n}\n",
            "E-MOVED",
            (7, 7),
            (6, 13, "consumed by this defer"),
        ),
        (
            "fn release(b:ro<Buf[u32]>) {}\nfn main() -> i32 {\n  let b = Buf[u32](4);\n  defer release(b);\n  let t = keep(b);\n  return 0;\n}\n",
            "E-LEASED",
            (8, 16),
            (7, 17, "held by this defer"),
        ),
        (
            "fn main() -> i32 {\n  let x:u32 = 1;\n  for i in 0..2 {\n    let x:u32 = 2;\n  }\n  return 0;\n}\n",
            "E-SHADOW",
            (7, 9),
            (5, 7, "first bound here"),
        ),
    ];
    for (index, (body, code, at, (line, column, label))) in cases.into_iter().enumerate() {
        let file = scratch.write(&format!("case{index}.cairn"), format!("{head}{body}").as_bytes());
        let run = cairn(&["check", &file, "--format", "json"], &[]);
        let record: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("a record");
        assert_eq!(record["code"], code, "{record}");
        assert_eq!((record["line"].as_u64(), record["column"].as_u64()), (Some(at.0), Some(at.1)), "{record}");
        assert_eq!(
            record["related"],
            serde_json::json!([{"line": line, "column": column, "label": label}]),
            "{record}"
        );
        // The terminal shows the second place under its line.
        let human = cairn(&["check", &file, "--format", "human"], &[]);
        assert!(human.stderr.contains(&format!("- {label}")), "{}", human.stderr);
    }
}

/// A declaration made twice names the first as its second place — in another file of the
/// project, with that file — and both carets sit on the names, not on `fn`.
#[test]
fn a_duplicate_names_the_first_declaration_in_its_own_file() {
    let scratch = Scratch::new("duplicate");
    scratch.write(
        "cairn.toml",
        b"[project]\nname = \"dup\"\nsources = [\"src/a.cairn\", \"src/b.cairn\"]\n\n[build]\nkind = \"exe\"\n",
    );
    scratch.write("src/a.cairn", b"fn helper(x:u32) -> u32 = x + 1;\n");
    scratch.write("src/b.cairn", b"fn main() -> i32 { return 0; }\n\nfn helper(x:u64) -> u64 = x;\n");
    let run = cairn(&["check", &scratch.path(), "--format", "json"], &[]);
    let record: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("a record");
    assert_eq!(record["code"], "E-DUPLICATE", "{record}");
    assert_eq!(
        (record["file"].as_str(), record["line"].as_u64(), record["column"].as_u64()),
        (Some("src/b.cairn"), Some(3), Some(4))
    );
    assert_eq!(
        record["related"],
        serde_json::json!([{"file": "src/a.cairn", "line": 1, "column": 4, "label": "first declared here"}]),
        "{record}"
    );
    let human = cairn(&["check", &scratch.path(), "--format", "human"], &[]);
    assert!(human.stderr.contains("src/a.cairn:1:4"), "{}", human.stderr);
    assert!(human.stderr.contains("------ first declared here"), "{}", human.stderr);
    // In one file, the second place carries no file.
    scratch.write("one.cairn", b"fn helper(x:u32) -> u32 = x + 1;\nfn helper(x:u64) -> u64 = x;\n");
    let run = cairn(
        &[
            "check",
            &scratch.write("one.cairn", b"fn helper(x:u32) -> u32 = x + 1;\nfn helper(x:u64) -> u64 = x;\n"),
            "--format",
            "json",
        ],
        &[],
    );
    let record: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("a record");
    assert_eq!(
        record["related"],
        serde_json::json!([{"line": 1, "column": 4, "label": "first declared here"}]),
        "{record}"
    );
}
