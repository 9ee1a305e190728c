//! Steps 2 and 4 of judging a reply: splice it into the pinned original (an expression in
//! parentheses), then check the whole program with it through the shared workspace and put the
//! original back.
//!
//! Invariant: the workspace gets the *smallest* edit with the same result (common prefix and
//! suffix removed), which its block fast path re-checks as one body plus the whole-program
//! record; the undo is that edit's inverse, and the original is checked again (one body again),
//! so the workspace always rests at the pinned original and its last record — which packets,
//! states and the next reply read — is the original's.

use cairn_hir::Item;
use cairn_syntax::{TextEdit, TextRange, TextSize};
use serde_json::Value;

use super::checked::Checked;
use super::contracts::emitted_code;
use super::effects::moved_rows;
use crate::edit::EditHost;
use crate::edit::records::SiteCounts;
use crate::edit::refusal::{Refusal, ReplySpan};
use crate::equiv;
use crate::program::row_of;

/// A reply spliced into its session's pinned file.
pub(in crate::edit) struct Splice {
    pub file: usize,
    /// The byte range of the pinned original it replaces.
    pub start: usize,
    pub end: usize,
    /// The reply as spliced (an expression reply in parentheses).
    pub wrapped: String,
    pub is_expr: bool,
    /// The pinned original's text in `start..end`, and the rest of the lines it touches before
    /// and after it: all that the token check reads. The whole file is not copied (an edit costs
    /// in proportion to itself, not to the file: issue 22).
    pub replaced: String,
    pub line_before: String,
    pub line_after: String,
}

impl Splice {
    /// The whole file with the reply in, made from the pinned original's text (for a refusal).
    pub fn candidate(&self, original: &str) -> String {
        format!("{}{}{}", &original[..self.start], self.wrapped, &original[self.end..])
    }
}

impl EditHost {
    /// The reply spliced in place of the session's body, or of expression site `site`.
    pub(super) fn splice(&self, index: usize, site: Option<usize>, replacement: &str) -> Splice {
        let session = &self.sessions[index];
        let (span, wrapped) = match site {
            Some(i) => (session.sites[i], format!("({replacement})")),
            None => (session.body, replacement.to_string()),
        };
        let original = &self.programs[session.program].sources.files[session.file].text;
        let (start, end) = (usize::from(span.start()), usize::from(span.end()));
        let line_start = original[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = original[end..].find('\n').map_or(original.len(), |i| end + i);
        Splice {
            file: session.file,
            start,
            end,
            wrapped,
            is_expr: site.is_some(),
            replaced: original[start..end].to_string(),
            line_before: original[line_start..start].to_string(),
            line_after: original[end..line_end].to_string(),
        }
    }

    /// Checks the whole program with the splice in, reads what the later steps judge, and puts
    /// the original back; a compiler refusal of the candidate is located in the reply.
    pub(super) fn check_spliced(&mut self, index: usize, item: Item, splice: &Splice) -> Result<Checked, Refusal> {
        let start = splice.start;
        let edit = TextEdit::smallest(&splice.replaced, &splice.wrapped, start);
        let kept = edit.delete - TextSize::from(start as u32);
        let undo = TextEdit {
            delete: TextRange::at(edit.delete.start(), TextSize::of(edit.insert.as_str())),
            insert: splice.replaced[kept].to_string(),
        };
        let session = &self.sessions[index];
        let preserve = session.contract.get("preserve").and_then(Value::as_str).map(str::to_string);
        let program = session.program;
        let workspace = self.ws_mut(program);
        let before_rows = workspace.last_rows();
        let original_code = if preserve.is_some() { emitted_code(workspace, item) } else { None };
        let signature_before = cairn_hir::render::signature_text(workspace.db(), item, true);
        let functions_before = workspace.function_count();
        workspace.edit_file(splice.file, &edit);
        let outcome = workspace.check();
        let result = match outcome.refusal {
            Some(refusal) => Err(refusal.first),
            None => {
                let after_rows = workspace.last_rows();
                let code = if preserve.is_some() { emitted_code(workspace, item) } else { None };
                // The candidate's MIR, for the equivalence check of a preserve contract.
                let lowered = if preserve.is_some() && code != original_code {
                    equiv::Lowered::closure(workspace, item)
                } else {
                    None
                };
                Ok(Checked {
                    row: row_of(after_rows.as_deref(), item),
                    sites: SiteCounts::of(workspace, item),
                    signature_changed: cairn_hir::render::signature_text(workspace.db(), item, true)
                        != signature_before,
                    functions_changed: workspace.function_count() != functions_before,
                    callees: workspace.callees(item).iter().map(|c| workspace.full_name(*c).to_string()).collect(),
                    moved: moved_rows(workspace, before_rows.as_deref(), after_rows.as_deref(), item),
                    preserve,
                    original_code,
                    code,
                    lowered,
                })
            }
        };
        workspace.edit_file(splice.file, &undo);
        workspace.check();
        result.map_err(|first| {
            let reply = ReplySpan { start, replacement_len: splice.wrapped.len(), prefix: usize::from(splice.is_expr) };
            let candidate = splice.candidate(&self.programs[program].sources.files[splice.file].text);
            let refusal = self.compiler_refusal_at(&first, Some(program), Some((splice.file, &candidate, reply)));
            match self.callee_hint(index, &first) {
                Some(hint) => refusal.hint(hint),
                None => refusal,
            }
        })
    }
}
