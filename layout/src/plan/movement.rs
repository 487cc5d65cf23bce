//! Data movements: a conversion (or the data movement of a gather) resolved to per-thread steps,
//! with every table resolved at planning time — registers, XOR-affine functions of the lane and
//! warp ids, shared-memory byte offsets. A code generator renders each [`Step`] as it is; the
//! planners (`conversion`, `shared_steps`) make every choice.
//!
//! A tile in layout `L` is a local array `[T; R]` per thread; register `r` of thread
//! `(lane, warp)` holds the element `L(r, lane, warp)`. A movement `A → B` reads the array of `A`
//! and builds the array of `B`.

use super::bank::{busiest_bank, phased_wavefronts, Side};
use super::wave::Lanes;
use super::{bases, Space, Vendor};
use crate::{Label, LinearLayout};
use std::string::String;
use std::vec;
use std::vec::Vec;

/// Lanes of a warp.
pub const LANES: u32 = 32;

/// The XOR of `terms[k]` over the set bits `k` of `x`.
pub fn xor_bits(terms: &[u32], x: u32) -> u32 {
    terms
        .iter()
        .enumerate()
        .filter(|&(k, _)| k < 32 && x >> k & 1 == 1)
        .fold(0, |acc, (_, &t)| acc ^ t)
}

/// A value computed per thread: `constant ⊕ ⨁ₖ lane_k·lane[k] ⊕ ⨁ₖ warp_k·warp[k]` (XOR-affine in
/// the bits of the lane and warp ids), e.g. a shared-memory byte offset or a source lane.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    /// The value at lane 0, warp 0.
    pub constant: u32,
    /// What each bit of the lane id XORs in (`lane[k]` for bit `k`).
    pub lane: Vec<u32>,
    /// What each bit of the warp id XORs in.
    pub warp: Vec<u32>,
}

impl Affine {
    /// The same value on every thread.
    pub fn constant(constant: u32) -> Self {
        Affine {
            constant,
            ..Affine::default()
        }
    }

    /// The value on thread (`lane`, `warp`).
    pub fn eval(&self, lane: u32, warp: u32) -> u32 {
        self.constant ^ xor_bits(&self.lane, lane) ^ xor_bits(&self.warp, warp)
    }

    /// Whether every thread has the same value.
    pub fn is_constant(&self) -> bool {
        self.lane.iter().chain(&self.warp).all(|&t| t == 0)
    }

    /// The bits any thread's value may have set: `constant | lane[k] | … | warp[k] | …`.
    /// Where `c & reach() == 0`, `c ⊕ v = c + v` on every thread (no bit of `c` meets one of
    /// `v`), so an offset XORed in can be added instead (an immediate of the address).
    pub fn reach(&self) -> u32 {
        self.lane
            .iter()
            .chain(&self.warp)
            .fold(self.constant, |acc, &t| acc | t)
    }

    /// Every value it takes, in increasing order.
    pub fn values(&self) -> Vec<u32> {
        let space = Space::spanned_by(
            &self
                .lane
                .iter()
                .chain(&self.warp)
                .map(|&t| t as u64)
                .collect::<Vec<_>>(),
        );
        let basis = space.basis();
        let mut values: Vec<u32> = (0..1u32 << basis.len())
            .map(|m| {
                self.constant
                    ^ basis
                        .iter()
                        .enumerate()
                        .filter(|&(k, _)| m >> k & 1 == 1)
                        .fold(0, |acc, (_, &b)| acc ^ b as u32)
            })
            .collect();
        values.sort_unstable();
        values
    }

    /// `self · 2^shift` (offsets in elements → bytes).
    pub fn shifted(&self, shift: u32) -> Self {
        Affine {
            constant: self.constant << shift,
            lane: self.lane.iter().map(|&t| t << shift).collect(),
            warp: self.warp.iter().map(|&t| t << shift).collect(),
        }
    }
}

