//! `dot(a, b, acc)` as `wgmma.mma_async` (sm_90a): the instruction shape, the warpgroups, the
//! NVMMA shared layouts of the operands and how the threads store them there, the descriptors
//! of every instruction, and which accumulator registers form each instruction's fragment.
//!
//! - **Shape** ([`wgmma_shape`]): `num_warps / 4` warpgroups, as many over M as there are
//!   64-row blocks (at most all of them), the rest over N; each warpgroup's instruction is
//!   `m64nNkK` with `N = min(256, n / warpgroups over N)`, which must be 64, 128 or 256 (the
//!   instructions of `tessera::device::wgmma`), and `K = 256 / element bits`: `k16` for f16 and
//!   bf16 operands, `k32` for f8 (e4m3, e5m2) and s8; f32 accumulator (s32 for s8).
//! - **Accumulator**: the mma v3 family (`NvidiaMma` version 3, warps `[4·wg_m, wg_n]`,
//!   instruction `[16, N, 16]`). [`plan_wgmma_dot`] reads each instruction's fragment off the
//!   inferred layout (the `(row, col)` of register `i` of the `m64nNk16` fragment, PTX ISA) and
//!   checks every thread's every register against it.
//! - **Operands** are stored to shared memory in the NVMMA layout (`NvmmaShared`, the layout
//!   TMA writes and `wgmma` descriptors read), contiguous along the dimension the operand's
//!   registers are contiguous in (the widest store vector; K-major or M/N-major), with the
//!   swizzle width `min(128, contiguous extent in bytes)` as Triton chooses it. 8-bit operands
//!   are K-major only (the instruction has no `imm-trans` for them), as Triton's f8 and i8
//!   `wgmma`s.
//!   The stores are a [`StoreStep`] of the conversion planner (vectorised, owners only);
//!   registers with no two elements adjacent in memory are stored one element at a time.
//! - **Descriptors** come from [`plan_operand`]: a template, the byte offset of each K step and
//!   of each M/N block; here resolved per (accumulator block, warpgroup).

use super::bank::bank_wavefronts;
use super::broadcast::Broadcast;
use super::movement::StoreStep;
use super::shared_steps::store_step;
use super::wgmma::{plan_operand, Major, OperandPlan};
use super::PlanError;
use crate::families::{NvidiaMma, NvmmaShared};
use crate::{Label, LinearLayout};
use core::fmt;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

/// Rows of one `wgmma` (a warpgroup's M block).
pub const WGMMA_M: u32 = 64;

/// The element type of the operands (the accumulator is f32, s32 for `s8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgmmaInput {
    /// f16 operands.
    F16,
    /// bf16 operands.
    Bf16,
    /// f8 E4M3 operands.
    E4m3,
    /// f8 E5M2 operands.
    E5m2,
    /// Signed 8-bit integer operands (s32 accumulator, wrapping: no `.satfinite`).
    S8,
}

impl WgmmaInput {
    /// The PTX type name: `f16`, `bf16`, `e4m3`, `e5m2` or `s8`.
    pub fn name(self) -> &'static str {
        match self {
            WgmmaInput::F16 => "f16",
            WgmmaInput::Bf16 => "bf16",
            WgmmaInput::E4m3 => "e4m3",
            WgmmaInput::E5m2 => "e5m2",
            WgmmaInput::S8 => "s8",
        }
    }

    /// Whether the operands are integers (the accumulator then `s32`).
    pub fn is_integer(self) -> bool {
        matches!(self, WgmmaInput::S8)
    }

    /// The PTX type of the accumulator: `f32`, or `s32` for integer operands.
    pub fn accumulator(self) -> &'static str {
        if self.is_integer() {
            "s32"
        } else {
            "f32"
        }
    }

    /// Bits of one element.
    pub fn bits(self) -> u32 {
        match self {
            WgmmaInput::F16 | WgmmaInput::Bf16 => 16,
            WgmmaInput::E4m3 | WgmmaInput::E5m2 | WgmmaInput::S8 => 8,
        }
    }

    /// K of one instruction, 32 bytes of each row: 16 (`k16`) for 16-bit elements, 32 for 8-bit.
    pub fn instr_k(self) -> u32 {
        256 / self.bits()
    }

    /// Whether the instruction reads M/N-major operands (`imm-trans`, and A from registers in
    /// the 16-bit fragment): 16-bit elements only.
    pub fn transposable(self) -> bool {
        self.bits() == 16
    }
}

