//! The `cairn.edit/1` path (protocol §2.3, §3.3): a reply bound to a session digest rather
//! than a handle, its site named by a key over the source digest, the symbol and the site's
//! character range — what `cairn inspect`'s draft targets.

use std::collections::BTreeSet;

use serde_json::Value;

use super::refusal::Refusal;
use super::sessions::Session;
use super::{Answer, EditHost, REPLACEMENT_LIMIT};
use crate::canonical::digest;

impl EditHost {
    /// Answers a `cairn.edit/1` request (the host settled first).
    pub(super) fn answer_v1(&mut self, value: &Value) -> Answer {
        match self.reply_v1(value) {
            Ok((index, site, replacement)) => self.judge(index, site, replacement),
            Err(refusal) => refusal.into(),
        }
    }

    /// The `cairn.edit/1` key of expression site `index` (protocol §2.3).
    pub(super) fn site_key(&self, session: &Session, index: usize) -> String {
        let program = &self.programs[session.program];
        let range = session.sites[index];
        let start = program.sources.combined_chars(session.file, usize::from(range.start()));
        let end = program.sources.combined_chars(session.file, usize::from(range.end()));
        let key = (program.source_sha(), &session.symbol, start, end);
        digest(&serde_json::to_value(key).unwrap_or_default())
    }

    /// The session a well-formed `cairn.edit/1` request is bound to (its program loaded), the
    /// index of its site for `expr`, and the replacement.
    fn reply_v1<'v>(&mut self, value: &'v Value) -> Result<(usize, Option<usize>, &'v str), Refusal> {
        let Value::Object(request) = value else {
            return Err(self.rejection("E-REQUEST", "A request is a JSON object."));
        };
        let kind = request.get("kind").and_then(Value::as_str).unwrap_or("");
        let mut expected: BTreeSet<&str> = ["protocol", "session", "kind", "replacement"].into_iter().collect();
        if kind == "expr" {
            expected.insert("site");
        }
        self.exact_keys(request, &expected, &format!("A cairn.edit/1 {kind} request"))?;
        if request.get("protocol").and_then(Value::as_str) != Some("cairn.edit/1") {
            return Err(self.rejection("E-REQUEST", "protocol must be \"cairn.edit/1\" for a session-bound request."));
        }
        let digest_given = request.get("session").and_then(Value::as_str).unwrap_or("");
        let Some(index) = self.sessions.iter().position(|s| s.digest == digest_given) else {
            return Err(self.rejection(
                "E-SESSION",
                "The session digest is not a current session's; take the digest from the newest packet.",
            ));
        };
        if kind != "body" && kind != "expr" {
            return Err(self.rejection("E-REQUEST", "A cairn.edit/1 request is of kind body or expr."));
        }
        let Some(replacement) = request.get("replacement").and_then(Value::as_str) else {
            return Err(self.rejection("E-REQUEST", "replacement must be a string."));
        };
        if replacement.len() > REPLACEMENT_LIMIT {
            return Err(self.rejection("E-REQUEST", format!("A replacement holds at most {REPLACEMENT_LIMIT} bytes.")));
        }
        self.load(self.sessions[index].program);
        if kind != "expr" {
            return Ok((index, None, replacement));
        }
        let key = request.get("site").and_then(Value::as_str).unwrap_or("");
        let session = &self.sessions[index];
        match (0..session.sites.len()).find(|i| self.site_key(session, *i) == key) {
            Some(i) => Ok((index, Some(i), replacement)),
            None => Err(self.rejection("E-SITE", "The site key names no expression site of this session.")),
        }
    }
}
