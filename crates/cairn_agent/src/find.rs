//! `cairn find` and the MCP tool `find` (tools.md §3.11, protocol §13): callable functions drawn
//! from the builtins, the packaged `std` modules and the program itself, found by free words or by
//! the types of the values an agent holds and the type it wants back, ranked, in a bounded answer.
//!
//! Word queries compare stems: a query word matches a stem of an entry's name (weight 3), module
//! (2) or the first sentence of its comment (1) that it equals or, from three letters on, begins,
//! directly or through the alias table; only the entries matching the most words are listed.
//!
//! Type queries are decided by the checker, never by a type rule repeated here: each candidate call
//! (the values in every order, the extents a call may omit left out or not, each parameter left
//! open as a further probe parameter of its declared type) is written as a probe function in the
//! root module, in a probe file loaded before the program, and the probes are judged by
//! `check_fn` in one database after one edit of that file. The only thing decided before the
//! checker is a pre-filter that skips placing a scalar where a different scalar, a view, or a
//! record is declared (the checker has no implicit conversion, so it refuses all of those).
//!
//! Invariants: the answer is deterministic (entries in declaration order, sorted by a total key);
//! the workspace built here is private to one call, so nothing persists between queries; the
//! program is searched only when the checker accepts it as given (otherwise the answer says so
//! under `program`). Deliberately absent: generic functions (tier 1, which the checker refuses,
//! so none is ever a candidate of a type query), builtins of later tiers (the checker refuses
//! every call of them), and `main` and tests (nobody calls them).

#![expect(
    clippy::result_large_err,
    reason = "a refusal is the hosts' Diagnostic, returned once per query; boxing it would only change the API"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cairn_diagnostics::Diagnostic;
use cairn_hir::body::{ExtentRef, TypeArg, TypeRef};
use cairn_hir::effects::Row;
use cairn_hir::signature::Ceiling;
use cairn_hir::types::Ty;
use cairn_hir::{Item, ItemKind, SourceText, Workspace};
use cairn_syntax::ast::{self, AstNode};
use serde_json::{Map, Value, json};

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
    let scores = worded_query.then(|| worded(&index.entries, &words));
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

/// The stem a word is compared by: one suffix of `ing ed es s e` left out when three letters remain.
pub fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s", "e"] {
        if let Some(rest) = word.strip_suffix(suffix)
            && rest.len() >= 3
        {
            return rest;
        }
    }
    word
}

/// Words an agent brings from other languages, and the words of CAIRN's names and comments each
/// stands for (the query word itself always counts too).
pub const ALIASES: &[(&str, &str)] = &[
    ("integer", "i64 u64 usize decimal"),
    ("int", "i64 u64 usize"),
    ("number", "i64 u64 f64 integer float"),
    ("string", "text"),
    ("str", "text"),
    ("dict", "map"),
    ("dictionary", "map"),
    ("hashmap", "map"),
    ("thread", "spawn task group"),
    ("concurrent", "spawn task group"),
    ("parallel", "spawn group"),
    ("array", "buf vec view"),
    ("list", "vec"),
    ("vector", "vec"),
    ("slice", "view"),
    ("length", "len"),
    ("size", "len count"),
    ("minimum", "min"),
    ("smallest", "min"),
    ("maximum", "max"),
    ("largest", "max"),
    ("cast", "convert u64 i64 usize f64"),
    ("overflow", "wrap"),
    ("modular", "wrap"),
    ("square", "sqrt"),
    ("root", "sqrt"),
    ("absolute", "abs"),
    ("magnitude", "abs"),
    ("round", "floor ceil trunc"),
    ("stdout", "print println"),
    ("console", "print println"),
    ("stderr", "eprint eprintln"),
    ("output", "print write"),
    ("check", "assert"),
    ("verify", "assert"),
    ("optional", "option"),
    ("maybe", "option"),
    ("error", "result err fault"),
    ("exception", "result err fault"),
    ("shift", "shl shr"),
];

/// Words a query and a comment leave out.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "into", "is", "it", "its", "of",
    "on", "one", "or", "the", "this", "that", "to", "what", "which", "with",
];

/// The builtins this checker accepts, each group as one entry: the names it covers, how a call is
/// written, and what it does (its first sentence is what words match). A builtin's rule lives in
/// the checker (`cairn_hir::check::call`); a type query judges each name by a probe like any other.
const BUILTINS: &[(&str, &str, &str)] = &[
    ("len", "len(xs) -> usize", "The extent of a view, a local array or a string literal."),
    (
        "println print eprintln eprint",
        "println(a, ...)",
        "Writes integers, floats, bools and strings, then a newline (print leaves it out; eprint and eprintln write to standard error).",
    ),
    (
        "u8 u16 u32 u64 usize i8 i16 i32 i64 f32 f64",
        "u64(x) -> u64",
        "Converts a number to the named type, trapping when an integer does not fit.",
    ),
    (
        "add_wrap sub_wrap mul_wrap",
        "add_wrap(a:T, b:T) -> T",
        "Modular addition, subtraction or multiplication of two unsigned integers (plain + - * trap on overflow).",
    ),
    (
        "shl_wrap shr",
        "shl_wrap(x:T, k:usize) -> T",
        "Shifts an unsigned integer left or right by a count below its width.",
    ),
    ("min max", "min(a:T, b:T) -> T", "The lesser or the greater of two integers of one type."),
    (
        "sqrt floor ceil trunc",
        "sqrt(x:T) -> T",
        "The square root, floor, ceiling or truncation of an f32 or f64, as IEEE 754 defines them.",
    ),
    ("abs", "abs(x:T) -> T", "The magnitude of a signed integer or a float, trapping on the signed minimum."),
    ("to_bits", "to_bits(x:f64) -> u64", "The IEEE 754 bit pattern of a float: a u32 for an f32, a u64 for an f64."),
    (
        "assert assert_eq",
        "assert(cond, \"why\")",
        "Traps, saying where and why, unless the condition holds (assert_eq(a, b) compares two scalars).",
    ),
];

/// Effects a `pure` row may hold.
fn pure_ceiling() -> Ceiling {
    Ceiling { pure: true, effects: BTreeSet::new() }
}

/// Footprints a ceiling judgement leaves out: reads and writes of what the call is passed.
const FOOTPRINTS: &[&str] = &["read:", "write:", "lane:", "bound:"];

fn limit_refusal(shown: &str) -> Diagnostic {
    request(format!("A limit is 1..{MAX_LIMIT} hits, not {shown}."))
}

fn request(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new("E-REQUEST", message)
}

