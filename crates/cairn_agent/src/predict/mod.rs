//! `cairn predict` (tools.md §3.16): a function's running time estimated from the checker's work
//! counts priced by a machine profile, without building or running anything; and the calibration
//! that fits a profile to this host.
//!
//! Work counts: the body is walked once; every operator, builtin call and comparison is an
//! *operation*, every element read or written through an index is an *access*; a loop multiplies
//! its body by its trip count (`for i in lo..hi`: `hi − lo` when both are parameters, literals,
//! `len` of a view or their quotients by literals; `for x in xs`: the view's extent), a `parallel`
//! region or a `parallel` collector does the same and marks the work as split over the lanes; an
//! `if` counts its dearer branch; a call of a declared function counts the callee's work with its
//! parameters replaced by the caller's arguments (parameters and literals; anything else is an
//! unknown size). What cannot be counted — a `while`, a trip count from data, recursion — is the
//! unknown size `?` (1,000 when priced) and makes the confidence `low`; parallel work `medium`.
//! Work on device lanes (a region or collector that is a device lane), the launches of device
//! regions and the elements a `transfer` moves are counted apart (`work.rs`).
//!
//! Price: `ns = ops·ns_per_op + accesses·ns_per_access`, parallel work divided by the profile's
//! effective lanes; device work priced by a device card (`card.rs`: a roofline with a launch
//! latency and the host link; every device price `low` confidence). A profile is fitted (`calibrate`) by least squares to measured times of a few
//! calibration kernels on this host, and its accuracy stated on *other* kernels never used for the
//! fit: Kendall's τ between predicted and measured times over every (kernel, size) point, and the
//! median relative error.

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use serde::{Deserialize, Serialize};

mod calibrate;
pub mod card;
mod work;

pub use self::calibrate::{Accuracy, Calibration, Point, calibrate, kendall_tau};
pub use self::card::Card;
pub use self::work::{Work, work_of};

/// The unknown size.
pub(crate) const UNKNOWN: &str = "?";
/// What the unknown size is priced at.
pub(crate) const UNKNOWN_VALUE: f64 = 1000.0;

/// A machine profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub protocol: String,
    /// How the profile was made (`default (uncalibrated)`, or the calibration's host).
    pub source: String,
    pub ns_per_op: f64,
    pub ns_per_access: f64,
    /// How many lanes' worth of speed parallel work gets.
    pub effective_lanes: f64,
}

impl Profile {
    /// The profile used without a calibrated one.
    pub fn default_for(lanes: u32) -> Profile {
        Profile {
            protocol: "cairn.profile/1".into(),
            source: "default (uncalibrated)".into(),
            ns_per_op: 0.4,
            ns_per_access: 0.4,
            effective_lanes: f64::from(lanes.max(1)),
        }
    }
}

/// One prediction.
#[derive(Debug, Serialize, Clone)]
pub struct Prediction {
    pub sizes: BTreeMap<String, f64>,
    pub ns: f64,
    pub confidence: &'static str,
    /// With device work: what bounds the time (`host`, `device memory`, `device compute`,
    /// `launches`, `host link`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<&'static str>,
    /// With device work: the device roofline's time (peak rates, nothing else) over the whole
    /// predicted time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_of_light: Option<f64>,
}

/// The predictions of one function.
#[derive(Debug, Serialize)]
pub struct FunctionPrediction {
    pub formula: Vec<String>,
    pub predictions: Vec<Prediction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<&'static str>,
}

/// Prices `work` at each of `sizes` with `profile`, device work on the default card.
pub fn predict(work: &Work, sizes: &[BTreeMap<String, f64>], profile: &Profile) -> FunctionPrediction {
    predict_on(work, sizes, profile, card::default_card())
}

