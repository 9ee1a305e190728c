//! Re-execution tests (design.md) for edits of the language's constructs: impl members and
//! `dyn` dispatch, constants, templates and their instances, owners and foreign calls, regions,
//! library modules, derivations, implementations, device lanes and expression bodies. As in
//! `incremental.rs`: which queries ran after each edit, and which did *not*.

mod common;

use cairn_hir::{CheckKind, SourceText, Workspace};
use common::*;

/// Trait and impl members are items of their own, keyed under their parent: an edit of one
/// member's body gives that member a new syntax and leaves its sibling's input as it was.
#[test]
fn members_of_an_impl_are_items_of_their_own() {
    let text = "trait Shape {\n  fn area(s:ro<Self>) -> u64;\n}\nstruct Sq { n:u64; }\nimpl Shape for Sq {\n  fn area(s:ro<Sq>) -> u64 { return s.n * s.n; }\n  fn side(s:ro<Sq>) -> u64 { return s.n; }\n}\nfn main() -> i32 { return 0; }\n";
    let mut workspace =
        Workspace::with_execution_log(vec![SourceText { name: "main.cairn".into(), text: text.to_string() }]);
    let keys: Vec<String> = workspace.files()[0].members.iter().map(|m| m.key.to_string()).collect();
    assert_eq!(
        keys,
        ["Shape::area", "Shape for Sq::area", "Shape for Sq::side"],
        "the trait's member, then the impl's two, under the impl's own name"
    );
    let side = workspace.files()[0].members[2].item;
    let side_syntax = side.syntax(workspace.db()).clone();
    let area = workspace.files()[0].members[1].item;
    let area_syntax = area.syntax(workspace.db()).clone();
    edit(&mut workspace, "impl Shape", "s.n * s.n", "s.n * s.n + 1");
    let members = &workspace.files()[0].members;
    assert_eq!(members[1].item, area, "the edited member keeps its input");
    assert_eq!(members[2].item, side, "and so does its sibling");
    assert_ne!(area.syntax(workspace.db()), &area_syntax, "the edited member's syntax changed");
    assert_eq!(side.syntax(workspace.db()), &side_syntax, "its sibling's did not");
    // The member's place in the file follows it.
    let (file, start) = workspace.locate(side).expect("located");
    assert_eq!(&workspace.files()[file].text()[usize::from(start)..usize::from(start) + 7], "fn side");
}

const DISPATCH: &str = "\
trait Area {
  fn area(s:ro<Self>) -> u64;
}
struct Rect { w:u64; }
struct Disc { r:u64; }
impl Area for Rect {
  fn area(s:ro<Rect>) -> u64 { return s.w * 2; }
}
impl Area for Disc {
  fn area(s:ro<Disc>) -> u64 { return s.r * 3; }
}
fn uses_rect() -> u64 { let r = Rect(2); return area(r); }
fn uses_disc() -> u64 { let d = Disc(1); return area(d); }
fn dynamic(s:ro<dyn Area>) -> u64 = area(s);
fn plain() -> u64 { return 5; }
fn main() -> i32 {
  let r = Rect(1);
  let a = uses_rect();
  let b = uses_disc();
  let c = dynamic(r);
  if a + b + c + plain() != 14 { return 1; }
  return 0;
}
";

/// The id of an impl's member (`Area for Rect::area`), as the log prints it.
fn member_id(workspace: &Workspace, key: &str) -> String {
    let item = workspace.files()[0].members.iter().find(|m| m.key.to_string() == key).expect("a member").item;
    let debug = format!("{item:?}");
    let start = debug.find("Id(").expect("an id");
    debug[start..debug.find(')').expect("closed") + 1].to_string()
}

