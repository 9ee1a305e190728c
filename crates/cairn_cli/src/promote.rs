//! `cairn promote` (issue 18; docs/tools/promote.md): a validated implementation becomes the one
//! that runs — `plan f use g;` written into the source — only by a person's approval bound to the
//! exact digests of what was evaluated, never because an agent said so.
//!
//! The lifecycle is append-only in the candidate history, as `attempt` records whose `lifecycle`
//! says the stage: `corroborated` (`--evaluate`: validated under the pinned policy, and measured
//! faster than the reference by the threshold declared before the runs at every size asked),
//! `promoted`, `withdrawn` (`--rollback`). A corroboration holds a *revision* digest (the
//! implementation's widened identity, the reference as written, the compiler, the policy, the
//! threshold and sizes) and an *evaluation* digest (the validation's outcome and the times), and a
//! seal: an HMAC of both under this operator's approval key (`$CAIRN_APPROVAL_KEY`, else
//! `~/.config/cairn/approval.key`, made 0600 on first use; a confined run cannot see it). A history
//! copied from elsewhere, or written by hand, has no valid seal and approves nothing.
//!
//! Approval: at a terminal, the digests are shown and the first 8 characters of the evaluation
//! digest must be typed back on `/dev/tty`; otherwise only `$CAIRN_APPROVAL_TOKEN`, the HMAC of
//! `approve:<revision>:<evaluation>` under the key — issued by the operator's own process
//! (`--issue-token`, which asks the same typed confirmation). There is no flag that approves, and
//! `cairn mcp` offers no promotion. The revision is recomputed at approval: a change to the
//! implementation, its reference, the policy or the compiler since the evaluation refuses it. The
//! write goes through the journal against the file as evaluated, so of two racing promotions one
//! wins and the other is refused as stale.
//!
//! Exit: 0 done; 1 refused (no current corroboration, no approval, stale); 2 environment.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::cli::PromoteFlags;
use crate::output::{Output, to_map};

/// What `cairn promote` answers.
#[derive(Serialize, Default)]
struct Answer {
    protocol: &'static str,
    function: String,
    #[serde(rename = "use", skip_serializing_if = "Option::is_none")]
    implementation: Option<String>,
    /// `corroborated`, `not-corroborated`, `promoted`, `withdrawn`, `refused`, `token`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    revision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    detail: Map<String, Value>,
}

pub fn run(flags: &PromoteFlags, out: Output) -> u8 {
    let (program, workspace) = match crate::check::load_checked(&flags.path, out) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let history = program.root.join(".cairn").join("history");
    let mut answer = Answer {
        protocol: "cairn.promotion/1",
        function: flags.symbol.clone(),
        implementation: flags.implementation.clone(),
        ..Answer::default()
    };
    let result = if flags.rollback {
        rollback(&program, &workspace, flags, &history, &mut answer)
    } else if flags.evaluate {
        evaluate(&program, &workspace, flags, &history, &mut answer)
    } else {
        approve(&program, &workspace, flags, &history, &mut answer)
    };
    std::mem::forget(workspace);
    let code = match result {
        Ok(code) => code,
        Err(Environment(message)) => {
            out.environment(&message);
            return 2;
        }
    };
    let detail = format!("{}: {}", answer.function, answer.status);
    out.summary(&to_map(&answer), code == 0, &detail);
    code
}

/// An environment error (exit 2).
struct Environment(String);

impl From<String> for Environment {
    fn from(message: String) -> Environment {
        Environment(message)
    }
}

impl From<&str> for Environment {
    fn from(message: &str) -> Environment {
        Environment(message.to_string())
    }
}

/// The full names of the reference and the implementation, and the implementation's widened
/// identity and the reference's code as written now.
struct Subject {
    function: String,
    implementation: String,
    identity: String,
    as_written: String,
}

fn subject(workspace: &cairn_hir::Workspace, flags: &PromoteFlags) -> Result<Subject, Environment> {
    let item = cairn_agent::program::function_item(workspace, &flags.symbol)
        .ok_or_else(|| format!("{} names no function of the program.", flags.symbol))?;
    let function = cairn_hir::Resolver::new(workspace.db()).full_name(item).to_string();
    let asked = flags.implementation.clone().unwrap_or_default();
    let symbols = cairn_agent::tune::implementation_symbols(workspace, item);
    let implementation =
        symbols.iter().find(|s| **s == asked || s.rsplit('.').next() == Some(asked.as_str())).cloned().ok_or_else(
            || format!("{asked} is no implementation of {function} (its implementations: {}).", symbols.join(", ")),
        )?;
    let identity = cairn_agent::tune::current_identity(workspace, &implementation)
        .ok_or("the implementation's identity could not be computed")?;
    let as_written =
        cairn_agent::history::base_as_written(workspace, item).ok_or("the function's code could not be digested")?;
    Ok(Subject { function, implementation, identity, as_written })
}

