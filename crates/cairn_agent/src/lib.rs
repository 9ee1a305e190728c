//! The agent protocol of CAIRN (protocol.md): what the hosts, the MCP server and the command line
//! say to agents. For now: the program state (`cairn.state/1`), its deltas, and the canonical
//! JSON and digests they are sealed with.

pub mod canonical;
pub mod edit;
pub mod find;
pub mod state;
pub mod strict;

pub use state::{StateError, apply_delta, delta, state_record};
