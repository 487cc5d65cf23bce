use tessera::{tile_kernel, Ptr};

#[tile_kernel(T = [f16, f32])]
fn double<T>(x: Ptr<T>, n: i32) {
    let offs = arange(0, 128);
    let mask = offs < n;
    store(x + offs, load(x + offs, mask, 0.0) * 2.0, mask);
}

fn main() {
    // `f64` is not listed for `T`: a compile error naming the parameter and the listed types.
    let x: Ptr<f64> = Ptr::from_addr(0);
    let _ = double::emulate(1u32, x, 0);
}