/// The revision digest: everything an evaluation was about.
fn revision(subject: &Subject, policy: &Value, threshold: f64, sizes: &[u64]) -> String {
    let value = serde_json::json!([
        subject.function,
        subject.implementation,
        subject.identity,
        subject.as_written,
        cairn_agent::history::compiler(),
        policy,
        threshold,
        sizes
    ]);
    cairn_agent::history::history_digest(&value)
}

fn evaluate(
    program: &cairn_vfs::Program,
    workspace: &cairn_hir::Workspace,
    flags: &PromoteFlags,
    history: &Path,
    answer: &mut Answer,
) -> Result<u8, Environment> {
    if !flags.threshold.is_finite() || !(0.0..100.0).contains(&flags.threshold) {
        return Err(Environment("--threshold is a percentage from 0 to below 100.".into()));
    }
    let subject = subject(workspace, flags)?;
    answer.function = subject.function.clone();
    answer.implementation = Some(subject.implementation.clone());
    let mut sizes = Vec::new();
    for at in &flags.at {
        sizes.push(crate::tune::parse_size(at).ok_or_else(|| format!("--at {at}: write NAME=SIZE (n=1e6).",))?);
    }
    if sizes.is_empty() {
        sizes.push(1_000_000);
    }
    // The threshold and sizes are declared (in the revision) before anything runs.
    let validation = crate::validate::validate_program(&crate::validate::ValidateFlags {
        path: flags.path.clone(),
        symbol: subject.implementation.clone(),
        policy: None,
        regressions: None,
        history: Some(history.to_path_buf()),
        // A promotion stands on native runs only: emulated evidence never promotes.
        emulate: false,
        device_target: None,
    });
    let policy = crate::validate::pinned_policy(&flags.path, &subject.function);
    let revision = revision(&subject, &policy, flags.threshold, &sizes);
    answer.revision = Some(revision.clone());
    let validated = validation.record.status == "passed";
    answer.detail.insert("validation".into(), serde_json::to_value(&validation.record).unwrap_or_default());
    if !validated {
        answer.status = "not-corroborated";
        answer.reason = Some(format!("the validation is {}: nothing is timed", validation.record.status));
        return Ok(1);
    }
    // Fresh times: the reference (no selection) against the selection, alternating.
    let runner = crate::validate::NativeRunner::new(Some(program.clone()), 1);
    let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let started = std::time::Instant::now();
    let clock = || started.elapsed().as_secs_f64();
    let request = cairn_agent::tune::Request {
        symbol: &subject.function,
        sizes: sizes.clone(),
        weights: Vec::new(),
        objective: cairn_agent::tune::Objective::Geomean,
        measure: 0,
        budget_runs: None,
        lanes,
        profile: cairn_agent::predict::Profile::default_for(lanes),
        budget_seconds: 600,
        clock: &clock,
        history: &[],
        accept_emulated: false,
        profiler: false,
        card: cairn_agent::predict::card::default_card(),
    };
    let short = subject.implementation.rsplit('.').next().unwrap_or(&subject.implementation).to_string();
    let compared = cairn_agent::tune::compare(workspace, &request, "none", &format!("use {short}"), &runner)
        .map_err(|why| format!("The timing could not run: {why}"))?;
    let (reference_ns, implementation_ns) = (&compared.compare[0].measured_ns, &compared.compare[1].measured_ns);
    let factor = 1.0 - flags.threshold / 100.0;
    let faster = reference_ns.iter().zip(implementation_ns).all(|(&r, &g)| (g as f64) <= r as f64 * factor);
    let evaluation = cairn_agent::history::history_digest(&serde_json::json!([
        revision,
        validation.record.finite.as_ref().map(|f| serde_json::to_value(f).unwrap_or_default()),
        reference_ns,
        implementation_ns
    ]));
    answer.evaluation = Some(evaluation.clone());
    answer.detail.insert("sizes".into(), serde_json::to_value(&sizes).unwrap_or_default());
    answer.detail.insert("reference_ns".into(), serde_json::to_value(reference_ns).unwrap_or_default());
    answer.detail.insert("implementation_ns".into(), serde_json::to_value(implementation_ns).unwrap_or_default());
    answer.detail.insert("threshold_percent".into(), Value::from(flags.threshold));
    if !faster {
        answer.status = "not-corroborated";
        answer.reason = Some(format!(
            "the implementation is not {}% faster than the reference at every size asked",
            flags.threshold
        ));
        return Ok(1);
    }
    let key = approval_key(true)?;
    let mut detail = Map::new();
    detail.insert("lifecycle".into(), Value::from("corroborated"));
    detail.insert("revision".into(), Value::from(revision.clone()));
    detail.insert("evaluation".into(), Value::from(evaluation.clone()));
    detail.insert("threshold_percent".into(), Value::from(flags.threshold));
    detail.insert("sizes".into(), serde_json::to_value(&sizes).unwrap_or_default());
    detail.insert("reference_ns".into(), serde_json::to_value(reference_ns).unwrap_or_default());
    detail.insert("implementation_ns".into(), serde_json::to_value(implementation_ns).unwrap_or_default());
    detail.insert("validation".into(), Value::from(validation.record.history.clone().unwrap_or_default()));
    detail.insert(
        "seal".into(),
        Value::from(hmac(
            &key,
            &format!("corroborated:{}:{}:{revision}:{evaluation}", subject.function, subject.implementation),
        )),
    );
    lifecycle(history, &subject, detail)?;
    answer.status = "corroborated";
    Ok(0)
}

