//! `ldmatrix` / `stmatrix` (PTX `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16` and its store
//! twin) as linear layouts.
//!
//! The instruction moves 1, 2 or 4 matrices of 8 rows × 16 bytes; each row is contiguous in
//! shared memory at an address given by one lane (lanes `8i..8i+7` address matrix `i`).
//! - [`ldmatrix_fragment`]: which element of the stacked matrices (`dim0` = row, matrix `i`
//!   at rows `8i…`, `dim1` = element within the 16-byte row) each `(register, lane)` receives.
//!   Without `.trans`, a 32-bit register of lane `t` holds row `t / 4`, elements
//!   `(t mod 4)·(32/bits) + j`; register bits above the 32-bit word select the matrix. With
//!   `.trans` (16-bit only), it holds rows `2·(t mod 4) + j`, element `t / 4`.
//! - [`ldmatrix_tile`]: the tile of Theorem 5.1 (Triton's lowering): the part of the
//!   hardware → offset map the instruction fixes, `id(32/bits, register, offset) × id(4, lane,
//!   offset)` — one 16-byte row per quad of lanes. A conversion `cvt: register × lane × warp →
//!   offset` lowers to `ldmatrix` (after a register permutation) iff `cvt.divide_left(tile)`
//!   exists. For `.trans` Triton does not divide: it requires lane bases 2, 3, 4 of `cvt` to be
//!   offsets 1, 2, 4 and no other basis to touch those three bits ([`LDMATRIX_TRANS_LANE_OFFSETS`]).

use super::params::check_one_of;
use super::shape::with_pow2_bases;
use crate::{Label, LayoutError, LinearLayout};

const FAMILY: &str = "ldmatrix";

/// For `.trans` (16-bit elements): lane bits 2, 3, 4 must reach offsets 1, 2, 4 (the 8 elements
/// of one 16-byte row), the other bits being free rows.
pub const LDMATRIX_TRANS_LANE_OFFSETS: [(u32, u32); 3] = [(2, 1), (3, 2), (4, 4)];

const fn check(num_matrices: u32, transposed: bool, element_bits: u32) -> Result<(), LayoutError> {
    tri!(check_one_of(
        FAMILY,
        "num_matrices",
        None,
        num_matrices,
        &[1, 2, 4],
        "but ldmatrix moves 1, 2 or 4 matrices (.x1, .x2, .x4)"
    ));
    let (widths, reason): (&[u32], _) = if transposed {
        (&[16], "but ldmatrix.trans transposes 16-bit elements only")
    } else {
        (
            &[8, 16, 32],
            "but ldmatrix moves 8-, 16- or 32-bit elements in 32-bit registers",
        )
    };
    check_one_of(FAMILY, "element_bits", None, element_bits, widths, reason)
}

/// The fragment of `ldmatrix.x{num_matrices}[.trans]` for elements of `element_bits`:
/// `(register, lane) → (row, element)` of the `8·num_matrices × (128/bits)` stack of matrices.
pub const fn ldmatrix_fragment(
    num_matrices: u32,
    transposed: bool,
    element_bits: u32,
) -> Result<LinearLayout, LayoutError> {
    tri!(check(num_matrices, transposed, element_bits));
    let per_word = 32 / element_bits; // elements per 32-bit register
    let row_elements = 128 / element_bits;
    let mut layout = tri!(LinearLayout::empty().with_out_dim(Label::Dim(0), 8 * num_matrices));
    layout = tri!(layout.with_out_dim(Label::Dim(1), row_elements));
    layout = tri!(layout.with_in_dim(Label::Register));
    layout = tri!(layout.with_in_dim(Label::Lane));
    if !transposed {
        layout = tri!(with_pow2_bases(layout, Label::Register, per_word, [0, 1]));
        layout = tri!(with_pow2_bases(
            layout,
            Label::Register,
            num_matrices,
            [8, 0]
        ));
        layout = tri!(with_pow2_bases(layout, Label::Lane, 4, [0, per_word]));
        layout = tri!(with_pow2_bases(layout, Label::Lane, 8, [1, 0]));
    } else {
        layout = tri!(layout.with_basis(Label::Register, &[1, 0]));
        layout = tri!(with_pow2_bases(
            layout,
            Label::Register,
            num_matrices,
            [8, 0]
        ));
        layout = tri!(with_pow2_bases(layout, Label::Lane, 4, [2, 0]));
        layout = tri!(with_pow2_bases(layout, Label::Lane, 8, [0, 1]));
    }
    Ok(layout)
}

/// `stmatrix` stores exactly the fragment `ldmatrix` loads.
pub const fn stmatrix_fragment(
    num_matrices: u32,
    transposed: bool,
    element_bits: u32,
) -> Result<LinearLayout, LayoutError> {
    ldmatrix_fragment(num_matrices, transposed, element_bits)
}

/// The Theorem 5.1 tile of (non-transposed) `ldmatrix`/`stmatrix` for `element_bits`:
/// `id(32/bits, register, offset) × id(4, lane, offset)`.
pub const fn ldmatrix_tile(element_bits: u32) -> Result<LinearLayout, LayoutError> {
    tri!(check(1, false, element_bits));
    let regs = tri!(LinearLayout::identity_1d(
        32 / element_bits,
        Label::Register,
        Label::Offset
    ));
    let lanes = tri!(LinearLayout::identity_1d(4, Label::Lane, Label::Offset));
    regs.product(&lanes)
}
