//! The differential test (design.md, "tests that keep the design true"): random edit scripts
//! applied to one long-lived workspace, every answer compared with a workspace built fresh from
//! the same text. Answers: the check's record (first refusal, further ones, `not_judged`), every
//! function's effect row and guard sites, the program's state view, and the MIR of every
//! function (its text dump: what codegen and the solver read, so a memo that backdates wrongly
//! shows here). Edits come in every kind the fast path must recognise or refuse: inside one body
//! (literals, statements added, removed or broken, effects added), outside bodies (signatures,
//! names, new functions), random deletions, and reverts.
//!
//! It lives with the MIR (not in `cairn_hir`) because the MIR is one of its answers. The count of
//! incremental checks is taken from the edited check itself, the first one of [`answers`]; a
//! mutation that disables the fast path makes both tests fail (docs/semantics.md).

use cairn_diagnostics::record::refusal_record;
use cairn_hir::{CheckKind, SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};
use cairn_testgen::{Config, Rng};

/// Everything the two workspaces must agree on, as comparable text, and how the first check (the
/// one after the edits) was answered.
fn answers(workspace: &mut Workspace) -> ((String, Vec<String>), CheckKind) {
    let outcome = workspace.check();
    let kind = workspace.last_check_kind();
    let record = match &outcome.refusal {
        Some(refusal) => serde_json::Value::Object(refusal_record(refusal)).to_string(),
        None => format!("typed {} {}", outcome.functions, outcome.library_functions),
    };
    let mut facts: Vec<String> =
        if outcome.refusal.as_ref().is_some_and(|r| r.first.code == "E-PARSE" || r.first.code == "E-LEX") {
            Vec::new()
        } else {
            // Facts by what they say, not by the database's ids (a fresh database numbers its
            // declarations anew).
            workspace.function_facts().iter().map(|f| without_id(&format!("{f:?}"))).collect()
        };
    // The state: signatures, rows, types and the taught first refusal.
    facts.push(format!("{:?}", workspace.state_view(false)));
    // The MIR of an accepted program.
    if outcome.refusal.is_none() {
        let program = cairn_mir::program_mir(workspace.db());
        facts.extend(program.functions.iter().map(|f| f.to_string()));
        facts.extend(program.errors.iter().map(|e| format!("{e:?}")));
    }
    ((record, facts), kind)
}

/// A fact's text without its declaration's database id (`item: Item { [salsa id]: Id(10a) }, `).
fn without_id(text: &str) -> String {
    match (text.find("item: Item {"), text.find("}, module:")) {
        (Some(start), Some(end)) if start < end => format!("{}{}", &text[..start], &text[end + 3..]),
        _ => text.to_string(),
    }
}

fn fresh(text: &str) -> Workspace {
    Workspace::new(vec![SourceText { name: "main.cairn".into(), text: text.to_string() }])
}

/// Statements an edit may put in a body: harmless, effectful, refused, or breaking the syntax.
const STATEMENTS: &[&str] = &[
    "let zz_a:u64 = 7;",
    "let zz_b = 1 + 2;",
    "println(\"edited\");",
    "let zz_c:u32 = true;",
    "zz_undefined = 3;",
    "return;",
    "while false { }",
    "assert(1 == 1);",
    "let zz_d = 5",
    "if true { let zz_e = 1; }",
    "// a comment",
    "",
    "let zz_f:u8 = 300;",
    "let zz_g = add_wrap(1, 2);",
];

/// One random edit of `text`.
fn random_edit(rng: &mut Rng, text: &str) -> TextEdit {
    let at = |offset: usize| TextSize::from(offset as u32);
    match rng.below(20) {
        // Replace or delete a line inside a body (lines indented by two spaces).
        0..=9 => {
            let lines: Vec<(usize, &str)> = line_starts(text).filter(|(_, l)| l.starts_with("  ")).collect();
            if lines.is_empty() {
                return TextEdit { delete: TextRange::empty(at(0)), insert: "\n".into() };
            }
            let (start, line) = lines[rng.below(lines.len() as u64) as usize];
            let statement = *rng.pick(STATEMENTS);
            let insert = if rng.chance(1, 4) { String::new() } else { format!("  {statement}") };
            TextEdit { delete: TextRange::new(at(start), at(start + line.len())), insert }
        }
        // Insert a statement before a body line.
        10..=14 => {
            let lines: Vec<(usize, &str)> = line_starts(text).filter(|(_, l)| l.starts_with("  ")).collect();
            let start = if lines.is_empty() { 0 } else { lines[rng.below(lines.len() as u64) as usize].0 };
            let statement = *rng.pick(STATEMENTS);
            TextEdit { delete: TextRange::empty(at(start)), insert: format!("  {statement}\n") }
        }
        // Change a number anywhere (bodies, constants, extents).
        15 | 16 => {
            let digits: Vec<usize> = text.char_indices().filter(|(_, c)| c.is_ascii_digit()).map(|(i, _)| i).collect();
            if digits.is_empty() {
                return TextEdit { delete: TextRange::empty(at(0)), insert: " ".into() };
            }
            let i = digits[rng.below(digits.len() as u64) as usize];
            let replacement = ["0", "9", "99999", "1"][rng.below(4) as usize];
            TextEdit { delete: TextRange::new(at(i), at(i + 1)), insert: replacement.into() }
        }
        // Rename one occurrence of a word (a declaration, a call, a type).
        17 => {
            let words: Vec<(usize, usize)> = word_spans(text);
            if words.is_empty() {
                return TextEdit { delete: TextRange::empty(at(0)), insert: " ".into() };
            }
            let (start, end) = words[rng.below(words.len() as u64) as usize];
            TextEdit { delete: TextRange::new(at(start), at(end)), insert: format!("{}x", &text[start..end]) }
        }
        // A new function, or a signature change at a declaration.
        18 => {
            if rng.chance(1, 2) {
                let k = rng.below(1000);
                TextEdit {
                    delete: TextRange::empty(at(text.len())),
                    insert: format!("\nfn extra_{k}(x:u64) -> u64 {{\n  return x + 1;\n}}\n"),
                }
            } else {
                match text.find("(x:u64, y:i64)") {
                    Some(i) => TextEdit { delete: TextRange::new(at(i), at(i + 14)), insert: "(x:u64, y:i32)".into() },
                    None => TextEdit { delete: TextRange::empty(at(0)), insert: "\n".into() },
                }
            }
        }
        // Delete a random short range (anything may break).
        _ => {
            if text.is_empty() {
                return TextEdit { delete: TextRange::empty(at(0)), insert: "fn".into() };
            }
            let start = rng.below(text.len() as u64) as usize;
            let mut end = (start + 1 + rng.below(12) as usize).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            TextEdit { delete: TextRange::new(at(start), at(end)), insert: String::new() }
        }
    }
}

