//! Anchor layouts: what the ops that touch memory or tensor cores need, built from the hardware
//! families of `tessera_layout::families` exactly as Triton chooses them.
//!
//! - **Loads and stores** (Triton's `coalesce` pass): the dimensions ordered by decreasing
//!   contiguity of the pointer tile (ties: the last dimension first); per thread along the most
//!   contiguous dimension `min(alignment, contiguity, 128 bits / element bits)` elements, where
//!   alignment is the pointer's divisibility in elements; memory ops of the same shape and order
//!   that are connected through the kernel's data flow take the largest of their counts (a
//!   store never more than its own 128 bits), and no op more than `elements / threads`. Lanes
//!   and then warps fill the dimensions in that order ([`blocked_params`], Triton's
//!   `BlockedEncodingAttr` builder).
//! - **`dot`**: the accumulator and result in `nvidia_mma` v2 with instruction `[16, 8]`
//!   (`mma.sync`), warps as Triton's `warpsPerTileV2`; operand A (B) in `dot_operand` 0 (1) of
//!   that parent with `k_width = 32 / element bits` (2 for 16-bit, 4 for 8-bit elements).
//!   On the Hopper target, where `tessera_layout::plan::wgmma_dot::wgmma_shape` gives a
//!   `wgmma`: the accumulator in `nvidia_mma` v3 (instruction `[16, N, 16]`, warpgroups over
//!   M), and no anchor on the operands (they go through shared memory from any layout).
//!   On the AMD target (`v_mfma`, `infer::dot::mfma_choice`): the accumulator in `amd_mfma`
//!   v3, transposed, on waves of two warps ([`mfma_anchor_layouts`]), the operands in its
//!   `dot_operand` with `k_width = 4`.
//! - **`gather`** and **reductions**: the axis first in the order, held by registers and at most
//!   the 32 lanes of a warp, warps on the other dimensions ([`axis_in_warp`]).

use super::layouts::{normalize, LANES};
use std::fmt;
use tessera_layout::families::shape::{
    ensure_layout_not_larger_than, ensure_layout_not_smaller_than,
};
use tessera_layout::families::Blocked;
use tessera_layout::families::{DotOperand, MmaParent, NvidiaMma};
use tessera_layout::plan::mfma::{mfma_layouts, MfmaInstr};
use tessera_layout::plan::wgmma_dot::WgmmaShape;
use tessera_layout::{LayoutError, LinearLayout};

/// Where a layout comes from (printed by the explain output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `BlockedEncodingAttr` parameters, per dimension.
    Blocked {
        size_per_thread: Vec<u32>,
        threads_per_warp: Vec<u32>,
        warps_per_cta: Vec<u32>,
        order: Vec<u32>,
    },
    /// `nvidia_mma` v2, instruction `[16, 8]`.
    Mma { warps_per_cta: Vec<u32> },
    /// `nvidia_mma` v3 (`wgmma`), instruction `[16, instr_n, 16]`.
    MmaV3 {
        warps_per_cta: Vec<u32>,
        instr_n: u32,
    },
    /// `dot_operand` of an `nvidia_mma` v2 parent.
    DotOperand {
        op_idx: u32,
        k_width: u32,
        warps_per_cta: Vec<u32>,
    },
    /// `amd_mfma` (v3, transposed) on `waves` (`[M, N]`), or operand `op_idx` of it (`Some`),
    /// on 32-lane warps (wave lane bit 5 = warp bit 0).
    Mfma {
        instr: MfmaInstr,
        waves: [u32; 2],
        op_idx: Option<u32>,
    },
    /// Another layout transformed by a shape op (`what`: e.g. `trans [1, 0]`).
    Derived {
        what: String,
        from: Box<LinearLayout>,
    },
}

