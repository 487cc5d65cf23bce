//! An explicit `convert_layout` to a user-written `const` layout: the tile is moved into
//! [`WARP_ROWS`] (each warp owns 8 whole rows, each lane two adjacent columns of each of them)
//! and stored from there. The layout is an ordinary `const` [`LinearLayout`]: rustc evaluates
//! it and checks it against the tile in `const` context (an invalid one fails to compile with
//! the layout's own message); the conversions into and out of it run through shared memory.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile::{expect_layout, Label, LinearLayout};
use tessera::tile_kernel;
use tessera_kernels_blocks::tensor_block;

/// A `[32, 64]` tile over 4 warps: register bit 0 → column 1, bits 1–3 → rows 1, 2, 4; lanes →
/// columns 2…32; warps → rows 8, 16.
pub const WARP_ROWS: LinearLayout = expect_layout(LinearLayout::distributed(
    &[
        (Label::Register, &[&[0, 1], &[1, 0], &[2, 0], &[4, 0]]),
        (
            Label::Lane,
            &[&[0, 2], &[0, 4], &[0, 8], &[0, 16], &[0, 32]],
        ),
        (Label::Warp, &[&[8, 0], &[16, 0]]),
    ],
    &[(Label::Dim(0), 32), (Label::Dim(1), 64)],
));

/// `out = x` for `x, out: [m, n]` (any strides), through [`WARP_ROWS`], tiles of 32 × 64.
#[tile_kernel(
    num_warps = 4,
    requires = [out.size(0) == x.size(0) && out.size(1) == x.size(1)],
    uses = [tensor_block]
)]
pub fn tile_copy_via_layout(x: Tensor<f32, 2>, out: Tensor<f32, 2>) {
    let rm = program_id(0) * 32 + arange(0, 32);
    let rn = program_id(1) * 64 + arange(0, 64);
    let (src, mask) = tensor_block(x, rm, rn);
    let tile = load(src, mask, 0.0);
    let by_rows = tile.convert_layout(WARP_ROWS);
    let (dst, _) = tensor_block(out, rm, rn);
    store(dst, by_rows, mask);
}
