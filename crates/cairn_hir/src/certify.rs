//! `cairn check --generics` (language §19.2): each template of the program's own modules checked
//! once at *witness* arguments, independently of the instances the program happens to request.
//!
//! A type parameter bound by a scalar class takes every scalar type of that class; a natural
//! takes the naturals its families make. The verdict is `ok`, the first refusal met at a witness
//! (`CODE: message`, naming the witness instance), or `unknown: …` when no verdict can be given:
//! the program does not check, more than 128 scalar combinations, a natural with no family, or a
//! type parameter without a scalar class — whose witness is an opaque type this build does not
//! make yet.

use std::sync::Arc;

use crate::db::Db;
use crate::generics::{Bound, GenericKind};
use crate::input::Item;
use crate::instance::{Instance, InstanceArg};
use crate::types::{FloatTy, IntTy, Ty};

/// At most this many witness combinations are checked per template.
pub const WITNESS_LIMIT: usize = 128;

/// The witnesses of a parameter, or why it has none this build can make.
fn witnesses(db: &dyn Db, template: Item, index: usize) -> Result<Vec<InstanceArg>, String> {
    let generics = crate::generics::fn_generics(db, template);
    let generic = &generics[index];
    match &generic.kind {
        GenericKind::Nat => {
            let mut naturals: Vec<u64> = Vec::new();
            for (_, family) in crate::family::families(db) {
                if family.template == Some(template) {
                    naturals.extend(family.naturals());
                }
            }
            if naturals.is_empty() {
                return Err(format!("no family instantiates {}", generic.name));
            }
            Ok(naturals.into_iter().map(InstanceArg::Nat).collect())
        }
        GenericKind::Type(bounds) => {
            let class = bounds.iter().find_map(|b| match b {
                Bound::Class(class) => Some(*class),
                _ => None,
            });
            if bounds.iter().any(|b| matches!(b, Bound::Trait(_))) {
                return Err(format!("{} is bound by a trait, and its opaque witness is not built yet", generic.name));
            }
            let Some(class) = class else {
                return Err(format!("{} has no scalar class, and its opaque witness is not built yet", generic.name));
            };
            let mut all: Vec<Ty> = IntTy::ALL.iter().map(|i| Ty::Int(*i)).collect();
            all.push(Ty::Float(FloatTy::F32));
            all.push(Ty::Float(FloatTy::F64));
            all.push(Ty::Bool);
            Ok(all.into_iter().filter(|t| class.holds(t)).map(InstanceArg::Type).collect())
        }
    }
}

/// The verdict on one template.
pub fn certify(db: &dyn Db, template: Item) -> String {
    let generics = crate::generics::fn_generics(db, template);
    let mut lists: Vec<Vec<InstanceArg>> = Vec::with_capacity(generics.len());
    for index in 0..generics.len() {
        match witnesses(db, template, index) {
            Ok(list) => lists.push(list),
            Err(why) => return format!("unknown: {why}"),
        }
    }
    let combinations: usize = lists.iter().map(Vec::len).product();
    if combinations > WITNESS_LIMIT {
        return format!("unknown: {combinations} witness combinations, more than {WITNESS_LIMIT}");
    }
    let mut at = vec![0usize; lists.len()];
    loop {
        let args: Arc<[InstanceArg]> = at.iter().zip(&lists).map(|(&i, list)| list[i].clone()).collect();
        let instance = Instance::new(db, template, args);
        if let Some(diag) = &crate::check::instance_check(db, instance).error {
            return format!("{}: {} (at {})", diag.code, diag.message, instance.display(db));
        }
        // The next combination (odometer order).
        let mut digit = lists.len();
        loop {
            if digit == 0 {
                return "ok".to_string();
            }
            digit -= 1;
            at[digit] += 1;
            if at[digit] < lists[digit].len() {
                break;
            }
            at[digit] = 0;
        }
    }
}
