//! Seeded random inputs for the planning tests: warp-shaped distributed layouts (32 lanes, Definition 4.10: unit or zero bases), memory
//! layouts that a distributed layout can vectorize into, and evaluation helpers.
use crate::random::{
    layout_from_packed, out_dims_of, random_invertible_columns, warp_layout_from_packed,
};
use crate::Rng;
use tessera_layout::plan::bank::BankAccess;
use tessera_layout::plan::{bases, nonzero_bases};
use tessera_layout::{Label, LinearLayout};

/// A tile `dim0 × dim1` of `2^bits` elements, split at random.
pub fn random_tile(rng: &mut Rng, bits: u32) -> Vec<(Label, u32)> {
    let dims = rng.range(1, 2) as usize;
    let mut sizes = vec![0u32; dims];
    for _ in 0..bits {
        sizes[rng.below(dims as u64) as usize] += 1;
    }
    sizes
        .iter()
        .enumerate()
        .map(|(d, &b)| (Label::Dim(d as u8), 1u32 << b))
        .collect()
}

/// Shape of a random warp layout: how many bits each hardware dimension has, and how many of
/// them are broadcast (zero) bits.
#[derive(Clone, Copy, Debug)]
pub struct WarpShape {
    pub lane_bits: u32,
    pub warp_bits: u32,
    pub register_zeros: u32,
    pub lane_zeros: u32,
    pub warp_zeros: u32,
}

/// A random shape for a tile of `tile_bits` bits: 32 lanes, up to 2 warp bits, a few broadcast
/// bits (more lane/warp bits than the tile has become broadcast bits).
pub fn random_warp_shape(rng: &mut Rng, tile_bits: u32) -> WarpShape {
    random_warp_shape_with_lanes(rng, tile_bits, 5)
}

/// [`random_warp_shape`] with `2^lane_bits` lanes (6: a 64-wide wavefront).
pub fn random_warp_shape_with_lanes(rng: &mut Rng, tile_bits: u32, lane_bits: u32) -> WarpShape {
    let warp_bits = rng.range(0, 2);
    random_warp_shape_fixed(rng, tile_bits, lane_bits, warp_bits)
}

/// A random shape with `2^lane_bits` lanes and `2^warp_bits` warps; zero (broadcast) bits are
/// added where the tile is too small for them.
pub fn random_warp_shape_fixed(
    rng: &mut Rng,
    tile_bits: u32,
    lane_bits: u32,
    warp_bits: u32,
) -> WarpShape {
    let mut lane_zeros = if rng.chance(1, 4) { rng.range(0, 2) } else { 0 };
    let mut warp_zeros = if rng.chance(1, 4) {
        rng.range(0, warp_bits)
    } else {
        0
    };
    // Not more non-zero lane/warp bits than the tile has.
    while (lane_bits - lane_zeros) + (warp_bits - warp_zeros) > tile_bits {
        if warp_zeros < warp_bits {
            warp_zeros += 1;
        } else {
            lane_zeros += 1;
        }
    }
    WarpShape {
        lane_bits,
        warp_bits,
        register_zeros: if rng.chance(1, 4) { rng.range(0, 2) } else { 0 },
        lane_zeros,
        warp_zeros,
    }
}

/// A distributed layout (Definition 4.10) of the given shape on `out_dims`: the tile's unit
/// vectors dealt at random to the non-zero slots, zero bases at random positions.
pub fn random_warp_layout(
    rng: &mut Rng,
    out_dims: &[(Label, u32)],
    shape: WarpShape,
) -> LinearLayout {
    let tile_bits: u32 = out_dims.iter().map(|&(_, s)| s.trailing_zeros()).sum();
    let mut units: Vec<u64> = (0..tile_bits).map(|b| 1u64 << b).collect();
    rng.shuffle(&mut units);
    let lanes_nonzero = (shape.lane_bits - shape.lane_zeros) as usize;
    let warps_nonzero = (shape.warp_bits - shape.warp_zeros) as usize;
    let regs_nonzero = units.len() - lanes_nonzero - warps_nonzero;
    let mut deal = |count: usize, zeros: u32, rng: &mut Rng| {
        let mut v: Vec<u64> = units.drain(..count).collect();
        v.extend((0..zeros).map(|_| 0));
        rng.shuffle(&mut v);
        v
    };
    let regs = deal(regs_nonzero, shape.register_zeros, rng);
    let lanes = deal(lanes_nonzero, shape.lane_zeros, rng);
    let warps = deal(warps_nonzero, shape.warp_zeros, rng);
    warp_layout_from_packed([regs, lanes, warps], out_dims)
}

