//! `cairn tune` (tools.md §3.15): the command around `cairn_agent::tune` — loading and checking
//! the program, the sizes, the native runner (one run at a time, so runs do not share the cores),
//! the `cairn.tune/2` record, and `--write` of the chosen plan. What is searched and how it is
//! timed: the agent crate's module comment; what is not built: docs/tools/tune.md.
//!
//! Exit: 0 (also when nothing was measured); 1 for a refused program; 2 for an environment error.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cairn_agent::tune::{Request, chosen_sources, compare, tune};

pub use crate::cli::{ObjectiveFlag, TuneFlags};
use crate::output::{Output, to_map};
use crate::validate::NativeRunner;

/// One entry of `--shapes`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeEntry {
    at: String,
    #[serde(default = "one")]
    weight: f64,
}

fn one() -> f64 {
    1.0
}

pub fn run(flags: &TuneFlags, out: Output) -> u8 {
    let started = Instant::now();
    if !flags.compare.is_empty() && flags.compare.len() != 2 {
        out.environment("--compare is given exactly twice: plan A, then plan B.");
        return 2;
    }
    let mut sizes = Vec::new();
    let mut weights = Vec::new();
    for at in &flags.at {
        match parse_size(at) {
            Some(size) => sizes.push(size),
            None => {
                out.environment(&format!("--at {at}: write NAME=SIZE with SIZE a whole number (1000000 or 1e6)."));
                return 2;
            }
        }
        weights.push(1.0);
    }
    if let Some(path) = &flags.shapes {
        let entries = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice::<Vec<ShapeEntry>>(&bytes).map_err(|e| e.to_string()));
        let entries = match entries {
            Ok(entries) => entries,
            Err(e) => {
                out.environment(&format!(
                    "--shapes {}: {e} (write [{{\"at\":\"n=1e6\",\"weight\":3}}]).",
                    path.display()
                ));
                return 2;
            }
        };
        for entry in entries {
            match (parse_size(&entry.at), entry.weight) {
                (Some(size), weight) if weight.is_finite() && weight > 0.0 => {
                    sizes.push(size);
                    weights.push(weight);
                }
                _ => {
                    out.environment(&format!(
                        "--shapes {}: {} weighted {} is not a whole size with a positive weight.",
                        path.display(),
                        entry.at,
                        entry.weight
                    ));
                    return 2;
                }
            }
        }
    }
    if sizes.is_empty() {
        sizes.push(1_000_000);
        weights.push(1.0);
    }
    let since = match &flags.since {
        None => None,
        Some(path) => match std::fs::read(path).ok().and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        {
            Some(saved) if saved["protocol"] == "cairn.tune/2" && saved["candidates"].is_array() => Some(saved),
            _ => {
                out.environment(&format!("--since {}: not a saved cairn.tune/2 answer.", path.display()));
                return 2;
            }
        },
    };
    let (program, workspace) = match crate::check::load_checked(&flags.path, out) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let runner = NativeRunner::new(Some(program.clone()), 1);
    let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let clock = || started.elapsed().as_secs_f64();
    let profile_path = flags.profile.clone().or_else(|| std::env::var_os("CAIRN_PROFILE").map(PathBuf::from));
    let profile = match profile_path {
        Some(path) => match std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
            Some(profile) => profile,
            None => {
                out.environment(&format!(
                    "{} is not a profile (cairn predict --calibrate writes one).",
                    path.display()
                ));
                return 2;
            }
        },
        None => cairn_agent::predict::Profile::default_for(lanes),
    };
    let history_dir = (!flags.no_history)
        .then(|| flags.history.clone().unwrap_or_else(|| program.root.join(".cairn").join("history")));
    let records = match &history_dir {
        Some(dir) => match cairn_vfs::history::read(dir) {
            Ok(values) => cairn_agent::history::records_of(values),
            Err(e) => {
                out.environment(&format!("The history in {} cannot be read: {e}.", dir.display()));
                return 2;
            }
        },
        None => Vec::new(),
    };
    // One card prices the candidates (`all` is predict's: a search ranks on one).
    let card = match flags.card.as_deref() {
        Some("all") => {
            Err("tune ranks candidates on one card: name it (cairn predict --card all compares them).".into())
        }
        asked => cairn_agent::predict::card::resolve(asked, None).map(|cards| cards[0]),
    };
    let card = match card {
        Ok(card) => card,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    let request = Request {
        symbol: &flags.symbol,
        sizes,
        weights,
        objective: match flags.objective {
            ObjectiveFlag::Geomean => cairn_agent::tune::Objective::Geomean,
            ObjectiveFlag::Mean => cairn_agent::tune::Objective::Mean,
        },
        measure: flags.measure,
        budget_runs: flags.budget_runs,
        lanes,
        profile,
        budget_seconds: flags.budget_seconds,
        clock: &clock,
        history: &records,
        accept_emulated: flags.accept_emulated,
        profiler: flags.profiler.is_some(),
        card,
    };
    if let [a, b] = flags.compare.as_slice() {
        let status = match compare(&workspace, &request, a, b, &runner) {
            Ok(mut compared) => {
                if let Err(reason) = append(history_dir.as_deref(), &compared.records) {
                    compared.reason = Some(reason);
                }
                if flags.artifacts {
                    if let Err(message) = keep_artifacts(&program.root, &mut compared, history_dir.as_deref()) {
                        out.environment(&message);
                        return 2;
                    }
                }
                let lines: Vec<String> = compared
                    .lines
                    .iter()
                    .map(|l| {
                        let files: String = l.artifacts.iter().map(|path| format!("\n    {path}")).collect();
                        format!("[{}] {}{files}", l.label, l.text)
                    })
                    .collect();
                let detail =
                    format!("{} against {}\n{}", compared.compare[1].plan, compared.compare[0].plan, lines.join("\n"));
                out.summary(&to_map(&compared), true, &detail);
                0
            }
            Err(message) => {
                out.environment(&message);
                2
            }
        };
        std::mem::forget(workspace);
        return status;
    }
    let mut record = match tune(&workspace, &request, &runner) {
        Ok(record) => record,
        Err(message) => {
            out.environment(&message);
            return 2;
        }
    };
    if let Err(reason) = append(history_dir.as_deref(), &record.records) {
        record.reason = Some(reason);
    }
    if flags.write && record.chosen != record.current {
        match write(&program, chosen_sources(&record)) {
            Ok(()) => record.written = true,
            Err(message) => record.reason = Some(message),
        }
    }
    let detail = format!("{}: {} (by {})", record.function, record.chosen, record.chosen_by);
    let mut map = to_map(&record);
    if let Some(saved) = &since {
        since_delta(&mut map, saved);
    }
    out.summary(&map, true, &detail);
    std::mem::forget(workspace);
    0
}

