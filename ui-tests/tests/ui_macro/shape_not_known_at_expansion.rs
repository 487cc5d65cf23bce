use tessera::tile_kernel;

#[tile_kernel]
fn copy(out: Ptr<f32>, x: Ptr<f32>, n: i32) {
    let offs = arange(0, n);
    store(out + offs, load(x + offs));
}

fn main() {}
