// 33 register bits: more than the 32 bases one input dimension can hold.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const ZERO: &[u32] = &[0];

const TILE: LinearLayout = expect_layout(LinearLayout::from_bases(
    &[(Register, &[ZERO; 33])],
    &[(Dim(0), 1)],
));

fn main() {
    let _ = TILE;
}
