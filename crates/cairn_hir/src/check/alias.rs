//! Aliasing at a call (language §6, §11, §21): the place each argument lends — its root, the
//! fields it reaches, and whether it lends a whole value, elements, or a part with bounds that
//! are visible identities — and the rule that a mutable borrow overlaps no other argument of
//! the same call (`E-ALIAS`), with the chain of parts that meet at one boundary as the one way
//! two lends of one view stay disjoint. A closure's captures join its call's places.

use std::sync::Arc;

use super::cx::Cx;
use super::cx::R;
use crate::body::{Expr, ExprId, Literal};
use crate::diag::{Anchor, Diag};

impl Cx<'_> {
    // ----- aliasing --------------------------------------------------------------------------

    /// The place an argument lends.
    pub(crate) fn place_of(&self, arg: ExprId, view: bool) -> Place {
        let mut fields: Vec<Arc<str>> = Vec::new();
        let mut current = self.body.unparen(arg);
        let mut shape = if view { PlaceShape::Elements } else { PlaceShape::Whole };
        loop {
            match self.body.expr(current) {
                Expr::Field { base, name } => {
                    fields.push(name.clone());
                    current = self.body.unparen(*base);
                }
                Expr::Index { base, .. } => {
                    fields.clear();
                    shape = PlaceShape::Elements;
                    current = self.body.unparen(*base);
                }
                Expr::Part { base, lo, hi } => {
                    fields.clear();
                    shape = match shape {
                        PlaceShape::Elements => PlaceShape::Part(self.bound(*lo), self.bound(*hi)),
                        other => other,
                    };
                    if !matches!(self.body.expr(self.body.unparen(*base)), Expr::Name(_)) {
                        shape = PlaceShape::Elements;
                    }
                    current = self.body.unparen(*base);
                }
                Expr::Name(name) => {
                    fields.reverse();
                    return Place { root: Some(name.clone()), fields, shape };
                }
                _ => return Place { root: None, fields: Vec::new(), shape },
            }
        }
    }

    /// A part bound as an identity, when it visibly cannot change.
    fn bound(&self, e: ExprId) -> Option<Bound> {
        match self.body.expr(self.body.unparen(e)) {
            Expr::Literal(Literal::Int { value: Some(v), .. }) => Some(Bound::Literal(*v)),
            Expr::Name(name) => match self.local(name) {
                Some(local) if !local.mutable => Some(Bound::Name(name.clone())),
                Some(_) => None,
                None => {
                    crate::consts::integer_constant(self.db, &self.module, name).map(|v| Bound::Literal(u128::from(v)))
                }
            },
            _ => None,
        }
    }

    pub(crate) fn alias_check(&self, e: ExprId, places: &[(Place, bool)]) -> R<()> {
        let all: Vec<&Place> = places.iter().map(|(p, _)| p).collect();
        for (i, (a, a_rw)) in places.iter().enumerate() {
            for (b, b_rw) in &places[i + 1..] {
                if (*a_rw || *b_rw) && a.overlaps(b) && !disjoint_through_chain(a, b, &all) {
                    return Err(Diag::new(
                        "E-ALIAS",
                        "An argument the call writes (lent rw, moved in, or written by a closure of the call) cannot overlap another argument of the same call: lend disjoint parts, read through ro, or move the value after the call.",
                        Anchor::Expr(e),
                    ));
                }
            }
        }
        Ok(())
    }
}

pub(crate) struct Place {
    root: Option<Arc<str>>,
    fields: Vec<Arc<str>>,
    shape: PlaceShape,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PlaceShape {
    Whole,
    Elements,
    Part(Option<Bound>, Option<Bound>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Bound {
    Literal(u128),
    Name(Arc<str>),
}

impl Place {
    /// True when lending `self` lends all of `other` too: the same root, and `self`'s fields a
    /// prefix of `other`'s (a whole value covers its fields; elements cover their parts).
    pub(crate) fn covers(&self, other: &Place) -> bool {
        self.root.is_some()
            && self.root == other.root
            && self.fields.len() <= other.fields.len()
            && self.fields.iter().zip(&other.fields).all(|(x, y)| x == y)
            && (self.shape == other.shape || !matches!(self.shape, PlaceShape::Part(..)))
    }

    pub(crate) fn overlaps(&self, other: &Place) -> bool {
        let (Some(a), Some(b)) = (&self.root, &other.root) else { return false };
        if a != b {
            return false;
        }
        let prefix = self.fields.iter().zip(&other.fields).all(|(x, y)| x == y);
        if !prefix {
            return false;
        }
        match (&self.shape, &other.shape) {
            (PlaceShape::Part(lo1, hi1), PlaceShape::Part(lo2, hi2)) => {
                !(ends_before(hi1, lo2) || ends_before(hi2, lo1))
            }
            _ => true,
        }
    }
}

/// True when two parts of one place are disjoint through a chain of parts of the same call: `a`
/// ends where (or before) some part begins, which ends where the next begins, … up to `b` (or the
/// other way round). Each part's guard keeps its `lo <= hi`, so the chain orders them.
fn disjoint_through_chain(a: &Place, b: &Place, all: &[&Place]) -> bool {
    let parts: Vec<&Place> = all
        .iter()
        .copied()
        .filter(|p| p.root == a.root && p.fields == a.fields && matches!(p.shape, PlaceShape::Part(..)))
        .collect();
    let before = |x: &Place, y: &Place| match (&x.shape, &y.shape) {
        (PlaceShape::Part(_, hi), PlaceShape::Part(lo, _)) => ends_before(hi, lo),
        _ => false,
    };
    let reaches = |from: &Place, to: &Place| {
        let mut seen: Vec<&Place> = vec![from];
        let mut index = 0;
        while index < seen.len() {
            let current = seen[index];
            if before(current, to) {
                return true;
            }
            for next in &parts {
                if before(current, next) && !seen.iter().any(|s| std::ptr::eq(*s, *next)) {
                    seen.push(next);
                }
            }
            index += 1;
        }
        false
    };
    matches!((&a.shape, &b.shape), (PlaceShape::Part(..), PlaceShape::Part(..))) && (reaches(a, b) || reaches(b, a))
}

/// True when a part ending at `hi` visibly ends where or before another part starting at `lo`.
fn ends_before(hi: &Option<Bound>, lo: &Option<Bound>) -> bool {
    match (hi, lo) {
        (Some(Bound::Literal(h)), Some(Bound::Literal(l))) => h <= l,
        (Some(Bound::Name(h)), Some(Bound::Name(l))) => h == l,
        _ => false,
    }
}
