//! Shared measurement helpers for the benchmarks in `src/bin/`.
//!
//! Each benchmark times its subjects alternately in one process and reports medians, so that
//! machine noise hits every subject alike. Nothing here asserts a time: machines are noisy, and
//! timed assertions do not belong in tests.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs each subject `runs` times, interleaved (a, b, a, b, …), after one warm-up run each, and
/// returns the median duration of each.
pub fn interleaved(runs: usize, subjects: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    for subject in subjects.iter_mut() {
        subject();
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); subjects.len()];
    for _ in 0..runs {
        for (i, subject) in subjects.iter_mut().enumerate() {
            let start = Instant::now();
            subject();
            samples[i].push(start.elapsed());
        }
    }
    samples.into_iter().map(median).collect()
}

/// The median of some durations.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Megabytes (10^6 bytes) per second.
pub fn megabytes_per_second(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs an executable to completion and returns what it printed; it must exit 0.
pub fn run_once(exe: &Path) -> String {
    let out = Command::new(exe).output().unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "{} failed ({}): {}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
