//! The wire between a server and `cairn-full harness-runner` (docs/architecture.md, "Three
//! binaries"): the servers (`cairn-serve`) link no LLVM, so each validation harness an
//! implementation session builds is built and run by a `cairn-full` child, one process per
//! request. A request goes as one JSON document on the child's standard input; the answer comes
//! back as one JSON document on its standard output, with what the runs amounted to (the
//! confinement [`Tally`] and the emulation) so the server's runner can account for them as the
//! in-process runner does.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use cairn_agent::validate::{Emulation, Outcome, Reading};
use cairn_hir::SourceText;

/// What the server asks of the child.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub op: Op,
    pub files: Vec<File>,
    /// The test blocks to run (`run`, `profile`), or the functions to explain (`explain`).
    pub blocks: Vec<String>,
    pub seconds: u64,
    /// The device target device work is emulated against (`Runner::emulating`), if any.
    pub emulate: Option<String>,
}

/// The runner's three operations (`cairn_agent::validate::Runner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    Run,
    Profile,
    Explain,
}

/// One file of the program to build.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct File {
    pub name: String,
    pub text: String,
}

impl File {
    pub fn of(files: &[SourceText]) -> Vec<File> {
        files.iter().map(|f| File { name: f.name.clone(), text: f.text.clone() }).collect()
    }

    pub fn texts(files: Vec<File>) -> Vec<SourceText> {
        files.into_iter().map(|f| SourceText { name: f.name, text: f.text }).collect()
    }
}

/// The child's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub done: Result<Done, String>,
    /// The confined runs this request made (none for `explain`).
    pub tally: Option<Tally>,
    /// What its build emulated, if it emulated device work.
    pub emulation: Option<Emulation>,
}

/// An operation's result.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Done {
    Run(Vec<Result<Ended, String>>),
    Profile(Vec<Result<Reading, String>>),
    Explain(Map<String, Value>),
}

/// An [`Outcome`] on the wire: the run's wall time travels too (the record leaves it out, and
/// `tune` times with it).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Ended {
    pub trapped: bool,
    pub stdout: Vec<String>,
    pub trap: Option<String>,
    pub elapsed_ns: u64,
}

impl Ended {
    pub fn of(outcome: Outcome) -> Ended {
        Ended { trapped: outcome.trapped(), stdout: outcome.stdout, trap: outcome.trap, elapsed_ns: outcome.elapsed_ns }
    }

    pub fn outcome(self) -> Outcome {
        Outcome {
            ended: if self.trapped { "trapped" } else { "returned" },
            stdout: self.stdout,
            trap: self.trap,
            elapsed_ns: self.elapsed_ns,
        }
    }
}

/// The confined runs of a runner, summed (a record's `confinement`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Tally {
    pub runs: u64,
    pub sandboxed: u64,
    /// Runs that changed their workspace (discarded with it), and a few of the paths.
    pub changed_runs: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<String>,
    /// The last run's limits (`sandbox::Limits`, as the record writes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Value>,
}

impl Tally {
    /// How many changed paths a tally names.
    pub const CHANGED_SHOWN: usize = 8;

    /// Notes a changed path, up to [`Tally::CHANGED_SHOWN`] of them, each once.
    pub fn note_changed(&mut self, path: &str) {
        if self.changed.len() < Tally::CHANGED_SHOWN && !self.changed.iter().any(|p| p == path) {
            self.changed.push(path.to_string());
        }
    }

    /// Adds `later`'s runs to these: counts summed, paths joined, the later limits kept.
    pub fn absorb(&mut self, later: Tally) {
        self.runs += later.runs;
        self.sandboxed += later.sandboxed;
        self.changed_runs += later.changed_runs;
        for path in &later.changed {
            self.note_changed(path);
        }
        if later.confinement.is_some() {
            self.confinement = later.confinement;
        }
        if later.limits.is_some() {
            self.limits = later.limits;
        }
    }

    /// The record's `confinement`, when there were runs.
    pub fn record(self) -> Option<Value> {
        (self.runs > 0).then(|| serde_json::to_value(&self).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_add_up_and_keep_the_later_limits() {
        let mut first = Tally { runs: 2, sandboxed: 2, changed_runs: 1, ..Tally::default() };
        first.note_changed("a");
        first.limits = Some(Value::from(1));
        let mut later = Tally { runs: 3, sandboxed: 1, changed_runs: 2, ..Tally::default() };
        later.note_changed("a");
        later.note_changed("b");
        later.limits = Some(Value::from(2));
        first.absorb(later);
        assert_eq!((first.runs, first.sandboxed, first.changed_runs), (5, 3, 3));
        assert_eq!(first.changed, ["a", "b"]);
        assert_eq!(first.limits, Some(Value::from(2)));
        assert!(Tally::default().record().is_none());
    }

    #[test]
    fn an_outcome_crosses_the_wire_whole() {
        let outcome = Outcome { ended: "trapped", stdout: vec!["1".into()], trap: Some("t".into()), elapsed_ns: 7 };
        let text = serde_json::to_string(&Ended::of(outcome)).expect("serialize");
        let back = serde_json::from_str::<Ended>(&text).expect("parse").outcome();
        assert_eq!(
            (back.ended, back.stdout, back.trap, back.elapsed_ns),
            ("trapped", vec!["1".into()], Some("t".into()), 7)
        );
    }
}
