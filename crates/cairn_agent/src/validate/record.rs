//! A validation as a candidate-history record (protocol §18).

use cairn_hir::Workspace;
use serde_json::{Map, Value};

use super::{Policy, Validation};

/// The candidate-history record of a validation (protocol §18): `validation` when it passed,
/// `failure` (stage `validation`) when it failed, `attempt` when it decided nothing; the candidate
/// is the selection that would run it (`plan f use g;`), the variant its widened identity, the
/// contract the policy it was judged under.
pub fn history_record(
    workspace: &Workspace,
    validation: &Validation,
    policy: &Policy,
) -> Option<crate::history::Record> {
    use crate::history::{Identity, Record, base_as_written, compiler, contract, host_target, source};
    let record = &validation.record;
    let reference = workspace.function_named(&record.reference)?;
    let widened =
        crate::history::widened_identity(workspace, super::instance_named(workspace, &record.implementation)?)?;
    let bare = |full: &str| full.rsplit('.').next().unwrap_or(full).to_string();
    let candidate = format!("plan {} use {};", bare(&record.reference), bare(&record.implementation));
    let mut variant = Map::new();
    variant.insert("use".into(), Value::from(record.implementation.clone()));
    variant.insert("identity".into(), Value::from(widened));
    let variant = Value::Object(variant);
    let identity = Identity {
        source: source(&base_as_written(workspace, reference)?, &variant),
        contract: contract(&serde_json::to_value(policy).ok()?),
        target: match &record.emulation {
            Some(emulation) => crate::history::emulation_target(&emulation.judged_against),
            None => host_target(),
        },
        compiler: compiler(),
        artifact: None,
    };
    let full = serde_json::to_value(record).ok()?;
    let mut detail = Map::new();
    let field = |key: &str| full.get(key).cloned().unwrap_or(Value::Null);
    let kind = match record.status {
        "passed" => {
            detail.insert("evidence".into(), field("evidence"));
            if record.emulation.is_some() {
                detail.insert("emulation".into(), field("emulation"));
            }
            detail.insert("finite".into(), field("finite"));
            detail.insert("smt".into(), field("smt"));
            detail.insert("policy".into(), serde_json::to_value(policy).ok()?);
            detail.insert("agreement".into(), field("agreement"));
            "validation"
        }
        "failed" => {
            detail.insert("stage".into(), Value::from("validation"));
            detail.insert(
                "why".into(),
                Value::from(format!("E-VALIDATION: {} disagrees with {}", record.implementation, record.reference)),
            );
            detail.insert("inputs".into(), full.pointer("/finite/failed/inputs").cloned().unwrap_or(Value::Null));
            "failure"
        }
        _ => {
            detail.insert("why".into(), Value::from(record.reason.clone().unwrap_or_default()));
            "attempt"
        }
    };
    Record::new(kind, &record.reference, &candidate, variant, identity, detail, crate::history::now()).ok()
}
