//! Lowering atomic element updates (language §34): `atomic_add_wrap(x[i], v)` and its kin become
//! `Rvalue::AtomicRmw` (`atomic_cas`: `Rvalue::AtomicCas`) on the element's place, after the
//! element's bounds guard; the value is the element's old value.

use super::*;
use crate::AtomicOp;

impl Lower<'_> {
    /// `builtin(x[i], …)`, an atomic element update.
    pub(super) fn atomic(&mut self, e: ExprId, builtin: Builtin, args: &[ExprId]) -> R<Operand> {
        let ty = self.mty_of(e);
        let place = self.place(args[0])?;
        let value = self.expr(args[1])?;
        let rvalue = match builtin {
            Builtin::AtomicCas => {
                let desired = self.expr(args[2])?;
                Rvalue::AtomicCas(place, value, desired)
            }
            _ => {
                let op = match builtin {
                    Builtin::AtomicAddWrap => AtomicOp::AddWrap,
                    Builtin::AtomicMin => AtomicOp::Min,
                    Builtin::AtomicMax => AtomicOp::Max,
                    Builtin::AtomicAnd => AtomicOp::And,
                    Builtin::AtomicOr => AtomicOp::Or,
                    Builtin::AtomicXor => AtomicOp::Xor,
                    other => return fail(format!("the builtin {} as an atomic update", other.name())),
                };
                Rvalue::AtomicRmw(op, place, value)
            }
        };
        Ok(self.value(ty, rvalue))
    }
}
