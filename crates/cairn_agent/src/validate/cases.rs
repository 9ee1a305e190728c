//! The inputs `cairn validate` feeds a reference and its implementation (tools.md §3.14).
//!
//! A [`Shape`] is what the signature says can be fed: extents (`usize` parameters sizing a view),
//! scalar values, and views of scalars. A [`Case`] is one input: one value for every extent (the
//! same for all, except in the cases *apart*, where one extent parameter takes another — a
//! function that confuses two extents meets a case that tells), a fill [`Pattern`] for every view,
//! and a value for every other scalar.
//!
//! Extents come from the tiles: the naturals of the instance, the divisors the `when` condition
//! names and the literal factors the implementation indexes by, the host pool's cutoff when a
//! region may split; each tile −1, itself, +1 and a partial second tile, then 0, 1 and the
//! domain's largest. Views are zeroed, all ones, ascending, at the type's maximum, alternating,
//! random, and ascending one element off an aligned allocation. Scalars cycle through their type's
//! edges. Everything is deterministic for a seed.

use serde::{Deserialize, Serialize};

use cairn_hir::types::{Extent, FloatTy, IntTy, Mode, Place, Ty};

/// The type of a fed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Int(IntTy),
    Float(FloatTy),
    Bool,
}

impl Scalar {
    fn of(ty: &Ty) -> Option<Scalar> {
        match ty {
            Ty::Int(int) => Some(Scalar::Int(*int)),
            Ty::Float(float) => Some(Scalar::Float(*float)),
            Ty::Bool => Some(Scalar::Bool),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Int(int) => int.name(),
            Scalar::Float(float) => float.name(),
            Scalar::Bool => "bool",
        }
    }

    /// The values a scalar parameter cycles through: its type's edges.
    fn edges(self) -> Vec<String> {
        match self {
            Scalar::Int(int) => {
                let (lo, hi) = int.range();
                let mut out =
                    vec!["0".to_string(), "1".to_string(), hi.to_string(), "2".to_string(), (hi / 2).to_string()];
                if int.signed() {
                    out.push("-1".to_string());
                    out.push(lo.to_string());
                }
                out
            }
            Scalar::Float(FloatTy::F64) => {
                ["0.0", "1.0", "-1.0", "0.5", "1e300", "-2.5"].iter().map(|s| s.to_string()).collect()
            }
            Scalar::Float(FloatTy::F32) => {
                ["0.0", "1.0", "-1.0", "0.5", "3e38", "-2.5"].iter().map(|s| s.to_string()).collect()
            }
            Scalar::Bool => vec!["false".to_string(), "true".to_string()],
        }
    }
}

/// How a view's extent is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewExtent {
    /// The extent parameter at this position.
    Param(usize),
    Literal(u64),
}

/// One parameter as the harness feeds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fed {
    Extent,
    Scalar(Scalar),
    /// A view of scalars in memory of `place`: the harness fills host memory and, for a
    /// `@device` view, transfers it in (and a `rw` view's elements back out before printing).
    View {
        elem: Scalar,
        rw: bool,
        extent: ViewExtent,
        place: Place,
    },
}

/// What the signature lets the harness feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub params: Vec<(String, Fed)>,
    /// `None` for a function that returns nothing.
    pub ret: Option<Scalar>,
}

impl Shape {
    /// The shape of a signature, or why it cannot be fed.
    pub fn of(signature: &cairn_hir::Signature) -> Result<Shape, String> {
        let mut params = Vec::new();
        for (index, param) in signature.params.iter().enumerate() {
            let fed = match &param.ty {
                Ty::Int(IntTy::Usize) if signature.extent_params.contains(&index) => Fed::Extent,
                Ty::View(view) => {
                    let elem = Scalar::of(&view.elem)
                        .ok_or_else(|| format!("the view {} holds {}, not scalars", param.name, view.elem))?;
                    let extent = match &view.extent {
                        Extent::Literal(n) => ViewExtent::Literal(*n),
                        Extent::Name(name) => ViewExtent::Param(
                            signature
                                .param_index(name)
                                .ok_or_else(|| format!("the extent {name} is not a parameter"))?,
                        ),
                        _ => return Err(format!("the extent of {} is not a parameter or a literal", param.name)),
                    };
                    Fed::View { elem, rw: view.mode == Mode::Rw, extent, place: view.place }
                }
                ty => Fed::Scalar(Scalar::of(ty).ok_or_else(|| format!("the parameter {} is a {ty}", param.name))?),
            };
            params.push((param.name.to_string(), fed));
        }
        let ret = match &signature.ret {
            Ty::Void => None,
            ty => Some(Scalar::of(ty).ok_or_else(|| format!("the result is a {ty}"))?),
        };
        Ok(Shape { params, ret })
    }

