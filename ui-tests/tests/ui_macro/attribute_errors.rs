use tessera::tile_kernel;

#[tile_kernel(num_warps = 3, BLCK = [128, 256])]
fn copy<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, BLOCK);
    store(out + offs, load(x + offs));
}

fn main() {}
