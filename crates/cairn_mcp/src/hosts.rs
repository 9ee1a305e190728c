//! The tools of the plan and implementation hosts (protocol §16.2, §8, §9): `plan_open` and
//! `plan_reply`, `implementation_open` and `implementation_submit`, over the edit host's sessions.
//! On a path, an admitted plan and a validated implementation are written into their file through
//! the program's journal, like an admitted edit (`written` names the file; the session then stands
//! on what was written); with `source` nothing is written (`written: false`). `sizes` add the
//! function's predictions, priced by `$CAIRN_PROFILE` or the uncalibrated defaults.
//!
//! On a project the reference's regressions file (`regressions/<reference>.json` beside the
//! manifest) pins the policy: a session asking another is `E-TEST-POLICY`, and the cases a
//! failing submission keeps are written there. Validation runs through the server's runner (the
//! CLI hands in its native one); a server without one refuses a submission `E-VALIDATION`,
//! saying why. Selecting a validated implementation stays the host's decision: it is written, never
//! selected.

use std::path::PathBuf;

use cairn_agent::edit::{ImplementationOpen, SourceText};
use cairn_agent::validate::{Outcome, Policy, Regressions, Runner, parse_policy};
use serde_json::{Map, Value};

use crate::durable::{HostKind, SavedHost};
use crate::tools::{Server, ToolResult};
use crate::writeback::write_back;

/// Stands in for a runner where the server has none: every build is refused with the reason.
struct NoRunner;

impl Runner for NoRunner {
    fn run(&self, _: &[SourceText], _: &[String], _: u64) -> Result<Vec<Result<Outcome, String>>, String> {
        Err("this server cannot build and run programs natively (start it as `cairn mcp`)".into())
    }
}

impl Server {
    /// A server whose paths resolve inside `start`, validating through `runner`.
    pub fn with_runner(start: &std::path::Path, runner: Box<dyn Runner + Send>) -> Server {
        let mut server = Server::new(start);
        server.runner = Some(runner);
        server
    }

    pub(crate) fn implementation_open(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let reference = match self.required_text(arguments, "reference", "the function to implement") {
            Ok(reference) => reference,
            Err(refusal) => return refusal,
        };
        // `emulate` names the device target device work is validated against on host threads.
        let emulate = match arguments.get("emulate") {
            None => None,
            Some(Value::String(target)) => match cairn_vfs::check_device_target(target) {
                Ok(()) => Some(target.clone()),
                Err(why) => return ToolResult::error(self.host.refusal("E-TARGET", why, vec![])),
            },
            Some(_) => return self.request_refusal("emulate names a device target, as a string (sm_90).", vec![]),
        };
        let asked = match arguments.get("policy") {
            None => None,
            Some(Value::Object(policy)) => match parse_policy(Value::Object(policy.clone()).to_string().as_bytes()) {
                Ok(policy) => Some(policy),
                Err(why) => return ToolResult::error(self.host.refusal("E-TEST-POLICY", why, vec![])),
            },
            Some(_) => return self.request_refusal("policy must be an object.", vec![]),
        };
        let loaded = match self.program(arguments, false) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => unreachable!("a required program is present"),
            Err(refusal) => return refusal,
        };
        // On a project, the regressions file pins the policy.
        let file = loaded
            .disk
            .as_ref()
            .map(|disk| disk.root.join("regressions").join(cairn_agent::validate::regressions_name(&reference)));
        let kept = match file.as_ref().map(std::fs::read) {
            Some(Ok(bytes)) => match Regressions::parse(&bytes) {
                Ok(kept) => Some(kept),
                Err(why) => return self.request_refusal(format!("The regressions file is unreadable: {why}."), vec![]),
            },
            _ => None,
        };
        let policy = match (&kept, asked) {
            (Some(kept), Some(asked)) if asked != kept.policy => {
                return ToolResult::error(self.host.refusal(
                    "E-TEST-POLICY",
                    "The project's regressions file pinned another policy: open without one (the pinned policy is used), or keep the file's.",
                    vec![("pinned", serde_json::to_value(&kept.policy).unwrap_or_default())],
                ));
            }
            (Some(kept), _) => kept.policy.clone(),
            (None, asked) => asked.unwrap_or_else(Policy::default),
        };
        let sources = loaded.sources.clone();
        // One numbering with edit sessions, unique across servers started here (`i<n>`).
        let handle = format!("i{}", &self.durable.next_handle(loaded.disk.is_some())[1..]);
        let saved_policy = serde_json::to_value(&policy).ok();
        let open = ImplementationOpen {
            reference: reference.clone(),
            policy,
            kept,
            emulate: emulate.clone(),
            handle: Some(handle.clone()),
        };
        let answer = self.host.implementation_open(loaded.sources, open);
        let mut record = answer.record;
        if !answer.refused {
            if let Some(file) = file {
                self.regressions.insert(handle.clone(), file);
            }
            let writes = loaded.disk.is_some();
            if let Some(disk) = loaded.disk {
                let saved = self.saved_host(HostKind::Implementation, &handle, arguments, &disk, &sources, &reference);
                self.host_sessions.insert(handle.clone(), SavedHost { policy: saved_policy, emulate, ..saved });
                self.pinned.insert(handle, (disk, sources));
                self.checkpoint(false);
            }
            record.insert("write_back".into(), Value::Bool(writes));
        }
        ToolResult { record, is_error: answer.refused }
    }

    pub(crate) fn implementation_submit(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let request = match self.request_argument(arguments, "request") {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let handle = request.get("handle").and_then(Value::as_str).unwrap_or_default();
        // A session a restarted server kept comes back first.
        if self.host.implementation_reference(handle).is_none()
            && let Err(refusal) = self.restore_host(handle)
        {
            return refusal;
        }
        let runner: &dyn Runner = match &self.runner {
            Some(runner) => runner.as_ref(),
            None => &NoRunner,
        };
        let submitted = self.host.implementation_submit(&request, runner);
        let mut record = submitted.answer.record;
        if let (Some(kept), Some(file)) = (&submitted.regressions, self.regressions.get(handle)) {
            if let Err(why) = keep(file, kept) {
                record.insert("kept".into(), Value::from(format!("the failing case could not be kept: {why}")));
            }
        }
        // On a project, every validation is recorded in its candidate history.
        if let Some(file) = self.regressions.get(handle)
            && let Some(root) = file.parent().and_then(|regressions| regressions.parent())
        {
            let history = root.join(".cairn").join("history");
            for entry in &submitted.records {
                if let Err(why) = cairn_vfs::history::append(&history, &serde_json::to_value(entry).unwrap_or_default())
                {
                    record.insert("history".into(), Value::from(format!("the history could not be written: {why}")));
                    break;
                }
            }
        }
        if !submitted.answer.refused {
            match submitted.program {
                Some(program) => match self.write_program(handle, &request, &program, &record) {
                    Ok(written) => {
                        record.insert("written".into(), written);
                        self.checkpoint(true);
                    }
                    Err(refusal) => return refusal,
                },
                None => {
                    record.insert("written".into(), Value::Bool(false));
                }
            }
        }
        ToolResult { record, is_error: submitted.answer.refused }
    }
}

