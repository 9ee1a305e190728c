//! Statements of a body (language §7–§12): blocks and their scopes, `let`, `return`, expression
//! statements, loops and their binders, `match` with its arms, `stack` arrays.

use std::sync::Arc;

use crate::body::{Arm, BinderId, Block, Else, Expr, ExprId, Stmt, StmtId};
use crate::decl::variants_of;
use crate::diag::{Anchor, Diag, list};
use crate::types::{Extent, Ty};

use super::cx::{Cx, Local, LocalKind, R, describe_kind};
use super::result::{CallTarget, GuardKind};

impl Cx<'_> {
    // ----- blocks and statements -----------------------------------------------------------

    /// Checks a block in its own scope; returns whether it always leaves.
    pub(crate) fn block(&mut self, block: &Block) -> R<bool> {
        let at = self.at;
        let result = self.statements(block);
        self.at = at;
        result
    }

    /// A block's statements in order: the first refusal ends the block — except in the
    /// recovering pass, where every statement still runs and the block answers its first refusal
    /// at its end.
    pub(crate) fn statements(&mut self, block: &Block) -> R<bool> {
        let mut ends = false;
        let mut refused: Option<Diag> = None;
        for &stmt in block.iter() {
            let recovering = self.recover && self.probing == 0;
            if ends {
                let diag = Diag::new(
                    "E-UNREACHABLE",
                    "This statement can never run: it follows an unconditional return, break or continue in the same block.",
                    Anchor::Stmt(stmt),
                );
                if !recovering {
                    return Err(diag);
                }
                refused.get_or_insert(diag);
            }
            match self.stmt(stmt) {
                Ok(e) => ends = e,
                Err(diag) if recovering => {
                    refused.get_or_insert(diag);
                    ends = false;
                }
                Err(diag) => return Err(diag),
            }
        }
        match refused {
            Some(diag) => Err(diag),
            None => Ok(ends),
        }
    }

    pub(crate) fn stmt(&mut self, id: StmtId) -> R<bool> {
        if let Some(scope) = self.scopes.stmt_scope(id) {
            self.at = scope;
        }
        let body = self.body.clone();
        match body.stmt(id) {
            Stmt::Missing => Ok(false),
            Stmt::Let { binder, mutable, ty, init } => {
                if matches!(self.body.expr(self.body.unparen(*init)), Expr::Spawn { .. }) {
                    if *mutable {
                        return Err(Diag::new(
                            "E-PINNED",
                            "A ticket is never reassigned: bind it with plain `let t = spawn …;`.",
                            Anchor::Stmt(id),
                        ));
                    }
                    self.spawn_binding = Some(self.body.unparen(*init));
                }
                self.let_stmt(id, *binder, *mutable, ty.as_ref(), *init)?;
                Ok(false)
            }
            Stmt::Assign { target, op, value } => {
                self.assign(*target, *op, *value)?;
                Ok(false)
            }
            Stmt::Expr(e) => {
                self.expr_stmt(id, *e)?;
                Ok(false)
            }
            Stmt::If { cond, then, els } => {
                self.check(*cond, Some(&Ty::Bool))?;
                let then_ends = self.block(then)?;
                match els {
                    None => Ok(false),
                    Some(Else::Block(block)) => Ok(self.block(block)? && then_ends),
                    Some(Else::If(nested)) => {
                        let nested_ends = self.stmt(*nested);
                        Ok(nested_ends? && then_ends)
                    }
                }
            }
            Stmt::While { cond, body: block } => {
                self.check(*cond, Some(&Ty::Bool))?;
                self.effect("diverge");
                self.loops += 1;
                let result = self.block(block);
                self.loops -= 1;
                result?;
                Ok(false)
            }
            Stmt::ForRange { binder, lo, hi, body: block } => {
                self.check(*lo, Some(&Ty::usize()))?;
                self.check(*hi, Some(&Ty::usize()))?;
                self.loop_with_binders(&[(*binder, Ty::usize())], block, |name| {
                    format!("The loop binder {name} is already bound; pick a fresh name.")
                })?;
                Ok(false)
            }
            Stmt::Each { binder, count, body: block } => {
                self.check(*count, Some(&Ty::usize()))?;
                self.loop_with_binders(&[(*binder, Ty::usize())], block, |name| {
                    format!("The loop binder {name} is already bound; pick a fresh name.")
                })?;
                Ok(false)
            }
            Stmt::ForEach { index, element, iterable, body: block } => {
                self.for_each(*index, *element, *iterable, block)?;
                Ok(false)
            }
            Stmt::Match { subject, arms } => self.match_stmt(id, *subject, arms),
            Stmt::Return(value) => {
                self.return_stmt(id, *value)?;
                Ok(true)
            }
            Stmt::Break | Stmt::Continue => {
                if self.loops == 0 {
                    let word = if matches!(body.stmt(id), Stmt::Break) { "break" } else { "continue" };
                    return Err(Diag::new(
                        "E-LOOP-CONTROL",
                        format!("`{word}` needs an enclosing `for` or `while` loop."),
                        Anchor::Stmt(id),
                    ));
                }
                Ok(true)
            }
            Stmt::Block(block) => self.block(block),
            Stmt::Unsafe(block) => {
                self.unsafe_depth += 1;
                let ends = self.block(block);
                self.unsafe_depth -= 1;
                ends
            }
            Stmt::Stack { binder, element, capacity, placed } => {
                self.stack(*binder, element, *capacity, *placed)?;
                Ok(false)
            }
            Stmt::Buffer { binder, element, capacity, place } => {
                self.host_only(Anchor::Stmt(id), "a `buffer` declaration")?;
                self.buffer(*binder, element, *capacity, *place)?;
                Ok(false)
            }
            Stmt::Unpack { record, binders, mutable, value } => {
                self.unpack(id, record, binders, *mutable, *value)?;
                Ok(false)
            }
            Stmt::Defer(inner) => {
                self.host_only(Anchor::Stmt(id), "a `defer`")?;
                self.defer(id, *inner)?;
                Ok(false)
            }
            Stmt::Parallel { binder, count, body: block } => {
                self.parallel(id, *binder, *count, block)?;
                Ok(false)
            }
            Stmt::Collect(c) => {
                self.collect(id, c)?;
                Ok(false)
            }
            Stmt::Unsupported(kind) => Err(Diag::new(
                "E-UNSUPPORTED",
                format!(
                    "{} is a construct of a later tier, which this checker does not check yet.",
                    describe_kind(*kind)
                ),
                Anchor::Stmt(id),
            )),
        }
    }

    pub(crate) fn loop_with_binders(
        &mut self,
        binders: &[(BinderId, Ty)],
        block: &Block,
        message: impl Fn(&str) -> String,
    ) -> R<()> {
        for (binder, ty) in binders {
            if let Err(e) = self.fresh(*binder, &message) {
                return Err(e);
            }
            let name = self.body.binder(*binder).clone();
            self.bind(
                *binder,
                Local { name, ty: ty.clone(), mutable: false, kind: LocalKind::LoopBinder, literal: None },
            );
        }
        self.loops += 1;
        let result = self.block(block);
        self.loops -= 1;
        result.map(|_| ())
    }

    pub(crate) fn let_stmt(
        &mut self,
        id: StmtId,
        binder: BinderId,
        mutable: bool,
        ty: Option<&crate::body::TypeRef>,
        init: ExprId,
    ) -> R<()> {
        let name = self.body.binder(binder).clone();
        let declared = match ty {
            Some(written) => match self.resolve_written(written) {
                Ok(t) => Some(t),
                Err(e) => return Err(Diag::new(e.code, e.message, Anchor::Stmt(id))),
            },
            None => None,
        };
        if &*name == "_" {
            self.check(init, declared.as_ref())?;
            return Ok(());
        }
        self.fresh(binder, |n| format!("{n} is already bound; CAIRN has no shadowing, so pick a fresh name."))?;
        let ty = self.check(init, declared.as_ref())?;
        let is_string =
            matches!(self.body.expr(self.body.unparen(init)), Expr::Literal(crate::body::Literal::String(_)));
        if ty == Ty::Void || (matches!(ty, Ty::View(_) | Ty::Borrow(..)) && !is_string) {
            return Err(Diag::new(
                "E-VIEW-ALIAS",
                "A local cannot hold a borrow or a void value: pass the view to calls directly, and use `let` only for values.",
                Anchor::Stmt(id),
            ));
        }
        let literal = match (declared.is_none(), self.body.expr(self.body.unparen(init))) {
            (true, Expr::Literal(crate::body::Literal::Int { text, .. })) => Some(text.clone()),
            _ => None,
        };
        self.bind(binder, Local { name, ty, mutable, kind: LocalKind::Let, literal });
        Ok(())
    }

    pub(crate) fn return_stmt(&mut self, id: StmtId, value: Option<ExprId>) -> R<()> {
        self.lane_control(Anchor::Stmt(id), "return")?;
        let ret = self.ret_ty();
        match value {
            Some(value) => {
                if ret == Ty::Void {
                    let what = if self.signature.test { "A test" } else { "A function without a result type" };
                    return Err(Diag::new(
                        "E-RETURN",
                        format!("{what} cannot return a value: write `return;`, or declare the result type."),
                        Anchor::Stmt(id),
                    ));
                }
                self.check(value, Some(&ret))?;
            }
            None => {
                if ret != Ty::Void && !ret.is_error() {
                    return Err(Diag::new(
                        "E-RETURN",
                        format!("This function returns a {ret}: write `return value;`."),
                        Anchor::Stmt(id),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn expr_stmt(&mut self, id: StmtId, e: ExprId) -> R<()> {
        let inner = self.body.unparen(e);
        if !matches!(self.body.expr(inner), Expr::Call { .. } | Expr::Try(_)) {
            if matches!(self.body.expr(inner), Expr::Unsupported(_) | Expr::Spawn { .. }) {
                self.check(inner, None)?;
            }
            return Err(Diag::new(
                "E-DISCARD",
                "Only a call (or `try` of one) can stand as a statement; this value would be thrown away.",
                Anchor::Stmt(id),
            ));
        }
        let ty = self.check(e, None)?;
        if let Some(builtin) = self.computing_builtin(inner) {
            return Err(Diag::new(
                "E-DISCARD",
                format!("{builtin}(...) only computes a value: use the result, or leave the call out."),
                Anchor::Stmt(id),
            ));
        }
        if self.is_two_variant_sum(&ty) {
            return Err(Diag::new(
                "E-DISCARD",
                format!(
                    "This call returns {ty}, an outcome to handle: use `try` or `match`, or drop it on purpose with `let _ = …;`."
                ),
                Anchor::Stmt(id),
            ));
        }
        Ok(())
    }

    /// The name of a builtin that only computes, when `e` calls one.
    pub(crate) fn computing_builtin(&self, e: ExprId) -> Option<Arc<str>> {
        match self.call_target_of(e)? {
            CallTarget::Builtin(builtin) if builtin.computing() || builtin.conversion().is_some() => {
                Some(Arc::from(builtin.name()))
            }
            _ => None,
        }
    }

    pub(crate) fn call_target_of(&self, e: ExprId) -> Option<&CallTarget> {
        self.call_targets.iter().rev().find(|(id, _)| *id == e).map(|(_, t)| t)
    }

    /// True for a sum of exactly two variants (not a tag-only enum).
    pub(crate) fn is_two_variant_sum(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Enum(adt) => {
                let def = crate::decl::enum_def(self.db, adt.item);
                !def.tag_only && def.variants.len() == 2
            }
            _ => false,
        }
    }

    pub(crate) fn for_each(
        &mut self,
        index: Option<BinderId>,
        element: BinderId,
        iterable: ExprId,
        block: &Block,
    ) -> R<()> {
        if !self.is_name_or_field_path(iterable) {
            return Err(Diag::new(
                "E-ELEMENT-LOOP",
                "An element loop walks a named view or array (or a field path to one): bind the value to a name first, or use an index loop `for i in lo..hi`.",
                Anchor::Expr(iterable),
            ));
        }
        let ty = self.check(iterable, None)?;
        let element_ty = match &ty {
            Ty::View(view) => {
                self.index_placement(Anchor::Expr(iterable), view.place)?;
                (*view.elem).clone()
            }
            Ty::Buf(elem) => {
                self.index_placement(Anchor::Expr(iterable), crate::types::Place::Host)?;
                (**elem).clone()
            }
            Ty::Array(elem, _) => (**elem).clone(),
            Ty::Record(_) if self.lent(iterable, ty.clone()).as_view().is_some() => {
                self.lend(iterable, ty.clone()).as_view().map(|v| (*v.elem).clone()).unwrap_or(Ty::Error)
            }
            Ty::Error => Ty::Error,
            other => {
                let tail = if *other == Ty::usize() { "; a count is a range, `for i in 0..n`" } else { "" };
                return Err(Diag::new(
                    "E-ELEMENT-LOOP",
                    format!("An element loop walks a view or an array, not a {other}{tail}."),
                    Anchor::Expr(iterable),
                ));
            }
        };
        // `for x in xs` is `for i in 0..len(xs) { let x = xs[i]; … }`: one bounds site and a read.
        self.site(GuardKind::Bounds);
        if let Some(root) = self.root_name(iterable) {
            self.effect(format!("read:{root}"));
        }
        let mut binders = Vec::new();
        if let Some(index) = index {
            binders.push((index, Ty::usize()));
        }
        binders.push((element, element_ty));
        for (i, (binder, ty)) in binders.iter().enumerate() {
            let is_index = index.is_some() && i == 0;
            let message = |name: &str| {
                if is_index {
                    format!("The loop binder {name} is already bound; pick a fresh name.")
                } else {
                    format!("{name} is already bound; CAIRN has no shadowing, so pick a fresh name.")
                }
            };
            if let Err(e) = self.fresh(*binder, message) {
                return Err(e);
            }
            let name = self.body.binder(*binder).clone();
            self.bind(
                *binder,
                Local { name, ty: ty.clone(), mutable: false, kind: LocalKind::LoopBinder, literal: None },
            );
        }
        self.loops += 1;
        let result = self.block(block);
        self.loops -= 1;
        result.map(|_| ())
    }

    pub(crate) fn is_name_or_field_path(&self, e: ExprId) -> bool {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(_) => true,
            Expr::Field { base, .. } => self.is_name_or_field_path(*base),
            _ => false,
        }
    }

    /// The root variable of a place (`a` in `a.b[i].c`, `a[lo..hi]`), if it is a local.
    pub(crate) fn root_name(&self, e: ExprId) -> Option<Arc<str>> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Name(name) => self.local(name).map(|l| l.name.clone()),
            Expr::Field { base, .. } | Expr::Index { base, .. } | Expr::Part { base, .. } => self.root_name(*base),
            _ => None,
        }
    }

    pub(crate) fn match_stmt(&mut self, id: StmtId, subject: ExprId, arms: &Arc<[Arm]>) -> R<bool> {
        let ty = self.check(subject, None)?;
        if let Some(builtin) = self.computing_builtin(self.body.unparen(subject)) {
            return Err(Diag::new(
                "E-DISCARD",
                format!("{builtin}(...) only computes a value; `match` needs an enum or sum to inspect."),
                Anchor::Stmt(id),
            ));
        }
        let adt = match &ty {
            Ty::Enum(adt) => adt.clone(),
            Ty::Error => return self.match_unknown(arms),
            _ => {
                return Err(Diag::new(
                    "E-MATCH-TYPE",
                    format!("`match` inspects a declared enum or sum, not a {ty}; compare with `if` instead."),
                    Anchor::Stmt(id),
                ));
            }
        };
        let variants = variants_of(self.db, &adt);
        let short = adt.name.rsplit('.').next().unwrap_or(&adt.name).to_string();
        if !self.scope.visible_from(adt.item, &self.module) && arms.iter().any(|a| a.variant.len() == 1) {
            let owner = self.scope.module_of(adt.item);
            return Err(Diag::new(
                "E-PRIVATE",
                format!("{} is private to module {owner}, and so are its variants.", adt.name),
                Anchor::Stmt(id),
            ));
        }
        // Normalise `T.V` written with the subject's own type to `V`.
        let mut names: Vec<Arc<str>> = Vec::new();
        for arm in arms.iter() {
            let name = match arm.variant.len() {
                0 => Arc::from(""),
                1 => arm.variant[0].clone(),
                _ => {
                    let (type_path, variant) = arm.variant.split_at(arm.variant.len() - 1);
                    match self.scope.resolve_path(&self.module, type_path, |k| k == crate::input::ItemKind::Enum) {
                        crate::scope::Lookup::Found(decl) if decl.item == adt.item => variant[0].clone(),
                        crate::scope::Lookup::Found(_) => {
                            Arc::from(arm.variant.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join("."))
                        }
                        crate::scope::Lookup::None => {
                            let written = type_path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
                            return Err(Diag::new(
                                "E-UNBOUND",
                                format!(
                                    "{written} is not a type this module can name; import it, or write {short}.{}.",
                                    variant[0]
                                ),
                                Anchor::Arm(arm.id),
                            ));
                        }
                    }
                }
            };
            names.push(name);
        }
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(Diag::new(
                    "E-MATCH-DUPLICATE",
                    format!("The variant {name} has two arms; a variant may appear only once."),
                    Anchor::Stmt(id),
                ));
            }
        }
        let missing: Vec<String> =
            variants.iter().filter(|(v, _)| !names.contains(v)).map(|(v, _)| format!("{}.{v}", adt.name)).collect();
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !variants.iter().any(|(v, _)| v == *n))
            .map(|n| if n.contains('.') { n.to_string() } else { format!("{}.{n}", adt.name) })
            .collect();
        if !missing.is_empty() || !unknown.is_empty() {
            let mut message = String::from("Every variant must have exactly one arm (there is no wildcard)");
            if !missing.is_empty() {
                message.push_str(&format!("; missing {}", missing.join(", ")));
            }
            if !unknown.is_empty() {
                message.push_str(&format!("; {} names no variant of {}", unknown.join(", "), adt.name));
            }
            message.push('.');
            let mut missing_sorted = missing.clone();
            missing_sorted.sort();
            return Err(Diag::new("E-MATCH-COVERAGE", message, Anchor::Stmt(id)).with_details(vec![
                ("missing_variants", list(&missing_sorted)),
                ("unknown_variants", list(&unknown)),
            ]));
        }
        for (arm, name) in arms.iter().zip(&names) {
            if let Some(index) = variants.iter().position(|(v, _)| v == name) {
                self.arm_variants.push((arm.id, index as u32));
            }
        }
        let mut all_end = true;
        for (arm, name) in arms.iter().zip(&names) {
            let payload = variants.iter().find(|(v, _)| v == name).and_then(|(_, p)| p.clone());
            if payload.is_some() != arm.binder.is_some() {
                return Err(Diag::new(
                    "E-MATCH-BINDING",
                    if payload.is_some() {
                        format!("The arm {name} carries a payload: bind it with {name}(x), or drop it with {name}(_).")
                    } else {
                        format!("The arm {name} has no payload, so it binds nothing: write {name} without parentheses.")
                    },
                    Anchor::Arm(arm.id),
                ));
            }
            if let (Some(binder), Some(payload)) = (arm.binder, payload) {
                if let Err(e) =
                    self.fresh(binder, |n| format!("The payload binder {n} is already bound; a binder must be fresh."))
                {
                    return Err(e);
                }
                let name = self.body.binder(binder).clone();
                self.bind(
                    binder,
                    Local { name, ty: payload, mutable: false, kind: LocalKind::MatchBinder, literal: None },
                );
            }
            let result = self.block(&arm.body);
            all_end &= result?;
        }
        self.site(GuardKind::Tag);
        Ok(all_end)
    }

    /// A match on a subject of unknown type: check the arms' bodies with unknown binders.
    pub(crate) fn match_unknown(&mut self, arms: &Arc<[Arm]>) -> R<bool> {
        let mut all_end = true;
        for arm in arms.iter() {
            if let Some(binder) = arm.binder {
                let name = self.body.binder(binder).clone();
                self.bind(
                    binder,
                    Local { name, ty: Ty::Error, mutable: false, kind: LocalKind::MatchBinder, literal: None },
                );
            }
            let result = self.block(&arm.body);
            all_end &= result?;
        }
        Ok(all_end)
    }

    pub(crate) fn stack(
        &mut self,
        binder: BinderId,
        element: &crate::body::TypeRef,
        capacity: ExprId,
        placed: bool,
    ) -> R<()> {
        self.fresh(binder, |n| format!("The storage name {n} is already bound; pick a fresh name."))?;
        let element_ty =
            self.resolve_written(element).map_err(|e| Diag::new(e.code, e.message, Anchor::Binder(binder)))?;
        // One rule for what element storage may hold (`decl::element_rule`), and for zeroed
        // storage of a linear kind (`zeroed_storage`).
        if let Err(err) = crate::decl::element_rule(self.db, &element_ty, "Stack storage") {
            return Err(Diag::new(err.code, err.message, Anchor::Binder(binder)));
        }
        self.zeroed_storage(&element_ty, "Stack storage", Anchor::Binder(binder))?;
        self.check(capacity, Some(&Ty::usize()))?;
        let cap = self.body.unparen(capacity);
        let extent = match self.body.expr(cap) {
            Expr::Literal(crate::body::Literal::Int { value, .. }) => match value {
                Some(v) if *v < (1u128 << 63) => *v as u64,
                _ => {
                    return Err(Diag::new(
                        "E-OWNER-EXTENT",
                        "This capacity exceeds the 2^63-1 limit on one object.",
                        Anchor::Expr(capacity),
                    ));
                }
            },
            Expr::Name(name) => {
                if let Some(local) = self.local(name).cloned() {
                    if local.mutable {
                        return Err(Diag::new(
                            "E-OWNER-EXTENT",
                            format!(
                                "A capacity must not change: {name} is mutable. Use a literal or a usize constant."
                            ),
                            Anchor::Expr(capacity),
                        ));
                    }
                    return Err(Diag::new(
                        "E-STACK-EXTENT",
                        format!("Stack storage needs a literal or constant capacity, not the value of {name}."),
                        Anchor::Expr(capacity),
                    ));
                }
                // A natural of the instance, or a constant.
                match self.natural(name).or_else(|| crate::consts::integer_constant(self.db, &self.module, name)) {
                    Some(v) => v,
                    None => return Ok(()),
                }
            }
            Expr::Field { .. } if let Some(v) = self.qualified_constant(cap) => v,
            _ => {
                return Err(Diag::new(
                    "E-OWNER-EXTENT",
                    "A capacity is a literal or a constant: bind a computed capacity to a constant first.",
                    Anchor::Expr(capacity),
                ));
            }
        };
        let bytes = extent.saturating_mul(self.size_of(&element_ty));
        self.stack_bytes = self.stack_bytes.saturating_add(bytes);
        if self.stack_bytes > 65_536 {
            return Err(Diag::new(
                "E-STACK-LIMIT",
                format!("This function's stack storage totals {} bytes, over the 65,536-byte limit.", self.stack_bytes),
                Anchor::Binder(binder),
            ));
        }
        self.effect("zero_init");
        self.effect("stack_storage");
        let name = self.body.binder(binder).clone();
        let view = Ty::View(crate::types::ViewTy {
            mode: crate::types::Mode::Rw,
            elem: Arc::new(element_ty),
            extent: Extent::Literal(extent),
            place: crate::types::Place::Host,
        });
        self.bind(binder, Local { name, ty: view, mutable: false, kind: LocalKind::Stack, literal: None });
        if placed {
            return Err(Diag::new(
                "E-PLACE",
                "Stack storage lives where its code runs; it takes no placement.",
                Anchor::Binder(binder),
            ));
        }
        Ok(())
    }

    /// The conservative size of a value of `ty` for the stack budget (language §12).
    pub(crate) fn size_of(&self, ty: &Ty) -> u64 {
        let round = |n: u64| n.div_ceil(8) * 8;
        let at_least = |n: u64| if n == 0 { 16 } else { n };
        match ty {
            Ty::Bool => 1,
            Ty::Int(i) => u64::from(i.bits() / 8),
            Ty::Float(f) => match f {
                crate::types::FloatTy::F32 => 4,
                crate::types::FloatTy::F64 => 8,
            },
            Ty::Record(adt) => {
                at_least(crate::decl::fields_of(self.db, adt).iter().map(|(_, t)| round(self.size_of(t))).sum())
            }
            Ty::Enum(adt) => {
                let payloads: u64 = variants_of(self.db, adt)
                    .iter()
                    .filter_map(|(_, p)| p.as_ref())
                    .map(|p| round(self.size_of(p)))
                    .sum();
                at_least(8 + payloads)
            }
            // An Array counts its elements; a Buf is two words.
            Ty::Array(elem, n) => n.saturating_mul(self.size_of(elem)),
            Ty::Buf(_) => 16,
            _ => 8,
        }
    }
}
