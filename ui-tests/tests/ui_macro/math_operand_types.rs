use tessera::tile_kernel;

#[tile_kernel]
fn high(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    let v = load(x + offs);
    store(out + offs, umulhi(v, v));
}

#[tile_kernel]
fn clamped(out: Ptr<f32>, x: Ptr<f32>, lo: i32) {
    let offs = arange(0, 128);
    let v = load(x + offs);
    store(out + offs, v.clamp(lo, 1.0));
}

#[tile_kernel]
fn wave(out: Ptr<i32>, x: Ptr<i32>) {
    let offs = arange(0, 128);
    store(out + offs, sin(load(x + offs)));
}

fn main() {}
