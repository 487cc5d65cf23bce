use tessera::tile_kernel;

#[tile_kernel]
fn running_sum(out: Ptr<f32>, x: Ptr<f32>, n: i32) {
    let offs = arange(0, 128);
    let mut acc = zeros::<f32>([128]);
    for i in 0..n {
        let chunk = load(x + i * 128 + offs);
        acc = (acc + chunk).to::<f16>();
    }
    store(out + offs, acc);
}

fn main() {}
