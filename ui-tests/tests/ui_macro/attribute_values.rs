use tessera::tile_kernel;

// A name without its value: the error is on the name, not on the whole attribute.
#[tile_kernel(num_warps = 4, BLOCK)]
fn missing_value<const BLOCK: usize>(out: Ptr<f32>) {
    store(out + arange(0, BLOCK), 1.0);
}

// A list where a value belongs.
#[tile_kernel(num_warps(4))]
fn listed(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

// The attribute ends after `=`: the error is on the `=`.
#[tile_kernel(num_warps =)]
fn cut_short(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

fn main() {}
