//! `cairn predict` (tools.md §3.16): each named function's running time estimated from the
//! checker's work counts priced by a machine profile, without building or running anything; and
//! `--calibrate`, which fits a profile to this host by timing calibration kernels and states its
//! accuracy on kernels it never saw (`cairn_agent::predict`; docs/tools/predict.md).
//!
//! Exit: 0; 1 for a refused program; 2 for an environment error.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cairn_agent::predict::card::{self, Card};
use cairn_agent::predict::{Profile, calibrate, default_sizes, predict_on, work_of};
use serde::Serialize;

pub use crate::cli::PredictFlags;
use crate::output::{Output, to_map};
use crate::validate::NativeRunner;

#[derive(Serialize)]
struct PredictRecord {
    protocol: &'static str,
    predicted: &'static str,
    profile: Profile,
    /// The CPU profile the host side is judged for.
    arch: String,
    /// The card device work is priced on (every card with `--card all`).
    cards: Vec<&'static Card>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device_target: Option<String>,
    functions: BTreeMap<String, FunctionRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    against: Option<Against>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inspect: Option<crate::inspect_device::Inspection>,
}

/// One function's predictions (on the first card), and with `--card all` those on every card.
#[derive(Serialize)]
struct FunctionRecord {
    #[serde(flatten)]
    prediction: cairn_agent::predict::FunctionPrediction,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    by_card: BTreeMap<&'static str, Vec<cairn_agent::predict::Prediction>>,
}

/// `--against BEFORE`: the version compared with, and per function the ratios now/before.
#[derive(Serialize)]
struct Against {
    before: String,
    functions: BTreeMap<String, Ratios>,
}

#[derive(Serialize)]
struct Ratios {
    /// Per size: the predicted time now over the predicted time before (absent when the function
    /// is not in the earlier version).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ratios: Vec<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    before_ns: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
}

