//! `cairn tune` (tools.md §3.15): a bounded search over a function's plans, each candidate checked
//! as a whole program and, with `--measure K`, the first K and the current plan timed on this
//! host by successive halving. No IO here: building and running is the caller's [`Runner`].
//!
//! The space is every combination of the items the function's regions take: `grain` (the
//! runtime's choice, 1,024, 4,096, 16,384, 65,536), `lanes` (the runtime's choice, 1, 2, 4, … up
//! to the host's lanes) and, with two regions or more, `fuse` (none, 2 … the regions); device
//! regions take `block` (128, 256, 512) and `per_lane` (1, 4, 16) instead. Candidates
//! come in generation order — the empty plan, each single item, then combinations — and a
//! candidate whose lowered code equals an earlier one's is `same_code` and shares its
//! measurement. Each candidate is priced by `cairn predict`'s model (its parallel work over the
//! fewer of the profile's lanes and its plan's), and the K predicted fastest are measured (the
//! model cannot tell grains apart: between equal prices, generation order decides). Timing: per size, a block that makes the inputs and one that makes them
//! and calls the function `reps` times; a candidate's time at a size is the difference of the
//! two wall times over `reps`, the median of the rounds it survived; rounds halve the field.
//! Implementations are candidates while the candidate history holds a current, strict validation
//! of each; a candidate the history holds a current measurement of at the same sizes is not run
//! again (its measurement is `kept`), and what is measured anew is recorded.

use std::collections::BTreeMap;

use cairn_hir::{Item, SourceText, Workspace};
use serde::Serialize;

use crate::plans::plan_text;
use crate::validate::Runner;
use crate::validate::cases::{Fed, Shape};

mod compare;
mod profile;
mod records;

pub use self::compare::{Compare, compare};
pub use self::records::{current_identity, implementation_symbols};
use self::records::{history_records, kept_measurement, validation_holds};
pub use crate::validate::timing::time_calls;
use crate::validate::timing::{SAMPLES, median};

/// The `cairn.tune/2` record (the fields this build fills).
#[derive(Debug, Serialize, Default)]
pub struct TuneRecord {
    pub protocol: &'static str,
    pub function: String,
    pub sizes: Vec<u64>,
    pub objective: &'static str,
    /// Each size's weight in the objective (all 1 unless `--shapes` said otherwise).
    pub weights: Vec<f64>,
    pub regions: usize,
    pub current: String,
    pub space: Space,
    pub candidates: Vec<Candidate>,
    pub chosen: String,
    pub chosen_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fastest: Option<String>,
    pub budget: Budget,
    pub measured_order: Vec<String>,
    pub written: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The function's implementations, and whether each was a candidate (and why not).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub implementations: Vec<ImplementationRow>,
    /// The records this search adds to the candidate history (the caller appends them).
    #[serde(skip)]
    pub records: Vec<crate::history::Record>,
}

/// An implementation of the tuned function, as a search saw it.
#[derive(Debug, Serialize)]
pub struct ImplementationRow {
    #[serde(rename = "use")]
    pub symbol: String,
    pub candidate: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Serialize, Default)]
pub struct Space {
    pub configurations: usize,
    pub checked: usize,
    pub legal: usize,
    pub same_code: usize,
    pub refused: Vec<Refused>,
}

#[derive(Debug, Serialize)]
pub struct Refused {
    pub code: String,
    pub message: String,
    pub configurations: usize,
    pub example: String,
}

#[derive(Debug, Serialize, Clone)]
pub struct Candidate {
    pub plan: String,
    pub items: BTreeMap<&'static str, u64>,
    /// For an implementation's candidate: the implementation it selects.
    #[serde(rename = "use", skip_serializing_if = "Option::is_none")]
    pub selects: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_code: Option<String>,
    /// Per size, the predicted nanoseconds of a call (the work priced with the plan's lanes).
    pub predicted_ns: Vec<f64>,
    /// Per size, the measured nanoseconds a call took (absent: not measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measured_ns: Vec<u64>,
    /// The objective over the sizes: the (weighted) geometric mean or mean of the measured times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_objective_ns: Option<f64>,
    /// `kept`: the measurement is the history's (a current one at these sizes), no run started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measurement: Option<&'static str>,
    #[serde(skip)]
    sources: Vec<SourceText>,
    /// For an implementation's candidate: its widened identity now (what its records cite).
    #[serde(skip)]
    identity: Option<String>,
}

