//! `dot(a, b, acc)` as `mma.sync.aligned` instructions on register fragments: which instruction,
//! and for each accumulator tile and K step which registers of `a`, `b` and `acc` form its
//! fragments.
//!
//! | operands | instruction | per thread |
//! |---|---|---|
//! | f16 → f32 | `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` | a: 8 × f16 in 4 words, b: 4 in 2, c/d: 4 × f32 |
//! | bf16 → f32 | `… m16n8k16 … .f32.bf16.bf16.f32` | as f16 |
//! | i8 → i32 | `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` | a: 16 × i8 in 4 words, b: 8 in 2, c/d: 4 × i32 |
//! | f8e4m3 / f8e5m2 → f32 | the f16 instruction on elements converted to f16 (exact) | as f16 |
//!
//! **Fragments from layouts.** With `g = lane / 4`, `t = lane % 4`, PTX puts element `i` of the
//! A fragment at row `g + 8·i₁` and K index `κ(i, t)` (f16: `2t + i₀ + 8·i₂`; s8: `4t + i₀₁ +
//! 16·i₃`), B's at K index `κ` and column `g`, and `d_j` at `(g + 8·j₁, 2t + j₀)`. The sum over
//! `κ` is the same for any bijection `σ` of the K coordinates used by both operands, so the
//! planner reads the K directions off the layouts: the low `κ` bits are the first K-direction
//! registers of `a` (the elements of a 32-bit word), the lane bits 0–1 are `a`'s lanes 0–1 (K
//! directions), the top `κ` bit the next K-direction register; `b` must hold the same K
//! directions at the corresponding places, lanes 2–4 must be the rows 1, 2, 4 (columns for
//! `b`), and warps must tile `a`'s M and `b`'s N exactly as the accumulator's. Every remaining
//! K direction of `a`'s registers is a K step (`b` holds it in registers too); remaining M/N
//! directions of the accumulator's registers are tiles. For each accumulator tile and K step the
//! registers of every fragment element are resolved at planning time (a linear solve on the
//! register bases). Any mismatch is an error naming the operand.

use super::movement::xor_bits;
use super::space::RegisterSolver;
use super::{bases, PlanError};
use crate::{Label, LinearLayout};
use core::fmt;
use std::vec::Vec;

/// The shape of an `mma` instruction: `m × n` outputs, `k` products each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaShape {
    /// Rows of the output.
    pub m: u32,
    /// Columns of the output.
    pub n: u32,
    /// Products summed per output (the reduction depth).
    pub k: u32,
}

impl fmt::Display for MmaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mma.sync m{}n{}k{}", self.m, self.n, self.k)
    }
}

/// Why `a`, `b` and the accumulator do not form `mma` fragments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DotError {
    /// An operand is not a rank-2 tile on 32 lanes.
    NotRank2 {
        /// `"a"`, `"b"` or `"accumulator"`.
        operand: &'static str,
    },
    /// Lane bit `lane` (0 or 1) is not the same K direction of `a` and `b` (coordinates given).
    LaneNotSharedK {
        /// The lane bit.
        lane: u32,
        /// Its coordinates in `a`.
        a: (u32, u32),
        /// Its coordinates in `b`.
        b: (u32, u32),
    },
    /// Lane bit `lane` of the accumulator is not column `column`.
    AccumulatorLaneNotColumn {
        /// The lane bit.
        lane: u32,
        /// The column it should be.
        column: u32,
    },
    /// Lane bit `lane` (2 to 4) is not row `row` of `a` and the accumulator, column `row` of `b`.
    LaneNotRow {
        /// The lane bit.
        lane: u32,
        /// The row it should be.
        row: u32,
    },
    /// `a`, `b` and the accumulator use different numbers of warps.
    WarpCounts,
    /// Warp bit `warp` covers `accumulator` but not the matching rows of `a` / columns of `b`.
    WarpTiling {
        /// The warp bit.
        warp: u32,
        /// Its coordinates in the accumulator.
        accumulator: (u32, u32),
        /// Its coordinates in `a`.
        a: (u32, u32),
        /// Its coordinates in `b`.
        b: (u32, u32),
    },
    /// `a` and `b` hold different K directions in registers.
    DifferentKRegisters {
        /// The K coordinates of `a`'s register bits.
        a: Vec<u32>,
        /// The K coordinates of `b`'s register bits.
        b: Vec<u32>,
    },
    /// `a` holds too few K directions in registers for one instruction.
    TooFewKRegisters,
    /// `operand` holds no register for the element at `at` (and the fragment from there).
    NoRegister {
        /// `"a"` or `"b"`.
        operand: &'static str,
        /// The element's coordinates.
        at: (u32, u32),
    },
}

