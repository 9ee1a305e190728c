//! What the typed records of the edit host are built from: name-keyed objects, guard-site
//! counts, the `check` summary, and the one conversion of a record into the JSON map an
//! [`Answer`](super::Answer) carries (which named choices share).
//!
//! Invariant: a record's JSON keys come out in the order of its fields (serde_json keeps
//! insertion order in this workspace), so a record type *is* its documented key order. The
//! records themselves live beside the code that fills them (`packet`, `terms`, `refusal`,
//! `admission`, `expand`, `state`); what is here is shared by several of them.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

/// The JSON object of a record. A record type that does not serialize to an object is a bug of
/// this crate, answered with an empty object rather than a panic.
pub(crate) fn to_map<T: Serialize>(record: &T) -> Map<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

pub(super) use crate::named::Named;

/// A function's guard sites by kind (`check_sites`), in the checker's order of first
/// occurrence. Two counts are the same when they give every kind the same number, whatever
/// their order (as two JSON objects compare).
#[derive(Debug, Clone)]
pub(super) struct SiteCounts(Vec<(&'static str, u32)>);

impl SiteCounts {
    /// The sites of `item` in the workspace's current check.
    pub(super) fn of(workspace: &cairn_hir::Workspace, item: cairn_hir::Item) -> SiteCounts {
        SiteCounts(workspace.function_sites(item))
    }
}

impl PartialEq for SiteCounts {
    fn eq(&self, other: &SiteCounts) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|entry| other.0.contains(entry))
    }
}

impl Serialize for SiteCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_entries(serializer, &self.0)
    }
}

/// The answer of the MCP `check` tool for a typed program.
#[derive(Debug, Serialize)]
pub(super) struct CheckSummary {
    pub status: &'static str,
    pub functions: usize,
    pub library_functions: usize,
    pub cached: bool,
    pub formal_status: &'static str,
}

/// Entries as one JSON object, in their order.
fn serialize_entries<S: Serializer, K: Serialize, V: Serialize>(
    serializer: S,
    entries: &[(K, V)],
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(entries.len()))?;
    for (key, value) in entries {
        map.serialize_entry(key, value)?;
    }
    map.end()
}
