//! The servers' runner (`cairn-serve`): builds and runs validation harnesses by asking a
//! `cairn-full harness-runner` child, one process per request (`runner_wire.rs`), so the
//! long-lived server never links or loads LLVM. A harness build takes hundreds of milliseconds;
//! the child's start-up (about 10 ms) is small beside it, and its memory is given back when it
//! ends. What the child's runs amounted to (the confinement tally, the emulation) is kept here
//! until the validation takes it, as the in-process runner keeps its own.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::{Map, Value};

use cairn_agent::validate::{Emulation, Outcome, Reading, Runner};
use cairn_hir::SourceText;

use crate::runner_wire::{Answer, Done, File, Op, Request, Tally};

/// The binary that builds: `cairn-full`, beside this one.
const FULL: &str = "cairn-full";

/// A [`Runner`] whose every build and run happens in a `cairn-full` child.
#[derive(Default)]
pub struct RemoteRunner {
    /// The device target device work is emulated against, if any.
    emulate: Option<String>,
    /// The children's runs since the last [`Runner::confinement`].
    tally: Mutex<Option<Tally>>,
    /// What the children's builds emulated since the last [`Runner::emulation`].
    emulated: Mutex<Option<Emulation>>,
}

impl RemoteRunner {
    /// Asks a child for `op` and keeps what its runs amounted to.
    fn ask(&self, op: Op, files: &[SourceText], blocks: &[String], seconds: u64) -> Result<Done, String> {
        let full = full()?;
        let request =
            Request { op, files: File::of(files), blocks: blocks.to_vec(), seconds, emulate: self.emulate.clone() };
        let body = serde_json::to_vec(&request).map_err(|e| format!("internal error (E-INTERNAL): {e}"))?;
        let mut command = Command::new(&full);
        crate::lean::for_a_harness(&mut command);
        crate::build_id::mark(&mut command);
        let mut child = command
            .arg("harness-runner")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not start {}: {e}", full.display()))?;
        // Written from a thread while this one reads: neither pipe may fill and stall the other.
        let mut stdin = child.stdin.take().ok_or("internal error (E-INTERNAL): no pipe to the harness runner")?;
        let writer = std::thread::spawn(move || stdin.write_all(&body));
        let output = child.wait_with_output().map_err(|e| format!("the harness runner failed: {e}"))?;
        let _ = writer.join();
        let answer = serde_json::from_slice::<Answer>(&output.stdout).map_err(|e| {
            let said = String::from_utf8_lossy(&output.stderr);
            match said.trim() {
                // It said why (a `cairn-full` of another build, `build_id.rs`).
                said if !said.is_empty() => {
                    format!("the harness runner ({}) did not answer ({}): {said}", full.display(), output.status)
                }
                _ => format!(
                    "internal error (E-INTERNAL): the harness runner ({}) gave no answer ({}; {e})",
                    full.display(),
                    output.status
                ),
            }
        })?;
        if let Some(tally) = answer.tally
            && let Ok(mut kept) = self.tally.lock()
        {
            match kept.as_mut() {
                Some(kept) => kept.absorb(tally),
                None => *kept = Some(tally),
            }
        }
        if let Some(emulation) = answer.emulation
            && let Ok(mut emulated) = self.emulated.lock()
        {
            *emulated = Some(emulation);
        }
        answer.done
    }
}

/// `cairn-full` beside this executable, or why it cannot be used.
fn full() -> Result<PathBuf, String> {
    crate::handover::beside(FULL).ok_or_else(|| {
        format!(
            "this server builds harnesses with `{FULL}` (the LLVM back end), built beside it, and it is not there: build it with `cargo build -p cairn_cli`"
        )
    })
}

/// The answer to another operation than the one asked: a defect of the wire.
fn mismatch(op: Op) -> String {
    format!("internal error (E-INTERNAL): the harness runner answered another request than {op:?}")
}

impl Runner for RemoteRunner {
    fn run(
        &self,
        files: &[SourceText],
        blocks: &[String],
        seconds: u64,
    ) -> Result<Vec<Result<Outcome, String>>, String> {
        match self.ask(Op::Run, files, blocks, seconds)? {
            Done::Run(ended) => Ok(ended.into_iter().map(|r| r.map(|e| e.outcome())).collect()),
            _ => Err(mismatch(Op::Run)),
        }
    }

    fn profile(
        &self,
        files: &[SourceText],
        blocks: &[String],
        seconds: u64,
    ) -> Result<Vec<Result<Reading, String>>, String> {
        match self.ask(Op::Profile, files, blocks, seconds)? {
            Done::Profile(readings) => Ok(readings),
            _ => Err(mismatch(Op::Profile)),
        }
    }

    fn explain(&self, files: &[SourceText], symbols: &[String]) -> Result<Map<String, Value>, String> {
        match self.ask(Op::Explain, files, symbols, 0)? {
            Done::Explain(record) => Ok(record),
            _ => Err(mismatch(Op::Explain)),
        }
    }

    fn confinement(&self) -> Option<Value> {
        // Taken: each validation accounts for its own runs.
        self.tally.lock().ok()?.take()?.record()
    }

    fn emulation(&self) -> Option<Emulation> {
        self.emulated.lock().ok()?.take()
    }

    fn emulating(&self, target: &str) -> Result<Box<dyn Runner + '_>, String> {
        Ok(Box::new(RemoteRunner { emulate: Some(target.to_string()), ..RemoteRunner::default() }))
    }
}