impl fmt::Display for DotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DotError::NotRank2 { operand } => write!(
                f,
                "{operand} must be a rank-2 tile on 32 lanes (a batched dot is not supported)"
            ),
            DotError::LaneNotSharedK { lane, a, b } => write!(
                f,
                "lane {lane} of a and b must be the same K direction (mma fragment), got a {a:?} b {b:?}"
            ),
            DotError::AccumulatorLaneNotColumn { lane, column } => write!(
                f,
                "lane {lane} of the accumulator must be column {column} (mma fragment)"
            ),
            DotError::LaneNotRow { lane, row } => write!(
                f,
                "lane {lane} must be row {row} of a and the accumulator and column {row} of b"
            ),
            DotError::WarpCounts => {
                f.write_str("a, b and the accumulator use different numbers of warps")
            }
            DotError::WarpTiling {
                warp,
                accumulator: (m, n),
                a,
                b,
            } => write!(
                f,
                "warp {warp} covers accumulator ({m}, {n}) but a {a:?} and b {b:?}"
            ),
            DotError::DifferentKRegisters { a, b } => write!(
                f,
                "a and b hold different K directions in registers ({a:?} vs {b:?})"
            ),
            DotError::TooFewKRegisters => {
                f.write_str("a holds too few K directions in registers for one mma")
            }
            DotError::NoRegister {
                operand,
                at: (r, c),
            } => write!(f, "{operand} has no register for ({r}, {c})"),
        }
    }
}

/// Which `mma.sync` a dot uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaKind {
    /// f16 operands, `m16n8k16`.
    F16,
    /// bf16 operands, `m16n8k16`.
    Bf16,
    /// f8 operands converted to f16 (exact), then the f16 instruction.
    F8 {
        /// `e4m3` (true) or `e5m2` (false).
        e4m3: bool,
    },
    /// i8 operands with an i32 accumulator, `m16n8k32`.
    S8,
}

impl MmaKind {
    /// The instruction's shape `m16n8k16` or `m16n8k32`.
    pub fn shape(self) -> MmaShape {
        MmaShape {
            m: 16,
            n: 8,
            k: if self == MmaKind::S8 { 32 } else { 16 },
        }
    }

    /// Bits of one fragment element (f8 travels as f16).
    pub fn fragment_bits(self) -> u32 {
        if self == MmaKind::S8 {
            8
        } else {
            16
        }
    }

    /// Elements of A per thread (8 or 16) and of B (4 or 8).
    pub fn fragment_elements(self) -> (usize, usize) {
        if self == MmaKind::S8 {
            (16, 8)
        } else {
            (8, 4)
        }
    }
}

/// One `mma`: the operand registers of each fragment element (A, B in fragment order) and the
/// accumulator registers of `d0..d3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaStep {
    /// The registers of `a` holding the fragment's elements, in fragment order.
    pub a: Vec<u32>,
    /// The registers of `b` holding the fragment's elements, in fragment order.
    pub b: Vec<u32>,
    /// The accumulator registers of `d0..d3`.
    pub c: [u32; 4],
}

/// A planned dot: the instruction, then its steps in order (K steps outer, accumulator tiles inner), then
/// `out[dst] = out[src]` for the accumulator's broadcast registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DotPlan {
    /// The instruction.
    pub kind: MmaKind,
    /// The `mma`s in order.
    pub steps: Vec<MmaStep>,
    /// `(dst, src)`: accumulator registers that copy another after the steps (broadcast).
    pub duplicates: Vec<(u32, u32)>,
    /// Registers of the accumulator.
    pub acc_registers: u32,
}

/// The `(dim0, dim1)` coordinates of a packed vector of a rank-2 layout.
pub(crate) fn coords(layout: &LinearLayout, v: u64) -> (u32, u32) {
    (layout.coord(v, 0), layout.coord(v, 1))
}

/// The register bit of `layout` whose basis is exactly `target` (the first one), if any.
pub(crate) fn register_with(layout: &LinearLayout, target: u64) -> Option<u32> {
    bases(layout, Label::Register)
        .iter()
        .position(|&v| v == target)
        .map(|k| k as u32)
}

