//! Kernels several test modules run, as the source text of the function (each test gives its
//! own attribute); [`tokens`] makes the stream the macro receives.

use proc_macro2::TokenStream;

/// The token stream of a kernel source.
pub fn tokens(source: &str) -> TokenStream {
    source.parse().expect("kernel source tokenizes")
}

/// Softmax of one row: a masked load, two reductions, a store.
pub const SOFTMAX: &str =
    "fn softmax<const BLOCK: usize>(out: Ptr<f32>, inp: Ptr<f32>, row_stride: i32, n_cols: i32) {
        let row = program_id(0);
        let cols = arange(0, BLOCK);
        let mask = cols < n_cols;
        let x = load(inp + row * row_stride + cols, mask, f32::NEG_INFINITY);
        let shifted = x - x.max(0);
        let num = exp(shifted);
        let den = num.sum(0);
        store(out + row * row_stride + cols, num / den, mask);
    }";

/// A tiled matmul with every stride a parameter: a loop carrying the pointers and the
/// accumulator, and `dot`.
pub const MATMUL_STRIDED: &str =
    "fn matmul_strided<const BLOCK_M: usize, const BLOCK_N: usize, const BLOCK_K: usize>(
        a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f16>,
        m: i32, n: i32, k: i32,
        stride_am: i32, stride_ak: i32,
        stride_bk: i32, stride_bn: i32,
        stride_cm: i32, stride_cn: i32,
    ) {
        let rm = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
        let rn = program_id(1) * BLOCK_N + arange(0, BLOCK_N);
        let rk = arange(0, BLOCK_K);
        let mut a_ptrs = a + rm.expand_dims(1) * stride_am + rk.expand_dims(0) * stride_ak;
        let mut b_ptrs = b + rk.expand_dims(1) * stride_bk + rn.expand_dims(0) * stride_bn;
        let mut acc = zeros::<f32>([BLOCK_M, BLOCK_N]);
        for kk in 0..cdiv(k, BLOCK_K) {
            let k_left = k - kk * BLOCK_K;
            let a_tile = load(a_ptrs, rk.expand_dims(0) < k_left, 0.0);
            let b_tile = load(b_ptrs, rk.expand_dims(1) < k_left, 0.0);
            acc = dot(a_tile, b_tile, acc);
            a_ptrs += BLOCK_K * stride_ak;
            b_ptrs += BLOCK_K * stride_bk;
        }
        let c_ptrs = c + rm.expand_dims(1) * stride_cm + rn.expand_dims(0) * stride_cn;
        let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
        store(c_ptrs, acc.to::<f16>(), c_mask);
    }";

/// Layer norm of one row in `bf16` with `f32` weights: casts, `where_`, `fma`, `rsqrt`.
pub const LAYERNORM: &str = "fn layernorm<const BLOCK: usize>(
        out: Ptr<bf16>, inp: Ptr<bf16>, weight: Ptr<f32>, bias: Ptr<f32>,
        stride: i32, n: i32, eps: f32,
    ) {
        let row = program_id(0);
        let cols = arange(0, BLOCK);
        let mask = cols < n;
        let x = load(inp + row * stride + cols, mask, 0.0).to::<f32>();
        let mean = x.sum(0) / n as f32;
        let centered = where_(mask, x - mean, 0.0);
        let var = (centered * centered).sum(0) / n as f32;
        let y = centered * rsqrt(var + eps);
        let w = load(weight + cols, mask, 1.0);
        let b = load(bias + cols, mask, 0.0);
        store(out + row * stride + cols, fma(y, w, b) as bf16, mask);
    }";

/// A 2-D tile transposed through `trans`, masked on both axes.
pub const TRANSPOSE: &str =
    "fn transpose<const TILE: usize>(out: Ptr<f16>, inp: Ptr<f16>, rows: i32, cols: i32) {
        let r = program_id(0) * TILE + arange(0, TILE);
        let c = program_id(1) * TILE + arange(0, TILE);
        let mask = (r.expand_dims(1) < rows) & (c.expand_dims(0) < cols);
        let tile = load(inp + r.expand_dims(1) * cols + c.expand_dims(0), mask, 0.0);
        let t = tile.trans([1, 0]);
        store(out + c.expand_dims(1) * rows + r.expand_dims(0), t, mask.trans());
    }";

/// `gather` along axis 1 of a loaded tile.
pub const GATHER_ROWS: &str = "fn gather_rows<const ROWS: usize, const COLS: usize>(
        out: Ptr<f32>, src: Ptr<f32>, index: Ptr<i32>,
    ) {
        let r = arange(0, ROWS).expand_dims(1);
        let c = arange(0, COLS).expand_dims(0);
        let values = load(src + r * COLS + c);
        let idx = load(index + r * 32 + arange(0, 32).expand_dims(0));
        let picked = values.gather(idx, 1);
        store(out + r * 32 + arange(0, 32).expand_dims(0), picked);
    }";