/// A per-lane value: XOR-affine in the lane bits when the plan's table is, else the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaneFn {
    /// XOR-affine in the lane and warp bits.
    Affine(Affine),
    /// `table[lane]`.
    Table(Vec<u32>),
}

impl LaneFn {
    /// The function through the defined entries of `table` (one per lane; `None` = any value):
    /// affine if some XOR-affine function of the lane bits agrees with every defined entry.
    pub fn fit(table: &[Option<u32>]) -> LaneFn {
        let lane_bits = table.len().trailing_zeros();
        // Unknowns: bit 0 = the constant, bit k+1 = the term of lane bit k. One equation per
        // defined lane, right-hand sides solved for all 32 output bits at once.
        let mut pivots: Vec<Option<(u32, u32)>> = vec![None; lane_bits as usize + 1];
        let mut consistent = true;
        for (lane, value) in table.iter().enumerate() {
            let Some(value) = *value else { continue };
            let (mut row, mut rhs) = (1 | (lane as u32) << 1, value);
            while row != 0 {
                let p = 31 - row.leading_zeros();
                match pivots[p as usize] {
                    Some((r, v)) => {
                        row ^= r;
                        rhs ^= v;
                    }
                    None => {
                        pivots[p as usize] = Some((row, rhs));
                        break;
                    }
                }
            }
            if row == 0 && rhs != 0 {
                consistent = false;
                break;
            }
        }
        if consistent {
            let mut x = vec![0u32; lane_bits as usize + 1];
            for p in 0..x.len() {
                if let Some((row, rhs)) = pivots[p] {
                    x[p] = (0..p)
                        .filter(|&q| row >> q & 1 == 1)
                        .fold(rhs, |a, q| a ^ x[q]);
                }
            }
            LaneFn::Affine(Affine {
                constant: x[0],
                lane: x[1..].to_vec(),
                warp: Vec::new(),
            })
        } else {
            LaneFn::Table(table.iter().map(|v| v.unwrap_or(0)).collect())
        }
    }

    /// The value on thread (`lane`, `warp`).
    pub fn eval(&self, lane: u32, warp: u32) -> u32 {
        match self {
            LaneFn::Affine(a) => a.eval(lane, warp),
            LaneFn::Table(t) => t[lane as usize],
        }
    }

    /// The values it may take (for a table: its distinct entries), increasing.
    pub fn values(&self) -> Vec<u32> {
        match self {
            LaneFn::Affine(a) => a.values(),
            LaneFn::Table(t) => {
                let mut v = t.clone();
                v.sort_unstable();
                v.dedup();
                v
            }
        }
    }
}

/// One shuffle round: every lane sends a vector of `A` registers, reads the vector of its source
/// lane and, if active, writes it to `B` registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShuffleStep {
    /// Element `j` of a sent vector is `A` register `send ⊕ send_offsets[j]`.
    pub send_offsets: Vec<u32>,
    /// Element `j` of a received vector goes to `B` register `receive ⊕ receive_offsets[j]`.
    pub receive_offsets: Vec<u32>,
    /// The first `A` register of the vector each lane sends.
    pub send: LaneFn,
    /// The lane each lane reads from.
    pub source_lane: LaneFn,
    /// The first `B` register of the vector each lane receives.
    pub receive: LaneFn,
    /// Lanes that keep what they receive (bit per lane of the movement's [`Lanes`]).
    pub active: u64,
}

/// Vectorized shared-memory accesses of one thread: per chunk of registers, one instruction
/// moving `elements.len()` elements at byte `thread_offset(lane, warp) ⊕ chunk offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorAccess {
    /// The thread's byte offset (⊕ each chunk's register part).
    pub thread_offset: Affine,
    /// One instruction per chunk: (first register, byte offset of the register part).
    pub chunks: Vec<(u32, u32)>,
    /// Element `j` of a vector is register `first ⊕ elements[j]`, at byte `+ j·stride`.
    pub elements: Vec<u32>,
    /// Bytes between consecutive elements in memory: the element size, or 4 when widened.
    pub stride: u32,
}

