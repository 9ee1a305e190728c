//! The candidate history's records (protocol §18): what was tried, validated and measured about a
//! function's candidates (its plans and implementations), each record tied to the five identity
//! parts it was made under, and judged `current` or `stale` by the parts that moved since.
//! Storage (the file and its lock) is `cairn_vfs::history`; this module makes, checks and judges
//! records and computes the identity parts.
//!
//! - `source`: `digest([as_written, variant])`, where `as_written` is the closure digest of the
//!   function as emitted with no plan and no selected implementation (the code digests `cairn diff`
//!   compares: locals, anchors and callees' names do not count), and the variant says what the
//!   candidate adds (plan items, an implementation's widened identity);
//! - `contract`: what the candidate must preserve (a validation: its policy);
//! - `target`: `host <arch>`;
//! - `compiler`: `digest([implementation hash])` — this build's identity with its runtime and std;
//! - `artifact`: never compared.

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol of every record.
pub const PROTOCOL: &str = "cairn.history/1";

/// The eight kinds and the detail keys each requires (protocol §18.4).
pub const KINDS: [(&str, &[&str]); 8] = [
    ("attempt", &[]),
    ("failure", &["stage", "why"]),
    ("validation", &["evidence"]),
    ("observation", &["by"]),
    ("measurement", &["procedure"]),
    ("profile", &["tool", "run"]),
    ("hypothesis", &["claim"]),
    ("experiment", &["run", "tests"]),
];

/// The five identity parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub source: String,
    pub contract: String,
    pub target: String,
    pub compiler: String,
    pub artifact: Option<String>,
}

/// One record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub protocol: String,
    pub kind: String,
    pub function: String,
    pub candidate: String,
    pub variant: Value,
    pub identity: Identity,
    pub detail: Map<String, Value>,
    pub id: String,
    pub at: String,
}

impl Record {
    /// A record, checked (protocol §18.2), with its id.
    pub fn new(
        kind: &str,
        function: &str,
        candidate: &str,
        variant: Value,
        identity: Identity,
        detail: Map<String, Value>,
        at: String,
    ) -> Result<Record, String> {
        let Some((_, required)) = KINDS.iter().find(|(k, _)| *k == kind) else {
            return Err(format!("{kind} is not a kind of record"));
        };
        if function.is_empty() || candidate.is_empty() {
            return Err("a record names its function and candidate".into());
        }
        for part in [&identity.source, &identity.contract, &identity.target, &identity.compiler] {
            if part.is_empty() {
                return Err("every identity part but artifact is a non-empty string".into());
            }
        }
        if let Some(missing) = required.iter().find(|key| !truthy(detail.get(**key))) {
            return Err(format!("a {kind} record's detail needs {missing}"));
        }
        let body = Body {
            protocol: PROTOCOL,
            kind,
            function,
            candidate,
            variant: &variant,
            identity: &identity,
            detail: &detail,
        };
        let id = history_digest(&serde_json::to_value(&body).unwrap_or_default())[..16].to_string();
        let record = Record {
            protocol: PROTOCOL.into(),
            kind: kind.into(),
            function: function.into(),
            candidate: candidate.into(),
            variant,
            identity,
            detail,
            id,
            at,
        };
        let line = serde_json::to_string(&record).unwrap_or_default();
        if line.len() > 64_000 {
            return Err("a record is at most 64,000 bytes".into());
        }
        Ok(record)
    }
}

/// What a record's id digests.
#[derive(Serialize)]
struct Body<'a> {
    protocol: &'a str,
    kind: &'a str,
    function: &'a str,
    candidate: &'a str,
    variant: &'a Value,
    identity: &'a Identity,
    detail: &'a Map<String, Value>,
}

fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Bool(b)) => *b,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// The history's digest variant (protocol §2.2): canonical JSON with non-ASCII escaped; a plain
/// string is hashed as its own bytes.
pub fn history_digest(value: &Value) -> String {
    if let Value::String(text) = value {
        return crate::canonical::sha256_hex(text.as_bytes());
    }
    let canonical = crate::canonical::canonical_json(value);
    let mut escaped = String::with_capacity(canonical.len());
    for c in canonical.chars() {
        if c.is_ascii() {
            escaped.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                escaped.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    crate::canonical::sha256_hex(escaped.as_bytes())
}

/// The closure digest of `item` as the accepted program of `workspace` emits it (protocol
/// §18.3): from the function, every function it calls transitively and what their lowering made
/// (lanes, closures), and the digest of `// <name>\n<canonical emission>\n` for each in name
/// order — the emission without locals' names and source anchors, so comments and renamed locals do
/// not move it.
pub fn as_written(workspace: &Workspace, item: Item) -> Option<String> {
    let lowered = crate::equiv::Lowered::closure(workspace, item)?;
    let mut functions: Vec<_> = lowered.functions.iter().collect();
    functions.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    functions.dedup_by(|a, b| a.symbol == b.symbol);
    let mut text = String::new();
    for function in functions {
        let mut stripped = crate::equiv::strip(function);
        stripped.name = std::sync::Arc::from("");
        text.push_str(&format!("// {}\n{stripped:?}\n", function.symbol));
    }
    Some(crate::canonical::sha256_hex(text.as_bytes()))
}

/// The `source` part of a candidate made from `as_written` with `variant`.
pub fn source(as_written: &str, variant: &Value) -> String {
    history_digest(&Value::Array(vec![Value::from(as_written), variant.clone()]))
}

/// The `compiler` part: this build.
pub fn compiler() -> String {
    history_digest(&Value::Array(vec![Value::from(crate::compiler::implementation_hash())]))
}

/// The `target` part of host runs.
pub fn host_target() -> String {
    format!("host {}", std::env::consts::ARCH)
}

/// The target part of a record whose runs emulated device target `device` on host threads.
pub fn emulation_target(device: &str) -> String {
    format!("host emulation of {device}")
}

/// A contract part from what a candidate must preserve.
pub fn contract(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => history_digest(other),
    }
}

/// An implementation's widened identity: its declared identity (both declarations as written)
/// and the closure digest of its code.
pub fn widened_identity(workspace: &Workspace, instance: cairn_hir::instance::Instance<'_>) -> Option<String> {
    let db = workspace.db();
    let declared = cairn_hir::implementations::identity(db, instance)?;
    let closure = if instance.is_monomorphic(db) { as_written(workspace, instance.item(db)) } else { None };
    Some(history_digest(&Value::Array(vec![Value::from(declared), closure.map(Value::from).unwrap_or(Value::Null)])))
}

/// The records of `function` split into those that hold now and, per moved part, how many do not.
pub struct Judged<'a> {
    pub current: Vec<&'a Record>,
    pub stale: BTreeMap<&'static str, usize>,
    pub stale_records: usize,
}

/// Judges `records` of `function` against its code now (`as_written`), the contracts and
/// targets that count (empty: any), and this build.
pub fn judged<'a>(
    records: &'a [Record],
    function: &str,
    as_written: &str,
    contracts: &[String],
    targets: &[String],
) -> Judged<'a> {
    let compiler = compiler();
    let mut out = Judged { current: Vec::new(), stale: BTreeMap::new(), stale_records: 0 };
    for record in records.iter().filter(|r| r.function == function) {
        let mut moved: Vec<&'static str> = Vec::new();
        if record.identity.source != source(as_written, &record.variant) {
            moved.push("source");
        }
        if record.identity.compiler != compiler {
            moved.push("compiler");
        }
        if !contracts.is_empty() && !contracts.contains(&record.identity.contract) {
            moved.push("contract");
        }
        if !targets.is_empty() && !targets.contains(&record.identity.target) {
            moved.push("target");
        }
        if moved.is_empty() {
            out.current.push(record);
        } else {
            out.stale_records += 1;
            for part in moved {
                *out.stale.entry(part).or_default() += 1;
            }
        }
    }
    out
}

/// The records among `values` (lines of the file) that are well formed; the rest are skipped.
pub fn records_of(values: Vec<Value>) -> Vec<Record> {
    values.into_iter().filter_map(|v| serde_json::from_value::<Record>(v).ok()).collect()
}

