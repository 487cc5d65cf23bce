// `uses` names a function that is not a #[tile_fn] helper.
use tessera::tile_kernel;

fn twice(x: f32) -> f32 {
    x + x
}

#[tile_kernel(BLOCK = 128, uses = [twice])]
fn k<const BLOCK: usize>(x: Ptr<f32>) {
    let offs = arange(0, BLOCK);
    store(x + offs, twice(load(x + offs)));
}

fn main() {}
