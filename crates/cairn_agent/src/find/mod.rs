//! `cairn find` and the MCP tool `find` (tools.md §3.11, protocol §13): callable functions drawn
//! from the builtins, the packaged `std` modules and the program itself, found by free words or by
//! the types of the values an agent holds and the type it wants back, ranked, in a bounded answer.
//!
//! This module holds the query, the answer and its ranking. The rooms: `words.rs` matches free
//! words against stems, `entries.rs` draws the functions an answer may name and the lines their
//! hits show, `probes.rs` decides type queries with the checker, and `ceiling.rs` reads and applies
//! the `effects` filter.
//!
//! Invariants: the answer is deterministic (entries in declaration order, sorted by a total key);
//! the workspace an `Index` builds is private to one call, so nothing persists between queries; the
//! program is searched only when the checker accepts it as given (otherwise the answer says so
//! under `program`). Deliberately absent: generic functions (tier 1, which the checker refuses,
//! so none is ever a candidate of a type query), builtins of later tiers (the checker refuses
//! every call of them), and `main` and tests (nobody calls them).

#![expect(
    clippy::result_large_err,
    reason = "a refusal is the hosts' Diagnostic, returned once per query; boxing it would only change the API"
)]

mod ceiling;
mod entries;
mod probes;
#[cfg(test)]
mod tests;
mod words;

use std::collections::BTreeMap;

use cairn_diagnostics::Diagnostic;
use cairn_hir::Row;
use serde_json::{Map, Value, json};

use self::ceiling::{beyond, parse_ceiling, within};
use self::probes::Index;
use self::words::worded;
pub use self::words::{ALIASES, STOP_WORDS, stem};
use crate::edit::Sources;

/// Hits an answer lists when the query names no limit.
pub const DEFAULT_LIMIT: usize = 10;
/// The most hits one answer may list.
pub const MAX_LIMIT: usize = 200;
/// The most value types one query may give.
pub const MAX_TAKES: usize = 4;
/// The most probe functions one type query may write (the budget of generated functions that
/// `E-EXPANSION-LIMIT` states).
pub const MAX_PROBES: usize = 32_768;

/// One query, as the command line and the MCP server receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindQuery {
    /// Free words; each string may hold several.
    pub words: Vec<String>,
    /// The types of the values the caller holds, in any order.
    pub takes: Vec<String>,
    /// The type the caller wants back.
    pub returns: Option<String>,
    /// An effect ceiling the hits' rows must fit (`pure`, `effects(pure, alloc)`, `trap, alloc`).
    pub effects: Option<String>,
    /// How many hits to list (1..=200).
    pub limit: usize,
}

/// Answers a query over the builtins, the packaged library and, when given and accepted by the
/// checker, `program`'s own functions: `{"hits":[...],"more":n[,"program":...]}`.
///
/// `Err` is a coded refusal of the query: `E-REQUEST` for its shape, `E-PARSE` for a type that is
/// not one type, the checker's own code for a type it cannot resolve, `E-EXPANSION-LIMIT` for a
/// type query that would need more probe functions than [`MAX_PROBES`].
pub fn find(query: &FindQuery, program: Option<&Sources>) -> Result<Map<String, Value>, Diagnostic> {
    let typed = !query.takes.is_empty() || query.returns.is_some();
    let words = query.words.join(" ");
    let worded_query = !words.trim().is_empty();
    if !worded_query && !typed {
        return Err(request(
            "A find names words, or the types of the values you hold (--takes) and the type you want back (--returns).",
        ));
    }
    if query.takes.len() > MAX_TAKES {
        return Err(request(format!(
            "A find takes at most {MAX_TAKES} value types, and this one gives {}.",
            query.takes.len()
        )));
    }
    if !(1..=MAX_LIMIT).contains(&query.limit) {
        return Err(limit_refusal(&query.limit.to_string()));
    }
    let ceiling = query.effects.as_deref().map(parse_ceiling).transpose()?;
    let mut index = Index::new(program)?;
    let candidates = if typed {
        let given = index.given(&query.takes, query.returns.as_deref())?;
        index.judged(&given)?
    } else {
        (0..index.entries.len())
            .map(|entry| Candidate {
                entry,
                holder: false,
                left: 0,
                head: String::new(),
                arrangement: 0,
                row: None,
                own_row: true,
            })
            .collect()
    };
    let scores = worded_query.then(|| worded(index.entries.iter().map(|entry| &entry.words), &words));
    let named: Vec<String> = words.split_whitespace().map(str::to_string).collect();
    let mut best: BTreeMap<(u8, String), (RankKey, String)> = BTreeMap::new();
    for candidate in candidates {
        let Some(entry) = index.entries.get(candidate.entry) else { continue };
        let row = if candidate.own_row { entry.row.clone() } else { candidate.row.clone() };
        let (matched, weight) = match &scores {
            Some(scores) => match scores.get(&candidate.entry) {
                Some(score) => *score,
                None => continue,
            },
            None => (0, 0),
        };
        if let Some(ceiling) = &ceiling
            && !within(row.as_ref(), ceiling)
        {
            continue;
        }
        let near = entry.item.is_some() && index.home.contains(&entry.module);
        let order = match candidate.head.split_once('(') {
            Some((called, _)) => (
                !named.iter().any(|w| w == called),
                entry.names.iter().position(|n| *n == called).unwrap_or(usize::MAX),
                candidate.arrangement,
            ),
            None => (false, 0, 0),
        };
        let key = RankKey {
            holder: candidate.holder,
            left: candidate.left,
            matched: std::cmp::Reverse(matched),
            weight: std::cmp::Reverse(weight),
            inexact: !entry.names.iter().any(|n| named.iter().any(|w| w == n)),
            rank: entry.rank,
            far: !near,
            cost: (row.is_none(), beyond(row.as_ref()).len()),
            name: entry.name.clone(),
            order,
        };
        let line = entry.line(&candidate.head, row.as_ref());
        let slot = (entry.rank, entry.name.clone());
        match best.get(&slot) {
            Some((known, known_line)) if (known, known_line) <= (&key, &line) => {}
            _ => {
                best.insert(slot, (key, line));
            }
        }
    }
    let mut hits: Vec<(RankKey, String)> = best.into_values().collect();
    hits.sort();
    let more = hits.len().saturating_sub(query.limit);
    let mut record = Map::new();
    record.insert("hits".into(), json!(hits.into_iter().take(query.limit).map(|(_, line)| line).collect::<Vec<_>>()));
    record.insert("more".into(), json!(more));
    if let Some(code) = &index.refused {
        record.insert(
            "program".into(),
            json!(format!("refused with {code}: only the builtins and the library were searched")),
        );
    }
    Ok(record)
}

