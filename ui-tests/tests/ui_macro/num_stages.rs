use tessera::tile_kernel;

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

fn main() {}
