//! What the modules of a multi-project program may be (language §23.2): a dependency contributes
//! only modules (nothing in the root namespace), no project declares a `std.*` module or reopens
//! a module another project declares, and a dependency never supplies `main`. Judged when the
//! program is read, from each file's `module` lines, so every command and host refuses such a
//! program the same way — as an environment error, like every other manifest rule.
//!
//! A source's structure is read line by line, without the parser (this crate is below it): a
//! `module a.b;` line switches the module, a file without one continues the one before it in
//! the same project, and comments (`//` to the end of a line) are skipped.

use crate::{EnvironmentError, SourceFile};

/// The module names a line declares (`module a.b;`), if it is a module line. Every line of
/// every file passes here when a program is read: a line that does not begin with `module` is
/// turned away before any search for a comment (which cost 4 ms of an 86k-line file's read).
fn module_line(line: &str) -> Option<&str> {
    if !line.trim_start().starts_with("module") {
        return None;
    }
    let code = line.split("//").next().unwrap_or("").trim();
    let rest = code.strip_prefix("module")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let name = rest.trim().strip_suffix(';')?.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')).then_some(name)
}

/// The lines of `text` in which `word` occurs, each once, in order (as `str::lines` gives them,
/// without their line ending).
fn lines_with<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = &'a str> {
    let mut after = 0usize;
    // memchr's vectorised search: the standard library's two-way search took 1.4 ms of every
    // 86k-line open (issue 22).
    memchr::memmem::find_iter(text.as_bytes(), word.as_bytes()).filter_map(move |at| {
        if at < after {
            return None;
        }
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        after = end;
        let line = &text[start..end];
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// True when a line holds code (not blank, not only a comment).
fn is_code(line: &str) -> bool {
    let start = line.trim_start();
    !start.is_empty() && !start.starts_with("//")
}

/// True when a line declares a function named `main` (`fn main(`, `pub fn main(`).
fn declares_main(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("").trim();
    let code = code.strip_prefix("pub ").map(str::trim_start).unwrap_or(code);
    code.strip_prefix("fn")
        .filter(|rest| rest.starts_with(char::is_whitespace))
        .and_then(|rest| rest.trim_start().strip_prefix("main"))
        .is_some_and(|after| after.trim_start().starts_with(['(', '[']))
}

/// Refuses a program whose projects break a namespace rule of language §23.2 (see the module
/// comment); `root` is the root project's name.
pub(crate) fn check(files: &[SourceFile], root: &str) -> Result<(), EnvironmentError> {
    // Which project first declared each module.
    let mut owners: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None; // (project, module)
    for file in files {
        let dependency = file.project != root;
        let mut module = current.as_ref().filter(|(p, _)| *p == file.project).map(|(_, m)| m.clone());
        // The root project's files matter here only for their `module` lines: only the lines
        // where `module` occurs are looked at (a read of an 86k-line file spent 2 ms walking
        // every line); a dependency's lines are all looked at.
        let lines: Box<dyn Iterator<Item = &str>> =
            if dependency { Box::new(file.text.lines()) } else { Box::new(lines_with(&file.text, "module")) };
        for line in lines {
            if let Some(name) = module_line(line) {
                if name == "std" || name.starts_with("std.") {
                    return Err(EnvironmentError::new(format!(
                        "{} declares `module {name};`: the std.* modules are the toolchain's, and no project may declare one (language §23.2). Rename the module.",
                        file.name
                    )));
                }
                match owners.iter().find(|(m, _)| m == name) {
                    Some((_, owner)) if *owner != file.project => {
                        return Err(EnvironmentError::new(format!(
                            "{} reopens module {name}, which project {owner} declares: no project may reopen another project's module (language §23.2). Name a module of your own.",
                            file.name
                        )));
                    }
                    Some(_) => {}
                    None => owners.push((name.to_string(), file.project.clone())),
                }
                module = Some(name.to_string());
                continue;
            }
            if !dependency || !is_code(line) {
                continue;
            }
            if module.is_none() {
                return Err(EnvironmentError::new(format!(
                    "{} (of dependency {}) declares outside a module: a dependency contributes only modules (language §23.2). Begin the file with `module {}.…;`.",
                    file.name, file.project, file.project
                )));
            }
            if declares_main(line) {
                return Err(EnvironmentError::new(format!(
                    "{} (of dependency {}) declares `fn main`: a dependency never supplies main (language §23.2). Rename it, or move the program's entry into the root project.",
                    file.name, file.project
                )));
            }
        }
        current = module.map(|m| (file.project.clone(), m));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, project: &str, text: &str) -> SourceFile {
        SourceFile { name: name.into(), path: name.into(), text: text.into(), had_bom: false, project: project.into() }
    }

    #[test]
    fn lines_are_read_as_the_grammar_writes_them() {
        assert_eq!(module_line("module geo.shapes;"), Some("geo.shapes"));
        assert_eq!(module_line("  module a ; // trailing"), Some("a"));
        assert_eq!(module_line("// module a;"), None);
        assert_eq!(module_line("modules a;"), None);
        assert!(declares_main("fn main() -> i32 {"));
        assert!(declares_main("pub fn main () -> i32 = 0;"));
        assert!(!declares_main("fn mainly() -> i32 = 0;"));
        assert!(!declares_main("// fn main()"));
        assert!(!declares_main("fnmain() -> i32 = 0;"));
        for (line, code) in [("", false), ("   ", false), ("  // c", false), ("x // c", true), ("/ /", true)] {
            assert_eq!(is_code(line), code, "{line:?}");
            assert_eq!(is_code(line), !line.split("//").next().unwrap_or("").trim().is_empty(), "{line:?}");
        }
        assert_eq!(module_line("\tmodule a.b; // x"), Some("a.b"));
        assert_eq!(module_line("x = 1; module a;"), None);
        let text = "fn a() {}\r\n  module x.y; // module\r\nmodule z;\nfn modules() {}\nmodule";
        let every: Vec<&str> = text.lines().filter(|l| l.contains("module")).collect();
        assert_eq!(lines_with(text, "module").collect::<Vec<_>>(), every);
        assert_eq!(every.len(), 4);
    }

    #[test]
    fn each_rule_of_the_namespaces_refuses_and_a_good_program_passes() {
        let dep = |text: &str| file("deps/ring/src/a.cairn", "ring", text);
        let root = |text: &str| file("src/main.cairn", "app", text);
        let good = [
            dep("module ring.core;\npub fn push() {}\n"),
            dep("pub fn more() {}\n"),
            root("fn main() -> i32 { return 0; }\n"),
        ];
        assert!(check(&good, "app").is_ok());
        let cases: [(Vec<SourceFile>, &str); 4] = [
            (vec![dep("// a comment\npub fn rootfn() {}\n")], "declares outside a module"),
            (
                vec![dep("module ring.core;\npub fn x() {}\n"), root("module ring.core;\nfn y() {}\n")],
                "reopens module ring.core",
            ),
            (vec![root("module std.mine;\n")], "std.* modules"),
            (vec![dep("module ring.core;\npub fn main() -> i32 { return 3; }\n")], "never supplies main"),
        ];
        for (files, says) in cases {
            let error = check(&files, "app").expect_err(says);
            assert!(error.message.contains(says), "{}", error.message);
        }
        // A dependency's header-less second file does not continue the root's module.
        let crossing = [root("module app;\nfn f() {}\n"), dep("pub fn g() {}\n")];
        assert!(check(&crossing, "app").is_err());
    }
}