impl Server {
    /// What the checkpoint keeps of a plan or implementation session on a path, as it opened.
    fn saved_host(
        &self,
        kind: HostKind,
        key: &str,
        arguments: &Map<String, Value>,
        disk: &crate::writeback::Disk,
        sources: &cairn_agent::edit::Sources,
        symbol: &str,
    ) -> SavedHost {
        let (pinned, manifest_sha256) = disk.digests(sources);
        SavedHost {
            kind,
            key: key.to_string(),
            path: arguments.get("path").and_then(Value::as_str).unwrap_or_default().to_string(),
            root: disk.root.to_string_lossy().to_string(),
            symbol: symbol.to_string(),
            generation: 0,
            policy: None,
            emulate: None,
            pinned,
            manifest_sha256,
            writing: None,
        }
    }
}

/// Writes the regressions file (its directory made when missing).
fn keep(file: &PathBuf, kept: &Regressions) -> Result<(), String> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(file, kept.text()).map_err(|e| e.to_string())
}

impl Server {
    pub(crate) fn plan_open(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let symbol = match self.required_text(arguments, "symbol", "the function to plan") {
            Ok(symbol) => symbol,
            Err(refusal) => return refusal,
        };
        // Sizes for predictions: a list of objects from size names to numbers.
        let sizes = match arguments.get("sizes").map(cairn_agent::predict::sizes_from_json) {
            None => Vec::new(),
            Some(Ok(sizes)) => sizes,
            Some(Err(why)) => return self.request_refusal(why, vec![]),
        };
        let loaded = match self.program(arguments, false) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => unreachable!("a required program is present"),
            Err(refusal) => return refusal,
        };
        let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let profile = std::env::var_os("CAIRN_PROFILE")
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_else(|| cairn_agent::predict::Profile::default_for(lanes));
        let sources = loaded.sources.clone();
        let origin = loaded.disk.as_ref().map_or("source", |disk| disk.identity.as_str()).to_string();
        let answer = self.host.plan_open(loaded.sources, &origin, &symbol, &sizes, &profile);
        if !answer.refused
            && let (Some(session), Some(disk)) = (answer.record.get("session").and_then(Value::as_str), loaded.disk)
        {
            let full = answer.record.get("symbol").and_then(Value::as_str).unwrap_or(&symbol).to_string();
            let saved = self.saved_host(HostKind::Plan, session, arguments, &disk, &sources, &full);
            self.host_sessions.insert(session.to_string(), saved);
            self.pinned.insert(session.to_string(), (disk, sources));
            self.checkpoint(false);
        }
        ToolResult { record: answer.record, is_error: answer.refused }
    }

    pub(crate) fn plan_reply(&mut self, arguments: &Map<String, Value>) -> ToolResult {
        let reply = match self.request_argument(arguments, "reply") {
            Ok(reply) => reply,
            Err(refusal) => return refusal,
        };
        let named = reply.get("session").and_then(Value::as_str).unwrap_or_default().to_string();
        // A session a restarted server kept comes back first.
        if self.host.plan_session(&named).is_none()
            && let Err(refusal) = self.restore_host(&named)
        {
            return refusal;
        }
        let (answer, written) = self.host.plan_reply(&reply);
        let mut record = answer.record;
        if !answer.refused {
            let session = reply.get("session").and_then(Value::as_str).unwrap_or_default().to_string();
            let next = record.get("next_session").and_then(Value::as_str).unwrap_or_default().to_string();
            let mut program = self.pinned.get(&session).map(|(_, sources)| sources.clone());
            if let (Some(program), Some(written)) = (program.as_mut(), written)
                && let Some(file) = program.files.iter_mut().find(|f| f.name == written.file)
            {
                file.text = written.text;
            }
            match program {
                Some(program) => match self.write_program(&session, &reply, &program, &record) {
                    Ok(value) => {
                        record.insert("written".into(), value);
                        // The successor stands on what was written.
                        if let Some(pinned) = self.pinned.remove(&session) {
                            self.pinned.insert(next.clone(), pinned);
                        }
                        if let Some(mut saved) = self.host_sessions.remove(&session) {
                            saved.key = next.clone();
                            saved.generation += 1;
                            self.host_sessions.insert(next, saved);
                        }
                        self.checkpoint(true);
                    }
                    Err(refusal) => return refusal,
                },
                None => {
                    record.insert("written".into(), Value::Bool(false));
                }
            }
        }
        ToolResult { record, is_error: answer.refused }
    }
}

