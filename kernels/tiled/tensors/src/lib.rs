//! Kernels taking `Tensor<T, R>` parameters: the kernel reads each tensor's sizes and strides
//! (`x.size(0)`, `x.stride(1)`) and uses the tensor as its base pointer; the generated `launch`
//! takes inputs by `&` and outputs (the tensors stored to) by `&mut`, on a
//! `tessera::launch::Stream`. Strided views (slices, transposes) work without copies. The
//! library's kernels take tensors too: the matmuls (`tiled::matmul`), the norms and softmax
//! (`tiled::norm`), attention (`tiled::attention`).

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile_kernel;

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
