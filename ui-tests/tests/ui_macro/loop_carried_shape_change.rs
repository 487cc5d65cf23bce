use tessera::tile_kernel;

#[tile_kernel]
fn running_sum(out: Ptr<f32>, x: Ptr<f32>, n: i32) {
    let offs = arange(0, 128);
    let mut acc = zeros::<f32>([128]);
    for i in 0..n {
        acc = acc.expand_dims(0) + load(x + i * 128 + offs);
    }
    store(out + offs, acc);
}

fn main() {}
