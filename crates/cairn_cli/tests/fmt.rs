//! `cairn fmt` (tools.md §3.24) and `cairn expand` (§3.19) end to end, and the formatter's two
//! promises over every CAIRN text of the repository: idempotent, and the program means the same.

use std::path::{Path, PathBuf};
use std::process::Command;

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

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-fmt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("scratch");
    dir
}

fn record(run: &Run) -> serde_json::Value {
    serde_json::from_str(run.stdout.lines().next().unwrap_or_default()).expect("a record")
}

const MESSY: &str = "fn f( a : u32 )->u32{let b=a+1;\n\n\n  return b;}\n";
const TIDY: &str = "fn f(a:u32) -> u32 {\n  let b = a + 1;\n\n  return b;\n}\n";

#[test]
fn fmt_rewrites_checks_and_diffs() {
    let dir = scratch("modes");
    let messy = dir.join("sub/messy.cairn");
    let tidy = dir.join("tidy.cairn");
    let broken = dir.join("broken.cairn");
    std::fs::write(&messy, MESSY).unwrap();
    std::fs::write(&tidy, TIDY).unwrap();
    std::fs::write(&broken, "fn f( {\n").unwrap();
    let dir_arg = dir.to_str().unwrap();
    // --check changes nothing and says what would change (and what cannot be formatted).
    let run = cairn(&["fmt", dir_arg, "--check", "--format", "json"]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let r = record(&run);
    assert_eq!(r["status"], "would-change");
    assert_eq!(r["mode"], "check");
    assert_eq!(r["changed"], serde_json::json!([messy.to_str().unwrap()]));
    assert_eq!(r["not_formatted"][0]["file"], broken.to_str().unwrap());
    assert!(r["not_formatted"][0]["reason"].as_str().unwrap().starts_with("the text does not parse"), "{r}");
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), MESSY);
    // --diff prints a unified diff naming the formatted side.
    let run = cairn(&["fmt", messy.to_str().unwrap(), "--diff"]);
    assert_eq!(run.status, 1);
    assert!(run.stdout.contains("(formatted)") && run.stdout.contains("+  let b = a + 1;"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), MESSY);
    // Rewriting: the messy file becomes the tidy text; the broken one is left as it was.
    let run = cairn(&["fmt", dir_arg, "--format", "json"]);
    assert_eq!(run.status, 1, "a file could not be formatted: {}", run.stdout);
    assert_eq!(record(&run)["status"], "formatted");
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), TIDY);
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), "fn f( {\n");
    std::fs::remove_file(&broken).unwrap();
    let run = cairn(&["fmt", dir_arg, "--check", "--format", "json"]);
    assert_eq!((run.status, record(&run)["status"].clone()), (0, serde_json::json!("clean")), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn expand_prints_what_each_derivation_generates() {
    let dir = scratch("expand");
    let file = dir.join("p.cairn");
    std::fs::write(&file, "struct P { x:u8; y:u16; }\nderive wire for P;\nfn main() -> i32 { return 0; }\n").unwrap();
    let run = cairn(&["expand", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let r = record(&run);
    assert_eq!(r["schema"], "cairn.expand/1");
    assert_eq!(r["derivations"][0]["derive"], "wire for P");
    let source = r["derivations"][0]["source"].as_str().unwrap();
    assert!(source.contains("pub fn wire_size_P() -> usize = 3;"), "{source}");
    assert!(source.contains("pub fn encode_P(out:rw<u8>[3], value:P) {\n  out[0 + 0] = "), "{source}");
    // A refused derivation: its refusal, exit 1.
    std::fs::write(&file, "struct P { x:i8; }\nderive wire for P;\nfn main() -> i32 { return 0; }\n").unwrap();
    let run = cairn(&["expand", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(run.status, 1);
    assert_eq!(record(&run)["code"], "E-DERIVE-FIELD");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `.cairn` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            if entry.file_name().is_some_and(|n| n != "build") {
                sources(&entry, out);
            }
        } else if entry.extension().is_some_and(|e| e == "cairn") {
            out.push(entry);
        }
    }
}

#[test]
fn formatting_every_repository_text_is_idempotent_and_keeps_its_meaning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["std", "tests/run", "tests/std", "examples", "bench/std"] {
        if root.join(dir).is_dir() {
            sources(&root.join(dir), &mut files);
        }
    }
    assert!(files.len() > 200, "{}", files.len());
    let answer = |name: &str, text: &str| -> Option<(String, usize)> {
        let mut workspace =
            cairn_hir::Workspace::new(vec![cairn_hir::SourceText { name: name.to_string(), text: text.to_string() }]);
        let outcome = workspace.check();
        outcome.refusal.map(|r| (r.first.code.clone(), r.further.len()))
    };
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let once = match cairn_syntax::format::format(&text) {
            Ok(once) => once,
            Err(cairn_syntax::format::FormatError::Syntax(_)) => continue,
            Err(e) => panic!("{}: {e}", file.display()),
        };
        assert_eq!(cairn_syntax::format::format(&once).as_ref(), Ok(&once), "{} is not idempotent", file.display());
        // A line stays over the width only for a comment, a string or a literal longer than a line.
        let unbreakable = |l: &str| l.contains("//") || l.contains('"') || l.split(' ').any(|w| w.len() > 50);
        assert!(once.lines().all(|l| l.len() <= 100 || unbreakable(l)), "{}: a line over 100 columns", file.display());
        assert_eq!(answer(&name, &once), answer(&name, &text), "{}: the check's answer changed", file.display());
    }
}