/// A bijective memory layout `offset → tile`: its first `vector` offsets are registers of
/// `distributed` (so accesses can vectorize), the rest a random invertible mix in which each
/// offset above the vector may also carry lower offsets' vectors (XOR swizzles).
pub fn random_memory_for(rng: &mut Rng, distributed: &LinearLayout, vector: u32) -> LinearLayout {
    let tile_bits = distributed.total_out_bits();
    let out_dims = out_dims_of(distributed);
    let mut registers: Vec<u64> = bases(distributed, Label::Register)
        .into_iter()
        .filter(|&v| v != 0)
        .collect();
    rng.shuffle(&mut registers);
    registers.truncate(vector as usize);
    let mut columns = registers.clone();
    let mut rest: Vec<u64> = (0..tile_bits)
        .map(|b| 1u64 << b)
        .filter(|u| !registers.contains(u))
        .collect();
    rng.shuffle(&mut rest);
    columns.extend(rest);
    let fixed = registers.len();
    let n = columns.len();
    // Mixing only among the offsets above the vector keeps the vector aligned.
    if n >= fixed + 2 {
        for _ in 0..(2 * n) {
            let j = rng.range(fixed as u32 + 1, n as u32 - 1) as usize;
            let i = rng.range(fixed as u32, j as u32 - 1) as usize;
            if rng.chance(1, 2) {
                columns[j] ^= columns[i];
            }
        }
    }
    layout_from_packed(&[(Label::Offset, columns)], &out_dims)
}

/// A random bijective memory layout (any invertible matrix).
pub fn random_any_memory(rng: &mut Rng, out_dims: &[(Label, u32)]) -> LinearLayout {
    let bits: u32 = out_dims.iter().map(|&(_, s)| s.trailing_zeros()).sum();
    let columns = random_invertible_columns(rng, bits);
    layout_from_packed(&[(Label::Offset, columns)], out_dims)
}

/// The packed image of the given hardware indices (absent dimensions are 0).
pub fn image(layout: &LinearLayout, inputs: &[(Label, u32)]) -> u64 {
    inputs.iter().fold(0, |acc, &(label, value)| {
        bases(layout, label)
            .iter()
            .enumerate()
            .filter(|(k, _)| value >> k & 1 == 1)
            .fold(acc, |a, (_, &v)| a ^ v)
    })
}

/// `inverse[element] = offset` of a bijective memory layout `offset → tile`.
pub fn memory_inverse(memory: &LinearLayout) -> Vec<u64> {
    let n = memory.total_in_bits();
    let mut inverse = vec![u64::MAX; 1 << n];
    for offset in 0..(1u64 << n) {
        let element = image(memory, &[(Label::Offset, offset as u32)]);
        assert_eq!(inverse[element as usize], u64::MAX, "memory not injective");
        inverse[element as usize] = offset;
    }
    inverse
}

/// All `2^n` images of input dimension `label` (`table[x]` = image of `x`).
pub fn image_table(layout: &LinearLayout, label: Label) -> Vec<u64> {
    let b = bases(layout, label);
    let mut table = vec![0u64; 1 << b.len()];
    for x in 1..table.len() {
        let low = x.trailing_zeros() as usize;
        table[x] = table[x & (x - 1)] ^ b[low];
    }
    table
}

/// Wavefronts by simulation: 32 banks × 4 bytes; every access instruction of every warp, split
/// into its phases (a 64-bit access serves 16 lanes at a time, a 128-bit one 8); per phase the
/// number of distinct 4-byte words touched in the busiest bank. Also checks that each vector of
/// the plan really is contiguous and aligned in memory. Returns (min, max) over all phases.
pub fn brute_force_wavefronts(
    memory: &LinearLayout,
    distributed: &LinearLayout,
    bits: u32,
    access: &BankAccess,
) -> (u32, u32) {
    let lane_bits = distributed.in_bits(Label::Lane);
    let phase_bits = access.phases.trailing_zeros().min(lane_bits);
    let lanes_per_phase = 1usize << (lane_bits - phase_bits);
    brute_force_phased_wavefronts(memory, distributed, bits, access, &|lane| {
        lane / lanes_per_phase
    })
}