/// Editing one impl member's body re-checks that member alone: neither the other impl's member,
/// nor the functions that dispatch to it statically or through `dyn`, nor anything else.
#[test]
fn editing_one_impl_member_rechecks_that_member_only() {
    let mut workspace = workspace(DISPATCH);
    let log = executed(&mut workspace, |w| edit(w, "impl Area for Rect", "s.w * 2", "s.w + s.w"));
    assert!(ran(&log, "check_fn", &member_id(&workspace, "Area for Rect::area")), "{log:?}");
    assert!(!ran(&log, "check_fn", &member_id(&workspace, "Area for Disc::area")), "{log:?}");
    for other in ["uses_rect", "uses_disc", "dynamic", "plain", "main"] {
        assert!(!ran(&log, "check_fn", &id(&workspace, other)), "{other} re-ran: {log:?}");
    }
    // A member whose row grows (it now prints) still re-checks no dispatcher: rows join in the
    // whole-program pass, which runs again.
    let log = executed(&mut workspace, |w| {
        edit(w, "impl Area for Rect", "return s.w + s.w;", "println(s.w);\n    return s.w + s.w;")
    });
    assert!(ran(&log, "check_fn", &member_id(&workspace, "Area for Rect::area")), "{log:?}");
    for other in ["uses_rect", "uses_disc", "dynamic", "plain", "main"] {
        assert!(!ran(&log, "check_fn", &id(&workspace, other)), "{other} re-ran: {log:?}");
    }
    assert!(ran_any(&log, "effect_rows"), "the rows are joined again: {log:?}");
}

#[test]
fn editing_one_constant_rechecks_only_the_bodies_that_read_it() {
    let text = "const LIMIT:u32 = 10;\nconst WIDTH:u32 = 4;\n\nfn limited(x:u32) -> u32 {\n  return min(x, LIMIT);\n}\n\nfn widened(x:u32) -> u32 {\n  return x * WIDTH;\n}\n\nfn main() -> i32 {\n  if limited(3) + widened(1) != 7 { return 1; }\n  return 0;\n}\n";
    let mut workspace = workspace(text);
    let limited = id(&workspace, "limited");
    let widened = id(&workspace, "widened");
    // The value of WIDTH changes; LIMIT keeps its value, so `limited` is not checked again.
    let log = executed(&mut workspace, |w| edit(w, "const WIDTH", "= 4;", "= 5;"));
    assert!(ran(&log, "constant_value", &id(&workspace, "WIDTH")), "{log:?}");
    assert!(ran(&log, "check_fn", &widened), "the body that reads it is checked again: {log:?}");
    assert!(!ran(&log, "check_fn", &limited), "a body that reads another constant re-ran: {log:?}");
}

#[test]
fn an_impl_inserted_before_another_leaves_the_other_s_members_their_inputs() {
    let text = "trait Shape {\n  fn area(s:ro<Self>) -> u64;\n}\nstruct Sq { n:u64; }\nstruct Tri { b:u64; h:u64; }\nimpl Shape for Sq {\n  fn area(s:ro<Sq>) -> u64 { return s.n * s.n; }\n}\nfn main() -> i32 { return 0; }\n";
    let mut workspace =
        Workspace::with_execution_log(vec![SourceText { name: "main.cairn".into(), text: text.to_string() }]);
    let square =
        workspace.files()[0].members.iter().find(|m| m.key.to_string() == "Shape for Sq::area").expect("member").item;
    // A second impl of the same trait, written before the first.
    edit(
        &mut workspace,
        "impl Shape for Sq",
        "impl Shape for Sq",
        "impl Shape for Tri {\n  fn area(s:ro<Tri>) -> u64 { return s.b * s.h / 2; }\n}\nimpl Shape for Sq",
    );
    let members = &workspace.files()[0].members;
    let keys: Vec<String> = members.iter().map(|m| m.key.to_string()).collect();
    assert_eq!(keys, ["Shape::area", "Shape for Tri::area", "Shape for Sq::area"]);
    assert_eq!(members[2].item, square, "the first impl's member keeps its input");
}

