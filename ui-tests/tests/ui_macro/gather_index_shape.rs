use tessera::tile_kernel;

#[tile_kernel]
fn pick(out: Ptr<f32>, src: Ptr<f32>, index: Ptr<i32>) {
    let table = load(src + arange(0, 32).expand_dims(1) * 64 + arange(0, 64).expand_dims(0));
    let idx = load(index + arange(0, 16).expand_dims(1) * 8 + arange(0, 8).expand_dims(0));
    let picked = gather(table, idx, 1);
    store(out + arange(0, 16).expand_dims(1) * 8 + arange(0, 8).expand_dims(0), picked);
}

fn main() {}
