//! Placement and device code in a body (language §36): where each kind of memory may be indexed,
//! which lanes are device lanes, what device code may not do, `kernel fn` bodies, and
//! `transfer(dst, src)`.
//!
//! Host code indexes host memory and device code device memory; `@unified` memory is both
//! (`E-PLACEMENT` otherwise). Whether a region's lanes are device lanes is known only once its
//! body is typed — a lane is a device lane when it indexes a `@device` view or calls a `kernel fn`
//! (the second is this toolchain's decision, `docs/device.md`) — so while a lane is checked the
//! check notes the first device access, the first host access and the first host-only construct
//! (a closure, a string, a function value, a `dyn` lend, a `defer`, a `buffer`) in its
//! [`Lane`], and [`Cx::lane_verdict`] judges them when the body is done. A `kernel fn`'s body is
//! device code throughout, so there each is judged on the spot. What device lanes call is judged
//! against the callees' rows with the whole program (`crate::lanes`).

use std::sync::Arc;

use super::cx::Lane;
use super::cx::{Cx, R};
use super::parallel::RaceWalk;
use super::result::ArrayAccess;
use crate::body::{BinaryOp, BinderId, Expr, ExprId, Literal};
use crate::diag::{Anchor, Diag};
use crate::scopes::LocalRef;
use crate::types::{Extent, Mode, Place, Ty};

