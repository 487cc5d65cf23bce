//! The kernel of the `convert_layout_*` cases: copies a [32, 64] tile of 4 warps through the
//! case's `LAYOUT`.

use super::LAYOUT;
use tessera::{tile_kernel, Ptr};

#[tile_kernel(num_warps = 4)]
pub fn copy(x: Ptr<f32>, out: Ptr<f32>) {
    let offs = arange(0, 32).expand_dims(1) * 64 + arange(0, 64).expand_dims(0);
    let tile = load(x + offs).convert_layout(LAYOUT);
    store(out + offs, tile);
}
