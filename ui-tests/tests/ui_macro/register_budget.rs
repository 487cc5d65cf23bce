use tessera::tile_kernel;

#[tile_kernel(num_warps = 4, BLOCK_M = 256, BLOCK_N = 256)]
fn accumulate<const BLOCK_M: usize, const BLOCK_N: usize>(out: Ptr<f32>) {
    let acc = zeros::<f32>([BLOCK_M, BLOCK_N]);
    store(out + arange(0, BLOCK_M).expand_dims(1) * BLOCK_N + arange(0, BLOCK_N).expand_dims(0), acc);
}

fn main() {}