impl Cx<'_> {
    /// How the lanes `walk` placed touch each outer array.
    pub(crate) fn array_accesses(&self, walk: &RaceWalk<'_, '_>) -> Vec<ArrayAccess> {
        let lane = walk.lane();
        let mut out: Vec<(LocalRef, ArrayAccess)> = Vec::new();
        for (key, name, index, write) in walk.accesses() {
            let Some(local) = self.locals.get(&key) else { continue };
            let elem_bytes = match local.ty.value() {
                Ty::View(view) => self.size_of(&view.elem),
                Ty::Buf(elem) | Ty::Array(elem, _) => self.size_of(elem),
                _ => continue,
            };
            let offset = index.and_then(|i| self.lane_offset(i, lane));
            let slot = match out.iter_mut().position(|(k, _)| *k == key) {
                Some(at) => at,
                None => {
                    out.push((
                        key,
                        ArrayAccess {
                            local: key,
                            name: name.clone(),
                            elem_bytes,
                            written: false,
                            own_only: true,
                            offsets: Arc::from(Vec::new()),
                        },
                    ));
                    out.len() - 1
                }
            };
            let entry = &mut out[slot].1;
            entry.written |= write;
            entry.own_only &= offset == Some(0);
            if let Some(d) = offset
                && !write
                && !entry.offsets.contains(&d)
            {
                let mut offsets = entry.offsets.to_vec();
                offsets.push(d);
                entry.offsets = Arc::from(offsets);
            }
        }
        out.into_iter().map(|(_, a)| a).collect()
    }

    /// `d` when `index` is the lane binder plus or minus an integer literal (`i`, `i + 2`, `i - 1`,
    /// `2 + i`).
    fn lane_offset(&self, index: ExprId, lane: BinderId) -> Option<i64> {
        let is_lane = |e: ExprId| {
            matches!(self.body.expr(self.body.unparen(e)), Expr::Name(_))
                && self.scopes.resolve(self.body.unparen(e)) == Some(LocalRef::Binder(lane))
        };
        let literal = |e: ExprId| match self.body.expr(self.body.unparen(e)) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => i64::try_from(*v).ok(),
            _ => None,
        };
        let e = self.body.unparen(index);
        if is_lane(e) {
            return Some(0);
        }
        match self.body.expr(e) {
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } if is_lane(*lhs) => literal(*rhs),
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } if is_lane(*rhs) => literal(*lhs),
            Expr::Binary { op: BinaryOp::Sub, lhs, rhs } if is_lane(*lhs) => literal(*rhs).map(|d| -d),
            _ => None,
        }
    }

    /// True while the code being checked is device code for certain: a `kernel fn`'s body.
    pub(crate) fn in_kernel(&self) -> bool {
        self.signature.kernel
    }

    /// Memory of placement `place` is indexed (or walked) at `anchor`.
    pub(crate) fn index_placement(&mut self, anchor: Anchor, place: Place) -> R<()> {
        match place {
            Place::Unified => Ok(()),
            Place::Device if self.in_kernel() => Ok(()),
            Place::Device => match self.lane.as_mut() {
                Some(lane) => {
                    lane.device.get_or_insert(anchor);
                    Ok(())
                }
                None => Err(Diag::new(
                    "E-PLACEMENT",
                    "Host code cannot index @device memory: read it in a `parallel` region (device lanes), or `transfer` it to a host buffer first.",
                    anchor,
                )),
            },
            Place::Host | Place::Pinned if self.in_kernel() => Err(Diag::new(
                "E-PLACEMENT",
                format!(
                    "A kernel fn is device code and cannot index @{} memory: take a @device view (and `transfer` the host data there first).",
                    place.name()
                ),
                anchor,
            )),
            Place::Host | Place::Pinned => {
                if let Some(lane) = self.lane.as_mut() {
                    lane.host.get_or_insert((anchor, place));
                }
                Ok(())
            }
        }
    }

    /// A construct only host code may have (`what`, for the message) at `anchor`: refused in a
    /// kernel, noted in a lane (refused there if the lane turns out to be a device lane).
    pub(crate) fn host_only(&mut self, anchor: Anchor, what: &'static str) -> R<()> {
        if self.in_kernel() {
            return Err(Diag::new(
                "E-PLACEMENT",
                format!(
                    "A kernel fn is device code, and {what} is host-only: compute it on the host and pass the result in."
                ),
                anchor,
            ));
        }
        if let Some(lane) = self.lane.as_mut() {
            lane.host_only.get_or_insert((anchor, what));
        }
        Ok(())
    }

    /// A call of the `kernel fn` `name` at `e`: only device code may make it.
    pub(crate) fn kernel_call(&mut self, e: ExprId, name: &str) -> R<()> {
        if self.in_kernel() {
            return Ok(());
        }
        match self.lane.as_mut() {
            Some(lane) => {
                lane.kernel.get_or_insert(Anchor::Expr(e));
                Ok(())
            }
            None => Err(Diag::new(
                "E-PLACEMENT",
                format!(
                    "{name} is a kernel fn, callable only from device lanes and other kernels: call it inside a `parallel` region over @device views."
                ),
                Anchor::Expr(e),
            )),
        }
    }

    /// The verdict on a lane whose body is typed: true for device lanes, after refusing what
    /// device lanes may not do.
    pub(crate) fn lane_verdict(&self, lane: &Lane) -> R<bool> {
        let Some(device) = lane.device.or(lane.kernel) else {
            return Ok(false);
        };
        if let Some((anchor, place)) = lane.host {
            let _ = device;
            return Err(Diag::new(
                "E-PLACEMENT",
                format!(
                    "These lanes index @device memory, so they run on the device, and device code cannot index @{} memory here: `transfer` it to a @device buffer before the region.",
                    place.name()
                ),
                anchor,
            ));
        }
        if let Some((anchor, what)) = lane.host_only {
            return Err(Diag::new(
                "E-PLACEMENT",
                format!(
                    "These lanes index @device memory, so they run on the device, and {what} is host-only: compute it before the region and pass the result in."
                ),
                anchor,
            ));
        }
        Ok(true)
    }

    /// `transfer(dst, src)` (language §36): the only way elements cross placements.
    pub(crate) fn transfer(&mut self, e: ExprId, args: &[ExprId]) -> R<Ty> {
        if self.lane.is_some() || self.in_kernel() {
            return Err(Diag::new(
                "E-PARALLEL-NEST",
                "A `transfer` cannot run inside device or lane code: move it before or after the region.",
                Anchor::Expr(e),
            ));
        }
        let [dst, src] = args else {
            return Err(Diag::new(
                "E-ARITY",
                format!(
                    "`transfer` takes two arguments, the destination and the source: `transfer(dst, src)`, not {}.",
                    args.len()
                ),
                Anchor::Expr(e),
            ));
        };
        let (dst, src) = (*dst, *src);
        let dst_ty = self.view_argument(dst)?;
        let src_ty = self.view_argument(src)?;
        if dst_ty.is_error() || src_ty.is_error() {
            return Ok(Ty::Void);
        }
        let named = matches!(
            self.body.expr(self.body.unparen(dst)),
            crate::body::Expr::Name(_) | crate::body::Expr::Part { .. }
        );
        let (Ty::View(to), true) = (self.lend(dst, dst_ty.clone()), named) else {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                format!(
                    "`transfer` writes its first argument, which must be a writable view or buffer named directly, and this is a {dst_ty}."
                ),
                Anchor::Expr(dst),
            ));
        };
        if to.mode != Mode::Rw {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                format!(
                    "`transfer` writes its first argument, and this view is read-only ({dst_ty}): pass an rw view or a buffer."
                ),
                Anchor::Expr(dst),
            ));
        }
        let Ty::View(from) = self.lend(src, src_ty.clone()) else {
            return Err(Diag::new(
                "E-WRITE-LEASE",
                format!("`transfer` copies from a view or buffer, and this is a {src_ty}."),
                Anchor::Expr(src),
            ));
        };
        if !super::expr::same(&to.elem, &from.elem) {
            return Err(Diag::new(
                "E-TYPE-MISMATCH",
                format!(
                    "`transfer` copies elements as they are, so both sides hold the same type: the destination holds {} and the source {}.",
                    to.elem, from.elem
                ),
                Anchor::Expr(src),
            ));
        }
        let part = |x: ExprId| matches!(self.body.expr(self.body.unparen(x)), crate::body::Expr::Part { .. });
        if part(dst) || part(src) {
            // Parts agree by one length guard (beside each part's own).
            self.site(super::result::GuardKind::Bounds);
        } else if to.extent != from.extent || to.extent == Extent::Unknown {
            return Err(Diag::new(
                "E-TYPE-MISMATCH",
                format!(
                    "`transfer` copies every element, so both sides have the same extent, and [{}] is not [{}]: declare both with the same count, or transfer parts (`x[a..b]`), which agree by one length check.",
                    to.extent, from.extent
                ),
                Anchor::Expr(src),
            ));
        }
        let (Some(a), Some(b)) = (self.root_name(dst), self.root_name(src)) else {
            return Ok(Ty::Void);
        };
        if a == b {
            return Err(Diag::new(
                "E-ALIAS",
                format!("`transfer` copies between two different storages, and both sides are {a}."),
                Anchor::Expr(src),
            ));
        }
        let host = |p: Place| p != Place::Device;
        let direction = match (host(from.place), host(to.place)) {
            (true, false) => "h2d",
            (false, true) => "d2h",
            (false, false) => "d2d",
            (true, true) => "h2h",
        };
        self.effect(format!("transfer:{direction}"));
        self.effect(format!("read:{b}"));
        self.effect(format!("write:{a}"));
        Ok(Ty::Void)
    }
}
