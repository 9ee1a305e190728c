//! The agent protocol of CAIRN (protocol.md): what the hosts, the MCP server and the command line
//! say to agents: the program state (`cairn.state/1`) and its deltas, the canonical JSON and
//! digests they are sealed with, the edit host, `find`, the comparison of functions between
//! programs that `diff`, `verify`, `preserve` and `references` share (`equiv`), and the
//! decisions of `cairn diff` (`diff`: classes, renames, semver; its IO is the caller's).

pub mod canonical;
pub mod choices;
pub mod compiler;
pub mod diff;
pub mod edit;
pub mod equiv;
pub mod find;
pub mod history;
pub mod investigation;
pub mod named;
pub mod plans;
pub mod predict;
pub mod program;
pub mod state;
pub mod strict;
pub mod tune;
pub mod validate;

/// The analysis stack (`cairn_hir::stack`), for the servers above this crate that run the hosts
/// on threads of their own (docs/architecture.md: the one re-export across crates).
pub use cairn_hir::stack;
pub use compiler::profile;
pub use state::{StateError, apply_delta, delta, state_of, state_record};