    /// The scalars a run prints, in order: the result, then each `rw` view's elements.
    pub fn printed(&self, case: &Case) -> Vec<Scalar> {
        let mut out: Vec<Scalar> = self.ret.into_iter().collect();
        for (_, fed) in &self.params {
            if let Fed::View { elem, rw: true, extent, .. } = fed {
                let n = self.length(case, *extent);
                out.extend(std::iter::repeat_n(*elem, n as usize));
            }
        }
        out
    }
}

impl Shape {
    /// How many elements a view of `extent` has in `case`.
    pub fn length(&self, case: &Case, extent: ViewExtent) -> u64 {
        match extent {
            ViewExtent::Literal(n) => n,
            ViewExtent::Param(index) => self.params.get(index).map_or(case.extent, |(name, _)| case.extent_of(name)),
        }
    }

    /// The names of the extent parameters, in order.
    pub fn extent_names(&self) -> Vec<&str> {
        self.params.iter().filter(|(_, f)| matches!(f, Fed::Extent)).map(|(n, _)| n.as_str()).collect()
    }

    /// Whether a (kept) case fits this signature: extents within 2^20 (one of its own for an
    /// extent parameter only), exactly the scalar parameters, each a literal of its type.
    pub fn fits(&self, case: &Case) -> Result<(), String> {
        if case.extent > 1 << 20 {
            return Err(format!("the extent {} is past 2^20", case.extent));
        }
        let names = self.extent_names();
        for (name, &value) in &case.extents {
            if !names.contains(&name.as_str()) {
                return Err(format!("{name} is not an extent of the signature"));
            }
            if value > 1 << 20 {
                return Err(format!("the extent {name} = {value} is past 2^20"));
            }
        }
        let scalars: Vec<(&String, Scalar)> = self
            .params
            .iter()
            .filter_map(|(name, fed)| if let Fed::Scalar(s) = fed { Some((name, *s)) } else { None })
            .collect();
        if scalars.len() != case.scalars.len() || scalars.iter().any(|(n, _)| !case.scalars.contains_key(*n)) {
            return Err("its scalars are not the signature's".into());
        }
        for (name, values) in &case.views {
            let Some((_, Fed::View { elem, extent, .. })) = self.params.iter().find(|(n, _)| n == name) else {
                return Err(format!("{name} is not a view of the signature"));
            };
            let length = self.length(case, *extent);
            if values.len() as u64 != length {
                return Err(format!("{name} holds {} values for {length} elements", values.len()));
            }
            if !values.iter().all(|v| literal_fits(*elem, v)) {
                return Err(format!("{name} holds a value that is not a {}", elem.name()));
            }
        }
        for (name, scalar) in scalars {
            let text = &case.scalars[name];
            let ok = match scalar {
                Scalar::Int(int) => text.parse::<i128>().is_ok_and(|v| v >= int.range().0 && v <= int.range().1),
                Scalar::Float(_) => {
                    text.parse::<f64>().is_ok_and(f64::is_finite)
                        && text.chars().all(|c| c.is_ascii_digit() || ".-eE+".contains(c))
                }
                Scalar::Bool => text == "true" || text == "false",
            };
            if !ok {
                return Err(format!("{name} = {text} is not a {}", scalar.name()));
            }
        }
        Ok(())
    }
}

/// Whether `text` is a literal of `scalar`'s type (in range; floats finite, written as numbers).
pub fn literal_fits(scalar: Scalar, text: &str) -> bool {
    match scalar {
        Scalar::Int(int) => text.parse::<i128>().is_ok_and(|v| v >= int.range().0 && v <= int.range().1),
        Scalar::Float(_) => {
            text.parse::<f64>().is_ok_and(f64::is_finite)
                && text.chars().all(|c| c.is_ascii_digit() || ".-eE+".contains(c))
        }
        Scalar::Bool => text == "true" || text == "false",
    }
}

/// How a view is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Zeroed,
    Ones,
    Ascending,
    Maximum,
    Alternating,
    Random,
    /// Ascending, passed one element off an aligned allocation.
    Offset,
}

pub const PATTERNS: [Pattern; 7] = [
    Pattern::Zeroed,
    Pattern::Ones,
    Pattern::Ascending,
    Pattern::Maximum,
    Pattern::Alternating,
    Pattern::Random,
    Pattern::Offset,
];

/// One input.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Case {
    pub extent: u64,
    pub pattern: Pattern,
    pub seed: u64,
    /// Each scalar parameter's value as a CAIRN literal, by name.
    pub scalars: std::collections::BTreeMap<String, String>,
    /// Views given element by element (a solver's counterexample), by name; the others follow
    /// the pattern.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub views: std::collections::BTreeMap<String, Vec<String>>,
    /// Extent parameters that take another value than `extent`, by name (the others take it).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub extents: std::collections::BTreeMap<String, u64>,
}