#[derive(Debug, Serialize, Default)]
pub struct Budget {
    pub seconds: Allowed,
    pub runs: Runs,
    pub undone: BTreeMap<&'static str, usize>,
}

/// Timed runs (a block of a timing program is one): what `--measure` asked, what started, and
/// what a kept measurement in the history made unnecessary.
#[derive(Debug, Serialize, Default)]
pub struct Runs {
    pub allowed: u64,
    pub started: u64,
    pub kept: u64,
}

#[derive(Debug, Serialize, Default)]
pub struct Allowed {
    pub allowed: u64,
    pub spent: u64,
}

/// What a search asks for.
pub struct Request<'a> {
    pub symbol: &'a str,
    /// Each size: the value of every extent.
    pub sizes: Vec<u64>,
    /// Each size's weight in the objective (`--shapes`); empty: every size weighs 1.
    pub weights: Vec<f64>,
    /// How times at several sizes fold into one ranking value.
    pub objective: Objective,
    /// Time this many candidates (and the current plan).
    pub measure: usize,
    /// At most this many timed runs (block runs; kept measurements are free); `None`: what
    /// `measure` asks.
    pub budget_runs: Option<u64>,
    /// The host's lanes (the largest `lanes` tried).
    pub lanes: u32,
    /// The profile that prices candidates (`cairn predict`).
    pub profile: crate::predict::Profile,
    /// The device card device work is priced on (`--card`).
    pub card: &'static crate::predict::Card,
    pub budget_seconds: u64,
    /// Where the clock stands (seconds since the search began), asked between steps.
    pub clock: &'a dyn Fn() -> f64,
    /// The candidate history's records (implementations are candidates only under a current
    /// validation there).
    pub history: &'a [crate::history::Record],
    /// `--accept-emulated`: a validation whose runs were emulated (`finite-tested-emulated`) is
    /// enough to make an implementation a candidate.
    pub accept_emulated: bool,
    /// With a comparison: also run each side once under the runner's profiler (`--profiler`).
    pub profiler: bool,
}

/// The function a search or a comparison is about, and the program its candidates are made
/// from: the accepted one, or — when the function has a selection now — the program without it
/// (a schedule candidate must not be timed through the dispatch; the selection is the current plan).
pub(super) struct Subject {
    pub(super) full: String,
    pub(super) regions: usize,
    pub(super) selection: Option<String>,
    pub(super) files: Vec<SourceText>,
    rebased: Option<Workspace>,
}

impl Subject {
    pub(super) fn of(workspace: &Workspace, symbol: &str) -> Result<Subject, String> {
        let Some(item) = crate::program::function_item(workspace, symbol) else {
            let names = crate::program::qualified_names(workspace, symbol);
            return Err(match names.len() {
                0 => format!("{symbol} names no function of the program."),
                _ => format!("{symbol} is declared by more than one module: name one of {}.", names.join(", ")),
            });
        };
        let db = workspace.db();
        let full = cairn_hir::Resolver::new(db).full_name(item).to_string();
        if !cairn_hir::generics::fn_generics(db, item).is_empty() {
            return Err(format!(
                "{full} is a template: its plans are its instances', which this build does not tune one by one; tune a function that calls it."
            ));
        }
        let regions = cairn_hir::regions::fn_regions(db, item).len();
        if regions == 0 && cairn_hir::implementations::implementations_of(db, item).is_empty() {
            return Err(format!("{full} has no parallel region and no implementation: there is nothing to tune."));
        }
        let files = workspace.written_sources();
        let selection = crate::plans::selection_label(workspace, item);
        if selection.is_none() {
            return Ok(Subject { full, regions, selection, files, rebased: None });
        }
        let without = crate::plans::with_selection(workspace, &files, item, None);
        let mut rebased = Workspace::new(without.clone());
        if let Some(refusal) = rebased.check().refusal {
            return Err(format!("{full} without its selection does not check: {}", refusal.first.message));
        }
        Ok(Subject { full, regions, selection, files: without, rebased: Some(rebased) })
    }