/// Now, as a record's `at` (`YYYY-MM-DDTHH:MM:SSZ`, UTC).
pub fn now() -> String {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity { source: "s".into(), contract: "c".into(), target: "t".into(), compiler: compiler(), artifact: None }
    }

    #[test]
    fn a_record_needs_its_kind_s_details_and_its_id_ignores_the_time() {
        let detail = |pairs: &[(&str, Value)]| pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        assert!(
            Record::new("measurement", "f", "plan f { lanes 2; }", Value::Null, identity(), detail(&[]), now())
                .is_err()
        );
        assert!(
            Record::new(
                "measurement",
                "f",
                "p",
                Value::Null,
                identity(),
                detail(&[("procedure", Value::from(""))]),
                now()
            )
            .is_err()
        );
        assert!(Record::new("guess", "f", "p", Value::Null, identity(), Map::new(), now()).is_err());
        let a = Record::new(
            "measurement",
            "f",
            "p",
            Value::Null,
            identity(),
            detail(&[("procedure", Value::from("median"))]),
            "2026-01-01T00:00:00Z".into(),
        )
        .expect("valid");
        let b = Record::new(
            "measurement",
            "f",
            "p",
            Value::Null,
            identity(),
            detail(&[("procedure", Value::from("median"))]),
            now(),
        )
        .expect("valid");
        assert_eq!(a.id, b.id);
        assert_eq!(a.id.len(), 16);
    }

    #[test]
    fn a_record_is_stale_by_the_parts_that_moved() {
        let variant = Value::from("v");
        let mut id = identity();
        id.source = source("old code", &variant);
        let record = Record::new("attempt", "f", "p", variant, id, Map::new(), now()).expect("valid");
        let records = vec![record];
        assert_eq!(judged(&records, "f", "old code", &[], &[]).current.len(), 1);
        let moved = judged(&records, "f", "new code", &["other".into()], &[]);
        assert!(moved.current.is_empty());
        assert_eq!(moved.stale.get("source"), Some(&1));
        assert_eq!(moved.stale.get("contract"), Some(&1));
        assert_eq!(moved.stale_records, 1);
    }

    #[test]
    fn the_time_is_a_utc_timestamp() {
        let at = now();
        assert_eq!(at.len(), 20);
        assert!(at.ends_with('Z') && at.as_bytes()[10] == b'T', "{at}");
    }

    #[test]
    fn the_history_digest_escapes_non_ascii_and_hashes_plain_strings_as_bytes() {
        assert_eq!(history_digest(&Value::from("abc")), crate::canonical::sha256_hex(b"abc"));
        let escaped = history_digest(&serde_json::json!({"a": "é"}));
        assert_eq!(escaped, crate::canonical::sha256_hex(br#"{"a":"\u00e9"}"#));
    }
}

/// `as_written` of `item` with no plan and no selected implementation: the closure digest of the
/// function in the program with every plan naming it (schedule or selection) removed, checked
/// again.
pub fn base_as_written(workspace: &Workspace, item: Item) -> Option<String> {
    let db = workspace.db();
    let full = cairn_hir::Resolver::new(db).full_name(item).to_string();
    let mut files: Vec<cairn_hir::SourceText> = Vec::new();
    let mut cut_any = false;
    for file in workspace.files().iter().filter(|f| !f.library && f.generated.is_none()) {
        let mut cuts: Vec<(usize, usize)> = file
            .items
            .iter()
            .filter(|e| e.key.kind == cairn_hir::ItemKind::Plan)
            .filter(|e| {
                cairn_hir::plans::plan_target(db, e.item) == Some(item)
                    || cairn_hir::implementations::selection_def(db, e.item)
                        .as_ref()
                        .is_some_and(|s| s.reference == Some(item))
            })
            .map(|e| {
                let start = usize::from(e.start);
                (start, start + usize::from(e.item.syntax(db).syntax_node().text_range().len()))
            })
            .collect();
        cuts.sort_unstable();
        let mut text = file.text().to_string();
        for &(start, end) in cuts.iter().rev() {
            text.replace_range(start..end, "");
            cut_any = true;
        }
        files.push(cairn_hir::SourceText { name: file.name.clone(), text });
    }
    if !cut_any {
        return as_written(workspace, item);
    }
    let mut base = Workspace::new(files);
    if base.check().refusal.is_some() {
        return None;
    }
    let item = base.function_named(&full)?;
    as_written(&base, item)
}