/// `pure`, `effects(pure, alloc)` or `trap, alloc` as a ceiling.
fn parse_ceiling(text: &str) -> Result<Ceiling, Diagnostic> {
    let mut ceiling = Ceiling { pure: false, effects: BTreeSet::new() };
    let mut named = 0;
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.'))) {
        match word {
            "" | "effects" => {}
            "pure" => {
                ceiling.pure = true;
                named += 1;
            }
            other => {
                ceiling.effects.insert(Arc::from(other));
                named += 1;
            }
        }
    }
    if named == 0 {
        return Err(request(format!(
            "The ceiling {text:?} names no effect: write pure, effects(pure, alloc) or a list such as trap, alloc."
        )));
    }
    Ok(ceiling)
}

/// Whether a row stays within a ceiling as `E-EFFECT-CEILING` judges it, less the footprints of
/// what the call is passed; an unknown row never does.
fn within(row: Option<&Row>, ceiling: &Ceiling) -> bool {
    row.is_some_and(|row| row.iter().all(|e| ceiling.admits(e) || FOOTPRINTS.iter().any(|p| e.starts_with(p))))
}

/// What a row holds beyond what `pure` admits, sorted.
fn beyond(row: Option<&Row>) -> Vec<Arc<str>> {
    let pure = pure_ceiling();
    row.map(|row| row.iter().filter(|e| !pure.admits(e)).cloned().collect()).unwrap_or_default()
}

/// The lower-case words of a text (`[a-z][a-z0-9]*`), without stop words and not yet stemmed.
fn raw_words(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut current = String::new();
    for c in lower.chars() {
        if c.is_ascii_lowercase() || (c.is_ascii_digit() && !current.is_empty()) {
            current.push(c);
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.retain(|w| !STOP_WORDS.contains(&w.as_str()));
    out
}

/// Each stem of each text, weighed as the heaviest text that holds it.
fn weighed(parts: &[(&str, u32)]) -> BTreeMap<String, u32> {
    let mut words: BTreeMap<String, u32> = BTreeMap::new();
    for (text, weight) in parts {
        for word in raw_words(text) {
            let slot = words.entry(stem(&word).to_string()).or_insert(*weight);
            *slot = (*slot).max(*weight);
        }
    }
    words
}

/// Whether an entry's stem matches one of the forms a query word stands for.
fn matches(term: &str, forms: &BTreeSet<String>) -> bool {
    forms.iter().any(|w| term == w || (w.len() >= 3 && term.starts_with(w.as_str())))
}

/// By entry index, (how many query words it matches, how much those matches weigh), for the
/// entries that match the most words. Each query word takes the heaviest stem that no earlier
/// word took, so one stem never counts twice.
fn worded(entries: &[Entry], words: &str) -> BTreeMap<usize, (usize, u32)> {
    let wanted: Vec<BTreeSet<String>> = raw_words(words)
        .into_iter()
        .map(|word| {
            let mut forms: BTreeSet<String> = BTreeSet::new();
            forms.insert(stem(&word).to_string());
            if let Some((_, more)) = ALIASES.iter().find(|(key, _)| *key == word) {
                forms.extend(more.split_whitespace().map(|w| stem(w).to_string()));
            }
            forms
        })
        .collect();
    let mut scores: BTreeMap<usize, (usize, u32)> = BTreeMap::new();
    for (index, entry) in entries.iter().enumerate() {
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        let mut weight = 0;
        for forms in &wanted {
            let found = entry
                .words
                .iter()
                .filter(|(term, _)| !taken.contains(term.as_str()) && matches(term, forms))
                .max_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)));
            if let Some((term, w)) = found {
                taken.insert(term.as_str());
                weight += w;
            }
        }
        if !taken.is_empty() {
            scores.insert(index, (taken.len(), weight));
        }
    }
    let most = scores.values().map(|(matched, _)| *matched).max().unwrap_or(0);
    scores.retain(|_, (matched, _)| *matched == most);
    scores
}

/// A type as a hit shows it: names without their modules, and host placement left out.
fn short(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_word = (c.is_ascii_alphabetic() || c == '_')
            && (i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_'));
        if starts_word {
            let mut end = i;
            while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                end += 1;
            }
            let qualifier = end + 1 < chars.len()
                && chars[end] == '.'
                && (chars[end + 1].is_ascii_alphabetic() || chars[end + 1] == '_');
            if !qualifier {
                out.extend(&chars[i..end]);
            }
            i = if qualifier { end + 1 } else { end };
            continue;
        }
        out.push(c);
        i += 1;
    }
    out.replace("@host", "")
}

/// The first sentence of a comment: up to the first `.`, `!` or `?` followed by a space.
fn first_sentence(comment: &str) -> &str {
    let bytes = comment.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(|n| n.is_ascii_whitespace()) {
            return &comment[..=i];
        }
    }
    comment
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

/// A function an answer may name; a builtin entry has no item and may cover several names.
#[derive(Debug, Clone)]
struct Entry {
    /// As a call names it in full (`weather.units.celsius_tenths`), or a builtin entry's first name.
    name: String,
    module: Arc<str>,
    /// The signature a hit shows.
    head: String,
    /// The first sentence of its comment.
    doc: String,
    /// `None`: unknown (a builtin's row belongs to a call).
    row: Option<Row>,
    /// 0 the program's own, 1 the packaged library, 2 a builtin.
    rank: u8,
    item: Option<Item>,
    /// Each stem and what a match of it weighs.
    words: BTreeMap<String, u32>,
    /// The builtins a builtin entry covers.
    names: Vec<&'static str>,
}

