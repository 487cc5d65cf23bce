//! A kernel with more parameters than tuples implement `KernelArgs` for (12), some named like
//! the generated launcher's own arguments and locals (`device`, `module`, `consts`, `grid`,
//! `args`, `spec`, `specialisation`): its module's `Args` is a struct and its launcher still
//! takes every parameter by name.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{tile_kernel, Ptr};

/// `out[i] = device·a[i + a_off] + module·b[i + b_off] + consts·c[i + c_off] + grid·d[i] + args
/// + spec − specialisation` for `i < n`, `BLOCK` elements per program (16 parameters).
#[tile_kernel(num_warps = 4, BLOCK = [256])]
pub fn tile_weighted_sum16<const BLOCK: usize>(
    out: Ptr<f32>,
    a: Ptr<f32>,
    b: Ptr<f32>,
    c: Ptr<f32>,
    d: Ptr<f32>,
    device: f32,
    module: f32,
    consts: f32,
    grid: f32,
    args: f32,
    spec: i32,
    specialisation: i32,
    n: i32,
    a_off: i32,
    b_off: i32,
    c_off: i32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + a_off + offs, mask, 0.0) * device
        + load(b + b_off + offs, mask, 0.0) * module
        + load(c + c_off + offs, mask, 0.0) * consts
        + load(d + offs, mask, 0.0) * grid;
    store(out + offs, x + args + (spec - specialisation) as f32, mask);
}