const GENERIC: &str = "\
fn scale[T:numeric](x:T) -> T {
  return x * T(2);
}

fn a() -> u32 {
  return scale(u32(3));
}

fn b() -> f64 {
  return scale(1.5);
}

fn main() -> i32 {
  if a() != 6 || b() != 3.0 { return 1; }
  return 0;
}
";

fn instance_checks(log: &[String]) -> usize {
    log.iter().filter(|entry| entry.starts_with("check_generic_instance(")).count()
}

#[test]
fn a_new_instance_checks_that_instance_only() {
    let mut workspace = workspace(GENERIC);
    let log = executed(&mut workspace, |w| edit(w, "fn main(", "return 0;", "let c = scale(u16(4));\n  return 0;"));
    assert_eq!(instance_checks(&log), 1, "only scale[u16] is checked: {log:?}");
    assert!(ran(&log, "check_fn", &id(&workspace, "main")), "{log:?}");
    assert!(!ran(&log, "check_fn", &id(&workspace, "a")), "{log:?}");
    assert!(!ran(&log, "check_fn", &id(&workspace, "b")), "{log:?}");
}

#[test]
fn an_edit_that_keeps_a_call_s_instance_rechecks_no_instance() {
    let mut workspace = workspace(GENERIC);
    let log = executed(&mut workspace, |w| edit(w, "fn a(", "u32(3)", "u32(4)"));
    assert!(ran(&log, "check_fn", &id(&workspace, "a")), "{log:?}");
    assert_eq!(instance_checks(&log), 0, "scale[u32] and scale[f64] are kept: {log:?}");
}

#[test]
fn editing_a_template_rechecks_its_instances_and_no_caller() {
    let mut workspace = workspace(GENERIC);
    let log = executed(&mut workspace, |w| edit(w, "fn scale", "x * T(2)", "T(2) * x"));
    assert_eq!(instance_checks(&log), 2, "scale[u32] and scale[f64]: {log:?}");
    for caller in ["a", "b", "main"] {
        assert!(!ran(&log, "check_fn", &id(&workspace, caller)), "{caller} re-ran: {log:?}");
    }
    // The template's joined summary did not move: the whole-program pass is not run again.
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
}

#[test]
fn a_template_edit_that_refuses_an_instance_is_reported_incrementally() {
    let mut workspace = workspace(GENERIC);
    workspace.db().start_logging();
    edit(&mut workspace, "fn scale", "x * T(2)", "x & T(2)");
    let outcome = workspace.check();
    let refusal = outcome.refusal.expect("scale[f64] cannot take &");
    assert_eq!(refusal.first.code, "E-OPERATOR", "{refusal:?}");
    assert!(refusal.first.message.contains("scale[f64]"), "{refusal:?}");
}

#[test]
fn an_edit_inside_an_uninstantiated_template_keeps_its_refusal() {
    // The whole pass refuses `width` (never instantiated); an edit inside its body must not let
    // the fast path drop that refusal (found by the differential test over generic programs).
    let text = "fn width[N:nat]() -> usize {\n  return N + 1;\n}\n\nfn main() -> i32 {\n  return 0;\n}\n";
    let mut workspace = Workspace::new(vec![SourceText { name: "main.cairn".into(), text: text.to_string() }]);
    assert_eq!(workspace.check().refusal.expect("refused").first.code, "E-UNINSTANTIATED");
    edit(&mut workspace, "fn width", "N + 1", "N + 2");
    assert_eq!(workspace.check().refusal.expect("still refused").first.code, "E-UNINSTANTIATED");
}

const OWNERS: &str = "linear struct Permit { id:u32; }
extern \"getppid\" fn parent_pid() -> i32 effects(io);

fn grant(id:u32) -> Permit = Permit(id);
fn end(p:Permit) { let Permit(_) = p; }
fn parent() -> i32 { unsafe { return parent_pid(); } }

