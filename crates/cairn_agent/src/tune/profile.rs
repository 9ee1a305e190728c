//! Profiling runs (`cairn tune --compare A B --profiler`): each side's call at each size run once
//! under the runner's profiler, apart from timing — a setup block that only makes the inputs and
//! a block that makes them and calls the function once, the setup's counts subtracted event by
//! event — and what the comparison says of them: `[profiler observation]` lines and `profile`
//! records (protocol §18.4: `tool`, `run`).

use std::collections::BTreeMap;

use cairn_hir::SourceText;

use crate::validate::cases::{Case, Shape};
use crate::validate::timing::{timing_case, with_timing_harness};
use crate::validate::{Reading, Runner};

/// The procedure a profile record names.
pub(super) const RUN: &str = "one call at each size, run once under the profiler in its own process; the counts of a block that only makes the inputs subtracted";

/// One call of `function` (in `files`, inputs as `shape` says) at each size, read by the runner's
/// profiler with the inputs' making subtracted.
pub(super) fn profile_calls(
    files: &[SourceText],
    shape: &Shape,
    sizes: &[u64],
    function: &str,
    runner: &dyn Runner,
) -> Result<Vec<Reading>, String> {
    let cases: Vec<Case> = sizes.iter().map(|&extent| timing_case(shape, extent)).collect();
    let files = with_timing_harness(files, shape, &cases, function, &vec![1; cases.len()]);
    let blocks: Vec<String> = (0..cases.len())
        .flat_map(|i| [crate::validate::harness::timing_name(i, false), crate::validate::harness::timing_name(i, true)])
        .collect();
    let readings = runner.profile(&files, &blocks, 600)?;
    let mut out = Vec::new();
    for pair in readings.chunks(2) {
        let [setup, run] = pair else { return Err("the profiler answered for half a pair of runs".into()) };
        let (setup, run) = (setup.as_ref().map_err(Clone::clone)?, run.as_ref().map_err(Clone::clone)?);
        let counts: BTreeMap<String, u64> = run
            .counts
            .iter()
            .map(|(event, &n)| (event.clone(), n.saturating_sub(setup.counts.get(event).copied().unwrap_or(0))))
            .collect();
        out.push(Reading { tool: run.tool.clone(), counts });
    }
    Ok(out)
}

/// A count as people read it: `12.3 M`, `45.6 k`, `812`.
fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1} k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} M", n as f64 / 1e6),
        _ => format!("{:.2} G", n as f64 / 1e9),
    }
}

/// The events of a cachegrind-like reading a line names: instructions, then first-level and
/// last-level data misses (reads and writes together) when the tool counted them.
fn summary(reading: &Reading) -> String {
    let event = |names: &[&str]| -> Option<u64> {
        let found: Vec<u64> = names.iter().filter_map(|n| reading.counts.get(*n).copied()).collect();
        (!found.is_empty()).then(|| found.iter().sum())
    };
    let mut parts = Vec::new();
    if let Some(ir) = event(&["Ir"]) {
        parts.push(format!("{} instructions", count(ir)));
    }
    if let Some(d1) = event(&["D1mr", "D1mw"]) {
        parts.push(format!("{} D1 misses", count(d1)));
    }
    if let Some(ll) = event(&["DLmr", "DLmw"]) {
        parts.push(format!("{} LL data misses", count(ll)));
    }
    if parts.is_empty() {
        let all: Vec<String> = reading.counts.iter().map(|(e, n)| format!("{e} {}", count(*n))).collect();
        return all.join(", ");
    }
    parts.join(", ")
}

/// The `[profiler observation]` text at one size: each side's reading, and the ratio of
/// instructions B/A — a reading, never a cause.
pub(super) fn observation(at: &str, a: &Reading, b: &Reading) -> String {
    let ratio = match (a.counts.get("Ir"), b.counts.get("Ir")) {
        (Some(&ia), Some(&ib)) if ia > 0 => format!("; B/A instructions {:.2}", ib as f64 / ia as f64),
        _ => String::new(),
    };
    format!("{at}: {}, one call: A {}; B {}{ratio}", a.tool, summary(a), summary(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(pairs: &[(&str, u64)]) -> Reading {
        Reading { tool: "cachegrind".into(), counts: pairs.iter().map(|(e, n)| (e.to_string(), *n)).collect() }
    }

    #[test]
    fn an_observation_names_each_side_s_counts_and_the_instruction_ratio() {
        let a = reading(&[("Ir", 12_300_000), ("D1mr", 40_000), ("D1mw", 5_600), ("DLmr", 900), ("DLmw", 100)]);
        let b = reading(&[("Ir", 6_150_000), ("D1mr", 40_000), ("D1mw", 5_600), ("DLmr", 900), ("DLmw", 100)]);
        assert_eq!(
            observation("n=1000000", &a, &b),
            "n=1000000: cachegrind, one call: A 12.3 M instructions, 45.6 k D1 misses, 1.0 k LL data misses; B 6.2 M instructions, 45.6 k D1 misses, 1.0 k LL data misses; B/A instructions 0.50"
        );
        // A tool without cachegrind's events: its own, by name.
        let other = Reading { tool: "other".into(), counts: [("cycles".to_string(), 812)].into() };
        assert_eq!(summary(&other), "cycles 812");
    }
}
