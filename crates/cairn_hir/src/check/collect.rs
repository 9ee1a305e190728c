//! Collectors (language §25): `reduce`, `compact` and `scan`, bound with `let` or stored.
//!
//! The checks run in the order a reader meets the statement: the binding's form
//! (`E-COLLECT-BINDING`), the output (`E-REDUCE-TARGET`, `E-WRITE-LEASE`, `E-SCAN-TARGET`), the
//! count, the binder, then each yield typed as lane code (the lane rules apply to it, `for` or
//! `parallel` alike), the operator against the value type (`E-REDUCE-OP`, `E-SCAN-OP`, and
//! `E-REDUCE-ORDER`/`E-SCAN-ORDER` for pooled floats), the extents (`E-COLLECT-CAPACITY`,
//! `E-SCAN-EXTENT`) and the reads of the output (`E-COLLECT-SELF-READ`, `E-PARALLEL-RACE`).

use std::sync::Arc;

use super::cx::Lane;
use super::cx::{Cx, Local, LocalKind, R};
use super::parallel::RaceWalk;
use super::result::{CallTarget, GuardKind};
use crate::body::{CollectKind, Collector, Expr, ExprId, Literal, ReduceOp, StmtId};
use crate::builtins::Builtin;
use crate::diag::{Anchor, Diag};
use crate::scopes::LocalRef;
use crate::types::{Extent, Mode, Place, Ty};

