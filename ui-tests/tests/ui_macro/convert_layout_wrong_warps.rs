use tessera::tile::{expect_layout, Label, LinearLayout};

// A valid layout of a [32, 64] tile, but for 2 warps: the kernel has 4.
const LAYOUT: LinearLayout = expect_layout(LinearLayout::distributed(
    &[
        (Label::Register, &[&[0, 1], &[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
        (Label::Lane, &[&[0, 2], &[0, 4], &[0, 8], &[0, 16], &[0, 32]]),
        (Label::Warp, &[&[16, 0]]),
    ],
    &[(Label::Dim(0), 32), (Label::Dim(1), 64)],
));

#[path = "support/copy_through_layout.rs"]
mod copy_through_layout;

fn main() {}
