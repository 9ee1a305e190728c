//! Re-execution tests (design.md): after each kind of edit, which queries ran, and — the point
//! of each test — which did *not*. Queries are counted through the database's execution log.

mod common;

use cairn_hir::{CheckKind, SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};
use common::*;

const PROGRAM: &str = "\
import std.core (Option);

fn a(x:u32) -> u32 {
  return x + 1;
}

fn b(x:u32) -> u32 {
  let doubled = a(x) * 2;
  return doubled;
}

fn c() -> u32 {
  return b(3);
}

fn main() -> i32 {
  if c() > 10 { return 1; }
  return 0;
}
";

#[test]
fn a_body_edit_patches_the_file_and_its_undo_leaves_nothing_to_make() {
    let mut workspace = workspace(PROGRAM);
    // An edit inside a body is patched in: the file's text and tree are not made again...
    let edit = text_edit(PROGRAM, "x + 1", "x + 2");
    let undo = text_edit(&edit.apply(PROGRAM), "x + 2", "x + 1");
    workspace.edit_file(0, &edit);
    assert_eq!(workspace.files()[0].patched(), 1);
    let log = executed(&mut workspace, |_| {});
    assert!(ran(&log, "check_fn", &id(&workspace, "a")) && !ran(&log, "check_fn", &id(&workspace, "b")), "{log:?}");
    assert_eq!(workspace.files()[0].patched(), 1, "checking the program reads no whole text or tree");
    // ...and its undo drops the patch: nothing is left to make.
    workspace.edit_file(0, &undo);
    assert_eq!(workspace.files()[0].patched(), 0);
    assert_eq!(workspace.files()[0].text(), PROGRAM);
    // Read after edits of two bodies, the text and tree are a fresh parse's, once.
    let second = text_edit(&edit.apply(PROGRAM), "a(x) * 2", "a(x) * 3");
    workspace.edit_file(0, &edit);
    workspace.edit_file(0, &second);
    assert_eq!(workspace.files()[0].patched(), 2);
    let expected = second.apply(&edit.apply(PROGRAM));
    // Its length and any of its bytes read without making it (a range across a patch's edge
    // makes it: checked last).
    assert_eq!(workspace.files()[0].len(), expected.len());
    let lines = cairn_diagnostics::LineIndex::new(&expected);
    for start in (0..expected.len()).step_by(7) {
        let at = TextSize::from(start as u32);
        assert_eq!(workspace.files()[0].line_column(at), lines.line_column(&expected, at), "{start}");
        for len in [0, 1, 5, 13] {
            let range = start..(start + len).min(expected.len());
            let file = &workspace.files()[0];
            let inside = [file.items[0].start, file.items[1].start, file.items[2].start, file.items[3].start]
                .iter()
                .all(|s| !(range.start < usize::from(*s) && usize::from(*s) < range.end));
            if inside {
                assert_eq!(&*file.slice(range.clone()), &expected[range.clone()], "{range:?}");
            }
        }
    }
    assert_eq!(workspace.files()[0].patched(), 2, "reading slices never makes the tree");
    assert_eq!(workspace.files()[0].text(), expected);
    assert_eq!(workspace.files()[0].parse().green(), cairn_syntax::parse(&expected).green());
    assert_eq!(workspace.files()[0].patched(), 0);
    assert!(workspace.check().refusal.is_none());
    // A body whose new text does not parse is no patch: the file is parsed again, errors and all.
    let broken = text_edit(&expected, "x + 2", "x + ");
    workspace.edit_file(0, &broken);
    assert_eq!(workspace.files()[0].patched(), 0);
    assert!(!workspace.files()[0].errors().is_empty());
    assert!(workspace.check().refusal.is_some());
}