/// Appends `records` to the history in `dir` (none: nothing); why not, when it could not.
fn append(dir: Option<&std::path::Path>, records: &[cairn_agent::history::Record]) -> Result<(), String> {
    let Some(dir) = dir else { return Ok(()) };
    for entry in records {
        cairn_vfs::history::append(dir, &serde_json::to_value(entry).unwrap_or_default())
            .map_err(|e| format!("The history in {} could not be written: {e}.", dir.display()))?;
    }
    Ok(())
}

/// `--since`: keeps only the candidates that are new or differ from the saved answer's row of
/// the same plan (where its time came from aside), and says what else moved: `since` {`unchanged`, `gone` (plans no longer
/// candidates), `chosen_before`}.
fn since_delta(map: &mut serde_json::Map<String, serde_json::Value>, saved: &serde_json::Value) {
    use serde_json::Value;
    let key = |row: &Value| row["plan"].as_str().unwrap_or_default().to_string();
    let before: std::collections::BTreeMap<String, &Value> =
        saved["candidates"].as_array().into_iter().flatten().map(|row| (key(row), row)).collect();
    let now: Vec<Value> = map.get("candidates").and_then(Value::as_array).cloned().unwrap_or_default();
    let plans: std::collections::BTreeSet<String> = now.iter().map(key).collect();
    // Where a time came from (`measurement: kept`) is no change in the row.
    let bare = |row: &Value| {
        let mut row = row.clone();
        if let Some(object) = row.as_object_mut() {
            object.remove("measurement");
        }
        row
    };
    let changed: Vec<Value> =
        now.iter().filter(|row| !before.get(&key(row)).is_some_and(|b| same(&bare(b), &bare(row)))).cloned().collect();
    let unchanged = now.len() - changed.len();
    let gone: Vec<Value> =
        before.keys().filter(|plan| !plans.contains(*plan)).map(|p| Value::from(p.clone())).collect();
    map.insert("candidates".into(), Value::Array(changed));
    let mut since = serde_json::Map::new();
    since.insert("unchanged".into(), Value::from(unchanged));
    since.insert("gone".into(), Value::Array(gone));
    since.insert("chosen_before".into(), saved["chosen"].clone());
    map.insert("since".into(), Value::Object(since));
}