impl Entry {
    /// The hit line: the head (a builtin's call when a probe wrote one), the row beyond `pure`
    /// when known, and the first sentence of the comment.
    fn line(&self, head: &str, row: Option<&Row>) -> String {
        let mut out = if head.is_empty() { self.head.clone() } else { head.to_string() };
        if row.is_some() {
            out.push_str("  pure");
            let extra = beyond(row);
            if !extra.is_empty() {
                out.push_str(" + ");
                out.push_str(&extra.iter().map(|e| &**e).collect::<Vec<_>>().join(", "));
            }
        }
        if !self.doc.is_empty() {
            out.push_str("  // ");
            out.push_str(&self.doc);
        }
        out
    }
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

/// One value type of a query (or the wanted type), resolved in the root module.
#[derive(Debug, Clone)]
struct GivenValue {
    /// The type as a probe writes it (modules filled in, a named extent renamed to the probe's).
    text: String,
    /// The probe parameters that declare it: its extent (`e:usize`) when it names one, then it.
    params: Vec<String>,
    /// What a call passes: the parameter itself for a borrow, else the local it was moved into.
    argument: String,
    /// The parameter's name.
    value: String,
    ty: Ty,
    /// The type as the query wrote it, as a builtin's call shows it.
    written: String,
}

/// The types of a query and the probe text that declares them (kept first in the probe file).
#[derive(Debug, Clone)]
struct Given {
    takes: Vec<GivenValue>,
    returns: Option<GivenValue>,
    text: String,
    /// The statements that move each value into a local of the probe.
    moves: String,
}

/// One probe function: whose call it is, whether the call's type is still to be compared with the
/// wanted one (the `let _ =` form when a type is wanted), how many parameters the call leaves
/// open, and a builtin's call as a hit shows it.
#[derive(Debug, Clone)]
struct Probe {
    name: String,
    entry: usize,
    bound: bool,
    left: usize,
    head: String,
    arrangement: usize,
}

/// The candidates of one query: a workspace holding the probe file (first, in the root module),
/// the program when it was accepted, and a module importing every packaged library module
/// (last), with the entries drawn from them.
struct Index {
    workspace: Workspace,
    /// What every name this module writes into the probe file starts with; no program text holds it.
    prefix: String,
    entries: Vec<Entry>,
    /// The code that refused the given program, when it was refused.
    refused: Option<String>,
    /// Modules declaring a given or wanted type.
    home: BTreeSet<Arc<str>>,
}

impl Index {
    fn new(program: Option<&Sources>) -> Result<Index, Diagnostic> {
        let texts: Vec<&str> = program.map(|p| p.files.iter().map(|f| f.text.as_str()).collect()).unwrap_or_default();
        let prefix = unique_prefix(&texts);
        let probe_file = SourceText { name: format!("{prefix}_probes.cairn"), text: String::new() };
        let mut loader_text = format!("module {prefix}_library;\n");
        for module in cairn_hir::library::MODULES {
            loader_text.push_str(&format!("import {};\n", module.name));
        }
        let loader = SourceText { name: format!("{prefix}_library.cairn"), text: loader_text };
        let mut refused = None;
        if let Some(program) = program {
            let mut files = vec![probe_file.clone()];
            files.extend(program.files.iter().cloned());
            files.push(loader.clone());
            let mut workspace = Workspace::new(files);
            match workspace.check().refusal {
                Some(refusal) => refused = Some(refusal.first.code.clone()),
                None => {
                    let entries = entries_of(&workspace);
                    return Ok(Index { workspace, prefix, entries, refused, home: BTreeSet::new() });
                }
            }
        }
        let mut workspace = Workspace::new(vec![probe_file, loader]);
        if let Some(refusal) = workspace.check().refusal {
            return Err(Diagnostic::new(
                "E-INTERNAL",
                format!("The packaged library does not check ({}), so no answer is complete.", refusal.first.code),
            ));
        }
        let entries = entries_of(&workspace);
        Ok(Index { workspace, prefix, entries, refused, home: BTreeSet::new() })
    }

    /// Resolves the given and wanted types in the root module: each is written as the parameter
    /// of a probe whose signature the checker judges, so a type it cannot resolve is refused with
    /// its own code.
    fn given(&mut self, takes: &[String], returns: Option<&str>) -> Result<Given, Diagnostic> {
        let p = self.prefix.clone();
        let mut asked: Vec<(&str, String, String)> =
            takes.iter().enumerate().map(|(i, t)| (t.as_str(), format!("{p}_a{i}"), format!("{p}_e{i}"))).collect();
        if let Some(returns) = returns {
            asked.push((returns, format!("{p}_w"), format!("{p}_ew")));
        }
        let mut text = String::new();
        let mut declared: Vec<(String, Vec<String>, String)> = Vec::new();
        for (i, (written, value, extent)) in asked.iter().enumerate() {
            let ty = self.written_type(written)?;
            let (ty, extent) = rename_extent(&ty, extent);
            let type_text = cairn_hir::render::type_ref_text(&ty);
            let mut params: Vec<String> = extent.iter().map(|e| format!("{e}:usize")).collect();
            params.push(format!("{value}:{type_text}"));
            let probe = format!("fn {p}_t{i}({}) {{ }}\n", params.join(", "));
            if !parses_cleanly(&probe) {
                return Err(not_one_type(written));
            }
            text.push_str(&probe);
            declared.push((type_text, params, value.clone()));
        }
        self.workspace.set_file_text(0, text.clone());
        let items = self.probe_items();
        let db = self.workspace.db();
        let mut resolved: Vec<GivenValue> = Vec::new();
        for (i, (type_text, params, value)) in declared.into_iter().enumerate() {
            let written = asked.get(i).map_or("", |a| a.0);
            let Some(&item) = items.get(&format!("{p}_t{i}")) else { return Err(not_one_type(written)) };
            let signature = cairn_hir::signature::fn_signature(db, item);
            if let Some(error) = &signature.error {
                // The checker's message names the probe's parameters; the query knows them as
                // the value and its extent.
                let extent = asked.get(i).map_or("", |a| a.2.as_str());
                let message = error.message.replace(&value, "value").replace(extent, "n");
                return Err(Diagnostic::new(
                    error.code,
                    format!("No parameter of the root module can have the type {}: {message}", written.trim()),
                ));
            }
            let Some(ty) = signature.params.last().map(|param| param.ty.clone()) else {
                return Err(not_one_type(written));
            };
            // A value (not a borrow) is moved into a local the probe owns, so that a call may lend
            // it (`ro`/`rw`) as well as pass it.
            let by_value = !matches!(ty, Ty::View(_) | Ty::Borrow(..));
            let argument = if by_value { format!("{p}_x{i}") } else { value.clone() };
            resolved.push(GivenValue {
                text: type_text,
                params,
                argument,
                value,
                ty,
                written: written.trim().to_string(),
            });
        }
        let returns = if returns.is_some() { resolved.pop() } else { None };
        let moves: String = resolved
            .iter()
            .filter(|v| v.argument != v.value)
            .map(|v| format!("let mut {} = {}; ", v.argument, v.value))
            .collect();
        let params: Vec<String> = resolved.iter().flat_map(|v| v.params.iter().cloned()).collect();
        text.push_str(&format!("fn {p}_base({}) {{ {moves}}}\n", params.join(", ")));
        let scope = cairn_hir::scope::scope(db);
        for value in resolved.iter().chain(returns.iter()) {
            if let Some(item) = adt_item(&value.ty) {
                self.home.insert(scope.module_of(item));
            }
        }
        Ok(Given { takes: resolved, returns, text, moves })
    }

