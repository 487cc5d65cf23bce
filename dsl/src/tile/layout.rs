//! Tile types and their layouts: the [`Layout`] marker trait, [`Tile`], building and checking
//! layouts in `const` context, and evaluating a layout's bases in device code.

use core::marker::PhantomData;
use tessera_layout::{expect_layout, ErrorMessage, Label, LayoutError, LinearLayout};

/// A layout known to rustc: implemented by the marker type that `#[tile_kernel]` generates for
/// every layout of a kernel (and usable for user-written layouts).
pub trait Layout: 'static {
    /// The distributed layout: inputs `register`, `lane`, `warp`; outputs `dim0`, `dim1`, ….
    const LAYOUT: LinearLayout;
}

/// A tile of one thread: `R` registers of `T` in layout `L` (see the [module docs](crate::tile)).
#[repr(transparent)]
pub struct Tile<T, L, const R: usize> {
    regs: [T; R],
    layout: PhantomData<L>,
}

impl<T: Copy, L, const R: usize> Clone for Tile<T, L, R> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Copy, L, const R: usize> Copy for Tile<T, L, R> {}

impl<T: Copy, L: Layout, const R: usize> Tile<T, L, R> {
    /// The tile whose register `r` is `regs[r]`.
    #[inline(always)]
    pub const fn from_regs(regs: [T; R]) -> Self {
        Tile {
            regs,
            layout: PhantomData,
        }
    }

    /// The registers. Generated code reads every operand through this function, named with the
    /// operand's expected type, so a tile of another layout does not type-check.
    #[inline(always)]
    pub const fn regs(self) -> [T; R] {
        self.regs
    }
}

/// Builds a layout from its bases: `register`, `lane` and `warp` bases (each a coordinate per
/// tile dimension) onto a tile of `shape` (`dim0` = `shape[0]`, …). An error of the layout
/// algebra is a compile error with its message when evaluated in `const` context.
pub const fn layout(
    register: &[&[u32]],
    lane: &[&[u32]],
    warp: &[&[u32]],
    shape: &[u32],
) -> LinearLayout {
    let mut l = LinearLayout::empty();
    let mut d = 0;
    while d < shape.len() {
        l = expect_layout(l.with_out_dim(Label::Dim(d as u8), shape[d]));
        d += 1;
    }
    l = with_bases(l, Label::Register, register);
    l = with_bases(l, Label::Lane, lane);
    with_bases(l, Label::Warp, warp)
}

const fn with_bases(l: LinearLayout, label: Label, bases: &[&[u32]]) -> LinearLayout {
    let mut l = expect_layout(l.with_in_dim(label));
    let mut k = 0;
    while k < bases.len() {
        l = expect_layout(l.with_basis(label, bases[k]));
        k += 1;
    }
    l
}

const fn fail(what: &'static str) -> ! {
    LayoutError::Incompatible { what }.panic()
}

/// Checks in `const` context that `L::LAYOUT` is a layout of a tile of `shape` held in `R`
/// registers by `num_warps` warps: inputs exactly `register` (size `R`), `lane` (32) and `warp`
/// (`num_warps`), in that order; outputs `dim0 … dim{rank-1}` of the shape's sizes; surjective.
/// Panics (a compile error in a `const` item) with a message naming what is wrong.
pub const fn assert_tile_layout<L: Layout, const R: usize>(shape: &[u32], num_warps: u32) {
    check_layout(&L::LAYOUT, shape, num_warps, R as u32);
}

/// [`assert_tile_layout`] for a user-written layout given to `convert_layout` (any register
/// count). The generated code puts this check on the user's path, so the error points there.
pub const fn assert_user_layout(layout: &LinearLayout, shape: &[u32], num_warps: u32) {
    let (sizes, rank) = layout.out_sizes();
    let mut same_shape = rank == shape.len();
    let mut d = 0;
    while same_shape && d < rank {
        same_shape = sizes[d] == shape[d];
        d += 1;
    }
    let warps = layout.in_size(Label::Warp);
    if !same_shape || warps != num_warps {
        let m = ErrorMessage::new()
            .push_str("convert_layout: the layout is for a tile of shape ")
            .push_shape(sizes.split_at(rank).0)
            .push_str(" over ")
            .push_u32(warps)
            .push_str(" warps, but the value is a tile of shape ")
            .push_shape(shape)
            .push_str(" over ")
            .push_u32(num_warps)
            .push_str(" warps (the kernel's num_warps)");
        panic!("{}", m.as_str());
    }
    check_layout(layout, shape, num_warps, layout.in_size(Label::Register));
}

