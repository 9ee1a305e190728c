//! `cairn check`: decide whether a program is accepted (tools.md §3.1).
//!
//! Today the pipeline is load → parse: syntax errors are reported with every-refusal semantics
//! (the first is what a front end stopping at the first error reports, then up to 20 more in
//! source order). A program without syntax errors is reported as `parsed`, not `typed`: the
//! semantic checker is not built yet, and claiming `typed` would be false.

use std::path::Path;

use cairn_diagnostics::record::refusal_record;
use cairn_diagnostics::{Diagnostic, LineIndex, Refusal, syntax_diagnostic};
use cairn_syntax::SyntaxKind;
use serde_json::{Map, Value, json};

use crate::output::Output;

pub fn run(path: &Path, out: Output) -> u8 {
    let program = match cairn_vfs::load(path) {
        Ok(program) => program,
        Err(error) => {
            out.environment(&error.message);
            return 2;
        }
    };
    let mut first_hard: Option<Diagnostic> = None;
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut functions = 0usize;
    let indexes: Vec<LineIndex> = program.files.iter().map(|f| LineIndex::new(&f.text)).collect();
    for (file, index) in program.files.iter().zip(&indexes) {
        let parse = cairn_syntax::parse(&file.text);
        functions += parse
            .syntax_node()
            .descendants()
            .filter(|n| matches!(n.kind(), SyntaxKind::FN | SyntaxKind::EXTERN_FN))
            .count();
        let lexer_stop = parse.lexer_stop().cloned();
        for error in parse.errors() {
            let diagnostic = syntax_diagnostic(Some(&file.name), &file.text, index, error);
            // The original lexes the whole program before parsing it, so an error that stops its
            // lexer outranks every parse error, in any file.
            if lexer_stop.as_ref() == Some(error) && first_hard.is_none() {
                first_hard = Some(diagnostic);
            } else {
                diagnostics.push(diagnostic);
            }
        }
    }
    if let Some(hard) = first_hard {
        diagnostics.insert(0, hard);
    }
    let lines = |file: Option<&str>, line: u32| -> Option<String> {
        let position = match file {
            Some(name) => program.files.iter().position(|f| f.name == name)?,
            None => 0,
        };
        indexes[position].line_text(&program.files[position].text, line).map(str::to_string)
    };
    match Refusal::from_diagnostics(diagnostics) {
        Some(refusal) => {
            out.refusal(&refusal_record(&refusal), &lines);
            1
        }
        None => {
            let mut record = Map::new();
            record.insert("status".into(), json!("parsed"));
            record.insert("functions".into(), json!(functions));
            record.insert("library_functions".into(), json!(0));
            record.insert("formal_status".into(), json!("not-verified"));
            record.insert("checked".into(), Value::String("syntax".into()));
            let detail =
                format!("{} (syntax only: the semantic checker is not built yet)", plural(functions, "function"));
            out.summary(&record, true, &detail);
            0
        }
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("{n} {noun}") } else { format!("{n} {noun}s") }
}