/// Prices `work` at each of `sizes` with `profile`, device work on `card`.
pub fn predict_on(work: &Work, sizes: &[BTreeMap<String, f64>], profile: &Profile, card: &Card) -> FunctionPrediction {
    let confidence = if work.unknown() || work.device() {
        "low"
    } else if work.parallel() {
        "medium"
    } else {
        "high"
    };
    let predictions = sizes
        .iter()
        .map(|at| {
            let priced = price(work, at, profile, card);
            let device = work.device();
            Prediction {
                sizes: at.clone(),
                ns: priced.ns,
                confidence,
                bound: device.then_some(priced.bound),
                speed_of_light: device.then_some(priced.speed_of_light),
            }
        })
        .collect();
    let mut unknown = Vec::new();
    if work.unknown() {
        unknown.push("a size the checker cannot count (a while loop, data, recursion)");
    }
    if work.device() {
        unknown.push("device work is priced by the card's peak figures and assumptions, never measured here");
    }
    FunctionPrediction { formula: work.formula(), predictions, unknown }
}

/// A price and what bounds it.
struct Priced {
    ns: f64,
    bound: &'static str,
    speed_of_light: f64,
}

fn price(work: &Work, at: &BTreeMap<String, f64>, profile: &Profile, card: &Card) -> Priced {
    // A trip count `hi − lo` below its start runs no iterations: no count is negative; and a price
    // past what a number holds is the largest one (a record never carries an infinity).
    let counts = work.at(at);
    let positive = |x: f64| x.max(0.0);
    let (so, sa) = (positive(counts.serial.0), positive(counts.serial.1));
    let (po, pa) = (positive(counts.pool.0), positive(counts.pool.1));
    let host = so * profile.ns_per_op
        + sa * profile.ns_per_access
        + (po * profile.ns_per_op + pa * profile.ns_per_access) / profile.effective_lanes.max(1.0);
    let device = card.price(
        positive(counts.device.0),
        positive(counts.device.1),
        positive(counts.launches),
        positive(counts.link),
    );
    let parts = [
        (host, "host"),
        (device.memory_ns, "device memory"),
        (device.compute_ns, "device compute"),
        (device.launch_ns, "launches"),
        (device.link_ns, "host link"),
    ];
    let ns = host + device.memory_ns.max(device.compute_ns) + device.launch_ns + device.link_ns;
    let bound = parts.iter().fold((0.0, "host"), |best, &(t, name)| if t > best.0 { (t, name) } else { best }).1;
    let finite = |x: f64| if x.is_finite() { x.max(0.0) } else { f64::MAX };
    let roofline = device.memory_ns.max(device.compute_ns);
    Priced { ns: finite(ns), bound, speed_of_light: if ns > 0.0 && ns.is_finite() { roofline / ns } else { 0.0 } }
}

/// A size as every caller takes one (`--at`, a packet's `sizes`): a whole count from 0 to the
/// largest `u64`, written as a number (`1e6` is a million).
pub fn size_value(value: f64) -> Option<f64> {
    (value.is_finite() && (0.0..=u64::MAX as f64).contains(&value) && value.fract() == 0.0).then_some(value)
}

/// Sizes given as JSON (a packet's `sizes`): a list of objects from size names to sizes.
pub fn sizes_from_json(value: &serde_json::Value) -> Result<Vec<BTreeMap<String, f64>>, String> {
    let Some(list) = value.as_array().filter(|l| l.len() <= 16) else {
        return Err("sizes is a list of up to 16 objects from size names to whole numbers.".into());
    };
    let mut points = Vec::new();
    for entry in list {
        let Some(object) = entry.as_object() else {
            return Err("each entry of sizes is an object from size names to whole numbers.".into());
        };
        let mut point = BTreeMap::new();
        for (name, value) in object {
            let Some(size) = value.as_f64().and_then(size_value) else {
                return Err(format!("sizes: {name} is {value}, not a whole number from 0 to 2^64 - 1."));
            };
            point.insert(name.clone(), size);
        }
        points.push(point);
    }
    Ok(points)
}

/// The first size name of `points` that is no parameter of any of `items` (a misspelt size would
/// otherwise be priced as unknown without a word).
pub fn stray_size(workspace: &Workspace, items: &[Item], points: &[BTreeMap<String, f64>]) -> Option<String> {
    let names: Vec<String> = items
        .iter()
        .flat_map(|&item| cairn_hir::fn_signature(workspace.db(), item).params.iter().map(|p| p.name.to_string()))
        .collect();
    points.iter().flat_map(BTreeMap::keys).find(|name| !names.contains(name)).cloned()
}