impl Origin {
    /// The parameters of a blocked origin, as the layout family takes them.
    pub fn as_blocked(&self) -> Option<Blocked<'_>> {
        match self {
            Origin::Blocked {
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            } => Some(Blocked::new(
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            )),
            _ => None,
        }
    }

    /// The family and its parameters, e.g. `blocked{spt=[4], tpw=[32], wpc=[4], order=[0]}`.
    pub fn family_text(&self) -> Option<String> {
        if let Some(b) = self.as_blocked() {
            return Some(format!(
                "blocked{{spt={:?}, tpw={:?}, wpc={:?}, order={:?}}}",
                b.size_per_thread, b.threads_per_warp, b.warps_per_cta, b.order
            ));
        }
        match self {
            Origin::Blocked { .. } | Origin::Derived { .. } => None,
            Origin::Mma { warps_per_cta } => Some(format!(
                "nvidia_mma{{v2, instr=[16, 8], wpc={warps_per_cta:?}}}"
            )),
            Origin::MmaV3 {
                warps_per_cta,
                instr_n,
            } => Some(format!(
                "nvidia_mma{{v3, instr=[16, {instr_n}, 16], wpc={warps_per_cta:?}}}"
            )),
            Origin::DotOperand {
                op_idx,
                k_width,
                warps_per_cta,
            } => Some(format!(
                "dot_operand{{op={op_idx}, k_width={k_width}, parent=nvidia_mma{{v2, wpc={warps_per_cta:?}}}}}"
            )),
            Origin::Mfma {
                instr,
                waves,
                op_idx,
            } => {
                let parent = format!(
                    "amd_mfma{{v3, instr=[{nd}, {nd}, {}], transposed, waves={waves:?}, wave lane 5 = warp 0}}",
                    instr.k(),
                    nd = instr.nd
                );
                Some(match op_idx {
                    None => parent,
                    Some(i) => format!(
                        "dot_operand{{op={i}, k_width={}, parent={parent}}}",
                        instr.k_width()
                    ),
                })
            }
        }
    }
}

/// Why an anchor layout could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnchorError {
    /// A tile dimension of `size` elements does not fit the layout families' `u32` sizes.
    TooLarge { size: u64 },
    /// The origin is not a blocked layout.
    NotBlocked,
    /// The hardware family rejected the shape.
    Family(LayoutError),
    /// The family's layout could not be normalised onto the tile (the reason, from `layouts`).
    Normalize(String),
}

impl fmt::Display for AnchorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnchorError::TooLarge { size } => write!(f, "a dimension of {size} is too large"),
            AnchorError::NotBlocked => f.write_str("not a blocked layout"),
            AnchorError::Family(e) => write!(f, "{e}"),
            AnchorError::Normalize(e) => f.write_str(e),
        }
    }
}

fn to_u32(shape: &[u64]) -> Result<Vec<u32>, AnchorError> {
    shape
        .iter()
        .map(|&size| u32::try_from(size).map_err(|_| AnchorError::TooLarge { size }))
        .collect()
}

/// `layout` normalised onto the tile `shape` (see `layouts::normalize`).
fn normalized(
    layout: Result<LinearLayout, LayoutError>,
    shape: &[u64],
    num_warps: u32,
) -> Result<LinearLayout, AnchorError> {
    normalize(&layout.map_err(AnchorError::Family)?, shape, num_warps)
        .map_err(AnchorError::Normalize)
}

/// The layout of a blocked family on `shape`, normalised.
pub fn blocked_layout(
    origin: &Origin,
    shape: &[u64],
    num_warps: u32,
) -> Result<LinearLayout, AnchorError> {
    let blocked = origin.as_blocked().ok_or(AnchorError::NotBlocked)?;
    normalized(blocked.to_linear_layout(&to_u32(shape)?), shape, num_warps)
}

/// Triton's `BlockedEncodingAttr` builder: `per_thread` elements along `order[0]` (1 elsewhere);
/// lanes, then warps, fill the dimensions in `order`, the last one taking what is left.
pub fn blocked_params(shape: &[u64], order: &[usize], per_thread: u32, num_warps: u32) -> Origin {
    let rank = shape.len();
    let mut spt = vec![1u32; rank];
    spt[order[0]] = per_thread.max(1);
    let mut tpw = vec![1u32; rank];
    let mut wpc = vec![1u32; rank];
    let mut remaining_lanes = LANES;
    let mut remaining_threads = LANES * num_warps;
    let mut remaining_warps = num_warps;
    let mut prev_lanes = 1u32;
    let mut prev_warps = 1u32;
    for &i in &order[..rank - 1] {
        let per_dim = (shape[i] / u64::from(spt[i])).clamp(1, u64::from(u32::MAX)) as u32;
        let threads_per_cta = remaining_threads.clamp(1, per_dim.max(1));
        tpw[i] = threads_per_cta.clamp(1, remaining_lanes);
        wpc[i] = (threads_per_cta / tpw[i]).clamp(1, remaining_warps);
        remaining_warps /= wpc[i];
        remaining_lanes /= tpw[i];
        remaining_threads /= threads_per_cta;
        prev_lanes *= tpw[i];
        prev_warps *= wpc[i];
    }
    let last = order[rank - 1];
    tpw[last] = LANES / prev_lanes;
    wpc[last] = (num_warps / prev_warps).max(1);
    Origin::Blocked {
        size_per_thread: spt,
        threads_per_warp: tpw,
        warps_per_cta: wpc,
        order: order.iter().map(|&o| o as u32).collect(),
    }
}

