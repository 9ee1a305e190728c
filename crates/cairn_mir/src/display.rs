//! The text dump of MIR (`cairn emit --mir`): one function per paragraph, locals, then blocks
//! with their instructions and terminator. Stable and deterministic, for snapshots and review.

use std::fmt::{self, Display, Formatter};

use crate::{
    BinOp, Block, Check, Const, Function, Guard, Inst, MTy, Memory, Operand, Place, PrintArg, Proj, Rvalue, Stream,
    Terminator, UnOp,
};

impl Display for MTy {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            MTy::Void => write!(f, "void"),
            MTy::Bool => write!(f, "bool"),
            MTy::Int(i) => write!(f, "{}", i.name()),
            MTy::Float(x) => write!(f, "{}", x.name()),
            MTy::Record { name, .. } | MTy::Enum { name, .. } | MTy::Sum { name, .. } => write!(f, "{name}"),
            MTy::View(e) => write!(f, "view<{e}>"),
            MTy::Ptr(e) => write!(f, "ptr<{e}>"),
            MTy::Array(e, n) => write!(f, "{e}[{n}]"),
            MTy::Buf(e) => write!(f, "buf<{e}>"),
            MTy::DynBox(r) => write!(f, "box<{r}>"),
            MTy::Named(named) => write!(f, "{}", named.name),
            MTy::Fn { params, ret } => {
                let shown: Vec<String> = params.iter().map(ToString::to_string).collect();
                write!(f, "fn({}) -> {ret}", shown.join(", "))
            }
        }
    }
}

impl Display for Const {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Const::Int(v, t) => write!(f, "{v}_{}", t.name()),
            Const::Float(bits, crate::FloatTy::F32) => write!(f, "{:?}_f32", f32::from_bits(*bits as u32)),
            Const::Float(bits, crate::FloatTy::F64) => write!(f, "{:?}_f64", f64::from_bits(*bits)),
            Const::Bool(b) => write!(f, "{b}"),
            Const::Str(bytes) => write!(f, "{:?}", String::from_utf8_lossy(bytes)),
            Const::Tag(t, _) => write!(f, "tag {t}"),
            Const::Fn(symbol) => write!(f, "fn {symbol}"),
        }
    }
}

impl Display for Place {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut text = format!("_{}", self.local.0);
        for proj in &self.proj {
            text = match proj {
                Proj::Field(i) => format!("{text}.{i}"),
                Proj::Index(i) => format!("{text}[{i}]"),
                Proj::Deref => format!("(*{text})"),
                Proj::Payload(v) => format!("({text} as {v})"),
            };
        }
        write!(f, "{text}")
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Copy(p) => write!(f, "{p}"),
            Operand::Const(c) => write!(f, "{c}"),
        }
    }
}

fn bin(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "div",
        BinOp::Rem => "rem",
        BinOp::And => "and",
        BinOp::Or => "or",
        BinOp::Xor => "xor",
        BinOp::Shl => "shl",
        BinOp::Shr => "shr",
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
        BinOp::Min => "min",
        BinOp::Max => "max",
    }
}

fn un(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "neg",
        UnOp::Not => "not",
        UnOp::BitNot => "bitnot",
        UnOp::Abs => "abs",
        UnOp::Sqrt => "sqrt",
        UnOp::Floor => "floor",
        UnOp::Ceil => "ceil",
        UnOp::Trunc => "trunc",
        UnOp::ToBits => "to_bits",
    }
}

impl Display for Rvalue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Rvalue::Use(o) => write!(f, "{o}"),
            Rvalue::Binary(op, a, b) => write!(f, "{} {a}, {b}", bin(*op)),
            Rvalue::Unary(op, a) => write!(f, "{} {a}", un(*op)),
            Rvalue::Cast(t, a) => write!(f, "cast {a} to {t}"),
            Rvalue::Record(t, fields) => write!(f, "{t} {{ {} }}", list(fields)),
            Rvalue::Variant(t, v, p) => match p {
                Some(p) => write!(f, "{t}#{v}({p})"),
                None => write!(f, "{t}#{v}"),
            },
            Rvalue::Tag(p) => write!(f, "tag {p}"),
            Rvalue::Len(p) => write!(f, "len {p}"),
            Rvalue::View(p, None) => write!(f, "view {p}"),
            Rvalue::View(p, Some((lo, hi))) => write!(f, "view {p}[{lo}..{hi}]"),
            Rvalue::Ref(p) => write!(f, "ref {p}"),
            Rvalue::Zeroed => write!(f, "zeroed"),
            Rvalue::Alloc(t, n, Memory::Host) => write!(f, "alloc {t}[{n}]"),
            Rvalue::Alloc(t, n, Memory::Device) => write!(f, "alloc {t}[{n}]@device"),
            Rvalue::Alloc(t, n, Memory::Unified) => write!(f, "alloc {t}[{n}]@unified"),
            Rvalue::Select(c, a, b) => write!(f, "select {c}, {a}, {b}"),
            Rvalue::AtomicRmw(op, p, v) => write!(f, "atomic {op:?} {p}, {v}"),
            Rvalue::AtomicCas(p, e, d) => write!(f, "atomic cas {p}, {e}, {d}"),
        }
    }
}

