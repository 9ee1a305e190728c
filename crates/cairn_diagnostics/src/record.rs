//! The JSON records of tools.md §1.3–§1.4: `cairn.diagnostic/2` and the environment record.
//!
//! Key order is part of the contract (records are compared as text by some clients), so each
//! record is a type whose fields are its keys in order: header keys, rule details, placement,
//! card and hint, then tallies. serde_json keeps insertion order in this workspace, and a record
//! becomes a map through [`serde_json::to_value`], so a rule detail that repeats a key keeps the
//! key's first place, as inserting into a map would.
//! Serialisation refuses NaN and infinities by construction (serde_json writes them as null, and
//! no detail here is a float).

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::{DIAGNOSTIC_PROTOCOL, Diagnostic, Refusal, TRUST};

/// The code of every environment record.
pub const ENVIRONMENT_CODE: &str = "E-PROJECT-OR-ENVIRONMENT";

/// One diagnostic as a `cairn.diagnostic/2` record (no tallies).
#[derive(Debug, Serialize)]
pub struct DiagnosticRecord<'a> {
    protocol: &'static str,
    status: &'static str,
    code: &'a str,
    message: &'a str,
    line: u32,
    column: u32,
    trust: &'static str,
    /// The rule-specific details, in the order the rule gave them: open-ended by design (each
    /// rule names its own), so they are entries rather than fields.
    #[serde(flatten)]
    details: Details<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    module: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    card: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repair_hint: Option<&'a str>,
}

impl<'a> DiagnosticRecord<'a> {
    /// The record of `diagnostic`, borrowing its text.
    pub fn of(diagnostic: &'a Diagnostic) -> DiagnosticRecord<'a> {
        DiagnosticRecord {
            protocol: DIAGNOSTIC_PROTOCOL,
            status: "rejected",
            code: &diagnostic.code,
            message: &diagnostic.message,
            line: diagnostic.line,
            column: diagnostic.column,
            trust: TRUST,
            details: Details(&diagnostic.details),
            file: diagnostic.file.as_deref(),
            module: diagnostic.module.as_deref(),
            card: diagnostic.card(),
            repair_hint: diagnostic.repair_hint.as_deref(),
        }
    }
}

/// A refusal as one record: the first diagnostic with `further` and the tallies.
#[derive(Debug, Serialize)]
pub struct RefusalRecord<'a> {
    #[serde(flatten)]
    first: DiagnosticRecord<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    further: Vec<DiagnosticRecord<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    further_omitted: usize,
    #[serde(skip_serializing_if = "is_zero")]
    not_judged: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    further_stopped: Option<&'a str>,
}

impl<'a> RefusalRecord<'a> {
    /// The record of `refusal`, borrowing its diagnostics.
    pub fn of(refusal: &'a Refusal) -> RefusalRecord<'a> {
        RefusalRecord {
            first: DiagnosticRecord::of(&refusal.first),
            further: refusal.further.iter().map(DiagnosticRecord::of).collect(),
            further_omitted: refusal.further_omitted,
            not_judged: refusal.not_judged,
            further_stopped: refusal.further_stopped.as_deref(),
        }
    }
}

/// The environment record of tools.md §1.3: exactly `status`, `code`, `message` and `card`.
#[derive(Debug, Serialize)]
pub struct EnvironmentRecord<'a> {
    status: &'static str,
    code: &'static str,
    message: &'a str,
    card: &'static str,
}

impl<'a> EnvironmentRecord<'a> {
    /// The record saying what is missing or wrong.
    pub fn new(message: &'a str) -> EnvironmentRecord<'a> {
        EnvironmentRecord { status: "unknown", code: ENVIRONMENT_CODE, message, card: "commands" }
    }
}

/// One diagnostic as a `cairn.diagnostic/2` record (no tallies), as a JSON map.
pub fn diagnostic_record(diagnostic: &Diagnostic) -> Map<String, Value> {
    to_map(&DiagnosticRecord::of(diagnostic))
}

/// A refusal as one record ([`RefusalRecord`]), as a JSON map.
pub fn refusal_record(refusal: &Refusal) -> Map<String, Value> {
    to_map(&RefusalRecord::of(refusal))
}

/// The environment record ([`EnvironmentRecord`]), as a JSON map.
pub fn environment_record(message: &str) -> Map<String, Value> {
    to_map(&EnvironmentRecord::new(message))
}

/// Writes a record as the command line does: one compact line, or indented by two spaces when a
/// terminal asked for JSON.
pub fn to_json_text(record: &Map<String, Value>, pretty: bool) -> String {
    let value = Value::Object(record.clone());
    let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
    // Serialising a map of plain JSON values cannot fail.
    text.unwrap_or_else(|_| "{}".to_string())
}

/// A diagnostic's rule details as entries of the record's object.
#[derive(Debug)]
struct Details<'a>(&'a [(String, Value)]);

impl Serialize for Details<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The JSON object of a record. Every record here serializes to an object of plain values, so
/// the empty fallback is never taken.
fn to_map<T: Serialize>(record: &T) -> Map<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
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
