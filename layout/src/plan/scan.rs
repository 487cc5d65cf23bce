//! Scans (`cumsum`, `cumprod`) along one axis of a distributed layout: which hardware holds the
//! partner of each element, one level per bit of the axis.
//!
//! The scan is the butterfly form of an inclusive prefix over the axis index `i`: every element
//! keeps a prefix `p` (of its aligned block of `2^k` elements along the axis) and the block's
//! total `t`. Level `k` pairs each element with the one whose axis index differs in bit `k`
//! (its *partner*, holding the other half of the next block): both take `t ← t ⊕ t'`, and the
//! element of the upper half (bit `k` set) takes `p ← t' ⊕ p` (a reverse scan: the lower half
//! takes `p ← p ⊕ t'`). After the top level `p` is the inclusive prefix. Floats are therefore
//! summed as a balanced tree over aligned blocks of the axis.
//!
//! Since a layout `L` is linear, the partner of the element at hardware index `h` is at
//! `h ⊕ L⁻¹(e_k)` for every `h` (`e_k`: the unit vector of axis bit `k`). The planner finds that
//! hardware vector once per level, preferring registers, then lanes, then warps:
//! - registers only: the partner is another register of the same thread;
//! - lanes (and registers): one `shfl.sync.bfly` with the lane part as its mask, each thread
//!   sending the register that its partner lane needs;
//! - warps: through shared memory, every element's total stored in its slot and the partner's
//!   read back after a barrier. The slot of tile index `i` is `S·i`, `S` the change of basis to
//!   (the lanes' images, the registers', the warps', unit vectors): the lanes of one access
//!   write and read distinct consecutive slots, so no access has a bank conflict;
//! - on AMD ([`plan_scan_on`] with [`Vendor::Amd`]), a partner in the other warp of the same
//!   64-lane wave (warp part exactly warp bit 0, `plan::wave`) is one `ds_bpermute` of the wave
//!   ([`ScanRoute::WaveShuffle`]: the lane part with lane bit 5 set as its mask), not shared
//!   memory.

use super::wave::WARP_LANE_BITS;
use super::{PlanError, Vendor};
use crate::{Label, LinearLayout};
use core::fmt;
use std::format;
use std::vec::Vec;

/// Where the partners of one level of a scan are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScanLevel {
    /// The bit of the axis index this level pairs on.
    pub axis_bit: u32,
    /// `L⁻¹(e_axis_bit)`: the register, lane and warp parts of the partner's hardware offset.
    pub registers: u32,
    /// The lane part of the partner's offset (non-zero: the partner is in another lane).
    pub lanes: u32,
    /// The warp part of the partner's offset (non-zero: the partner is in another warp).
    pub warps: u32,
    /// How the partner's value is fetched (decided by [`plan_scan_on`] from the parts above and
    /// the vendor).
    pub route: ScanRoute,
}

impl ScanLevel {
    /// How the partner's value is fetched.
    pub fn route(&self) -> ScanRoute {
        self.route
    }

    /// The lane mask of a [`ScanRoute::WaveShuffle`]: the partner's lane in the 64-lane wave is
    /// this thread's `⊕` it (the lane part, warp bit 0 as lane bit 5).
    pub fn wave_mask(&self) -> u32 {
        self.lanes | (self.warps & 1) << WARP_LANE_BITS
    }
}

/// The movement of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanRoute {
    /// Another register of the same thread.
    Registers,
    /// A `shfl.sync.bfly` from another lane.
    Shuffle,
    /// Through shared memory (another warp), with a barrier.
    Shared,
    /// AMD: a `ds_bpermute` of the whole 64-lane wave (the other warp of the wave).
    WaveShuffle,
}