fn work(k:u32) -> u32 {
  let p = grant(k);
  defer end(p);
  let b = Buf[u32](4);
  return k + u32(len(b));
}

fn main() -> i32 {
  let r = work(2);
  let q = parent();
  if r != 6 || q < 0 { return 1; }
  return 0;
}
";

#[test]
fn owner_and_foreign_facts_do_not_tie_a_body_s_check_to_other_declarations_text() {
    let mut workspace = workspace(OWNERS);
    // A comment in a body: no check re-runs (whether a callee is foreign, or a record linear,
    // is a query of its own, unchanged by the edit).
    let log = executed(&mut workspace, |w| edit(w, "fn work(", "  defer end(p);", "  // settle it\n  defer end(p);"));
    assert!(!ran_any(&log, "check_fn"), "{log:?}");
    // An edit of the foreign declaration's effects re-checks the declaration (its row is its
    // check) and moves the rows, but re-checks no body that calls it.
    let extern_id = id(&workspace, "parent_pid");
    let log = executed(&mut workspace, |w| edit(w, "extern", "effects(io)", "effects(io, alloc)"));
    assert!(ran(&log, "check_fn", &extern_id), "{log:?}");
    assert_eq!(log.iter().filter(|e| e.starts_with("check_fn(")).count(), 1, "{log:?}");
    let facts = workspace.function_facts();
    let row = |name: &str| facts.iter().find(|f| &*f.name == name).and_then(|f| f.row.clone()).expect("a row");
    assert!(row("main").iter().any(|e| &**e == "alloc"), "the declared effect reaches main: {:?}", row("main"));
    assert!(row("main").iter().any(|e| &**e == "ffi:getppid"), "{:?}", row("main"));
}

const REGIONS: &str = "\
fn fill(n:usize, out:rw<u64>[n]) {
  parallel i in n { out[i] = u64(i) * 3; }
}
plan fill { grain 4096; }

fn apply(n:usize, out:rw<u32>[n], f:fn(u32) -> u32) {
  parallel i in n { out[i] = f(u32(i)); }
}

fn double(x:u32) -> u32 = x * 2;

fn total(n:usize, xs:ro<u64>[n]) -> u64 {
  let s = reduce + parallel i in n yield xs[i];
  return s;
}

fn main() -> i32 {
  stack out:u64[4] = zeroed;
  stack small:u32[4] = zeroed;
  fill(4, out);
  apply(4, small, double);
  if total(4, out) != 18 { return 1; }
  return 0;
}
";

#[test]
fn a_region_s_facts_and_plans_do_not_tie_bodies_together() {
    let mut workspace = workspace(REGIONS);
    let fill = id(&workspace, "fill");
    // An edit inside one region re-checks that body only; the other functions' regions, their
    // ids and the plan's schedule are not recomputed.
    let log = executed(&mut workspace, |w| edit(w, "fn fill(", "* 3", "* 5"));
    assert!(ran(&log, "check_fn", &fill), "{log:?}");
    assert_eq!(log.iter().filter(|e| e.starts_with("check_fn(")).count(), 1, "{log:?}");
    assert!(!ran_any(&log, "fn_regions"), "{log:?}");
    assert!(!ran_any(&log, "plan_def"), "{log:?}");
    // A comment inside a region re-runs no check.
    let log = executed(&mut workspace, |w| edit(w, "fn total(", "  let s", "  // pooled\n  let s"));
    assert!(!ran_any(&log, "check_fn"), "{log:?}");
    // An edit of the plan re-reads the plan and no body.
    let log = executed(&mut workspace, |w| edit(w, "plan fill", "grain 4096", "grain 2048"));
    assert!(ran_any(&log, "plan_def"), "{log:?}");
    assert!(!ran_any(&log, "check_fn"), "{log:?}");
    // A lane-safe callee changing its row is judged again with the rows (the lanes judge runs
    // beside the order audit), but no body is re-checked but the callee's.
    let double = id(&workspace, "double");
    let log = executed(&mut workspace, |w| edit(w, "fn double(", "x * 2", "x * 3"));
    assert!(ran(&log, "check_fn", &double), "{log:?}");
    assert_eq!(log.iter().filter(|e| e.starts_with("check_fn(")).count(), 1, "{log:?}");
}