impl Server {
    /// Writes `program` (the session's program with its change) into the files the session
    /// `key` pinned, through the journal: the files it changes, or `false` for a session on
    /// `source`. Afterwards the session stands on what was written.
    fn write_program(
        &mut self,
        key: &str,
        request: &Value,
        program: &cairn_agent::edit::Sources,
        answer: &Map<String, Value>,
    ) -> Result<Value, ToolResult> {
        let Some((disk, pinned)) = self.pinned.get(key).cloned() else { return Ok(Value::Bool(false)) };
        // The checkpoint knows the write is under way, and what the files hold once it landed:
        // a restart in the middle finds the session standing on either side.
        if let Some(saved) = self.host_sessions.get_mut(key) {
            saved.writing = Some(disk.digests(program).0);
            self.checkpoint(true);
        }
        let mut written = Vec::new();
        for (index, (before, after)) in pinned.files.iter().zip(&program.files).enumerate() {
            if before.text == after.text {
                continue;
            }
            let admitted = cairn_agent::edit::Admitted::between(index, &before.text, &after.text);
            let file = disk.files.get(index).map(|f| f.name.clone()).unwrap_or_default();
            written.push(file);
            let session = format!("host:{key}");
            let mut with_written = answer.clone();
            with_written.insert("written".into(), Value::from(written.clone()));
            let intent = cairn_vfs::journal::ledger::Intent {
                key: crate::durable::request_key(&session, request),
                session,
                handle: key.to_string(),
                answer: Value::Object(with_written),
            };
            if let Err(failure) = write_back(&disk, Some(&pinned), &admitted, &intent, None) {
                // Refused before or rolled back: the files hold what the session pinned (an
                // escalated write is the ledger's to settle, and the pins then fail anyway).
                if let Some(saved) = self.host_sessions.get_mut(key) {
                    saved.writing = None;
                }
                return Err(self.write_refusal(failure));
            }
            self.untidy.insert(disk.root.clone());
        }
        // What was written is what the session pins now.
        let mut pinned = pinned;
        pinned.files = program.files.clone();
        if let Some(saved) = self.host_sessions.get_mut(key)
            && let Some(landed) = saved.writing.take()
        {
            saved.pinned = landed;
        }
        self.pinned.insert(key.to_string(), (disk, pinned));
        Ok(if written.is_empty() { Value::Bool(false) } else { Value::from(written) })
    }
}
