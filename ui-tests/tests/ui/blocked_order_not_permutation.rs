// A blocked layout whose `order` names dimension 0 twice: not a permutation of the dimensions.
use tessera_layout::{expect_layout, families::blocked::blocked, LinearLayout};

const TILE: LinearLayout = expect_layout(blocked(&[1, 4], &[8, 4], &[4, 1], &[0, 0], &[32, 16]));

fn main() {
    let _ = TILE;
}