/// The sizes a function is predicted at without `--at`: its extent parameters at 10^3, 10^5, 10^7.
pub fn default_sizes(workspace: &Workspace, item: Item) -> Vec<BTreeMap<String, f64>> {
    let signature = cairn_hir::fn_signature(workspace.db(), item);
    let extents: Vec<String> = signature.extent_params.iter().map(|&i| signature.params[i].name.to_string()).collect();
    [1e3, 1e5, 1e7].iter().map(|&v| extents.iter().map(|e| (e.clone(), v)).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_hir::SourceText;

    fn work(source: &str, name: &str) -> Work {
        let mut workspace = Workspace::new(vec![SourceText { name: "w.cairn".into(), text: source.into() }]);
        assert!(workspace.check().refusal.is_none());
        let item = workspace.function_named(name).expect("declared");
        work_of(&workspace, item)
    }

    #[test]
    fn loops_multiply_their_bodies_by_their_trip_counts() {
        let w = work(
            "fn f(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n { s = add_wrap(s, xs[i]); }\n  return s;\n}\n",
            "f",
        );
        let at = |n: f64| w.at(&[("n".to_string(), n)].into_iter().collect());
        // Per element: the loop's step, add_wrap, one access.
        assert_eq!(at(10.0).serial.1, 10.0);
        assert_eq!(at(1000.0).serial.0 / at(10.0).serial.0, 100.0);
        assert!(!w.unknown() && !w.parallel());
        // Nested: n/4 times 4; a call counts the callee at the caller's sizes.
        let nested = work(
            "fn g(n:usize, xs:ro<u64>[n]) -> u64 {\n  let mut s:u64 = 0;\n  for i in 0..n / 4 { for j in 0..4 { s = add_wrap(s, xs[4 * i + j]); } }\n  return s;\n}\nfn h(m:usize, ys:ro<u64>[m]) -> u64 = g(m, ys);\n",
            "h",
        );
        assert_eq!(nested.at(&[("m".to_string(), 400.0)].into_iter().collect()).serial.1, 400.0);
        // A while loop is an unknown size.
        let unknown =
            work("fn u(n:u64) -> u64 {\n  let mut k:u64 = n;\n  while k > 1 { k = k / 2; }\n  return k;\n}\n", "u");
        assert!(unknown.unknown());
        let parallel = work("fn p(n:usize, out:rw<u64>[n]) {\n  parallel i in n { out[i] = 1; }\n}\n", "p");
        assert!(parallel.parallel());
    }

    #[test]
    fn no_price_is_negative_or_past_a_number_and_sizes_are_whole_counts() {
        // `for i in 1..n` at n = 0 runs nothing: 1 − 0 iterations is clamped, not priced below zero.
        let w = work("fn f(n:usize, out:rw<u64>[n]) {\n  for i in 1..n { out[i] = 1; }\n}\n", "f");
        let profile = Profile::default_for(1);
        let zero = predict(&w, &[[("n".to_string(), 0.0)].into_iter().collect()], &profile);
        assert!(zero.predictions[0].ns >= 0.0, "{:?}", zero.predictions);
        let huge = predict(&w, &[[("n".to_string(), u64::MAX as f64)].into_iter().collect()], &profile);
        assert!(huge.predictions[0].ns.is_finite());
        assert_eq!(size_value(1e6), Some(1e6));
        for bad in [-1.0, 0.5, f64::INFINITY, f64::NAN, 1e20] {
            assert_eq!(size_value(bad), None, "{bad}");
        }
        let parsed = sizes_from_json(&serde_json::json!([{"n": 1e3}, {}]));
        assert_eq!(parsed.map(|p| p.len()), Ok(2));
        assert!(sizes_from_json(&serde_json::json!([{"n": 1e30}])).is_err());
        assert!(sizes_from_json(&serde_json::json!({"n": 1})).is_err());
    }

    #[test]
    fn kendall_tau_counts_agreeing_orders() {
        assert_eq!(kendall_tau(&[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]), 1.0);
        assert_eq!(kendall_tau(&[(1.0, 30.0), (2.0, 20.0), (3.0, 10.0)]), -1.0);
    }
}
