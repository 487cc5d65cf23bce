//! Memory of any element width: global loads and stores of element vectors packed into 32-bit
//! words, shared-memory slots, and layout conversion through shared memory.

use super::elements::Elem;
use super::layout::{basis_table, for_each_register, xor_image, Layout, Tile};
use crate::{device, Ptr};

/// Packs `V` elements into 32-bit words, element 0 in the low bits of word 0.
#[inline(always)]
fn pack_words<T: Elem, const V: usize>(values: [T; V]) -> [u32; 4] {
    let mut words = [0u32; 4];
    crate::unroll::each_index::<V>(|i| {
        let bits = values[i].to_bits();
        let at = i as u32 * T::BITS;
        let w = (at / 32) as usize;
        if T::BITS == 64 {
            words[w] = bits as u32;
            words[w + 1] = (bits >> 32) as u32;
        } else {
            words[w] |= (bits as u32) << (at % 32);
        }
    });
    words
}

/// Unpacks what [`pack_words`] packed.
#[inline(always)]
fn unpack_words<T: Elem, const V: usize>(words: [u32; 4]) -> [T; V] {
    crate::unroll::from_fn(|i| {
        let at = i as u32 * T::BITS;
        let w = (at / 32) as usize;
        if T::BITS == 64 {
            T::from_bits(words[w] as u64 | (words[w + 1] as u64) << 32)
        } else {
            let mask = if T::BITS == 32 {
                u32::MAX
            } else {
                (1u32 << T::BITS) - 1
            };
            T::from_bits(((words[w] >> (at % 32)) & mask) as u64)
        }
    })
}

/// Loads `V` consecutive elements at `ptr` with one predicated access of `V × T::BITS` bits
/// (8 or 16: `ld.global.u8`/`u16`; 32, 64, 128: `ld.global{,.v2,.v4}.b32`, i.e. SASS `LDG.E`,
/// `LDG.E.64`, `LDG.E.128`). Where `pred` is false nothing is read and the result is `other`.
///
/// # Safety
/// When `pred` is true, `ptr .. ptr + V` must be readable global memory aligned to the access
/// size (the emulator checks alignment and null).
#[inline(always)]
#[track_caller]
pub unsafe fn load<T: Elem, const V: usize>(ptr: Ptr<T>, pred: bool, other: [T; V]) -> [T; V] {
    let bits = V as u32 * T::BITS;
    let o = pack_words(other);
    let words: [u32; 4] = match bits {
        8 => [device::ld_global_u8(ptr.cast(), pred, o[0]), 0, 0, 0],
        16 => [device::ld_global_u16(ptr.cast(), pred, o[0]), 0, 0, 0],
        32 => [device::ld_global_v1::<u32>(ptr.cast(), pred, o[0]), 0, 0, 0],
        64 => {
            let [a, b] = device::ld_global_v2::<u32>(ptr.cast(), pred, [o[0], o[1]]);
            [a, b, 0, 0]
        }
        128 => device::ld_global_v4::<u32>(ptr.cast(), pred, o),
        _ => panic!("tile load: unsupported vector width"),
    };
    unpack_words(words)
}

/// Stores `V` consecutive elements at `ptr` with one predicated access (see [`load`]); nothing
/// where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr .. ptr + V` must be writable global memory aligned to the access.
#[inline(always)]
#[track_caller]
pub unsafe fn store<T: Elem, const V: usize>(ptr: Ptr<T>, pred: bool, value: [T; V]) {
    let bits = V as u32 * T::BITS;
    let w = pack_words(value);
    match bits {
        8 => device::st_global_u8(ptr.cast(), pred, w[0]),
        16 => device::st_global_u16(ptr.cast(), pred, w[0]),
        32 => device::st_global_v1::<u32>(ptr.cast(), pred, w[0]),
        64 => device::st_global_v2::<u32>(ptr.cast(), pred, [w[0], w[1]]),
        128 => device::st_global_v4::<u32>(ptr.cast(), pred, w),
        _ => panic!("tile store: unsupported vector width"),
    }
}

/// Bytes of one shared-memory slot of `T` as [`st_shared_elem`] uses it: 4 for elements of up to
/// 32 bits (widened to a word, so no two threads ever write parts of one word), 8 for 64-bit ones.
pub const fn shared_slot_bytes<T: Elem>() -> u32 {
    if T::BITS <= 32 {
        4
    } else {
        8
    }
}

