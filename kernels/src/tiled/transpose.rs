//! 2-D transpose: `out[j, i] = x[i, j]` of an `m × n` f32 matrix (row-major, leading dimensions
//! `n` and `m`). Each program moves a `BM × BN` tile: the load wants the tile row-major across
//! the threads (vectorized along `n`), the store wants it row-major in the output (vectorized
//! along `m`), so layout inference puts one conversion between them, through shared memory with
//! the optimal swizzle, conflict-free on both sides.

use tessera::{f16, tile_kernel, Ptr};

/// `out = xᵀ` for `x: [m, n]`, tiles of `BM × BN`.
#[tile_kernel(num_warps = 4, BM = 32, BN = 32)]
pub fn tile_transpose<const BM: usize, const BN: usize>(
    x: Ptr<f32>,
    out: Ptr<f32>,
    m: i32,
    n: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let load_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    let tile = load(
        x + rm.expand_dims(1) * n + rn.expand_dims(0),
        load_mask,
        0.0,
    );
    let store_mask = (rn.expand_dims(1) < n) & (rm.expand_dims(0) < m);
    store(
        out + rn.expand_dims(1) * m + rm.expand_dims(0),
        tile.trans(),
        store_mask,
    );
}

/// One warp per `B × B` tile of `ELEM`s: load and store layouts then share their (single)
/// warp, and the conversion between them is planned as warp shuffles, without shared memory.
macro_rules! tile_transpose_one_warp {
    ($(#[doc = $doc:tt])* $name:ident: $elem:ident) => {
        $(#[doc = $doc])*
        #[tile_kernel(num_warps = 1, B = [8, 16, 32])]
        pub fn $name<const B: usize>(x: Ptr<$elem>, out: Ptr<$elem>, m: i32, n: i32) {
            let rm = program_id(0) * B + arange(0, B);
            let rn = program_id(1) * B + arange(0, B);
            let load_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
            let tile = load(
                x + rm.expand_dims(1) * n + rn.expand_dims(0),
                load_mask,
                0.0,
            );
            let store_mask = (rn.expand_dims(1) < n) & (rm.expand_dims(0) < m);
            store(
                out + rn.expand_dims(1) * m + rm.expand_dims(0),
                tile.trans(),
                store_mask,
            );
        }
    };
}

tile_transpose_one_warp! {
    /// One warp per `B × B` tile: load and store layouts then share their (single) warp, and the
    /// conversion between them is planned as warp shuffles, without shared memory.
    tile_transpose_warp: f32
}
tile_transpose_one_warp! {
    /// [`tile_transpose_warp`] on f16 elements (16-bit values travel in 32-bit shuffles).
    tile_transpose_warp_f16: f16
}