/// A tree made between two patches (an edit outside the bodies of another file re-splits every
/// file, reading this one's tree) is never read stale by a later patch (review finding).
#[test]
fn a_tree_made_between_two_patches_is_never_read_stale() {
    let a = "fn one() -> u32 {\n  return 1;\n}\n";
    let b = "fn f() -> u32 {\n  return 2;\n}\n\nfn g() -> u32 {\n  return 3;\n}\n\nfn main() -> i32 {\n  if f() + g() + one() > 100 { return 1; }\n  return 0;\n}\n";
    let mut workspace = Workspace::new(vec![
        SourceText { name: "a.cairn".into(), text: a.into() },
        SourceText { name: "b.cairn".into(), text: b.into() },
    ]);
    assert!(workspace.check().refusal.is_none());
    // A body edit in b is patched.
    let first = text_edit(b, "return 2;", "return 20;");
    workspace.edit_file(1, &first);
    assert_eq!(workspace.files()[1].patched(), 1);
    // An edit of a outside its body re-splits every file: b's tree is made.
    workspace.edit_file(0, &text_edit(a, "fn one()", "fn one( )"));
    assert!(workspace.check().refusal.is_none());
    // Another body edit in b, which no longer type-checks...
    let b1 = first.apply(b);
    let second = text_edit(&b1, "return 3;", "return true;");
    workspace.edit_file(1, &second);
    let expected = second.apply(&b1);
    assert_eq!(workspace.files()[1].parse().green(), cairn_syntax::parse(&expected).green());
    // ...and a's next edit outside its body re-splits b from its tree again: g's new body stays.
    workspace.edit_file(0, &text_edit("fn one( ) -> u32 {\n  return 1;\n}\n", "fn one( )", "fn one()"));
    assert_eq!(workspace.files()[1].text(), expected);
    assert!(workspace.check().refusal.is_some(), "g returns a bool where its signature says u32");
    // An undo of the first edit while a tree is made brings nothing back.
    let mut workspace = Workspace::new(vec![
        SourceText { name: "a.cairn".into(), text: a.into() },
        SourceText { name: "b.cairn".into(), text: b.into() },
    ]);
    assert!(workspace.check().refusal.is_none());
    workspace.edit_file(1, &first);
    workspace.edit_file(0, &text_edit(a, "fn one()", "fn one( )"));
    workspace.edit_file(1, &text_edit(&b1, "return 20;", "return 2;"));
    workspace.edit_file(1, &text_edit(b, "return 3;", "return 4;"));
    let expected = b.replace("return 3;", "return 4;");
    assert_eq!(workspace.files()[1].parse().green(), cairn_syntax::parse(&expected).green());
    assert_eq!(workspace.files()[1].text(), expected);
}

#[test]
fn a_comment_or_whitespace_in_a_body_reruns_no_body_check() {
    let mut workspace = workspace(PROGRAM);
    let log = executed(&mut workspace, |w| edit(w, "fn b(", "  return doubled;", "  // why\n\n    return   doubled;"));
    assert!(!ran_any(&log, "check_fn"), "{log:?}");
    assert!(!ran_any(&log, "fn_summary"), "{log:?}");
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
}

#[test]
fn the_callers_are_kept_while_no_call_changes() {
    let mut workspace = workspace(PROGRAM);
    let item =
        |w: &Workspace, name: &str| w.files()[0].items.iter().find(|i| &*i.key.name == name).expect("declared").item;
    let a = item(&workspace, "a");
    assert_eq!(workspace.callers(a), vec![item(&workspace, "b")]);
    // A literal: no call moved, so the rows (which carry the call graph) are not recomputed.
    let log = executed(&mut workspace, |w| edit(w, "fn b(", "* 2", "* 7"));
    assert!(!ran_any(&log, "effect_rows"), "{log:?}");
    assert_eq!(workspace.callers(a), vec![item(&workspace, "b")]);
    // A new call: they are, and the callers follow.
    let log = executed(&mut workspace, |w| edit(w, "fn c(", "return b(3);", "return b(a(3));"));
    assert!(ran_any(&log, "effect_rows"), "{log:?}");
    assert_eq!(workspace.callers(a), vec![item(&workspace, "b"), item(&workspace, "c")]);
}

