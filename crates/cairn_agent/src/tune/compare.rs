//! `cairn tune --compare A --compare B` (tools.md §3.15): plan B against plan A instead of a
//! search. Each plan is made and checked as a whole program like a search's candidate; both are
//! read by `explain` (the emitted code's guards, allocations, calls, loops, vector width and the
//! vectorizer's remarks) and
//! timed on this host, A and B alternating, unless the history keeps a current measurement of
//! one at these sizes. The answer is lines, each labelled with what it is: a `[compiler
//! observation]` (the emitted code, read), a `[runtime measurement]` (a time, measured), a
//! `[hypothesis]` (an explanation nothing here confirmed) or a `[suggested experiment]` (a run that
//! would test it); with `--profiler`, a `[profiler observation]` (each side's call read by the
//! runner's profiler, apart from timing: `profile.rs`). No count from the compiler is ever given as a cause. The comparison adds its
//! measurements, the observation, the hypothesis and the experiment to the candidate history.

use std::collections::BTreeMap;

use cairn_hir::{Item, Workspace};
use serde::Serialize;
use serde_json::{Map, Value};

use super::records::{history_record, kept_measurement, measurement, variant_of};
use super::{Candidate, Request, Subject, code_of, implementation_symbols, measure, median, predicted};
use crate::plans::plan_text;
use crate::validate::Runner;
use crate::validate::cases::Shape;

/// How many times each side is timed when the history keeps no measurement of it.
const ROUNDS: usize = 2;

/// Within this fraction of each other, two times are the same on this host.
const NOISE: f64 = 0.05;

/// The answer of a comparison (`cairn.tune/2` with `compare`).
#[derive(Debug, Serialize)]
pub struct Compare {
    pub protocol: &'static str,
    /// `compared`.
    pub status: &'static str,
    pub function: String,
    pub sizes: Vec<u64>,
    /// A and B, in that order.
    pub compare: Vec<Side>,
    /// The labelled lines, in the order printed.
    pub lines: Vec<Line>,
    /// The records this comparison adds to the candidate history (the caller appends them).
    #[serde(skip)]
    pub records: Vec<crate::history::Record>,
    /// The files behind the lines (`--artifacts`; the caller writes them and names them on the
    /// lines they support).
    #[serde(skip)]
    pub artifacts: Vec<Artifact>,
    /// Why the history could not take them (set by the caller).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One side of a comparison.
#[derive(Debug, Serialize)]
pub struct Side {
    /// As asked (`grain 1; lanes 8`, `none`, `use g`).
    pub asked: String,
    /// As a plan's text.
    pub plan: String,
    pub predicted_ns: Vec<f64>,
    pub measured_ns: Vec<u64>,
    /// `kept` when the history's measurement was used, `measured` when timed now.
    pub measurement: &'static str,
    /// For `use g`: whether the history holds a current, strict validation of `g` (a comparison
    /// times an implementation either way; a search would not choose an unvalidated one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validated: Option<bool>,
    /// With `--profiler`: the profiler's reading of one call at each size (setup subtracted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiled: Option<Vec<crate::validate::Reading>>,
}

/// A labelled line.
#[derive(Debug, Serialize)]
pub struct Line {
    pub label: &'static str,
    pub text: String,
    /// With `--artifacts`: the paths of every file behind the line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
}

impl Line {
    fn new(label: &'static str, text: impl Into<String>) -> Line {
        Line { label, text: text.into(), artifacts: Vec::new() }
    }
}

/// A file behind some of a comparison's lines: its path relative to the artifacts' directory,
/// its text, and the labels of the lines it supports.
#[derive(Debug)]
pub struct Artifact {
    pub path: String,
    pub text: String,
    pub supports: &'static [&'static str],
}

const EVERY_LINE: &[&str] = &["compiler observation", "runtime measurement", "hypothesis", "suggested experiment"];
const READINGS: &[&str] = &["compiler observation", "hypothesis", "suggested experiment"];
const TIMES: &[&str] = &["runtime measurement", "hypothesis", "suggested experiment"];

