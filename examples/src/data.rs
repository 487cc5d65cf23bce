//! Deterministic test data: a splitmix64 stream, filled in parallel for the large benchmark
//! inputs (element `i` depends only on the seed and `i`, so the result does not depend on the
//! number of threads).

/// splitmix64 of `state` (one step: the golden-ratio increment, then the finalizer).
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Uniform f32 in [-1, 1) for element `index` of stream `seed` (24 random bits, so exact).
pub fn uniform(seed: u64, index: u64) -> f32 {
    let bits = splitmix64(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ index) >> 40;
    bits as f32 / (1u64 << 23) as f32 - 1.0
}

/// `len` values `uniform(seed, 0..len)`, generated on all cores.
pub fn uniform_vec(seed: u64, len: usize) -> Vec<f32> {
    parallel_vec(len, |i| uniform(seed, i as u64))
}

/// Uniform integer in `0..n` (`n > 0`) for element `index` of stream `seed`.
pub fn uniform_below(seed: u64, index: u64, n: u32) -> u32 {
    let bits = splitmix64(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ index) >> 32;
    ((bits * n as u64) >> 32) as u32
}

/// Index of the first element where `got` differs bit for bit from `want(i)`, compared on all
/// cores; `None` when all are equal.
pub fn first_mismatch(got: &[f32], want: impl Fn(usize) -> f32 + Sync) -> Option<usize> {
    let chunk = got.len().div_ceil(threads()).max(1 << 16);
    let want = &want;
    std::thread::scope(|scope| {
        let handles: Vec<_> = got
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                scope.spawn(move || {
                    part.iter().enumerate().find_map(|(k, value)| {
                        let i = c * chunk + k;
                        (value.to_bits() != want(i).to_bits()).then_some(i)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .min()
    })
}

/// A float storage format of the kernels' data (f32, f16, bf16): rounding from f32 and the
/// exact value back.
pub trait Float: tessera::launch::DeviceElement + Default {
    /// `x` rounded to nearest even.
    fn narrow(x: f32) -> Self;
    /// The exact value.
    fn wide(self) -> f32;
}

impl Float for f32 {
    fn narrow(x: f32) -> Self {
        x
    }
    fn wide(self) -> f32 {
        self
    }
}

impl Float for tessera::f16 {
    fn narrow(x: f32) -> Self {
        tessera::f16::from_f32(x)
    }
    fn wide(self) -> f32 {
        self.to_f32()
    }
}

impl Float for tessera::bf16 {
    fn narrow(x: f32) -> Self {
        tessera::bf16::from_f32(x)
    }
    fn wide(self) -> f32 {
        self.to_f32()
    }
}

/// Row `r` of the row-major matrix `x` of `n` columns, as f64.
pub fn row_f64<T: Float>(x: &[T], r: usize, n: usize) -> Vec<f64> {
    x[r * n..(r + 1) * n]
        .iter()
        .map(|v| f64::from(v.wide()))
        .collect()
}

/// `scale · uniform(seed, i)` rounded to `T`.
pub fn float_vec<T: Float>(seed: u64, len: usize, scale: f32) -> Vec<T> {
    parallel_vec(len, |i| T::narrow(scale * uniform(seed, i as u64)))
}

/// Host threads for the data helpers: every core, at most 32.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(32)
}

/// `(0..len).map(f)`, computed on all cores.
pub fn parallel_vec<T: Send + Copy + Default>(len: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut out = vec![T::default(); len];
    let chunk = len.div_ceil(threads()).max(1 << 16);
    let f = &f;
    std::thread::scope(|scope| {
        for (c, part) in out.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                for (k, value) in part.iter_mut().enumerate() {
                    *value = f(c * chunk + k);
                }
            });
        }
    });
    out
}

/// Indices in `0..n` spread evenly: all of them when `n <= count`, else `count` of them
/// including the first and the last.
pub fn spread(n: usize, count: usize) -> Vec<usize> {
    if n <= count {
        return (0..n).collect();
    }
    let last = (n - 1) as f64;
    let mut picks: Vec<usize> = (0..count)
        .map(|k| (k as f64 * last / (count - 1).max(1) as f64).round() as usize)
        .collect();
    picks.dedup();
    picks
}

/// The first failure of a comparison: which item and what differed.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub item: usize,
    pub detail: String,
}

