use tessera::tile_kernel;

#[tile_kernel]
fn launch(out: Ptr<f32>) {
    store(out + arange(0, 128), zeros::<f32>([128]));
}

#[tile_kernel]
fn tessera(out: Ptr<f32>) {
    store(out + arange(0, 128), zeros::<f32>([128]));
}

fn main() {}
