//! `cairn find` end to end (tools.md §3.11): word and type queries over the example programs, the
//! effect ceiling, a refused program, the default `--in`, refusals and exit statuses.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

struct Run {
    status: i32,
    stdout: String,
}

fn cairn_in(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env_remove("CAIRN_FORMAT")
        .env("NO_COLOR", "1")
        .output()
        .expect("run cairn");
    Run { status: output.status.code().unwrap_or(-1), stdout: String::from_utf8_lossy(&output.stdout).to_string() }
}

fn cairn(args: &[&str]) -> Run {
    cairn_in(&std::env::temp_dir(), args)
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn example(name: &str) -> String {
    repo("examples").join(name).to_string_lossy().to_string()
}

/// The JSON answer of a `cairn find` that exits 0.
#[track_caller]
fn check_answer(args: &[&str]) -> Map<String, Value> {
    let mut all = vec!["find", "--format", "json"];
    all.extend_from_slice(args);
    let run = cairn(&all);
    assert_eq!(run.status, 0, "{}", run.stdout);
    match serde_json::from_str(&run.stdout) {
        Ok(Value::Object(map)) => map,
        _ => panic!("not a JSON object: {}", run.stdout),
    }
}

/// The hit lines of an answer.
#[track_caller]
fn check_hits(args: &[&str]) -> Vec<String> {
    let answer = check_answer(args);
    answer["hits"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

/// The code of a refused query (exit 1).
#[track_caller]
fn check_refused(args: &[&str]) -> String {
    let mut all = vec!["find", "--format", "json"];
    all.extend_from_slice(args);
    let run = cairn(&all);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let record: Value = serde_json::from_str(&run.stdout).expect("a JSON record");
    assert_eq!(record["status"], "rejected");
    record["code"].as_str().unwrap_or_default().to_string()
}

#[test]
fn words_find_a_program_function_by_name_and_comment() {
    let hello = example("hello.cairn");
    assert_eq!(
        check_hits(&["odd", "--in", &hello]),
        ["odd_sum(n:u32) -> u32  pure  // Sum of the first n odd numbers, which is n squared."]
    );
    // `squared` is in odd_sum's comment and begins "square" in the comment of sqrt: the
    // program's own function comes first.
    let squared = check_hits(&["squared", "--in", &hello]);
    assert_eq!(squared.len(), 2, "{squared:?}");
    assert!(squared[0].starts_with("odd_sum(") && squared[1].starts_with("sqrt("), "{squared:?}");
    let bits = example("bits.cairn");
    let hits = check_hits(&["rotate", "--in", &bits]);
    assert_eq!(hits.len(), 1);
    assert!(hits[0].starts_with("rotate_left(x:u32, k:usize) -> u32  pure"), "{hits:?}");
}

#[test]
fn words_alone_search_the_builtins() {
    let hits = check_hits(&["wrapping", "overflow"]);
    assert!(hits[0].starts_with("add_wrap(a:T, b:T) -> T  // Modular addition"), "{hits:?}");
    let answer = check_answer(&["zyzzyva-quux"]);
    assert_eq!(answer, serde_json::from_value::<Map<String, Value>>(json!({"hits": [], "more": 0})).unwrap());
}

/// The hits that are not the packaged library's.
fn without_std(hits: Vec<String>) -> Vec<String> {
    hits.into_iter().filter(|h| !h.starts_with("std.")).collect()
}

#[test]
fn a_type_query_finds_a_program_function() {
    let hello = example("hello.cairn");
    // The library's calls rank after the program's and the builtins' (checked here once); the
    // assertions below are about the program, whatever the library grows to.
    let all = check_hits(&["--takes", "u32", "--returns", "u32", "--in", &hello]);
    let first_std = all.iter().position(|h| h.starts_with("std.")).unwrap_or(all.len());
    assert!(all[first_std..].iter().all(|h| h.starts_with("std.")), "{all:?}");
    assert_eq!(
        without_std(all),
        [
            "odd_sum(n:u32) -> u32  pure  // Sum of the first n odd numbers, which is n squared.",
            "u32(u32)  pure  // Converts a number to the named type, trapping when an integer does not fit.",
        ]
    );
    // A call leaving a parameter open ranks after the full calls.
    let bits = example("bits.cairn");
    let hits = without_std(check_hits(&["--takes", "u32", "--returns", "u32", "--in", &bits]));
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits[0].starts_with("u32(u32)"), "{hits:?}");
    assert!(hits[1].starts_with("rotate_left("), "{hits:?}");
    // A view with its extent, and a project whose function lives in a module.
    assert!(check_hits(&["--takes", "ro<u8>[n]", "--returns", "u64", "--in", &bits])[0].starts_with("fnv1a("));
    let weather = example("weather");
    assert!(
        check_hits(&["--takes", "i32", "--returns", "i32", "--in", &weather])[0]
            .starts_with("weather.units.celsius_tenths(fahrenheit_tenths:i32) -> i32  pure")
    );
}

#[test]
fn an_effect_ceiling_filters_the_hits() {
    let hello = example("hello.cairn");
    let all = check_hits(&["--takes", "u32", "--in", &hello]);
    assert!(all.iter().any(|h| h.starts_with("println(u32)  pure + ffi:write, io")), "{all:?}");
    let pure = check_hits(&["--takes", "u32", "--effects", "pure", "--in", &hello]);
    assert!(pure.iter().any(|h| h.starts_with("odd_sum(")), "{pure:?}");
    assert!(!pure.iter().any(|h| h.starts_with("println(")), "{pure:?}");
}

#[test]
fn a_refused_program_is_left_out_and_named() {
    let dir = std::env::temp_dir().join(format!("cairn-find-refused-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("broken.cairn");
    std::fs::write(&path, "// Frobnicates a number.\nfn frobnicate(x:u32) -> u64 { return x + x; }\n").expect("write");
    let path = path.to_string_lossy().to_string();
    let answer = check_answer(&["frobnicate", "--in", &path]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(answer["hits"], json!([]));
    assert_eq!(answer["program"], "refused with E-TYPE-MISMATCH: only the builtins and the library were searched");
}

#[test]
fn the_project_here_is_searched_by_default() {
    let run = cairn_in(&repo("examples/weather"), &["find", "celsius", "--format", "human"]);
    assert_eq!(run.status, 0);
    assert_eq!(
        run.stdout,
        "weather.units.celsius_tenths(fahrenheit_tenths:i32) -> i32  pure  // Tenths of a degree Celsius from tenths of a degree Fahrenheit, rounded toward zero.\n"
    );
    // Elsewhere only the builtins and the library are searched.
    assert_eq!(cairn(&["find", "celsius", "--format", "human"]).stdout, "Nothing fits.\n");
}

#[test]
fn human_output_counts_what_the_limit_left_out() {
    let run = cairn(&["find", "integer", "--limit", "2", "--format", "human"]);
    assert_eq!(run.status, 0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    // The rest of what the widest limit lists (the builtins and every std function whose name
    // or comment says integer).
    let all = cairn(&["find", "integer", "--limit", "200", "--format", "json"]);
    let all: serde_json::Value = serde_json::from_str(&all.stdout).expect("a find record");
    let total = all["hits"].as_array().map_or(0, Vec::len);
    assert!(total > 10, "{all}");
    assert_eq!(lines[2], format!("{} more: --limit shows them.", total - 2));
}

#[test]
fn malformed_queries_and_types_are_refused() {
    assert_eq!(check_refused(&[]), "E-REQUEST");
    assert_eq!(check_refused(&["x", "--limit", "0"]), "E-REQUEST");
    assert_eq!(check_refused(&["x", "--limit", "-4"]), "E-REQUEST");
    assert_eq!(check_refused(&["x", "--limit", "201"]), "E-REQUEST");
    let five = ["--takes", "u8", "--takes", "u8", "--takes", "u8", "--takes", "u8", "--takes", "u8"];
    assert_eq!(check_refused(&five), "E-REQUEST");
    assert_eq!(check_refused(&["--takes", "Nowhere"]), "E-TYPE");
    assert_eq!(check_refused(&["--takes", "u8)"]), "E-PARSE");
}

#[test]
fn an_unreadable_program_is_an_environment_error() {
    let run = cairn(&["find", "x", "--in", "/nonexistent/nowhere.cairn", "--format", "json"]);
    assert_eq!(run.status, 2);
    let record: Value = serde_json::from_str(&run.stdout).expect("a JSON record");
    assert_eq!(record["code"], "E-PROJECT-OR-ENVIRONMENT");
}
