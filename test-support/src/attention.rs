//! Softmax attention in f64, the reference the attention tests and benchmarks check against.

/// One query row of softmax attention: for query row `i`, the keys `0..keys` (`keys = i + 1`
/// for causal attention) and head dimension `d`, with `at(x, row, col)` reading element
/// `(row, col)` of tensor `x` (0: `q`, 1: `k`, 2: `v`) of the head as f64. Scores are scaled by
/// `1 / √d`. Gives per output column `c` the exact output `Σⱼ pⱼ vⱼ,c / l` and the bound
/// `Σⱼ pⱼ |vⱼ,c| / l` of its probability-rounding error (`pⱼ = e^(sⱼ - max s)`, `l = Σⱼ pⱼ`).
pub fn attention_row(
    at: impl Fn(usize, usize, usize) -> f64,
    i: usize,
    keys: usize,
    d: usize,
) -> Vec<(f64, f64)> {
    let (q, k, v) = (0, 1, 2);
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = (0..keys)
        .map(|j| (0..d).map(|c| at(q, i, c) * at(k, j, c)).sum::<f64>() * scale)
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let p: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let l: f64 = p.iter().sum();
    (0..d)
        .map(|c| {
            let want = (0..keys).map(|j| p[j] * at(v, j, c)).sum::<f64>() / l;
            let spread = (0..keys).map(|j| p[j] * at(v, j, c).abs()).sum::<f64>() / l;
            (want, spread)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::attention_row;

    /// One key: the output is that key's value row, whatever the scores.
    #[test]
    fn one_key_gives_its_value() {
        let at = |x: usize, row: usize, col: usize| (x * 10 + row * 3 + col) as f64 - 4.0;
        let row = attention_row(at, 0, 1, 3);
        let values: Vec<f64> = (0..3).map(|c| at(2, 0, c)).collect();
        for (c, (want, spread)) in row.into_iter().enumerate() {
            assert_eq!(want, values[c]);
            assert_eq!(spread, values[c].abs());
        }
    }

    /// Equal scores: the output is the mean of the value rows.
    #[test]
    fn equal_scores_average_the_values() {
        let at = |x: usize, row: usize, col: usize| match x {
            2 => (row * 2 + col) as f64,
            _ => 1.0,
        };
        let row = attention_row(at, 2, 3, 2);
        assert!((row[0].0 - 2.0).abs() < 1e-12, "{row:?}");
        assert!((row[1].0 - 3.0).abs() < 1e-12, "{row:?}");
    }
}
