//! Runtime helpers for the data movement that `#[tile_kernel]` generates (layout conversions,
//! gathers, `dot` fragments): packing elements ([`crate::tile::Elem`], their storage bits) into
//! 32-bit words, the unit that shuffles, shared-memory accesses, `ldmatrix` and `mma` fragments
//! move, and the XOR terms of per-thread offsets.
//!
//! Everything here is `#[inline(always)]` register arithmetic with the same body on nvptx64 and
//! on the host; the instructions themselves (`shfl.sync`, `ld/st.shared`, `ldmatrix`,
//! `mma.sync`) are called by the generated code directly from [`crate::device`], so that the
//! emulator attributes each shared-memory access to the user's source line.
//!
//! Packing convention (PTX's, as `.f16x2` and the byte fragments of `mma`): element `j` of a word
//! occupies bits `j·b .. (j+1)·b` (`b` = element bits), element 0 lowest; a 64-bit element spans
//! two words, low word first.

use crate::tile::Elem;

/// Packs `N` elements into `W` 32-bit words (element `j` at bits `j·BITS`; 64-bit elements take
/// two words, low first). `W` must be `⌈N·BITS/32⌉`; unused high bits are zero.
#[inline(always)]
pub fn pack_words<T: Elem, const N: usize, const W: usize>(elements: [T; N]) -> [u32; W] {
    let mut words = [0u32; W];
    let bits = T::BITS as usize;
    crate::unroll::each_index::<N>(|j| {
        let raw = elements[j].to_bits();
        let at = j * bits;
        if bits == 64 {
            words[at / 32] = raw as u32;
            words[at / 32 + 1] = (raw >> 32) as u32;
        } else {
            words[at / 32] |= (raw as u32) << (at % 32);
        }
    });
    words
}

/// The inverse of [`pack_words`]: `N` elements from `W` words.
#[inline(always)]
pub fn unpack_words<T: Elem, const N: usize, const W: usize>(words: [u32; W]) -> [T; N] {
    let bits = T::BITS as usize;
    crate::unroll::from_fn(|j| {
        let at = j * bits;
        if bits == 64 {
            T::from_bits(words[at / 32] as u64 | (words[at / 32 + 1] as u64) << 32)
        } else {
            T::from_bits((words[at / 32] >> (at % 32)) as u64)
        }
    })
}

/// The element of a 32-bit word at byte `byte_in_word` (0..4, a multiple of the element size):
/// how a sub-word element is read from a shared-memory word loaded whole.
#[inline(always)]
pub fn extract_element<T: Elem>(word: u32, byte_in_word: u32) -> T {
    T::from_bits((word >> (8 * byte_in_word)) as u64)
}

/// `a` if `bit` of `value` is set, else 0: one term of an XOR-linear function of a thread index
/// (`lane_id()`, `warp_id()`), as generated code computes offsets and lanes.
#[inline(always)]
pub const fn bit_term(value: u32, bit: u32, a: u32) -> u32 {
    ((value >> bit) & 1).wrapping_neg() & a
}

#[cfg(all(test, not(tessera_device)))]
mod tests {
    use super::*;
    use crate::dtype::{bf16, f16};

    #[test]
    fn pack_round_trips_every_width() {
        let h = [f16::from_bits(0x3c00), f16::from_bits(0xc000)];
        let w: [u32; 1] = pack_words(h);
        assert_eq!(w, [0xc000_3c00]);
        assert_eq!(unpack_words::<f16, 2, 1>(w), h);
        let b = [1i8, -2, 3, -4];
        let w: [u32; 1] = pack_words(b);
        assert_eq!(w, [0xfc03_fe01]);
        assert_eq!(unpack_words::<i8, 4, 1>(w), b);
        let d = [1.5f64, -2.25];
        let w: [u32; 4] = pack_words(d);
        assert_eq!(w[0] as u64 | (w[1] as u64) << 32, 1.5f64.to_bits());
        assert_eq!(unpack_words::<f64, 2, 4>(w), d);
        // A lone 16-bit element in a word: the high half is zero.
        let w: [u32; 1] = pack_words([bf16::from_bits(0xabcd)]);
        assert_eq!(w, [0xabcd]);
        let flags = [true, false, true];
        let w: [u32; 1] = pack_words(flags);
        assert_eq!(w, [0x0001_0001]);
        assert_eq!(unpack_words::<bool, 3, 1>(w), flags);
    }

    #[test]
    fn extract_and_bit_terms() {
        assert_eq!(extract_element::<u8>(0x4433_2211, 2), 0x33);
        assert_eq!(extract_element::<i16>(0x8001_7fff, 2), -32767);
        assert_eq!(bit_term(0b101, 2, 0x30), 0x30);
        assert_eq!(bit_term(0b101, 1, 0x30), 0);
    }
}