#[test]
fn editing_one_body_of_three_rechecks_only_that_body() {
    let mut workspace = workspace(PROGRAM);
    let b = id(&workspace, "b");
    let log = executed(&mut workspace, |w| edit(w, "fn b(", "* 2", "* 5 + 1"));
    assert!(ran(&log, "check_fn", &b), "{log:?}");
    for other in ["a", "c", "main"] {
        let other = id(&workspace, other);
        assert!(log.iter().all(|entry| !entry.ends_with(&format!("({other})"))), "{other} was touched: {log:?}");
    }
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
}

#[test]
fn renaming_a_local_rechecks_only_its_body() {
    let mut workspace = workspace(PROGRAM);
    let log = executed(&mut workspace, |w| {
        edit(w, "fn b(", "let doubled", "let twice");
        edit(w, "fn b(", "return doubled", "return twice");
    });
    assert_eq!(log.iter().filter(|e| e.starts_with("check_fn(")).count(), 1, "{log:?}");
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
}

#[test]
fn reordering_functions_rechecks_no_body() {
    let mut workspace = workspace(PROGRAM);
    let log = executed(&mut workspace, |w| {
        let text = &w.files()[0].text();
        let a_start = text.find("fn a(").expect("a");
        let b_start = text.find("fn b(").expect("b");
        let reordered = format!("{}{}{}", &text[..a_start], &text[b_start..], &text[a_start..b_start]);
        w.set_file_text(0, reordered);
    });
    assert!(!ran_any(&log, "check_fn"), "{log:?}");
    assert!(!ran_any(&log, "fn_signature"), "{log:?}");
}

#[test]
fn a_signature_change_rechecks_the_direct_callers_only() {
    let mut workspace = workspace(PROGRAM);
    let (a, b, c) = (id(&workspace, "a"), id(&workspace, "b"), id(&workspace, "c"));
    // `a` takes a u64 now; its caller `b` passes a u32 and is refused, but `c` (which calls `b`,
    // whose signature did not change) must not be re-checked.
    workspace.db().start_logging();
    edit(&mut workspace, "fn a(", "x:u32", "x:u64");
    let outcome = workspace.check();
    let log = workspace.db().take_log();
    assert_eq!(outcome.refusal.as_ref().map(|r| r.first.code.as_str()), Some("E-TYPE-MISMATCH"));
    assert!(ran(&log, "check_fn", &a) && ran(&log, "check_fn", &b), "{log:?}");
    assert!(!ran(&log, "check_fn", &c), "c does not call a: {log:?}");
    assert!(!ran(&log, "fn_signature", &b) && !ran(&log, "fn_signature", &c), "{log:?}");
}

#[test]
fn a_leaf_effect_change_moves_rows_but_rechecks_no_other_body() {
    let mut workspace = workspace(PROGRAM);
    let a = id(&workspace, "a");
    let log =
        executed(&mut workspace, |w| edit(w, "fn a(", "  return x + 1;", "  println(\"in a\");\n  return x + 1;"));
    assert!(ran(&log, "check_fn", &a), "{log:?}");
    assert_eq!(log.iter().filter(|e| e.starts_with("check_fn(")).count(), 1, "{log:?}");
    assert!(ran_any(&log, "effect_rows"), "the rows move: {log:?}");
    assert_eq!(workspace.last_check_kind(), CheckKind::Whole);
    let facts = workspace.function_facts();
    let row = |name: &str| facts.iter().find(|f| &*f.name == name).and_then(|f| f.row.clone()).expect("a row");
    assert!(row("c").iter().any(|e| &**e == "io"), "io reaches c through b: {:?}", row("c"));
}

