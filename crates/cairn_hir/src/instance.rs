//! Instances: a template declaration together with its type and natural arguments, interned, so
//! that every query about compiled code (`cairn_mir::instance_mir`, codegen, the solver) is keyed
//! by what is compiled rather than by what is written.
//!
//! Tier 0 has no generics, so every instance is *monomorphic*: a declaration with no arguments,
//! named as the declaration is. Tier 1 (issue 13) interns `f[u64]` and `scale[4]` the same way,
//! on demand, as the checker meets them; the records name an instance by [`Instance::display`].
//!
//! Invariant: an instance's identity is its declaration and arguments only, never a position or
//! the caller that first asked for it, so the same instance asked twice is one id.

use std::sync::Arc;

use crate::db::Db;
use crate::input::Item;
use crate::types::Ty;

/// One argument of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InstanceArg {
    Type(Ty),
    Nat(u64),
}

/// A declaration with its arguments.
#[salsa::interned(debug)]
pub struct Instance<'db> {
    #[returns(copy)]
    pub item: Item,
    #[returns(ref)]
    pub args: Arc<[InstanceArg]>,
}

impl<'db> Instance<'db> {
    /// The instance of a declaration without arguments (every tier-0 function).
    pub fn monomorphic(db: &'db dyn Db, item: Item) -> Instance<'db> {
        Instance::new(db, item, Arc::from(Vec::new()))
    }

    /// True when the instance has no arguments.
    pub fn is_monomorphic(self, db: &'db dyn Db) -> bool {
        self.args(db).is_empty()
    }

    /// How records name it: the declaration's full name, then its arguments in brackets
    /// (`lib.scale[4]`, `max_of[u64]`).
    pub fn display(self, db: &'db dyn Db) -> String {
        let mut out = crate::scope::Resolver::new(db).full_name(self.item(db)).to_string();
        let args = self.args(db);
        if !args.is_empty() {
            let shown: Vec<String> = args
                .iter()
                .map(|arg| match arg {
                    InstanceArg::Type(ty) => ty.to_string(),
                    InstanceArg::Nat(n) => n.to_string(),
                })
                .collect();
            out.push('[');
            out.push_str(&shown.join(", "));
            out.push(']');
        }
        out
    }
}