pub fn run(flags: &PredictFlags, out: Output) -> u8 {
    let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    if flags.calibrate {
        let runner = NativeRunner::new(None, 1);
        let host = format!("{} lanes, {}", lanes, std::env::consts::ARCH);
        return match calibrate(&runner, lanes, &host) {
            Ok(calibration) => {
                if let Some(path) = &flags.out {
                    let text = serde_json::to_string_pretty(&calibration.profile).unwrap_or_default() + "\n";
                    if let Err(e) = std::fs::write(path, text) {
                        out.environment(&format!("Cannot write {}: {e}.", path.display()));
                        return 2;
                    }
                }
                let detail = format!(
                    "held out: Kendall tau {:.2}, median error {:.0}%",
                    calibration.held_out.kendall_tau,
                    calibration.held_out.median_relative_error * 100.0
                );
                out.summary(&to_map(&calibration), true, &detail);
                0
            }
            Err(message) => {
                out.environment(&message);
                2
            }
        };
    }
    let profile = match load_profile(
        flags.profile.clone().or_else(|| std::env::var_os("CAIRN_PROFILE").map(PathBuf::from)),
        lanes,
    ) {
        Ok(profile) => profile,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    if flags.symbol.is_empty() {
        out.environment("Name a function with --symbol F (or calibrate with --calibrate).");
        return 2;
    }
    let mut sizes: Vec<BTreeMap<String, f64>> = Vec::new();
    for at in &flags.at {
        let mut point = BTreeMap::new();
        for pair in at.split(',') {
            let Some((name, value)) = pair.split_once('=') else {
                out.environment(&format!("--at {at}: write NAME=SIZE[,NAME=SIZE]."));
                return 2;
            };
            match value.trim().parse::<f64>().ok().and_then(cairn_agent::predict::size_value) {
                Some(v) => point.insert(name.trim().to_string(), v),
                None => {
                    out.environment(&format!("--at {at}: {value} is not a whole number from 0 to 2^64 - 1."));
                    return 2;
                }
            };
        }
        sizes.push(point);
    }
    let (program, workspace) = match crate::check::load_checked(&flags.path, out) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    // The device target, then the cards that can run it, and the CPU profile.
    let device_target = flags.device_target.clone().or_else(|| program.build.device_target.clone());
    if let Some(target) = &device_target
        && let Err(message) = cairn_vfs::check_device_target(target)
    {
        out.environment(&message);
        return 2;
    }
    if flags.card.as_deref() == Some("all") && flags.against.is_some() {
        out.environment("--card all prices every card; with --against, name one card.");
        return 2;
    }
    // Only a card asked for is held to the target (the default prices whatever the target).
    let held_to = flags.card.as_ref().and(device_target.as_deref());
    let cards = match card::resolve(flags.card.as_deref(), held_to) {
        Ok(cards) => cards,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    let arch = flags.arch.clone().unwrap_or_else(|| program.build.arch.clone());
    if let Err(message) = cairn_vfs::check_arch(&arch) {
        out.environment(&format!("--arch: {message}"));
        return 2;
    }
    let inspection = if flags.inspect {
        match crate::inspect_device::inspect(&workspace, device_target.as_deref()) {
            Ok(inspection) => Some(inspection),
            Err(message) => {
                out.environment(&message);
                return 2;
            }
        }
    } else {
        None
    };
    // The earlier version, checked; its refusal is an environment error here (the record is this
    // version's).
    let before = match &flags.against {
        None => None,
        Some(path) => {
            let Some(program) = crate::check::load_program(path, out) else { return 2 };
            let mut workspace = crate::check::load_workspace(&program);
            if let Some(refusal) = workspace.check().refusal {
                out.environment(&format!(
                    "--against {}: the earlier version does not check ({}: {}).",
                    path.display(),
                    refusal.first.code,
                    refusal.first.message
                ));
                return 2;
            }
            Some((path.display().to_string(), workspace))
        }
    };
    let mut functions = BTreeMap::new();
    let mut against = BTreeMap::new();
    for symbol in &flags.symbol {
        let Some(item) = cairn_agent::program::function_item(&workspace, symbol) else {
            out.environment(&format!("{symbol} names no function of the program."));
            return 2;
        };
        if let Some(name) = cairn_agent::predict::stray_size(&workspace, &[item], &sizes) {
            out.environment(&format!("--at: {name} is no parameter of {symbol}: name its size parameters."));
            return 2;
        }
        let at = if sizes.is_empty() { default_sizes(&workspace, item) } else { sizes.clone() };
        let work = work_of(&workspace, item);
        let now = predict_on(&work, &at, &profile, cards[0]);
        let by_card = if cards.len() > 1 && work.device() {
            cards.iter().map(|card| (card.key, predict_on(&work, &at, &profile, card).predictions)).collect()
        } else {
            BTreeMap::new()
        };
        if let Some((_, earlier)) = &before {
            let ratios = match cairn_agent::program::function_item(earlier, symbol) {
                Some(old) => {
                    let then = predict_on(&work_of(earlier, old), &at, &profile, cards[0]);
                    let before_ns: Vec<f64> = then.predictions.iter().map(|p| p.ns).collect();
                    let ratios = now
                        .predictions
                        .iter()
                        .zip(&before_ns)
                        .map(|(n, &b)| {
                            if b > 0.0 {
                                n.ns / b
                            } else if n.ns > 0.0 {
                                f64::MAX
                            } else {
                                1.0
                            }
                        })
                        .collect();
                    Ratios { ratios, before_ns, note: None }
                }
                None => Ratios {
                    ratios: Vec::new(),
                    before_ns: Vec::new(),
                    note: Some("not in the earlier version: nothing to compare"),
                },
            };
            against.insert(symbol.clone(), ratios);
        }
        functions.insert(symbol.clone(), FunctionRecord { prediction: now, by_card });
    }
    let detail = match &before {
        None => "predicted, not measured".to_string(),
        Some((path, _)) => {
            let ratios: Vec<String> = against
                .iter()
                .map(|(name, r)| match r.ratios.as_slice() {
                    [] => format!("{name}: not in {path}"),
                    ratios => format!(
                        "{name}: ×{} of {path}",
                        ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", ×")
                    ),
                })
                .collect();
            format!("predicted, not measured; {}", ratios.join("; "))
        }
    };
    let record = PredictRecord {
        protocol: "cairn.predict/1",
        predicted: "predicted, not measured: the checker's work counts priced by the profile",
        profile,
        arch,
        cards,
        device_target,
        functions,
        against: before.as_ref().map(|(path, _)| Against { before: path.clone(), functions: against }),
        inspect: inspection,
    };
    out.summary(&to_map(&record), true, &detail);
    std::mem::forget(workspace);
    if let Some((_, earlier)) = before {
        std::mem::forget(earlier);
    }
    0
}

fn load_profile(path: Option<PathBuf>, lanes: u32) -> Result<Profile, String> {
    let Some(path) = path else { return Ok(Profile::default_for(lanes)) };
    let bytes = std::fs::read(&path).map_err(|e| format!("Cannot read the profile {}: {e}.", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not a profile: {e}.", path.display()))
}
