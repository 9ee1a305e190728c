//! Parser tests: one snapshot of the tree per grammar case, plus the limits and recovery rules
//! that must hold on any input.
//!
//! Cases are data: `test_data/ok/*.cairn` must parse without error, `test_data/err/*.cairn` must
//! report errors. Each case's tree and errors are recorded under `snapshots/syntax/` at the top of
//! the repository (review changes with `cargo insta review`).

use std::path::{Path, PathBuf};

use cairn_syntax::{ErrorCode, SyntaxKind, parse};

fn cases(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data").join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("test data directory")
        .map(|entry| entry.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cairn"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no cases in {}", root.display());
    paths
}

fn snapshot_settings(dir: &str) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/syntax").join(dir));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

#[track_caller]
fn check_case(dir: &str, path: &Path) -> cairn_syntax::Parse {
    let text = std::fs::read_to_string(path).expect("case text");
    let parse = parse(&text);
    assert_eq!(parse.syntax_node().to_string(), text, "tree of {} is not lossless", path.display());
    let name = path.file_stem().and_then(|s| s.to_str()).expect("name").to_string();
    snapshot_settings(dir).bind(|| insta::assert_snapshot!(name, parse.debug_dump()));
    parse
}

#[test]
fn every_accepted_case_parses_without_errors() {
    for path in cases("ok") {
        let parse = check_case("ok", &path);
        assert!(parse.ok(), "{} has errors: {:?}", path.display(), parse.errors());
    }
}

#[test]
fn every_refused_case_reports_errors() {
    for path in cases("err") {
        let parse = check_case("err", &path);
        assert!(!parse.ok(), "{} parsed without errors", path.display());
    }
}

/// Line and column (1-based, in characters) of an error, for assertions.
fn positions(text: &str) -> Vec<(String, usize, usize)> {
    let parse = parse(text);
    parse
        .errors()
        .iter()
        .map(|e| {
            let start = usize::from(e.range.start());
            let line = text[..start].matches('\n').count() + 1;
            let column = text[..start].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (e.code.as_str().to_string(), line, column)
        })
        .collect()
}

#[test]
fn independent_errors_are_all_reported_at_exact_positions() {
    let text = "fn a() -> i32 {\n  let x = 1\n  return x;\n}\nfn b() { let y = ; }\nfn c() { z = 1 }\nstruct S { f u8; }\nfn d() -> i32 { return 0; }\n";
    assert_eq!(
        positions(text),
        vec![
            // The missing `;` is reported at the end of its line, not at the next line's `return`.
            ("E-PARSE".to_string(), 2, 12),
            ("E-NAME".to_string(), 5, 18),
            ("E-PARSE".to_string(), 6, 16),
            ("E-PARSE".to_string(), 7, 14),
        ]
    );
}

#[test]
fn a_lexical_error_that_stops_the_lexer_is_the_first_error() {
    let text = "fn a() { let x = ; }\nfn b() { let s = \"open\n}\n";
    let parse = parse(text);
    let first = parse.first_error().expect("errors");
    assert_eq!(first.code, ErrorCode::Lex);
    // In position order the parse error comes first.
    assert_eq!(parse.errors()[0].code, ErrorCode::Name);
}

#[test]
fn expression_nesting_stops_at_one_hundred_levels() {
    // The statement's expression is level 1, so 99 pairs of parentheses reach level 100.
    let ok = format!("fn f() -> u64 {{ return {}x{}; }}", "(".repeat(99), ")".repeat(99));
    assert!(parse(&ok).ok(), "{:?}", parse(&ok).errors());
    let deep = format!("fn f() -> u64 {{ return {}x{}; }}", "(".repeat(100), ")".repeat(100));
    let codes: Vec<ErrorCode> = parse(&deep).errors().iter().map(|e| e.code).collect();
    assert_eq!(codes, vec![ErrorCode::Depth]);
}

#[test]
fn postfix_chains_up_to_the_bound_parse_and_past_it_are_e_depth() {
    // `.f()` is two links (a field, then a call).
    for (link, per) in [("[0]", 1), (".a", 1), (".f()", 2)] {
        // (`x.f().f()` is refused by the call rule, E-CALL, whatever its length; never E-DEPTH.)
        let under = format!("fn f() -> u64 {{ return x{}; }}", link.repeat(990 / per));
        assert!(parse(&under).errors().iter().all(|e| e.code != ErrorCode::Depth), "{link} x 990");
        let over = format!("fn f() -> u64 {{ return x{}; }}", link.repeat(1001 / per + 1));
        let errors = parse(&over).errors().to_vec();
        assert_eq!(errors.iter().filter(|e| e.code == ErrorCode::Depth).count(), 1, "{link}: {errors:?}");
    }
}

