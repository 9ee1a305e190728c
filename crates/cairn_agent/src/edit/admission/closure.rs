//! Step 7 of judging a reply: the context stays closed (`E-CONTEXT-CLOSURE`) — the new body
//! calls only functions the session disclosed, so an agent never relies on a function it was
//! not shown.

use serde_json::Value;

use super::checked::Checked;
use crate::edit::EditHost;
use crate::edit::refusal::Refusal;

impl EditHost {
    /// Every callee of the new body is disclosed.
    pub(super) fn callees_disclosed(&self, index: usize, checked: &Checked) -> Result<(), Refusal> {
        let visible = &self.sessions[index].visible;
        let undisclosed: Vec<&str> =
            checked.callees.iter().filter(|c| !visible.contains(*c)).map(String::as_str).collect();
        if undisclosed.is_empty() {
            return Ok(());
        }
        Err(self
            .rejection(
                "E-CONTEXT-CLOSURE",
                format!("The new body calls functions this session has not disclosed: {}.", undisclosed.join(", ")),
            )
            .detail("symbols", Value::from(undisclosed))
            .hint("Send an expand request naming them first, then use them."))
    }
}