impl Cx<'_> {
    pub(crate) fn collect(&mut self, id: StmtId, c: &Arc<Collector>) -> R<()> {
        let what = match c.kind {
            CollectKind::Reduce => "A `reduce`",
            CollectKind::Compact => "A `compact`",
            CollectKind::Scan { .. } => "A `scan`",
        };
        self.not_in_lane(id, what)?;
        self.binding_form(id, c)?;
        let Some(op) = c.op.or((c.kind == CollectKind::Compact).then_some(ReduceOp::Add)) else {
            // The parser refused the operator word already.
            return Ok(());
        };
        // The output, evaluated before the lanes (`out[k]`'s `k` once).
        let output = match (c.kind, c.target) {
            (_, None) => None,
            (CollectKind::Reduce, Some(target)) => Some(self.reduce_target(target)?),
            (kind, Some(target)) => Some(self.collect_output(kind, target)?),
        };
        self.check(c.count, Some(&Ty::usize()))?;
        self.fresh(c.binder, |name| format!("The binder {name} is already bound; pick a fresh name."))?;
        let name = self.body.binder(c.binder).clone();
        self.bind(
            c.binder,
            Local { name, ty: Ty::usize(), mutable: false, kind: LocalKind::LoopBinder, literal: None },
        );
        let annotation = match &c.ty {
            Some(written) => {
                Some(self.resolve_written(written).map_err(|e| Diag::new(e.code, e.message, Anchor::Stmt(id)))?)
            }
            None => None,
        };
        // The yields run as lane code.
        let first_call = (self.call_targets.len(), self.calls.len());
        let mut lane = Lane::new(self.closure_rets.len());
        // Where the output lives counts as an access of the lanes (a device total is stored
        // on the device, language §36).
        if let Some((out, _)) = &output {
            match self.types.get(out.0 as usize) {
                Some(Ty::View(view)) if view.place == Place::Device => lane.device = Some(Anchor::Expr(*out)),
                Some(Ty::View(view)) if view.place != Place::Unified => {
                    lane.host = Some((Anchor::Expr(*out), view.place))
                }
                Some(Ty::Buf(_)) => lane.host = Some((Anchor::Expr(*out), Place::Host)),
                _ => {}
            }
        }
        self.lane = Some(lane);
        let typed = self.collector_yields(c, output.as_ref().map(|(_, elem)| elem), annotation.as_ref());
        let lane = self.lane.take();
        let value_ty = typed?;
        let device = match &lane {
            Some(lane) => self.lane_verdict(lane)?,
            None => false,
        };
        if device {
            for effect in ["par:device", "gpu_alloc", "gpu_free"] {
                self.effect(effect);
            }
        } else if c.parallel {
            self.effect("par:host");
        }
        let exprs: Vec<ExprId> = c.pred.iter().copied().chain([c.value]).collect();
        let mut walk = RaceWalk::new(self, c.binder, &Arc::from(Vec::new()), &exprs);
        walk.exprs(&exprs)?;
        walk.judge()?;
        let mut captures = walk.captures();
        // The lanes write the output (a scan's, a compact's) through it.
        if let Some(target) = c.target {
            let mut root = self.body.unparen(target);
            while let Expr::Index { base, .. } = self.body.expr(root) {
                root = self.body.unparen(*base);
            }
            if let Some(local) = self.scopes.resolve(root)
                && !captures.contains(&local)
            {
                captures.push(local);
            }
        }
        self.collect_operator(c, op, &value_ty, device)?;
        if let Some((out, _)) = &output {
            self.output_rules(c, *out)?;
        }
        if let (Some(annotation), CollectKind::Scan { .. }) = (&annotation, c.kind)
            && let Some((_, elem)) = &output
            && !super::expr::same(annotation, elem)
        {
            return Err(self.mismatch(c.value, elem, annotation));
        }
        if let Some(binder) = c.name {
            self.fresh(binder, |n| format!("{n} is already bound; CAIRN has no shadowing, so pick a fresh name."))?;
            let ty = match c.kind {
                CollectKind::Compact => Ty::usize(),
                _ => annotation.clone().unwrap_or_else(|| value_ty.clone()),
            };
            let name = self.body.binder(binder).clone();
            self.bind(binder, Local { name, ty, mutable: false, kind: LocalKind::Let, literal: None });
        }
        self.record_region(id, captures, first_call, 1);
        if let Some(region) = self.regions.last_mut() {
            region.device = device;
        }
        Ok(())
    }

    /// `E-COLLECT-BINDING`: results are bound immutably; a `reduce` binds or stores, not both.
    fn binding_form(&mut self, id: StmtId, c: &Collector) -> R<()> {
        let refuse = |message: String| Err(Diag::new("E-COLLECT-BINDING", message, Anchor::Stmt(id)));
        if c.mutable {
            return refuse(
                "A collector's result is bound with plain `let`: it is computed once and never reassigned. Copy it into a `let mut` afterwards if you need to change it."
                    .to_string(),
            );
        }
        match c.kind {
            CollectKind::Reduce if c.name.is_some() && c.target.is_some() => refuse(
                "This `reduce` both binds its total and stores it into an element: do one (`let s = reduce …;` or `reduce + out[k] for …;`).".to_string(),
            ),
            CollectKind::Reduce if c.name.is_none() && c.target.is_none() => refuse(
                "A `reduce` statement must store its total: name the element (`reduce + out[k] for i in n yield …;`), or bind it with `let s = reduce …;`.".to_string(),
            ),
            CollectKind::Compact => match &c.ty {
                Some(written) => {
                    let ty = self.resolve_written(written).map_err(|e| Diag::new(e.code, e.message, Anchor::Stmt(id)))?;
                    if ty != Ty::usize() && !ty.is_error() {
                        return refuse(format!(
                            "A `compact` binds how many elements it wrote, a usize, not a {ty}: drop the annotation or write `: usize`."
                        ));
                    }
                    Ok(())
                }
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// `out[k]` of a storing `reduce`: an `rw` view or buffer, `k` a usize. Returns the stored
    /// view's binding and element type.
    fn reduce_target(&mut self, target: ExprId) -> R<(ExprId, Ty)> {
        let Expr::Index { base, indices } = self.body.expr(target).clone() else {
            return Err(Diag::new(
                "E-REDUCE-TARGET",
                "A `reduce` stores into one element, `out[k]`.",
                Anchor::Expr(target),
            ));
        };
        let elem = self.output_view(base, "E-REDUCE-TARGET", "`reduce … out[k]` stores its total")?;
        for index in indices.iter() {
            self.check(*index, Some(&Ty::usize()))?;
        }
        if let Some(slot) = self.types.get_mut(target.0 as usize) {
            *slot = elem.clone();
        }
        if let Some(root) = self.root_name(base) {
            self.effect(format!("write:{root}"));
        }
        Ok((base, elem))
    }

    /// The output of a `compact` or `scan`: a directly named `rw` view or buffer.
    fn collect_output(&mut self, kind: CollectKind, out: ExprId) -> R<(ExprId, Ty)> {
        let (code, what) = match kind {
            CollectKind::Compact => ("E-WRITE-LEASE", "`compact` writes the kept elements"),
            _ => ("E-SCAN-TARGET", "`scan` writes each prefix"),
        };
        let elem = self.output_view(out, code, what)?;
        if let Some(root) = self.root_name(out) {
            self.effect(format!("write:{root}"));
        }
        Ok((out, elem))
    }

    /// A named `rw` view (a parameter, `stack` or `buffer`) or a `let mut` owner of elements:
    /// its element type.
    fn output_view(&mut self, out: ExprId, code: &'static str, what: &str) -> R<Ty> {
        let ty = self.check(out, None)?;
        let named = matches!(self.body.expr(self.body.unparen(out)), Expr::Name(_));
        let writable = match &ty {
            Ty::View(view) => view.mode == Mode::Rw,
            Ty::Buf(_) | Ty::Array(..) => self.root_name(out).and_then(|n| self.local(&n)).is_some_and(|l| l.mutable),
            Ty::Error => true,
            _ => false,
        };
        if !named || !writable {
            return Err(Diag::new(
                code,
                format!(
                    "{what} into an rw view or buffer named directly; this is a {ty}. Pass an `rw` view parameter, or declare `buffer out:T[n] = zeroed;`."
                ),
                Anchor::Expr(out),
            ));
        }
        Ok(match ty {
            Ty::View(view) => (*view.elem).clone(),
            Ty::Buf(elem) | Ty::Array(elem, _) => (*elem).clone(),
            _ => Ty::Error,
        })
    }

    /// The predicate and yield, typed; returns the yield's type.
    fn collector_yields(&mut self, c: &Collector, elem: Option<&Ty>, annotation: Option<&Ty>) -> R<Ty> {
        if let Some(pred) = c.pred {
            self.check(pred, Some(&Ty::Bool))?;
        }
        let expected = match c.kind {
            CollectKind::Reduce if c.target.is_some() => elem,
            CollectKind::Reduce => annotation,
            _ => elem,
        };
        let got = self.check(c.value, expected)?;
        if let Some(want) = expected
            && !super::expr::same(want, &got)
        {
            return Err(self.mismatch(c.value, want, &got));
        }
        Ok(got)
    }

    /// The operator rules (language §25), and the overflow site of checked unsigned `+`.
    fn collect_operator(&mut self, c: &Collector, op: ReduceOp, ty: &Ty, device: bool) -> R<()> {
        if ty.is_error() || c.kind == CollectKind::Compact {
            return Ok(());
        }
        let scan = matches!(c.kind, CollectKind::Scan { .. });
        let allowed = match op {
            ReduceOp::AddWrap | ReduceOp::MulWrap | ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => ty.is_unsigned(),
            ReduceOp::Min | ReduceOp::Max => ty.is_integer(),
            ReduceOp::Add => ty.is_float() || ty.is_unsigned(),
            ReduceOp::Mul => ty.is_float(),
        };
        if !allowed {
            let (code, word) = if scan { ("E-SCAN-OP", "scan") } else { ("E-REDUCE-OP", "reduce") };
            let hint = match op {
                ReduceOp::Add if ty.is_signed() => {
                    " Signed `+` could overflow in one order and not another: widen to an unsigned type, or fold with `for` in a loop."
                }
                ReduceOp::Mul if ty.is_integer() => {
                    " Integer `*` overflows too easily to trap alike in every order: use `mul_wrap` on an unsigned type."
                }
                _ => "",
            };
            return Err(Diag::new(
                code,
                format!(
                    "`{word} {}` is not defined on {ty}: `add_wrap mul_wrap & | ^` take unsigned integers, `min max` integers, `+` floats and unsigned integers (checked), `*` floats.{hint}",
                    op.text()
                ),
                Anchor::Expr(c.value),
            ));
        }
        // Device lanes fold in a tree of unspecified association whatever the keyword says
        // (language §25), so floats are theirs to sum.
        if ty.is_float() && c.parallel && !device {
            let (code, message) = if scan {
                (
                    "E-SCAN-ORDER",
                    "A float `scan` runs only in order: floating-point sums depend on their order, and a pooled scan would change the result with the lane count. Write `for` instead of `parallel`.",
                )
            } else {
                (
                    "E-REDUCE-ORDER",
                    "A pooled `reduce` over floats would fold in blocks, and floating-point sums depend on their order: write `for` to fold in index order, or reduce an integer type.",
                )
            };
            return Err(Diag::new(code, message, Anchor::Expr(c.value)));
        }
        if op == ReduceOp::Add && ty.is_unsigned() {
            self.site(GuardKind::Overflow);
        }
        Ok(())
    }

    /// Extents and reads of the output.
    fn output_rules(&mut self, c: &Collector, out: ExprId) -> R<()> {
        let out_ref = self.scopes.resolve(self.body.unparen(out));
        let name = match self.body.expr(self.body.unparen(out)) {
            Expr::Name(n) => n.clone(),
            _ => Arc::from("out"),
        };
        if matches!(c.kind, CollectKind::Compact | CollectKind::Scan { .. }) {
            let extent = self.static_extent(out);
            let count = self.count_extent(c.count);
            let matches = match (&extent, &count) {
                (Some(a), Some(b)) => a == b || *a == Extent::Unknown,
                _ => false,
            };
            if !matches {
                let (code, word) = match c.kind {
                    CollectKind::Compact => ("E-COLLECT-CAPACITY", "compact"),
                    _ => ("E-SCAN-EXTENT", "scan"),
                };
                let shown = extent.map(|e| e.to_string()).unwrap_or_else(|| "unknown".into());
                return Err(Diag::new(
                    code,
                    format!(
                        "`{word}` iterates over exactly the extent of its output: {name} has extent {shown}, so count with it (`for i in {shown}`) or pass an output of the iteration's extent."
                    ),
                    Anchor::Expr(c.count),
                ));
            }
        }
        let Some(out_ref) = out_ref else { return Ok(()) };
        for e in c.pred.iter().copied().chain([c.value]) {
            if let Some(at) = self.reads_of(e, out_ref, c) {
                let (code, message) = match c.kind {
                    CollectKind::Compact => (
                        "E-COLLECT-SELF-READ",
                        format!(
                            "`compact` fills {name} while it runs, so its predicate and projection may not read {name}: read the input instead."
                        ),
                    ),
                    CollectKind::Scan { .. } => (
                        "E-PARALLEL-RACE",
                        format!(
                            "A `scan`'s yield may read {name} only at its own element, {name}[i], which it reads before the scan writes it."
                        ),
                    ),
                    CollectKind::Reduce => (
                        "E-PARALLEL-RACE",
                        format!(
                            "The `reduce` stores into {name}, so no yield may read {name}: read the input instead."
                        ),
                    ),
                };
                return Err(Diag::new(code, message, Anchor::Expr(at)));
            }
        }
        Ok(())
    }

    /// The first expression in `e` that names `out`, except (for a scan) `out[i]`.
    fn reads_of(&self, e: ExprId, out: LocalRef, c: &Collector) -> Option<ExprId> {
        let mut names = Vec::new();
        let mut binders = Vec::new();
        let mut assigned = Vec::new();
        super::closure::expr(&self.body, e, &mut binders, &mut names, &mut assigned);
        let own: Vec<ExprId> = match c.kind {
            CollectKind::Scan { .. } => self.own_element_reads(c),
            _ => Vec::new(),
        };
        names.into_iter().find(|&n| self.scopes.resolve(n) == Some(out) && !own.contains(&n))
    }

    /// The base names of every `out[i]` (the scan's own element) in the body.
    fn own_element_reads(&self, c: &Collector) -> Vec<ExprId> {
        let mut out = Vec::new();
        for expr in self.body.exprs.iter() {
            if let Expr::Index { base, indices } = expr
                && let [index] = &indices[..]
                && self.scopes.resolve(self.body.unparen(*index)) == Some(LocalRef::Binder(c.binder))
                && matches!(self.body.expr(self.body.unparen(*index)), Expr::Name(_))
            {
                out.push(self.body.unparen(*base));
            }
        }
        out
    }

    /// A view's extent as its type says it.
    fn static_extent(&self, out: ExprId) -> Option<Extent> {
        match self.types.get(out.0 as usize)? {
            Ty::View(view) => Some(view.extent.clone()),
            Ty::Array(_, n) => Some(Extent::Literal(*n)),
            Ty::Buf(_) => match self.body.expr(self.body.unparen(out)) {
                Expr::Name(n) => Some(Extent::Len(n.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// The extent identity an iteration count spells.
    fn count_extent(&self, count: ExprId) -> Option<Extent> {
        let count = self.body.unparen(count);
        match self.body.expr(count) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => u64::try_from(*v).ok().map(Extent::Literal),
            Expr::Name(name) => match self.scopes.resolve(count) {
                Some(_) => Some(Extent::Name(name.clone())),
                None => self
                    .natural(name)
                    .or_else(|| crate::consts::integer_constant(self.db, &self.module, name))
                    .map(Extent::Literal),
            },
            Expr::Call { args, .. } if args.len() == 1 => match self.call_target_of(count) {
                Some(CallTarget::Builtin(Builtin::Len)) => {
                    let arg = self.body.unparen(args[0]);
                    match self.types.get(arg.0 as usize) {
                        Some(Ty::View(view)) if view.extent != Extent::Unknown => Some(view.extent.clone()),
                        Some(Ty::Array(_, n)) => Some(Extent::Literal(*n)),
                        _ => match self.body.expr(arg) {
                            Expr::Name(n) => Some(Extent::Len(n.clone())),
                            _ => None,
                        },
                    }
                }
                _ => None,
            },
            _ => None,
        }
    }
}
