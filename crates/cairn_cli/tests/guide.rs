//! The guide's examples (`docs/guide/*.md`) compile and print what the guide says: every
//! ```` ```cairn run ```` block is run with `cairn run`, and its standard output must be the
//! ```` ```text ```` block that follows it; every other ```` ```cairn ```` block must check.

use std::path::Path;
use std::process::Command;

/// The code blocks of a guide page: (info string, text), in order.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        match &mut current {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    current = Some((info.trim().to_string(), String::new()));
                }
            }
            Some((_, body)) => {
                if line.trim_end() == "```" {
                    out.push(current.take().expect("open"));
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    out
}

#[test]
fn every_guide_example_runs_and_prints_what_the_guide_shows() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide");
    let scratch = std::env::temp_dir().join(format!("cairn-guide-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let mut pages: Vec<_> =
        std::fs::read_dir(&guide).expect("docs/guide").filter_map(|e| e.ok().map(|e| e.path())).collect();
    pages.sort();
    let mut ran = 0;
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(page).expect("a page");
        let blocks = blocks(&text);
        for (index, (info, code)) in blocks.iter().enumerate() {
            if !info.starts_with("cairn") {
                continue;
            }
            let file = scratch.join(format!("example{index}.cairn"));
            std::fs::write(&file, code).expect("write");
            let command = if info == "cairn run" { "run" } else { "check" };
            let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
                .args([command, file.to_str().unwrap(), "--format", "json"])
                .output()
                .expect("run cairn");
            let stdout = String::from_utf8_lossy(&output.stdout);
            let record: serde_json::Value =
                serde_json::from_str(stdout.lines().next().unwrap_or("{}")).unwrap_or_default();
            let at = format!("{} block {index}", page.display());
            assert_eq!(output.status.code(), Some(0), "{at}: {record}");
            if command == "run" {
                let shown = blocks.get(index + 1).filter(|(i, _)| i == "text").map(|(_, t)| t.as_str());
                assert_eq!(record["stdout"].as_str(), shown, "{at}: the output shown after it");
                ran += 1;
            }
        }
    }
    assert!(ran >= 6, "{ran} examples ran");
    let _ = std::fs::remove_dir_all(&scratch);
}
