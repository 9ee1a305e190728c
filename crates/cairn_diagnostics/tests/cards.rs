//! The cards in `cards/` against the code that emits diagnostics: every code a crate of this
//! workspace can emit is owned by exactly one card, and the directory holds exactly the cards the
//! registry embeds.

use std::path::{Path, PathBuf};

use cairn_diagnostics::registry::{card_of, cards, codes_named_in, embedded_card_files};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `"E-…"` string literal in the sources of the workspace's crates (tests excluded): the
/// codes the toolchain can emit. Unit-test modules at the end of a file are skipped.
fn emitted_codes() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).expect("crates").flatten() {
        let src = krate.path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    let mut codes = Vec::new();
    for file in files {
        let whole = std::fs::read_to_string(&file).expect("read");
        // A file's unit tests sit at its end and use made-up codes.
        let text = whole.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        for (i, _) in text.match_indices("\"E-") {
            let literal = &text[i + 1..];
            let end = literal.find('"').unwrap_or(0);
            for code in codes_named_in(&literal[..end]) {
                // `E-UNKNOWN` is what the renderer shows for a record without a code (tools.md
                // §1.5), a placeholder no check emits.
                if code.len() == end && code != "E-UNKNOWN" {
                    codes.push((code.to_string(), file.clone()));
                }
            }
        }
    }
    codes
}

#[test]
fn every_code_the_toolchain_emits_has_exactly_one_card() {
    let codes = emitted_codes();
    assert!(codes.len() > 60, "the scan found only {} codes", codes.len());
    for (code, file) in codes {
        let owners = cards().iter().filter(|card| card.codes.contains(&code.as_str())).count();
        assert_eq!(owners, 1, "{code} (emitted in {}) has {owners} owning cards", file.display());
    }
}

#[test]
fn the_directory_holds_exactly_the_embedded_cards() {
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join("cards"))
        .expect("cards/")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".md").map(str::to_string))
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> = embedded_card_files().map(str::to_string).collect();
    embedded.sort();
    assert_eq!(on_disk, embedded);
}

#[test]
fn the_core_cards_are_never_repeated_elsewhere() {
    let core: Vec<&str> = ["base", "integers", "calls"]
        .iter()
        .flat_map(|name| cards().iter().find(|c| c.name == *name).expect("core card").paragraphs.clone())
        .collect();
    for card in cards().iter().filter(|c| !["base", "integers", "calls"].contains(&c.name)) {
        for paragraph in &card.paragraphs {
            assert!(!core.contains(paragraph), "card {} repeats a core paragraph", card.name);
        }
    }
    assert!(card_of("E-PARSE").is_some());
}
