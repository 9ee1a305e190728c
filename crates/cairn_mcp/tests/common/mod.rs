//! What the MCP crate's tests share: a scratch directory removed on drop, and a tool call read
//! as `(record, isError)`.

use std::path::PathBuf;

use cairn_mcp::Server;
use serde_json::{Map, Value};

/// A temporary directory, `<tmp>/cairn-mcp-<tag>-<pid>`, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cairn-mcp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    #[allow(dead_code)] // not every test file names files inside its scratch
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Calls `tool` (a JSON-RPC error fails the test) and returns the record and `isError`.
#[allow(dead_code)] // cold.rs reads whole results
pub fn call(server: &mut Server, tool: &str, arguments: Value) -> (Map<String, Value>, bool) {
    let result = server.call(tool, &arguments).expect("a tool result");
    (result.record, result.is_error)
}

/// A runner whose every block returns and prints nothing: validation agrees on every case. This
/// crate builds nothing natively; validation itself is tested through the binary
/// (crates/cairn_cli/tests/implementation_sessions.rs).
#[allow(dead_code)]
pub struct Silent;

impl cairn_agent::validate::Runner for Silent {
    fn run(
        &self,
        _: &[cairn_agent::edit::SourceText],
        blocks: &[String],
        _: u64,
    ) -> Result<Vec<Result<cairn_agent::validate::Outcome, String>>, String> {
        Ok(blocks.iter().map(|_| Ok(cairn_agent::validate::Outcome::new(true, Vec::new(), ""))).collect())
    }

    /// Emulating changes nothing for a runner that runs nothing.
    fn emulating(&self, _: &str) -> Result<Box<dyn cairn_agent::validate::Runner + '_>, String> {
        Ok(Box::new(Silent))
    }
}
