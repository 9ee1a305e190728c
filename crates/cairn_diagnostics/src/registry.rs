//! Which rule card owns which diagnostic code (protocol §14).
//!
//! Invariant: every code is owned by exactly one card, and language cards and tool cards are
//! disjoint. The table is the protocol's; the card *texts* live in `cards/` at the top of the
//! repository and a test keeps the two in step.

/// Whether a card describes part of the language or a kind of tool refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardKind {
    Language,
    Tool,
}

/// One card: its name, kind and the codes it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardEntry {
    pub name: &'static str,
    pub kind: CardKind,
    pub codes: &'static [&'static str],
}

/// Every card, language cards first in the original's table order, then the tool cards.
pub const CARDS: &[CardEntry] = &[
    lang(
        "base",
        &[
            "E-PARSE",
            "E-LEX",
            "E-NAME",
            "E-RETURN",
            "E-UNREACHABLE",
            "E-EXPRESSION-BODY",
            "E-IMMUTABLE",
            "E-LVALUE",
            "E-UNBOUND",
            "E-SHADOW",
            "E-DUPLICATE",
            "E-PARAM",
            "E-BUILTIN-NAME",
            "E-TYPE",
            "E-TYPE-MISMATCH",
            "E-ELEMENT-LOOP",
            "E-LOOP-CONTROL",
        ],
    ),
    lang("integers", &["E-WRAP-TYPE", "E-OPERATOR", "E-MINMAX", "E-CAST", "E-LITERAL-RANGE", "E-CONST"]),
    lang("calls", &["E-CALLEE", "E-CALL", "E-ARITY", "E-EFFECT-ORDER", "E-DISCARD"]),
    lang(
        "views",
        &[
            "E-EXTENT",
            "E-CALL-SHAPE",
            "E-CALL-VIEW",
            "E-VIEW-ALIAS",
            "E-INDEX",
            "E-LEN",
            "E-WRITE-LEASE",
            "E-ALIAS",
            "E-ESCAPE",
        ],
    ),
    lang("compact", &["E-COLLECT-BINDING", "E-COLLECT-CAPACITY", "E-COLLECT-SELF-READ"]),
    lang("scan", &["E-SCAN-OP", "E-SCAN-ORDER", "E-SCAN-TARGET", "E-SCAN-EXTENT"]),
    lang("floats", &[]),
    lang("math", &["E-MATH-TYPE"]),
    lang("storage", &["E-QUANTIZE", "E-MMA"]),
    lang("gradients", &["E-GRAD", "E-GRAD-FORM", "E-GRAD-CALL", "E-GRAD-RACE"]),
    lang("records", &["E-RECORD", "E-FIELD", "E-RECORD-TYPE", "E-ALIGN", "E-ENUM"]),
    lang(
        "generators",
        &[
            "E-FAMILY-TARGET",
            "E-FAMILY-LIMIT",
            "E-UNINSTANTIATED",
            "E-DERIVE-FIELD",
            "E-RECIPE",
            "E-RECIPE-STATIC",
            "E-DERIVE-DOMAIN",
            "E-DERIVE-RECIPE",
            "E-DERIVE-TYPE",
            "E-DERIVE-COLLISION",
        ],
    ),
    lang("memory", &["E-OWNER-ELEMENT", "E-STACK-EXTENT", "E-STACK-LIMIT", "E-OWNER-EXTENT"]),
    lang(
        "sums",
        &[
            "E-SUM-PAYLOAD",
            "E-SUM-ARITY",
            "E-VARIANT-AMBIGUOUS",
            "E-ENUM-VARIANT",
            "E-MATCH-TYPE",
            "E-MATCH-COVERAGE",
            "E-MATCH-DUPLICATE",
            "E-MATCH-BINDING",
            "E-TRY",
        ],
    ),
    lang(
        "generics",
        &[
            "E-STATIC",
            "E-INFER",
            "E-GENERIC-ARITY",
            "E-GENERIC-KIND",
            "E-TRAIT-IMPL",
            "E-TRAIT-OVERLAP",
            "E-BOUND",
            "E-TRAIT-AMBIGUOUS",
        ],
    ),
    lang(
        "owners",
        &[
            "E-MOVED",
            "E-PARTIAL-MOVE",
            "E-MOVE-BORROW",
            "E-UNPACK",
            "E-MOVE-IN-LOOP",
            "E-LINEAR-LEAK",
            "E-LINEAR-BRANCH",
            "E-LINEAR-STORAGE",
            "E-DEFER",
            "E-EXTENT-FIELD",
        ],
    ),
    lang(
        "assembly",
        &["E-ASM-TARGET", "E-ASM-OPERANDS", "E-ASM-CONSTRAINT", "E-ASM-EFFECT", "E-ASM-CLOBBER", "E-ASM-LANE"],
    ),
    lang("foreign", &["E-LAUNCH", "E-FOREIGN"]),
    lang("effects", &["E-EFFECT-CEILING", "E-EXTERN", "E-EXTERN-EFFECTS", "E-UNSAFE"]),
    lang(
        "parallel",
        &[
            "E-PLACE",
            "E-PLACEMENT",
            "E-PARALLEL-RACE",
            "E-PARALLEL-WRITE",
            "E-REDUCE-OP",
            "E-REDUCE-ORDER",
            "E-REDUCE-TARGET",
            "E-PLAN",
            "E-EMULATE",
            "E-ENQUEUE",
            "E-PARALLEL-CONTROL",
            "E-PARALLEL-NEST",
            "E-PARALLEL-CALL",
        ],
    ),
    lang("wide", &["E-WIDE"]),
    lang("atomics", &["E-ATOMIC", "E-ATOMIC-MIXED"]),
    lang(
        "cooperative",
        &[
            "E-COOP-SHAPE",
            "E-COOP-SHARED",
            "E-COOP-BARRIER",
            "E-COOP-CONFLICT",
            "E-COOP-UNORDERED",
            "E-COOP-REUSE",
            "E-COOP-UNDECIDED",
            "E-COOP-UNWRITTEN",
            "E-COOP-GLOBAL",
            "E-COOP-WARP",
            "E-STAGE-UNREADY",
            "E-STAGE-BUSY",
            "E-STAGE-LOOP",
        ],
    ),
    lang("tasks", &["E-SPAWN", "E-LEASED"]),
    lang("rings", &["E-PINNED"]),
    lang("closures", &["E-FN-TYPE", "E-CLOSURE", "E-DYN"]),
    lang("tests", &["E-TEST", "E-ASSERT-EQ"]),
    lang(
        "implementations",
        &[
            "E-IMPL-SIGNATURE",
            "E-IMPLEMENTS",
            "E-IMPL-EFFECT",
            "E-IMPL-NUMERICS",
            "E-IMPL-WHEN",
            "E-IMPL-USE",
            "E-IMPL-TARGET",
            "E-IMPL-CALL",
            "E-IMPL-PARAM",
        ],
    ),
    lang("printing", &["E-PRINT-ARG", "E-FORMAT-TARGET"]),
    lang("layouts", &["E-LAYOUT-OVERLAP", "E-LAYOUT-GAP", "E-LAYOUT-CONSUMER", "E-LAYOUT"]),
    lang("fragments", &["E-FRAGMENT"]),
    lang("lends", &["E-LENDS"]),
    lang("modules", &["E-IMPORT", "E-PRIVATE", "E-MANGLE"]),
    tool(
        "hosts",
        &[
            "E-REQUEST",
            "E-SESSION",
            "E-SYMBOL",
            "E-SITE",
            "E-EDIT-PROFILE",
            "E-CONTRACT",
            "E-SIGNATURE",
            "E-DECLARATION",
            "E-EFFECT-EXPANSION",
            "E-CALLER-EFFECT",
            "E-CONTEXT-CLOSURE",
            "E-PRESERVE",
        ],
    ),
    tool("migrations", &["E-MIGRATION-SCOPE", "E-MIGRATION"]),
    tool(
        "sketches",
        &[
            "E-SKETCH-CHOICES",
            "E-SKETCH-EMPTY",
            "E-SKETCH-NAME",
            "E-SKETCH-SITE",
            "E-SKETCH-OVERLAP",
            "E-SKETCH-SEALED",
            "E-SKETCH-CONTRACT",
            "E-SKETCH-BUDGET",
        ],
    ),
    tool("validation", &["E-REFERENCE", "E-TOLERANCE", "E-TEST-POLICY", "E-DOMAIN", "E-VALIDATION"]),
    tool(
        "commands",
        &[
            "E-PROJECT-OR-ENVIRONMENT",
            "E-TARGET",
            "E-TARGET-FEATURE",
            "E-TARGET-MISMATCH",
            "E-TARGET-TOOLKIT",
            "E-DEVICE-CARD",
            "E-EXPORT",
            "E-EXPORT-TAMPERED",
            "E-EXPORT-TOOLCHAIN",
            "E-RULE",
        ],
    ),
    tool("harness", &["E-HARNESS-MAPPING", "E-HARNESS-DTYPE", "E-HARNESS-SYMBOL", "E-HARNESS-FORMAT"]),
    tool(
        "limits",
        &[
            "E-SOURCE-LIMIT",
            "E-DEPTH",
            "E-AST-LIMIT",
            "E-EXPANSION-LIMIT",
            "E-EFFECT-LIMIT",
            "E-INTERNAL",
            "E-PROJECTION",
            "E-RESOURCE-OR-IO",
        ],
    ),
];

