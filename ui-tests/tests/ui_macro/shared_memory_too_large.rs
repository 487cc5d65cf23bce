use tessera::tile_kernel;

// Transposing a 256 × 256 f32 tile goes through 256 KiB of shared memory, more than any target
// gives a block.
#[tile_kernel(num_warps = 32)]
fn transpose_too_large(x: Ptr<f32>, y: Ptr<f32>) {
    let r = arange(0, 256);
    let t = load(x + r.expand_dims(1) * 256 + r.expand_dims(0));
    store(y + r.expand_dims(1) * 256 + r.expand_dims(0), t.trans());
}

fn main() {}
