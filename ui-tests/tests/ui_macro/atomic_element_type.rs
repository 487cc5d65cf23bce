use tessera::tile_kernel;

// f32 has no `atom.max` on global memory.
#[tile_kernel]
fn float_max(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    atomic_max(out + offs, load(x + offs));
}

// Bit operations are for integers.
#[tile_kernel]
fn float_or(out: Ptr<f32>) {
    atomic_or(out + arange(0, 128), 1.0);
}

// No atomics on bool or i8.
#[tile_kernel]
fn byte_add(out: Ptr<i8>) {
    atomic_add(out, 1);
}

fn main() {}