/// Equal rows, numbers compared to within 1e-9 of their size: a saved answer's floats, read back,
/// may differ from the ones printed in the last digit.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// `n=1e6`, `n=1000000` or `1e6` → 1000000.
pub(crate) fn parse_size(at: &str) -> Option<u64> {
    let value = at.rsplit('=').next()?.trim();
    if let Ok(n) = value.parse::<u64>() {
        return Some(n);
    }
    let (mantissa, exponent) = value.split_once(['e', 'E'])?;
    let (mantissa, exponent): (u64, u32) = (mantissa.parse().ok()?, exponent.parse().ok()?);
    mantissa.checked_mul(10u64.checked_pow(exponent)?)
}

/// Writes the files of the chosen candidate that differ from the program's (a byte-order mark kept).
fn write(program: &cairn_vfs::Program, chosen: Option<&[cairn_hir::SourceText]>) -> Result<(), String> {
    let chosen = chosen.ok_or("the chosen plan has no program")?;
    for file in &program.files {
        let Some(new) = chosen.iter().find(|f| f.name == file.name) else { continue };
        if new.text == file.text {
            continue;
        }
        let text = if file.had_bom { format!("\u{feff}{}", new.text) } else { new.text.clone() };
        std::fs::write(&file.path, text).map_err(|e| format!("Cannot write {}: {e}.", file.path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_are_whole_numbers_or_powers_of_ten() {
        assert_eq!(super::parse_size("n=1e6"), Some(1_000_000));
        assert_eq!(super::parse_size("n=4096"), Some(4096));
        assert_eq!(super::parse_size("2e3"), Some(2000));
        assert_eq!(super::parse_size("n=1.5"), None);
        assert_eq!(super::parse_size("n=1e30"), None);
    }
}

/// Writes the files behind a comparison's lines into a fresh directory of the project's
/// `.cairn/artifacts/` and names each on the lines it supports (a kept measurement also names the
/// history it was kept in).
fn keep_artifacts(
    root: &Path,
    compared: &mut cairn_agent::tune::Compare,
    history: Option<&Path>,
) -> Result<(), String> {
    let parent = cairn_vfs::project_subdir(root, ".cairn")
        .map(|dir| dir.join("artifacts"))
        .map_err(|why| format!("The artifacts cannot be kept: {why}."))?;
    std::fs::create_dir_all(&parent).map_err(|e| format!("{} cannot be made: {e}.", parent.display()))?;
    let function = compared.function.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_");
    let dir = (1..)
        .map(|n| parent.join(format!("compare-{function}-{n}")))
        .find(|d| std::fs::create_dir(d).is_ok())
        .ok_or("no artifacts directory could be made")?;
    let kept = compared.compare.iter().any(|side| side.measurement == "kept");
    for artifact in &compared.artifacts {
        let path = dir.join(&artifact.path);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|e| format!("{} cannot be made: {e}.", folder.display()))?;
        }
        std::fs::write(&path, &artifact.text).map_err(|e| format!("{} cannot be written: {e}.", path.display()))?;
        let shown = path.display().to_string();
        for line in compared.lines.iter_mut().filter(|l| artifact.supports.contains(&l.label)) {
            line.artifacts.push(shown.clone());
        }
    }
    if kept && let Some(history) = history {
        for line in compared.lines.iter_mut().filter(|l| l.label == "runtime measurement") {
            line.artifacts.push(history.display().to_string());
        }
    }
    Ok(())
}
