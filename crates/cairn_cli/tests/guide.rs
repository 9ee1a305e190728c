//! The guide's examples (`docs/guide/*.md`) compile and print what the guide says: every
//! ```` ```cairn run ```` block is run with `cairn run`, and its standard output must be the
//! ```` ```text ```` block that follows it; a ```` ```cairn refused CODE ```` block must be refused
//! with that code; blocks with `file=PATH` build a project; every other ```` ```cairn ```` block
//! must check. A block whose info string also says `emulate` is checked and run with
//! `--emulate --device-target sm_90` (device code on host threads).

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

/// What a block's info string asks: its language, `run` or `refused CODE`, and `file=PATH`.
struct Info<'a> {
    language: &'a str,
    run: bool,
    /// Device work: checked and run with `--emulate --device-target sm_90`.
    emulate: bool,
    refused: Option<&'a str>,
    file: Option<&'a str>,
}

fn info(text: &str) -> Info<'_> {
    let mut words = text.split_whitespace();
    let mut parsed =
        Info { language: words.next().unwrap_or(""), run: false, emulate: false, refused: None, file: None };
    while let Some(word) = words.next() {
        match word {
            "run" => parsed.run = true,
            "emulate" => parsed.emulate = true,
            "refused" => parsed.refused = words.next(),
            _ => parsed.file = word.strip_prefix("file="),
        }
    }
    parsed
}

/// Runs `cairn COMMAND TARGET --format json` (with `extra` flags): its exit status and first
/// record.
fn cairn(command: &str, target: &Path, extra: &[&str]) -> (Option<i32>, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([command, target.to_str().unwrap(), "--format", "json"])
        .args(extra)
        .output()
        .expect("run cairn");
    let stdout = String::from_utf8_lossy(&output.stdout);
    (output.status.code(), serde_json::from_str(stdout.lines().next().unwrap_or("{}")).unwrap_or_default())
}

/// Every ```` ```cairn ```` block checks; ```` ```cairn run ```` runs and prints the ```` ```text ````
/// block after it (or the next one, for a project); ```` ```cairn refused CODE ```` is refused
/// with CODE first. A block with `file=PATH` (cairn or toml) is written into the page's project
/// instead, and a `cairn run file=PATH` block runs that project.
#[test]
fn every_guide_example_runs_and_prints_what_the_guide_shows() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide");
    let scratch = std::env::temp_dir().join(format!("cairn-guide-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let mut pages: Vec<_> =
        std::fs::read_dir(&guide).expect("docs/guide").filter_map(|e| e.ok().map(|e| e.path())).collect();
    pages.sort();
    let (mut ran, mut refused, mut projects) = (0, 0, 0);
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(page).expect("a page");
        let blocks = blocks(&text);
        let stem = page.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
        let project = scratch.join(format!("{stem}-project"));
        for (index, (info_text, code)) in blocks.iter().enumerate() {
            let at = format!("{} block {index}", page.display());
            let info = info(info_text);
            if let Some(relative) = info.file {
                let path = project.join(relative);
                std::fs::create_dir_all(path.parent().expect("a parent")).expect("project directory");
                std::fs::write(&path, code).expect("write");
                if info.run {
                    let (status, record) = cairn("run", &project, &[]);
                    assert_eq!(status, Some(0), "{at}: {record}");
                    let shown = blocks[index + 1..].iter().find(|(i, _)| i == "text").map(|(_, t)| t.as_str());
                    assert_eq!(record["stdout"].as_str(), shown, "{at}: the output shown after it");
                    projects += 1;
                }
                continue;
            }
            if info.language != "cairn" {
                continue;
            }
            let file = scratch.join(format!("{stem}{index}.cairn"));
            std::fs::write(&file, code).expect("write");
            let flags: &[&str] = if info.emulate { &["--emulate", "--device-target", "sm_90"] } else { &[] };
            let flags = if info.run || !info.emulate { flags } else { &flags[1..] };
            let (status, record) = cairn(if info.run { "run" } else { "check" }, &file, flags);
            if let Some(code) = info.refused {
                assert_eq!(status, Some(1), "{at}: should be refused: {record}");
                assert_eq!(record["code"].as_str(), Some(code), "{at}: {record}");
                refused += 1;
                continue;
            }
            assert_eq!(status, Some(0), "{at}: {record}");
            if info.run {
                let shown = blocks.get(index + 1).filter(|(i, _)| i == "text").map(|(_, t)| t.as_str());
                assert_eq!(record["stdout"].as_str(), shown, "{at}: the output shown after it");
                ran += 1;
            }
        }
    }
    assert!(ran >= 6 && refused >= 3 && projects >= 1, "{ran} examples ran, {refused} refused, {projects} projects");
    let _ = std::fs::remove_dir_all(&scratch);
}