/// [`brute_force_wavefronts`] with the phases given by `phase_of` (lane → phase index): the lanes
/// of one phase are served together.
pub fn brute_force_phased_wavefronts(
    memory: &LinearLayout,
    distributed: &LinearLayout,
    bits: u32,
    access: &BankAccess,
    phase_of: &dyn Fn(usize) -> usize,
) -> (u32, u32) {
    let inverse = memory_inverse(memory);
    let regs = image_table(distributed, Label::Register);
    let lanes = image_table(distributed, Label::Lane);
    let warps = image_table(distributed, Label::Warp);
    let vec_regs = &access.vector.registers;
    let vec = access.vector.elements as usize;
    let others: Vec<u32> = nonzero_bases(distributed, Label::Register)
        .iter()
        .map(|&(k, _)| k)
        .filter(|k| !vec_regs.contains(k))
        .collect();
    let vector_offsets: Vec<usize> = (0..vec)
        .map(|j| {
            vec_regs
                .iter()
                .enumerate()
                .filter(|(i, _)| j >> i & 1 == 1)
                .fold(0, |r, (_, &k)| r | 1 << k)
        })
        .collect();
    let mut phases: Vec<Vec<usize>> = Vec::new();
    for lane in 0..lanes.len() {
        let p = phase_of(lane);
        if phases.len() <= p {
            phases.resize(p + 1, Vec::new());
        }
        phases[p].push(lane);
    }
    let bytes = (vec as u64 * bits as u64) / 8;
    let (mut lo, mut hi) = (u32::MAX, 0);
    let mut banks: Vec<Vec<u64>> = vec![Vec::new(); 32];
    for chunk in 0..(1usize << others.len()) {
        let base_reg = others
            .iter()
            .enumerate()
            .filter(|(i, _)| chunk >> i & 1 == 1)
            .fold(0usize, |r, (_, &k)| r | 1 << k);
        for &warp in &warps {
            for phase in phases.iter().filter(|p| !p.is_empty()) {
                banks.iter_mut().for_each(Vec::clear);
                for &index in phase {
                    let lane = lanes[index];
                    let offset = |j: usize| {
                        inverse[(regs[base_reg | vector_offsets[j]] ^ lane ^ warp) as usize]
                    };
                    let first = offset(0);
                    assert_eq!(first % vec as u64, 0, "vector not aligned");
                    for j in 1..vec {
                        assert_eq!(offset(j), first + j as u64, "vector not contiguous");
                    }
                    let start = first * bits as u64 / 8;
                    for word in start / 4..(start + bytes).div_ceil(4) {
                        banks[(word % 32) as usize].push(word);
                    }
                }
                let w = banks
                    .iter_mut()
                    .map(|b| {
                        b.sort_unstable();
                        b.dedup();
                        b.len() as u32
                    })
                    .max()
                    .unwrap_or(0)
                    .max(1);
                lo = lo.min(w);
                hi = hi.max(w);
            }
        }
    }
    (lo, hi)
}

/// The phase of `lane` in a `vector_bits`-wide access of AMD's LDS (gfx90a, gfx942), written out
/// from the hardware descriptions rather than derived: 32 lanes (half a wave) per 32-bit access,
/// 16 consecutive lanes per 64-bit one, 8 per 128-bit store (`ds_write_b128`), and per 128-bit
/// load (`ds_read_b128`) the lane groups {0–3, 20–23}, {4–7, 16–19}, {8–11, 28–31},
/// {12–15, 24–27}; lanes 32–63 the same groups, after.
pub fn amd_lds_phase(vector_bits: u32, load: bool, lane: usize) -> usize {
    let (half, l) = (lane / 32, lane % 32);
    if load && vector_bits >= 128 {
        let group = match l {
            0..=3 | 20..=23 => 0,
            4..=7 | 16..=19 => 1,
            8..=11 | 28..=31 => 2,
            _ => 3,
        };
        return 4 * half + group;
    }
    let per_phase = 32 / (vector_bits / 32).clamp(1, 4) as usize;
    lane / per_phase
}