fn approve(
    program: &cairn_vfs::Program,
    workspace: &cairn_hir::Workspace,
    flags: &PromoteFlags,
    history: &Path,
    answer: &mut Answer,
) -> Result<u8, Environment> {
    let subject = subject(workspace, flags)?;
    answer.function = subject.function.clone();
    answer.implementation = Some(subject.implementation.clone());
    let key = approval_key(false)?;
    // The newest sealed corroboration of this pair whose revision is the one now.
    let records = cairn_vfs::history::read(history).map_err(|e| format!("The history cannot be read: {e}."))?;
    let records = cairn_agent::history::records_of(records);
    let label = selection_label(&subject);
    let mut newest: Option<(String, String, usize)> = None;
    let mut stale = false;
    for (index, record) in
        records.iter().enumerate().filter(|(_, r)| r.function == subject.function && r.candidate == label)
    {
        let text = |k: &str| record.detail.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        if text("lifecycle") != "corroborated" {
            continue;
        }
        let (revision, evaluation, seal) = (text("revision"), text("evaluation"), text("seal"));
        let expected = hmac(
            &key,
            &format!("corroborated:{}:{}:{revision}:{evaluation}", subject.function, subject.implementation),
        );
        if !cairn_vfs::same_digest(&seal, &expected) {
            continue;
        }
        let sizes: Vec<u64> =
            record.detail.get("sizes").and_then(|s| serde_json::from_value(s.clone()).ok()).unwrap_or_default();
        let threshold = record.detail.get("threshold_percent").and_then(Value::as_f64).unwrap_or(-1.0);
        let now = revision_now(&flags.path, &subject, threshold, &sizes)?;
        if now == revision {
            newest = Some((revision, evaluation, index));
        } else {
            stale = true;
        }
    }
    // A promotion or withdrawal of the function recorded after this evaluation makes it stale:
    // of two promotions racing for one function, the later approval is refused.
    let overtaken = newest.as_ref().and_then(|(_, _, at)| {
        records.iter().skip(at + 1).find(|r| {
            r.function == subject.function
                && matches!(r.detail.get("lifecycle").and_then(Value::as_str), Some("promoted" | "withdrawn"))
        })
    });
    if let Some(later) = overtaken {
        answer.status = "refused";
        answer.reason = Some(format!(
            "stale: {} was {} after this evaluation ({}); evaluate again",
            subject.function,
            later.detail.get("lifecycle").and_then(Value::as_str).unwrap_or_default(),
            later.candidate
        ));
        return Ok(1);
    }
    let Some((revision, evaluation, _)) = newest else {
        answer.status = "refused";
        answer.reason = Some(if stale {
            "the evaluation is stale: the implementation, its reference, the policy or the compiler changed since; evaluate again (--evaluate)".into()
        } else {
            "no sealed corroboration of this implementation in this project's history: evaluate it here (--evaluate); a history copied from elsewhere approves nothing".into()
        });
        return Ok(1);
    };
    answer.revision = Some(revision.clone());
    answer.evaluation = Some(evaluation.clone());
    let token = hmac(&key, &format!("approve:{revision}:{evaluation}"));
    if flags.issue_token {
        if !confirmed(&subject, &revision, &evaluation)? {
            answer.status = "refused";
            answer.reason = Some("the typed confirmation did not match: no token".into());
            return Ok(1);
        }
        answer.status = "token";
        answer.token = Some(token);
        return Ok(0);
    }
    let approved = match std::env::var("CAIRN_APPROVAL_TOKEN") {
        Ok(given) => cairn_vfs::same_digest(given.trim(), &token),
        Err(_) => confirmed(&subject, &revision, &evaluation)?,
    };
    if !approved {
        answer.status = "refused";
        answer.reason = Some("not approved: the typed confirmation or the token does not match this evaluation".into());
        return Ok(1);
    }
    // Written through the journal against the file as it is: a racing promotion that wrote first
    // makes this one stale.
    let item = cairn_agent::program::function_item(workspace, &subject.function).ok_or("the function vanished")?;
    if let Err(why) = select(program, workspace, item, Some(&subject.implementation)) {
        answer.status = "refused";
        answer.reason = Some(why);
        return Ok(1);
    }
    let mut detail = Map::new();
    detail.insert("lifecycle".into(), Value::from("promoted"));
    detail.insert("revision".into(), Value::from(revision.clone()));
    detail.insert("evaluation".into(), Value::from(evaluation.clone()));
    detail.insert(
        "approved_by".into(),
        Value::from(if std::env::var("CAIRN_APPROVAL_TOKEN").is_ok() { "token" } else { "terminal" }),
    );
    detail.insert("seal".into(), Value::from(hmac(&key, &format!("promoted:{revision}:{evaluation}"))));
    lifecycle(history, &subject, detail)?;
    answer.status = "promoted";
    Ok(0)
}

