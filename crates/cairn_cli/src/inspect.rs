//! `cairn inspect`: what an editing agent would receive for one function, without a host
//! (tools.md §3.8) — the session-level packet with the fields the edit host keeps to itself.
//!
//! The record is JSON in both output modes (it is made for programs, like `cairn state`). Exit 0
//! with the packet, 1 when the open is refused (the refusal record), 2 when the program cannot be
//! read.

use std::path::Path;

use cairn_agent::edit::{EditHost, OpenRequest};

use crate::check::sources_of;
pub use crate::cli::SessionKind;
use crate::output::Output;

pub struct InspectFlags {
    pub symbol: String,
    pub scope: Option<String>,
    pub expand: Vec<String>,
    pub explain: bool,
    pub session: SessionKind,
}

pub fn run(path: &Path, flags: &InspectFlags, out: Output) -> u8 {
    let Some(program) = crate::check::load_program(path, out) else { return 2 };
    let sources = sources_of(&program);
    let mut host = EditHost::new();
    if flags.session != SessionKind::Edit {
        if flags.explain || flags.scope.is_some() || !flags.expand.is_empty() {
            out.environment("--explain, --scope and --expand belong to edit sessions; inspect a plan or implementation packet without them.");
            return 2;
        }
        let answer = match flags.session {
            SessionKind::Plan => {
                let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
                let origin = program.manifest_path.clone().unwrap_or_else(|| program.root.clone());
                host.plan_open(
                    sources,
                    &origin.display().to_string(),
                    &flags.symbol,
                    &[],
                    &cairn_agent::predict::Profile::default_for(lanes),
                )
            }
            _ => {
                // The policy the project's regressions file pins, as an implementation session would.
                let file =
                    program.root.join("regressions").join(cairn_agent::validate::regressions_name(&flags.symbol));
                let kept = std::fs::read(file).ok().and_then(|b| cairn_agent::validate::Regressions::parse(&b).ok());
                let policy = kept.as_ref().map(|k| k.policy.clone()).unwrap_or_default();
                host.implementation_open(
                    sources,
                    cairn_agent::edit::ImplementationOpen {
                        reference: flags.symbol.clone(),
                        policy,
                        kept,
                        ..Default::default()
                    },
                )
            }
        };
        out.json(&answer.record);
        return if answer.refused { 1 } else { 0 };
    }
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
