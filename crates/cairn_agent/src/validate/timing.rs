//! Timing on this host: a generated program makes a function's inputs and calls it repeatedly,
//! each size's setup block and timed block run as processes of their own, interleaved over
//! samples; a call's time is the setup-subtracted difference over the repetitions, the median of
//! the samples. It runs through the validation runner (confined like every run); `cairn tune`,
//! its profiler and `cairn predict --calibrate` time with it.

use std::collections::BTreeMap;

use cairn_hir::SourceText;

use super::Runner;
use super::cases::{Case, Fed, Pattern, Shape};

/// How many times each timing block runs per measurement.
pub const SAMPLES: usize = 3;

pub fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

/// The nanoseconds one call of `function` (in `files`, with inputs as `shape` says) takes at
/// each size on this host: setup-subtracted wall times over enough calls that the calls dominate
/// starting a process (~10^8 element steps in all), the median of three samples. `cairn predict`
/// calibrates with it too.
pub fn time_calls(
    files: &[SourceText],
    shape: &Shape,
    sizes: &[u64],
    function: &str,
    runner: &dyn Runner,
) -> Result<Vec<u64>, String> {
    let cases: Vec<Case> = sizes.iter().map(|&extent| timing_case(shape, extent)).collect();
    let reps: Vec<u64> = sizes.iter().map(|&n| (100_000_000 / n.max(1)).clamp(1, 1000)).collect();
    let files = with_timing_harness(files, shape, &cases, function, &reps);
    // Each size's pair of blocks, SAMPLES times over, interleaved so drift touches all alike; a
    // size's time is the median of its samples.
    let pairs: Vec<[String; 2]> = (0..cases.len())
        .map(|i| [super::harness::timing_name(i, false), super::harness::timing_name(i, true)])
        .collect();
    let blocks: Vec<String> = (0..SAMPLES).flat_map(|_| pairs.iter().flat_map(|p| p.iter().cloned())).collect();
    let outcomes = runner.run(&files, &blocks, 300)?;
    let mut out = Vec::new();
    for (i, &reps) in reps.iter().enumerate() {
        let mut samples = Vec::with_capacity(SAMPLES);
        for sample in 0..SAMPLES {
            let at = 2 * (sample * cases.len() + i);
            let setup = outcomes[at].as_ref().map_err(Clone::clone)?;
            let run = outcomes[at + 1].as_ref().map_err(Clone::clone)?;
            if run.ended != "returned" {
                return Err(format!("the timed call trapped: {}", run.trap.clone().unwrap_or_default()));
            }
            samples.push(run.elapsed_ns.saturating_sub(setup.elapsed_ns) / reps);
        }
        out.push(median(samples));
    }
    Ok(out)
}

/// `files` with the timing harness of `function` (`harness::timing`) appended to the file that
/// declares it (`fn function(` or `fn function[`, so `sum` is not `sum_all`), else the first.
pub fn with_timing_harness(
    files: &[SourceText],
    shape: &Shape,
    cases: &[Case],
    function: &str,
    reps: &[u64],
) -> Vec<SourceText> {
    let text = super::harness::timing(shape, cases, function, reps);
    let mut files = files.to_vec();
    let declared = |t: &str| t.contains(&format!("fn {function}(")) || t.contains(&format!("fn {function}["));
    let target = files.iter().position(|f| declared(&f.text)).unwrap_or(0);
    files[target].text.push_str(&text);
    files
}

/// Inputs for timing: every extent at `extent`, views ascending, scalars 1.
pub fn timing_case(shape: &Shape, extent: u64) -> Case {
    let scalars = shape
        .params
        .iter()
        .filter_map(|(name, fed)| match fed {
            Fed::Scalar(crate::validate::cases::Scalar::Float(_)) => Some((name.clone(), "1.0".to_string())),
            Fed::Scalar(crate::validate::cases::Scalar::Bool) => Some((name.clone(), "true".to_string())),
            Fed::Scalar(_) => Some((name.clone(), "1".to_string())),
            _ => None,
        })
        .collect();
    Case { extent, pattern: Pattern::Ascending, seed: 1, scalars, views: BTreeMap::new(), extents: BTreeMap::new() }
}