/// Masked vector addition of two loaded tiles.
pub const VEC_ADD: &str =
    "fn vec_add<const BLOCK: usize>(a: Ptr<f32>, b: Ptr<f32>, out: Ptr<f32>, n: i32) {
        let offs = program_id(0) * BLOCK + arange(0, BLOCK);
        let mask = offs < n;
        let x = load(a + offs, mask, 0.0);
        let y = load(b + offs, mask, 0.0);
        store(out + offs, x + y, mask);
    }";

/// Masked vector addition.
pub const VECTOR_ADD: &str =
    "fn add<const BLOCK: usize>(x: Ptr<f32>, y: Ptr<f32>, out: Ptr<f32>, n: i32) {
            let offs = program_id(0) * BLOCK + arange(0, BLOCK);
            let mask = offs < n;
            let sum = load(x + offs, mask, 0.0) + load(y + offs, mask, 0.0);
            store(out + offs, sum, mask);
        }";

/// Every reduction along both axes of a 2-D tile, `argmax` and `argmin` included.
pub const ROW_STATS: &str = "fn row_stats<const BLOCK: usize>(inp: Ptr<f32>, out_max: Ptr<f32>, out_arg: Ptr<i32>, out_min: Ptr<f32>) {
            let tile = load(inp + arange(0, 8).expand_dims(1) * BLOCK + arange(0, BLOCK).expand_dims(0));
            store(out_max + arange(0, 8), tile.max(1));
            store(out_arg + arange(0, 8), tile.argmax(1));
            store(out_min + arange(0, BLOCK), tile.min(0) + tile.sum(0) - abs(tile).argmin(0) as f32);
        }";

/// `join`, `split`, `reshape`, `trans`, `broadcast_to`, `expand_dims` and math functions on
/// constant tiles.
pub const SHAPES: &str = "fn shapes(out: Ptr<f32>) {
            let a = full::<f32>([8, 16], 2.0);
            let b = zeros::<f32>([8, 16]);
            let j = join(a, b);
            let (lo, hi) = j.split();
            let r = (lo + hi).reshape([4, 32]).reshape([128]);
            let p = zeros::<f32>([2, 4, 8]).trans([2, 0, 1]);
            let q = arange(0, 16).broadcast_to([4, 16]).expand_dims(0);
            let s = exp2(log(sqrt(maximum(r, 1.0)))) + minimum(r, 0.5);
            store(out + arange(0, 128), s);
            store(out + arange(0, 64), p.reshape([64]));
            store(out + arange(0, 64), q.reshape([64]).to::<f32>());
        }";

/// Integer, bitwise and boolean operators.
pub const BITS: &str = "fn bits(out: Ptr<u32>, flags: Ptr<u8>, n: i32) {
            let i = arange(0, 64);
            let u = (i as u32) << 3u32 | 1 ^ (i as u32 >> 1) & 0xff;
            let odd = i % 2 == 1;
            let keep = !odd && (i >= 4 || i <= 2) && i != 3 && (i > 0) & (i < n);
            let v = where_(keep, u, !u);
            store(out + i, v, keep);
            store(flags + i, (-i).to::<u8>() / 3);
        }";

/// `if` on scalars: carried variables and an `if` expression.
pub const BRANCHES: &str = "fn branches(x: Ptr<f32>, n: i32, flag: bool) {
            let offs = arange(0, 64);
            let mut t = load(x + offs);
            let mut count = 0;
            if n > 4 && flag {
                t = t * 2.0;
                count += 1;
            } else if n < 0 {
                t = -t;
            }
            let scale = if num_programs(0) > 1 { 0.5 } else { 1.0 };
            store(x + offs, t * scale + count as f32);
        }";

/// Nested loops (one `step_by`) carrying a tile and a scalar through both.
pub const NESTED: &str = "fn nested(x: Ptr<f32>, n: i32, m: i32) {
            let mut acc = zeros::<f32>([32]);
            let mut steps = 0;
            for i in 0..n {
                for j in (0..m).step_by(2) {
                    acc += load(x + (i * m + j) + arange(0, 32));
                    steps += 1;
                }
                let unused = i;
            }
            for _ in 0..4 {
                acc = maximum(acc, 0.0);
            }
            store(x + arange(0, 32), acc / steps as f32);
        }";

/// Untyped literals taking the type of their use.
pub const LITERALS: &str = "fn lits(x: Ptr<f16>, y: Ptr<i64>) {
            let h = load(x + arange(0, 16)) * 2 + 0.5;
            let l = load(y + arange(0, 16)) + 3_000_000_000;
            let m = f16::MAX - h;
            store(x + arange(0, 16), m);
            store(y + arange(0, 16), l << 2);
        }";

/// `convert_layout` to a user-written layout.
pub const RELAYOUT: &str = "fn relayout(x: Ptr<f32>) {
            let t = load(x + arange(0, 128)).convert_layout(layouts::ROW_MAJOR);
            let u = convert_layout(t, WARP_PER_ROW);
            store(x + arange(0, 128), u);
        }";