/// A dot's `wgmma` instruction and warpgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaShape {
    /// The operands' element type.
    pub input: WgmmaInput,
    /// The dot's `[M, N, K]`.
    pub mnk: [u32; 3],
    /// N of the instruction `m64nNkK`.
    pub instr_n: u32,
    /// Warpgroups over M and over N.
    pub warpgroups: [u32; 2],
}

impl WgmmaShape {
    /// The warps of the mma v3 accumulator: `[4 · warpgroups over M, warpgroups over N]`.
    pub fn warps_per_cta(&self) -> [u32; 2] {
        [4 * self.warpgroups[0], self.warpgroups[1]]
    }

    /// The mma v3 accumulator layout of the `[M, N]` tile (not normalised).
    pub fn accumulator_layout(&self) -> Result<LinearLayout, PlanError> {
        let warps = self.warps_per_cta();
        let instr = [16, self.instr_n, 16];
        Ok(NvidiaMma::new(3, 0, &warps, &instr).to_linear_layout(&[self.mnk[0], self.mnk[1]])?)
    }
}

impl fmt::Display for WgmmaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "wgmma.m64n{}k{} {}→{}, {} warpgroup(s) over M × {} over N",
            self.instr_n,
            self.input.instr_k(),
            self.input.name(),
            self.input.accumulator(),
            self.warpgroups[0],
            self.warpgroups[1]
        )
    }
}

/// The `wgmma` shape of a dot of `[M, K] × [K, N]` with `num_warps` warps, or why there is
/// none (the dot then uses `mma.sync`).
pub fn wgmma_shape(input: WgmmaInput, mnk: [u32; 3], num_warps: u32) -> Result<WgmmaShape, String> {
    let [m, n, k] = mnk;
    if num_warps < 4 || !num_warps.is_multiple_of(4) {
        return Err(format!(
            "num_warps = {num_warps} is not a multiple of 4 (a warpgroup)"
        ));
    }
    if m < WGMMA_M || !m.is_multiple_of(WGMMA_M) {
        return Err(format!(
            "M = {m} is not a multiple of a warpgroup's {WGMMA_M} rows"
        ));
    }
    let instr_k = input.instr_k();
    if !k.is_multiple_of(instr_k) {
        return Err(format!("K = {k} is not a multiple of {instr_k}"));
    }
    let groups = num_warps / 4;
    let over_m = groups.min(m / WGMMA_M);
    let over_n = groups / over_m;
    let instr_n = (n / over_n).min(256);
    if !n.is_multiple_of(over_n) || !matches!(instr_n, 64 | 128 | 256) {
        return Err(format!(
            "N = {n} over {over_n} warpgroup(s) gives no m64nNk{instr_k} with N = 64, 128 or 256"
        ));
    }
    Ok(WgmmaShape {
        input,
        mnk,
        instr_n,
        warpgroups: [over_m, over_n],
    })
}

/// One operand in shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgmmaOperand {
    /// Its NVMMA shared layout.
    pub shared: NvmmaShared,
    /// Its descriptors (template, K-step and M/N-block offsets).
    pub descriptors: OperandPlan,
    /// How the threads store their registers there (byte offsets from the operand's start).
    pub store: StoreStep,
    /// Byte offset of the operand in the dot's shared region.
    pub region_offset: u32,
    /// Bytes of the operand.
    pub bytes: u32,
    /// `block_offsets[b][g]`: byte offset (from the operand's start) of the M (A) or N (B)
    /// block that accumulator block `b` of warpgroup `g` reads.
    pub block_offsets: Vec<Vec<u32>>,
}

impl WgmmaOperand {
    /// `imm-trans`: 0 K-major, 1 M/N-major.
    pub fn trans(&self) -> u32 {
        match self.descriptors.major {
            Major::K => 0,
            Major::Mn => 1,
        }
    }
}

