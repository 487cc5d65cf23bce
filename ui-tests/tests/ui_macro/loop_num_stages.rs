use tessera::tile_kernel;

#[tile_kernel]
fn zero_stages(x: Ptr<f32>, n: i32) {
    let mut acc = zeros::<f32>([16]);
    for i in (0..n).num_stages(0) {
        acc = acc + load(x + i * 16 + arange(0, 16));
    }
    store(x + arange(0, 16), acc);
}

#[tile_kernel]
fn stages_from_a_value(x: Ptr<f32>, n: i32) {
    let mut acc = zeros::<f32>([16]);
    for i in (0..n).step_by(2).num_stages(n) {
        acc = acc + load(x + i * 16 + arange(0, 16));
    }
    store(x + arange(0, 16), acc);
}

#[tile_kernel]
fn no_dot_to_pipeline(x: Ptr<f32>, n: i32) {
    let mut acc = zeros::<f32>([16]);
    for i in (0..n).num_stages(3) {
        acc = acc + load(x + i * 16 + arange(0, 16));
    }
    store(x + arange(0, 16), acc);
}

#[tile_kernel]
fn stages_of_the_bound(x: Ptr<f32>, n: i32) {
    let mut acc = zeros::<f32>([16]);
    for i in 0..n.num_stages(3) {
        acc = acc + load(x + i * 16 + arange(0, 16));
    }
    store(x + arange(0, 16), acc);
}

fn main() {}
