//! Z3's separate answer for a validation (tools.md §3.14): the reference and the implementation
//! compared under the implementation's condition by `cairn verify`'s engine (loops followed 16
//! times, traps as outcomes), and a counterexample made into a case — its views element by
//! element — and run natively through the same harness under the policy.

use std::collections::BTreeMap;

use cairn_hir::instance::Instance;
use cairn_hir::{Item, Resolver, Workspace};
use serde::Serialize;

use super::cases::{self, Case, Shape};
use super::{CaseResult, Policy, Setup};

/// Z3's separate answer: `equivalent` (no input the condition admits makes them differ, loops
/// followed 16 times), `counterexample` (with its native `replay`), `unknown` or `not-run`.
#[derive(Serialize)]
pub struct Smt {
    pub status: &'static str,
    /// The condition it was asked under (`when` …, or `always`).
    #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
}

/// A counterexample run natively under the policy: `failed` (it fails the validation),
/// `within-policy` (the finite result stands), `unknown` (it makes the validation unknown), or
/// `not-run` (it cannot be fed: another extent per view, a float that is not a number).
#[derive(Serialize)]
pub struct Replay {
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Case>,
}

impl Default for Smt {
    fn default() -> Smt {
        Smt { status: "not-run", under: None, reason: None, replay: None }
    }
}

/// Z3's bounded comparison of the reference and the implementation under its condition (for a
/// tuned instance, its own code with the condition's naturals replaced by the instance's values),
/// and — for a counterexample — its native replay: the failing case and what it gave when it
/// fails under the policy.
pub(super) fn smt_check(
    workspace: &Workspace,
    setup: &Setup<'_>,
    reference: Item,
    instance: Instance<'_>,
    shape: &Shape,
    policy: &Policy,
) -> (Smt, Option<(Case, CaseResult)>) {
    let db = workspace.db();
    let not_run = |reason: &str| Smt { status: "not-run", under: None, reason: Some(reason.to_string()), replay: None };
    let item = instance.item(db);
    // A tuned instance's naturals, by name: its condition is read with their values.
    let generics = cairn_hir::generics::fn_generics(db, item);
    let mut naturals: Vec<(String, u64)> = Vec::new();
    for (generic, arg) in generics.iter().zip(instance.args(db).iter()) {
        match arg {
            cairn_hir::instance::InstanceArg::Nat(value) => naturals.push((generic.name.to_string(), *value)),
            cairn_hir::instance::InstanceArg::Type(_) => {
                return (not_run("an instance over a type is not given to Z3 (only naturals are)"), None);
            }
        }
    }
    // The program with no selection of the reference: the two functions as written.
    let mut plain = Workspace::new(setup.with(&setup.plain));
    if plain.check().refusal.is_some() {
        return (not_run("the program without the selection does not check"), None);
    }
    let scope = Resolver::new(db);
    let (reference_name, name) = (scope.full_name(reference).to_string(), scope.full_name(item).to_string());
    let (Some(f), Some(g)) = (plain.function_named(&reference_name), plain.function_named(&name)) else {
        return (not_run("the functions are missing from the program without the selection"), None);
    };
    let when = if naturals.is_empty() {
        crate::plans::when_text(db, item)
    } else {
        crate::plans::when_text_at(db, item, &naturals)
    };
    let assumption = match crate::equiv::assumption(&plain, &reference_name, when.as_deref().unwrap_or("")) {
        Ok(assumption) => assumption,
        Err(why) => return (not_run(&format!("the condition cannot be given to Z3: {}", why.0)), None),
    };
    let g_instance = cairn_hir::instance::Instance::new(plain.db(), g, instance.args(db).clone());
    let lowered_g = if naturals.is_empty() {
        crate::equiv::Lowered::closure(&plain, g)
    } else {
        crate::equiv::Lowered::instance_closure(&plain, g_instance)
    };
    let (Some(old), Some(new)) = (crate::equiv::Lowered::closure(&plain, f), lowered_g) else {
        return (not_run("the functions do not lower (or the instance calls a template)"), None);
    };
    let f_symbol = crate::equiv::symbol_of(&plain, f);
    let g_symbol = match cairn_mir::instance_mir(plain.db(), g_instance) {
        Ok(function) => function.symbol.clone(),
        Err(_) => return (not_run("the instance does not lower"), None),
    };
    let comparison = crate::equiv::compare(
        &old,
        &f_symbol,
        &new,
        &g_symbol,
        assumption.as_ref(),
        false,
        cairn_smt::Options::default(),
    );
    let under = Some(when.map_or_else(|| "always".to_string(), |w| format!("when {w}")));
    match comparison.verdict {
        cairn_smt::Verdict::Equivalent | cairn_smt::Verdict::EmptyDomain => {
            (Smt { status: "equivalent", under, reason: None, replay: None }, None)
        }
        cairn_smt::Verdict::Unknown(reason) => {
            (Smt { status: "unknown", under, reason: Some(reason), replay: None }, None)
        }
        cairn_smt::Verdict::Differs(witness) | cairn_smt::Verdict::ReferenceTraps(witness) => {
            let Some(case) = witness_case(shape, &witness) else {
                // Not fed natively (an infinite or NaN float, extents that differ): nothing
                // contradicts it, so the validation cannot pass — the caller makes it unknown.
                let model: Vec<String> = witness.inputs.iter().map(|(n, v)| format!("{n} = {v:?}")).collect();
                let replay = Some(Replay { status: "unknown", inputs: None });
                let reason = format!("the counterexample cannot be fed natively: {}", model.join(", "));
                return (Smt { status: "counterexample", under, reason: Some(reason), replay }, None);
            };
            let result = match setup.run(std::slice::from_ref(&case)) {
                Ok(mut results) => results.pop(),
                Err(_) => None,
            };
            let Some(result) = result.filter(|r| r.undecided.is_none()) else {
                let replay = Some(Replay { status: "unknown", inputs: Some(case) });
                return (Smt { status: "counterexample", under, reason: None, replay }, None);
            };
            if result.agrees(shape, &case, policy) {
                let replay = Some(Replay { status: "within-policy", inputs: Some(case) });
                return (Smt { status: "counterexample", under, reason: None, replay }, None);
            }
            let replay = Some(Replay { status: "failed", inputs: Some(case.clone()) });
            (Smt { status: "counterexample", under, reason: None, replay }, Some((case, result)))
        }
    }
}