impl VectorAccess {
    /// Bytes one instruction moves.
    pub fn bytes(&self) -> u32 {
        self.stride * self.elements.len() as u32
    }

    /// The byte address of the chunk at register byte offset `offset` for `lane` of `warp`.
    pub fn address(&self, offset: u32, lane: u32, warp: u32) -> u32 {
        offset ^ self.thread_offset.eval(lane, warp)
    }
}

/// Vectorized shared-memory stores of the owners of a source layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreStep {
    /// Only threads with `lane & lane_guard == 0 && warp & warp_guard == 0` store (the others
    /// hold broadcast copies).
    pub lane_guard: u32,
    /// See `lane_guard`.
    pub warp_guard: u32,
    /// The stores (chunks of source registers).
    pub access: VectorAccess,
}

/// `ldmatrix.sync.aligned.m8n8.x{matrices}[.trans].shared.b16` loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LdmatrixStep {
    /// 8×8 matrices per instruction (1, 2 or 4).
    pub matrices: u32,
    /// Whether the `.trans` form is used.
    pub transposed: bool,
    /// Byte offset of the row this thread addresses (as addressing lane `l`, warp `w`).
    pub row_offset: Affine,
    /// Per instruction: the register byte offset and, per matrix `m` and element `j` of the
    /// received 32-bit word, the destination register.
    pub chunks: Vec<(u32, Vec<Vec<u32>>)>,
}

/// One step of a movement; every thread runs every step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `out[dst] = src[src]`.
    Copy {
        /// The destination register.
        dst: u32,
        /// The source register.
        src: u32,
    },
    /// `out[dst] = src[base ⊕ select(lane, warp)]`.
    Select {
        /// The destination register.
        dst: u32,
        /// The source register before the thread's part.
        base: u32,
        /// The thread's part of the source register.
        select: Affine,
    },
    /// `out[dst] = out[src]` (a broadcast register of the destination).
    Duplicate {
        /// The destination register written.
        dst: u32,
        /// The destination register copied.
        src: u32,
    },
    /// One round of warp shuffles.
    Shuffle(ShuffleStep),
    /// `bar.sync 0`.
    Barrier,
    /// Stores to shared memory.
    Store(StoreStep),
    /// Vectorized loads from shared memory into the destination's registers.
    Load(VectorAccess),
    /// `ldmatrix` loads from shared memory.
    Ldmatrix(LdmatrixStep),
}

/// A conversion (or the data movement of a gather), resolved to steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movement {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Registers of the source layout.
    pub src_registers: u32,
    /// Registers of the destination layout.
    pub dst_registers: u32,
    /// Bits per element.
    pub element_bits: u32,
    /// Shared memory used (0: none), allocated 16-byte aligned.
    pub shared_bytes: u32,
    /// How it is done, in words (for explain output and tests).
    pub description: String,
    /// What the steps' lanes and warps name: a warp's 32 lanes, or (amdgpu) a wave's 64.
    pub lanes: Lanes,
}

/// The XOR offsets of the `2^bits.len()` elements of a vector whose element index bit `i` is
/// register bit `bits[i]`.
pub fn vector_offsets(bits: &[u32]) -> Vec<u32> {
    (0..1u32 << bits.len())
        .map(|j| xor_bits(&bits.iter().map(|&b| 1 << b).collect::<Vec<_>>(), j))
        .collect()
}

/// The packed bases of `label` as `u32` (the layouts here have one output dimension or fewer
/// than 32 output bits).
pub fn bases32(layout: &LinearLayout, label: Label) -> Vec<u32> {
    bases(layout, label).iter().map(|&v| v as u32).collect()
}

/// 32-bit words holding a vector of `n` elements of `bits` bits, packed.
pub fn word_count(n: usize, bits: u32) -> usize {
    (n * bits as usize).div_ceil(32)
}