/// The blocked layout `origin` with its warps moved off the dimensions in `axes` where the
/// shape leaves room (same elements per thread and lanes, so every warp's accesses stay as
/// coalesced): warps go first to the other dimensions in `order`, as many as each holds
/// (`shape / (size_per_thread × threads_per_warp)`), the rest to the last dimension of the order.
/// `None` when that puts no fewer warps along `axes`.
pub fn warps_off_axes(
    origin: &Origin,
    shape: &[u64],
    axes: &[usize],
    num_warps: u32,
) -> Option<Origin> {
    let Blocked {
        size_per_thread,
        threads_per_warp,
        warps_per_cta,
        order,
    } = origin.as_blocked()?;
    let along = |wpc: &[u32]| -> u32 { axes.iter().map(|&a| wpc[a].trailing_zeros()).sum() };
    let mut wpc = vec![1u32; shape.len()];
    let mut left = num_warps;
    for &d in order
        .iter()
        .map(|&d| d as usize)
        .filter(|d| !axes.contains(d))
        .collect::<Vec<_>>()
        .iter()
    {
        let room = (shape[d] / u64::from(size_per_thread[d] * threads_per_warp[d])).max(1);
        let w = room.min(u64::from(left)).max(1) as u32;
        wpc[d] = w;
        left /= w;
    }
    let spill = order
        .iter()
        .map(|&d| d as usize)
        .rev()
        .find(|d| axes.contains(d))?;
    wpc[spill] *= left;
    (along(&wpc) < along(warps_per_cta)).then(|| Origin::Blocked {
        size_per_thread: size_per_thread.to_vec(),
        threads_per_warp: threads_per_warp.to_vec(),
        warps_per_cta: wpc,
        order: order.to_vec(),
    })
}

/// Triton's `getOrderFromContiguity`: dimensions by decreasing contiguity, ties to the later
/// dimension.
pub fn order_from_contiguity(contiguity: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..contiguity.len()).rev().collect();
    order.sort_by(|&x, &y| contiguity[y].cmp(&contiguity[x]));
    order
}

/// Triton's `getNumElementsPerThread` for one memory op: along `order0`, the run of
/// consecutive, aligned elements a thread may access at once, at most 128 bits.
pub fn own_per_thread(
    contiguity: u64,
    divisibility_bytes: u64,
    shape_along: u64,
    element_bits: u32,
) -> u32 {
    let element_bytes = u64::from(element_bits / 8).max(1);
    let max_multiple = (divisibility_bytes / element_bytes).max(1);
    let max_contig = contiguity.min(shape_along);
    let alignment = max_multiple.min(max_contig);
    alignment.min(u64::from((128 / element_bits).max(1))).max(1) as u32
}

/// Triton's `warpsPerTileV2` for an accumulator of `[m, n]` and `num_warps` warps.
pub fn mma_warps(m: u64, n: u64, num_warps: u32) -> Vec<u32> {
    let mut ret = [1u64, 1u64];
    loop {
        if ret[0] * ret[1] >= u64::from(num_warps) {
            break;
        }
        if m / 16 / ret[0] >= n / (8 * 2) / ret[1] {
            if ret[0] < m / 16 {
                ret[0] *= 2;
            } else {
                ret[1] *= 2;
            }
        } else {
            ret[1] *= 2;
        }
    }
    vec![ret[0] as u32, ret[1] as u32]
}

/// Triton's `warpsPerTileV2` for a dot in a chain (a dot whose result flows into another dot, or
/// that takes another's): all warps along the longer dimension of the chain's first dot
/// (`[num_warps, 1]` when `m ≥ n`, else `[1, num_warps]`), so that the first dot's accumulator
/// and the next dot's `a` operand split rows among warps alike and `p · v` takes `p` from
/// registers. `None` when that dimension has fewer than one instruction tile (16 rows, 8
/// columns) per warp; the per-dot rule ([`mma_warps`]) applies then.
pub fn chained_mma_warps(m: u64, n: u64, num_warps: u32) -> Option<Vec<u32>> {
    let nw = u64::from(num_warps);
    if m >= n {
        (m >= 16 * nw).then(|| vec![num_warps, 1])
    } else {
        (n >= 8 * nw).then(|| vec![1, num_warps])
    }
}

/// The `nvidia_mma` v2 accumulator layout of `[m, n]`.
pub fn mma_layout(
    shape: &[u64],
    warps: &[u32],
    num_warps: u32,
) -> Result<LinearLayout, AnchorError> {
    let l = NvidiaMma::new(2, 0, warps, &[16, 8]).to_linear_layout(&to_u32(shape)?);
    normalized(l, shape, num_warps)
}