    /// A written type, parsed as exactly one type, its names qualified where the root module does
    /// not reach them and exactly one module declares a record or enum so named.
    fn written_type(&self, written: &str) -> Result<TypeRef, Diagnostic> {
        let trimmed = written.trim();
        if trimmed.is_empty() {
            return Err(not_one_type(written));
        }
        let probe = format!("fn t(v:{trimmed}) {{ }}\n");
        let parse = cairn_syntax::parse(&probe);
        if !parse.errors().is_empty() {
            return Err(not_one_type(written));
        }
        let root = parse.syntax_node();
        let declarations: Vec<cairn_syntax::SyntaxNode> = root.children().collect();
        let [declaration] = declarations.as_slice() else { return Err(not_one_type(written)) };
        let Some(function) = ast::Fn::cast(declaration.clone()) else { return Err(not_one_type(written)) };
        let params: Vec<ast::Param> = function.param_list().map(|l| l.params().collect()).unwrap_or_default();
        let [param] = params.as_slice() else { return Err(not_one_type(written)) };
        let Some(ty) = param.ty() else { return Err(not_one_type(written)) };
        if ty.syntax().text().to_string().trim() != trimmed {
            return Err(not_one_type(written));
        }
        Ok(self.qualified(&cairn_hir::body::lower_type(&ty)))
    }

    fn qualified(&self, ty: &TypeRef) -> TypeRef {
        match ty {
            TypeRef::Path { path, args } => {
                let args: Arc<[TypeArg]> = args
                    .iter()
                    .map(|arg| match arg {
                        TypeArg::Type(t) => TypeArg::Type(self.qualified(t)),
                        TypeArg::Nat(n) => TypeArg::Nat(n.clone()),
                    })
                    .collect();
                TypeRef::Path { path: self.qualified_path(path), args }
            }
            TypeRef::Borrow { rw, inner, extent, place } => TypeRef::Borrow {
                rw: *rw,
                inner: Arc::new(self.qualified(inner)),
                extent: extent.clone(),
                place: place.clone(),
            },
            other => other.clone(),
        }
    }

    /// `path` as written when the root module reaches a record or enum by it (or it names a
    /// scalar), else the full name of the one record or enum so named, else as written (the
    /// checker then refuses it with its own code).
    fn qualified_path(&self, path: &Arc<[Arc<str>]>) -> Arc<[Arc<str>]> {
        let joined = path.iter().map(|s| &**s).collect::<Vec<_>>().join(".");
        if Ty::scalar_named(&joined).is_some() {
            return path.clone();
        }
        let scope = cairn_hir::scope::scope(self.workspace.db());
        let is_type = |kind: ItemKind| matches!(kind, ItemKind::Struct | ItemKind::Enum);
        if let cairn_hir::scope::Lookup::Found(_) = scope.resolve_path("", path, is_type) {
            return path.clone();
        }
        let found: Vec<&Arc<str>> = scope
            .by_full_name
            .iter()
            .filter(|(name, decls)| {
                name.rsplit('.').next() == Some(joined.as_str()) && decls.iter().any(|d| is_type(d.kind))
            })
            .map(|(name, _)| name)
            .collect();
        match found.as_slice() {
            [one] => one.split('.').map(Arc::from).collect(),
            _ => path.clone(),
        }
    }

    /// The probe file's functions by name.
    fn probe_items(&self) -> BTreeMap<String, Item> {
        let Some(file) = self.workspace.files().first() else { return BTreeMap::new() };
        file.items.iter().filter(|i| i.key.kind == ItemKind::Fn).map(|i| (i.key.name.to_string(), i.item)).collect()
    }