/// A scan along `axis`, one level per bit of the axis, lowest bit first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScanPlan {
    /// The scanned axis.
    pub axis: usize,
    /// The levels, lowest bit of the axis first.
    pub levels: Vec<ScanLevel>,
    /// `S·e_j` for every bit `j` of the packed tile index when a level goes through shared
    /// memory (empty otherwise): the slot of tile index `i` is [`ScanPlan::slot`]`(i)`.
    pub slot_columns: Vec<u64>,
}

impl ScanPlan {
    /// The shared-memory slot of packed tile index `index`: `S·index`.
    pub fn slot(&self, index: u64) -> u64 {
        let bits = self.slot_columns.iter().enumerate();
        bits.filter(|(j, _)| index >> j & 1 == 1)
            .fold(0, |slot, (_, column)| slot ^ column)
    }

    /// The number of levels of each route: (registers, shuffles, shared memory).
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.count(ScanRoute::Registers),
            self.count(ScanRoute::Shuffle),
            self.count(ScanRoute::Shared),
        )
    }

    /// The number of levels of `route`.
    pub fn count(&self, route: ScanRoute) -> usize {
        self.levels.iter().filter(|l| l.route() == route).count()
    }
}

impl fmt::Display for ScanPlan {
    /// E.g. `scan axis=1: 2 register level(s), 5 shuffle level(s), 1 shared-memory level(s)`
    /// (and `, 1 wave-shuffle level(s)` where there are some).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (r, s, m) = self.counts();
        write!(
            f,
            "scan axis={}: {r} register level(s), {s} shuffle level(s), {m} shared-memory level(s)",
            self.axis
        )?;
        match self.count(ScanRoute::WaveShuffle) {
            0 => Ok(()),
            w => write!(f, ", {w} wave-shuffle level(s)"),
        }
    }
}

/// Plans a scan of a distributed `layout` (inputs among register, lane, warp; block bases, if
/// any, all zero) along `axis`, for NVIDIA's GPUs.
pub fn plan_scan(layout: &LinearLayout, axis: usize) -> Result<ScanPlan, PlanError> {
    plan_scan_on(Vendor::Nvidia, layout, axis)
}

/// [`plan_scan`] for `vendor`'s GPUs: on AMD a level whose partner is in the other warp of the
/// wave is a [`ScanRoute::WaveShuffle`].
pub fn plan_scan_on(
    vendor: Vendor,
    layout: &LinearLayout,
    axis: usize,
) -> Result<ScanPlan, PlanError> {
    if axis >= layout.num_out_dims() {
        return Err(PlanError::new(format!(
            "scan axis {axis} of a layout with {} output dimension(s)",
            layout.num_out_dims()
        )));
    }
    for i in 0..layout.num_in_dims() {
        let label = layout.in_label(i);
        let in_one_cta = label == Label::Block
            && (0..layout.in_bits_at(i)).all(|k| layout.packed_basis(i, k as usize) == 0);
        if !matches!(label, Label::Register | Label::Lane | Label::Warp) && !in_one_cta {
            return Err(PlanError::NotDistributed {
                role: "scanned",
                label,
            });
        }
    }
    // Columns in preference order: registers, lanes, warps.
    let mut columns: Vec<(Label, u32, u64)> = Vec::new();
    for label in [Label::Register, Label::Lane, Label::Warp] {
        if let Some(i) = layout.in_index(label) {
            for k in 0..layout.in_bits(label) {
                columns.push((label, k, layout.packed_basis(i, k as usize)));
            }
        }
    }
    let offset = layout.out_offset(axis);
    let mut levels = Vec::new();
    for bit in 0..layout.out_bits(Label::Dim(axis as u8)) {
        let target = 1u64 << (offset + bit);
        let choice = solve(&columns, target).ok_or_else(|| {
            PlanError::new(format!(
                "axis bit {bit} of dimension {axis} is not covered by the layout"
            ))
        })?;
        let mut level = ScanLevel {
            axis_bit: bit,
            registers: 0,
            lanes: 0,
            warps: 0,
            route: ScanRoute::Registers,
        };
        for (j, (label, k, _)) in columns.iter().enumerate() {
            if choice >> j & 1 == 1 {
                match label {
                    Label::Register => level.registers |= 1 << k,
                    Label::Lane => level.lanes |= 1 << k,
                    _ => level.warps |= 1 << k,
                }
            }
        }
        let whole_warps = layout.in_bits(Label::Lane) == WARP_LANE_BITS;
        level.route = match (level.warps, level.lanes) {
            (1, _) if vendor == Vendor::Amd && whole_warps => ScanRoute::WaveShuffle,
            (0, 0) => ScanRoute::Registers,
            (0, _) => ScanRoute::Shuffle,
            _ => ScanRoute::Shared,
        };
        levels.push(level);
    }
    let shared = levels.iter().any(|l| l.route() == ScanRoute::Shared);
    let slot_columns = if shared {
        slot_columns(layout)
    } else {
        Vec::new()
    };
    Ok(ScanPlan {
        axis,
        levels,
        slot_columns,
    })
}