/// The `nvidia_mma` v3 (`wgmma`) accumulator layout of a dot of `shape`.
pub fn mma_v3_layout(shape: &WgmmaShape, num_warps: u32) -> Result<LinearLayout, AnchorError> {
    let [m, n, _] = shape.mnk;
    let warps = shape.warps_per_cta();
    let l = NvidiaMma::new(3, 0, &warps, &[16, shape.instr_n, 16]).to_linear_layout(&[m, n]);
    normalized(l, &[u64::from(m), u64::from(n)], num_warps)
}

/// The `v_mfma` layouts `[a, b, acc]` of a dot of `[m, k] × [k, n]` with `instr` on `waves`
/// (`tessera_layout::plan::mfma::mfma_layouts`: transposed accumulator, warps as half-waves).
pub fn mfma_anchor_layouts(
    instr: MfmaInstr,
    waves: [u32; 2],
    [m, n, k]: [u64; 3],
    num_warps: u32,
) -> Result<[LinearLayout; 3], AnchorError> {
    let s = to_u32(&[m, n, k])?;
    let [a, b, acc] =
        mfma_layouts(instr, waves, [s[0], s[1], s[2]]).map_err(AnchorError::Family)?;
    Ok([
        normalized(Ok(a), &[m, k], num_warps)?,
        normalized(Ok(b), &[k, n], num_warps)?,
        normalized(Ok(acc), &[m, n], num_warps)?,
    ])
}

/// Operand `op_idx` (0: A `[M, K]`, 1: B `[K, N]`) of the mma v2 parent with `warps`.
pub fn dot_operand_layout(
    op_idx: u32,
    k_width: u32,
    shape: &[u64],
    warps: &[u32],
    num_warps: u32,
) -> Result<LinearLayout, AnchorError> {
    let parent = NvidiaMma::new(2, 0, warps, &[16, 8]);
    let l = DotOperand::new(op_idx, k_width, MmaParent::Nvidia(parent))
        .to_linear_layout(&to_u32(shape)?);
    normalized(l, shape, num_warps)
}

/// Blocked parameters that keep dimension `axis` inside a warp: the axis first in the order,
/// `max(1, n / 32)` elements of it per thread and `min(32, n)` lanes along it, the other lanes
/// and all warps on the other dimensions (last dimension first). For a rank-1 tile the warps
/// hold copies.
pub fn axis_in_warp(shape: &[u64], axis: usize, num_warps: u32) -> Origin {
    let rank = shape.len();
    let n_axis = shape[axis].max(1);
    let mut order = vec![axis];
    order.extend((0..rank).rev().filter(|&d| d != axis));
    let mut spt = vec![1u32; rank];
    let mut tpw = vec![1u32; rank];
    let mut wpc = vec![1u32; rank];
    spt[axis] = (n_axis / u64::from(LANES)).max(1) as u32;
    tpw[axis] = n_axis.min(u64::from(LANES)) as u32;
    let mut lanes_left = LANES / tpw[axis];
    for &d in &order[1..] {
        let t = (shape[d].min(u64::from(lanes_left))).max(1) as u32;
        tpw[d] = t;
        lanes_left /= t;
    }
    // Lanes beyond the tile: on the last dimension of the order (copies).
    let spill = *order.last().unwrap_or(&axis);
    tpw[spill] *= lanes_left;
    let mut warps_left = num_warps;
    for &d in &order[1..] {
        let room = (shape[d] / u64::from(spt[d] * tpw[d])).max(1);
        let w = (room.min(u64::from(warps_left))).max(1) as u32;
        wpc[d] = w;
        warps_left /= w;
    }
    if rank > 1 {
        let spill = order[rank - 1];
        wpc[spill] *= warps_left;
    }
    Origin::Blocked {
        size_per_thread: spt,
        threads_per_warp: tpw,
        warps_per_cta: wpc,
        order: order.iter().map(|&o| o as u32).collect(),
    }
}

/// `layout` refitted to another `shape` of the same rank: dimensions that grow repeat in
/// registers, dimensions that shrink lose their largest bases (registers removed, lanes and
/// warps zeroed) — Triton's `ensureLayoutNotSmallerThan` / `ensureLayoutNotLargerThan`.
pub fn fit(layout: &LinearLayout, shape: &[u64], num_warps: u32) -> Option<LinearLayout> {
    let s = to_u32(shape).ok()?;
    let grown = ensure_layout_not_smaller_than(layout, &s).ok()?;
    let fitted = ensure_layout_not_larger_than(&grown, &s, false).ok()?;
    normalize(&fitted, shape, num_warps).ok()
}