/// The outcome of comparing `items` items (rows, elements, …) with a reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Items compared.
    pub items: usize,
    /// Largest |error| / tolerance seen (0 for exact comparisons that passed).
    pub worst: f64,
    /// The failing item of lowest index, if any.
    pub failure: Option<Mismatch>,
}

/// LayerNorm's statistics of a row in f64: the mean and `1 / sqrt(var + eps)` (biased
/// variance).
pub fn layernorm_stats(row: &[f64], eps: f32) -> (f64, f64) {
    let n = row.len() as f64;
    let mean = row.iter().sum::<f64>() / n;
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, 1.0 / (var + eps as f64).sqrt())
}

/// `|got − want| / tol`, or the failure when it exceeds 1 (or is NaN).
pub fn within(got: f64, want: f64, tol: f64, at: &str) -> Result<f64, String> {
    let ratio = (got - want).abs() / tol;
    if ratio <= 1.0 {
        Ok(ratio)
    } else {
        Err(format!(
            "{at}: got {got:e}, want {want:e} (tolerance {tol:.1e})"
        ))
    }
}

/// Runs `check(k)` for `k` in `0..items` on all cores; each returns its largest |error| /
/// tolerance, or what failed.
pub fn check_items(items: usize, check: impl Fn(usize) -> Result<f64, String> + Sync) -> Verdict {
    let workers = threads().min(items.max(1));
    let chunk = items.div_ceil(workers).max(1);
    let check = &check;
    let parts: Vec<(f64, Option<Mismatch>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    let mut worst = 0f64;
                    for k in w * chunk..((w + 1) * chunk).min(items) {
                        match check(k) {
                            Ok(ratio) => worst = worst.max(ratio),
                            Err(detail) => return (worst, Some(Mismatch { item: k, detail })),
                        }
                    }
                    (worst, None)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    let detail = "the comparison thread panicked".to_string();
                    (f64::NAN, Some(Mismatch { item: 0, detail }))
                })
            })
            .collect()
    });
    Verdict {
        items,
        worst: parts.iter().map(|p| p.0).fold(0.0, f64::max),
        failure: parts.into_iter().find_map(|p| p.1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_is_deterministic_in_range_and_thread_independent() {
        let big = uniform_vec(7, 300_000);
        assert!(big.iter().all(|&x| (-1.0..1.0).contains(&x)));
        assert_eq!(big[123_456], uniform(7, 123_456));
        assert_ne!(uniform(7, 1), uniform(8, 1));
        let mean = big.iter().map(|&x| x as f64).sum::<f64>() / big.len() as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
    }

    #[test]
    fn first_mismatch_finds_the_lowest_index() {
        let mut values = uniform_vec(1, 200_000);
        assert_eq!(first_mismatch(&values, |i| uniform(1, i as u64)), None);
        values[150_000] = 2.0;
        values[70_001] = -0.0;
        assert_eq!(
            first_mismatch(&values, |i| uniform(1, i as u64)),
            Some(70_001)
        );
    }

    #[test]
    fn spread_and_uniform_below() {
        assert_eq!(spread(3, 8), vec![0, 1, 2]);
        assert_eq!(spread(100, 5), vec![0, 25, 50, 74, 99]);
        assert_eq!(spread(10, 1), vec![0]);
        let picks: Vec<u32> = (0..10_000).map(|i| uniform_below(3, i, 7)).collect();
        assert!(picks.iter().all(|&p| p < 7));
        for v in 0..7 {
            let count = picks.iter().filter(|&&p| p == v).count();
            assert!((1200..1700).contains(&count), "{v}: {count}");
        }
    }

    #[test]
    fn check_items_reports_the_worst_ratio_and_the_first_failure() {
        let ok = check_items(1000, |k| Ok(k as f64 / 1000.0));
        assert_eq!((ok.items, ok.worst, ok.failure), (1000, 0.999, None));
        let bad = check_items(300_000, |k| {
            if k == 123_457 || k == 250_000 {
                Err(format!("item {k}"))
            } else {
                Ok(0.5)
            }
        });
        let failure = bad.failure.unwrap();
        assert_eq!(
            (failure.item, failure.detail.as_str()),
            (123_457, "item 123457")
        );
        assert!(check_items(0, |_| Err(String::new())).failure.is_none());
    }
}
