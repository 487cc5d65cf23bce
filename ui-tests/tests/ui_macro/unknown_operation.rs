use tessera::tile_kernel;

#[tile_kernel(BLOCK = 128)]
fn offsets<const BLOCK: usize>(x: Ptr<f32>) {
    let offs = arnage(0, BLOCK);
    let v = load(x + arange(0, BLOCK)).ln();
    store(x + arange(0, BLOCK), v);
}

fn main() {}
