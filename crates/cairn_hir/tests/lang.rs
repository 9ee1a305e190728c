//! The markdown language tests: every `tests/lang/*.md` file at the top of the repository is
//! prose and `cairn` blocks whose trailing comments state what the checker must answer.
//!
//! Annotations (trailing comments on a line of the block; see `tests/lang/README.md`):
//! `// error: CODE` (the first refusal, on this line; `// says: text` and `// hint: text` on the
//! same line: its message and its repair hint hold that text), `// also: CODE` (a further refusal on this
//! line), `// effects: a, b` / `none` / `unknown` (the row of the function declared on this
//! line), `// sites: kind=n, …` / `none` (its guard sites), `// type: T` (the type of the `let`
//! on this line). A block without `error` must be accepted, and its further refusals must be
//! exactly the `also` ones. ```` ```cairn stage=N ```` blocks form a sequence edited into one
//! long-lived workspace (each stage reaches the next by one text edit), and every stage's answers
//! must equal a fresh check's. ```` ```cairn ignore ```` blocks are prose.

use std::path::{Path, PathBuf};

use cairn_hir::{SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};

struct Block {
    /// `file.md:line` of the opening fence.
    at: String,
    text: String,
    stage: Option<u32>,
}

fn lang_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lang")
}

fn blocks(path: &Path) -> Vec<Block> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
    let text = std::fs::read_to_string(path).expect("read a language test");
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for (index, line) in text.lines().enumerate() {
        match &mut current {
            None => {
                let Some(info) = line.strip_prefix("```cairn") else { continue };
                let flags: Vec<&str> = info.split_whitespace().collect();
                let stage = flags.iter().find_map(|f| f.strip_prefix("stage=")).map(|n| n.parse().expect("stage=N"));
                let block = Block { at: format!("{name}:{}", index + 1), text: String::new(), stage };
                if flags.contains(&"ignore") {
                    current = Some(Block { stage: Some(u32::MAX), ..block });
                } else {
                    current = Some(block);
                }
            }
            Some(block) => {
                if line.trim_end() == "```" {
                    let block = current.take().expect("open block");
                    if block.stage != Some(u32::MAX) {
                        out.push(block);
                    }
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                }
            }
        }
    }
    assert!(current.is_none(), "{name}: a cairn block is never closed");
    out
}

/// What a block's annotations expect.
#[derive(Default)]
struct Expected {
    error: Option<(String, u32)>,
    /// Text the first refusal's message must hold (`// says: …`).
    says: Option<String>,
    /// Text the first refusal's repair hint must hold (`// hint: …`).
    hint: Option<String>,
    also: Vec<(String, u32)>,
    effects: Vec<(String, u32, Option<Vec<String>>)>,
    sites: Vec<(String, u32, Vec<String>)>,
    types: Vec<(u32, String)>,
}

fn annotation<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let marker = format!("// {key}:");
    let rest = &line[line.find(&marker)? + marker.len()..];
    // Several annotations may share a line; each runs to the next `//`.
    Some(rest.split("//").next().unwrap_or("").trim())
}

