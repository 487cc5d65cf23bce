use tessera::tile_kernel;

// A correct kernel: it passes every check, and the macro says that code generation is not
// implemented yet (instead of silently emitting the function).
#[tile_kernel(num_warps = 4, BLOCK = [1024, 4096])]
fn softmax<const BLOCK: usize>(out: Ptr<f32>, inp: Ptr<f32>, row_stride: i32, n_cols: i32) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let mask = cols < n_cols;
    let x = load(inp + row * row_stride + cols, mask, f32::NEG_INFINITY);
    let num = exp(x - x.max(0));
    store(out + row * row_stride + cols, num / num.sum(0), mask);
}

fn main() {}
