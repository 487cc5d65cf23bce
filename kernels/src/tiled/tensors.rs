//! Kernels taking `Tensor<T, R>` parameters: the kernel reads each tensor's sizes and strides
//! (`x.size(0)`, `x.stride(1)`) and uses the tensor as its base pointer; the generated `launch`
//! takes inputs by `&` and outputs (the tensors stored to) by `&mut`, on a
//! `tessera::launch::Stream`. Strided views (slices, transposes) work without copies.

use super::matmul::dot_over_k;
use tessera::{f16, tile_kernel};

/// `out[i] = a[i] + b[i]`, `BLOCK` elements per program (any strides).
#[tile_kernel(
    num_warps = 4,
    BLOCK = [1024],
    requires = [a.size(0) == out.size(0), b.size(0) == out.size(0)]
)]
pub fn tensor_vec_add<const BLOCK: usize>(
    a: Tensor<f32, 1>,
    b: Tensor<f32, 1>,
    out: Tensor<f32, 1>,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    let x = load(a + offs * a.stride(0), mask, 0.0);
    let y = load(b + offs * b.stride(0), mask, 0.0);
    store(out + offs * out.stride(0), x + y, mask);
}

/// `x[i] += 1`, `BLOCK` elements per program: the trivial kernel of the launch benchmark
/// (`triton_ref.py`'s `add_one_kernel`).
#[tile_kernel(num_warps = 4, BLOCK = [1024])]
pub fn tensor_add_one<const BLOCK: usize>(x: Tensor<f32, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < x.size(0);
    let at = x + offs * x.stride(0);
    store(at, load(at, mask, 0.0) + 1.0, mask);
}

/// Row softmax of `inp` into `out` (both `[rows, cols]`), one program per row.
#[tile_kernel(
    num_warps = 4,
    BLOCK = [256, 1024],
    requires = [
        inp.size(1) <= BLOCK,
        out.size(0) == inp.size(0),
        out.size(1) == inp.size(1),
    ]
)]
pub fn tensor_softmax<const BLOCK: usize>(out: Tensor<f32, 2>, inp: Tensor<f32, 2>) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let mask = cols < inp.size(1);
    let x = load(
        inp + row * inp.stride(0) + cols * inp.stride(1),
        mask,
        f32::NEG_INFINITY,
    );
    let num = exp(x - x.max(0));
    store(
        out.ptr() + row * out.stride(0) + cols * out.stride(1),
        num / num.sum(0),
        mask,
    );
}

/// `c = a · b` (f16 in, f32 accumulation, f16 out) for `a: [m, k]`, `b: [k, n]`, `c: [m, n]`
/// of any strides (a transposed view of `b` is `b` column-major).
#[tile_kernel(
    num_warps = 4,
    BM = 64,
    BN = 64,
    BK = 32,
    requires = [
        b.size(0) == a.size(1),
        c.size(0) == a.size(0),
        c.size(1) == b.size(1),
    ],
    uses = [dot_over_k]
)]
pub fn tensor_matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<f16, 2>,
    b: Tensor<f16, 2>,
    c: Tensor<f16, 2>,
) {
    let m = a.size(0);
    let k = a.size(1);
    let n = b.size(1);
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let rk = arange(0, BK);
    let a_ptrs = a + rm.expand_dims(1) * a.stride(0) + rk.expand_dims(0) * a.stride(1);
    let b_ptrs = b + rk.expand_dims(1) * b.stride(0) + rn.expand_dims(0) * b.stride(1);
    let (a_step, b_step) = (BK * a.stride(1), BK * b.stride(0));
    let acc = zeros::<f32>([BM, BN]);
    let acc = dot_over_k::<BK>(
        a_ptrs, b_ptrs, a_step, b_step, rm, rn, rk, m, n, k, acc, 0.0,
    );
    let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    store(
        c + rm.expand_dims(1) * c.stride(0) + rn.expand_dims(0) * c.stride(1),
        acc.to::<f16>(),
        c_mask,
    );
}