/// The files behind a comparison: each side's program as it was built (`A/…`, `B/…`), what the
/// emitted code read (`A.explain.json`), and the times (`measurements.json`: every sample, and
/// whether it was measured now or kept in the history).
fn artifacts(
    candidates: &[Candidate],
    readings: &[Option<Map<String, Value>>],
    samples: &[Vec<Vec<u64>>; 2],
    sizes: &[u64],
) -> Vec<Artifact> {
    let mut out = Vec::new();
    let mut times = Map::new();
    times.insert("sizes".into(), Value::from(sizes.to_vec()));
    for (side, candidate) in candidates.iter().enumerate() {
        let label = ["A", "B"][side];
        for source in &candidate.sources {
            // Names are the program's own relative paths; anything else is not written.
            let safe =
                !source.name.starts_with('/') && source.name.split('/').all(|part| !part.is_empty() && part != "..");
            if safe {
                out.push(Artifact {
                    path: format!("{label}/{}", source.name),
                    text: source.text.clone(),
                    supports: EVERY_LINE,
                });
            }
        }
        if let Some(reading) = &readings[side] {
            let text = serde_json::to_string_pretty(reading).unwrap_or_default() + "\n";
            out.push(Artifact { path: format!("{label}.explain.json"), text, supports: READINGS });
        }
        let mut side_times = Map::new();
        side_times.insert("plan".into(), Value::from(candidate.plan.clone()));
        side_times.insert(
            "origin".into(),
            Value::from(if candidate.measurement.is_some() { "kept in the history" } else { "measured now" }),
        );
        side_times.insert("samples_ns".into(), Value::from(samples[side].clone()));
        side_times.insert("median_ns".into(), Value::from(candidate.measured_ns.clone()));
        times.insert(label.into(), Value::Object(side_times));
    }
    let text = serde_json::to_string_pretty(&Value::Object(times)).unwrap_or_default() + "\n";
    out.push(Artifact { path: "measurements.json".into(), text, supports: TIMES });
    out
}

/// What one side asks for.
#[derive(Debug, Clone, PartialEq)]
enum Asked {
    Items(Vec<(&'static str, u64)>),
    Use(String),
}

/// Reads `none`, `grain 1; lanes 8` (with or without `plan f { … }` around it) or `use g` /
/// `use g[8]`.
fn parse(text: &str) -> Result<Asked, String> {
    let trimmed = text.trim();
    let inner = match (trimmed.find('{'), trimmed.rfind('}')) {
        (Some(open), Some(close)) if trimmed.starts_with("plan ") && open < close => &trimmed[open + 1..close],
        _ => trimmed,
    };
    let inner = inner.trim().trim_end_matches(';').trim();
    if inner == "none" || inner.is_empty() {
        return Ok(Asked::Items(Vec::new()));
    }
    if let Some(rest) = inner.strip_prefix("use ") {
        let name = rest.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!("--compare {text}: `use` names one implementation (`use g` or `use g[8]`)."));
        }
        return Ok(Asked::Use(name.to_string()));
    }
    let mut items: Vec<(&'static str, u64)> = Vec::new();
    for part in inner.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let mut words = part.split_whitespace();
        let (Some(word), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("--compare {text}: write items as `grain 4096; lanes 8`, or `none`, or `use g`."));
        };
        let Some(&word) = ["grain", "lanes", "fuse"].iter().find(|w| **w == word) else {
            return Err(format!("--compare {text}: {word} is no host item (grain, lanes, fuse)."));
        };
        let Ok(value) = value.parse::<u64>() else {
            return Err(format!("--compare {text}: {value} is not a whole number."));
        };
        if items.iter().any(|(w, _)| *w == word) {
            return Err(format!("--compare {text}: {word} is given twice."));
        }
        items.push((word, value));
    }
    Ok(Asked::Items(items))
}

