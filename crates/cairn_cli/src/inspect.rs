//! `cairn inspect`: what an editing agent would receive for one function, without a host
//! (tools.md §3.8) — the session-level packet with the fields the edit host keeps to itself.
//!
//! The record is JSON in both output modes (it is made for programs, like `cairn state`). Exit 0
//! with the packet, 1 when the open is refused (the refusal record), 2 when the program cannot be
//! read.

use std::path::Path;

use cairn_agent::edit::{EditHost, OpenRequest};

use crate::check::sources_of;
use crate::output::Output;

pub struct InspectFlags {
    pub symbol: String,
    pub scope: Option<String>,
    pub expand: Vec<String>,
    pub explain: bool,
}

pub fn run(path: &Path, flags: &InspectFlags, out: Output) -> u8 {
    let Some(program) = crate::check::load_program(path, out) else { return 2 };
    let sources = sources_of(&program);
    let mut host = EditHost::new();
    let request = OpenRequest { symbol: flags.symbol.clone(), scope: flags.scope.clone(), ..OpenRequest::default() };
    let answer = if flags.explain {
        let native = crate::validate::NativeRunner::new(Some(program.clone()), 1);
        host.inspect_explained(sources, request, &flags.expand, &native)
    } else {
        host.inspect(sources, request, &flags.expand)
    };
    out.json(&answer.record);
    if answer.refused { 1 } else { 0 }
}
