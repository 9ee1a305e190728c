//! `cairn doc`: an API reference in Markdown generated from the checked program (tools.md §3.7).
//!
//! Per module (sorted; the root first, headed `# root module`) one fenced `cairn` block holds,
//! per declaration: a comment line naming the source file and carrying the comment written above
//! the declaration, then the declaration itself — records, sums, tag-only enums and constants
//! first, then functions in source order, each function followed by its inferred row as
//! `// effects: …`. In a named module only `pub` declarations are shown. A line that would pass
//! 120 characters puts the row on its own comment line above the declaration instead. With
//! `--std` the packaged standard library is documented, needing no project.
//!
//! The output is Markdown, not JSON, in both modes. A refused program is not documented: its
//! refusal is printed as `cairn check` prints it (exit 1).

use std::collections::BTreeSet;
use std::path::Path;

use cairn_diagnostics::record::refusal_record;
use cairn_hir::{DeclarationKind, DeclarationView, SourceText, StateView, Workspace};

use crate::check::load_workspace;
use crate::output::Output;

/// Lines are kept within this width where the text allows (the comment prefix included).
const WIDTH: usize = 120;

pub fn run(path: &Path, modules: &[String], std_library: bool, out: Output) -> u8 {
    let (mut workspace, wanted) = if std_library {
        let names: Vec<String> =
            modules.iter().map(|m| if m.starts_with("std.") { m.clone() } else { format!("std.{m}") }).collect();
        for name in &names {
            if cairn_hir::library::module(name).is_none() {
                out.environment(&format!("No packaged module {name}: `cairn doc --std` documents {}.", packaged()));
                return 2;
            }
        }
        let imports: String = cairn_hir::library::MODULES.iter().map(|m| format!("import {};\n", m.name)).collect();
        let workspace = Workspace::new(vec![SourceText { name: "std.cairn".into(), text: imports }]);
        let wanted: BTreeSet<String> = if names.is_empty() {
            cairn_hir::library::MODULES.iter().map(|m| m.name.to_string()).collect()
        } else {
            names.into_iter().collect()
        };
        (workspace, Some(wanted))
    } else {
        let Some(program) = crate::check::load_program(path, out) else { return 2 };
        let wanted = (!modules.is_empty()).then(|| modules.iter().cloned().collect());
        (load_workspace(&program), wanted)
    };
    let view = workspace.state_view(std_library);
    if let Some((_, _)) = &view.first {
        let outcome = workspace.check();
        if let Some(refusal) = outcome.refusal {
            let lines = |file: Option<&str>, line: u32| workspace.line_text(file, line);
            out.refusal(&refusal_record(&refusal), &lines);
            return 1;
        }
    }
    out.text(&document(&view, std_library, wanted.as_ref()));
    std::mem::forget(workspace);
    0
}

fn packaged() -> String {
    cairn_hir::library::MODULES.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// The Markdown document of a checked program's view.
pub fn document(view: &StateView, library: bool, wanted: Option<&BTreeSet<String>>) -> String {
    let mut modules: BTreeSet<String> = BTreeSet::new();
    for declaration in view.functions.iter().chain(view.types.iter()).filter(|d| d.library == library) {
        modules.insert(declaration.module.to_string());
    }
    let chapters: Vec<String> = modules
        .iter()
        .filter(|m| wanted.is_none_or(|w| w.contains(*m)))
        .map(|module| chapter(view, module, library))
        .collect();
    let mut text = chapters.join("\n\n");
    text.push('\n');
    text
}

fn chapter(view: &StateView, module: &str, library: bool) -> String {
    let heading = if module.is_empty() { "# root module".to_string() } else { format!("# {module}") };
    let shown = |d: &&DeclarationView| &*d.module == module && d.library == library && (module.is_empty() || d.public);
    let mut entries: Vec<Vec<String>> = Vec::new();
    for kind in [
        DeclarationKind::Record,
        DeclarationKind::Sum,
        DeclarationKind::Enum,
        DeclarationKind::Const,
        DeclarationKind::Trait,
        DeclarationKind::Impl,
    ] {
        for declaration in view.types.iter().filter(shown).filter(|d| d.kind == kind) {
            let mut lines = comment_lines(declaration);
            lines.push(declaration.text.clone());
            entries.push(lines);
        }
    }
    for declaration in view.functions.iter().filter(shown).filter(|d| d.kind != DeclarationKind::Instance) {
        let prefix = if module.is_empty() { "" } else { "pub " };
        let signature = format!("{prefix}{}", declaration.text);
        let effects = match &declaration.row {
            Some(row) if row.is_empty() => "effects: none".to_string(),
            Some(row) => format!("effects: {}", row.iter().map(|e| &**e).collect::<Vec<_>>().join(", ")),
            None => "effects: unknown".to_string(),
        };
        let mut lines = comment_lines(declaration);
        if signature.len() + effects.len() + 5 <= WIDTH {
            lines.push(format!("{signature}  // {effects}"));
        } else {
            lines.extend(wrap(&effects, WIDTH - 3).into_iter().map(|l| format!("// {l}")));
            lines.push(signature);
        }
        entries.push(lines);
    }
    if entries.is_empty() {
        return heading;
    }
    let mut block = String::new();
    let mut previous_long = false;
    for (index, lines) in entries.iter().enumerate() {
        let long = lines.len() > 1;
        if index > 0 {
            block.push('\n');
            if long || previous_long {
                block.push('\n');
            }
        }
        block.push_str(&lines.join("\n"));
        previous_long = long;
    }
    format!("{heading}\n\n```cairn\n{block}\n```")
}

/// The comment line naming the source file, with the comment written above the declaration,
/// wrapped to the width.
fn comment_lines(declaration: &DeclarationView) -> Vec<String> {
    let text = if declaration.comment.is_empty() {
        declaration.file.clone()
    } else {
        format!("{}: {}", declaration.file, declaration.comment)
    };
    wrap(&text, WIDTH - 3).into_iter().map(|l| format!("// {l}")).collect()
}

/// Greedy word wrapping at `width` characters (a word longer than the width gets its own line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrapping_keeps_words_whole() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("abcdefgh ij", 5), ["abcdefgh", "ij"]);
    }
}
