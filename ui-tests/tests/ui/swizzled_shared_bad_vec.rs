// A swizzled shared layout whose vector width is 3 elements: not a power of two.
use tessera_layout::{expect_layout, families::SwizzledShared, LinearLayout};

const SMEM: LinearLayout =
    expect_layout(SwizzledShared::new(3, 1, 8, &[1, 0]).to_linear_layout(&[64, 64]));

fn main() {
    let _ = SMEM;
}
