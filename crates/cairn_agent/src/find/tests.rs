//! Tests of `find`: words, stems and aliases, ranking, refusals, type queries judged by the
//! checker, effect ceilings and the text a terminal shows, over one small program.

use std::collections::BTreeSet;

use super::entries::short;
use super::words::{matches, raw_words, weighed};
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
    // builtins match `integer` (through i64) but not `parse`. std.text's parsers match both
    // words (`integer` through i64/u64 in their names).
    let names = check_names(&query("parse integer"), Some(PROGRAM));
    assert_eq!(own(&names), ["parse_digits"]);
    assert!(names.iter().filter(|n| n.starts_with("std.")).all(|n| n.starts_with("std.text.parse_")), "{names:?}");
    assert!(names.contains(&"std.text.parse_u64".to_string()), "{names:?}");
    // Alone, `integer` finds the conversions by name (through i64) before every builtin whose
    // comment says integer.
    let wide = FindQuery { limit: 200, ..query("integer") };
    assert_eq!(own(&check_names(&wide, None)), ["u64", "abs", "add_wrap", "min", "println", "shl_wrap", "to_bits"]);
}

/// The names that are not the library's (the program's and the builtins'), in order.
fn own(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).filter(|n| !n.starts_with("std.")).collect()
}

#[test]
fn aliases_carry_words_from_other_languages() {
    // `string` stands for `text`, the module of both; a private function is still listed for
    // words.
    // (std.draw's `text`, which draws a string into an image, matches by its name too.)
    let names = check_names(&query("string"), Some(PROGRAM));
    assert_eq!(own(&names)[..3], ["text.private_len", "text.span_start", "text.words"]);
    assert!(names.contains(&"std.draw.text".to_string()), "{names:?}");
    assert_eq!(check_names(&query("square root"), None), ["sqrt"]);
    // std.io's printers say "standard output" in their comments; the builtin's name matches too.
    // (After them come weaker hits through `print`: `format`, std.draw's `text`.)
    let names = check_names(&query("stdout"), None);
    assert_eq!(names[..5], ["std.io.print", "std.io.print_i64", "std.io.print_u64", "std.io.println", "println"]);
}

#[test]
fn heavier_matches_and_own_functions_rank_first() {
    // `count`: names first (the program's helper_count, then the library's), then comments, the
    // program's (text.words) before the library's, then a comment of a builtin (shl_wrap's "a
    // count below its width").
    let names = check_names(&FindQuery { limit: 200, ..query("count") }, Some(PROGRAM));
    assert_eq!(names[0], "helper_count");
    assert!(names[1].starts_with("std.") && names[1].contains("count"), "{names:?}");
    assert_eq!(names.last().map(String::as_str), Some("shl_wrap"));
    assert_eq!(own(&names), ["helper_count", "text.words", "shl_wrap"]);
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
    let all = find(&FindQuery { limit: 200, ..query("count") }, Some(&sources))
        .map(|r| r["hits"].as_array().map_or(0, Vec::len));
    let all = all.unwrap_or_default();
    assert!(all > 3, "the program's, the library's and a builtin's");
    let one = find(&FindQuery { limit: 1, ..query("count") }, Some(&sources));
    let one = one.unwrap_or_default();
    assert_eq!(one["hits"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["more"], json!(all - 1));
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
    // (The library's calls that take a u32 rank among them by the same rule; they are left out
    // here so that the library can grow.)
    let names = check_names(&typed(&["u32"], Some("u32")), Some(PROGRAM));
    let own: Vec<&String> = names.iter().filter(|n| !n.starts_with("std.")).collect();
    assert_eq!(own, ["bump", "u32", "nonzero"]);
    // Over bytes to u64: the program's own first, then std's full calls, then std's Results
    // holding a u64.
    assert_eq!(
        check_names(&typed(&["ro<u8>[n]"], Some("u64")), Some(PROGRAM)),
        [
            "parse_digits",
            "std.text.hash_bytes",
            "std.vec.hash_view[T:Hash]",
            "std.text.parse_u64",
            "std.text.parse_fixed"
        ]
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
    // `min` names min, is a word of atomic_min's name (an exact name first), and begins
    // "minimum" in the comment of abs.
    assert_eq!(check_names(&query("min"), Some(broken)), ["min", "atomic_min", "abs"]);
}

#[test]
fn probe_names_never_collide_with_the_program() {
    let program = "fn cairn_find_1(x:u32) -> u32 = x;\nfn cairn_find_t0(x:u32) -> u32 = x;\n";
    let names = check_names(&typed(&["u32"], Some("u32")), Some(program));
    let own: Vec<&String> = names.iter().filter(|n| !n.starts_with("std.")).collect();
    assert_eq!(own, ["cairn_find_1", "cairn_find_t0", "u32"]);
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

#[test]
fn the_builtin_entries_name_exactly_the_checker_s_callable_builtins() {
    // The checker's Builtin table is the one home of builtin names; find only documents them.
    let documented: BTreeSet<&str> =
        super::entries::BUILTINS.iter().flat_map(|(names, _, _)| names.split_whitespace()).collect();
    use cairn_hir::builtins::ALL;
    // What a tier-0 program can call (a later-tier intrinsic is refused, so find never offers it).
    let callable: BTreeSet<&str> = ALL.iter().filter(|b| b.callable() && !b.later()).map(|b| b.name()).collect();
    let unknown: Vec<&&str> = documented.difference(&callable).collect();
    assert!(unknown.is_empty(), "find documents names that are no builtin: {unknown:?}");
    let missing: Vec<&&str> = callable.difference(&documented).collect();
    assert!(missing.is_empty(), "builtins find cannot suggest: {missing:?}");
}

/// The methods of trait impls are callable functions of the program: found by their member's
/// name and shown as a trait-qualified call, which resolves wherever the trait is visible.
#[test]
fn impl_methods_are_found_as_trait_qualified_calls() {
    let program = "trait Area { fn area(s:ro<Self>) -> u64; }\nstruct Rect { w:u64; h:u64; }\nimpl Area for Rect {\n  // Width times height.\n  fn area(s:ro<Rect>) -> u64 = s.w * s.h;\n}\nfn main() -> i32 { return 0; }\n";
    let hits = check_hits(&query("area"), Some(program));
    assert!(hits.iter().any(|h| h.starts_with("Area.area(s:ro<Rect>) -> u64")), "{hits:?}");
    let names = check_names(&query("width times height"), Some(program));
    assert_eq!(names.first().map(String::as_str), Some("Area.area"), "found by the comment above it: {names:?}");
}
