//! `family` declarations (language §28): `family strided = stride[1..5];` makes the copies
//! `strided_1` … `strided_4`, each the instance of a one-natural template at one natural of the
//! half-open range.
//!
//! [`family_def`] judges one declaration (its template, its range) from its own syntax and the
//! scope; [`families`] lists the program's in declaration order with the program-wide limit;
//! [`family_copy`] is how the checker resolves a copy's name. A copy is the template's instance,
//! so `strided_4(5)` and `stride[4](5)` are one compiled function.

use std::sync::Arc;

use cairn_syntax::ast::{self, AstNode};

use crate::db::Db;
use crate::diag::{Anchor, Diag};
use crate::input::{Item, ItemKind, Program};
use crate::scope::{Lookup, Resolver};

/// The widest range one family may have.
pub const FAMILY_WIDTH: u64 = 1024;
/// The most copies all families of a program may make.
pub const FAMILY_COPIES: u64 = 2048;

/// One family, as judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyDef {
    pub name: Arc<str>,
    /// The template, when the path names a one-natural function template.
    pub template: Option<Item>,
    pub lo: u64,
    pub hi: u64,
    /// The declaration's first refusal.
    pub error: Option<Diag>,
}

impl FamilyDef {
    /// The naturals the copies are made at (empty for a refused family).
    pub fn naturals(&self) -> std::ops::Range<u64> {
        if self.error.is_some() || self.template.is_none() { 0..0 } else { self.lo..self.hi }
    }
}

#[salsa::tracked(returns(ref))]
pub fn family_def(db: &dyn Db, item: Item) -> FamilyDef {
    let node = item.syntax(db).syntax_node();
    let family = ast::Family::cast(node);
    let name: Arc<str> = Arc::from(family.as_ref().and_then(|f| f.name()).map(|n| n.text()).unwrap_or_default());
    let mut def = FamilyDef { name: name.clone(), template: None, lo: 0, hi: 0, error: None };
    let Some(family) = family else { return def };
    let bounds: Vec<Option<u64>> = family.bounds().map(|t| t.text().replace('_', "").parse::<u64>().ok()).collect();
    let (lo, hi) = match bounds[..] {
        [Some(lo), Some(hi)] => (lo, hi),
        // The parser refused anything but two integer literals (`E-STATIC`); an overlong one
        // is past every limit.
        _ => (0, u64::MAX),
    };
    def.lo = lo;
    def.hi = hi;
    let scope = Resolver::new(db);
    let module = scope.module_of(item);
    let path: Vec<Arc<str>> =
        family.template().map(|p| p.segments().map(|s| Arc::from(s.text())).collect()).unwrap_or_default();
    let written = path.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(".");
    let template = match scope.resolve_path(&module, &path, |k| k == ItemKind::Fn) {
        Lookup::Found(decl) => Some(decl.item),
        Lookup::None => None,
    };
    let one_natural = template.is_some_and(|t| {
        let generics = crate::generics::fn_generics(db, t);
        generics.len() == 1 && generics[0].is_nat()
    });
    if !one_natural {
        def.error = Some(Diag::new(
            "E-FAMILY-TARGET",
            format!(
                "A family instantiates a function template with exactly one natural parameter (`fn {written}[K:nat](...)`), and {written} is not one."
            ),
            Anchor::Item,
        ));
        return def;
    }
    // A family over another module's template needs the template `pub` (§23.1).
    if let Some(t) = template
        && !scope.visible_from(t, &module)
    {
        let owner = scope.module_of(t);
        def.error = Some(
            Diag::new(
                "E-PRIVATE",
                format!("{written} is private to module {owner}, and a family over another module's template needs it `pub`."),
                Anchor::Item,
            )
            .with_hint(format!("Declare it `pub fn` in {owner}, or make the family in {owner}.")),
        );
        return def;
    }
    if template.is_some_and(|t| crate::implementations::is_implementation(db, t)) {
        def.error = Some(Diag::new(
            "E-IMPL-PARAM",
            format!(
                "{written} is an implementation: its instances are the values its `tune` list names, never a family's."
            ),
            Anchor::Item,
        ));
        return def;
    }
    def.template = template;
    if lo >= hi || hi - lo > FAMILY_WIDTH || hi > 1u64 << 32 {
        def.error = Some(Diag::new(
            "E-FAMILY-LIMIT",
            format!(
                "The family range {lo}..{hi} must be non-empty, at most {FAMILY_WIDTH} wide, and end at most at 2^32."
            ),
            Anchor::Item,
        ));
        return def;
    }
    // A copy's name must not clash with a declaration of the family's module.
    for k in lo..hi {
        let copy: Arc<str> = Arc::from(format!("{name}_{k}"));
        let full: Arc<str> = if module.is_empty() { copy.clone() } else { Arc::from(format!("{module}.{copy}")) };
        if scope.declared(&full).iter().any(|d| d.kind.declares_name()) {
            def.error = Some(Diag::new(
                "E-DUPLICATE",
                format!("The family {name} makes {copy}, which is already declared in this module: rename one."),
                Anchor::Item,
            ));
            return def;
        }
    }
    def
}

