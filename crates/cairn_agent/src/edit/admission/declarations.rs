//! Step 5 of judging a reply: the declarations stay — the target's signature (`E-SIGNATURE`)
//! and the program's set of functions (`E-DECLARATION`).
//!
//! Boundary: a reply cannot reach either through splicing today (the span starts at the body,
//! and a reply is exactly one block or expression); they are kept as guards.

use super::checked::Checked;
use crate::edit::EditHost;
use crate::edit::refusal::Refusal;

impl EditHost {
    /// The signature of the target and the set of functions are as before.
    pub(super) fn declarations_kept(&self, index: usize, checked: &Checked) -> Result<(), Refusal> {
        if checked.signature_changed {
            let symbol = &self.sessions[index].symbol;
            return Err(self.rejection("E-SIGNATURE", format!("The signature of {symbol} must stay as it is.")));
        }
        if checked.functions_changed {
            return Err(self.rejection("E-DECLARATION", "The set of functions must stay as it is."));
        }
        Ok(())
    }
}
