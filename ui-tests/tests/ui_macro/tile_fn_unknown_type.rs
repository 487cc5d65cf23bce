// The types of a helper's parameters are checked by rustc: `Ptrr` is no type.
use tessera::{tile_fn, tile_kernel, Ptr};

#[tile_fn]
fn first(x: Ptrr<f32>) -> _ {
    load(x)
}

#[tile_kernel(uses = [first])]
fn k(x: Ptr<f32>, out: Ptr<f32>) {
    store(out, first(x));
}

fn main() {}