const fn lang(name: &'static str, codes: &'static [&'static str]) -> CardEntry {
    CardEntry { name, kind: CardKind::Language, codes }
}

const fn tool(name: &'static str, codes: &'static [&'static str]) -> CardEntry {
    CardEntry { name, kind: CardKind::Tool, codes }
}

/// The card that owns `code`, if any card does.
pub fn card_of(code: &str) -> Option<&'static CardEntry> {
    CARDS.iter().find(|card| card.codes.contains(&code))
}

/// The card named `name`.
pub fn card_named(name: &str) -> Option<&'static CardEntry> {
    CARDS.iter().find(|card| card.name == name)
}

/// True when `code` belongs to a tool card (such codes get no repair hint outside a host).
pub fn is_tool_code(code: &str) -> bool {
    card_of(code).is_some_and(|card| card.kind == CardKind::Tool)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn every_code_has_exactly_one_owner() {
        let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for card in CARDS {
            for code in card.codes {
                owners.entry(code).or_default().push(card.name);
            }
        }
        let shared: Vec<_> = owners.iter().filter(|(_, cards)| cards.len() > 1).collect();
        assert!(shared.is_empty(), "codes with several owners: {shared:?}");
    }

    #[test]
    fn the_table_has_the_protocols_totals() {
        let language = CARDS.iter().filter(|c| c.kind == CardKind::Language).count();
        let tools = CARDS.iter().filter(|c| c.kind == CardKind::Tool).count();
        let language_codes: usize = CARDS.iter().filter(|c| c.kind == CardKind::Language).map(|c| c.codes.len()).sum();
        let tool_codes: usize = CARDS.iter().filter(|c| c.kind == CardKind::Tool).map(|c| c.codes.len()).sum();
        assert_eq!((language, tools), (33, 7));
        assert_eq!((language_codes, tool_codes), (166, 49));
    }

    #[test]
    fn every_syntax_code_is_owned() {
        for code in cairn_syntax::ErrorCode::ALL {
            assert!(card_of(code.as_str()).is_some(), "{code} has no card");
        }
    }
}
