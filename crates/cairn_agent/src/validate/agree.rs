//! Agreement between two runs of one case (tools.md §3.14; the numerical policy
//! `cairn.agreement/1`, protocol.md §6.3): both trap, or both return and print the same values —
//! integers and booleans bit-equal, floats equal as numbers within the policy's tolerance
//! (`|a − b| ≤ absolute + relative·|b|`, with `b` the reference's; two NaNs agree, a NaN and a
//! number do not; with no tolerance the bits must match, so `-0.0` and `0.0` differ).

use serde::Serialize;

use super::Tolerance;
use super::cases::Scalar;

/// How one run of a case ended.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcome {
    /// `returned` or `trapped`.
    pub ended: &'static str,
    /// What it printed, one value a line (floats as their bits).
    pub stdout: Vec<String>,
    /// A trap's message (the guard that failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trap: Option<String>,
    /// The run's wall time in nanoseconds, process included (what `cairn tune` measures with).
    #[serde(skip)]
    pub elapsed_ns: u64,
}

impl Outcome {
    pub fn new(success: bool, stdout: Vec<String>, stderr: &str) -> Outcome {
        if success {
            return Outcome { ended: "returned", stdout, trap: None, elapsed_ns: 0 };
        }
        let trap = stderr.lines().find(|l| !l.trim().is_empty()).map(str::to_string);
        Outcome { ended: "trapped", stdout, trap, elapsed_ns: 0 }
    }

    /// Whether the run trapped (any ending but `returned`).
    pub fn trapped(&self) -> bool {
        self.ended != "returned"
    }
}

/// Whether two outcomes agree; `printed` gives the type of each printed value.
pub fn agrees(printed: &[Scalar], reference: &Outcome, other: &Outcome, tolerance: &Tolerance) -> bool {
    if reference.trapped() || other.trapped() {
        return reference.trapped() && other.trapped();
    }
    if reference.stdout.len() != other.stdout.len() {
        return false;
    }
    reference.stdout.iter().zip(&other.stdout).enumerate().all(|(i, (a, b))| match printed.get(i) {
        Some(Scalar::Float(float)) => {
            let (Some(a), Some(b)) = (bits_value(*float, a), bits_value(*float, b)) else { return a == b };
            close(b, a, tolerance)
        }
        _ => a == b,
    })
}

fn bits_value(float: cairn_hir::types::FloatTy, line: &str) -> Option<f64> {
    let bits: u64 = line.trim().parse().ok()?;
    Some(match float {
        cairn_hir::types::FloatTy::F64 => f64::from_bits(bits),
        cairn_hir::types::FloatTy::F32 => f64::from(f32::from_bits(bits as u32)),
    })
}

/// `candidate` within the tolerance of `reference`.
fn close(candidate: f64, reference: f64, tolerance: &Tolerance) -> bool {
    if reference.is_nan() || candidate.is_nan() {
        return reference.is_nan() && candidate.is_nan();
    }
    if tolerance.absolute == 0.0 && tolerance.relative == 0.0 {
        return candidate.to_bits() == reference.to_bits();
    }
    if reference.is_infinite() || candidate.is_infinite() {
        return reference == candidate;
    }
    (candidate - reference).abs() <= tolerance.absolute + tolerance.relative * reference.abs()
}

/// The numerical policy a validation compared under.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Statement {
    pub protocol: &'static str,
    pub tolerance: Tolerance,
    pub statement: String,
}

impl Statement {
    pub fn of(tolerance: &Tolerance) -> Statement {
        Statement {
            protocol: "cairn.agreement/1",
            tolerance: *tolerance,
            statement: "Both trap, or both return the same values: integers and booleans bit-equal; floats bit-equal without a tolerance, else |implementation - reference| <= absolute + relative * |reference| (NaN agrees only with NaN).".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_hir::types::{FloatTy, IntTy};

    fn returned(values: &[&str]) -> Outcome {
        Outcome::new(true, values.iter().map(|s| s.to_string()).collect(), "")
    }

    #[test]
    fn traps_agree_only_with_traps() {
        let trap = Outcome::new(false, Vec::new(), "bounds guard failed at a.cairn:3:5\n");
        assert_eq!(trap.trap.as_deref(), Some("bounds guard failed at a.cairn:3:5"));
        let none = Tolerance::default();
        assert!(agrees(&[], &trap, &trap.clone(), &none));
        assert!(!agrees(&[Scalar::Int(IntTy::U64)], &trap, &returned(&["1"]), &none));
        assert!(!agrees(&[Scalar::Int(IntTy::U64)], &returned(&["1"]), &trap, &none));
    }

    #[test]
    fn floats_agree_within_the_tolerance_only() {
        let f = [Scalar::Float(FloatTy::F64)];
        let bits = |x: f64| x.to_bits().to_string();
        let one = returned(&[&bits(1.0)]);
        let near = returned(&[&bits(1.0 + 1e-12)]);
        assert!(!agrees(&f, &one, &near, &Tolerance::default()), "exact without a tolerance");
        assert!(agrees(&f, &one, &near, &Tolerance { absolute: 1e-9, relative: 0.0 }));
        assert!(agrees(&f, &one, &near, &Tolerance { absolute: 0.0, relative: 1e-9 }));
        assert!(!agrees(&f, &returned(&[&bits(0.0)]), &returned(&[&bits(-0.0)]), &Tolerance::default()));
        let nan = returned(&[&bits(f64::NAN)]);
        assert!(agrees(&f, &nan, &nan.clone(), &Tolerance::default()));
        assert!(!agrees(&f, &nan, &one, &Tolerance { absolute: 1.0, relative: 1.0 }));
        // Integers are never compared with a tolerance.
        let i = [Scalar::Int(IntTy::U64)];
        assert!(!agrees(&i, &returned(&["1"]), &returned(&["2"]), &Tolerance { absolute: 5.0, relative: 1.0 }));
    }
}
