//! The calibration of a machine profile (`cairn predict --calibrate`): a few kernels timed on
//! this host at a few sizes, a profile fitted to some of them by least squares, and its accuracy
//! stated on the others, never used for the fit (Kendall's τ and the median relative error).

use std::collections::BTreeMap;

use cairn_hir::{SourceText, Workspace};
use serde::Serialize;

use super::{Profile, work_of};
use crate::validate::Runner;
use crate::validate::cases::Shape;

/// A calibration kernel: a program, its function, and whether it is held out of the fit.
struct Kernel {
    name: &'static str,
    source: &'static str,
    held_out: bool,
}

const KERNELS: [Kernel; 7] = [
    Kernel {
        name: "sum",
        source: "fn sum(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n { s = add_wrap(s, xs[i]); }\n  return s;\n}\n",
        held_out: false,
    },
    Kernel {
        name: "scale",
        source: "fn scale(n:usize, xs:ro<f64>[n], ys:rw<f64>[n]) {\n  for i in 0..n { ys[i] = xs[i] * 2.5 + 1.0; }\n}\n",
        held_out: false,
    },
    Kernel {
        name: "mix",
        source: "fn mix(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 1;\n  for i in 0..n { s = add_wrap(mul_wrap(s, 31), xs[i] ^ shr(s, 3)); }\n  return s;\n}\n",
        held_out: false,
    },
    Kernel {
        name: "fill",
        source: "fn fill(n:usize, out:rw<u64>[n]) {\n  parallel i in n { out[i] = u64(i) * 3 + 1; }\n}\n",
        held_out: false,
    },
    Kernel {
        name: "dot",
        source: "fn dot(n:usize, xs:ro<f64>[n], ys:ro<f64>[n]) -> f64 {\n  let mut s:f64 = 0.0;\n  for i in 0..n { s = s + xs[i] * ys[i]; }\n  return s;\n}\n",
        held_out: true,
    },
    Kernel {
        name: "saxpy",
        source: "fn saxpy(n:usize, a:f64, xs:ro<f64>[n], ys:rw<f64>[n]) {\n  parallel i in n { ys[i] = a * xs[i] + ys[i]; }\n}\n",
        held_out: true,
    },
    Kernel {
        name: "window",
        source: "fn window(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n / 4 {\n    for j in 0..4 { s = add_wrap(s, xs[4 * i + j] & 255); }\n  }\n  return s;\n}\n",
        held_out: true,
    },
];

const SIZES: [u64; 3] = [10_000, 100_000, 1_000_000];

/// One calibration point.
#[derive(Debug, Serialize)]
pub struct Point {
    pub kernel: &'static str,
    pub n: u64,
    pub measured_ns: u64,
    pub predicted_ns: f64,
    pub held_out: bool,
}

/// What a calibration made and how well its profile predicts kernels it never saw.
#[derive(Debug, Serialize)]
pub struct Calibration {
    pub protocol: &'static str,
    pub profile: Profile,
    pub points: Vec<Point>,
    pub held_out: Accuracy,
}

#[derive(Debug, Serialize)]
pub struct Accuracy {
    pub points: usize,
    pub kendall_tau: f64,
    pub median_relative_error: f64,
}

