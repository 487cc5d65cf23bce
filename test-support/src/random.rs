//! Seeded random layouts for the tests.
//!
//! Everything is deterministic: an [`Rng`] is a splitmix64 stream started from a fixed seed, so a
//! failing law names a seed and a case number that reproduce it. Layouts are kept small (at most
//! [`MAX_TEST_BITS`] input and output bits) so that laws can be checked by brute force over every
//! input.

use crate::Rng;
use tessera_layout::{Label, LinearLayout};

/// Most input bits, and most output bits, of a generated layout (brute force stays cheap).
pub const MAX_TEST_BITS: u32 = 10;

/// The hardware input dimensions of distributed layouts, in Triton's order.
pub const HARDWARE_DIMS: [Label; 3] = [Label::Register, Label::Lane, Label::Warp];

/// Output dimensions `dim0..dim{n-1}` splitting `total_bits` bits at random (sizes may be 1).
pub fn random_out_dims(rng: &mut Rng, num_dims: usize, total_bits: u32) -> Vec<(Label, u32)> {
    let mut bits = vec![0u32; num_dims];
    for _ in 0..total_bits {
        let d = rng.below(num_dims as u64) as usize;
        bits[d] += 1;
    }
    bits.iter()
        .enumerate()
        .map(|(d, &b)| (Label::Dim(d as u8), 1u32 << b))
        .collect()
}

/// The output dimensions of `layout` (labels and sizes), as [`layout_from_packed`] takes them.
pub fn out_dims_of(layout: &LinearLayout) -> Vec<(Label, u32)> {
    (0..layout.num_out_dims())
        .map(|o| (layout.out_label(o), 1u32 << layout.out_bits_at(o)))
        .collect()
}

/// A warp layout `register, lane, warp → out_dims` from the packed bases of each.
pub fn warp_layout_from_packed(
    [registers, lanes, warps]: [Vec<u64>; 3],
    out_dims: &[(Label, u32)],
) -> LinearLayout {
    layout_from_packed(
        &[
            (Label::Register, registers),
            (Label::Lane, lanes),
            (Label::Warp, warps),
        ],
        out_dims,
    )
}

/// A layout with the given input dimensions, each with the given packed bases, and output
/// dimensions (dim0 in the low bits of a packed vector, as in [`LinearLayout`]).
pub fn layout_from_packed(ins: &[(Label, Vec<u64>)], out_dims: &[(Label, u32)]) -> LinearLayout {
    let mut layout = LinearLayout::empty();
    for &(label, size) in out_dims {
        layout = layout.with_out_dim(label, size).expect("out dim");
    }
    for (i, (label, bases)) in ins.iter().enumerate() {
        layout = layout.with_in_dim(*label).expect("in dim");
        for &b in bases {
            layout.push_packed_basis(i, b).expect("basis");
        }
    }
    layout
}

/// Deals `columns` out to `labels` in order, cutting at random points (dimensions may get none).
fn deal(rng: &mut Rng, labels: &[Label], columns: Vec<u64>) -> Vec<(Label, Vec<u64>)> {
    let n = columns.len();
    let mut cuts: Vec<usize> = (0..labels.len() - 1)
        .map(|_| rng.below(n as u64 + 1) as usize)
        .collect();
    cuts.sort_unstable();
    cuts.push(n);
    let mut start = 0;
    labels
        .iter()
        .zip(cuts)
        .map(|(&label, end)| {
            let part = columns[start..end].to_vec();
            start = end;
            (label, part)
        })
        .collect()
}

/// A random invertible `n × n` matrix as `n` packed columns: a permutation followed by random
/// column additions (each keeps the columns independent).
pub fn random_invertible_columns(rng: &mut Rng, n: u32) -> Vec<u64> {
    let mut cols: Vec<u64> = (0..n).map(|b| 1u64 << b).collect();
    rng.shuffle(&mut cols);
    if n >= 2 {
        for _ in 0..(3 * n) {
            let i = rng.below(n as u64) as usize;
            let j = rng.below(n as u64) as usize;
            if i != j {
                cols[i] ^= cols[j];
            }
        }
    }
    cols
}

/// A distributed layout in the sense of Definition 4.10: `register`, `lane`, `warp` → `dim0..`,
/// every basis a unit vector or zero (a broadcast bit), every output bit reached exactly once
/// (surjective; a permutation matrix with zero columns inserted).
pub fn random_distributed(rng: &mut Rng) -> LinearLayout {
    let num_out = rng.range(1, 3) as usize;
    let out_bits = rng.range(0, MAX_TEST_BITS - 2);
    let out_dims = random_out_dims(rng, num_out, out_bits);
    let zeros = rng.range(0, (MAX_TEST_BITS - out_bits).min(3));
    let mut columns: Vec<u64> = (0..out_bits).map(|b| 1u64 << b).collect();
    columns.extend((0..zeros).map(|_| 0));
    rng.shuffle(&mut columns);
    layout_from_packed(&deal(rng, &HARDWARE_DIMS, columns), &out_dims)
}