/// The shared-memory accesses of a memory step in one warp: per instruction, `(byte address,
/// bytes)` of each participating lane (for `ldmatrix`: each row address).
pub fn step_accesses(step: &Step, warp: u32) -> Vec<Vec<(u32, u32)>> {
    step_lane_accesses(step, warp)
        .into_iter()
        .map(|a| a.into_iter().map(|(_, at, bytes)| (at, bytes)).collect())
        .collect()
}

/// [`step_accesses`] with the lane of each access: `(lane, byte address, bytes)` (for
/// `ldmatrix`, the lane giving the row address).
pub fn step_lane_accesses(step: &Step, warp: u32) -> Vec<Vec<(u32, u32, u32)>> {
    match step {
        Step::Store(s) => s
            .access
            .chunks
            .iter()
            .map(|&(_, off)| {
                (0..LANES)
                    .filter(|l| l & s.lane_guard == 0 && warp & s.warp_guard == 0)
                    .map(|l| (l, s.access.address(off, l, warp), s.access.bytes()))
                    .collect()
            })
            .collect(),
        Step::Load(s) => s
            .chunks
            .iter()
            .map(|&(_, off)| {
                (0..LANES)
                    .map(|l| {
                        let at = s.address(off, l, warp);
                        if s.bytes() < 4 {
                            (l, at & !3, 4)
                        } else {
                            (l, at, s.bytes())
                        }
                    })
                    .collect()
            })
            .collect(),
        Step::Ldmatrix(s) => s
            .chunks
            .iter()
            .map(|(off, _)| {
                (0..8 * s.matrices)
                    .map(|l| (l, off ^ s.row_offset.eval(l, warp), 16))
                    .collect()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The distinct 4-byte words that the `(byte address, bytes)` accesses of one warp touch, in
/// increasing order.
pub fn words_touched(access: &[(u32, u32)]) -> Vec<u32> {
    let mut words: Vec<u32> = access
        .iter()
        .flat_map(|&(at, bytes)| (at / 4)..(at + bytes).div_ceil(4))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// Wavefronts of one warp-wide access: 32 banks × 4 bytes, the most distinct words any bank
/// serves (the emulator's model).
pub fn wavefronts(access: &[(u32, u32)]) -> u32 {
    busiest_bank(words_touched(access))
}

/// Issue slots of a memory step summed over the warps, wavefronts plus one per instruction, on
/// `vendor`'s bank model: NVIDIA's whole-warp count ([`wavefronts`], the emulator's), AMD's per
/// phase ([`phased_wavefronts`]: a 128-bit load's lane groups are not its store's).
pub fn issue_cost_on(vendor: Vendor, step: &Step, warps: u32) -> u32 {
    (0..warps)
        .map(|w| {
            step_wavefronts_on(vendor, step, w)
                .iter()
                .map(|&wavefronts| wavefronts + 1)
                .sum::<u32>()
        })
        .sum()
}

/// The wavefronts of each instruction of a memory step in warp `warp` on `vendor`'s bank model
/// (see [`issue_cost_on`]).
pub fn step_wavefronts_on(vendor: Vendor, step: &Step, warp: u32) -> Vec<u32> {
    let side = match step {
        Step::Store(_) => Side::Write,
        _ => Side::Read,
    };
    step_lane_accesses(step, warp)
        .iter()
        .map(|a| match vendor {
            Vendor::Nvidia => wavefronts(&a.iter().map(|&(_, at, b)| (at, b)).collect::<Vec<_>>()),
            Vendor::Amd => phased_wavefronts(vendor, side, a),
        })
        .collect()
}

/// `out[r] = out[r without its broadcast bits]` for every broadcast register of `dst`.
pub fn duplicate_steps(dst: &LinearLayout) -> Vec<Step> {
    let zeros = dst.zero_bases_mask(Label::Register);
    (0..dst.in_size(Label::Register))
        .filter(|r| r & zeros != 0)
        .map(|r| Step::Duplicate {
            dst: r,
            src: r & !zeros,
        })
        .collect()
}