#[test]
fn the_library_is_never_rechecked_by_user_edits() {
    let mut workspace = workspace(PROGRAM);
    let library: Vec<String> = workspace
        .files()
        .iter()
        .filter(|f| f.library)
        .flat_map(|f| f.items.iter())
        .map(|i| {
            let debug = format!("{:?}", i.item);
            debug[debug.find("Id(").expect("id")..debug.find(')').expect("closed") + 1].to_string()
        })
        .collect();
    assert!(!library.is_empty(), "std.core is loaded");
    let logs = [
        executed(&mut workspace, |w| edit(w, "fn b(", "* 2", "* 3")),
        executed(&mut workspace, |w| edit(w, "fn a(", "return x + 1;", "println(x);\n  return x + 1;")),
        executed(&mut workspace, |w| edit(w, "fn c(", "return b(3);", "return b(4);")),
    ];
    for log in logs {
        for id in &library {
            assert!(log.iter().all(|e| !e.ends_with(&format!("({id})"))), "library item {id} re-ran: {log:?}");
        }
    }
}

#[test]
fn an_edit_then_its_revert_gives_the_original_answers() {
    let mut workspace = workspace(PROGRAM);
    let before = format!("{:?}", workspace.function_facts());
    edit(&mut workspace, "fn b(", "* 2", "* 2 + 1");
    edit(&mut workspace, "fn b(", "* 2 + 1", "* 2");
    assert!(workspace.check().refusal.is_none());
    assert_eq!(format!("{:?}", workspace.function_facts()), before);
}

/// A program of 2,000 root functions that call ten helpers, and a module `m` whose functions
/// call `h3` or `h4` (the root's, until `m` declares its own).
fn big_program() -> String {
    let mut text = String::new();
    for h in 0..10 {
        text.push_str(&format!("fn h{h}(x:u64) -> u64 {{\n  return x + {h};\n}}\n"));
    }
    for k in 0..2000 {
        text.push_str(&format!("fn work{k}(x:u64) -> u64 {{\n  return h{}(x) + 1;\n}}\n", k % 10));
    }
    text.push_str("fn main() -> i32 {\n  return 0;\n}\nmodule m;\n");
    for k in 0..20 {
        text.push_str(&format!("fn g{k}(x:u64) -> u64 {{\n  return h{}(x);\n}}\n", 3 + k % 2));
    }
    text
}

fn checked_bodies(log: &[String]) -> usize {
    log.iter().filter(|e| e.starts_with("check_fn(")).count()
}

#[test]
fn adding_a_function_rechecks_only_the_bodies_that_name_it() {
    let mut workspace = workspace(&big_program());
    // A new root function nobody names: only its own body is checked.
    let log = executed(&mut workspace, |w| {
        let end = w.files()[0].text().find("module m;").expect("module");
        w.edit_file(
            0,
            &TextEdit {
                delete: TextRange::empty(TextSize::from(end as u32)),
                insert: "fn unrelated(x:u64) -> u64 {\n  return x;\n}\n".into(),
            },
        );
    });
    assert_eq!(
        checked_bodies(&log),
        1,
        "only the new body: {:?}",
        log.iter().filter(|e| e.starts_with("check_fn(")).collect::<Vec<_>>()
    );
    assert!(ran_any(&log, "program_scope"), "the scope itself is recomputed");
    // `m` declares its own h3: the ten functions of `m` that call h3 now mean it and are
    // re-checked; the ten that call h4, and the 2,000 root functions, are not.
    let log = executed(&mut workspace, |w| {
        let text = &w.files()[0].text();
        let at = text.find("module m;\n").expect("module") + "module m;\n".len();
        w.edit_file(
            0,
            &TextEdit {
                delete: TextRange::empty(TextSize::from(at as u32)),
                insert: "fn h3(x:u64) -> u64 {\n  return x * 3;\n}\n".into(),
            },
        );
    });
    assert_eq!(checked_bodies(&log), 11, "m.h3 and the ten bodies that name h3: {log:?}");
    for k in (1..20).step_by(2) {
        assert!(!ran(&log, "check_fn", &id(&workspace, &format!("g{k}"))), "g{k} calls h4: {log:?}");
    }
    for k in (0..20).step_by(2) {
        assert!(ran(&log, "check_fn", &id(&workspace, &format!("g{k}"))), "g{k} calls h3 and must be re-checked");
    }
}