/// A planned `wgmma` dot: per warpgroup, `blocks` accumulator blocks of `64 × N`, each
/// `K / instr_k` instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgmmaDotPlan {
    /// The instruction and the warpgroups.
    pub shape: WgmmaShape,
    /// How `a` reaches shared memory and its descriptor.
    pub a: WgmmaOperand,
    /// How `b` reaches shared memory and its descriptor.
    pub b: WgmmaOperand,
    /// `acc_registers[b][i]`: the accumulator tile register that is register `i` of the
    /// fragment of block `b` (`N / 2` per block).
    pub acc_registers: Vec<Vec<u32>>,
    /// When `a`'s layout holds the `wgmma` A fragments in registers (as the accumulator of an
    /// earlier `wgmma` does, e.g. attention's `p`): `a_registers[b][s]`, the 8 tile registers
    /// of `a` forming the fragment of accumulator block `b`, K step `s` (`a0` = the first
    /// two, … `a3` = the last two, each pair one 32-bit register, the lower element in the low
    /// half); the dot then reads A from registers (`wgmma … {a0, a1, a2, a3}, b-desc`) and
    /// does not store it.
    pub a_registers: Option<Vec<Vec<[u32; 8]>>>,
    /// Bytes of shared memory the operands take.
    pub shared_bytes: u32,
    /// Alignment the region needs (one swizzle period of the wider swizzle).
    pub alignment: u32,
}

impl WgmmaDotPlan {
    /// Instructions per block (K steps).
    pub fn k_steps(&self) -> u32 {
        self.shape.mnk[2] / self.shape.input.instr_k()
    }
}

/// The swizzle width of a contiguous extent of `bytes`: `min(128, bytes)` (32 at least).
fn swizzle_width(bytes: u32) -> u32 {
    bytes.clamp(32, 128)
}

/// The NVMMA layout of an operand of `shape` (`k_dim`: its K dimension) of `input` elements
/// stored from `src`, contiguous along the dimension that gives the widest store (K for 8-bit
/// elements), and its stores.
fn operand(
    input: WgmmaInput,
    src: &LinearLayout,
    shape: [u32; 2],
    k_dim: usize,
    mn_block: u32,
    name: &str,
) -> Result<(NvmmaShared, OperandPlan, StoreStep), PlanError> {
    let bits = input.bits();
    // `transposed`: contiguous along dimension 0; K-major is contiguous along `k_dim`.
    let k_major = k_dim == 0;
    let orders: &[bool] = if input.transposable() {
        &[false, true]
    } else {
        core::slice::from_ref(&k_major)
    };
    let mut best: Option<(u32, NvmmaShared, LinearLayout, Vec<u32>)> = None;
    for &transposed in orders {
        let contiguous = if transposed { shape[0] } else { shape[1] };
        let shared = NvmmaShared::new(swizzle_width(contiguous * bits / 8), bits, transposed);
        let memory = shared.to_linear_layout(&shape)?;
        let access = bank_wavefronts(&memory, src, bits)?;
        if best
            .as_ref()
            .is_none_or(|(bits, ..)| access.vector.bits > *bits)
        {
            best = Some((access.vector.bits, shared, memory, access.vector.registers));
        }
    }
    let Some((vector_bits, shared, memory, mut vector)) = best else {
        return Err(PlanError::new(format!(
            "wgmma: no shared layout for {name}"
        )));
    };
    // Shared stores move whole words or single elements: a narrower vector (two f8 elements)
    // is stored element by element.
    if vector_bits < 32 {
        vector.clear();
    }
    let address = src.invert_and_compose(&memory)?;
    // Memory cells of one element: log2 of its bytes.
    let shift = (bits / 8).trailing_zeros();
    let store = store_step(&address, src, &vector, &Broadcast::of(src)?, shift);
    let descriptors = plan_operand(shared, shape, k_dim, mn_block)?;
    Ok((shared, descriptors, store))
}

/// The `(row, col)` of a rank-2 layout at register `r`, lane `l`, warp `w`.
fn at(layout: &LinearLayout, r: u32, l: u32, w: u32) -> Result<(u32, u32), PlanError> {
    let c = layout.apply(&[(Label::Register, r), (Label::Lane, l), (Label::Warp, w)])?;
    Ok((c[0], c[1]))
}

