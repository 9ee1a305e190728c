//! `cairn find`: callable functions, ranked, from free words or the types of the values an agent
//! holds (tools.md §3.11). The query itself lives in `cairn_agent::find`, which the MCP server
//! calls too; this module only reads the flags and the program and prints the answer.
//!
//! The program searched is `--in PATH`, else the project here when `./cairn.toml` exists, else
//! none (builtins and the library only). Exit: 0 with an answer (even an empty one, or one whose
//! program was refused), 1 when the query is refused, 2 when the program cannot be read.

use std::path::{Path, PathBuf};

use cairn_agent::find::{FindQuery, find, human_text, limit_from};
use cairn_diagnostics::record::diagnostic_record;

use crate::check::sources_of;
use crate::output::{FormatChoice, Output};

/// The flags of one `cairn find`.
#[derive(Debug, Clone)]
pub struct FindFlags {
    pub words: Vec<String>,
    pub takes: Vec<String>,
    pub returns: Option<String>,
    pub effects: Option<String>,
    /// As given: an out-of-range value (a negative one included) is the query's refusal.
    pub limit: i64,
    pub program: Option<PathBuf>,
}

pub fn run(flags: &FindFlags, out: Output) -> u8 {
    let path = match &flags.program {
        Some(path) => Some(path.clone()),
        None => Path::new("cairn.toml").is_file().then(|| PathBuf::from("cairn.toml")),
    };
    let sources = match path.as_deref().map(cairn_vfs::load).transpose() {
        Ok(program) => program.as_ref().map(sources_of),
        Err(error) => {
            out.environment(&error.message);
            return 2;
        }
    };
    let answer = match limit_from(flags.limit) {
        Ok(limit) => {
            let query = FindQuery {
                words: flags.words.clone(),
                takes: flags.takes.clone(),
                returns: flags.returns.clone(),
                effects: flags.effects.clone(),
                limit,
            };
            find(&query, sources.as_ref())
        }
        Err(refusal) => Err(refusal),
    };
    match answer {
        Ok(record) => {
            match out.format {
                FormatChoice::Json => out.json(&record),
                FormatChoice::Human => out.text(&human_text(&record)),
            }
            0
        }
        Err(diagnostic) => {
            out.refusal(&diagnostic_record(&diagnostic), &|_, _| None);
            1
        }
    }
}