/// Stores one element into its slot at shared-window address `addr` (`st.shared.b32`, or
/// `st.shared.v2.b32` for 64-bit elements; see [`shared_slot_bytes`]).
///
/// # Safety
/// `addr` must be inside the block's dynamic shared memory, aligned to the slot size.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_elem<T: Elem>(addr: u32, value: T) {
    let bits = value.to_bits();
    if T::BITS <= 32 {
        device::st_shared_v1::<u32>(addr, bits as u32)
    } else {
        device::st_shared_v2::<u32>(addr, [bits as u32, (bits >> 32) as u32])
    }
}

/// Loads one element from its slot at shared-window address `addr` (see [`st_shared_elem`]).
///
/// # Safety
/// As [`st_shared_elem`].
#[inline(always)]
#[track_caller]
pub unsafe fn ld_shared_elem<T: Elem>(addr: u32) -> T {
    if T::BITS <= 32 {
        T::from_bits(device::ld_shared_v1::<u32>(addr) as u64)
    } else {
        let [lo, hi] = device::ld_shared_v2::<u32>(addr);
        T::from_bits(lo as u64 | (hi as u64) << 32)
    }
}

/// Converts a tile between two layouts known only to rustc (a user's `convert_layout` layout on
/// either side) through shared memory, generically: barrier; every owner of an element of `S`
/// (no duplicate register, lane or warp bit set) stores it at slot `packed coordinate` of a
/// buffer of `2^(output bits)` slots at `base`; barrier; every register of `D` loads its
/// element. Correct for any pair of valid layouts of one tile; not bank-conflict free (the
/// planned conversions of inferred layouts are), which is the price of a layout the code
/// generator cannot see. `base` must hold `2^(output bits) × shared_slot_bytes::<T>()` bytes.
///
/// # Safety
/// Every thread of the block must call it (it has barriers) with its own `lane` and `warp`, and
/// `base` must be a shared-memory range of the size above that nothing else uses meanwhile.
#[inline(always)]
#[track_caller]
pub unsafe fn convert_through_shared<
    T: Elem,
    S: Layout,
    D: Layout,
    const RS: usize,
    const RD: usize,
>(
    src: Tile<T, S, RS>,
    base: u32,
    lane: u32,
    warp: u32,
) -> Tile<T, D, RD> {
    let slot = shared_slot_bytes::<T>();
    // Everything about the layouts is evaluated by rustc: no call into the layout crate remains
    // in device code (nvptx64 cannot link one).
    let free = const { S::LAYOUT.free_variable_masks() };
    let (src_bases, src_bits) = const { basis_table(&S::LAYOUT) };
    let (dst_bases, dst_bits) = const { basis_table(&D::LAYOUT) };
    let owner = lane & free[1] == 0 && warp & free[2] == 0;
    let src_thread =
        xor_image(&src_bases[1], src_bits[1], lane) ^ xor_image(&src_bases[2], src_bits[2], warp);
    let dst_thread =
        xor_image(&dst_bases[1], dst_bits[1], lane) ^ xor_image(&dst_bases[2], dst_bits[2], warp);
    device::sync_threads();
    let regs = src.regs();
    // Unrolled with constant register indices (up to MAX_TILE_REGISTERS; the dead copies fold
    // away), so the register arrays stay in registers instead of local memory.
    macro_rules! store_register {
        ($r:expr) => {
            if let Some(&value) = regs.get($r) {
                if owner && ($r as u32) & free[0] == 0 {
                    let at = (xor_image(&src_bases[0], src_bits[0], $r) ^ src_thread) as u32;
                    st_shared_elem(base + at * slot, value);
                }
            }
        };
    }
    for_each_register!(store_register);
    device::sync_threads();
    let mut out = [T::from_bits(0); RD];
    macro_rules! load_register {
        ($r:expr) => {
            if let Some(place) = out.get_mut($r) {
                let at = (xor_image(&dst_bases[0], dst_bits[0], $r) ^ dst_thread) as u32;
                *place = ld_shared_elem(base + at * slot);
            }
        };
    }
    for_each_register!(load_register);
    Tile::from_regs(out)
}