fn line_starts(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line)
    })
}

fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// Runs `scripts` scripts of `length` edits each on programs of `functions` functions.
fn run(seed: u64, scripts: u64, length: usize, functions: usize) -> (usize, usize) {
    run_on(cairn_testgen::program, seed, scripts, length, functions)
}

/// [`run`] over programs from `generate`.
fn run_on(generate: fn(Config) -> String, seed: u64, scripts: u64, length: usize, functions: usize) -> (usize, usize) {
    let mut incremental = 0;
    let mut total = 0;
    for script in 0..scripts {
        let original = generate(Config { seed: seed + script, functions, expression_depth: 2 });
        let mut rng = Rng::new(seed ^ (script * 0x9e37_79b9));
        let mut workspace = fresh(&original);
        let mut text = original.clone();
        assert_eq!(answers(&mut workspace).0, answers(&mut fresh(&text)).0, "script {script}: before any edit");
        for step in 0..length {
            let broken = workspace.last_check_kind() == CheckKind::Syntax;
            if rng.chance(1, 12) || (broken && rng.chance(1, 2)) {
                // Revert: the original's answers must come back.
                workspace.set_file_text(0, original.clone());
                text = original.clone();
            } else {
                let edit = random_edit(&mut rng, &text);
                text = edit.apply(&text);
                workspace.edit_file(0, &edit);
            }
            // Check after most edits; let some edits pile up unchecked.
            if rng.chance(3, 4) || step + 1 == length {
                let (long_lived, kind) = answers(&mut workspace);
                total += 1;
                if kind == CheckKind::Incremental {
                    incremental += 1;
                }
                let (from_scratch, _) = answers(&mut fresh(&text));
                if long_lived != from_scratch {
                    let first = long_lived.1.iter().zip(&from_scratch.1).find(|(a, b)| a != b);
                    panic!(
                        "script {script}, step {step}: the long-lived workspace answers differently.\nrecord: {} vs {}\nfirst differing fact:\n{first:#?}\ntext:\n{text}",
                        long_lived.0, from_scratch.0
                    );
                }
            }
        }
    }
    (incremental, total)
}

#[test]
fn a_long_lived_workspace_answers_like_a_fresh_one() {
    let (incremental, total) = run(1, 120, 25, 12);
    // The fast path must actually be exercised, or the test proves nothing about it. Most random
    // edits legitimately need the whole pass (a brace removed, a refusal or an effect added).
    assert!(incremental >= 250, "only {incremental} of {total} checks were incremental");
}

#[test]
fn edits_of_a_larger_program_agree_too() {
    let (incremental, total) = run(777, 6, 60, 80);
    assert!(incremental >= 20, "only {incremental} of {total} checks were incremental");
}

#[test]
fn programs_with_templates_and_traits_agree_too() {
    // Templates at random types, naturals and trait bounds: edits inside templates re-check
    // their instances, and the instances the program requests move with the callers' edits.
    let (incremental, total) = run_on(cairn_testgen::program_with_generics, 4242, 40, 25, 24);
    assert!(incremental >= 80, "only {incremental} of {total} checks were incremental");
}

#[test]
fn generated_generic_programs_are_accepted() {
    for seed in 0..20 {
        let text = cairn_testgen::program_with_generics(Config { seed, functions: 60, expression_depth: 2 });
        let mut workspace = fresh(&text);
        let outcome = workspace.check();
        assert!(outcome.refusal.is_none(), "seed {seed}: {:?}\n{text}", outcome.refusal.map(|r| r.first));
        assert!(text.contains("[T:integer]"), "seed {seed} made no template");
    }
}

#[test]
fn programs_with_owners_agree_too() {
    // Buf makers that swap, move and return early, linear values consumed by defer: edits move
    // moves and releases, and the rows' alloc and free with them.
    let (incremental, total) = run_on(cairn_testgen::program_with_owners, 9090, 30, 25, 24);
    assert!(incremental >= 60, "only {incremental} of {total} checks were incremental");
}

#[test]
fn generated_owner_programs_are_accepted() {
    let mut regions = 0;
    for seed in 0..20 {
        let text = cairn_testgen::program_with_owners(Config { seed, functions: 60, expression_depth: 2 });
        let mut workspace = fresh(&text);
        let outcome = workspace.check();
        assert!(outcome.refusal.is_none(), "seed {seed}: {:?}\n{text}", outcome.refusal.map(|r| r.first));
        assert!(text.contains("Buf[u64]") && text.contains("defer settle"), "seed {seed} made no owner");
        regions += usize::from(text.contains("parallel i in n"));
    }
    assert!(regions >= 10, "only {regions} of 20 owner programs hold a parallel region");
}