/// Plans the `mma` instructions of `a × b + acc` (see the module docs).
pub fn plan_dot(
    kind: MmaKind,
    a: &LinearLayout,
    b: &LinearLayout,
    acc: &LinearLayout,
) -> Result<DotPlan, PlanError> {
    for (l, name) in [(a, "a"), (b, "b"), (acc, "the accumulator")] {
        if l.num_out_dims() != 2 || l.in_size(Label::Lane) != 32 {
            return Err(DotError::NotRank2 { operand: name }.into());
        }
    }
    // Packing: a and acc are (m, ·), b is (k, n). K vectors are compared as K coordinates.
    let a_k = |v: u64| coords(a, v).1;
    let a_m = |v: u64| coords(a, v).0;
    let b_k = |v: u64| coords(b, v).0;
    let b_n = |v: u64| coords(b, v).1;
    let pure_k_a = |v: u64| a_m(v) == 0 && a_k(v) != 0;
    let pure_k_b = |v: u64| b_n(v) == 0 && b_k(v) != 0;
    let (a_lanes, b_lanes, c_lanes) = (
        bases(a, Label::Lane),
        bases(b, Label::Lane),
        bases(acc, Label::Lane),
    );
    // Lanes: 0–1 K directions shared by a and b; 2–4 rows / columns 1, 2, 4.
    for k in 0..2 {
        if !pure_k_a(a_lanes[k]) || !pure_k_b(b_lanes[k]) || a_k(a_lanes[k]) != b_k(b_lanes[k]) {
            return Err(DotError::LaneNotSharedK {
                lane: k as u32,
                a: coords(a, a_lanes[k]),
                b: coords(b, b_lanes[k]),
            }
            .into());
        }
        if coords(acc, c_lanes[k]) != (0, 2 << k) {
            return Err(DotError::AccumulatorLaneNotColumn {
                lane: k as u32,
                column: 2 << k,
            }
            .into());
        }
    }
    for k in 2..5 {
        let row = 1u32 << (k - 2);
        if coords(a, a_lanes[k]) != (row, 0)
            || coords(b, b_lanes[k]) != (0, row)
            || coords(acc, c_lanes[k]) != (row, 0)
        {
            return Err(DotError::LaneNotRow {
                lane: k as u32,
                row,
            }
            .into());
        }
    }
    // Warps: the accumulator's M/N tiling, repeated by the operands.
    let (a_warps, b_warps, c_warps) = (
        bases(a, Label::Warp),
        bases(b, Label::Warp),
        bases(acc, Label::Warp),
    );
    if a_warps.len() != c_warps.len() || b_warps.len() != c_warps.len() {
        return Err(DotError::WarpCounts.into());
    }
    for w in 0..c_warps.len() {
        let (m, n) = coords(acc, c_warps[w]);
        if coords(a, a_warps[w]) != (m, 0) || coords(b, b_warps[w]) != (0, n) {
            return Err(DotError::WarpTiling {
                warp: w as u32,
                accumulator: (m, n),
                a: coords(a, a_warps[w]),
                b: coords(b, b_warps[w]),
            }
            .into());
        }
    }
    // K directions held in registers, in register order.
    let a_regs = bases(a, Label::Register);
    let b_regs = bases(b, Label::Register);
    let a_kdirs: Vec<u32> = a_regs
        .iter()
        .filter(|&&v| pure_k_a(v))
        .map(|&v| a_k(v))
        .collect();
    let mut b_kdirs: Vec<u32> = b_regs
        .iter()
        .filter(|&&v| pure_k_b(v))
        .map(|&v| b_k(v))
        .collect();
    let mut sorted_a = a_kdirs.clone();
    sorted_a.sort_unstable();
    sorted_a.dedup();
    b_kdirs.sort_unstable();
    b_kdirs.dedup();
    if sorted_a != b_kdirs {
        return Err(DotError::DifferentKRegisters {
            a: sorted_a,
            b: b_kdirs,
        }
        .into());
    }
    let low_bits = (32 / kind.fragment_bits()).trailing_zeros() as usize;
    if a_kdirs.len() < low_bits + 1 {
        return Err(DotError::TooFewKRegisters.into());
    }
    let k_low = &a_kdirs[..low_bits];
    let k_high = a_kdirs[low_bits];
    let k_steps = &a_kdirs[low_bits + 1..];
    let a_at = |m: u32, k: u32| a.pack(&[m, k]);
    let b_at = |k: u32, n: u32| b.pack(&[k, n]);
    let find_a = |m: u32, k: u32| {
        register_with(a, a_at(m, k)).ok_or(DotError::NoRegister {
            operand: "a",
            at: (m, k),
        })
    };
    let find_b = |k: u32, n: u32| {
        register_with(b, b_at(k, n)).ok_or(DotError::NoRegister {
            operand: "b",
            at: (k, n),
        })
    };
    // Registers of the fragment bits: element-index bit i → register bit.
    let a_low: Vec<u32> = k_low
        .iter()
        .map(|&k| find_a(0, k))
        .collect::<Result<_, _>>()?;
    let b_low: Vec<u32> = k_low
        .iter()
        .map(|&k| find_b(k, 0))
        .collect::<Result<_, _>>()?;
    let a_row8 = find_a(8, 0)?;
    let a_high = find_a(0, k_high)?;
    let b_high = find_b(k_high, 0)?;
    let c_col1 = register_with(acc, acc.pack(&[0, 1])).ok_or(DotError::NoRegister {
        operand: "the accumulator",
        at: (0, 1),
    })?;
    let c_row8 = register_with(acc, acc.pack(&[8, 0])).ok_or(DotError::NoRegister {
        operand: "the accumulator",
        at: (8, 0),
    })?;
    // A fragment element i: bits (low.., row8, high); B: (low.., high).
    let mut a_frag_bits = a_low.clone();
    a_frag_bits.extend([a_row8, a_high]);
    let mut b_frag_bits = b_low.clone();
    b_frag_bits.push(b_high);
    let (a_elems, b_elems) = kind.fragment_elements();
    debug_assert_eq!(1 << a_frag_bits.len(), a_elems);
    debug_assert_eq!(1 << b_frag_bits.len(), b_elems);
    let element = |bits: &[u32], base: u32, i: usize| -> u32 {
        xor_bits(&bits.iter().map(|&b| 1 << b).collect::<Vec<_>>(), i as u32) ^ base
    };
    let tiles = accumulator_tiles(acc, 1 << c_col1 | 1 << c_row8);
    let (a_solver, b_solver) = (RegisterSolver::new(a), RegisterSolver::new(b));
    let mut steps = Vec::new();
    for step in 0..1u32 << k_steps.len() {
        let kt = xor_bits(k_steps, step);
        for &tile in &tiles {
            let (m0, n0) = tile_origin(acc, tile);
            let a_base = register_at(&a_solver, "a", (m0, kt), a_at)?;
            let b_base = register_at(&b_solver, "b", (kt, n0), b_at)?;
            steps.push(MmaStep {
                a: (0..a_elems)
                    .map(|i| element(&a_frag_bits, a_base, i))
                    .collect(),
                b: (0..b_elems)
                    .map(|i| element(&b_frag_bits, b_base, i))
                    .collect(),
                c: [
                    tile,
                    tile | 1 << c_col1,
                    tile | 1 << c_row8,
                    tile | 1 << c_col1 | 1 << c_row8,
                ],
            });
        }
    }
    let duplicates = broadcast_duplicates(acc);
    Ok(DotPlan {
        kind,
        steps,
        duplicates,
        acc_registers: acc.in_size(Label::Register),
    })
}

