//! Runtime helpers of the code that `#[tile_kernel]` generates (and nothing else calls them
//! usefully by hand).
//!
//! * **Typed tiles.** A tile value of a kernel is one array of registers per thread,
//!   [`Tile<T, L, R>`]: `R` elements of type `T`, register `r` of the thread `(lane, warp)` holding
//!   the element at coordinate `L::LAYOUT(r, lane, warp)`. `L` is a marker type generated per
//!   layout, implementing [`Layout`]; [`assert_tile_layout`] checks it in `const` context, so an
//!   invalid layout fails to compile with the layout's own message, and a tile used where another
//!   layout is expected is a type error.
//! * **Element arithmetic** with the semantics the tile language documents: [`Elem`] (bits),
//!   [`Num`] (wrapping integer arithmetic, IEEE floats; `f16`/`bf16`/`f8` compute in `f32` and
//!   round back after every operation), [`Bits`], [`Cmp`], [`FloatMath`] and [`Transcendental`]
//!   (Triton's choices: `ex2.approx`, `sqrt.approx.ftz`, `rsqrt.approx`, `fma.rn`, and
//!   libdevice's `log`, `sin`, `cos` in [`libdevice`], the same bits on the GPU and the host).
//! * **Global memory**: [`load`] / [`store`] of a vector of `V` consecutive elements, any element
//!   width, as one predicated `ld/st.global` of 8, 16, 32, 64 or 128 bits (the 32-bit words of
//!   [`crate::device`], plus `u8`/`u16` accesses for sub-word vectors).
//! * **Reductions**: [`shfl_bfly`] of any element, [`argmax_combine`]/[`argmin_combine`].
//! * **Shared memory** slots of any element: [`st_shared_elem`]/[`ld_shared_elem`].
//! * **Host launching** (not on nvptx64): [`Specialisation`], [`Grid`], [`check_aligned`] and the
//!   launch/emulate functions that each kernel's generated module calls.
//!
//! Everything here has one signature and two bodies, as [`crate::device`]: inline PTX on
//! nvptx64, the emulator (or exact host code) elsewhere.

mod elements;
mod layout;
pub mod libdevice;
mod math;
mod memory;
mod reduce;

pub use elements::*;
pub use layout::*;
pub use math::*;
pub use memory::*;
pub use reduce::*;
pub use tessera_layout::{expect_layout, Label, LayoutError, LinearLayout};

#[cfg(not(tessera_device))]
mod host;
#[cfg(not(tessera_device))]
pub use host::*;

#[cfg(test)]
mod tests;