/// `S·e_j` for each bit `j` of the packed tile index, where `S` is the inverse of the basis
/// made of the independent images of the lanes, then the registers, then the warps, completed
/// by unit vectors: lane `k`'s element lands in slot bit `k`.
fn slot_columns(layout: &LinearLayout) -> Vec<u64> {
    let bits: u32 = (0..layout.num_out_dims())
        .map(|d| layout.out_bits(Label::Dim(d as u8)))
        .sum();
    let mut candidates = Vec::new();
    for label in [Label::Lane, Label::Register, Label::Warp] {
        if let Some(i) = layout.in_index(label) {
            candidates
                .extend((0..layout.in_bits(label)).map(|k| layout.packed_basis(i, k as usize)));
        }
    }
    candidates.extend((0..bits).map(|j| 1u64 << j));
    // Reduced rows (vector, its combination of kept basis vectors), leading bits distinct.
    let mut rows: Vec<(u64, u64)> = Vec::new();
    let mut kept = 0u32;
    for v in candidates {
        let (v, combo) = reduce(&rows, v, 1u64 << kept);
        if v != 0 {
            rows.push((v, combo));
            rows.sort_by_key(|r| core::cmp::Reverse(r.0));
            kept += 1;
        }
    }
    (0..bits).map(|j| reduce(&rows, 1u64 << j, 0).1).collect()
}

/// `v` reduced by `rows` (sorted by leading bit, highest first), and `combo` XORed with the
/// combinations of the rows used.
fn reduce(rows: &[(u64, u64)], mut v: u64, mut combo: u64) -> (u64, u64) {
    for &(r, c) in rows {
        if v ^ r < v {
            v ^= r;
            combo ^= c;
        }
    }
    (v, combo)
}