    /// The program candidates are made from, and the function in it.
    pub(super) fn program<'a>(&'a self, accepted: &'a Workspace) -> Result<(&'a Workspace, Item), String> {
        let workspace = self.rebased.as_ref().unwrap_or(accepted);
        let item =
            workspace.function_named(&self.full).ok_or("the function is missing once its selection is removed")?;
        Ok((workspace, item))
    }
}

/// How times at several sizes fold into one ranking value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Objective {
    /// The weighted geometric mean: every size counts by ratio, whatever its scale.
    #[default]
    Geomean,
    /// The weighted arithmetic mean: the largest sizes dominate.
    Mean,
}

impl Objective {
    pub fn name(self) -> &'static str {
        match self {
            Objective::Geomean => "geomean",
            Objective::Mean => "mean",
        }
    }
}

impl Request<'_> {
    /// The objective over measured times, one per size.
    fn fold(&self, values: &[u64]) -> f64 {
        self.fold_f64(&values.iter().map(|&v| v.max(1) as f64).collect::<Vec<_>>())
    }

    /// The objective over times (measured or predicted), one per size, under the sizes' weights.
    fn fold_f64(&self, values: &[f64]) -> f64 {
        if values.is_empty() {
            return f64::INFINITY;
        }
        let weight = |i: usize| self.weights.get(i).copied().unwrap_or(1.0);
        let total: f64 = (0..values.len()).map(weight).sum();
        match self.objective {
            Objective::Geomean => {
                ((0..values.len()).map(|i| weight(i) * values[i].max(1e-9).ln()).sum::<f64>() / total).exp()
            }
            Objective::Mean => (0..values.len()).map(|i| weight(i) * values[i]).sum::<f64>() / total,
        }
    }
}