/// Compares plan `b` against plan `a` for `request.symbol`.
pub fn compare(
    accepted: &Workspace,
    request: &Request<'_>,
    a: &str,
    b: &str,
    runner: &dyn Runner,
) -> Result<Compare, String> {
    let asked = [parse(a)?, parse(b)?];
    let subject = Subject::of(accepted, request.symbol)?;
    let (workspace, item) = subject.program(accepted)?;
    let full = subject.full.clone();
    let bare = full.rsplit('.').next().unwrap_or(&full).to_string();
    let db = workspace.db();
    let shape = Shape::of(cairn_hir::fn_signature(db, item))
        .map_err(|why| format!("{full}'s inputs cannot be made: {why}."))?;
    let work = crate::predict::work_of(workspace, item);
    let base = crate::history::base_as_written(workspace, item).ok_or("the function's code could not be digested")?;
    let mut candidates = Vec::new();
    let mut validated = Vec::new();
    let mut codes = Vec::new();
    for (side, (asked, text)) in asked.iter().zip([a, b]).enumerate() {
        let label = ["A", "B"][side];
        let (candidate, holds, code) = candidate(workspace, item, &subject, asked, request, &base, &shape, &work)
            .map_err(|why| format!("plan {label} ({text}): {why}"))?;
        candidates.push(candidate);
        validated.push(holds);
        codes.push(code);
    }
    let same_code = codes[0] == codes[1];
    // Times: the history's kept measurement, else ROUNDS samples alternating A and B.
    let mut samples: [Vec<Vec<u64>>; 2] = [Vec::new(), Vec::new()];
    for (side, candidate) in candidates.iter_mut().enumerate() {
        if let Some(times) = kept_measurement(request.history, &full, &base, candidate, &request.sizes) {
            candidate.measurement = Some("kept");
            samples[side].push(times);
        }
    }
    for _ in 0..ROUNDS {
        for side in 0..2 {
            let twin = side == 1 && same_code;
            if candidates[side].measurement.is_some() || twin {
                continue;
            }
            samples[side].push(measure(&candidates[side], &shape, &request.sizes, &bare, runner)?);
        }
    }
    if same_code && candidates[1].measurement.is_none() {
        samples[1] = samples[0].clone();
    }
    for (side, candidate) in candidates.iter_mut().enumerate() {
        candidate.measured_ns =
            (0..request.sizes.len()).map(|s| median(samples[side].iter().map(|r| r[s]).collect())).collect();
    }
    // The emitted code, read.
    let explained: Vec<Option<Map<String, Value>>> =
        candidates.iter().map(|c| runner.explain(&c.sources, &[bare.clone()]).ok()).collect();
    let readings: Vec<Option<Map<String, Value>>> =
        explained.iter().map(|r| r.as_ref().and_then(|r| reading_of(r, &bare))).collect();
    let artifacts = artifacts(&candidates, &explained, &samples, &request.sizes);
    let mut lines = Vec::new();
    if same_code {
        lines.push(Line::new(
            "compiler observation",
            format!("A and B lower {full} to the same code: a difference in time between them is the host's noise"),
        ));
    } else {
        lines.extend(observations(&readings));
    }
    let observed: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
    let extents = extent_names(&shape);
    for (s, &size) in request.sizes.iter().enumerate() {
        let (ta, tb) = (candidates[0].measured_ns[s], candidates[1].measured_ns[s]);
        let ratio = tb.max(1) as f64 / ta.max(1) as f64;
        let origin = |c: &Candidate| if c.measurement.is_some() { "kept in the history" } else { "measured now" };
        lines.push(Line::new(
            "runtime measurement",
            format!(
                "{extents}={size}: A {} ({}), B {} ({}); B/A {ratio:.2}",
                duration(ta),
                origin(&candidates[0]),
                duration(tb),
                origin(&candidates[1])
            ),
        ));
    }
    // With a profiler: each side's call read apart from timing (the twin of the same code shares it).
    let mut profiled: [Option<Vec<crate::validate::Reading>>; 2] = [None, None];
    if request.profiler {
        for side in 0..2 {
            profiled[side] = match (side, same_code) {
                (1, true) => profiled[0].clone(),
                _ => Some(super::profile::profile_calls(
                    &candidates[side].sources,
                    &shape,
                    &request.sizes,
                    &bare,
                    runner,
                )?),
            };
        }
        if let [Some(a), Some(b)] = &profiled {
            for ((size, a), b) in request.sizes.iter().zip(a).zip(b) {
                lines.push(Line::new(
                    "profiler observation",
                    super::profile::observation(&format!("{extents}={size}"), a, b),
                ));
            }
        }
    }
    let (claim, experiment) = hypothesis(&asked, &candidates, &request.sizes, same_code, &extents);
    lines.push(Line::new("hypothesis", claim.clone()));
    let run = format!(
        "cairn tune --symbol {full} --compare '{a}' --compare '{b}' --at {extents}={}",
        request.sizes.iter().max().copied().unwrap_or(1_000_000).saturating_mul(10)
    );
    lines.push(Line::new("suggested experiment", format!("{run}: {experiment}")));
    // What the history keeps: the new measurements, the observation, the hypothesis and the
    // experiment that would test it.
    let mut records: Vec<crate::history::Record> = candidates
        .iter()
        .filter(|c| c.measurement.is_none() && !(same_code && std::ptr::eq(*c, &candidates[1])))
        .filter_map(|c| measurement(&full, c, &base, &request.sizes))
        .collect();
    // Each side's reading, a `profile` record of its own (the twin's is its original's).
    for (side, candidate) in candidates.iter().enumerate() {
        if let Some(readings) = &profiled[side]
            && !(side == 1 && same_code)
        {
            let tool = readings.first().map(|r| r.tool.clone()).unwrap_or_default();
            let detail: Map<String, Value> = [
                ("tool".to_string(), Value::from(tool)),
                ("run".to_string(), Value::from(super::profile::RUN)),
                ("sizes".to_string(), serde_json::to_value(&request.sizes).unwrap_or_default()),
                (
                    "counts".to_string(),
                    serde_json::to_value(readings.iter().map(|r| &r.counts).collect::<Vec<_>>()).unwrap_or_default(),
                ),
            ]
            .into_iter()
            .collect();
            records.extend(history_record("profile", &full, &candidate.plan, variant_of(candidate), &base, detail));
        }
    }
    let pair = format!("{} vs {}", candidates[0].plan, candidates[1].plan);
    let variant = Value::Array(candidates.iter().map(variant_of).collect());
    let detail = |pairs: Vec<(&str, Value)>| -> Map<String, Value> {
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    };
    records.extend(history_record(
        "observation",
        &full,
        &pair,
        variant.clone(),
        &base,
        detail(vec![("by", Value::from("cairn tune --compare (explain)")), ("read", Value::from(observed))]),
    ));
    records.extend(history_record(
        "hypothesis",
        &full,
        &pair,
        variant.clone(),
        &base,
        detail(vec![("claim", Value::from(claim.clone()))]),
    ));
    records.extend(history_record(
        "experiment",
        &full,
        &pair,
        variant,
        &base,
        detail(vec![("run", Value::from(run)), ("tests", Value::from(claim))]),
    ));
    let compare = candidates
        .into_iter()
        .zip(asked.iter().zip([a, b]))
        .zip(validated)
        .zip(profiled)
        .map(|(((c, (_, text)), validated), profiled)| Side {
            asked: text.to_string(),
            plan: c.plan,
            predicted_ns: c.predicted_ns,
            measured_ns: c.measured_ns,
            measurement: if c.measurement.is_some() { "kept" } else { "measured" },
            validated,
            profiled,
        })
        .collect();
    Ok(Compare {
        protocol: "cairn.tune/2",
        status: "compared",
        function: full,
        sizes: request.sizes.clone(),
        compare,
        lines,
        records,
        artifacts,
        reason: None,
    })
}