/// A set of columns (bit `j` = column `j`) whose XOR is `target`, using the shortest prefix of
/// the columns that can (so registers before lanes before warps), or `None`.
fn solve(columns: &[(Label, u32, u64)], target: u64) -> Option<u64> {
    // Reduced rows: (vector, the columns combined into it), pivot = highest set bit.
    let mut rows: Vec<(u64, u64)> = Vec::new();
    for (j, &(_, _, v)) in columns.iter().enumerate() {
        let (v, combo) = reduce(&rows, v, 1u64 << j);
        if v != 0 {
            rows.push((v, combo));
            rows.sort_by_key(|r| core::cmp::Reverse(r.0));
        }
        let (t, combo_t) = reduce(&rows, target, 0);
        if t == 0 {
            return Some(combo_t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::blocked::blocked;

    fn check(layout: &LinearLayout, axis: usize) -> ScanPlan {
        let plan = plan_scan(layout, axis).unwrap();
        let off = layout.out_offset(axis);
        for level in &plan.levels {
            let image = layout.apply_packed(&[level.registers, level.lanes, level.warps]);
            assert_eq!(image, 1u64 << (off + level.axis_bit), "{level:?}");
        }
        plan
    }

    #[test]
    fn blocked_rows_and_columns() {
        // [64, 64] over 4 warps: 4 registers × 8 lanes along dim 1, 4 lanes × 4 warps along dim 0.
        let l = blocked(&[1, 4], &[4, 8], &[4, 1], &[1, 0], &[64, 64]).unwrap();
        let rows = check(&l, 1);
        assert_eq!(rows.counts(), (3, 3, 0));
        let cols = check(&l, 0);
        assert_eq!(cols.counts(), (2, 2, 2));
        assert!(format!("{cols}").contains("2 shared-memory level(s)"));
        assert!(rows.slot_columns.is_empty());
        slots_are_a_bijection_with_lanes_consecutive(&l, &cols);
    }

    /// Law: `slot` is a bijection of the tile, and the lanes of a warp hold slots that differ
    /// only in their lowest bits (one slot per lane: no bank conflict).
    fn slots_are_a_bijection_with_lanes_consecutive(l: &LinearLayout, plan: &ScanPlan) {
        let bits = plan.slot_columns.len();
        let mut seen = std::vec![false; 1 << bits];
        for i in 0..1u64 << bits {
            let s = plan.slot(i) as usize;
            assert!(!seen[s], "slot {s} twice");
            seen[s] = true;
        }
        let lanes = l.in_bits(Label::Lane);
        for k in 0..lanes {
            let image = l.apply_packed(&[0, 1 << k, 0]);
            assert_eq!(plan.slot(image), 1 << k);
        }
    }

    #[test]
    fn lowest_hardware_first() {
        let l = blocked(&[4], &[32], &[4], &[0], &[1024]).unwrap();
        let plan = check(&l, 0);
        let routes: Vec<ScanRoute> = plan.levels.iter().map(ScanLevel::route).collect();
        assert_eq!(&routes[..2], &[ScanRoute::Registers, ScanRoute::Registers]);
        assert!(routes[2..7].iter().all(|&r| r == ScanRoute::Shuffle));
        assert!(routes[7..9].iter().all(|&r| r == ScanRoute::Shared));
        assert_eq!(routes[9], ScanRoute::Registers);
    }

    /// On AMD a level whose partner is in the other warp of the wave (warp part = warp bit 0)
    /// is a wave shuffle whose mask is the lane part with lane bit 5; a partner two warps away
    /// still goes through shared memory; NVIDIA's plan of the same layout is unchanged.
    #[test]
    fn amd_scans_cross_the_warps_of_a_wave_by_shuffles() {
        let l = blocked(&[4], &[32], &[4], &[0], &[1024]).unwrap();
        let nvidia = plan_scan(&l, 0).unwrap();
        let amd = plan_scan_on(Vendor::Amd, &l, 0).unwrap();
        let routes: Vec<ScanRoute> = amd.levels.iter().map(ScanLevel::route).collect();
        assert_eq!(routes[7], ScanRoute::WaveShuffle);
        assert_eq!(amd.levels[7].wave_mask(), 32);
        assert_eq!(routes[8], ScanRoute::Shared);
        for (a, n) in amd.levels.iter().zip(&nvidia.levels) {
            assert_eq!(
                (a.registers, a.lanes, a.warps),
                (n.registers, n.lanes, n.warps)
            );
            if a.route != ScanRoute::WaveShuffle {
                assert_eq!(a.route, n.route);
            }
        }
        assert!(format!("{amd}").ends_with("1 shared-memory level(s), 1 wave-shuffle level(s)"));
        assert!(!format!("{nvidia}").contains("wave"));
    }

    #[test]
    fn axis_out_of_range_is_an_error() {
        let l = blocked(&[1], &[32], &[4], &[0], &[128]).unwrap();
        assert!(plan_scan(&l, 1).is_err());
    }
}
