//! `cairn check --generics` (language §19.2): each template of the program's own modules checked
//! once at *witness* arguments, independently of the instances the program happens to request.
//!
//! A type parameter bound by a scalar class takes every scalar type of that class that keeps its
//! other promises (its traits); one without a class takes an *opaque* type (`Ty::Opaque`) that is
//! exactly what it promises — its kind (linear when it promises none) and its traits, whose
//! members it calls at their own signatures — so a body that needs anything more is refused at
//! it. A natural takes the naturals its families make. The verdict is `ok`, the first refusal met
//! at a witness (`CODE: message`, naming the witness instance), or `unknown: …` when no verdict
//! can be given: the program does not check, more than 128 combinations, a natural with no
//! family, a bound naming no trait, or a class no type of which keeps the other promises.

use std::sync::Arc;

use crate::db::Db;
use crate::generics::{Bound, GenericKind};
use crate::input::Item;
use crate::instance::{Instance, InstanceArg};
use crate::types::{FloatTy, IntTy, Kind, OpaqueTy, Ty};

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
            let module = crate::scope::Resolver::new(db).module_of(template);
            let mut traits: Vec<Item> = Vec::new();
            for bound in bounds.iter() {
                if let Bound::Trait(name) = bound {
                    match crate::traits::trait_named(db, &module, name) {
                        Some(item) => traits.push(item),
                        None => return Err(format!("{name} names no trait, kind or class")),
                    }
                }
            }
            let Some(class) = class else {
                // An opaque type: exactly the promised kind (linear when none is promised) and
                // the promised traits.
                let kind = if bounds.contains(&Bound::Copy) {
                    Kind::Copy
                } else if bounds.contains(&Bound::Affine) {
                    Kind::Affine
                } else {
                    Kind::Linear
                };
                let opaque = OpaqueTy { name: generic.name.clone(), kind, traits: Arc::from(traits) };
                return Ok(vec![InstanceArg::Type(Ty::Opaque(Arc::new(opaque)))]);
            };
            // Every scalar of the class that keeps the parameter's other promises.
            let mut all: Vec<Ty> = IntTy::ALL.iter().map(|i| Ty::Int(*i)).collect();
            all.push(Ty::Float(FloatTy::F32));
            all.push(Ty::Float(FloatTy::F64));
            all.push(Ty::Bool);
            let keeps =
                |t: &Ty| class.holds(t) && traits.iter().all(|&tr| crate::traits::implements(db, &module, tr, t));
            let list: Vec<InstanceArg> = all.into_iter().filter(keeps).map(InstanceArg::Type).collect();
            if list.is_empty() {
                return Err(format!("no {} type keeps every promise of {}", class.name(), generic.text()));
            }
            Ok(list)
        }
    }
}

/// The witness instances of a template, in odometer order, or why none can be made.
pub(crate) fn witness_instances(db: &dyn Db, template: Item) -> Result<Vec<Instance<'_>>, String> {
    let generics = crate::generics::fn_generics(db, template);
    let mut lists: Vec<Vec<InstanceArg>> = Vec::with_capacity(generics.len());
    for index in 0..generics.len() {
        lists.push(witnesses(db, template, index)?);
    }
    let combinations: usize = lists.iter().map(Vec::len).product();
    if combinations > WITNESS_LIMIT {
        return Err(format!("{combinations} witness combinations, more than {WITNESS_LIMIT}"));
    }
    let mut out = Vec::with_capacity(combinations);
    let mut at = vec![0usize; lists.len()];
    loop {
        let args: Arc<[InstanceArg]> = at.iter().zip(&lists).map(|(&i, list)| list[i].clone()).collect();
        out.push(Instance::new(db, template, args));
        // The next combination (odometer order).
        let mut digit = lists.len();
        loop {
            if digit == 0 {
                return Ok(out);
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

/// The verdict on one template.
pub fn certify(db: &dyn Db, template: Item) -> String {
    let instances = match witness_instances(db, template) {
        Ok(instances) => instances,
        Err(why) => return format!("unknown: {why}"),
    };
    for instance in instances {
        if let Some(diag) = &crate::check::instance_check(db, instance).error {
            return format!("{}: {} (at {})", diag.code, diag.message, instance.display(db));
        }
    }
    "ok".to_string()
}
