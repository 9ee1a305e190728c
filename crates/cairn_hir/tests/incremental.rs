//! Re-execution tests (design.md): after each kind of edit, which queries ran, and — the point
//! of each test — which did *not*. Queries are counted through the database's execution log.

use cairn_hir::{CheckKind, Item, SourceText, Workspace};
use cairn_syntax::{TextEdit, TextRange, TextSize};

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

fn workspace(text: &str) -> Workspace {
    let mut workspace =
        Workspace::with_execution_log(vec![SourceText { name: "main.cairn".into(), text: text.to_string() }]);
    assert!(workspace.check().refusal.is_none(), "the program must be accepted before the edit");
    workspace
}

/// The id of a declaration of the program's file by name, as the log prints it.
fn id(workspace: &Workspace, name: &str) -> String {
    let item: Item = workspace.files()[0].items.iter().find(|i| &*i.key.name == name).expect("declared").item;
    let debug = format!("{item:?}");
    let start = debug.find("Id(").expect("an id");
    debug[start..debug.find(')').expect("closed") + 1].to_string()
}

/// Replaces the first occurrence of `old` (after `after`) by `new`, as an editor would.
fn edit(workspace: &mut Workspace, after: &str, old: &str, new: &str) {
    let text = &workspace.files()[0].text;
    let base = text.find(after).expect("anchor");
    let start = base + text[base..].find(old).expect("old text");
    let delete = TextRange::new(TextSize::from(start as u32), TextSize::from((start + old.len()) as u32));
    workspace.edit_file(0, &TextEdit { delete, insert: new.to_string() });
}

/// Applies `change`, checks, and returns the queries that executed.
fn executed(workspace: &mut Workspace, change: impl FnOnce(&mut Workspace)) -> Vec<String> {
    workspace.db().start_logging();
    change(workspace);
    let outcome = workspace.check();
    let log = workspace.db().take_log();
    assert!(outcome.refusal.is_none(), "the edited program must stay accepted: {:?}", outcome.refusal);
    log
}

fn ran(log: &[String], query: &str, id: &str) -> bool {
    log.iter().any(|entry| entry == &format!("{query}({id})"))
}

fn ran_any(log: &[String], query: &str) -> bool {
    log.iter().any(|entry| entry.starts_with(&format!("{query}(")))
}

const PROGRAM_QUERIES: &[&str] = &["program_check", "effect_rows", "program_scope", "all_constants"];

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
        let text = &w.files()[0].text;
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