/// Fits a profile to this host: times the calibration kernels through `runner`, fits
/// `ns_per_op`/`ns_per_access` on the serial fit kernels and the effective lanes on the parallel
/// one, and states the accuracy on the held-out kernels.
pub fn calibrate(runner: &dyn Runner, lanes: u32, host: &str) -> Result<Calibration, String> {
    let mut measured: Vec<(&Kernel, u64, u64, [f64; 4])> = Vec::new();
    for kernel in &KERNELS {
        let source = format!("{}\nfn main() -> i32 {{ return 0; }}\n", kernel.source);
        let files = vec![SourceText { name: format!("{}.cairn", kernel.name), text: source }];
        let mut workspace = Workspace::new(files.clone());
        if let Some(refusal) = workspace.check().refusal {
            return Err(format!(
                "internal error (E-INTERNAL): the calibration kernel {} was refused: {}",
                kernel.name, refusal.first.message
            ));
        }
        let item = workspace.function_named(kernel.name).ok_or("a calibration kernel is missing")?;
        let shape = Shape::of(cairn_hir::fn_signature(workspace.db(), item))?;
        let times = crate::validate::timing::time_calls(&files, &shape, &SIZES, kernel.name, runner)?;
        let work = work_of(&workspace, item);
        for (&n, &ns) in SIZES.iter().zip(&times) {
            let at: BTreeMap<String, f64> = [("n".to_string(), n as f64)].into_iter().collect();
            let c = work.at(&at);
            // Calibration kernels are host code: one thread and the pool.
            measured.push((kernel, n, ns, [c.serial.0, c.serial.1, c.pool.0, c.pool.1]));
        }
    }
    // Serial kernels fit ns_per_op and ns_per_access (least squares, both at least 0.01 ns).
    let serial: Vec<&(&Kernel, u64, u64, [f64; 4])> =
        measured.iter().filter(|(k, _, _, c)| !k.held_out && c[2] == 0.0 && c[3] == 0.0).collect();
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (_, _, ns, c) in &serial {
        // Relative weighting: every point counts alike, whatever its size.
        let w = 1.0 / (*ns as f64).max(1.0).powi(2);
        a11 += w * c[0] * c[0];
        a12 += w * c[0] * c[1];
        a22 += w * c[1] * c[1];
        b1 += w * c[0] * *ns as f64;
        b2 += w * c[1] * *ns as f64;
    }
    let det = a11 * a22 - a12 * a12;
    let (mut op, mut access) =
        if det.abs() > f64::EPSILON { ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det) } else { (0.4, 0.4) };
    if op < 0.01 || access < 0.01 {
        // One price for both.
        let total: f64 = serial.iter().map(|(_, _, ns, c)| *ns as f64 / (c[0] + c[1]).max(1.0)).sum::<f64>()
            / serial.len().max(1) as f64;
        (op, access) = (total, total);
    }
    // The parallel fit kernel: how many lanes' worth its speed is.
    let parallel: Vec<f64> = measured
        .iter()
        .filter(|(k, n, _, c)| !k.held_out && (c[2] > 0.0 || c[3] > 0.0) && *n >= 100_000)
        .map(|(_, _, ns, c)| (c[2] * op + c[3] * access) / (*ns as f64).max(1.0))
        .collect();
    let effective =
        if parallel.is_empty() { f64::from(lanes) } else { parallel.iter().sum::<f64>() / parallel.len() as f64 };
    let profile = Profile {
        protocol: "cairn.profile/1".into(),
        source: format!("calibrated on {host}"),
        ns_per_op: op,
        ns_per_access: access,
        effective_lanes: effective.clamp(0.25, f64::from(lanes.max(1)) * 1.5),
    };
    let points: Vec<Point> = measured
        .iter()
        .map(|(k, n, ns, c)| Point {
            kernel: k.name,
            n: *n,
            measured_ns: *ns,
            predicted_ns: c[0] * profile.ns_per_op
                + c[1] * profile.ns_per_access
                + (c[2] * profile.ns_per_op + c[3] * profile.ns_per_access) / profile.effective_lanes,
            held_out: k.held_out,
        })
        .collect();
    let held: Vec<&Point> = points.iter().filter(|p| p.held_out).collect();
    let held_out = Accuracy {
        points: held.len(),
        kendall_tau: kendall_tau(&held.iter().map(|p| (p.predicted_ns, p.measured_ns as f64)).collect::<Vec<_>>()),
        median_relative_error: median(
            held.iter()
                .map(|p| (p.predicted_ns - p.measured_ns as f64).abs() / (p.measured_ns as f64).max(1.0))
                .collect(),
        ),
    };
    Ok(Calibration { protocol: "cairn.calibration/1", profile, points, held_out })
}

/// Kendall's τ-a between the two coordinates of `pairs`.
pub fn kendall_tau(pairs: &[(f64, f64)]) -> f64 {
    let (mut concordant, mut discordant) = (0i64, 0i64);
    for i in 0..pairs.len() {
        for j in i + 1..pairs.len() {
            let s = (pairs[i].0 - pairs[j].0) * (pairs[i].1 - pairs[j].1);
            if s > 0.0 {
                concordant += 1;
            } else if s < 0.0 {
                discordant += 1;
            }
        }
    }
    let n = pairs.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    (concordant - discordant) as f64 / (n * (n - 1.0) / 2.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}
