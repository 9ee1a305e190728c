//! The standard library (language §30) against its tests: each `tests/std/<module>.cairn` holds
//! a `test` block per function of the module (edge cases included), which `cairn test` must
//! pass, every block; then each block runs again under valgrind's memcheck, which must report
//! no invalid access and no lost block (every std module under the leak check).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn std_tests() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/std");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/std exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cairn"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_std_test_block_passes_and_leaks_nothing() {
    let scratch = std::env::temp_dir().join(format!("cairn-std-{}", std::process::id()));
    let mut problems = Vec::new();
    let files = std_tests();
    assert!(files.len() >= 3, "the std tests are missing");
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        // Each module's tests build in a directory of their own (cairn test builds beside the file).
        let dir = scratch.join(name.trim_end_matches(".cairn"));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let source = std::fs::read_to_string(&path).expect("read a std test");
        std::fs::write(dir.join(&name), &source).expect("copy the std test");
        let blocks = source.lines().filter(|l| l.starts_with("test ")).count();
        let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["test", &name, "--format", "json"])
            .current_dir(&dir)
            .output()
            .expect("run cairn test");
        let record: serde_json::Value = match serde_json::from_slice(&output.stdout) {
            Ok(record) => record,
            Err(_) => {
                problems.push(format!("{name}: no record: {}", String::from_utf8_lossy(&output.stdout)));
                continue;
            }
        };
        let passed = record["blocks"]["passed"].as_u64().unwrap_or(0) as usize;
        if record["blocks"]["status"] != "passed-test-blocks" || passed != blocks {
            let failed: Vec<String> = record["blocks"]["tests"]
                .as_array()
                .map(|tests| {
                    tests
                        .iter()
                        .filter(|t| t["status"] != "passed")
                        .map(|t| format!("{} ({}): {}", t["name"], t["status"], t["stderr"]))
                        .collect()
                })
                .unwrap_or_default();
            problems
                .push(format!("{name}: {passed} of {blocks} blocks passed: {record:.0}\n  {}", failed.join("\n  ")));
            continue;
        }
        let Some(binary) = record["blocks"]["build"]["artifact"].as_str() else {
            problems.push(format!("{name}: no test executable"));
            continue;
        };
        for index in 0..blocks {
            let index = index.to_string();
            match common::memcheck_with(Path::new(binary), false, &[&index], None) {
                Ok(checked) if checked.status.success() && checked.reports.is_empty() => {}
                Ok(checked) => problems.push(format!(
                    "{name}: block {index} under memcheck: {:?}\n{}",
                    checked.status,
                    checked.reports.join("\n")
                )),
                Err(problem) => problems.push(problem),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
