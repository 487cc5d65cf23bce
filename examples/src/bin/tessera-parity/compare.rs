//! Comparing two outputs word by word: bit for bit, NaN-class for f32 arithmetic against a CPU
//! reference, or within a per-element bound for tensor-core float sums.

use std::fmt::Write as _;
use std::rc::Rc;

/// How two outputs (32-bit words) must agree.
#[derive(Clone)]
pub enum Compare {
    /// Every word bit for bit.
    Exact,
    /// Words are f32: bit for bit, except that any NaN matches any NaN (sign and payload free).
    /// For comparisons with a CPU reference whose NaN encodings are the host's (x86 keeps
    /// payloads), not the GPU's (the canonical `0x7fffffff`, which the emulator models).
    NanClass,
    /// Words are f32: `|got - want| <= bound[i]` where `bound[i]` is `Some`, bit for bit where
    /// it is `None` (words the kernel must not write, canaries). Both NaN or both the same
    /// infinity count as equal.
    Within(Rc<Vec<Option<f64>>>),
}

impl Compare {
    /// A short name for the report line.
    pub fn name(&self) -> &'static str {
        match self {
            Compare::Exact => "bit-exact",
            Compare::NanClass => "exact, NaN~NaN",
            Compare::Within(_) => "tolerance",
        }
    }
}

/// The outcome of comparing `got` with `want`.
#[derive(Debug, Default)]
pub struct Diff {
    /// Words compared.
    pub words: usize,
    /// Words that fail the comparison.
    pub failing: usize,
    /// Words that differ in any bit (whether or not that fails the comparison).
    pub not_identical: usize,
    /// Index of the first failing word.
    pub first_failing: Option<usize>,
    /// Largest distance in units in the last place (as f32) over pairs of non-NaN words that
    /// differ; for f32 outputs.
    pub max_ulp: u64,
    /// Pairs where exactly one word is a NaN, or both are NaNs with different bits.
    pub nan_differences: usize,
    /// `Within`: the largest `|got - want| / bound` (≤ 1 passes).
    pub max_bound_ratio: f64,
    /// The lengths differ (a failure by itself).
    pub length_mismatch: Option<(usize, usize)>,
}

impl Diff {
    pub fn ok(&self) -> bool {
        self.failing == 0 && self.length_mismatch.is_none()
    }
}

/// Distance in f32 units in the last place between two non-NaN bit patterns (`+0` and `-0` are
/// 0 apart; the infinities are one past the largest finite values).
pub fn ulp_distance(a: u32, b: u32) -> u64 {
    let ordered = |w: u32| -> i64 {
        if w >> 31 == 0 {
            w as i64
        } else {
            -((w & 0x7fff_ffff) as i64)
        }
    };
    (ordered(a) - ordered(b)).unsigned_abs()
}

fn is_nan(w: u32) -> bool {
    w & 0x7fff_ffff > 0x7f80_0000
}

/// Compares `got` with `want` under `compare`.
pub fn compare(got: &[u32], want: &[u32], compare: &Compare) -> Diff {
    let mut diff = Diff {
        words: got.len().min(want.len()),
        ..Diff::default()
    };
    if got.len() != want.len() {
        diff.length_mismatch = Some((got.len(), want.len()));
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g != w {
            diff.not_identical += 1;
            match (is_nan(g), is_nan(w)) {
                (false, false) => diff.max_ulp = diff.max_ulp.max(ulp_distance(g, w)),
                _ => diff.nan_differences += 1,
            }
        }
        let pass = match compare {
            Compare::Exact => g == w,
            Compare::NanClass => g == w || (is_nan(g) && is_nan(w)),
            Compare::Within(bounds) => match bounds.get(i).copied().flatten() {
                None => g == w,
                Some(bound) => {
                    let (x, y) = (f32::from_bits(g) as f64, f32::from_bits(w) as f64);
                    if g == w || (x.is_nan() && y.is_nan()) {
                        true
                    } else if x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() {
                        false
                    } else {
                        let error = (x - y).abs();
                        let ratio = if error == 0.0 {
                            0.0
                        } else if bound > 0.0 {
                            error / bound
                        } else {
                            f64::INFINITY
                        };
                        diff.max_bound_ratio = diff.max_bound_ratio.max(ratio);
                        error <= bound
                    }
                }
            },
        };
        if !pass {
            diff.failing += 1;
            diff.first_failing.get_or_insert(i);
        }
    }
    diff
}

/// The "max difference" text of a report line: for f32 outputs the largest ulp distance (and
/// NaN differences), for others the number of differing words.
pub fn summary(diff: &Diff, f32_words: bool, compare: &Compare) -> String {
    let mut text = String::new();
    if let Some((got, want)) = diff.length_mismatch {
        let _ = write!(text, "length {got} vs {want}; ");
    }
    if f32_words {
        let _ = write!(text, "max ulp {}", diff.max_ulp);
        if diff.nan_differences > 0 {
            let _ = write!(text, ", {} NaN encodings differ", diff.nan_differences);
        }
        if let Compare::Within(_) = compare {
            let _ = write!(
                text,
                ", max |Δ|/bound {:.3}, {} of {} words bit-identical",
                diff.max_bound_ratio,
                diff.words - diff.not_identical,
                diff.words
            );
        } else {
            let _ = write!(
                text,
                ", {} of {} words differ",
                diff.not_identical, diff.words
            );
        }
    } else {
        let _ = write!(
            text,
            "{} of {} words differ",
            diff.not_identical, diff.words
        );
    }
    if diff.failing > 0 && diff.failing != diff.not_identical {
        let _ = write!(text, " ({} fail)", diff.failing);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulp_distance_crosses_zero_and_reaches_infinity() {
        assert_eq!(ulp_distance(0x3f80_0000, 0x3f80_0001), 1);
        assert_eq!(ulp_distance(0x8000_0000, 0), 0);
        assert_eq!(ulp_distance(0x8000_0001, 0x0000_0001), 2);
        assert_eq!(ulp_distance(0x7f7f_ffff, 0x7f80_0000), 1);
    }

    #[test]
    fn comparisons() {
        let nan_a = 0x7fff_ffff;
        let nan_b = 0xffc0_0000;
        let exact = compare(&[1, nan_a], &[1, nan_b], &Compare::Exact);
        assert!(!exact.ok());
        assert_eq!((exact.failing, exact.nan_differences), (1, 1));
        assert!(compare(&[1, nan_a], &[1, nan_b], &Compare::NanClass).ok());
        assert!(!compare(&[1, nan_a], &[1, 2], &Compare::NanClass).ok());
        let one = 1.0f32.to_bits();
        let near = f32::from_bits(one + 3).to_bits();
        let bounds = Rc::new(vec![Some(1e-6), None]);
        let within = compare(&[near, 5], &[one, 5], &Compare::Within(bounds.clone()));
        assert!(within.ok());
        assert_eq!(within.max_ulp, 3);
        assert!(within.max_bound_ratio > 0.3 && within.max_bound_ratio < 0.4);
        // A word without a bound must be identical.
        assert!(!compare(&[one, 6], &[one, 5], &Compare::Within(bounds.clone())).ok());
        // Beyond the bound.
        let far = f32::from_bits(one + 100).to_bits();
        assert!(!compare(&[far, 5], &[one, 5], &Compare::Within(bounds)).ok());
        assert!(!compare(&[1], &[1, 2], &Compare::Exact).ok());
    }
}