/// One side made into a candidate program and checked: the candidate, for `use g` whether its
/// validation holds, and its code's digest.
#[allow(clippy::too_many_arguments)]
fn candidate(
    workspace: &Workspace,
    item: Item,
    subject: &Subject,
    asked: &Asked,
    request: &Request<'_>,
    base: &str,
    shape: &Shape,
    work: &crate::predict::Work,
) -> Result<(Candidate, Option<bool>, u64), String> {
    let full = &subject.full;
    let bare = full.rsplit('.').next().unwrap_or(full);
    let (sources, plan, items, selects, holds) = match asked {
        Asked::Items(items) => {
            if !items.is_empty() && subject.regions == 0 {
                return Err(format!("{full} has no parallel region for plan items to schedule."));
            }
            let sources = crate::plans::with_plan(workspace, &subject.files, item, items);
            (sources, plan_text(full, items), items.clone(), None, None)
        }
        Asked::Use(name) => {
            let symbols = implementation_symbols(workspace, item);
            let Some(symbol) = symbols.iter().find(|s| s.as_str() == name || s.rsplit('.').next() == Some(name)) else {
                return Err(format!(
                    "{name} is no implementation of {full} (its implementations: {}).",
                    if symbols.is_empty() { "none".to_string() } else { symbols.join(", ") }
                ));
            };
            let sources = crate::plans::with_selection(workspace, &subject.files, item, Some(symbol));
            let holds =
                super::validation_holds(workspace, request.history, full, symbol, base, request.accept_emulated)
                    .is_ok();
            let short = symbol.rsplit('.').next().unwrap_or(symbol);
            (sources, format!("plan {bare} use {short};"), Vec::new(), Some(symbol.clone()), Some(holds))
        }
    };
    let mut checked = Workspace::new(sources.clone());
    if let Some(refusal) = checked.check().refusal {
        return Err(format!("refused: {}: {}", refusal.first.code, refusal.first.message));
    }
    let identity = selects.as_deref().and_then(|s| super::current_identity(workspace, s));
    let predicted_ns = predicted(work, &request.sizes, &request.profile, request.card, &items, shape);
    let candidate = Candidate {
        plan,
        items: items.iter().copied().collect(),
        selects,
        same_code: None,
        predicted_ns,
        measured_ns: Vec::new(),
        measured_objective_ns: None,
        measurement: None,
        sources,
        identity,
    };
    Ok((candidate, holds, code_of(&checked, full)))
}