/// The program's families in declaration order, and the first past the program's limit on
/// copies (`E-EXPANSION-LIMIT`), if any.
pub fn families(db: &dyn Db) -> Vec<(Item, &FamilyDef)> {
    Program::get(db)
        .items(db)
        .iter()
        .filter(|e| e.key.kind == ItemKind::Family)
        .map(|e| (e.item, family_def(db, e.item)))
        .collect()
}

/// The refusal of the program's families: the first family's own, else the limit on all copies.
pub fn families_refusal(db: &dyn Db) -> Option<(Item, Diag)> {
    let mut copies = 0u64;
    for (item, def) in families(db) {
        if let Some(diag) = &def.error {
            return Some((item, diag.clone()));
        }
        copies += def.hi - def.lo;
        if copies > FAMILY_COPIES {
            let diag = Diag::new(
                "E-EXPANSION-LIMIT",
                format!(
                    "The program's families make {copies} copies; all families together may make at most {FAMILY_COPIES}."
                ),
                Anchor::Item,
            );
            return Some((item, diag));
        }
    }
    None
}

/// The template and natural a family copy's name means where `module` writes it
/// (`strided_4` → `stride`, 4), if it names one.
pub fn family_copy(db: &dyn Db, module: &str, name: &str) -> Option<(Item, u64)> {
    family_copy_at(db, module, &[], name)
}

/// [`family_copy`] for a copy named through a module path (`geo.step_2`: `prefix` is `geo`).
pub fn family_copy_at(db: &dyn Db, module: &str, prefix: &[Arc<str>], name: &str) -> Option<(Item, u64)> {
    let (def, k) = family_named(db, module, prefix, name)?;
    def.naturals().contains(&k).then_some((def.template?, k))
}

/// The visible family and the natural a name of the form `family_K` spells, whether or not the
/// family makes that copy (a name past its range is an unknown callable, whose hint says so).
pub fn family_named<'db>(
    db: &'db dyn Db,
    module: &str,
    prefix: &[Arc<str>],
    name: &str,
) -> Option<(&'db FamilyDef, u64)> {
    let (family, k) = name.rsplit_once('_')?;
    let k_value: u64 = k.parse().ok()?;
    if k_value.to_string() != k {
        return None;
    }
    let scope = Resolver::new(db);
    let mut path: Vec<Arc<str>> = prefix.to_vec();
    path.push(Arc::from(family));
    let Lookup::Found(decl) = scope.resolve_path(module, &path, |kind| kind == ItemKind::Family) else {
        return None;
    };
    // A family of another module is named only when it is `pub`.
    if !scope.visible_from(decl.item, module) {
        return None;
    }
    Some((family_def(db, decl.item), k_value))
}

/// True when a `family` declaration of the program names `template` (language §28).
pub(crate) fn in_family(db: &dyn Db, template: Item) -> bool {
    families(db).iter().any(|(_, f)| f.template == Some(template))
}