/// Searches the plans of `request.symbol` in the accepted program of `workspace`.
pub fn tune(workspace: &Workspace, request: &Request<'_>, runner: &dyn Runner) -> Result<TuneRecord, String> {
    let subject = Subject::of(workspace, request.symbol)?;
    let (workspace, item) = subject.program(workspace)?;
    let (full, regions, selection, files) =
        (subject.full.clone(), subject.regions, subject.selection.clone(), subject.files.clone());
    let db = workspace.db();
    let current_items = crate::plans::plan_items(workspace, item);
    let mut record = TuneRecord {
        protocol: "cairn.tune/2",
        function: full.clone(),
        sizes: request.sizes.clone(),
        objective: request.objective.name(),
        weights: request.weights.clone(),
        regions,
        current: selection.clone().unwrap_or_else(|| plan_text(&full, &current_items)),
        budget: Budget {
            seconds: Allowed { allowed: request.budget_seconds, spent: 0 },
            runs: Runs::default(),
            undone: BTreeMap::new(),
        },
        ..TuneRecord::default()
    };
    // The price of each candidate: the function's work, its parallel part over the plan's lanes.
    let work = crate::predict::work_of(workspace, item);
    let signature = cairn_hir::fn_signature(db, item);
    let shape = Shape::of(signature).map_err(|why| format!("{full}'s inputs cannot be made: {why}."))?;
    // The space, in generation order.
    let device = cairn_hir::regions::fn_regions(db, item).iter().filter(|r| r.kind == "device").count();
    let space = configurations(regions - device, device, request.lanes);
    record.space.configurations = space.len();
    let mut refused: BTreeMap<String, Refused> = BTreeMap::new();
    let mut codes: Vec<(u64, String)> = Vec::new();
    for items in space {
        if (request.clock)() > request.budget_seconds as f64 {
            *record.budget.undone.entry("seconds").or_default() += 1;
            continue;
        }
        let plan = plan_text(&full, &items);
        let candidate = crate::plans::with_plan(workspace, &files, item, &items);
        record.space.checked += 1;
        let mut checked = Workspace::new(candidate.clone());
        if let Some(refusal) = checked.check().refusal {
            let entry = refused.entry(refusal.first.code.clone()).or_insert_with(|| Refused {
                code: refusal.first.code.clone(),
                message: refusal.first.message.clone(),
                configurations: 0,
                example: plan.clone(),
            });
            entry.configurations += 1;
            continue;
        }
        record.space.legal += 1;
        let code = code_of(&checked, &full);
        let same = codes.iter().find(|(c, _)| *c == code).map(|(_, p)| p.clone());
        if same.is_some() {
            record.space.same_code += 1;
        } else {
            codes.push((code, plan.clone()));
        }
        record.candidates.push(Candidate {
            plan,
            items: items.iter().copied().collect(),
            selects: None,
            same_code: same,
            predicted_ns: predicted(&work, &request.sizes, &request.profile, request.card, &items, &shape),
            measured_ns: Vec::new(),
            measured_objective_ns: None,
            measurement: None,
            sources: candidate,
            identity: None,
        });
    }
    record.space.refused = refused.into_values().collect();
    // Implementations: candidates while the history holds a current validation of each.
    let base = crate::history::base_as_written(workspace, item);
    for symbol in implementation_symbols(workspace, item) {
        let why = match &base {
            None => Some("the function's code could not be digested".to_string()),
            Some(base) => {
                validation_holds(workspace, request.history, &full, &symbol, base, request.accept_emulated).err()
            }
        };
        if let Some(why) = why {
            record.implementations.push(ImplementationRow { symbol, candidate: false, why: Some(why) });
            continue;
        }
        let candidate = crate::plans::with_selection(workspace, &files, item, Some(&symbol));
        let mut checked = Workspace::new(candidate.clone());
        if let Some(refusal) = checked.check().refusal {
            let why = format!("its selection is refused: {}: {}", refusal.first.code, refusal.first.message);
            record.implementations.push(ImplementationRow { symbol, candidate: false, why: Some(why) });
            continue;
        }
        let bare = full.rsplit('.').next().unwrap_or(&full);
        record.candidates.push(Candidate {
            plan: format!("plan {bare} use {};", symbol.rsplit('.').next().unwrap_or(&symbol)),
            items: BTreeMap::new(),
            selects: Some(symbol.clone()),
            same_code: None,
            predicted_ns: Vec::new(),
            measured_ns: Vec::new(),
            measured_objective_ns: None,
            measurement: None,
            sources: candidate,
            identity: current_identity(workspace, &symbol),
        });
        record.implementations.push(ImplementationRow { symbol, candidate: true, why: None });
    }
    // Measure: the current plan and the K distinct candidates predicted fastest (generation
    // order between equals), halving each round.
    let current = record.candidates.iter().position(|c| c.plan == record.current);
    let mut ranked: Vec<usize> =
        (0..record.candidates.len()).filter(|&i| record.candidates[i].same_code.is_none()).collect();
    ranked.sort_by(|a, b| {
        let price = |i: &usize| request.fold_f64(&record.candidates[*i].predicted_ns);
        price(a).total_cmp(&price(b))
    });
    let mut field: Vec<usize> = ranked.into_iter().take(request.measure).collect();
    if let Some(current) = current
        && request.measure > 0
        && !field.contains(&current)
        && record.candidates[current].same_code.is_none()
    {
        field.push(current);
    }
    let bare = full.rsplit('.').next().unwrap_or(&full).to_string();
    // A candidate the history holds a current measurement of at these sizes starts no run: its
    // kept times are its samples in every round it survives.
    let runs_per_sample = (2 * SAMPLES * request.sizes.len()) as u64;
    let mut samples: BTreeMap<usize, Vec<Vec<u64>>> = BTreeMap::new();
    if let Some(base) = &base {
        for &index in &field {
            if let Some(times) =
                kept_measurement(request.history, &full, base, &record.candidates[index], &request.sizes)
            {
                record.candidates[index].measurement = Some("kept");
                record.budget.runs.kept += runs_per_sample;
                samples.insert(index, vec![times]);
            }
        }
    }
    let mut round = 0;
    while !field.is_empty() && request.measure > 0 {
        round += 1;
        for &index in &field {
            if record.candidates[index].measurement.is_some() {
                continue;
            }
            if (request.clock)() > request.budget_seconds as f64 {
                *record.budget.undone.entry("seconds").or_default() += 1;
                continue;
            }
            if request.budget_runs.is_some_and(|allowed| record.budget.runs.started + runs_per_sample > allowed) {
                *record.budget.undone.entry("runs").or_default() += 1;
                continue;
            }
            let times = measure(&record.candidates[index], &shape, &request.sizes, &bare, runner)?;
            record.budget.runs.started += runs_per_sample;
            samples.entry(index).or_default().push(times);
        }
        for (&index, rounds) in &samples {
            let candidate = &mut record.candidates[index];
            candidate.measured_ns =
                (0..request.sizes.len()).map(|s| median(rounds.iter().map(|r| r[s]).collect())).collect();
            candidate.measured_objective_ns = Some(request.fold(&candidate.measured_ns));
        }
        if field.len() == 1 || round >= 4 {
            break;
        }
        field.sort_by(|a, b| score(&record.candidates[*a]).total_cmp(&score(&record.candidates[*b])));
        field.truncate(field.len().div_ceil(2));
    }
    record.budget.runs.allowed = request.budget_runs.unwrap_or(record.budget.runs.started + record.budget.runs.kept);
    // Shares: a same-code candidate has its twin's measurement.
    for i in 0..record.candidates.len() {
        if let Some(twin) = record.candidates[i].same_code.clone()
            && let Some(measured) = record.candidates.iter().find(|c| c.plan == twin).map(|c| c.measured_ns.clone())
        {
            record.candidates[i].measured_objective_ns = (!measured.is_empty()).then(|| request.fold(&measured));
            record.candidates[i].measured_ns = measured;
        }
    }
    let mut measured: Vec<&Candidate> =
        record.candidates.iter().filter(|c| c.measured_objective_ns.is_some() && c.same_code.is_none()).collect();
    measured.sort_by(|a, b| score(a).total_cmp(&score(b)));
    record.measured_order = measured.iter().map(|c| c.plan.clone()).collect();
    match measured.first() {
        Some(best) => {
            record.fastest = Some(best.plan.clone());
            record.chosen = best.plan.clone();
            record.chosen_by = "measurement".into();
        }
        None => {
            record.chosen = record.current.clone();
            record.chosen_by = "nothing measured: the current plan is kept (the budget ran out before a candidate was timed, or none could run); predictions rank candidates, never choose one".into();
        }
    }
    record.budget.seconds.spent = (request.clock)().ceil() as u64;
    if let Some(base) = &base {
        record.records = history_records(&record, base, request.sizes.as_slice());
    }
    Ok(record)
}

