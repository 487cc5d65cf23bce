// A shared-memory layout whose third offset bit lands on the element the first two already
// reach (1 xor 2 = 3): two offsets would hold the same element.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const SMEM: LinearLayout = expect_layout(LinearLayout::memory(
    &[(Offset, &[&[1], &[2], &[3]])],
    &[(Dim(0), 8)],
));

fn main() {
    let _ = SMEM;
}