/// The accumulator tiles of an instruction whose fragment holds the register bits of
/// `fragment_mask`: the registers with those bits clear, broadcast registers (zero bases)
/// skipped.
pub(crate) fn accumulator_tiles(acc: &LinearLayout, fragment_mask: u32) -> Vec<u32> {
    let zeros = acc.zero_bases_mask(Label::Register);
    (0..acc.in_size(Label::Register))
        .filter(|r| r & (fragment_mask | zeros) == 0)
        .collect()
}

/// The `(row, column)` of the accumulator's register `tile` in thread 0.
pub(crate) fn tile_origin(acc: &LinearLayout, tile: u32) -> (u32, u32) {
    let image = bases(acc, Label::Register)
        .iter()
        .enumerate()
        .filter(|&(j, _)| tile >> j & 1 == 1)
        .fold(0u64, |v, (_, &basis)| v ^ basis);
    coords(acc, image)
}

/// `(dst, src)`: each broadcast register of the accumulator (a zero basis set) and the register
/// it copies after the instructions.
pub(crate) fn broadcast_duplicates(acc: &LinearLayout) -> Vec<(u32, u32)> {
    let zeros = acc.zero_bases_mask(Label::Register);
    (0..acc.in_size(Label::Register))
        .filter(|r| r & zeros != 0)
        .map(|r| (r, r & !zeros))
        .collect()
}

/// The register of `operand` (relative to register 0) holding the element at `at`, whose image
/// is `image(at)`.
fn register_at(
    solver: &RegisterSolver,
    operand: &'static str,
    at: (u32, u32),
    image: impl Fn(u32, u32) -> u64,
) -> Result<u32, DotError> {
    solver
        .register_of(image(at.0, at.1))
        .ok_or(DotError::NoRegister { operand, at })
}
