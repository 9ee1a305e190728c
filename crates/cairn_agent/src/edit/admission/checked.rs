//! The records the steps of judging a reply hand each other: what the check of the spliced
//! reply found (`Checked`, made by `splice.rs`, read by the effect and contract steps), and the
//! other functions whose rows moved with it (`Moved`).

use crate::edit::records::SiteCounts;
use crate::equiv;

/// What the check of a spliced reply found, read before the original was put back.
pub(in crate::edit) struct Checked {
    pub row: Vec<String>,
    pub sites: SiteCounts,
    pub signature_changed: bool,
    pub functions_changed: bool,
    /// The target's callees with the reply in, by full name.
    pub callees: Vec<String>,
    /// Other own functions whose rows moved.
    pub moved: Vec<Moved>,
    /// Under a preserve contract: the preserve kind, the emitted code before and after, and the
    /// candidate's MIR when the codes differ (for the Z3 comparison).
    pub preserve: Option<String>,
    pub original_code: Option<Vec<cairn_mir::Function>>,
    pub code: Option<Vec<cairn_mir::Function>>,
    pub lowered: Option<equiv::Lowered>,
}

/// Another function whose row moved with an edit.
pub(in crate::edit) struct Moved {
    pub module: String,
    pub local: String,
    pub name: String,
    pub signature: String,
    pub row: Vec<String>,
    pub gained: Vec<String>,
}
