//! Lowering accepted programs: every function lowers and verifies; a small program's MIR is
//! pinned as a snapshot.

use std::path::Path;

use cairn_hir::{SourceText, Workspace};

fn lowered(text: &str) -> cairn_mir::Program {
    let mut workspace = Workspace::new(vec![SourceText { name: "p.cairn".into(), text: text.to_string() }]);
    let outcome = workspace.check();
    assert!(outcome.refusal.is_none(), "the program must be accepted: {:?}", outcome.refusal);
    cairn_mir::program_mir(workspace.db())
}

fn assert_clean(program: &cairn_mir::Program) {
    assert!(program.errors.is_empty(), "lowering failed: {:?}", program.errors);
    for function in &program.functions {
        if let Err(fault) = cairn_mir::verify::verify(function) {
            panic!("{fault}\n{function}");
        }
    }
}

#[test]
fn generated_programs_lower_and_verify() {
    for seed in 0..6 {
        let text = cairn_testgen::program(cairn_testgen::Config { seed, functions: 40, expression_depth: 3 });
        assert_clean(&lowered(&text));
    }
}

#[test]
fn the_examples_lower_and_verify() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for entry in std::fs::read_dir(root).expect("examples").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "cairn") {
            let text = std::fs::read_to_string(&path).expect("read");
            assert_clean(&lowered(&text));
        }
    }
}

#[test]
fn a_small_program_in_mir() {
    let program = lowered(
        "fn sum(n:usize, xs:ro<u32>[n]) -> u32 {\n  let mut t:u32 = 0;\n  for i in 0..n {\n    t = t + xs[i];\n  }\n  return t / 2;\n}\n",
    );
    assert_clean(&program);
    let text: String = program.functions.iter().map(|f| f.to_string()).collect();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/mir"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!("small_program", text));
}
