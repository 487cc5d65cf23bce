// A helper the kernel calls without listing it in `uses`.
use tessera::{tile_fn, tile_kernel};

#[tile_fn]
fn twice(x: _) -> _ {
    x + x
}

#[tile_kernel(BLOCK = 128)]
fn k<const BLOCK: usize>(x: Ptr<f32>) {
    let offs = arange(0, BLOCK);
    store(x + offs, twice(load(x + offs)));
}

fn main() {}