impl Case {
    /// The value of the extent parameter `name` in this case.
    pub fn extent_of(&self, name: &str) -> u64 {
        self.extents.get(name).copied().unwrap_or(self.extent)
    }
}

/// The extents a validation tries, ascending, within `largest`.
pub fn extents(tiles: &[u64], largest: u64) -> Vec<u64> {
    let mut out = vec![0, 1, largest];
    for &tile in tiles.iter().filter(|&&t| t > 0) {
        out.extend([tile - 1, tile, tile + 1, tile + (tile / 2).max(1)]);
    }
    out.retain(|&e| e <= largest);
    out.sort_unstable();
    out.dedup();
    out
}

/// The cases of a validation: every extent with every pattern, scalars cycling through their
/// edges, at most `budget`, spread over the grid when it is larger.
pub fn generate(
    shape: &Shape,
    extents: &[u64],
    extra: &std::collections::BTreeMap<String, Vec<String>>,
    budget: usize,
    seed: u64,
) -> Vec<Case> {
    let has_views = shape.params.iter().any(|(_, f)| matches!(f, Fed::View { .. }));
    let has_extents = shape.params.iter().any(|(_, f)| matches!(f, Fed::Extent));
    let extents: Vec<u64> = if has_extents { extents.to_vec() } else { vec![0] };
    let patterns: Vec<Pattern> = if has_views { PATTERNS.to_vec() } else { vec![Pattern::Zeroed] };
    let scalars: Vec<(&str, Vec<String>)> = shape
        .params
        .iter()
        .filter_map(|(name, fed)| match fed {
            Fed::Scalar(s) => {
                // The type's edges, then the values the condition compares with.
                let mut edges = s.edges();
                for value in extra.get(name).into_iter().flatten() {
                    if !edges.contains(value) {
                        edges.push(value.clone());
                    }
                }
                Some((name.as_str(), edges))
            }
            _ => None,
        })
        .collect();
    // Enough rounds that every edge of every scalar is met at least once.
    let rounds = scalars.iter().map(|(_, e)| e.len()).max().unwrap_or(1).max(1);
    let mut grid: Vec<Case> = Vec::new();
    let mut counter = 0usize;
    for round in 0..rounds {
        for &extent in &extents {
            for &pattern in &patterns {
                let values = scalars
                    .iter()
                    .enumerate()
                    .map(|(k, (name, edges))| (name.to_string(), edges[(counter + k * round) % edges.len()].clone()))
                    .collect();
                grid.push(Case {
                    extent,
                    pattern,
                    seed: seed.wrapping_mul(6364136223846793005).wrapping_add(counter as u64),
                    scalars: values,
                    views: std::collections::BTreeMap::new(),
                    extents: std::collections::BTreeMap::new(),
                });
                counter += 1;
            }
        }
        if scalars.is_empty() {
            break;
        }
    }
    // With two extents or more, cases where they differ: each extent in turn one step below the
    // others (and at 0), so a function that confuses them meets a case that tells. At most a
    // quarter of the budget; the rest is the grid.
    let names = shape.extent_names();
    let mut apart: Vec<Case> = Vec::new();
    if names.len() >= 2 {
        let first = grid.first().cloned();
        for (step, pair) in extents.windows(2).enumerate() {
            let (below, at) = (pair[0], pair[1]);
            for (k, name) in names.iter().enumerate() {
                for other in [below, 0] {
                    let Some(mut case) = first.clone() else { continue };
                    case.extent = at;
                    case.pattern = PATTERNS[(step + k) % PATTERNS.len()];
                    case.seed = seed.wrapping_add((step * names.len() + k) as u64);
                    case.extents.insert(name.to_string(), other);
                    if !apart.contains(&case) {
                        apart.push(case);
                    }
                }
            }
        }
        // Spread over the extents when they are more than a quarter of the budget.
        let room = (budget / 4).max(1);
        if apart.len() > room {
            let len = apart.len();
            apart = (0..room).map(|i| apart[i * len / room].clone()).collect();
        }
    }
    let budget = budget.saturating_sub(apart.len()).max(1);
    let mut out = if grid.len() <= budget {
        grid
    } else {
        // Spread evenly over the grid: `budget` cases, the first one first.
        let len = grid.len();
        (0..budget).map(|i| grid[i * len / budget].clone()).collect()
    };
    out.extend(apart);
    out
}

