use tessera::tile_kernel;

#[tile_kernel(targets = [sm_90])]
fn not_a_target(x: Ptr<f32>) {
    store(x + arange(0, 32), zeros::<f32>([32]));
}

#[tile_kernel(targets = [sm_90a, sm_90a])]
fn listed_twice(x: Ptr<f32>) {
    store(x + arange(0, 32), zeros::<f32>([32]));
}

#[tile_kernel(targets = [])]
fn no_target(x: Ptr<f32>) {
    store(x + arange(0, 32), zeros::<f32>([32]));
}

fn main() {}