/// The seeds' transpose: one warp, 16×32 fp32 (`m` = dim0 rows, `n` = dim1 columns).
/// Store: lane → column, register → row. Read: lanes 0–15 → rows, lane 4 → column parity,
/// registers → column pairs.
pub fn transpose_layouts() -> (LinearLayout, LinearLayout) {
    let tile = [(Label::Dim(0), 16), (Label::Dim(1), 32)];
    let store = LinearLayout::distributed(
        &[
            (Label::Register, &[&[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
            (Label::Lane, &[&[0, 1], &[0, 2], &[0, 4], &[0, 8], &[0, 16]]),
        ],
        &tile,
    )
    .unwrap();
    let read = LinearLayout::distributed(
        &[
            (Label::Register, &[&[0, 2], &[0, 4], &[0, 8], &[0, 16]]),
            (Label::Lane, &[&[1, 0], &[2, 0], &[4, 0], &[8, 0], &[0, 1]]),
        ],
        &tile,
    )
    .unwrap();
    (store, read)
}

/// `offset(m, n) = 32 m + (n ⊕ shift·m)` (shift 0 = unswizzled) as a memory layout.
pub fn xor_swizzle(shift: u32) -> LinearLayout {
    let mut bases: Vec<Vec<u32>> = (0..5).map(|b| vec![0, 1 << b]).collect();
    for j in 0..4 {
        let n = if shift == 0 { 0 } else { (shift << j) & 31 };
        bases.push(vec![1 << j, n]);
    }
    let refs: Vec<&[u32]> = bases.iter().map(|b| b.as_slice()).collect();
    LinearLayout::memory(
        &[(Label::Offset, &refs)],
        &[(Label::Dim(0), 16), (Label::Dim(1), 32)],
    )
    .unwrap()
}

/// A distributed layout with `a`'s warp bases (bit for bit) whose registers and lanes hold the
/// rest of the tile in a random arrangement: a conversion from `a` stays inside each warp.
pub fn random_layout_sharing_warps(
    rng: &mut Rng,
    a: &LinearLayout,
    register_zeros: u32,
    lane_zeros: u32,
) -> LinearLayout {
    let out_dims = out_dims_of(a);
    let warps = bases(a, Label::Warp);
    let lane_bits = a.in_bits(Label::Lane);
    let mut units: Vec<u64> = (0..a.total_out_bits())
        .map(|b| 1u64 << b)
        .filter(|u| !warps.contains(u))
        .collect();
    rng.shuffle(&mut units);
    let lane_zeros = lane_zeros
        .min(lane_bits)
        .max(lane_bits.saturating_sub(units.len() as u32));
    let lanes_nonzero = (lane_bits - lane_zeros) as usize;
    let mut lanes: Vec<u64> = units.drain(..lanes_nonzero).collect();
    lanes.extend((0..lane_zeros).map(|_| 0));
    rng.shuffle(&mut lanes);
    let mut regs = units;
    regs.extend((0..register_zeros).map(|_| 0));
    rng.shuffle(&mut regs);
    warp_layout_from_packed([regs, lanes, warps], &out_dims)
}

/// `a` with its register bases permuted, possibly a broadcast register added, and — where `a`
/// has a broadcast lane — that lane taking over one register direction (so the source register
/// depends on the lane): a conversion from `a` stays inside each thread.
pub fn random_register_variant(rng: &mut Rng, a: &LinearLayout) -> LinearLayout {
    let out_dims = out_dims_of(a);
    let mut regs = bases(a, Label::Register);
    let mut lanes = bases(a, Label::Lane);
    rng.shuffle(&mut regs);
    if rng.chance(1, 2) {
        if let (Some(k), Some(j)) = (
            lanes.iter().position(|&v| v == 0),
            regs.iter().position(|&v| v != 0),
        ) {
            lanes[k] = regs[j];
            regs[j] = 0;
        }
    }
    if rng.chance(1, 3) {
        let at = rng.below(regs.len() as u64 + 1) as usize;
        regs.insert(at, 0);
    }
    warp_layout_from_packed([regs, lanes, bases(a, Label::Warp)], &out_dims)
}

/// An index layout for gathering `src` along `axis` that keeps the gather warp-local: `src`
/// with its register bases permuted and some `axis` directions swapped between registers and
/// lanes (the other coordinates stay on the same lanes and warps).
pub fn random_local_index_layout(rng: &mut Rng, src: &LinearLayout, axis: usize) -> LinearLayout {
    let out_dims = out_dims_of(src);
    let axis_mask = ((1u64 << src.out_bits_at(axis)) - 1) << src.out_offset(axis);
    let mut regs = bases(src, Label::Register);
    let mut lanes = bases(src, Label::Lane);
    rng.shuffle(&mut regs);
    for _ in 0..2 {
        let lane_slots: Vec<usize> = (0..lanes.len())
            .filter(|&k| lanes[k] & !axis_mask == 0)
            .collect();
        let reg_slots: Vec<usize> = (0..regs.len())
            .filter(|&k| regs[k] & !axis_mask == 0)
            .collect();
        if !lane_slots.is_empty() && !reg_slots.is_empty() {
            let (k, j) = (rng.pick(&lane_slots), rng.pick(&reg_slots));
            std::mem::swap(&mut lanes[k], &mut regs[j]);
        }
    }
    warp_layout_from_packed([regs, lanes, bases(src, Label::Warp)], &out_dims)
}