/// The `(row, col)` within a `64 × N` block of fragment register `i` of lane `l`, warp `w` of
/// the warpgroup (PTX ISA, `wgmma` D fragment).
pub fn fragment_element(i: u32, lane: u32, warp: u32) -> (u32, u32) {
    (
        16 * warp + lane / 4 + 8 * ((i / 2) % 2),
        8 * (i / 4) + 2 * (lane % 4) + i % 2,
    )
}

/// The registers of `a` (`[M, K]`) forming each `wgmma` A fragment (`a_registers` of
/// [`WgmmaDotPlan`]), when every thread holds its fragments: element `j` of the fragment of
/// K step `s` in warp `w` of a warpgroup, lane `l`, is `(16w + l/4 + 8·(j/2 mod 2), 16s + 8·(j/4)
/// + 2·(l mod 4) + j mod 2)` ([`fragment_element`] shifted by `16s`), rows offset by the
/// accumulator block's and the warpgroup's origin (`origins`, `group_origin`).
fn a_fragments(
    a: &LinearLayout,
    origins: &[(u32, u32)],
    group_origin: &[(u32, u32)],
    k_steps: u32,
) -> Option<Vec<Vec<[u32; 8]>>> {
    if a.in_size(Label::Lane) != 32 || a.in_size(Label::Warp) != 4 * group_origin.len() as u32 {
        return None;
    }
    let coords: Vec<(u32, u32)> = (0..a.in_size(Label::Register))
        .map(|r| at(a, r, 0, 0))
        .collect::<Result<_, _>>()
        .ok()?;
    origins
        .iter()
        .map(|&(br, _)| {
            (0..k_steps)
                .map(|s| {
                    let mut fragment = [0u32; 8];
                    for (j, slot) in fragment.iter_mut().enumerate() {
                        let (fr, fc) = fragment_element(j as u32, 0, 0);
                        let want = (br + fr, 16 * s + fc);
                        *slot = coords.iter().position(|&c| c == want)? as u32;
                    }
                    for (g, &(gr, _)) in group_origin.iter().enumerate() {
                        for warp in 0..4 {
                            for lane in 0..32 {
                                for (j, &r) in fragment.iter().enumerate() {
                                    let (fr, fc) = fragment_element(j as u32, lane, warp);
                                    let want = (br + gr + fr, 16 * s + fc);
                                    if at(a, r, lane, 4 * g as u32 + warp).ok()? != want {
                                        return None;
                                    }
                                }
                            }
                        }
                    }
                    Some(fragment)
                })
                .collect()
        })
        .collect()
}

