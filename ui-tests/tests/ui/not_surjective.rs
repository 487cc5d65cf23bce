// Two lanes cover only column 0 of a 2x2 tile: column 1 belongs to no thread.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const TILE: LinearLayout = expect_layout(LinearLayout::distributed(
    &[(Register, &[&[0, 0]]), (Lane, &[&[1, 0]])],
    &[(Dim(0), 2), (Dim(1), 2)],
));

fn main() {
    let _ = TILE;
}
