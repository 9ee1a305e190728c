//! `cairn.state/1` and `cairn.state-delta/1` (protocol §7.1–§7.2).
//!
//! A state is one deterministic object an agent can load instead of a transcript: the program's
//! own functions by module with their signatures and rows, its type declarations, the refusal
//! that stopped the check, and a digest over all of it. A delta lists only what moved between
//! two states; applying it to the older one reproduces the newer digest exactly, which
//! [`apply_delta`] checks.

use std::collections::{BTreeMap, BTreeSet};

use cairn_hir::StateView;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::canonical::digest;
use crate::edit::{ACCEPTANCE_BOUNDARY, Sources};

pub const STATE_PROTOCOL: &str = "cairn.state/1";
pub const DELTA_PROTOCOL: &str = "cairn.state-delta/1";
/// The top-level fields a delta carries whole when they differ, in this order.
const WHOLE_FIELDS: [&str; 7] = ["profile", "status", "source_sha256", "types", "diagnostics", "evidence", "regions"];
/// The fields of a state, in order (`regions` only when the program has a parallel region: a
/// program without one has the original's state exactly; docs/decisions.md).
const STATE_FIELDS: [&str; 9] =
    ["protocol", "profile", "status", "source_sha256", "modules", "types", "diagnostics", "evidence", "regions"];

/// Why a delta could not be computed or applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(pub String);

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The state of the program `sources` holds, as every transport answers it (`cairn state`, the
/// MCP `state` tool, a session's `state` request): [`state_record`] under this compiler's
/// [`profile`](crate::compiler::profile) and the digest of the combined source ([`Sources::sha256`]).
pub fn state_of(view: &StateView, sources: &Sources, with_file: bool) -> Map<String, Value> {
    state_record(view, &crate::compiler::profile(), &sources.sha256(), with_file)
}

/// The state of a program, sealed with its digest.
///
/// `profile` names the compiler; `source_sha256` is the digest of the combined source
/// (tools.md §2.2); `with_file` adds `file` to the diagnostic (a state read from disk).
pub fn state_record(view: &StateView, profile: &str, source_sha256: &str, with_file: bool) -> Map<String, Value> {
    let mut modules: Modules<'_> = BTreeMap::new();
    for function in view.functions.iter().filter(|f| !f.library) {
        let row = function.row.as_ref().map(|row| row.iter().map(|e| e.to_string()).collect());
        modules.entry(function.module.to_string()).or_default().insert(&function.name, (&function.text, row));
    }
    let state = State {
        protocol: STATE_PROTOCOL,
        profile,
        status: if view.typed { "typed" } else { "rejected" },
        source_sha256,
        modules,
        types: view.types_text(),
        diagnostics: view
            .first
            .iter()
            .map(|(diagnostic, line)| taught(diagnostic, line.as_deref(), with_file))
            .collect(),
        evidence: Vec::new(),
        regions: view
            .regions
            .iter()
            .map(|r| Region { id: &r.id, kind: r.kind, binder: &r.binder, count: &r.count })
            .collect(),
    };
    match serde_json::to_value(&state) {
        Ok(Value::Object(record)) => seal(record),
        _ => Map::new(),
    }
}

/// A state before its digest (protocol §7.1), fields in their documented order.
#[derive(Serialize)]
struct State<'a> {
    protocol: &'static str,
    profile: &'a str,
    status: &'static str,
    source_sha256: &'a str,
    /// The own functions by module and name, each `[signature, row]` (the row `null` where the
    /// check did not reach it).
    modules: Modules<'a>,
    types: String,
    /// The refusals that stopped the check, each a taught `cairn.diagnostic/2` record as
    /// `cairn_diagnostics` builds it.
    diagnostics: Vec<Map<String, Value>>,
    /// A session's admissions, which a host fills in ([`with_evidence`]); a program's own state
    /// has none.
    evidence: Vec<Value>,
    /// The parallel regions of the program's own functions (language §24), by stable id; the
    /// field is absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    regions: Vec<Region<'a>>,
}

