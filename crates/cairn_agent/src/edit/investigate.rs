//! The investigation of one function (protocol §7.3) from the host's compile of a program, for
//! the MCP `state` tool with `symbol`; the records come from the caller (the history's file is IO).

use serde_json::Value;

use super::{Answer, EditHost, Sources};

impl EditHost {
    /// `cairn.investigation/1` for `symbol` of `sources`, built from `records`.
    pub fn investigation(&mut self, sources: Sources, symbol: &str, records: &[crate::history::Record]) -> Answer {
        self.settle();
        let (index, _) = self.program(sources);
        if let Some(refusal) = self.ws_mut(index).check().refusal {
            return self.compiler_refusal(&refusal.first, Some(index)).into();
        }
        let workspace = self.ws(index);
        let Some(item) = crate::program::resolve_function(workspace, symbol).ok() else {
            return self
                .rejection("E-SYMBOL", format!("{symbol} names no single function: name it with its module."))
                .detail("symbol", Value::from(symbol))
                .into();
        };
        let investigation = crate::investigation::investigation(workspace, item, records);
        Answer::ok(super::records::to_map(&investigation))
    }
}
