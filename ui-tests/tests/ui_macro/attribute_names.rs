use tessera::tile_kernel;

#[tile_kernel(num_warp = 4)]
fn misspelt(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

#[tile_kernel(NUM_WARPS = 4)]
fn shouted(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

// One error, on the type: the uses of `BLOCK` are not reported as undeclared.
#[tile_kernel(BLOCK = [128])]
fn flagged<const BLOCK: bool>(out: Ptr<f32>) {
    store(out + arange(0, BLOCK), 1.0);
}

fn main() {}