/// A surjective layout `register`, `lane`, `warp` → `dim0..` with arbitrary bases: an invertible
/// core mixed with zero bases and sums of other bases (broadcast and duplicated bits).
pub fn random_surjective(rng: &mut Rng) -> LinearLayout {
    let num_out = rng.range(1, 3) as usize;
    let out_bits = rng.range(0, MAX_TEST_BITS - 2);
    let out_dims = random_out_dims(rng, num_out, out_bits);
    let mut columns = random_invertible_columns(rng, out_bits);
    let extra = rng.range(0, (MAX_TEST_BITS - out_bits).min(3));
    for _ in 0..extra {
        let v = if rng.chance(1, 2) {
            0
        } else {
            rng.bits(out_bits)
        };
        columns.push(v);
    }
    rng.shuffle(&mut columns);
    layout_from_packed(&deal(rng, &HARDWARE_DIMS, columns), &out_dims)
}

/// A memory layout (Definition 4.14 shape): `offset` → `dim0..`, bijective, arbitrary invertible
/// matrix.
pub fn random_memory(rng: &mut Rng) -> LinearLayout {
    let num_out = rng.range(1, 3) as usize;
    let bits = rng.range(0, MAX_TEST_BITS);
    let out_dims = random_out_dims(rng, num_out, bits);
    let columns = random_invertible_columns(rng, bits);
    layout_from_packed(&[(Label::Offset, columns)], &out_dims)
}

/// An injective layout: `in_dims` → `dim0..` with independent bases (not necessarily onto).
pub fn random_injective(rng: &mut Rng, in_dims: &[Label]) -> LinearLayout {
    let num_out = rng.range(1, 3) as usize;
    let out_bits = rng.range(0, MAX_TEST_BITS);
    let out_dims = random_out_dims(rng, num_out, out_bits);
    let mut columns = random_invertible_columns(rng, out_bits);
    let keep = rng.range(0, out_bits) as usize;
    columns.truncate(keep);
    layout_from_packed(&deal(rng, in_dims, columns), &out_dims)
}

/// An arbitrary layout: 1–3 input dimensions drawn from the hardware labels and `offset`, 1–3
/// output dimensions, random bases (any rank, zeros and repeats allowed).
pub fn random_layout(rng: &mut Rng) -> LinearLayout {
    let mut labels = vec![
        Label::Register,
        Label::Lane,
        Label::Warp,
        Label::Block,
        Label::Offset,
    ];
    rng.shuffle(&mut labels);
    labels.truncate(rng.range(1, 3) as usize);
    let num_out = rng.range(1, 3) as usize;
    let out_bits = rng.range(0, MAX_TEST_BITS);
    let out_dims = random_out_dims(rng, num_out, out_bits);
    let in_bits = rng.range(0, MAX_TEST_BITS);
    let columns: Vec<u64> = (0..in_bits).map(|_| rng.bits(out_bits)).collect();
    layout_from_packed(&deal(rng, &labels, columns), &out_dims)
}

/// A layout with exactly these input dimensions (sizes given in bits) and output dimensions, with
/// random bases.
pub fn random_layout_with(
    rng: &mut Rng,
    ins: &[(Label, u32)],
    out_dims: &[(Label, u32)],
) -> LinearLayout {
    let out_bits: u32 = out_dims.iter().map(|&(_, s)| s.trailing_zeros()).sum();
    let ins: Vec<(Label, Vec<u64>)> = ins
        .iter()
        .map(|&(label, bits)| (label, (0..bits).map(|_| rng.bits(out_bits)).collect()))
        .collect();
    layout_from_packed(&ins, out_dims)
}

/// Splits a flat input index (all input bits, input dimensions in order, the first the least
/// significant) into one value per input dimension.
pub fn split_input(layout: &LinearLayout, mut flat: u64) -> Vec<u32> {
    (0..layout.num_in_dims())
        .map(|i| {
            let bits = layout.in_bits_at(i);
            let v = (flat & ((1u64 << bits) - 1)) as u32;
            flat >>= bits;
            v
        })
        .collect()
}

/// The image of every input, by brute force from the definition (XOR of the bases of the set
/// bits), indexed by the flat input index of [`split_input`], packed as in the layout.
pub fn brute_force_table(layout: &LinearLayout) -> Vec<u64> {
    let n = 1u64 << layout.total_in_bits();
    (0..n)
        .map(|flat| {
            let values = split_input(layout, flat);
            let mut out = 0u64;
            for (i, v) in values.iter().enumerate() {
                for k in 0..layout.in_bits_at(i) {
                    if v >> k & 1 == 1 {
                        out ^= layout.packed_basis(i, k as usize);
                    }
                }
            }
            out
        })
        .collect()
}