fn rollback(
    program: &cairn_vfs::Program,
    workspace: &cairn_hir::Workspace,
    flags: &PromoteFlags,
    history: &Path,
    answer: &mut Answer,
) -> Result<u8, Environment> {
    let item = cairn_agent::program::function_item(workspace, &flags.symbol)
        .ok_or_else(|| format!("{} names no function of the program.", flags.symbol))?;
    let function = cairn_hir::Resolver::new(workspace.db()).full_name(item).to_string();
    answer.function = function.clone();
    let Some(selection) = cairn_agent::plans::selection_label(workspace, item) else {
        answer.status = "refused";
        answer.reason = Some(format!("{function} has no selection to roll back"));
        return Ok(1);
    };
    if let Err(why) = select(program, workspace, item, None) {
        answer.status = "refused";
        answer.reason = Some(why);
        return Ok(1);
    }
    let mut detail = Map::new();
    detail.insert("lifecycle".into(), Value::from("withdrawn"));
    detail.insert("selection".into(), Value::from(selection.clone()));
    let as_written = cairn_agent::history::base_as_written(workspace, item).unwrap_or_default();
    let record = lifecycle_record(&function, &selection, &as_written, detail)
        .ok_or_else(|| Environment("the withdrawal could not be recorded".into()))?;
    cairn_vfs::history::append(history, &serde_json::to_value(&record).unwrap_or_default())
        .map_err(|e| format!("The history could not be written: {e}."))?;
    answer.status = "withdrawn";
    Ok(0)
}

/// The label lifecycle records of a selection carry (`plan f use g;`).
fn selection_label(subject: &Subject) -> String {
    let bare = subject.function.rsplit('.').next().unwrap_or(&subject.function);
    let short = subject.implementation.rsplit('.').next().unwrap_or(&subject.implementation);
    format!("plan {bare} use {short};")
}

/// Appends a lifecycle record about `subject`.
fn lifecycle(history: &Path, subject: &Subject, detail: Map<String, Value>) -> Result<(), Environment> {
    let record = lifecycle_record(&subject.function, &selection_label(subject), &subject.as_written, detail)
        .ok_or_else(|| Environment("the lifecycle record could not be made".into()))?;
    cairn_vfs::history::append(history, &serde_json::to_value(&record).unwrap_or_default())
        .map_err(|e| Environment(format!("The history could not be written: {e}.")))?;
    Ok(())
}

/// A lifecycle record (`attempt`, its stage in `lifecycle`) about `function`'s selection `label`.
fn lifecycle_record(
    function: &str,
    label: &str,
    as_written: &str,
    detail: Map<String, Value>,
) -> Option<cairn_agent::history::Record> {
    use cairn_agent::history::{Identity, Record, compiler, host_target, now, source};
    let identity = Identity {
        source: source(as_written, &Value::Null),
        contract: "a promotion holds under its evaluation".into(),
        target: host_target(),
        compiler: compiler(),
        artifact: None,
    };
    Record::new("attempt", function, label, Value::Null, identity, detail, now()).ok()
}

