//! `cairn new` (tools.md §3.22): every template makes a project that checks, runs (or tests) and
//! is already formatted; an existing directory or a bad name changes nothing.

use std::path::PathBuf;
use std::process::Command;

fn cairn(args: &[&str]) -> (i32, serde_json::Value) {
    // `--format` goes before any `--` (after it, words are the program's).
    let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(&args[..split])
        .args(["--format", "json"])
        .args(&args[split..])
        .env("NO_COLOR", "1")
        .output()
        .expect("run cairn");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let record = serde_json::from_str(stdout.lines().next().unwrap_or("{}")).unwrap_or(serde_json::Value::Null);
    (output.status.code().unwrap_or(-1), record)
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

#[test]
fn every_template_checks_runs_and_is_formatted() {
    let dir = scratch();
    let cases: [(&str, &[&str], &str); 5] = [
        ("default", &["run"], "average 25\n"),
        ("cli", &["run", "--", "hello", "worlds"], "hello 5\nworlds 6\ntotal 11\n"),
        ("lib", &["test"], ""),
        ("service", &["run"], "HELLO, SERVICE\nbye\nserved 2 requests\n"),
        ("parallel", &["run"], "sum of squares below 100000: 333328333350000 (expected 333328333350000)\n"),
    ];
    for (template, command, stdout) in cases {
        let project = dir.join(format!("p-{template}"));
        let path = project.to_str().unwrap();
        let (status, record) = cairn(&["new", path, "--template", template]);
        assert_eq!(status, 0, "{record}");
        assert_eq!(record["status"], "created");
        assert_eq!(record["template"], template);
        assert_eq!(record["network_access"], false);
        assert_eq!(std::fs::read_to_string(project.join(".gitignore")).unwrap(), "build/\n");
        let manifest = std::fs::read_to_string(project.join("cairn.toml")).unwrap();
        assert!(manifest.contains(&format!("name = \"p-{template}\"")), "{manifest}");
        let (status, record) = cairn(&["check", path]);
        assert_eq!(status, 0, "{template}: {record}");
        let (status, record) = cairn(&["fmt", path, "--check"]);
        assert_eq!((status, &record["status"]), (0, &serde_json::json!("clean")), "{template}: {record}");
        let mut args: Vec<&str> = vec![command[0], path];
        args.extend(&command[1..]);
        let (status, record) = cairn(&args);
        assert_eq!(status, 0, "{template}: {record}");
        if command[0] == "run" {
            assert_eq!(record["stdout"], stdout, "{template}: {record}");
        } else {
            assert_eq!(record["blocks"]["failed"], 0, "{record}");
            assert!(record["blocks"]["passed"].as_u64().unwrap_or(0) >= 1, "{record}");
        }
    }
    // Never overwrites, not even an empty directory; a name must match the pattern.
    let taken = dir.join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    let (status, record) = cairn(&["new", taken.to_str().unwrap()]);
    assert_eq!((status, &record["code"]), (2, &serde_json::json!("E-PROJECT-OR-ENVIRONMENT")), "{record}");
    assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 0);
    let (status, _) = cairn(&["new", dir.join("9lives").to_str().unwrap()]);
    assert_eq!(status, 2);
    assert!(!dir.join("9lives").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_and_completions_answer_from_this_machine_and_these_definitions() {
    let (status, record) = cairn(&["doctor"]);
    assert_eq!(status, 0, "{record}");
    for key in
        ["version", "llvm", "z3", "platform", "native_platform", "cc", "clang++", "g++", "nvcc", "bwrap", "cache"]
    {
        assert!(record.get(key).is_some(), "{key}: {record}");
    }
    assert!(record["llvm"].as_str().is_some_and(|v| v.starts_with("19.")), "{record}");
    assert_eq!(record["network_access"], false);
    assert!(record["cc"].is_string(), "the suite itself links with cc: {record}");
    // The suite's sandbox tests need bubblewrap that works here; doctor says whether it does.
    assert_eq!(record["sandbox"], true, "setup installs bubblewrap: {record}");
    // Each missing tool comes with its fix.
    for (key, value) in record.as_object().unwrap() {
        if value.is_null() {
            assert!(record["fixes"][key].is_string(), "{key} has no fix: {record}");
        }
    }
    // Completions: the script parses, and offers exactly the commands and options clap knows.
    for shell in ["bash", "zsh"] {
        let output = Command::new(env!("CARGO_BIN_EXE_cairn")).args(["completions", shell]).output().expect("run");
        let script = String::from_utf8(output.stdout).expect("text");
        assert!(script.contains("complete -o filenames -F _cairn cairn"), "{script}");
        for word in ["fmt", "expand", "new", "doctor", "--template", "default cli lib service parallel", "--generics"] {
            assert!(script.contains(word), "{shell}: {word} missing");
        }
        assert!(!script.contains("\"true false\""), "flags take no value: {script}");
        if shell == "bash" {
            let mut check = Command::new("bash").arg("-n").stdin(std::process::Stdio::piped()).spawn().expect("bash");
            use std::io::Write;
            check.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
            assert!(check.wait().unwrap().success(), "the bash script does not parse");
        }
    }
}
