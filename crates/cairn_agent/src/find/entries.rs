//! The functions an answer may name: the program's own, the packaged library's `pub` ones and the
//! builtin groups, in declaration order, each with the stems its words are matched by and the line
//! its hit shows.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_hir::Row;
use cairn_hir::{Item, ItemKind, Workspace};

use super::ceiling::beyond;
use super::words::weighed;

/// A function an answer may name; a builtin entry has no item and may cover several names.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// As a call names it in full (`weather.units.celsius_tenths`), or a builtin entry's first name.
    pub(super) name: String,
    pub(super) module: Arc<str>,
    /// The signature a hit shows.
    head: String,
    /// The first sentence of its comment.
    doc: String,
    /// `None`: unknown (a builtin's row belongs to a call).
    pub(super) row: Option<Row>,
    /// 0 the program's own, 1 the packaged library, 2 a builtin.
    pub(super) rank: u8,
    pub(super) item: Option<Item>,
    /// Each stem and what a match of it weighs.
    pub(super) words: BTreeMap<String, u32>,
    /// The builtins a builtin entry covers.
    pub(super) names: Vec<&'static str>,
}

impl Entry {
    /// The hit line: the head (a builtin's call when a probe wrote one), the row beyond `pure`
    /// when known, and the first sentence of the comment.
    pub(super) fn line(&self, head: &str, row: Option<&Row>) -> String {
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

/// Every function an answer may name, in declaration order (the program's, then the library's),
/// then the builtin entries. Left out: the probe file and the library loader, `main`, tests, and
/// library functions that are not `pub`.
pub(super) fn entries_of(workspace: &Workspace) -> Vec<Entry> {
    let db = workspace.db();
    let scope = cairn_hir::scope(db);
    let rows = workspace.last_rows();
    let loader = workspace.own_file_count().saturating_sub(1);
    let mut entries = Vec::new();
    for (index, file) in workspace.files().iter().enumerate() {
        if index == 0 || (!file.library && index == loader) {
            continue;
        }
        // Functions, and the methods of trait impls: a method is named as the protocol names it
        // (`Area.Rect.area`) and shown as the trait-qualified call (`Area.area(…)`), which
        // resolves wherever the trait is visible (static dispatch on the receiver's type).
        let functions = file.items.iter().filter(|i| i.key.kind == ItemKind::Fn);
        let methods = file.members.iter().filter(|m| m.key.kind == ItemKind::Method && !file.library);
        for declared in functions.chain(methods) {
            let item = declared.item;
            let method = declared.key.kind == ItemKind::Method;
            let public = method || scope.info(item).is_some_and(|i| i.public);
            if &*declared.key.name == "main" || (file.library && !public) {
                continue;
            }
            let name = workspace.full_name(item).to_string();
            let callee = match cairn_hir::member_family(db, item).filter(|_| method) {
                Some((tr, member)) => format!("{}.{member}", scope.full_name(tr)),
                None => name.clone(),
            };
            let start = usize::from(declared.start + first_token(db, item));
            let comment = cairn_hir::render::comment_above(&file.text(), start);
            let doc = first_sentence(&comment).to_string();
            let module = declared.key.module.clone();
            let words = weighed(&[(&doc, 1), (&module, 2), (&declared.key.name, 3)]);
            entries.push(Entry {
                head: head_of(db, item, &declared.key.name, &callee),
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

/// A type as a hit shows it: names without their modules, and host placement left out.
pub(super) fn short(text: &str) -> String {
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

/// written, and what it does (its first sentence is what words match). A builtin's rule lives in
/// the checker (`cairn_hir::check::call`); a type query judges each name by a probe like any other.
pub(super) const BUILTINS: &[(&str, &str, &str)] = &[
    ("len", "len(xs) -> usize", "The extent of a view, a Buf, a local array or a string literal."),
    (
        "Buf",
        "Buf[T](n) -> Buf[T]",
        "A heap owner of n zeroed elements, released when its holder's block ends; lent whole to a view parameter.",
    ),
    (
        "Array",
        "Array[T, N]() -> Array[T, N]",
        "An inline value of N zeroed elements (a fixed-length array), copied or moved as its elements are; lent whole to a view parameter.",
    ),
    (
        "Dyn",
        "Dyn[Trait](value) -> Dyn[Trait]",
        "A heap owner of one value of any type implementing the trait; its members dispatch, and it lends itself as a dyn reference.",
    ),
    ("take", "take(place) -> T", "Moves an owner out of a field or element, leaving its zero value (an empty Buf)."),
    ("swap", "swap(a, b)", "Exchanges what two places of one type hold, owners included."),
    (
        "transfer",
        "transfer(dst, src)",
        "Copies every element of one view into another of the same type and extent, across placements (host and @device memory); the only way elements cross.",
    ),
    (
        "atomic_add_wrap",
        "atomic_add_wrap(x[i], v) -> T",
        "Adds to one element of a writable array atomically (relaxed, modulo 2^N) and returns its old value: safe from every lane at once, host or device.",
    ),
    (
        "atomic_min atomic_max",
        "atomic_min(x[i], v) -> T",
        "Lowers (raises) one element of a writable array to v atomically if v is smaller (larger); returns the old value.",
    ),
    (
        "atomic_and atomic_or atomic_xor",
        "atomic_and(x[i], v) -> T",
        "Combines one element of a writable array with v bit by bit, atomically; returns the old value.",
    ),
    (
        "atomic_cas",
        "atomic_cas(x[i], expected, desired) -> T",
        "Replaces one element with desired where it equals expected, atomically; returns the old value (compare with expected to know who won).",
    ),
    (
        "wait",
        "wait(t)",
        "Ends queued device work: consumes the ticket `let t = spawn transfer(…);` or `spawn parallel …` made, once the host needs the work done.",
    ),
    (
        "println print eprintln eprint",
        "println(a, ...)",
        "Writes integers, floats, bools and strings, then a newline (print leaves it out; eprint and eprintln write to standard error).",
    ),
    (
        "format",
        "format(out, a, ...)",
        "Appends to a Vec[u8] the text println would write for the same pieces (no newline); the vector grows as needed.",
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

/// The signature a hit shows: the qualified name, the parameters and the result as the checker
/// resolved them, module prefixes and `@host` left out, the declared ceiling left out (the row
/// follows the head).
fn head_of(db: &dyn cairn_hir::Db, item: Item, local: &str, full: &str) -> String {
    let text = cairn_hir::render::signature_text(db, item, true);
    let mut text = text.strip_prefix("fn ").unwrap_or(&text).to_string();
    if cairn_hir::fn_signature(db, item).ceiling.is_some() {
        if let Some(cut) = text.rfind(" effects(") {
            text.truncate(cut);
        } else if let Some(rest) = text.strip_suffix(" pure") {
            text = rest.to_string();
        }
    }
    let rest = text.strip_prefix(local).unwrap_or(&text);
    format!("{full}{}", short(rest))
}

/// Where a declaration's first token starts, relative to the declaration (its leading comment is
/// trivia inside it).
fn first_token(db: &dyn cairn_hir::Db, item: Item) -> cairn_syntax::TextSize {
    cairn_syntax::first_significant_token(&item.syntax(db).syntax_node())
        .map_or(cairn_syntax::TextSize::from(0), |t| t.text_range().start())
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
