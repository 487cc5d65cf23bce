use tessera::tile::{expect_layout, Label, LinearLayout};
use tessera::{tile_kernel, Ptr};

// A valid layout of a [32, 64] tile, but for 2 warps: the kernel has 4.
const TWO_WARPS: LinearLayout = expect_layout(LinearLayout::distributed(
    &[
        (Label::Register, &[&[0, 1], &[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
        (Label::Lane, &[&[0, 2], &[0, 4], &[0, 8], &[0, 16], &[0, 32]]),
        (Label::Warp, &[&[16, 0]]),
    ],
    &[(Label::Dim(0), 32), (Label::Dim(1), 64)],
));

#[tile_kernel(num_warps = 4)]
fn copy(x: Ptr<f32>, out: Ptr<f32>) {
    let offs = arange(0, 32).expand_dims(1) * 64 + arange(0, 64).expand_dims(0);
    let tile = load(x + offs).convert_layout(TWO_WARPS);
    store(out + offs, tile);
}

fn main() {}
