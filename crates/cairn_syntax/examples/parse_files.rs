//! Parses the `.cairn` files named on the command line (directories are walked) and prints, per
//! file, its syntax errors; with `--tree`, the whole tree. A tool for looking at the parser by
//! hand: `cargo run -p cairn_syntax --example parse_files -- [--tree] PATH…`.

use std::path::{Path, PathBuf};

fn main() {
    let mut tree = false;
    let mut paths = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--tree" {
            tree = true;
        } else {
            collect(Path::new(&arg), &mut paths);
        }
    }
    let (mut clean, mut failed) = (0, 0);
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let parse = cairn_syntax::parse(&text);
        assert_eq!(parse.syntax_node().to_string(), text, "lossless: {}", path.display());
        if tree {
            print!("{}", parse.debug_dump());
        }
        if parse.ok() {
            clean += 1;
            continue;
        }
        failed += 1;
        for error in parse.errors() {
            let start = usize::from(error.range.start());
            let line = text[..start].matches('\n').count() + 1;
            let column = text[..start].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            println!("{}:{line}:{column}: {}: {}", path.display(), error.code, error.message);
        }
    }
    println!("{clean} clean, {failed} with errors");
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(path).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        for entry in entries {
            collect(&entry, out);
        }
    } else if path.extension().is_some_and(|e| e == "cairn") {
        out.push(path.to_path_buf());
    }
}