/// A candidate's predicted nanoseconds at each size: its parallel work over the fewer of the
/// profile's effective lanes and the lanes its plan allows.
fn predicted(
    work: &crate::predict::Work,
    sizes: &[u64],
    profile: &crate::predict::Profile,
    card: &crate::predict::Card,
    items: &[(&'static str, u64)],
    shape: &Shape,
) -> Vec<f64> {
    let mut profile = profile.clone();
    if let Some(&(_, lanes)) = items.iter().find(|(w, _)| *w == "lanes") {
        profile.effective_lanes = profile.effective_lanes.min(lanes as f64);
    }
    let extents: Vec<&String> =
        shape.params.iter().filter(|(_, fed)| matches!(fed, Fed::Extent)).map(|(name, _)| name).collect();
    let at: Vec<BTreeMap<String, f64>> =
        sizes.iter().map(|&n| extents.iter().map(|e| ((*e).clone(), n as f64)).collect()).collect();
    crate::predict::predict_on(work, &at, &profile, card).predictions.iter().map(|p| p.ns).collect()
}

/// The program with the chosen plan (for `--write`), when the search chose one.
pub fn chosen_sources(record: &TuneRecord) -> Option<&[SourceText]> {
    record.candidates.iter().find(|c| c.plan == record.chosen).map(|c| c.sources.as_slice())
}

fn score(candidate: &Candidate) -> f64 {
    candidate.measured_objective_ns.unwrap_or(f64::INFINITY)
}

/// Every configuration of the items, in generation order: the empty plan, single items, then
/// combinations. Host regions take `grain`, `lanes` and `fuse`; device regions (`device` of
/// them) `block` (128, 256, 512) and `per_lane` (1, 4, 16), which shape their kernels.
fn configurations(host: usize, device: usize, lanes: u32) -> Vec<Vec<(&'static str, u64)>> {
    let regions = host + device;
    if regions == 0 {
        // No region: the empty plan alone (the implementations are the other candidates).
        return vec![Vec::new()];
    }
    let grains: Vec<u64> = vec![1024, 4096, 16_384, 65_536];
    let mut lane_counts: Vec<u64> = vec![1];
    while (*lane_counts.last().unwrap_or(&1) * 2) <= u64::from(lanes.max(1)) {
        let next = lane_counts.last().unwrap_or(&1) * 2;
        lane_counts.push(next);
    }
    if !lane_counts.contains(&u64::from(lanes)) && lanes > 1 {
        lane_counts.push(u64::from(lanes));
    }
    let fuses: Vec<u64> = if regions >= 2 { (2..=regions.min(16) as u64).collect() } else { Vec::new() };
    let with_none =
        |v: &[u64]| -> Vec<Option<u64>> { std::iter::once(None).chain(v.iter().copied().map(Some)).collect() };
    let (blocks, per_lanes): (Vec<u64>, Vec<u64>) =
        if device > 0 { (vec![128, 256, 512], vec![1, 4, 16]) } else { (Vec::new(), Vec::new()) };
    // A function whose regions are all device lanes takes no host item (the check refuses one).
    let (grains, lane_counts) = if host == 0 && device > 0 { (Vec::new(), Vec::new()) } else { (grains, lane_counts) };
    let mut all: Vec<Vec<(&'static str, u64)>> = Vec::new();
    for g in with_none(&grains) {
        for l in with_none(&lane_counts) {
            for f in with_none(&fuses) {
                for b in with_none(&blocks) {
                    for k in with_none(&per_lanes) {
                        let items: Vec<(&'static str, u64)> =
                            [("grain", g), ("lanes", l), ("fuse", f), ("block", b), ("per_lane", k)]
                                .into_iter()
                                .filter_map(|(w, v)| v.map(|v| (w, v)))
                                .collect();
                        all.push(items);
                    }
                }
            }
        }
    }
    all.sort_by_key(|items| items.len());
    all
}

/// A digest of the function's lowered code (its MIR and what its lowering made), for `same_code`.
fn code_of(workspace: &Workspace, full: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let program = cairn_mir::program_mir(workspace.db());
    let symbol = format!("cairn.{full}");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for function in program.functions.iter().filter(|f| f.symbol.starts_with(symbol.as_str())) {
        format!("{function:?}").hash(&mut hasher);
    }
    hasher.finish()
}

/// Times one candidate at each size: (make inputs and call `reps` times) − (make inputs), over `reps`.
pub(super) fn measure(
    candidate: &Candidate,
    shape: &Shape,
    sizes: &[u64],
    function: &str,
    runner: &dyn Runner,
) -> Result<Vec<u64>, String> {
    time_calls(&candidate.sources, shape, sizes, function, runner)
}
