use tessera::tile_kernel;

#[tile_kernel(BLOCK = 64, requires = [n_cols <= BLOK])]
fn unknown_name<const BLOCK: usize>(x: Ptr<f32>, n_cols: i32) {
    let offs = arange(0, BLOCK);
    store(x + offs, zeros::<f32>([BLOCK]), offs < n_cols);
}

#[tile_kernel(BLOCK = 64, requires = [scale + 1.0 > 0.0, x.size(2) == BLOCK])]
fn not_integers<const BLOCK: usize>(x: Tensor<f32, 2>, scale: f32) {
    let offs = arange(0, BLOCK);
    store(x + offs, zeros::<f32>([BLOCK]) + scale);
}

#[tile_kernel(BLOCK = 64, requires = [n_cols + 1])]
fn not_a_condition<const BLOCK: usize>(x: Ptr<f32>, n_cols: i32) {
    let offs = arange(0, BLOCK);
    store(x + offs, zeros::<f32>([BLOCK]), offs < n_cols);
}

fn main() {}