/// The explain reading of `bare` (its entry in `cairn.explain/1`'s `functions`).
fn reading_of(explain: &Map<String, Value>, bare: &str) -> Option<Map<String, Value>> {
    explain.get("functions")?.get(bare)?.as_object().cloned()
}

/// The counts explain keeps, where A's and B's emitted code differ.
fn observations(readings: &[Option<Map<String, Value>>]) -> Vec<Line> {
    let (Some(a), Some(b)) = (&readings[0], &readings[1]) else {
        return vec![Line::new(
            "compiler observation",
            "the emitted code could not be read (explain failed on one side)",
        )];
    };
    let count = |reading: &Map<String, Value>, key: &str| -> u64 {
        match reading.get(key) {
            Some(Value::Array(list)) if key == "guards" => {
                list.iter().filter_map(|g| g.get("emitted").and_then(Value::as_u64)).sum()
            }
            Some(Value::Array(list)) => list.iter().filter_map(|c| c.get("count").and_then(Value::as_u64)).sum(),
            Some(value) => value.as_u64().unwrap_or(u64::from(value.as_bool().unwrap_or(false))),
            None => 0,
        }
    };
    let mut out = Vec::new();
    for (key, what) in [
        ("vector_width", "widest vector (elements)"),
        ("loops", "loops"),
        ("calls", "calls"),
        ("guards", "guards emitted"),
        ("allocations", "allocations"),
    ] {
        let (x, y) = (count(a, key), count(b, key));
        if x != y {
            out.push(Line::new("compiler observation", format!("{what}: A {x}, B {y}")));
        }
    }
    let callees = |reading: &Map<String, Value>| -> BTreeMap<String, u64> {
        reading
            .get("calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .filter_map(|c| Some((c.get("callee")?.as_str()?.to_string(), c.get("count")?.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ca, cb) = (callees(a), callees(b));
    for callee in ca.keys().chain(cb.keys()).collect::<std::collections::BTreeSet<_>>() {
        let (x, y) = (ca.get(callee).copied().unwrap_or(0), cb.get(callee).copied().unwrap_or(0));
        if x != y {
            out.push(Line::new("compiler observation", format!("calls of {callee}: A {x}, B {y}")));
        }
    }
    // What LLVM's vectorizer said of one side's loops and not of the other's.
    let remarks = |reading: &Map<String, Value>| -> Vec<String> {
        reading
            .get("remarks")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let (ra, rb) = (remarks(a), remarks(b));
    for (side, own, other) in [("A", &ra, &rb), ("B", &rb, &ra)] {
        for remark in own.iter().filter(|r| !other.contains(r)).take(3) {
            out.push(Line::new("compiler observation", format!("{side}: {remark}")));
        }
    }
    if out.is_empty() {
        out.push(Line::new(
            "compiler observation",
            "the emitted code differs, but not in any count explain keeps (guards, allocations, calls, loops, vector width, the vectorizer's remarks)",
        ));
    }
    out
}

/// The extent parameters' names, as a size is written (`n`, or `n,m` when several take it).
fn extent_names(shape: &Shape) -> String {
    let names: Vec<&str> = shape
        .params
        .iter()
        .filter(|(_, fed)| matches!(fed, crate::validate::cases::Fed::Extent))
        .map(|(name, _)| name.as_str())
        .collect();
    if names.is_empty() { "n".to_string() } else { names.join(",") }
}

/// A time for people: ns, µs or ms.
fn duration(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{:.2} ms", ns as f64 / 1e6),
    }
}

/// The hypothesis the measurements suggest and what the suggested experiment would show if it
/// holds — an explanation of the difference by what differs between the plans, never by a count.
fn hypothesis(
    asked: &[Asked; 2],
    candidates: &[Candidate],
    sizes: &[u64],
    same_code: bool,
    extents: &str,
) -> (String, String) {
    let ratios: Vec<f64> = (0..sizes.len())
        .map(|s| candidates[1].measured_ns[s].max(1) as f64 / candidates[0].measured_ns[s].max(1) as f64)
        .collect();
    let alike = ratios.iter().all(|r| (r - 1.0).abs() <= NOISE);
    if same_code {
        return (
            "the two plans cannot differ in time: they emit the same code".into(),
            "both sides stay within the host's noise of each other at a larger size too".into(),
        );
    }
    if alike {
        return (
            format!(
                "the plan does not matter for this function at {extents} up to {}: A and B are within {:.0}% of each other",
                sizes.iter().max().copied().unwrap_or(0),
                NOISE * 100.0
            ),
            "if the work grows faster than the scheduling cost, a difference appears at a larger size".into(),
        );
    }
    let faster = if ratios.iter().map(|r| r.ln()).sum::<f64>() < 0.0 { "B" } else { "A" };
    let (slow_side, fast_side) = if faster == "B" { (0, 1) } else { (1, 0) };
    let value = |side: usize, word: &str| match &asked[side] {
        Asked::Items(items) => items.iter().find(|(w, _)| *w == word).map(|(_, v)| *v),
        Asked::Use(_) => None,
    };
    let because = match (&asked[0], &asked[1]) {
        (Asked::Use(_), _) | (_, Asked::Use(_)) => format!(
            "{faster}'s code does less work per element than the other's at these sizes (the implementation or the reference, not the schedule)"
        ),
        _ if value(fast_side, "lanes") != value(slow_side, "lanes") => {
            let (fast, slow) = (value(fast_side, "lanes"), value(slow_side, "lanes"));
            match (fast, slow) {
                (Some(f), Some(s)) if f < s => format!(
                    "{faster} runs on fewer lanes ({f} against {s}): at these sizes starting and joining more lanes costs more than they share"
                ),
                (Some(f), Some(s)) => format!(
                    "{faster} runs on more lanes ({f} against {s}): the work is large enough to repay each lane"
                ),
                (Some(f), None) => {
                    format!("{faster} fixes the lanes at {f}, where the runtime's own choice costs more at these sizes")
                }
                (None, _) => format!("{faster} leaves the lanes to the runtime, whose choice suits these sizes better"),
            }
        }
        _ if value(fast_side, "fuse") != value(slow_side, "fuse") => {
            if value(fast_side, "fuse").is_some() {
                format!("{faster} fuses the regions: one pass over the data and one join fewer")
            } else {
                format!(
                    "{faster} keeps the regions apart: each loop stays simpler for the code generator than the fused one"
                )
            }
        }
        _ => {
            let (fast, slow) = (value(fast_side, "grain"), value(slow_side, "grain"));
            match (fast, slow) {
                (Some(f), Some(s)) if f < s => {
                    format!("{faster}'s smaller grain ({f} against {s}) balances the lanes' shares better")
                }
                (Some(f), Some(s)) => {
                    format!("{faster}'s larger grain ({f} against {s}) spends less on handing out work")
                }
                _ => format!("{faster}'s grain suits these sizes better than the other's"),
            }
        }
    };
    let grows = ratios.len() >= 2 && (ratios[ratios.len() - 1] - 1.0).abs() > (ratios[0] - 1.0).abs();
    let experiment = if grows {
        format!("the gap keeps growing with {extents}, as it did between the sizes measured")
    } else {
        format!(
            "{faster} stays faster at ten times the size if the difference is the schedule's, and the gap narrows if it is a fixed cost"
        )
    };
    (because, experiment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_none_items_or_a_use() {
        assert_eq!(parse("none"), Ok(Asked::Items(Vec::new())));
        assert_eq!(parse("grain 1; lanes 8"), Ok(Asked::Items(vec![("grain", 1), ("lanes", 8)])));
        assert_eq!(parse("plan f { lanes 2; }"), Ok(Asked::Items(vec![("lanes", 2)])));
        assert_eq!(parse("use g[8]"), Ok(Asked::Use("g[8]".into())));
        for bad in ["grain", "grain x", "block 4", "lanes 2; lanes 4", "use", "use a b"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
