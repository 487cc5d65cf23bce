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
    let mut out = vec![0f32; len];
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(32);
    let chunk = len.div_ceil(threads).max(1 << 16);
    std::thread::scope(|scope| {
        for (c, part) in out.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                let start = (c * chunk) as u64;
                for (k, value) in part.iter_mut().enumerate() {
                    *value = uniform(seed, start + k as u64);
                }
            });
        }
    });
    out
}

/// Index of the first element where `got` differs bit for bit from `want(i)`, compared on all
/// cores; `None` when all are equal.
pub fn first_mismatch(got: &[f32], want: impl Fn(usize) -> f32 + Sync) -> Option<usize> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(32);
    let chunk = got.len().div_ceil(threads).max(1 << 16);
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
}