const fn check_layout(l: &LinearLayout, shape: &[u32], num_warps: u32, registers: u32) {
    if l.num_in_dims() != 3
        || !l.in_label(0).same(Label::Register)
        || !l.in_label(1).same(Label::Lane)
        || !l.in_label(2).same(Label::Warp)
    {
        fail("a tile layout must have exactly the input dimensions register, lane, warp, in that order");
    }
    if l.in_size(Label::Register) != registers {
        fail("the tile's register count differs from the layout's register dimension");
    }
    if l.in_size(Label::Lane) != 32 {
        fail("a tile layout's lane dimension must have size 32 (a warp)");
    }
    if l.in_size(Label::Warp) != num_warps {
        fail("the layout's warp dimension differs from the kernel's num_warps");
    }
    if l.num_out_dims() != shape.len() {
        fail("the layout's number of output dimensions differs from the tile's rank");
    }
    let mut d = 0;
    while d < shape.len() {
        if !l.out_label(d).same(Label::Dim(d as u8)) {
            fail("a tile layout's output dimensions must be dim0, dim1, ... in order");
        }
        if l.out_size(Label::Dim(d as u8)) != shape[d] {
            fail("the layout's output sizes differ from the tile's shape");
        }
        d += 1;
    }
    match l.check_surjective() {
        Ok(()) => {}
        Err(e) => e.panic(),
    }
}

/// Registers a tile may have per thread (128 32-bit registers of 8-bit elements: 512; the
/// front end's budget keeps every tile within it).
pub const MAX_TILE_REGISTERS: usize = 512;

/// Calls `$m!(k)` for every register index `k < MAX_TILE_REGISTERS` (constant expressions).
macro_rules! for_each_register {
    ($m:ident) => {
        for_each_register!(@sixteen $m, 0 16 32 48 64 80 96 112 128 144 160 176 192 208 224 240
            256 272 288 304 320 336 352 368 384 400 416 432 448 464 480 496);
    };
    (@sixteen $m:ident, $($base:literal)*) => {
        $(
            $m!({ $base + 0 }); $m!({ $base + 1 }); $m!({ $base + 2 }); $m!({ $base + 3 });
            $m!({ $base + 4 }); $m!({ $base + 5 }); $m!({ $base + 6 }); $m!({ $base + 7 });
            $m!({ $base + 8 }); $m!({ $base + 9 }); $m!({ $base + 10 }); $m!({ $base + 11 });
            $m!({ $base + 12 }); $m!({ $base + 13 }); $m!({ $base + 14 }); $m!({ $base + 15 });
        )*
    };
}
pub(super) use for_each_register;

/// The packed bases of a tile layout's `register`, `lane` and `warp` dimensions (32 slots each,
/// unused ones zero) and their numbers of bits, for evaluating the layout in device code.
pub const fn basis_table(l: &LinearLayout) -> ([[u64; 32]; 3], [u32; 3]) {
    let mut table = [[0u64; 32]; 3];
    let mut bits = [0u32; 3];
    let labels = [Label::Register, Label::Lane, Label::Warp];
    let mut d = 0;
    while d < 3 {
        if let Some(i) = l.in_index(labels[d]) {
            bits[d] = l.in_bits_at(i);
            let mut k = 0;
            while k < bits[d] as usize && k < 32 {
                table[d][k] = l.packed_basis(i, k);
                k += 1;
            }
        }
        d += 1;
    }
    (table, bits)
}

/// `⊕ bases[k]` over the set bits `k < bits` of `x`.
#[inline(always)]
pub(super) fn xor_image(bases: &[u64; 32], bits: u32, x: u32) -> u64 {
    let mut acc = 0u64;
    let mut k = 0;
    while k < bits {
        if x >> k & 1 == 1 {
            acc ^= bases[k as usize];
        }
        k += 1;
    }
    acc
}