/// The name declared by a `fn` or `test` line.
fn declared_name(line: &str) -> Option<String> {
    let rest = line.trim_start().trim_start_matches("pub ");
    // A foreign function: `extern ["csym"] fn name`.
    let rest = match rest.strip_prefix("extern ") {
        Some(after) => match after.strip_prefix('"') {
            Some(quoted) => quoted.split_once('"').map_or(after, |(_, tail)| tail.trim_start()),
            None => after,
        },
        None => rest,
    };
    let rest = rest.strip_prefix("fn ").or_else(|| rest.strip_prefix("test "))?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

fn expected(text: &str) -> Expected {
    let mut out = Expected::default();
    for (index, line) in text.lines().enumerate() {
        let number = index as u32 + 1;
        if let Some(code) = annotation(line, "error") {
            assert!(out.error.is_none(), "two `// error:` annotations in one block");
            out.error = Some((code.to_string(), number));
        }
        if let Some(text) = annotation(line, "says") {
            out.says = Some(text.to_string());
        }
        if let Some(text) = annotation(line, "hint") {
            out.hint = Some(text.to_string());
        }
        if let Some(code) = annotation(line, "also") {
            out.also.push((code.to_string(), number));
        }
        if let Some(row) = annotation(line, "effects") {
            let name = declared_name(line).expect("`// effects:` belongs on a fn or test line");
            let row = match row {
                "unknown" => None,
                "none" => Some(Vec::new()),
                list => Some(list.split(',').map(|e| e.trim().to_string()).collect()),
            };
            out.effects.push((name, number, row));
        }
        if let Some(sites) = annotation(line, "sites") {
            let name = declared_name(line).expect("`// sites:` belongs on a fn or test line");
            let sites = match sites {
                "none" => Vec::new(),
                list => list.split(',').map(|e| e.trim().to_string()).collect(),
            };
            out.sites.push((name, number, sites));
        }
        if let Some(ty) = annotation(line, "type") {
            out.types.push((number, ty.to_string()));
        }
    }
    out
}

/// Everything the checker answered about a block, as comparable text.
fn answers(workspace: &mut Workspace) -> String {
    let outcome = workspace.check();
    let mut out = match &outcome.refusal {
        Some(refusal) => {
            let mut text = format!("refused {} {}:{}", refusal.first.code, refusal.first.line, refusal.first.column);
            for further in &refusal.further {
                text.push_str(&format!(" / {} {}:{}", further.code, further.line, further.column));
            }
            text.push_str(&format!(" not_judged={}", refusal.not_judged));
            text
        }
        None => format!("typed {}", outcome.functions),
    };
    let syntax =
        outcome.refusal.as_ref().is_some_and(|r| matches!(r.first.code.as_str(), "E-PARSE" | "E-LEX" | "E-NAME"));
    if !syntax {
        for facts in workspace.function_facts().iter().filter(|f| !f.library) {
            out.push_str(&format!("\n{}: {:?} {:?}", facts.name, facts.row, facts.sites));
        }
        for (_, line, name, ty) in workspace.let_types() {
            out.push_str(&format!("\nlet {name} at {line}: {ty}"));
        }
    }
    out
}

/// Checks one block's expectations against a workspace holding its text; returns the failures.
fn judge(block: &Block, workspace: &mut Workspace) -> Vec<String> {
    let expected = expected(&block.text);
    let outcome = workspace.check();
    let mut failures = Vec::new();
    let mut fail = |what: String| failures.push(format!("{}: {what}", block.at));
    let lines: Vec<&str> = block.text.lines().collect();
    let syntax_only = outcome.refusal.as_ref().is_some_and(|r| matches!(r.first.code.as_str(), "E-PARSE" | "E-LEX"));
    match (&outcome.refusal, &expected.error) {
        (None, None) => {}
        (None, Some((code, line))) => fail(format!("expected {code} on line {line}, but the program was accepted")),
        (Some(refusal), None) => fail(format!(
            "expected acceptance, got {} on line {}: {}",
            refusal.first.code, refusal.first.line, refusal.first.message
        )),
        (Some(refusal), Some((code, line))) => {
            if &refusal.first.code != code || refusal.first.line != *line {
                fail(format!(
                    "expected {code} on line {line}, got {} on line {}: {}",
                    refusal.first.code, refusal.first.line, refusal.first.message
                ));
            }
            if let Some(says) = &expected.says
                && !refusal.first.message.contains(says.as_str())
            {
                fail(format!("the message should say {says:?}: {}", refusal.first.message));
            }
            let hint = refusal.first.repair_hint.clone().unwrap_or_default();
            if let Some(wanted) = &expected.hint
                && !hint.contains(wanted.as_str())
            {
                fail(format!("the hint should say {wanted:?}: {hint:?}"));
            }
        }
    }
    let mut further: Vec<(String, u32)> = outcome
        .refusal
        .as_ref()
        .map(|r| r.further.iter().map(|d| (d.code.clone(), d.line)).collect())
        .unwrap_or_default();
    let mut also = expected.also.clone();
    further.sort();
    also.sort();
    if further != also {
        let messages: Vec<String> = outcome
            .refusal
            .as_ref()
            .map(|r| r.further.iter().map(|d| format!("{} line {}: {}", d.code, d.line, d.message)).collect())
            .unwrap_or_default();
        fail(format!("further refusals: expected {also:?}, got {further:?} {messages:?}"));
    }
    if !syntax_only && (!expected.effects.is_empty() || !expected.sites.is_empty()) {
        let facts = workspace.function_facts();
        for (name, line, row) in &expected.effects {
            match facts.iter().find(|f| !f.library && &*f.name == name) {
                None => fail(format!("line {line}: no function {name}")),
                Some(f) => {
                    let got: Option<Vec<String>> = f.row.as_ref().map(|r| r.iter().map(|e| e.to_string()).collect());
                    let mut want = row.clone();
                    if let Some(w) = want.as_mut() {
                        w.sort();
                    }
                    if got != want {
                        fail(format!("line {line}: effects of {name}: expected {want:?}, got {got:?}"));
                    }
                }
            }
        }
        for (name, line, sites) in &expected.sites {
            match facts.iter().find(|f| !f.library && &*f.name == name) {
                None => fail(format!("line {line}: no function {name}")),
                Some(f) => {
                    let got: Vec<String> = f.sites.iter().map(|(kind, n)| format!("{kind}={n}")).collect();
                    let (mut got_sorted, mut want) = (got.clone(), sites.clone());
                    got_sorted.sort();
                    want.sort();
                    if got_sorted != want {
                        fail(format!("line {line}: sites of {name}: expected {sites:?}, got {got:?}"));
                    }
                }
            }
        }
    }
    if !expected.types.is_empty() {
        let types = workspace.let_types();
        for (line, ty) in &expected.types {
            match types.iter().find(|(file, l, _, _)| *file == 0 && l == line) {
                None => fail(format!("line {line}: no `let` the checker typed ({})", lines[*line as usize - 1].trim())),
                Some((_, _, name, got)) if got != ty => {
                    fail(format!("line {line}: type of {name}: expected {ty}, got {got}"))
                }
                Some(_) => {}
            }
        }
    }
    failures
}

fn source(text: &str) -> Vec<SourceText> {
    vec![SourceText { name: "test.cairn".into(), text: text.to_string() }]
}

/// The one edit that turns `old` into `new` (common prefix and suffix kept).
fn diff(old: &str, new: &str) -> TextEdit {
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let mut prefix = prefix;
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old.bytes().rev().zip(new.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    TextEdit {
        delete: TextRange::new(TextSize::from(prefix as u32), TextSize::from((old.len() - suffix) as u32)),
        insert: new[prefix..new.len() - suffix].to_string(),
    }
}

#[test]
fn the_language_tests_pass() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(lang_dir())
        .expect("tests/lang")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no language tests found");
    let mut failures = Vec::new();
    let mut count = 0;
    for path in &files {
        let mut staged: Option<(Workspace, String)> = None;
        for block in blocks(path) {
            count += 1;
            let mut fresh = Workspace::new(source(&block.text));
            failures.extend(judge(&block, &mut fresh));
            match block.stage {
                Some(1) | None => {
                    staged = block.stage.map(|_| (Workspace::new(source(&block.text)), block.text.clone()))
                }
                Some(n) => {
                    let Some((workspace, previous)) = staged.as_mut() else {
                        failures.push(format!("{}: stage={n} without a stage=1 before it", block.at));
                        continue;
                    };
                    workspace.check();
                    workspace.edit_file(0, &diff(previous, &block.text));
                    *previous = block.text.clone();
                    let long_lived = answers(workspace);
                    let from_scratch = answers(&mut Workspace::new(source(&block.text)));
                    if long_lived != from_scratch {
                        failures.push(format!(
                            "{}: the edited workspace answers\n{long_lived}\nbut a fresh one\n{from_scratch}",
                            block.at
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {count} blocks failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{count} language test blocks passed");
}

/// Codes with a static hint that this build's checker cannot raise yet (device cooperation and
/// stages, tier 2): their hints are the protocol's, untested until the rules are.
const HINTS_NOT_RAISED_YET: &[&str] = &["E-COOP-GLOBAL", "E-COOP-BARRIER", "E-STAGE-UNREADY"];

/// Every hint is reviewed against a language test (issue 20): each language code that has a
/// static hint is asserted with `// hint:` on some block's `// error:` line, so a hint that
/// stops being given, or changes, fails here, not in front of a user.
#[test]
fn every_static_hint_of_a_language_code_is_asserted_by_a_language_test() {
    let mut asserted = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(lang_dir()).expect("tests/lang").flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            if let (Some(code), Some(_)) = (annotation(line, "error"), annotation(line, "hint")) {
                asserted.insert(code.to_string());
            }
        }
    }
    let mut missing = Vec::new();
    for card in cairn_diagnostics::cards().iter().filter(|c| c.kind == cairn_diagnostics::CardKind::Language) {
        for code in &card.codes {
            if cairn_diagnostics::hints::static_hint(code).is_some()
                && !asserted.contains(*code)
                && !HINTS_NOT_RAISED_YET.contains(code)
            {
                missing.push(*code);
            }
        }
    }
    assert!(missing.is_empty(), "static hints no language test asserts: {missing:?}");
    // The list of codes not raised yet holds only codes that really are not asserted.
    for code in HINTS_NOT_RAISED_YET {
        assert!(!asserted.contains(*code), "{code} is asserted now: take it off HINTS_NOT_RAISED_YET");
    }
}