#[test]
fn a_region_id_survives_edits_elsewhere_comments_and_reformatting() {
    let mut workspace = workspace(REGIONS);
    let ids = |w: &Workspace| -> Vec<String> {
        let item = w.files()[0].items.iter().find(|i| &*i.key.name == "fill").expect("fill").item;
        w.regions_of(item).iter().map(|r| r.id.to_string()).collect()
    };
    let before = ids(&workspace);
    assert_eq!(before.len(), 1);
    assert!(before[0].starts_with("fill@") && before[0].len() == "fill@".len() + 8, "{before:?}");
    edit(&mut workspace, "fn main(", "return 0;", "return 0 + 0;");
    edit(&mut workspace, "fn fill(", "parallel i in n { out[i]", "// lanes\n  parallel   i in n {\n    out[i]");
    assert!(workspace.check().refusal.is_none());
    assert_eq!(ids(&workspace), before, "comments and spacing keep the id");
    edit(&mut workspace, "fn fill(", "* 3", "* 4");
    assert!(workspace.check().refusal.is_none());
    assert_ne!(ids(&workspace), before, "a change of the region's text is a new region");
}

#[test]
fn a_library_module_no_longer_imported_is_unlinked() {
    let program = "import std.vec;\nfn main() -> i32 { return 0; }\n";
    let mut workspace = workspace(program);
    let linked = |w: &Workspace| w.files().iter().filter(|f| f.library).map(|f| f.name.clone()).collect::<Vec<_>>();
    // std.vec imports std.core: both are linked, in the order a fresh workspace finds them.
    assert_eq!(linked(&workspace), ["std/vec.cairn", "std/core.cairn"]);
    edit(&mut workspace, "import", "import std.vec;", "");
    assert!(workspace.check().refusal.is_none());
    assert!(linked(&workspace).is_empty(), "{:?}", linked(&workspace));
    edit(&mut workspace, "fn main", "fn main", "import std.text;\nfn main");
    assert!(workspace.check().refusal.is_none());
    let fresh =
        Workspace::new(vec![SourceText { name: "main.cairn".into(), text: workspace.files()[0].text().to_string() }]);
    assert_eq!(linked(&workspace), linked(&fresh));
}

const DERIVING: &str = "\
import std.core (Eq);

struct Pair { a:u32; b:u16; }
derive wire for Pair;
derive eq for Pair;

recipe sums for R {
  pub fn $R_sum(v:R) -> u64 = fold + each f in R { u64(v.$f) };
}
derive sums for Pair;

fn other(x:u32) -> u32 {
  return x + 1;
}

fn main() -> i32 {
  if wire_size_Pair() != 6 || Pair_sum(Pair(1, 2)) != 3 || !same(Pair(1, 2), Pair(1, 2)) { return 1; }
  return 0;
}
";

/// The declarations the derivations generated, by name.
fn generated(workspace: &Workspace) -> Vec<String> {
    let mut names: Vec<String> = workspace
        .files()
        .iter()
        .filter(|f| f.generated.is_some())
        .flat_map(|f| f.items.iter().map(|i| i.key.name.to_string()))
        .collect();
    names.sort();
    names
}