#[test]
fn long_operator_chains_add_no_nesting_level() {
    let chain = format!("fn f() -> u64 {{ return x{}; }}", " + x".repeat(500));
    assert!(parse(&chain).ok());
}

/// Runs `f` on a thread with a small stack, proving the parser's stack use is bounded.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(512 * 1024).spawn(f).expect("thread").join().expect("no panic");
}

#[test]
fn pathological_nesting_is_a_coded_error_not_a_crash() {
    on_small_stack(|| {
        let n = 100_000;
        let inputs = [
            format!("fn f() {{ let x = {}1{}; }}", "(".repeat(n), ")".repeat(n)),
            format!("fn f() {}{}", "{".repeat(n), "}".repeat(n)),
            format!("fn f() {{ let x = a{}; }}", "[i".repeat(n)),
            format!("fn f() {{ let x = {}1; }}", "-".repeat(n)),
            format!("fn f() {{ let x = {}1; }}", "try ".repeat(n)),
            format!("fn f(x:{}u8{}) {{}}", "ro<".repeat(n), ">".repeat(n)),
            format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(n)),
            format!("fn f() {{ let x = 1{}; }}", " < 1 || 1".repeat(n)),
            format!("fn f() {{ let x = f{}; }}", "(a".repeat(n)),
            format!("fn f() {{ {} }}", "if c { ".repeat(n)),
            format!("fn f() {{ {} }}", "x = |a:u8| { ".repeat(n)),
            "{".repeat(n),
            "(".repeat(n),
            // Postfix chains (issue 11, D3): once uncounted, they overflowed every later walk.
            format!("fn f() {{ let x = a{}; }}", "[0]".repeat(n)),
            format!("fn f() {{ let x = a{}; }}", ".a".repeat(n)),
            format!("fn f() {{ let x = a{}; }}", ".f()".repeat(n)),
            format!("fn f() {{ let x = a{}; }}", "(1)".repeat(n)),
        ];
        for text in inputs {
            let parse = parse(&text);
            assert_eq!(parse.syntax_node().to_string(), text);
            assert!(
                parse.errors().iter().any(|e| e.code == ErrorCode::Depth
                    || e.code == ErrorCode::Parse
                    || e.code == ErrorCode::Declaration)
            );
            // Walking and dropping the tree must not overflow either.
            let depth = max_depth(&parse.syntax_node());
            assert!(depth < 4_000, "tree depth {depth}");
            // A postfix chain past the bound is the depth refusal, not a cascade of others.
            if text.contains("let x = a[0]") || text.contains("let x = a.a") {
                assert_eq!(parse.errors()[0].code, ErrorCode::Depth, "{:?}", &parse.errors()[..1]);
            }
        }
    });
}

fn max_depth(root: &cairn_syntax::SyntaxNode) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    for event in root.preorder() {
        match event {
            rowan::WalkEvent::Enter(_) => {
                depth += 1;
                max = max.max(depth);
            }
            rowan::WalkEvent::Leave(_) => depth -= 1,
        }
    }
    max
}

#[test]
fn contextual_words_are_keywords_only_in_their_position() {
    let parse = parse("test t { let test = 1; }\nfn f(plan:u8) {}\nplan f { grain 64; }\n");
    assert!(parse.ok(), "{:?}", parse.errors());
    let kinds: Vec<SyntaxKind> = parse
        .syntax_node()
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| t.text() == "test" || t.text() == "plan")
        .map(|t| t.kind())
        .collect();
    assert_eq!(kinds, vec![SyntaxKind::TEST_KW, SyntaxKind::IDENT, SyntaxKind::IDENT, SyntaxKind::PLAN_KW]);
}

#[test]
fn doc_comments_are_attached_to_their_declaration() {
    use cairn_syntax::ast::AstNode;
    let parse = parse("// free\n\n// Adds one.\n// Really.\nfn inc(x:u8) -> u8 = x + 1;\n");
    let item = parse.tree().items().next().expect("one item");
    assert_eq!(item.doc_comment().as_deref(), Some("Adds one.\nReally."));
    assert!(item.syntax().text().to_string().starts_with("// Adds one."));
}

#[test]
fn block_reparse_entry_accepts_one_block() {
    let parse = cairn_syntax::parse_block("{ let x = 1; return x; }");
    assert!(parse.ok(), "{:?}", parse.errors());
    let parse = cairn_syntax::parse_block("{ let x = 1; } extra");
    assert!(!parse.ok());
}