/// Plans the dot of `shape` on operands in the layouts `a` (`[M, K]`), `b` (`[K, N]`) and the
/// accumulator `acc` (`[M, N]`, the mma v3 layout of `shape`, normalised by the caller).
pub fn plan_wgmma_dot(
    shape: WgmmaShape,
    a: &LinearLayout,
    b: &LinearLayout,
    acc: &LinearLayout,
) -> Result<WgmmaDotPlan, PlanError> {
    let [m, n, k] = shape.mnk;
    let instr_n = shape.instr_n;
    let groups = shape.warpgroups[0] * shape.warpgroups[1];
    if acc.in_size(Label::Warp) != 4 * groups || acc.in_size(Label::Lane) != 32 {
        return Err(PlanError::new(format!(
            "wgmma: the accumulator must hold {} warps of 32 lanes",
            4 * groups
        )));
    }
    // Accumulator blocks: the register part at lane 0, warp 0 is a block's origin plus the
    // fragment's register offsets.
    let regs = acc.in_size(Label::Register);
    let mut origins: Vec<(u32, u32)> = Vec::new();
    let mut placed: Vec<(usize, u32, u32)> = Vec::new();
    for r in 0..regs {
        let (row, col) = at(acc, r, 0, 0)?;
        let (in_row, in_col) = (row % WGMMA_M, col % instr_n);
        if (in_row != 0 && in_row != 8) || in_col % 8 > 1 {
            return Err(PlanError::new(format!(
                "wgmma: accumulator register {r} at ({row}, {col}) is not a fragment register"
            )));
        }
        let i = (in_col / 8) * 4 + (in_row / 8) * 2 + in_col % 2;
        let origin = (row - in_row, col - in_col);
        let block = match origins.iter().position(|&o| o == origin) {
            Some(p) => p,
            None => {
                origins.push(origin);
                origins.len() - 1
            }
        };
        placed.push((block, i, r));
    }
    let per_block = instr_n / 2;
    let mut acc_registers = vec![vec![u32::MAX; per_block as usize]; origins.len()];
    for (block, i, r) in placed {
        let slot = &mut acc_registers[block][i as usize];
        if *slot != u32::MAX {
            return Err(PlanError::new(
                "wgmma: the accumulator holds an element twice (broadcast registers)",
            ));
        }
        *slot = r;
    }
    if acc_registers.iter().flatten().any(|&r| r == u32::MAX) {
        return Err(PlanError::new(
            "wgmma: the accumulator's registers do not fill whole fragments",
        ));
    }
    // Where each warpgroup's blocks lie, and the law: every thread's fragment register `i` of
    // block `b` is the element the instruction writes there.
    let group_origin: Vec<(u32, u32)> = (0..groups)
        .map(|g| at(acc, 0, 0, 4 * g))
        .collect::<Result<_, _>>()?;
    for (g, &(gr, gc)) in group_origin.iter().enumerate() {
        for (block, &(br, bc)) in origins.iter().enumerate() {
            for warp in 0..4 {
                for lane in 0..32 {
                    for i in 0..per_block {
                        let (fr, fc) = fragment_element(i, lane, warp);
                        let want = (br + gr + fr, bc + gc + fc);
                        let r = acc_registers[block][i as usize];
                        let got = at(acc, r, lane, 4 * g as u32 + warp)?;
                        if got != want {
                            return Err(PlanError::new(format!(
                                "wgmma: warp {} lane {lane} register {r} holds {got:?}, the \
                                 fragment writes {want:?}",
                                4 * g as u32 + warp
                            )));
                        }
                    }
                }
            }
        }
    }
    let input = shape.input;
    let a_registers = if input.transposable() {
        a_fragments(a, &origins, &group_origin, k / input.instr_k())
    } else {
        None
    };
    let (a_shared, a_desc, a_store) = operand(input, a, [m, k], 1, WGMMA_M, "a")?;
    let (b_shared, b_desc, b_store) = operand(input, b, [k, n], 0, instr_n, "b")?;
    // Per accumulator block and warpgroup: the offset of the M (A) or N (B) block it reads,
    // `along` picking the row or column of an origin, `block` the rows or columns of one.
    let block_offsets = |desc: &OperandPlan, along: fn((u32, u32)) -> u32, block: u32| {
        origins
            .iter()
            .map(|&o| {
                group_origin
                    .iter()
                    .map(|&g| desc.mn_block_offsets[((along(o) + along(g)) / block) as usize])
                    .collect()
            })
            .collect()
    };
    let a_blocks = block_offsets(&a_desc, |(row, _)| row, WGMMA_M);
    let b_blocks = block_offsets(&b_desc, |(_, col)| col, instr_n);
    let alignment = a_desc.alignment.max(b_desc.alignment);
    let a_bytes = m * k * input.bits() / 8;
    let b_offset = a_bytes.div_ceil(alignment) * alignment;
    let b_bytes = k * n * input.bits() / 8;
    Ok(WgmmaDotPlan {
        shape,
        a: WgmmaOperand {
            shared: a_shared,
            descriptors: a_desc,
            store: a_store,
            region_offset: 0,
            bytes: a_bytes,
            block_offsets: a_blocks,
        },
        b: WgmmaOperand {
            shared: b_shared,
            descriptors: b_desc,
            store: b_store,
            region_offset: b_offset,
            bytes: b_bytes,
            block_offsets: b_blocks,
        },
        acc_registers,
        a_registers,
        shared_bytes: b_offset + b_bytes,
        alignment,
    })
}

#[cfg(test)]
#[path = "wgmma_dot_tests.rs"]
mod tests;