fn list(items: &[Operand]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

impl Display for Check {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Check::NoOverflow(op, t, a, b) => write!(f, "no_overflow {} {} {a}, {b}", bin(*op), t.name()),
            Check::NegNoOverflow(t, a) => write!(f, "neg_no_overflow {} {a}", t.name()),
            Check::Division(t, a, b) => write!(f, "division {} {a}, {b}", t.name()),
            Check::Fits(from, to, a) => write!(f, "fits {a}: {from} -> {to}"),
            Check::ShiftCount(t, k) => write!(f, "shift_count {} {k}", t.name()),
            Check::InBounds(i, n) => write!(f, "in_bounds {i} < {n}"),
            Check::PartInBounds(lo, hi, n) => write!(f, "part_in_bounds {lo} <= {hi} <= {n}"),
            Check::PartLength(lo, hi, n) => write!(f, "part_length {hi} - {lo} == {n}"),
            Check::Unreachable => write!(f, "unreachable"),
            Check::Assert(c, _) => write!(f, "assert {c}"),
            Check::AssertEq(t, a, b, _) => write!(f, "assert_eq {t} {a}, {b}"),
            Check::Callable(c) => write!(f, "callable {c}"),
            Check::Allocated(b) => write!(f, "allocated {b}"),
        }
    }
}

impl Display for Guard {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "guard {} ({})", self.kind.name(), self.check)?;
        if let Some(at) = self.at {
            write!(f, " @e{}", at.0)?;
        }
        if self.hoisted {
            write!(f, " hoisted")?;
        } else if self.elided {
            write!(f, " elided")?;
        }
        for (i, fact) in self.facts.iter().enumerate() {
            write!(f, "{}{fact}", if i == 0 { " by " } else { ", " })?;
        }
        match &self.only_if {
            Some((c, true)) => write!(f, " if {c}")?,
            Some((c, false)) => write!(f, " unless {c}")?,
            None => {}
        }
        Ok(())
    }
}

impl Display for Inst {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Inst::Assign(p, r) => write!(f, "{p} = {r}"),
            Inst::Guard(g) => write!(f, "{g}"),
            Inst::Drop(p) => write!(f, "drop {p}"),
            Inst::Assume(fact) => write!(f, "assume {fact}"),
            Inst::Parallel { lane, env, count, work, schedule } => write!(
                f,
                "parallel {lane}({env}) over {count} (work {work}, grain {}, lanes {})",
                schedule.grain, schedule.lanes
            ),
            Inst::DeviceReduce { lane, fold, env, count, op, checked, dest, dest_device, .. } => write!(
                f,
                "{dest} = device reduce {op:?}{} {lane}({env}) over {count} (fold {fold}){}",
                if *checked { " checked" } else { "" },
                if *dest_device { " (device element)" } else { "" }
            ),
            Inst::Transfer { dst, src, device } => {
                write!(f, "transfer {dst} <- {src}{}", if *device { " (device)" } else { "" })
            }
            Inst::Call { dst: Some(d), callee, args } => write!(f, "{d} = call {callee}({})", list(args)),
            Inst::Call { dst: None, callee, args } => write!(f, "call {callee}({})", list(args)),
            Inst::CallIndirect { dst: Some(d), callee, args } => {
                write!(f, "{d} = call_indirect {callee}({})", list(args))
            }
            Inst::CallIndirect { dst: None, callee, args } => write!(f, "call_indirect {callee}({})", list(args)),
            Inst::Print { stream, newline, args } => {
                let name = match (stream, newline) {
                    (Stream::Stdout, false) => "print",
                    (Stream::Stdout, true) => "println",
                    (Stream::Stderr, false) => "eprint",
                    (Stream::Stderr, true) => "eprintln",
                };
                let args: Vec<String> =
                    args.iter().map(|PrintArg { ty, value, .. }| format!("{value}: {ty}")).collect();
                write!(f, "{name}({})", args.join(", "))
            }
            Inst::Format { dst, args } => {
                let args: Vec<String> =
                    args.iter().map(|PrintArg { ty, value, .. }| format!("{value}: {ty}")).collect();
                write!(f, "{dst} = format({})", args.join(", "))
            }
        }
    }
}

impl Display for Terminator {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Terminator::Goto(b) => write!(f, "goto bb{}", b.0),
            Terminator::Branch(c, t, e) => write!(f, "branch {c}, bb{}, bb{}", t.0, e.0),
            Terminator::Switch(v, cases, default) => {
                let cases: Vec<String> = cases.iter().map(|(k, b)| format!("{k} => bb{}", b.0)).collect();
                write!(f, "switch {v} [{}], else bb{}", cases.join(", "), default.0)
            }
            Terminator::Return(Some(v)) => write!(f, "return {v}"),
            Terminator::Return(None) => write!(f, "return"),
            Terminator::Unreachable => write!(f, "unreachable"),
        }
    }
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = (0..self.params as usize).map(|i| format!("_{i}: {}", self.locals[i].ty)).collect();
        writeln!(f, "fn {} \"{}\"({}) -> {} {{", self.name, self.symbol, params.join(", "), self.ret)?;
        for (i, local) in self.locals.iter().enumerate().skip(self.params as usize) {
            match &local.name {
                Some(name) => writeln!(f, "  let _{i}: {} // {name}", local.ty)?,
                None => writeln!(f, "  let _{i}: {}", local.ty)?,
            }
        }
        for (i, Block { insts, term, .. }) in self.blocks.iter().enumerate() {
            writeln!(f, "  bb{i}:")?;
            for inst in insts {
                writeln!(f, "    {inst}")?;
            }
            writeln!(f, "    {term}")?;
        }
        writeln!(f, "}}")
    }
}
