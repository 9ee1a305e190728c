//! The JSON records of tools.md §1.3–§1.4: `cairn.diagnostic/2` and the environment record.
//!
//! Key order is part of the contract (records are compared as text by some clients), so records
//! are built as ordered maps: header keys, rule details, placement, card and hint, then tallies.
//! Serialisation refuses NaN and infinities by construction (serde_json writes them as null, and
//! no detail here is a float).

use serde_json::{Map, Value, json};

use crate::{DIAGNOSTIC_PROTOCOL, Diagnostic, Refusal, TRUST};

/// The code of every environment record.
pub const ENVIRONMENT_CODE: &str = "E-PROJECT-OR-ENVIRONMENT";

/// One diagnostic as a `cairn.diagnostic/2` record (no tallies).
pub fn diagnostic_record(diagnostic: &Diagnostic) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("protocol".into(), json!(DIAGNOSTIC_PROTOCOL));
    record.insert("status".into(), json!("rejected"));
    record.insert("code".into(), json!(diagnostic.code));
    record.insert("message".into(), json!(diagnostic.message));
    record.insert("line".into(), json!(diagnostic.line));
    record.insert("column".into(), json!(diagnostic.column));
    record.insert("trust".into(), json!(TRUST));
    for (key, value) in &diagnostic.details {
        record.insert(key.clone(), value.clone());
    }
    if let Some(file) = &diagnostic.file {
        record.insert("file".into(), json!(file));
    }
    if let Some(module) = &diagnostic.module {
        record.insert("module".into(), json!(module));
    }
    if let Some(card) = diagnostic.card() {
        record.insert("card".into(), json!(card));
    }
    if let Some(hint) = &diagnostic.repair_hint {
        record.insert("repair_hint".into(), json!(hint));
    }
    record
}

/// A refusal as one record: the first diagnostic with `further` and the tallies.
pub fn refusal_record(refusal: &Refusal) -> Map<String, Value> {
    let mut record = diagnostic_record(&refusal.first);
    if !refusal.further.is_empty() {
        let further: Vec<Value> = refusal.further.iter().map(|d| Value::Object(diagnostic_record(d))).collect();
        record.insert("further".into(), Value::Array(further));
    }
    if refusal.further_omitted > 0 {
        record.insert("further_omitted".into(), json!(refusal.further_omitted));
    }
    if refusal.not_judged > 0 {
        record.insert("not_judged".into(), json!(refusal.not_judged));
    }
    if let Some(stopped) = &refusal.further_stopped {
        record.insert("further_stopped".into(), json!(stopped));
    }
    record
}

/// The environment record of tools.md §1.3: exactly `status`, `code`, `message` and `card`.
pub fn environment_record(message: &str) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("status".into(), json!("unknown"));
    record.insert("code".into(), json!(ENVIRONMENT_CODE));
    record.insert("message".into(), json!(message));
    record.insert("card".into(), json!("commands"));
    record
}

/// Writes a record as the command line does: one compact line, or indented by two spaces when a
/// terminal asked for JSON.
pub fn to_json_text(record: &Map<String, Value>, pretty: bool) -> String {
    let value = Value::Object(record.clone());
    let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
    // Serialising a map of plain JSON values cannot fail.
    text.unwrap_or_else(|_| "{}".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LineColumn;

    #[test]
    fn records_keep_the_specified_key_order() {
        let mut first = Diagnostic::new("E-PARSE", "Expected `;` here, found `}`.")
            .at(Some("src/a.cairn".into()), LineColumn { line: 3, column: 9 });
        first.repair_hint = Some("Write CAIRN.".into());
        let second = Diagnostic::new("E-LEX", "Unexpected character `?`.")
            .at(Some("src/a.cairn".into()), LineColumn { line: 7, column: 2 });
        let refusal = Refusal::from_diagnostics(vec![first, second]).expect("two diagnostics");
        insta::assert_snapshot!(to_json_text(&refusal_record(&refusal), false), @r#"{"protocol":"cairn.diagnostic/2","status":"rejected","code":"E-PARSE","message":"Expected `;` here, found `}`.","line":3,"column":9,"trust":"prototype-not-verified","file":"src/a.cairn","card":"base","repair_hint":"Write CAIRN.","further":[{"protocol":"cairn.diagnostic/2","status":"rejected","code":"E-LEX","message":"Unexpected character `?`.","line":7,"column":2,"trust":"prototype-not-verified","file":"src/a.cairn","card":"base"}]}"#);
    }

    #[test]
    fn the_environment_record_has_exactly_four_keys() {
        let record = environment_record("no cairn.toml in /tmp/x");
        let keys: Vec<&str> = record.keys().map(String::as_str).collect();
        assert_eq!(keys, ["status", "code", "message", "card"]);
    }
}
