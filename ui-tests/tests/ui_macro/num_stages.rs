use tessera::{f16, tile_kernel};

#[tile_kernel(num_stages = 0)]
fn zero_stages(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

#[tile_kernel(num_stages = STAGES)]
fn named_stages(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

#[tile_kernel(num_stages = [1, 3, 3])]
fn stages_twice(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

#[tile_kernel(num_stages = 3)]
fn nothing_to_pipeline(out: Ptr<f32>) {
    store(out + arange(0, 128), 1.0);
}

// Rings of 4 × (128 × 128 + 128 × 256) f16: 384 KiB, past what a block may use.
#[tile_kernel(num_warps = 8, num_stages = 4)]
fn rings_too_large(a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>, k: i32) {
    let rm = arange(0, 128);
    let rn = arange(0, 256);
    let rk = arange(0, 128);
    let mut acc = zeros::<f32>([128, 256]);
    for kk in 0..k / 128 {
        let a_tile = load(a + rm.expand_dims(1) * k + (kk * 128 + rk).expand_dims(0));
        let b_tile = load(b + (kk * 128 + rk).expand_dims(1) * 256 + rn.expand_dims(0));
        acc = dot(a_tile, b_tile, acc);
    }
    store(c + rm.expand_dims(1) * 256 + rn.expand_dims(0), acc);
}

fn main() {}