#[test]
fn a_body_edit_reruns_no_derivation_and_no_generated_body() {
    let mut workspace = workspace(DERIVING);
    assert_eq!(
        generated(&workspace),
        ["Pair_sum", "decode_Pair", "encode_Pair", "std.core.Eq for Pair", "wire_size_Pair"]
    );
    let other = id(&workspace, "other");
    let log = executed(&mut workspace, |w| edit(w, "fn other(", "x + 1", "x + 2"));
    assert!(ran(&log, "check_fn", &other), "{log:?}");
    assert_eq!(log.iter().filter(|e| e.starts_with("check_fn(")).count(), 1, "{log:?}");
    assert!(!ran_any(&log, "derive_expansion"), "{log:?}");
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
    // A declaration added elsewhere re-runs no expansion: a derivation reads its recipe, its
    // target and the names it uses through narrow lookups, never the whole scope.
    let log = executed(&mut workspace, |w| {
        edit(w, "fn main(", "fn main(", "fn unrelated() -> u32 { return 7; }\n\nfn main(")
    });
    assert!(!ran_any(&log, "derive_expansion"), "{log:?}");
    // A comment above a derivation changes its input, not what it generates: the expansion
    // re-runs and backdates, so no generated body is checked again.
    let log = executed(&mut workspace, |w| edit(w, "derive sums", "derive sums", "// per field\nderive sums"));
    assert!(ran_any(&log, "derive_expansion"), "{log:?}");
    assert!(!ran_any(&log, "check_fn"), "{log:?}");
}

#[test]
fn an_edit_of_the_target_record_regenerates_what_derives_from_it() {
    let mut workspace = workspace(DERIVING);
    let log = executed(&mut workspace, |w| {
        edit(w, "struct Pair", "b:u16; }", "b:u16; c:u8; }");
        edit(
            w,
            "fn main(",
            "wire_size_Pair() != 6 || Pair_sum(Pair(1, 2)) != 3 || !same(Pair(1, 2), Pair(1, 2))",
            "wire_size_Pair() != 7 || Pair_sum(Pair(1, 2, 3)) != 6 || !same(Pair(1, 2, 3), Pair(1, 2, 3))",
        );
    });
    assert_eq!(log.iter().filter(|e| e.starts_with("derive_expansion(")).count(), 3, "{log:?}");
    // The function the record does not reach is not checked again.
    let other = id(&workspace, "other");
    assert!(!ran(&log, "check_fn", &other), "{log:?}");
    let mut fresh =
        Workspace::new(vec![SourceText { name: "main.cairn".into(), text: workspace.files()[0].text().to_string() }]);
    assert!(fresh.check().refusal.is_none());
    assert_eq!(generated(&fresh), generated(&workspace));
    // Dropping a derivation removes what it generated.
    edit(&mut workspace, "derive sums", "derive sums for Pair;", "");
    edit(&mut workspace, "fn main(", " || Pair_sum(Pair(1, 2, 3)) != 6", "");
    assert!(workspace.check().refusal.is_none());
    assert_eq!(generated(&workspace), ["decode_Pair", "encode_Pair", "std.core.Eq for Pair", "wire_size_Pair"]);
}

const IMPLEMENTED: &str = "\
fn total(n:usize, xs:ro<u64>[n]) -> u64 {
  let mut h:u64 = 0;
  for i in 0..n { h = add_wrap(h, xs[i]); }
  return h;
}
fn total_by[K:nat](n:usize, xs:ro<u64>[n]) -> u64 implements total when n % K == 0 tune K in [2, 4] {
  let mut h:u64 = 0;
  for i in 0..n { h = add_wrap(h, xs[i]); }
  return h;
}
plan total use total_by[4];
fn user(n:usize, xs:ro<u64>[n]) -> u64 = total(n, xs);
fn main() -> i32 { return 0; }
";