    /// Writes every candidate call as a probe, judges them all in one database (one edit of the
    /// probe file), and returns the calls the checker accepts.
    fn judged(&mut self, given: &Given) -> Result<Vec<Candidate>, Diagnostic> {
        let mut writer = ProbeWriter {
            prefix: self.prefix.clone(),
            take_params: given.takes.iter().flat_map(|v| v.params.iter().cloned()).collect(),
            moves: given.moves.clone(),
            returns: given.returns.as_ref().map(|r| r.text.clone()),
            text: given.text.clone(),
            probes: Vec::new(),
        };
        let db = self.workspace.db();
        let scope = cairn_hir::scope::scope(db);
        let take_types: Vec<&Ty> = given.takes.iter().map(|v| &v.ty).collect();
        for (index, entry) in self.entries.iter().enumerate() {
            match entry.item {
                Some(item) => {
                    // A function the root module cannot name is refused by the checker at every
                    // call (tools.md §3.11); no probe is written for it.
                    if !scope.visible_from(item, "") {
                        continue;
                    }
                    let signature = cairn_hir::signature::fn_signature(db, item);
                    if signature.error.is_some() || signature.test {
                        continue;
                    }
                    let all: Vec<usize> = (0..signature.params.len()).collect();
                    let mut variants = vec![all.clone()];
                    if !signature.extent_params.is_empty() {
                        variants.push(all.into_iter().filter(|i| !signature.extent_params.contains(i)).collect());
                    }
                    let void = signature.ret == Ty::Void;
                    for listed in variants {
                        let slots: Vec<&Ty> =
                            listed.iter().filter_map(|&i| signature.params.get(i)).map(|p| &p.ty).collect();
                        for placement in placements(&slots, &take_types) {
                            let Some((params, args)) = writer.open_parameters(db, &slots, &placement, &given.takes)
                            else {
                                continue;
                            };
                            let call = format!("{}({})", entry.name, args.join(", "));
                            let left = slots.len() - placement.len();
                            writer.add(index, &params, &call, (left, 0), Some(void), "")?;
                        }
                    }
                }
                None => {
                    // A builtin is called with exactly the values given, in every order.
                    if given.takes.is_empty() {
                        continue;
                    }
                    for (arrangement, order) in permutations(given.takes.len()).into_iter().enumerate() {
                        let args: Vec<&str> =
                            order.iter().filter_map(|&i| given.takes.get(i)).map(|v| v.argument.as_str()).collect();
                        let shown: Vec<String> =
                            order.iter().filter_map(|&i| given.takes.get(i)).map(|v| short(&v.written)).collect();
                        for name in &entry.names {
                            let call = format!("{name}({})", args.join(", "));
                            let head = format!("{name}({})", shown.join(", "));
                            writer.add(index, &[], &call, (0, arrangement), None, &head)?;
                        }
                    }
                }
            }
        }
        let wanted = given.returns.as_ref().and_then(|r| probe_type(db, &r.ty, Some("_")));
        let ProbeWriter { text, probes, prefix, .. } = writer;
        self.workspace.set_file_text(0, text);
        let items = self.probe_items();
        let db = self.workspace.db();
        let base_row: Row = items
            .get(&format!("{prefix}_base"))
            .map(|&item| cairn_hir::check::check_fn(db, item).local_row.clone())
            .unwrap_or_default();
        let mut out = Vec::new();
        for probe in probes {
            let Some(&item) = items.get(&probe.name) else { continue };
            let Some(entry) = self.entries.get(probe.entry) else { continue };
            if cairn_hir::signature::fn_signature(db, item).error.is_some() {
                continue;
            }
            let check = cairn_hir::check::check_fn(db, item);
            // A probe refused only because it drops a linear value it was handed still fits: the
            // call checked, and the drop is the probe's.
            if check.error.as_ref().is_some_and(|e| e.code != "E-LINEAR-LEAK") {
                continue;
            }
            let mut holder = false;
            if probe.bound {
                let body = cairn_hir::body::fn_body(db, item);
                let init = body.root.last().and_then(|&stmt| match body.stmt(stmt) {
                    cairn_hir::body::Stmt::Let { init, .. } => Some(*init),
                    _ => None,
                });
                let Some(ty) = init.and_then(|init| check.expr_types.get(init.0 as usize)) else { continue };
                let Some(wanted) = &wanted else { continue };
                if probe_type(db, ty.value(), Some("_")).as_ref() == Some(wanted) {
                    holder = false;
                } else if holds(db, ty.value(), wanted) {
                    holder = true;
                } else {
                    continue;
                }
            }
            // A builtin's row belongs to the call: what the probe performs beyond the base probe,
            // less the footprints of the values it is passed.
            let own_row = entry.item.is_some();
            let row = (!own_row && check.error.is_none()).then(|| {
                check
                    .local_row
                    .iter()
                    .filter(|e| !base_row.contains(*e) && !e.starts_with("read:") && !e.starts_with("write:"))
                    .cloned()
                    .collect()
            });
            out.push(Candidate {
                entry: probe.entry,
                holder,
                left: probe.left,
                head: probe.head,
                arrangement: probe.arrangement,
                row,
                own_row,
            });
        }
        Ok(out)
    }
}

/// Writes probe functions into the probe file's text.
struct ProbeWriter {
    prefix: String,
    /// The parameters declaring the given values, first in every probe.
    take_params: Vec<String>,
    moves: String,
    /// The wanted type as a probe writes it.
    returns: Option<String>,
    text: String,
    probes: Vec<Probe>,
}

impl ProbeWriter {
    /// The probe parameters and call arguments of one placement: a placed slot gets its value,
    /// every other slot a further parameter of its declared type (a view with its own extent
    /// parameter). `None` when a declared type cannot be written from the root module.
    fn open_parameters(
        &self,
        db: &dyn cairn_hir::Db,
        slots: &[&Ty],
        placement: &[usize],
        takes: &[GivenValue],
    ) -> Option<(Vec<String>, Vec<String>)> {
        let p = &self.prefix;
        let mut params = Vec::new();
        let mut args = Vec::new();
        for (slot, ty) in slots.iter().enumerate() {
            if let Some(take) = placement.iter().position(|&s| s == slot) {
                args.push(takes.get(take)?.argument.clone());
                continue;
            }
            let extent = format!("{p}_m{slot}");
            let text = probe_type(db, ty, Some(&extent))?;
            if ty.as_view().is_some_and(|v| !matches!(v.extent, cairn_hir::types::Extent::Literal(_))) {
                params.push(format!("{extent}:usize"));
            }
            params.push(format!("{p}_p{slot}:{text}"));
            args.push(format!("{p}_p{slot}"));
        }
        Some((params, args))
    }

