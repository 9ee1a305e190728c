//! The edit host's `predict` and `explain` requests (protocol §3): `cairn.predict/1` of the
//! functions the session disclosed, on the session's program (the pinned original; after an
//! admission, the latest admitted candidate too, with the delta against the original), priced by
//! the uncalibrated profile — a prediction is not evidence of speed; and `cairn.explain/1` of the
//! disclosed functions on the latest admitted candidate, else the original, read from the code the
//! caller's toolchain emits.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{Answer, EditHost};
use crate::predict::{FunctionPrediction, Profile, predict, work_of};

#[derive(Serialize)]
struct Predicted {
    protocol: &'static str,
    predicted: &'static str,
    profile: Profile,
    functions: BTreeMap<String, FunctionPrediction>,
    /// After an admission: each function's predicted time on the candidate over the original.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    delta: BTreeMap<String, Vec<f64>>,
}

impl EditHost {
    pub(super) fn predict(&mut self, index: usize, sizes: &Value) -> Answer {
        let points = match crate::predict::sizes_from_json(sizes) {
            Ok(points) if !points.is_empty() => points,
            Ok(_) => return self.rejection("E-REQUEST", "sizes names at least one point to predict at.").into(),
            Err(why) => return self.rejection("E-REQUEST", why).into(),
        };
        let lanes = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let profile = Profile::default_for(lanes);
        let visible: Vec<String> = self.sessions[index].visible.iter().cloned().collect();
        let program = self.sessions[index].program;
        self.load(program);
        let _ = self.ws_mut(program).check();
        let workspace = self.ws(program);
        let items: Vec<_> = visible.iter().filter_map(|name| workspace.function_named(name)).collect();
        if let Some(name) = crate::predict::stray_size(workspace, &items, &points) {
            let why = format!("sizes: {name} is no parameter of a disclosed function: name their size parameters.");
            return self.rejection("E-REQUEST", why).into();
        }
        let original = self.predictions(program, &visible, &points, &profile);
        let mut delta = BTreeMap::new();
        if let Some(latest) = self.sessions[index].admitted.last().map(|c| c.change.clone()) {
            let mut sources = self.programs[program].sources.clone();
            let file = latest.file;
            if let Some(target) = sources.files.get_mut(file) {
                target.text = latest.apply(&target.text);
            }
            let (candidate, _) = self.program(sources);
            let after = self.predictions(candidate, &visible, &points, &profile);
            for (name, before) in &original {
                if let Some(now) = after.get(name) {
                    let ratios = before
                        .predictions
                        .iter()
                        .zip(&now.predictions)
                        .map(|(b, a)| if b.ns > 0.0 { a.ns / b.ns } else { 1.0 })
                        .collect();
                    delta.insert(name.clone(), ratios);
                }
            }
        }
        let record = Predicted {
            protocol: "cairn.predict/1",
            predicted: "predicted, not measured (uncalibrated profile); not evidence of speed",
            profile,
            functions: original,
            delta,
        };
        Answer { record: super::records::to_map(&record), refused: false, admitted: None }
    }

    fn predictions(
        &mut self,
        program: usize,
        names: &[String],
        points: &[BTreeMap<String, f64>],
        profile: &Profile,
    ) -> BTreeMap<String, FunctionPrediction> {
        self.load(program);
        let workspace = self.ws_mut(program);
        let _ = workspace.check();
        let workspace = self.ws(program);
        names
            .iter()
            .filter_map(|name| {
                let item = workspace.function_named(name)?;
                Some((name.clone(), predict(&work_of(workspace, item), points, profile)))
            })
            .collect()
    }
}

/// No toolchain at hand: `explain` answers that it cannot read emitted code.
pub(super) struct NoNative;

impl crate::validate::Runner for NoNative {
    fn run(
        &self,
        _: &[cairn_hir::SourceText],
        _: &[String],
        _: u64,
    ) -> Result<Vec<Result<crate::validate::Outcome, String>>, String> {
        Err("no toolchain at hand".into())
    }
}

impl EditHost {
    pub(super) fn explain(&mut self, index: usize, native: &dyn crate::validate::Runner) -> Answer {
        let program = self.sessions[index].program;
        let mut sources = self.programs[program].sources.clone();
        if let Some(latest) = self.sessions[index].admitted.last()
            && let Some(target) = sources.files.get_mut(latest.change.file)
        {
            target.text = latest.change.apply(&target.text);
        }
        let visible: Vec<String> = self.sessions[index].visible.iter().cloned().collect();
        match native.explain(&sources.files, &visible) {
            Ok(record) => Answer { record, refused: false, admitted: None },
            Err(why) => self.rejection("E-REQUEST", format!("explain: {why}.")).into(),
        }
    }
}