#[test]
fn an_implementation_s_body_edit_rechecks_its_instances_only() {
    let mut workspace = workspace(IMPLEMENTED);
    // A literal in the implementation: its two tuned instances are checked again, and nothing
    // else — not the reference, not the reference's caller, not the whole-program pass.
    let log = executed(&mut workspace, |w| edit(w, "fn total_by", "let mut h:u64 = 0;", "let mut h:u64 = 1;"));
    let instances = log.iter().filter(|e| e.starts_with("check_generic_instance(")).count();
    assert_eq!(instances, 2, "total_by[2] and total_by[4]: {log:?}");
    for other in ["total", "user", "main"] {
        assert!(!ran(&log, "check_fn", &id(&workspace, other)), "{other} was re-checked: {log:?}");
    }
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
    // The reference's body: only it, and the implementation rules read nothing of its body.
    let log = executed(&mut workspace, |w| edit(w, "fn total(", "let mut h:u64 = 0;", "let mut h:u64 = 2;"));
    assert!(ran(&log, "check_fn", &id(&workspace, "total")), "{log:?}");
    assert_eq!(log.iter().filter(|e| e.starts_with("check_")).count(), 1, "{log:?}");
    assert!(!ran_any(&log, "implementation_def"), "{log:?}");
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
}

const DEVICE_PROGRAM: &str = "\
kernel fn at(n:usize, grid:ro<f32>[n]@device, i:usize) -> f32 = grid[i];

fn saxpy(n:usize, y:rw<f32>[n]@device, x:ro<f32>[n]@device) {
  parallel i in n { y[i] = 2.0 * at(n, x, i) + y[i]; }
}

fn main() -> i32 {
  let n:usize = 64;
  buffer hx:f32[n] = zeroed;
  buffer x:f32[n]@device = zeroed;
  buffer y:f32[n]@device = zeroed;
  let up = spawn transfer(x, hx);
  wait(up);
  saxpy(n, y, x);
  transfer(hx, y);
  return 0;
}
";

#[test]
fn editing_a_device_lane_rechecks_only_its_body() {
    let mut workspace = workspace(DEVICE_PROGRAM);
    let saxpy = id(&workspace, "saxpy");
    // A literal inside the device region: its function's check only; no row, no other body.
    let log = executed(&mut workspace, |w| edit(w, "fn saxpy(", "2.0 *", "3.0 *"));
    assert!(ran(&log, "check_fn", &saxpy), "{log:?}");
    for other in ["at", "main"] {
        let other = id(&workspace, other);
        assert!(log.iter().all(|entry| !entry.ends_with(&format!("({other})"))), "{other} was touched: {log:?}");
    }
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental, "after the region's edit");
    // The same inside the kernel: the kernel's check, not the region's caller.
    let at = id(&workspace, "at");
    let log = executed(&mut workspace, |w| edit(w, "kernel fn at(", "grid[i]", "grid[i] + 0.0"));
    assert!(ran(&log, "check_fn", &at), "{log:?}");
    let main = id(&workspace, "main");
    assert!(!ran(&log, "check_fn", &main), "main was rechecked: {log:?}");
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
}

#[test]
fn editing_an_expression_body_rechecks_only_it() {
    // `= expr;` bodies are reparsed alone like blocks (cairn_syntax's reparse), so an edit of one
    // takes the same path as an edit inside a block.
    let program = "fn k(x:u32) -> u32 = x + 1;\n\nfn j(x:u32) -> u32 = k(x) * 2;\n\nfn main() -> i32 {\n  if j(2) > 9 { return 1; }\n  return 0;\n}\n";
    let mut workspace = workspace(program);
    let k = id(&workspace, "k");
    let log = executed(&mut workspace, |w| edit(w, "fn k(", "x + 1", "x + 2"));
    assert!(ran(&log, "check_fn", &k), "{log:?}");
    for other in ["j", "main"] {
        let other = id(&workspace, other);
        assert!(log.iter().all(|entry| !entry.ends_with(&format!("({other})"))), "{other} was touched: {log:?}");
    }
    for query in PROGRAM_QUERIES {
        assert!(!ran_any(&log, query), "{query} re-ran: {log:?}");
    }
    assert_eq!(workspace.last_check_kind(), CheckKind::Incremental);
}