/// One parallel region in a state: its stable id, kind, binder and count as written (no line:
/// a state does not move when text above a region does).
#[derive(Serialize)]
struct Region<'a> {
    id: &'a str,
    kind: &'static str,
    binder: &'a str,
    count: &'a str,
}

/// A state's functions by module, then by name: `(signature, row)`.
type Modules<'a> = BTreeMap<String, BTreeMap<&'a str, (&'a str, Option<Vec<String>>)>>;

/// A diagnostic as a host teaches it (protocol §4), for the state's `diagnostics`.
fn taught(diagnostic: &cairn_diagnostics::Diagnostic, line: Option<&str>, with_file: bool) -> Map<String, Value> {
    let mut record = cairn_diagnostics::record::diagnostic_record(diagnostic);
    // `shift_remove` keeps the order of the other keys (a plain remove swaps the last one in).
    let file = record.shift_remove("file");
    record.shift_remove("module");
    record.insert("automatic_edit".into(), Value::Bool(false));
    if diagnostic.line > 0
        && let Some(line) = line
    {
        let shown: String = line.chars().take(500).collect();
        record.insert("source_line".into(), Value::String(shown));
    }
    record.insert("acceptance_boundary".into(), Value::from(ACCEPTANCE_BOUNDARY));
    if with_file
        && diagnostic.line > 0
        && let Some(file) = file
    {
        record.insert("file".into(), file);
    }
    record
}

/// A state with its `evidence` (the admissions of a session), sealed again.
pub(crate) fn with_evidence(mut state: Map<String, Value>, evidence: Value) -> Map<String, Value> {
    state.insert("evidence".into(), evidence);
    seal(state)
}

/// Adds (or replaces) the digest over every other field, as the last key.
fn seal(mut record: Map<String, Value>) -> Map<String, Value> {
    record.shift_remove("digest");
    let sealed = digest(&Value::Object(record.clone()));
    record.insert("digest".into(), Value::String(sealed));
    record
}

fn require_state(value: &Map<String, Value>) -> Result<(), StateError> {
    match value.get("protocol").and_then(Value::as_str) {
        Some(STATE_PROTOCOL) => Ok(()),
        _ => Err(StateError("A delta runs between two cairn.state/1 objects.".into())),
    }
}

fn modules_of(state: &Map<String, Value>) -> Map<String, Value> {
    state.get("modules").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The delta from `before` to `after`.
pub fn delta(before: &Map<String, Value>, after: &Map<String, Value>) -> Result<Map<String, Value>, StateError> {
    require_state(before)?;
    require_state(after)?;
    let (old, new) = (modules_of(before), modules_of(after));
    let empty = Map::new();
    let mut modules: BTreeMap<&String, BTreeMap<&String, Value>> = BTreeMap::new();
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for module in names {
        let old_entries = old.get(module).and_then(Value::as_object).unwrap_or(&empty);
        let new_entries = new.get(module).and_then(Value::as_object).unwrap_or(&empty);
        let mut changed = BTreeMap::new();
        let keys: BTreeSet<&String> = old_entries.keys().chain(new_entries.keys()).collect();
        for key in keys {
            match (old_entries.get(key), new_entries.get(key)) {
                (Some(a), Some(b)) if a == b => {}
                (_, Some(b)) => {
                    changed.insert(key, b.clone());
                }
                (Some(_), None) => {
                    changed.insert(key, Value::Null);
                }
                (None, None) => {}
            }
        }
        if !changed.is_empty() {
            modules.insert(module, changed);
        }
    }
    let whole =
        |field: &str| (before.get(field) != after.get(field)).then(|| after.get(field).cloned().unwrap_or(Value::Null));
    let delta = Delta {
        protocol: DELTA_PROTOCOL,
        since: before.get("digest").cloned().unwrap_or(Value::Null),
        digest: after.get("digest").cloned().unwrap_or(Value::Null),
        modules,
        profile: whole("profile"),
        status: whole("status"),
        source_sha256: whole("source_sha256"),
        types: whole("types"),
        diagnostics: whole("diagnostics"),
        evidence: whole("evidence"),
        regions: whole("regions"),
    };
    match serde_json::to_value(&delta) {
        Ok(Value::Object(record)) => Ok(record),
        _ => Err(StateError("The delta could not be written as JSON.".into())),
    }
}

/// A delta (protocol §7.2): the states' digests, the functions that moved (`null` for one that
/// is gone), and each of [`WHOLE_FIELDS`] that differs, whole. The states are given as JSON (a
/// saved state is read back from disk), so what a delta carries is their JSON.
#[derive(Serialize)]
struct Delta<'a> {
    protocol: &'static str,
    since: Value,
    digest: Value,
    modules: BTreeMap<&'a String, BTreeMap<&'a String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_sha256: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    types: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnostics: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<Value>,
    /// `null` when the newer state has no regions.
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<Value>,
}

/// Applies a delta to the state it was computed from; the result's digest must be the delta's.
pub fn apply_delta(before: &Map<String, Value>, delta: &Map<String, Value>) -> Result<Map<String, Value>, StateError> {
    require_state(before)?;
    if delta.get("protocol").and_then(Value::as_str) != Some(DELTA_PROTOCOL) {
        return Err(StateError("Only a cairn.state-delta/1 object can be applied.".into()));
    }
    if delta.get("since") != before.get("digest") {
        return Err(StateError("The delta was not computed from this state (its `since` is another digest).".into()));
    }
    let mut state = before.clone();
    state.remove("digest");
    for field in WHOLE_FIELDS {
        match delta.get(field) {
            // An optional field the newer state lacks.
            Some(Value::Null) if field == "regions" => {
                state.remove(field);
            }
            Some(value) => {
                state.insert(field.into(), value.clone());
            }
            None => {}
        }
    }
    let mut modules = modules_of(&state);
    if let Some(changes) = delta.get("modules").and_then(Value::as_object) {
        for (module, entries) in changes {
            let mut current = modules.get(module).and_then(Value::as_object).cloned().unwrap_or_default();
            for (name, entry) in entries.as_object().into_iter().flatten() {
                if entry.is_null() {
                    current.remove(name);
                } else {
                    current.insert(name.clone(), entry.clone());
                }
            }
            let mut sorted: Vec<(String, Value)> = current.into_iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            if sorted.is_empty() {
                modules.remove(module);
            } else {
                modules.insert(module.clone(), Value::Object(sorted.into_iter().collect()));
            }
        }
    }
    let mut sorted: Vec<(String, Value)> = modules.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    state.insert("modules".into(), Value::Object(sorted.into_iter().collect()));
    // Keep the field order of a fresh state (modules sits before types).
    let mut ordered = Map::new();
    for key in STATE_FIELDS {
        if let Some(value) = state.remove(key) {
            ordered.insert(key.into(), value);
        }
    }
    ordered.extend(state);
    let sealed = seal(ordered);
    if sealed.get("digest") != delta.get("digest") {
        return Err(StateError("Applying the delta does not reproduce its digest.".into()));
    }
    Ok(sealed)
}

#[cfg(test)]
mod tests {
    use cairn_hir::{SourceText, Workspace};
    use serde_json::json;

    use super::*;

    fn state(text: &str) -> Map<String, Value> {
        let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.to_string() }]);
        let view = workspace.state_view(false);
        let source = crate::canonical::sha256_hex(text.as_bytes());
        state_record(&view, "test-profile", &source, true)
    }

    const PROGRAM: &str = "struct Pair { a:u64; b:u64; }\n\nfn step(x:u64) -> u64 {\n  return x + 1;\n}\n\nfn fill(n:usize, out:rw<u64>[n]) {\n  for i in 0..n {\n    out[i] = step(u64(i));\n  }\n}\n";

    /// Checked instances are listed (protocol §7.1) with their template's row; a template that
    /// nothing instantiates shows the row at its witnesses (tools.md §3.7), and `null` when no
    /// witness can be made — never an empty row.
    #[test]
    fn a_state_lists_instances_and_a_template_s_row_at_its_witnesses() {
        let state = state(
            "fn largest[T:integer](a:T, b:T) -> T { if a > b { return a; } return b; }\nfn make[T:affine](n:usize) -> usize { let b = Buf[T](n); return len(b); }\nfn use_it() -> u64 { let a = largest(u8(3), u8(4)); let b = largest(u64(1), u64(2)); return u64(a) + b; }\nmodule m;\npub fn scale[K:nat](x:u64) -> u64 = x * u64(K);\n",
        );
        let modules = &state["modules"][""];
        assert_eq!(modules["largest[u8]"], json!(["fn largest[u8](a:u8, b:u8) -> u8", []]), "{modules}");
        assert_eq!(modules["largest[u64]"], json!(["fn largest[u64](a:u64, b:u64) -> u64", []]), "{modules}");
        assert_eq!(modules["make"][1], json!(["alloc", "free", "trap", "zero_init"]), "{modules}");
        assert_eq!(state["modules"]["m"]["scale"][1], Value::Null, "{state:?}");
    }

    #[test]
    fn a_state_shows_signatures_rows_and_types() {
        let state = state(PROGRAM);
        assert_eq!(state["types"], "struct Pair { a:u64; b:u64; }");
        assert_eq!(state["modules"][""]["step"], json!(["fn step(x:u64) -> u64", ["trap"]]));
        assert_eq!(
            state["modules"][""]["fill"],
            json!(["fn fill(n:usize, out:rw<u64>[n]@host)", ["ffi_precondition", "trap", "write:out"]])
        );
        let keys: Vec<&str> = state.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["protocol", "profile", "status", "source_sha256", "modules", "types", "diagnostics", "evidence", "digest"]
        );
        let mut unsealed = state.clone();
        unsealed.remove("digest");
        assert_eq!(state["digest"], json!(digest(&Value::Object(unsealed))));
    }

    #[test]
    fn a_record_s_field_extents_and_lent_part_are_part_of_its_declaration() {
        // An agent reading the types learns that `b` is `n` long and that `W` lends `d[0..k]`.
        let state = state(
            "struct S { n:usize; b:Buf[u8][n]; }\nstruct W { d:Buf[u8]; k:usize; lends d[0..k]; }\nfn main() -> i32 { return 0; }\n",
        );
        assert_eq!(
            state["types"],
            "struct S { n:usize; b:Buf[u8][n]; }\nstruct W { d:Buf[u8]; k:usize; lends d[0..k]; }"
        );
    }

    #[test]
    fn a_state_shows_traits_impls_methods_and_templates() {
        let state = state(
            "trait Area { fn area(self:ro<Self>) -> u64; }\nstruct Sq { s:u32; }\nimpl Area for Sq { fn area(self:ro<Sq>) -> u64 = u64(self.s); }\nfn twice[T:integer](x:T) -> T = x + x;\nfn main() -> i32 {\n  let q = Sq(2);\n  if area(q) != 2 || twice(u8(2)) != 4 { return 1; }\n  return 0;\n}\n",
        );
        assert_eq!(
            state["types"],
            "struct Sq { s:u32; }\ntrait Area { fn area(self:ro<Self>) -> u64; }\nimpl Area for Sq"
        );
        // Protocol §7: a trait impl's member is named `Trait.Type.method`.
        assert_eq!(state["modules"][""]["Area.Sq.area"], json!(["fn area(self:ro<Sq>) -> u64", ["read:self", "trap"]]));
        assert_eq!(state["modules"][""]["twice"], json!(["fn twice[T:integer](x:T) -> T", ["trap"]]));
    }

    #[test]
    fn a_refused_state_keeps_written_signatures_with_unknown_rows() {
        let state = state(&PROGRAM.replace("return x + 1;", "return true;"));
        assert_eq!(state["status"], "rejected");
        assert_eq!(state["modules"][""]["step"], json!(["fn step(x:u64) -> u64", null]));
        assert_eq!(state["types"], "");
        let diagnostic = &state["diagnostics"][0];
        assert_eq!(diagnostic["code"], "E-TYPE-MISMATCH");
        assert_eq!(diagnostic["source_line"], "  return true;");
        assert_eq!(diagnostic["file"], "p.cairn");
        assert_eq!(diagnostic["automatic_edit"], false);
    }

    #[test]
    fn an_unparsable_program_has_no_modules() {
        let state = state("fn f() -> u64 { return 1 }\n");
        assert_eq!(state["modules"], json!({}));
        assert_eq!(state["diagnostics"][0]["code"], "E-PARSE");
    }

    #[test]
    fn a_delta_lists_what_moved_and_applying_it_reproduces_the_digest() {
        let before = state(PROGRAM);
        let cases = [
            PROGRAM.replace("return x + 1;", "return x + 2;"),
            PROGRAM.replace("    out[i] = step(u64(i));\n", "    out[i] = 7;\n    println(\"x\");\n"),
            PROGRAM.replace("fn fill", "fn filler"),
            PROGRAM.replace("return x + 1;", "return true;"),
            "module other;\npub fn only() -> u32 {\n  return 1;\n}\n".to_string(),
            PROGRAM.to_string(),
        ];
        for text in cases {
            let after = state(&text);
            let delta = delta(&before, &after).expect("a delta");
            assert_eq!(delta["since"], before["digest"]);
            let applied = apply_delta(&before, &delta).expect("the delta applies");
            assert_eq!(applied, after, "for {text}");
        }
    }

    #[test]
    fn a_body_edit_moves_only_the_source_digest_and_that_function() {
        let before = state(PROGRAM);
        let after = state(&PROGRAM.replace("return x + 1;", "return x + 2;"));
        let delta = delta(&before, &after).expect("a delta");
        let keys: Vec<&str> = delta.keys().map(String::as_str).collect();
        assert_eq!(keys, ["protocol", "since", "digest", "modules", "source_sha256"]);
        assert_eq!(delta["modules"], json!({}));
        let same = super::delta(&before, &before).expect("a delta");
        assert_eq!(same["since"], same["digest"]);
        assert_eq!(same.len(), 4);
    }

    #[test]
    fn a_delta_from_another_state_or_a_tampered_one_is_refused() {
        let before = state(PROGRAM);
        let after = state(&PROGRAM.replace("fn fill", "fn filler"));
        let mut delta = delta(&before, &after).expect("a delta");
        assert!(apply_delta(&after, &delta).is_err(), "since names another digest");
        delta.insert("types".into(), json!("struct X { }"));
        assert!(apply_delta(&before, &delta).is_err(), "the digest no longer matches");
        let mut not_a_state = before.clone();
        not_a_state.insert("protocol".into(), json!("cairn.other/1"));
        assert!(super::delta(&not_a_state, &after).is_err());
    }

    #[test]
    fn a_state_lists_regions_only_when_the_program_has_one() {
        let plain = state(PROGRAM);
        assert!(!plain.contains_key("regions"), "a program without a region has the original's fields");
        let parallel = PROGRAM.replace(
            "  for i in 0..n {\n    out[i] = step(u64(i));\n  }",
            "  parallel i in n { out[i] = u64(i) * 2; }",
        );
        let with = state(&parallel);
        let regions = with["regions"].as_array().expect("regions");
        assert_eq!(regions.len(), 1);
        let id = regions[0]["id"].as_str().expect("an id");
        assert!(id.starts_with("fill@") && id.len() == "fill@".len() + 8, "{id}");
        assert_eq!(regions[0]["kind"], "host");
        assert_eq!(regions[0]["binder"], "i");
        assert_eq!(regions[0]["count"], "n");
        let keys: Vec<&str> = with.keys().map(String::as_str).collect();
        assert_eq!(keys.last(), Some(&"digest"));
        assert_eq!(keys[keys.len() - 2], "regions");
        // Deltas carry the field whole, both ways, and reproduce the digests.
        for (before, after) in [(&plain, &with), (&with, &plain)] {
            let delta = delta(before, after).expect("a delta");
            assert!(delta.contains_key("regions"));
            assert_eq!(&apply_delta(before, &delta).expect("applies"), after);
        }
    }
}