/// Simpler neighbours of a failing case, simplest first: smaller extents, then each scalar at 0.
pub fn probes(case: &Case, extents: &[u64], shape: &Shape) -> Vec<Case> {
    let mut out = Vec::new();
    // A case with explicit views keeps its extents (its values are that long).
    if case.views.is_empty() {
        // Extents apart: first try them together, at the case's extent and at each of its own.
        if !case.extents.is_empty() {
            let together = Case { extents: std::collections::BTreeMap::new(), ..case.clone() };
            out.push(together.clone());
            for &own in case.extents.values() {
                out.push(Case { extent: own, ..together.clone() });
            }
        }
        for &extent in extents.iter().filter(|&&e| e < case.extent) {
            let extents = case.extents.iter().map(|(n, &v)| (n.clone(), v.min(extent))).collect();
            out.push(Case { extent, extents, ..case.clone() });
        }
    }
    for (name, fed) in &shape.params {
        if let Fed::Scalar(scalar) = fed {
            let zero = if matches!(scalar, Scalar::Float(_)) {
                "0.0"
            } else if *scalar == Scalar::Bool {
                "false"
            } else {
                "0"
            };
            if case.scalars.get(name).is_some_and(|v| v != zero) {
                let mut simpler = case.clone();
                simpler.scalars.insert(name.clone(), zero.to_string());
                out.push(simpler);
            }
        }
    }
    if case.pattern != Pattern::Zeroed && case.views.is_empty() {
        out.push(Case { pattern: Pattern::Zeroed, ..case.clone() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_surround_each_tile() {
        assert_eq!(extents(&[8], 64), vec![0, 1, 7, 8, 9, 12, 64]);
        assert_eq!(extents(&[], 16), vec![0, 1, 16]);
        // Past the domain's largest, a tile is left out.
        assert_eq!(extents(&[100], 64), vec![0, 1, 64]);
    }

    #[test]
    fn two_extents_are_also_tried_apart_within_the_budget() {
        let shape = Shape {
            params: vec![
                ("n".into(), Fed::Extent),
                ("m".into(), Fed::Extent),
                (
                    "xs".into(),
                    Fed::View {
                        elem: Scalar::Int(IntTy::U64),
                        rw: false,
                        extent: ViewExtent::Param(0),
                        place: Place::Host,
                    },
                ),
                (
                    "ys".into(),
                    Fed::View {
                        elem: Scalar::Int(IntTy::U64),
                        rw: false,
                        extent: ViewExtent::Param(1),
                        place: Place::Host,
                    },
                ),
            ],
            ret: None,
        };
        let cases = generate(&shape, &[0, 1, 8], &Default::default(), 24, 1);
        assert!(cases.len() <= 24);
        let apart: Vec<&Case> = cases.iter().filter(|c| !c.extents.is_empty()).collect();
        assert!(!apart.is_empty() && apart.len() <= 6, "{apart:?}");
        // Each apart case fits, and its views take their own extents.
        for case in &apart {
            assert!(shape.fits(case).is_ok());
            let (name, &value) = case.extents.iter().next().expect("one apart");
            let view = if name == "n" { ViewExtent::Param(0) } else { ViewExtent::Param(1) };
            assert_eq!(shape.length(case, view), value);
            assert!(value < case.extent);
        }
        // One extent alone: nothing apart.
        let one = Shape { params: shape.params[..1].to_vec(), ret: None };
        assert!(generate(&one, &[0, 1, 8], &Default::default(), 24, 1).iter().all(|c| c.extents.is_empty()));
    }

    #[test]
    fn the_budget_keeps_the_first_cases_of_each_extent_and_pattern_spread() {
        let shape = Shape {
            params: vec![
                ("n".into(), Fed::Extent),
                (
                    "xs".into(),
                    Fed::View {
                        elem: Scalar::Int(IntTy::U64),
                        rw: false,
                        extent: ViewExtent::Param(0),
                        place: Place::Host,
                    },
                ),
                ("k".into(), Fed::Scalar(Scalar::Int(IntTy::U8))),
            ],
            ret: Some(Scalar::Int(IntTy::U64)),
        };
        let none = std::collections::BTreeMap::new();
        let all = generate(&shape, &[0, 1, 8], &none, 10_000, 1);
        // 3 extents x 7 patterns, for each of the u8 edges (5 rounds).
        assert_eq!(all.len(), 3 * 7 * 5);
        let values: std::collections::BTreeSet<&str> = all.iter().map(|c| c.scalars["k"].as_str()).collect();
        assert_eq!(values.into_iter().collect::<Vec<_>>(), vec!["0", "1", "127", "2", "255"]);
        let some = generate(&shape, &[0, 1, 8], &none, 20, 1);
        assert_eq!(some.len(), 20);
        assert_eq!(generate(&shape, &[0, 1, 8], &none, 20, 1), some, "deterministic for a seed");
    }
}
