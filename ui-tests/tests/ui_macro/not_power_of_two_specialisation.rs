use tessera::tile_kernel;

// Each listed value is its own specialisation; the error names the one that fails.
#[tile_kernel(num_warps = 4, BLOCK = [128, 100, 256])]
fn scale<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(out + offs, load(x + offs, mask, 0.0) * 2.0, mask);
}

fn main() {}