/// A counterexample as a case: one value for every extent (they must agree), each scalar's
/// literal, each view element by element.
fn witness_case(shape: &Shape, witness: &cairn_smt::Witness) -> Option<Case> {
    use cairn_smt::WValue;
    let value = |name: &str| witness.inputs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let literal = |scalar: cases::Scalar, v: &WValue| -> Option<String> {
        match (scalar, v) {
            (cases::Scalar::Int(_), WValue::Int(i)) => Some(i.to_string()),
            (cases::Scalar::Bool, WValue::Bool(b)) => Some(b.to_string()),
            (cases::Scalar::Float(f), WValue::Float(bits)) => {
                let x = if f == cairn_hir::types::FloatTy::F32 {
                    f64::from(f32::from_bits(*bits as u32))
                } else {
                    f64::from_bits(*bits)
                };
                x.is_finite().then(|| format!("{x:?}"))
            }
            _ => None,
        }
    };
    let mut extent: Option<u64> = None;
    let mut case = Case {
        extent: 0,
        pattern: cases::Pattern::Zeroed,
        seed: 0,
        scalars: BTreeMap::new(),
        views: BTreeMap::new(),
        extents: BTreeMap::new(),
    };
    for (name, fed) in &shape.params {
        match fed {
            cases::Fed::Extent => {
                let WValue::Int(n) = value(name)? else { return None };
                let n = u64::try_from(*n).ok()?;
                // The first extent is the case's; another that differs is its own.
                match extent {
                    None => extent = Some(n),
                    Some(e) if e != n => {
                        case.extents.insert(name.clone(), n);
                    }
                    Some(_) => {}
                }
            }
            cases::Fed::Scalar(scalar) => {
                case.scalars.insert(name.clone(), literal(*scalar, value(name)?)?);
            }
            cases::Fed::View { elem, .. } => {
                let WValue::Array(values) = value(name)? else { return None };
                let values: Option<Vec<String>> = values.iter().map(|v| literal(*elem, v)).collect();
                case.views.insert(name.clone(), values?);
            }
        }
    }
    case.extent = extent.unwrap_or(0);
    shape.fits(&case).ok()?;
    Some(case)
}
