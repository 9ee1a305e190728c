//! The `cairn.edit/2` request (protocol §3): its shape — a JSON object of finite numbers, a
//! known kind with exactly its keys, the protocol, a handle the host issued — then the answer
//! its kind gets: a reply judged, an expand, a state or a delta.
//!
//! Boundary: `shot` is a known kind this host does not offer yet (native shots), refused after
//! the shape is judged; so is `explain` when the host was asked without a native toolchain at hand
//! (`request` rather than `request_with`). `predict` is answered from `cairn predict`'s model and
//! `explain` from the caller's toolchain (`predict.rs` beside this file).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::refusal::Refusal;
use super::sessions::site_index;
use super::{Answer, EditHost, REPLACEMENT_LIMIT};

impl EditHost {
    /// Answers one request (the host settled first).
    pub(super) fn answer_request(&mut self, value: &Value, native: Option<&dyn crate::validate::Runner>) -> Answer {
        let (index, kind, request) = match self.session_of(value) {
            Ok(found) => found,
            Err(refusal) => return refusal.into(),
        };
        match kind {
            "body" | "expr" => match self.reply_of(index, request) {
                Ok((site, replacement)) => self.judge(index, site, replacement),
                Err(refusal) => refusal.into(),
            },
            "expand" => self.expand(index, request.get("symbols").unwrap_or(&Value::Null)),
            "state" => self.state(index),
            "delta" => {
                let since = request.get("since").and_then(Value::as_str).unwrap_or("");
                self.delta(index, since)
            }
            "predict" => self.predict(index, request.get("sizes").unwrap_or(&Value::Null)),
            "explain" if native.is_some() => self.explain(index, native.unwrap_or(&super::predict::NoNative)),
            _ => self
                .rejection(
                    "E-REQUEST",
                    format!("{kind} needs native builds and the cost model, which this host does not offer yet."),
                )
                .into(),
        }
    }

    /// The session a well-formed request names (loaded and marked used), its kind, and the
    /// request object.
    fn session_of<'v>(&mut self, value: &'v Value) -> Result<(usize, &'v str, &'v Map<String, Value>), Refusal> {
        let Value::Object(request) = value else {
            return Err(self.rejection("E-REQUEST", "A request is a JSON object."));
        };
        if !crate::strict::finite(value) {
            return Err(self.rejection("E-REQUEST", "A request holds no NaN or infinite number."));
        }
        let kind = request.get("kind").and_then(Value::as_str).unwrap_or("");
        let extra: &[&str] = match kind {
            "body" => &["replacement"],
            "expr" => &["site", "replacement"],
            "expand" => &["symbols"],
            "explain" | "state" => &[],
            "predict" => &["sizes"],
            "shot" => &["functions"],
            "delta" => &["since"],
            _ => {
                return Err(self.rejection(
                    "E-REQUEST",
                    "kind is one of body, expr, expand, explain, predict, shot, state, delta.",
                ));
            }
        };
        let expected: BTreeSet<&str> = ["protocol", "handle", "kind"].iter().chain(extra).copied().collect();
        self.exact_keys(request, &expected, &format!("A {kind} request"))?;
        if request.get("protocol").and_then(Value::as_str) != Some("cairn.edit/2") {
            return Err(self.rejection("E-REQUEST", "protocol must be \"cairn.edit/2\"."));
        }
        let Some(handle) = request.get("handle").and_then(Value::as_str) else {
            return Err(self.rejection("E-SESSION", "handle must be a string the host issued."));
        };
        let Some(index) = self.sessions.iter().position(|s| s.handle == handle) else {
            return Err(self.rejection("E-SESSION", format!("No session has the handle {handle}.")));
        };
        let program = self.sessions[index].program;
        self.load(program);
        self.sessions[index].used = self.clock;
        Ok((index, kind, request))
    }

    /// A reply's replacement (a string within [`REPLACEMENT_LIMIT`]) and, for `expr`, the
    /// index of its site.
    fn reply_of<'v>(&self, index: usize, request: &'v Map<String, Value>) -> Result<(Option<usize>, &'v str), Refusal> {
        let Some(replacement) = request.get("replacement").and_then(Value::as_str) else {
            return Err(self.rejection("E-REQUEST", "replacement must be a string."));
        };
        if replacement.len() > REPLACEMENT_LIMIT {
            return Err(self.rejection("E-REQUEST", format!("A replacement holds at most {REPLACEMENT_LIMIT} bytes.")));
        }
        let Some(site) = request.get("site") else { return Ok((None, replacement)) };
        let count = self.sessions[index].sites.len();
        match site.as_str().and_then(site_index).filter(|i| *i < count) {
            Some(i) => Ok((Some(i), replacement)),
            None => Err(self.rejection(
                "E-SITE",
                format!(
                    "{site} is not an expression site of this session; the packet's sites are x0 to x{}.",
                    count.saturating_sub(1)
                ),
            )),
        }
    }
}