    /// A probe of each form the query asks for: the call returned as the wanted type (when one
    /// is wanted), the call bound to `_` (whose type may hold the wanted one, or any type when
    /// none is wanted), or the call as a statement. `void` is `None` for a builtin, whose result
    /// type only its rule knows: it gets every form.
    fn add(
        &mut self,
        entry: usize,
        params: &[String],
        call: &str,
        (left, arrangement): (usize, usize),
        void: Option<bool>,
        head: &str,
    ) -> Result<(), Diagnostic> {
        let mut forms: Vec<(String, bool, bool)> = Vec::new();
        if self.returns.is_some() {
            forms.push((format!("return {call};"), false, true));
        } else if void != Some(false) {
            forms.push((format!("{call};"), false, false));
        }
        if void != Some(true) {
            forms.push((format!("let _ = {call};"), self.returns.is_some(), false));
        }
        for (body, bound, returning) in forms {
            if self.probes.len() >= MAX_PROBES {
                return Err(Diagnostic::new(
                    "E-EXPANSION-LIMIT",
                    format!(
                        "This type query needs more than {MAX_PROBES} candidate calls: give fewer or more specific types, or ask with words."
                    ),
                ));
            }
            let name = format!("{}_{}", self.prefix, self.probes.len() + 1);
            let mut all = self.take_params.clone();
            all.extend(params.iter().cloned());
            let result = match (&self.returns, returning) {
                (Some(wanted), true) => format!(" -> {wanted}"),
                _ => String::new(),
            };
            self.text.push_str(&format!("fn {name}({}){result} {{ {}{body} }}\n", all.join(", "), self.moves));
            self.probes.push(Probe { name, entry, bound, left, head: head.to_string(), arrangement });
        }
        Ok(())
    }
}

/// A prefix that no program text holds, for every name the probe file declares.
fn unique_prefix(texts: &[&str]) -> String {
    let mut prefix = "cairn_find".to_string();
    let mut n = 0u32;
    while texts.iter().any(|t| t.contains(prefix.as_str())) {
        n += 1;
        prefix = format!("cairn_find{n}");
    }
    prefix
}

/// Every function an answer may name, in declaration order (the program's, then the library's),
/// then the builtin entries. Left out: the probe file and the library loader, `main`, tests, and
/// library functions that are not `pub`.
fn entries_of(workspace: &Workspace) -> Vec<Entry> {
    let db = workspace.db();
    let scope = cairn_hir::scope::scope(db);
    let rows = workspace.last_rows();
    let loader = workspace.own_file_count().saturating_sub(1);
    let mut entries = Vec::new();
    for (index, file) in workspace.files().iter().enumerate() {
        if index == 0 || (!file.library && index == loader) {
            continue;
        }
        for declared in file.items.iter().filter(|i| i.key.kind == ItemKind::Fn) {
            let item = declared.item;
            let public = scope.info(item).is_some_and(|i| i.public);
            if &*declared.key.name == "main" || (file.library && !public) {
                continue;
            }
            let name = scope.full_name(item).to_string();
            let start = usize::from(declared.start + first_token(db, item));
            let comment = cairn_hir::render::comment_above(&file.text, start);
            let doc = first_sentence(&comment).to_string();
            let module = declared.key.module.clone();
            let words = weighed(&[(&doc, 1), (&module, 2), (&declared.key.name, 3)]);
            entries.push(Entry {
                head: head_of(db, item, &declared.key.name, &name),
                name,
                module,
                doc,
                row: rows.as_ref().and_then(|r| r.row(item).cloned()),
                rank: if file.library { 1 } else { 0 },
                item: Some(item),
                words,
                names: Vec::new(),
            });
        }
    }
    for (names, usage, doc) in BUILTINS {
        let names: Vec<&'static str> = names.split_whitespace().collect();
        let shown_names = names.join(" ").replace('_', " ");
        entries.push(Entry {
            name: names.first().copied().unwrap_or_default().to_string(),
            module: Arc::from(""),
            head: usage.to_string(),
            doc: first_sentence(doc).to_string(),
            row: None,
            rank: 2,
            item: None,
            words: weighed(&[(doc, 1), (&shown_names, 3)]),
            names,
        });
    }
    entries
}

/// Where a declaration's first token starts, relative to the declaration (its leading comment is
/// trivia inside it).
fn first_token(db: &dyn cairn_hir::Db, item: Item) -> cairn_syntax::TextSize {
    cairn_syntax::first_significant_token(&item.syntax(db).syntax_node())
        .map_or(cairn_syntax::TextSize::from(0), |t| t.text_range().start())
}

/// The signature a hit shows: the qualified name, the parameters and the result as the checker
/// resolved them, module prefixes and `@host` left out, the declared ceiling left out (the row
/// follows the head).
fn head_of(db: &dyn cairn_hir::Db, item: Item, local: &str, full: &str) -> String {
    let text = cairn_hir::render::signature_text(db, item, true);
    let mut text = text.strip_prefix("fn ").unwrap_or(&text).to_string();
    if cairn_hir::signature::fn_signature(db, item).ceiling.is_some() {
        if let Some(cut) = text.rfind(" effects(") {
            text.truncate(cut);
        } else if let Some(rest) = text.strip_suffix(" pure") {
            text = rest.to_string();
        }
    }
    let rest = text.strip_prefix(local).unwrap_or(&text);
    format!("{full}{}", short(rest))
}

/// A type reference with a named view extent renamed to `extent`, and the extent parameter the
/// probe then declares.
fn rename_extent(ty: &TypeRef, extent: &str) -> (TypeRef, Option<String>) {
    match ty {
        TypeRef::Borrow { rw, inner, extent: Some(ExtentRef::Name(_)), place } => (
            TypeRef::Borrow {
                rw: *rw,
                inner: inner.clone(),
                extent: Some(ExtentRef::Name(Arc::from(extent))),
                place: place.clone(),
            },
            Some(extent.to_string()),
        ),
        other => (other.clone(), None),
    }
}

fn parses_cleanly(text: &str) -> bool {
    cairn_syntax::parse(text).errors().is_empty()
}

fn not_one_type(written: &str) -> Diagnostic {
    Diagnostic::new("E-PARSE", format!("{:?} is not one type.", written.trim()))
}

/// The record or enum a type is about (through a borrow or a view).
fn adt_item(ty: &Ty) -> Option<Item> {
    match ty.value() {
        Ty::Record(adt) | Ty::Enum(adt) => Some(adt.item),
        Ty::View(view) => adt_item(&view.elem),
        _ => None,
    }
}

/// A resolved type as the root module writes it: records and enums by their full names, a view's
/// non-literal extent as `extent`. `None` for what cannot be written (a generic parameter, an
/// unknown type, or a view without an extent name to give it).
fn probe_type(db: &dyn cairn_hir::Db, ty: &Ty, extent: Option<&str>) -> Option<String> {
    match ty {
        Ty::Bool | Ty::Int(_) | Ty::Float(_) => Some(ty.to_string()),
        Ty::Record(adt) | Ty::Enum(adt) => {
            let mut out = cairn_hir::scope::scope(db).full_name(adt.item).to_string();
            if !adt.args.is_empty() {
                let args: Option<Vec<String>> = adt.args.iter().map(|a| probe_type(db, a, None)).collect();
                out.push_str(&format!("[{}]", args?.join(", ")));
            }
            Some(out)
        }
        Ty::Borrow(mode, inner) => Some(format!("{}<{}>", mode.name(), probe_type(db, inner, None)?)),
        Ty::View(view) => {
            let size = match &view.extent {
                cairn_hir::types::Extent::Literal(n) => n.to_string(),
                _ => extent?.to_string(),
            };
            Some(format!("{}<{}>[{size}]@{}", view.mode.name(), probe_type(db, &view.elem, None)?, view.place.name()))
        }
        Ty::Void | Ty::Param(_) | Ty::Error => None,
    }
}

/// Whether a record or enum type holds the wanted type among its type arguments (an `Option` or
/// a `Result` of it).
fn holds(db: &dyn cairn_hir::Db, ty: &Ty, wanted: &str) -> bool {
    match ty {
        Ty::Record(adt) | Ty::Enum(adt) => {
            adt.args.iter().any(|a| probe_type(db, a.value(), Some("_")).as_deref() == Some(wanted))
        }
        _ => false,
    }
}

/// Every way to place the given values into distinct slots (`out[i]` is the slot of value `i`),
/// skipping a value whose type the slot's certainly refuses: a scalar where a different scalar,
/// a record or an enum is declared, or a view where none is (and the reverse). The checker has
/// no implicit conversion, so every skipped call is one it refuses.
fn placements(slots: &[&Ty], takes: &[&Ty]) -> Vec<Vec<usize>> {
    fn go(slots: &[&Ty], takes: &[&Ty], current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        let Some(take) = takes.get(current.len()) else {
            out.push(current.clone());
            return;
        };
        for (slot, ty) in slots.iter().enumerate() {
            if current.contains(&slot) || !compatible(take, ty) {
                continue;
            }
            current.push(slot);
            go(slots, takes, current, out);
            current.pop();
        }
    }
    let mut out = Vec::new();
    if takes.len() <= slots.len() {
        go(slots, takes, &mut Vec::new(), &mut out);
    }
    out
}

fn compatible(take: &Ty, slot: &Ty) -> bool {
    let (take, slot) = (take.value(), slot.value());
    let view = |t: &Ty| matches!(t, Ty::View(_));
    let adt = |t: &Ty| matches!(t, Ty::Record(_) | Ty::Enum(_));
    if view(take) != view(slot) {
        return false;
    }
    if (take.is_scalar() && adt(slot)) || (adt(take) && slot.is_scalar()) {
        return false;
    }
    if take.is_scalar() && slot.is_scalar() {
        return take == slot;
    }
    true
}

/// Every order of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let slots: Vec<Ty> = vec![Ty::Error; n];
    let slots: Vec<&Ty> = slots.iter().collect();
    placements(&slots, &slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = r#"import std.core (Option);
// Parses a decimal number from its digits.
fn parse_digits(n:usize, digits:ro<u8>[n]) -> u64 = 0;
// Adds one, wrapping at the top. Never traps.
fn bump(x:u32) -> u32 = add_wrap(x, 1);
// Says hello on standard output.
fn greet(times:u32) { println("hello ", times); }
fn helper_count(x:u32) -> u64 = u64(x);
// The value itself, when it is not zero.
fn nonzero(x:u32) -> Option[u32] {
  if x == 0 { return None; }
  return Some(x);
}
fn main() -> i32 { return 0; }
module text;
pub struct Span { at:usize; }
// Counts the words of a text.
pub fn words(n:usize, s:ro<u8>[n]) -> usize = n;
fn private_len(x:u32) -> u32 = x;
pub fn span_start(s:Span) -> usize = s.at;
"#;

    fn query(words: &str) -> FindQuery {
        FindQuery {
            words: words.split_whitespace().map(str::to_string).collect(),
            takes: Vec::new(),
            returns: None,
            effects: None,
            limit: DEFAULT_LIMIT,
        }
    }

    fn typed(takes: &[&str], returns: Option<&str>) -> FindQuery {
        FindQuery {
            takes: takes.iter().map(|t| t.to_string()).collect(),
            returns: returns.map(str::to_string),
            ..query("")
        }
    }

    /// The hits of `query` over `program` (none: builtins and library only).
    #[track_caller]
    fn check_hits(query: &FindQuery, program: Option<&str>) -> Vec<String> {
        let sources = program.map(|text| Sources::single("p.cairn", text));
        let record = match find(query, sources.as_ref()) {
            Ok(record) => record,
            Err(refusal) => panic!("refused with {}: {}", refusal.code, refusal.message),
        };
        record["hits"].as_array().into_iter().flatten().map(|h| h.as_str().unwrap_or_default().to_string()).collect()
    }

    /// The names the hits start with, in order.
    #[track_caller]
    fn check_names(query: &FindQuery, program: Option<&str>) -> Vec<String> {
        check_hits(query, program).iter().map(|line| line.split('(').next().unwrap_or_default().to_string()).collect()
    }

    #[track_caller]
    fn check_refused(query: &FindQuery, program: Option<&str>, code: &str) {
        let sources = program.map(|text| Sources::single("p.cairn", text));
        match find(query, sources.as_ref()) {
            Ok(record) => panic!("expected {code}, got {record:?}"),
            Err(refusal) => assert_eq!(refusal.code, code, "{}", refusal.message),
        }
    }

    #[test]
    fn stems_drop_one_suffix_when_three_letters_remain() {
        for (word, expected) in [
            ("parsing", "pars"),
            ("parsed", "pars"),
            ("parses", "pars"),
            ("parse", "pars"),
            ("bytes", "byt"),
            ("integers", "integer"),
            ("use", "use"),
            ("is", "is"),
            ("sing", "sing"),
            ("text", "text"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }

    #[test]
    fn words_are_lower_cased_split_and_stripped_of_stop_words() {
        assert_eq!(raw_words("Parse_the INTEGER of a u8, 3x"), ["parse", "integer", "u8", "x"]);
        let weights = weighed(&[("counts words", 1), ("text", 2), ("word_count", 3)]);
        assert_eq!(weights.get("count"), Some(&3));
        assert_eq!(weights.get("word"), Some(&3));
        assert_eq!(weights.get("text"), Some(&2));
    }

    #[test]
    fn a_word_matches_a_stem_it_equals_or_prefixes_from_three_letters() {
        let forms = |w: &str| BTreeSet::from([w.to_string()]);
        assert!(matches("parse", &forms("par")));
        assert!(!matches("parse", &forms("pa")));
        assert!(matches("pa", &forms("pa")));
        assert!(!matches("spar", &forms("par")));
    }

    #[test]
    fn only_entries_matching_the_most_words_are_listed() {
        // `integer` stands for `decimal`, which the comment of parse_digits holds; the conversion
        // builtins match `integer` (through i64) but not `parse`.
        assert_eq!(
            check_hits(&query("parse integer"), Some(PROGRAM)),
            ["parse_digits(n:usize, digits:ro<u8>[n]) -> u64  pure  // Parses a decimal number from its digits."]
        );
        // Alone, `integer` finds the conversions by name (through i64) before every builtin whose
        // comment says integer.
        assert_eq!(
            check_names(&query("integer"), None),
            ["u64", "abs", "add_wrap", "min", "println", "shl_wrap", "to_bits"]
        );
    }

    #[test]
    fn aliases_carry_words_from_other_languages() {
        // `string` stands for `text`, the module of both; a private function is still listed for
        // words.
        let names = check_names(&query("string"), Some(PROGRAM));
        assert_eq!(names[..3], ["text.private_len", "text.span_start", "text.words"]);
        assert_eq!(check_names(&query("square root"), None), ["sqrt"]);
        assert_eq!(check_names(&query("stdout"), None), ["println"]);
    }

    #[test]
    fn heavier_matches_and_own_functions_rank_first() {
        // `count`: a name (helper_count), then a comment of the program (text.words), then a
        // comment of a builtin (shl_wrap's "a count below its width").
        assert_eq!(check_names(&query("count"), Some(PROGRAM)), ["helper_count", "text.words", "shl_wrap"]);
    }

    #[test]
    fn hits_show_the_row_beyond_pure_and_the_first_sentence() {
        assert_eq!(
            check_hits(&query("bump"), Some(PROGRAM)),
            ["bump(x:u32) -> u32  pure  // Adds one, wrapping at the top."]
        );
        assert_eq!(
            check_hits(&query("greet"), Some(PROGRAM)),
            ["greet(times:u32)  pure + ffi:write, io  // Says hello on standard output."]
        );
        // main and the module-less helpers of the probe never show.
        assert!(check_hits(&query("main"), Some(PROGRAM)).is_empty());
    }

    #[test]
    fn the_limit_bounds_the_hits_and_counts_the_rest() {
        let sources = Sources::single("p.cairn", PROGRAM);
        let all = find(&query("count"), Some(&sources)).map(|r| r["hits"].as_array().map_or(0, Vec::len));
        assert_eq!(all, Ok(3));
        let one = find(&FindQuery { limit: 1, ..query("count") }, Some(&sources));
        let one = one.unwrap_or_default();
        assert_eq!(one["hits"].as_array().map(Vec::len), Some(1));
        assert_eq!(one["more"], json!(2));
        assert_eq!(one.keys().collect::<Vec<_>>(), ["hits", "more"]);
    }

    #[test]
    fn malformed_queries_are_refused_with_e_request() {
        check_refused(&query(""), None, "E-REQUEST");
        check_refused(&query("   "), None, "E-REQUEST");
        check_refused(&typed(&["u8", "u8", "u8", "u8", "u8"], None), None, "E-REQUEST");
        check_refused(&FindQuery { limit: 0, ..query("len") }, None, "E-REQUEST");
        check_refused(&FindQuery { limit: 201, ..query("len") }, None, "E-REQUEST");
        check_refused(&FindQuery { effects: Some("effects()".into()), ..query("len") }, None, "E-REQUEST");
        assert_eq!(limit_from(-1).map_err(|d| d.code), Err("E-REQUEST".to_string()));
        assert_eq!(limit_from(200), Ok(200));
        // Four values and the widest limit are fine.
        assert!(find(&FindQuery { limit: 200, ..typed(&["u8", "u8", "u8", "u8"], None) }, None).is_ok());
    }

    #[test]
    fn types_the_checker_cannot_resolve_are_refused_with_its_code() {
        check_refused(&typed(&["Nowhere"], None), Some(PROGRAM), "E-TYPE");
        check_refused(&typed(&["u32)"], None), None, "E-PARSE");
        check_refused(&typed(&["u32) { } fn x(a:u8"], None), None, "E-PARSE");
        check_refused(&typed(&[""], None), None, "E-PARSE");
        check_refused(&typed(&[], Some("void")), None, "E-PARAM");
    }

    #[test]
    fn a_type_query_keeps_the_calls_the_checker_accepts_ranked() {
        // Full calls first (own before builtin), then an Option holding the wanted type; the
        // private text.private_len is never a candidate.
        assert_eq!(check_names(&typed(&["u32"], Some("u32")), Some(PROGRAM)), ["bump", "u32", "nonzero"]);
        assert_eq!(
            check_hits(&typed(&["ro<u8>[n]"], Some("u64")), Some(PROGRAM)),
            ["parse_digits(n:usize, digits:ro<u8>[n]) -> u64  pure  // Parses a decimal number from its digits."]
        );
        // A builtin's hit shows its call with the types as written, and the row of that call.
        assert_eq!(
            check_hits(&typed(&["u8", "u8"], Some("u8")), None),
            [
                "add_wrap(u8, u8)  pure  // Modular addition, subtraction or multiplication of two unsigned integers (plain + - * trap on overflow).",
                "min(u8, u8)  pure  // The lesser or the greater of two integers of one type.",
            ]
        );
    }

    #[test]
    fn a_type_may_leave_out_the_one_module_that_declares_it() {
        assert_eq!(check_names(&typed(&["Span"], None), Some(PROGRAM)), ["text.span_start"]);
        assert_eq!(check_names(&typed(&["text.Span"], None), Some(PROGRAM)), ["text.span_start"]);
    }

    #[test]
    fn an_effect_ceiling_keeps_the_rows_that_fit() {
        let names = check_names(&typed(&["u32"], None), Some(PROGRAM));
        assert!(names.contains(&"greet".to_string()) && names.contains(&"println".to_string()), "{names:?}");
        let pure = check_names(&FindQuery { effects: Some("pure".into()), ..typed(&["u32"], None) }, Some(PROGRAM));
        assert!(!pure.contains(&"greet".to_string()) && !pure.contains(&"println".to_string()), "{pure:?}");
        assert!(pure.contains(&"bump".to_string()), "{pure:?}");
        let io = FindQuery { effects: Some("effects(pure, io, ffi:write)".into()), ..typed(&["u32"], None) };
        assert!(check_names(&io, Some(PROGRAM)).contains(&"greet".to_string()));
        // A builtin's row belongs to a call: a word query knows none, so a ceiling keeps none.
        assert!(check_hits(&FindQuery { effects: Some("pure".into()), ..query("min") }, None).is_empty());
    }

    #[test]
    fn a_refused_program_leaves_the_builtins_and_says_so() {
        let broken = "fn bad(x:u32) -> u64 { return x; }\n";
        let sources = Sources::single("p.cairn", broken);
        let record = find(&query("bad"), Some(&sources)).unwrap_or_default();
        assert_eq!(record["hits"], json!([]));
        assert_eq!(
            record["program"],
            json!("refused with E-TYPE-MISMATCH: only the builtins and the library were searched")
        );
        // `min` names min and begins "minimum" in the comment of abs.
        assert_eq!(check_names(&query("min"), Some(broken)), ["min", "abs"]);
    }

    #[test]
    fn probe_names_never_collide_with_the_program() {
        let program = "fn cairn_find_1(x:u32) -> u32 = x;\nfn cairn_find_t0(x:u32) -> u32 = x;\n";
        assert_eq!(check_names(&typed(&["u32"], Some("u32")), Some(program)), ["cairn_find_1", "cairn_find_t0", "u32"]);
    }

    #[test]
    fn human_text_counts_the_rest_and_says_when_nothing_fits() {
        let record = |hits: Value, more: u64| {
            let mut map = Map::new();
            map.insert("hits".into(), hits);
            map.insert("more".into(), json!(more));
            map
        };
        assert_eq!(human_text(&record(json!(["a", "b"]), 3)), "a\nb\n3 more: --limit shows them.\n");
        assert_eq!(human_text(&record(json!([]), 0)), "Nothing fits.\n");
        let mut refused = record(json!([]), 0);
        refused.insert("program".into(), json!("refused with E-TYPE: only the builtins and the library were searched"));
        assert_eq!(
            human_text(&refused),
            "Nothing fits.\nrefused with E-TYPE: only the builtins and the library were searched\n"
        );
    }

    #[test]
    fn short_types_lose_their_modules_and_host_placement() {
        assert_eq!(short("(p:geo.Point, v:ro<a.b.C>[n]@host) -> geo.Point"), "(p:Point, v:ro<C>[n]) -> Point");
        assert_eq!(short("(x:u8) -> ro<u8>[4]@device"), "(x:u8) -> ro<u8>[4]@device");
    }
}