/// The revision digest of `subject` now (the policy the regressions file pins, else the default).
fn revision_now(path: &Path, subject: &Subject, threshold: f64, sizes: &[u64]) -> Result<String, Environment> {
    let policy = crate::validate::pinned_policy(path, &subject.function);
    Ok(revision(subject, &policy, threshold, sizes))
}

/// Writes `item`'s selection (`plan f use g;`, or none) into the program's files through the
/// journal, against the files as they were read: a racing write makes this one stale.
fn select(
    program: &cairn_vfs::Program,
    workspace: &cairn_hir::Workspace,
    item: cairn_hir::Item,
    implementation: Option<&str>,
) -> Result<(), String> {
    let files = workspace.written_sources();
    let selected = cairn_agent::plans::with_selection(workspace, &files, item, implementation);
    write(program, &files, &selected)
}

/// Writes the files of `after` that differ from `before` through the journal.
fn write(
    program: &cairn_vfs::Program,
    before: &[cairn_hir::SourceText],
    after: &[cairn_hir::SourceText],
) -> Result<(), String> {
    let mut changes = Vec::new();
    for (old, new) in before.iter().zip(after) {
        if old.text == new.text {
            continue;
        }
        let file = program.files.iter().find(|f| f.name == old.name).ok_or("a file vanished")?;
        let name = file.path.strip_prefix(&program.root).unwrap_or(&file.path).display().to_string();
        let bom = if file.had_bom { "\u{feff}" } else { "" };
        changes.push(cairn_vfs::journal::FileChange {
            name,
            before: format!("{bom}{}", old.text).into_bytes(),
            after: format!("{bom}{}", new.text).into_bytes(),
            before_sha256: None,
        });
    }
    cairn_vfs::journal::Journal::new(&program.root).write(&changes).map(|_| ()).map_err(|e| match e {
        cairn_vfs::journal::WriteError::Changed(files) => format!(
            "stale: {} changed since the evaluation was read (another promotion or an edit); nothing was written",
            files.join(", ")
        ),
        other => format!("the write-back failed: {other:?}"),
    })
}

/// Asks the person at the terminal to type the first 8 characters of the evaluation digest.
fn confirmed(subject: &Subject, revision: &str, evaluation: &str) -> Result<bool, Environment> {
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
        Environment("No terminal to ask: approve at a terminal, or set CAIRN_APPROVAL_TOKEN to a token the operator issued (--issue-token).".into())
    })?;
    let mut writer = &tty;
    let _ = writeln!(
        writer,
        "Promote {} to run {}?\n  revision   {revision}\n  evaluation {evaluation}\nType the first 8 characters of the evaluation digest to approve: ",
        subject.function, subject.implementation
    );
    let mut line = String::new();
    let _ = std::io::BufReader::new(&tty).read_line(&mut line);
    Ok(line.trim() == &evaluation[..8.min(evaluation.len())])
}

/// This operator's approval key: `$CAIRN_APPROVAL_KEY` (a file), else
/// `~/.config/cairn/approval.key`; made (32 random bytes, mode 0600) when `create` and missing.
fn approval_key(create: bool) -> Result<Vec<u8>, Environment> {
    let path = match std::env::var_os("CAIRN_APPROVAL_KEY") {
        Some(path) => PathBuf::from(path),
        None => {
            let home = std::env::var_os("HOME").ok_or("HOME is not set: set CAIRN_APPROVAL_KEY to the key's file")?;
            PathBuf::from(home).join(".config").join("cairn").join("approval.key")
        }
    };
    match std::fs::read(&path) {
        Ok(key) if key.len() >= 32 => return Ok(key),
        Ok(_) => return Err(Environment(format!("{} is not an approval key (32 bytes or more).", path.display()))),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Environment(format!("Cannot read the approval key {}: {e}.", path.display())));
        }
        Err(_) if !create => {
            return Err(Environment(format!(
                "No approval key at {}: nothing was ever evaluated by this operator (--evaluate makes one).",
                path.display()
            )));
        }
        Err(_) => {}
    }
    use std::os::unix::fs::OpenOptionsExt;
    let mut key = vec![0u8; 32];
    cairn_vfs::random(&mut key).map_err(|e| format!("Cannot draw a key: {e}."))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("Cannot make {}: {e}.", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("Cannot make the approval key {}: {e}.", path.display()))?;
    file.write_all(&key).map_err(|e| format!("Cannot write the approval key: {e}."))?;
    Ok(key)
}

/// HMAC-SHA256 of `message` under the operator's `key`, in hex.
pub fn hmac(key: &[u8], message: &str) -> String {
    cairn_vfs::hmac_hex(key, message.as_bytes())
}
