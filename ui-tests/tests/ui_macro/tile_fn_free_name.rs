// A helper sees only its arguments: `scale` is the kernel's, not the helper's.
use tessera::{tile_fn, tile_kernel};

#[tile_fn]
fn scaled(x: _) -> _ {
    x * scale
}

#[tile_kernel(BLOCK = 128, uses = [scaled])]
fn k<const BLOCK: usize>(x: Ptr<f32>, scale: f32) {
    let offs = arange(0, BLOCK);
    store(x + offs, scaled(load(x + offs)));
}

fn main() {}