#[test]
fn a_declaration_added_to_a_module_re_resolves_only_that_module_s_names() {
    // Each module has a scope of its own (`module_scope`), and a lookup reads the scope of the
    // module it is written in and of the modules its candidates name. Adding a function to `m`
    // changes `m`'s scope only: the lookups written in `m` (`h3`, `h4`) are resolved again, the
    // root's lookups (`h0`…`h9` from 2,000 bodies, and `work…`) are not even re-run.
    let mut workspace = workspace(&big_program());
    let log = executed(&mut workspace, |w| {
        let end = w.files()[0].text().len();
        w.edit_file(
            0,
            &TextEdit {
                delete: TextRange::empty(TextSize::from(end as u32)),
                insert: "fn fresh(x:u64) -> u64 {\n  return x;\n}\n".into(),
            },
        );
    });
    let count = |query: &str| log.iter().filter(|e| e.starts_with(&format!("{query}("))).count();
    let lookups: Vec<&String> = log.iter().filter(|e| e.starts_with("resolve_name(")).collect();
    assert_eq!(lookups.len(), 2, "only m's two lookups: {lookups:?}");
    assert_eq!(count("module_scope"), 2, "each module's scope is a projection of the program's: root and m");
    assert_eq!(checked_bodies(&log), 1, "only the new body");
}

#[test]
fn the_library_is_not_even_revalidated_by_program_edits() {
    let mut workspace = workspace(PROGRAM);
    let library: Vec<String> = workspace
        .files()
        .iter()
        .filter(|f| f.library)
        .flat_map(|f| f.items.iter())
        .map(|i| {
            let debug = format!("{:?}", i.item);
            debug[debug.find("Id(").expect("id")..debug.find(')').expect("closed") + 1].to_string()
        })
        .collect();
    let edits: [(&str, &str, &str); 3] = [
        ("fn b(", "* 2", "* 3"),
        ("fn a(", "return x + 1;", "println(x);\n  return x + 1;"),
        ("fn c(", "b(3)", "b(4)"),
    ];
    for (after, old, new) in edits {
        workspace.db().start_logging();
        edit(&mut workspace, after, old, new);
        assert!(workspace.check().refusal.is_none());
        let executed = workspace.db().take_log();
        let validated = workspace.db().take_validated();
        // No library query executes. The library memos a program-level query reads are confirmed
        // by salsa's durability shortcut (one event each, their dependencies not visited): a
        // deep re-validation of a library check would visit the facts of the library's own
        // declarations (`decl_info`), and none of those is touched. (The library's scope is read
        // by program queries too — a name of the program may be a library's — and is confirmed
        // the same way; it never re-runs.)
        for id in &library {
            let reran: Vec<&String> = executed.iter().filter(|e| e.ends_with(&format!("({id})"))).collect();
            assert!(reran.is_empty(), "library item {id} re-ran: {reran:?}");
            assert!(!ran(&validated, "decl_info", id), "decl_info({id}) was re-validated: {validated:?}");
        }
        for query in ["library_scope", "library_constants"] {
            assert!(!ran_any(&executed, query), "{query}: {executed:?}");
        }
    }
    // Adding a declaration re-runs the program's scope, never the library's.
    workspace.db().start_logging();
    let end = workspace.files()[0].text().len();
    workspace.edit_file(
        0,
        &TextEdit {
            delete: TextRange::empty(TextSize::from(end as u32)),
            insert: "\nfn more() -> u32 {\n  return 1;\n}\n".into(),
        },
    );
    assert!(workspace.check().refusal.is_none());
    let executed = workspace.db().take_log();
    assert!(ran_any(&executed, "program_scope") && !ran_any(&executed, "library_scope"), "{executed:?}");
    assert!(!ran_any(&executed, "library_constants"), "{executed:?}");
}
