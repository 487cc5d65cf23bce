//! Test data whose arithmetic is exact, and the comparison of float results with references.

/// `n` values that are multiples of 1/8 in `[-magnitude, magnitude)` (`magnitude` a positive
/// integer), spread by a multiplicative hash of the index and `seed`. Exact in f16 and bf16 for
/// `magnitude ≤ 32`, and so are short sums and products of them in f32.
pub fn eighths(seed: u32, n: usize, magnitude: u32) -> Vec<f32> {
    let levels = 16 * magnitude;
    (0..n)
        .map(|i| {
            let h = (i as u32 ^ seed.wrapping_mul(0x9e37_79b9)).wrapping_mul(2_654_435_761);
            ((h >> 20) % levels) as f32 / 8.0 - magnitude as f32
        })
        .collect()
}

/// Panics, naming `what` and the first wrong element, unless every `got[i]` equals `want[i]`
/// (NaN matching NaN) or lies within `tolerance · (1 + |want[i]|)` of it.
#[track_caller]
pub fn assert_close(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok =
            (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tolerance * (1.0 + w.abs());
        assert!(ok, "{what}: element {i} is {g}, want {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eighths_are_multiples_of_an_eighth_within_the_range() {
        for magnitude in [1, 4, 8] {
            let values = eighths(7, 1000, magnitude);
            assert!(values.iter().all(|&v| {
                (v * 8.0).fract() == 0.0 && v >= -(magnitude as f32) && v < magnitude as f32
            }));
            // Spread: most of the 16 · magnitude levels appear.
            let mut distinct: Vec<i32> = values.iter().map(|&v| (v * 8.0) as i32).collect();
            distinct.sort_unstable();
            distinct.dedup();
            assert!(
                distinct.len() * 4 >= 3 * 16 * magnitude as usize,
                "{magnitude}: {distinct:?}"
            );
        }
        assert_ne!(eighths(1, 64, 4), eighths(2, 64, 4));
    }

    #[test]
    fn assert_close_accepts_within_tolerance_and_nan_for_nan() {
        assert_close(
            &[1.0, f32::NAN, 100.5],
            &[1.0, f32::NAN, 100.0],
            0.01,
            "close",
        );
    }

    #[test]
    #[should_panic(expected = "element 1 is 2.5, want 2")]
    fn assert_close_names_the_first_wrong_element() {
        assert_close(&[1.0, 2.5], &[1.0, 2.0], 0.1, "far");
    }
}