/// A limit as a transport received it (a JSON integer, a flag), checked: 1..=200, else the same
/// `E-REQUEST` that [`find`] gives.
pub fn limit_from(limit: i64) -> Result<usize, Diagnostic> {
    match usize::try_from(limit) {
        Ok(limit) if (1..=MAX_LIMIT).contains(&limit) => Ok(limit),
        _ => Err(limit_refusal(&limit.to_string())),
    }
}

/// The answer as a person at a terminal reads it: the hits, then how many more there are, a
/// nothing-fits line when there is no hit, and the `program` note.
pub fn human_text(record: &Map<String, Value>) -> String {
    let mut out = String::new();
    let hits = record.get("hits").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for hit in hits {
        out.push_str(hit.as_str().unwrap_or_default());
        out.push('\n');
    }
    let more = record.get("more").and_then(Value::as_u64).unwrap_or(0);
    if more > 0 {
        out.push_str(&format!("{more} more: --limit shows them.\n"));
    } else if hits.is_empty() {
        out.push_str("Nothing fits.\n");
    }
    if let Some(program) = record.get("program").and_then(Value::as_str) {
        out.push_str(program);
        out.push('\n');
    }
    out
}

fn limit_refusal(shown: &str) -> Diagnostic {
    request(format!("A limit is 1..{MAX_LIMIT} hits, not {shown}."))
}

fn request(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new("E-REQUEST", message)
}

/// The ranking key of tools.md §3.11, smallest first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RankKey {
    /// An exact result before a holder of it.
    holder: bool,
    /// Full calls before calls leaving parameters open.
    left: usize,
    matched: std::cmp::Reverse<usize>,
    weight: std::cmp::Reverse<u32>,
    /// An entry one of whose names is a query word, before entries that only contain it
    /// (`min` before `atomic_min`).
    inexact: bool,
    /// The program's own, then the library, then a builtin.
    rank: u8,
    /// A function of the module of a given or wanted type first.
    far: bool,
    /// Known rows before unknown ones, then fewer effects beyond `pure`.
    cost: (bool, usize),
    name: String,
    /// Among a builtin entry's calls: a name the words name, then the entry's own order, then the
    /// values as given before other orders.
    order: (bool, usize, usize),
}

/// A call the answer may list: its entry, how it fits the types, a builtin's call as written, and
/// the row that call adds (a declared function's own row when `own_row`).
#[derive(Debug, Clone)]
struct Candidate {
    entry: usize,
    holder: bool,
    left: usize,
    head: String,
    /// Which order of the values a builtin's call took (0: as given).
    arrangement: usize,
    row: Option<Row>,
    own_row: bool,
}
