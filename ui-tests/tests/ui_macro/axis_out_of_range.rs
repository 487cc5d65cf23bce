use tessera::tile_kernel;

#[tile_kernel]
fn row_sum(out: Ptr<f32>, x: Ptr<f32>) {
    let row = load(x + arange(0, 128));
    let total = row.sum(1);
    store(out, total);
}

fn main() {}
