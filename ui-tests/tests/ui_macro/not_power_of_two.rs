use tessera::tile_kernel;

#[tile_kernel(BLOCK = 128)]
fn fill<const BLOCK: usize>(out: Ptr<f32>) {
    let offs = arange(0, 100);
    let tile = full([BLOCK, 3], 1.0);
    let wide = zeros::<f32>([BLOCK * 3]);
    store(out + offs, 0.0);
}

fn main() {}
