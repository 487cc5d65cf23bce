//! `dot(a, b, acc)` as AMD matrix-core instructions (CDNA `v_mfma`, gfx90a and gfx942) on the
//! register fragments of a wave of 64 lanes: which instruction, and for each accumulator tile and
//! K step which registers of `a`, `b` and `acc` form its fragments.
//!
//! | operands | instruction | per lane |
//! |---|---|---|
//! | f16 → f32 | `v_mfma_f32_32x32x8f16` / `v_mfma_f32_16x16x16f16` | a, b: 4 × f16 in 2 words; c/d: 16 / 4 × f32 |
//! | bf16 → f32 | `v_mfma_f32_32x32x8bf16_1k` / `v_mfma_f32_16x16x16bf16_1k` | as f16 |
//! | i8 → i32 | `v_mfma_i32_32x32x16_i8` / `v_mfma_i32_16x16x32_i8` (gfx942; on gfx90a each is two `v_mfma_i32_32x32x8i8` / `16x16x16i8`) | a, b: 8 × i8 in 2 words; c/d: 16 / 4 × i32 |
//! | f8e4m3, f8e5m2 → f32 | gfx950: `v_mfma_f32_32x32x16_fp8_fp8` / `_bf8_bf8`, `16x16x32`; gfx942, gfx90a: each two f16 instructions on the elements widened to f16 | a, b: 8 × f8 in 2 words; c/d: 16 / 4 × f32 |
//!
//! **i8 on gfx90a.** gfx942 has only the K = 8-per-lane i8 instructions and gfx90a only the
//! K = 4 ones; the layouts are gfx942's (`k_width = 8`) on both, and on gfx90a one planned
//! instruction is two: the first takes bytes 0..4 of each lane's fragment, the second bytes 4..8.
//! Both operands' K indices are relabelled alike and integer sums are exact, so the result is the
//! same. The device layer chooses by the processor it is built for (`tessera::device::mfma`).
//!
//! **f8.** An f8 instruction takes 8 elements a lane (K = 16 for 32×32, 32 for 16×16), as
//! gfx950's `v_mfma_f32_32x32x16_fp8_fp8` (e4m3) and `_bf8_bf8` (e5m2) do: those read the OCP
//! encodings of `tessera::f8e4m3`/`f8e5m2` on gfx950 (CDNA4). gfx942's instructions of the same
//! names read the FNUZ encodings (another exponent bias, no negative zero, no infinities: OCP
//! e4m3 values above 240 have none) and gfx90a has none, so there each planned instruction is
//! two f16 ones, on the lane's elements 0..4 then 4..8 widened to f16 (exact for both formats,
//! NaN and infinities included; both operands' K relabelled alike, as for i8 on gfx90a). The
//! device layer chooses by the processor it is built for (`tessera::device::mfma`): gfx950 at
//! the f8 rate, the others at the f16 rate.
//!
//! **Waves of two warps.** The tile compiler's warps have 32 lanes (`tessera::device`'s
//! contract: a warp is half a wave on CDNA), so a wave's layouts ([`AmdMfma`], six lane bits)
//! are relabelled by [`wave_as_warps`] (`plan::wave`): wave lane bit 5 becomes warp bit 0, and the family's
//! warps (waves) become warp bits 1 and up. An `mfma` is then a collective of warps `2w` and
//! `2w + 1`.
//!
//! **Fragments from layouts.** One instruction's fragments are the family's layouts of one
//! `nd × nd` tile (`nd = 32` or `16`) on one wave: the operands `dot_operand` with `k_width` 4
//! or 8 (registers K 1, 2 (, 4); lanes along M of A / N of B, then K), the accumulator [`AmdMfma`]. The
//! accumulator is *transposed* (lanes along M, 4 consecutive N per lane, so a lane stores 16
//! contiguous bytes, and the accumulator of `q·kᵀ` already is the A operand of the next dot in
//! registers); the instruction then computes `dᵀ = bᵀ·aᵀ`: its first source is `b`'s fragment,
//! its second `a`'s. The planner requires the lanes and warp bit 0 of `a`, `b` and `acc` to be
//! exactly the instruction's, finds the instruction's register bases among each layout's register
//! bits, takes every remaining K direction of `a`'s registers as a K step (`b` must hold the same
//! ones) and every remaining register direction of the accumulator as a tile, and requires warp
//! bits 1 and up to tile `a`'s M and `b`'s N as they tile the accumulator. For each tile and K
//! step the registers of every fragment element are resolved at planning time. Any mismatch is
//! an error naming the operand and the basis.

use super::mma::{accumulator_tiles, broadcast_duplicates, coords, register_with, tile_origin};
use super::movement::xor_bits;
use super::space::RegisterSolver;
use super::wave::wave_as_warps;
use super::{bases, PlanError};
use crate::families::AmdMfma;
use crate::{Label, LayoutError, LinearLayout};
use core::fmt;
use std::format;
use std::vec::Vec;

/// The element type of an `mfma`'s operands (the accumulator is i32 for i8, else f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MfmaInput {
    /// f16.
    F16,
    /// bf16 (the `_1k` instructions of gfx90a and later).
    Bf16,
    /// i8, with an i32 accumulator.
    I8,
    /// f8 e4m3 (OCP): gfx950's `fp8` instructions, elsewhere two f16 ones (module docs).
    F8E4m3,
    /// f8 e5m2 (OCP): gfx950's `bf8` instructions, elsewhere two f16 ones (module docs).
    F8E5m2,
}

impl MfmaInput {
    /// Elements of A (and of B) per lane in one instruction (`k_width`): 8 for the 8-bit types
    /// (i8, f8), else 4.
    pub const fn k_width(self) -> u32 {
        match self {
            MfmaInput::I8 | MfmaInput::F8E4m3 | MfmaInput::F8E5m2 => 8,
            _ => 4,
        }
    }

    /// Whether the accumulator is i32 (i8 operands) rather than f32.
    pub const fn integer(self) -> bool {
        matches!(self, MfmaInput::I8)
    }

    /// Whether the operands are f8, which gfx942 and gfx90a run as f16 (module docs).
    pub const fn f8(self) -> bool {
        matches!(self, MfmaInput::F8E4m3 | MfmaInput::F8E5m2)
    }
}

/// One `mfma` instruction: its operand type and its `nd × nd` output tile (32 or 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MfmaInstr {
    /// The operands' element type.
    pub input: MfmaInput,
    /// M = N of the instruction: 32 (`32x32x8`) or 16 (`16x16x16`).
    pub nd: u32,
}

impl MfmaInstr {
    /// The reduction depth: `64 / nd · k_width` (8 for `32x32x8`, 16 for `16x16x16` and
    /// `32x32x16_i8`, 32 for `16x16x32_i8`).
    pub const fn k(self) -> u32 {
        64 / self.nd * self.input.k_width()
    }

    /// Elements of A (and of B) per lane ([`MfmaInput::k_width`]).
    pub const fn k_width(self) -> u32 {
        self.input.k_width()
    }

    /// Accumulator registers per lane: 16 or 4.
    pub const fn acc_registers(self) -> u32 {
        self.nd * self.nd / 64
    }

    /// The ISA name, e.g. `v_mfma_f32_32x32x8f16` (gfx90a spelling; gfx942 writes
    /// `v_mfma_f32_32x32x8_f16`); for i8 gfx942's instruction (gfx90a runs two of
    /// [`isa_name_halves`](Self::isa_name_halves)); for f8 gfx950's (gfx942 and gfx90a run two
    /// f16 ones).
    pub fn isa_name(self) -> &'static str {
        match (self.input, self.nd) {
            (MfmaInput::F16, 32) => "v_mfma_f32_32x32x8f16",
            (MfmaInput::F16, _) => "v_mfma_f32_16x16x16f16",
            (MfmaInput::Bf16, 32) => "v_mfma_f32_32x32x8bf16_1k",
            (MfmaInput::Bf16, _) => "v_mfma_f32_16x16x16bf16_1k",
            (MfmaInput::I8, 32) => "v_mfma_i32_32x32x16_i8",
            (MfmaInput::I8, _) => "v_mfma_i32_16x16x32_i8",
            (MfmaInput::F8E4m3, 32) => "v_mfma_f32_32x32x16_fp8_fp8",
            (MfmaInput::F8E4m3, _) => "v_mfma_f32_16x16x32_fp8_fp8",
            (MfmaInput::F8E5m2, 32) => "v_mfma_f32_32x32x16_bf8_bf8",
            (MfmaInput::F8E5m2, _) => "v_mfma_f32_16x16x32_bf8_bf8",
        }
    }

    /// The instruction the processors without this one run twice, on each lane's elements 0..4
    /// then 4..8 (module docs): i8 on gfx90a, f8 (widened to f16) on gfx942 and gfx90a; else
    /// the instruction itself.
    pub fn isa_name_halves(self) -> &'static str {
        match (self.input, self.nd) {
            (MfmaInput::I8, 32) => "v_mfma_i32_32x32x8i8",
            (MfmaInput::I8, _) => "v_mfma_i32_16x16x16i8",
            (MfmaInput::F8E4m3 | MfmaInput::F8E5m2, 32) => "v_mfma_f32_32x32x8f16",
            (MfmaInput::F8E4m3 | MfmaInput::F8E5m2, _) => "v_mfma_f32_16x16x16f16",
            _ => self.isa_name(),
        }
    }

    /// The operand element type's name as `EXPLAIN` writes it (`f16`, …, `f8e5m2`).
    pub fn input_name(self) -> &'static str {
        match self.input {
            MfmaInput::F16 => "f16",
            MfmaInput::Bf16 => "bf16",
            MfmaInput::I8 => "i8",
            MfmaInput::F8E4m3 => "f8e4m3",
            MfmaInput::F8E5m2 => "f8e5m2",
        }
    }

    /// The family parameters of this instruction's accumulator on `waves` (`[M, N]` waves).
    fn family<'a>(&self, shape: &'a [u32; 3], waves: &'a [u32]) -> AmdMfma<'a> {
        AmdMfma::new(3, shape, true, waves)
    }
}

impl fmt::Display for MfmaInstr {
    /// The ISA name, and what differs on gfx90a or for widened operands.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.isa_name())?;
        if self.input.integer() {
            write!(f, " (gfx90a: 2 × {})", self.isa_name_halves())
        } else if self.input.f8() {
            write!(
                f,
                " (gfx950; gfx942, gfx90a: 2 × {} on {} widened to f16)",
                self.isa_name_halves(),
                self.input_name()
            )
        } else {
            Ok(())
        }
    }
}

/// Triton's `warpsPerTile` for `mfma`: `waves` over `[M, N]`, doubling M while it has at least
/// as many `nd`-tiles per wave as N (and tiles left), else N.
pub fn mfma_waves(m: u64, n: u64, waves: u32, nd: u32) -> [u32; 2] {
    let nd = u64::from(nd);
    let mut w = [1u64, 1];
    while w[0] * w[1] < u64::from(waves) {
        if m / nd / w[0] >= n / nd / w[1] && w[0] < m / nd {
            w[0] *= 2;
        } else {
            w[1] *= 2;
        }
    }
    [w[0] as u32, w[1] as u32]
}

/// The `mfma` of a dot of `[m, k] × [k, n]` with `input` operands on `num_warps` warps, and its
/// waves (`[M, N]`, pairs of warps): the first of the 32×32 and 16×16 instructions whose `nd × nd` tile
/// each wave holds at least once, with K a multiple of its depth. `chained` is the warps
/// (`[M, N]`) a dot in a chain takes, which the waves follow where an instruction tile per wave
/// fits them; else the per-dot rule ([`mfma_waves`]). An error when `num_warps` is odd or no
/// instruction fits.
pub fn choose_mfma(
    input: MfmaInput,
    [m, n, k]: [u64; 3],
    num_warps: u32,
    chained: Option<[u32; 2]>,
) -> Result<(MfmaInstr, [u32; 2]), PlanError> {
    if !num_warps.is_multiple_of(2) {
        return Err(PlanError::new(format!(
            "an mfma runs on a wave of 64 threads (two warps): num_warps = {num_warps} is odd"
        )));
    }
    let waves = num_warps / 2;
    for nd in [32u32, 16] {
        let instr = MfmaInstr { input, nd };
        let fits = |w: [u32; 2]| {
            m >= u64::from(nd * w[0])
                && n >= u64::from(nd * w[1])
                && k.is_multiple_of(u64::from(instr.k()))
        };
        let chain = chained.map(|w| [w[0].div_ceil(2), w[1].div_ceil(2)]);
        if let Some(w) = chain.filter(|&w| fits(w)) {
            return Ok((instr, w));
        }
        let w = mfma_waves(m, n, waves, nd);
        if fits(w) {
            return Ok((instr, w));
        }
    }
    let [k32, k16] = [32, 16].map(|nd| MfmaInstr { input, nd }.k());
    Err(PlanError::new(format!(
        "`dot` of [{m}, {k}] × [{k}, {n}] on {waves} wave(s): no wave gets a whole 32×32×{k32} or \
         16×16×{k16} mfma tile (K a multiple of its depth)"
    )))
}

/// The layouts of a dot of `[m, k] × [k, n]` with `instr` on `waves` (`[M, N]` waves), on 32-lane
/// warps ([`wave_as_warps`]): `(a, b, acc)`.
pub fn mfma_layouts(
    instr: MfmaInstr,
    waves: [u32; 2],
    [m, n, k]: [u32; 3],
) -> Result<[LinearLayout; 3], LayoutError> {
    let shape = [instr.nd, instr.nd, instr.k()];
    let family = instr.family(&shape, &waves);
    Ok([
        wave_as_warps(&family.dot_operand(0, instr.k_width(), &[m, k])?)?,
        wave_as_warps(&family.dot_operand(1, instr.k_width(), &[k, n])?)?,
        wave_as_warps(&family.to_linear_layout(&[m, n])?)?,
    ])
}

/// The instruction whose accumulator fragment `acc`'s lanes and warp bit 0 hold (32×32 or
/// 16×16, operands of `input`), if any: what a dot planned with [`mfma_layouts`] uses.
pub fn mfma_instr_of(input: MfmaInput, acc: &LinearLayout) -> Option<MfmaInstr> {
    [32, 16]
        .into_iter()
        .map(|nd| MfmaInstr { input, nd })
        .find(|&instr| {
            let Ok([_, _, atom]) = mfma_layouts(instr, [1, 1], [instr.nd, instr.nd, instr.k()])
            else {
                return false;
            };
            let fragment = |l: &LinearLayout| {
                let mut c = coord_bases(l, Label::Lane);
                c.extend(coord_bases(l, Label::Warp).into_iter().take(1));
                c
            };
            acc.num_out_dims() == 2 && fragment(acc) == fragment(&atom)
        })
}

/// One `mfma`: the registers of each fragment element of its two sources (`src0` is `b`'s
/// fragment, `src1` `a`'s: the transposed accumulator) and of the accumulator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MfmaStep {
    /// The registers of `b` holding the first source's `k_width` elements, in fragment order.
    pub src0: Vec<u32>,
    /// The registers of `a` holding the second source's `k_width` elements, in fragment order.
    pub src1: Vec<u32>,
    /// The accumulator registers of `d0..`, in fragment order (16 or 4).
    pub c: Vec<u32>,
}

/// A planned dot: the instruction, its steps (K steps outer, accumulator tiles inner), then
/// `out[dst] = out[src]` for the accumulator's broadcast registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MfmaPlan {
    /// The instruction.
    pub instr: MfmaInstr,
    /// The `mfma`s in order.
    pub steps: Vec<MfmaStep>,
    /// `(dst, src)`: accumulator registers that copy another after the steps (broadcast).
    pub duplicates: Vec<(u32, u32)>,
    /// Registers of the accumulator.
    pub acc_registers: u32,
}

/// The bases of `label` of `layout` as coordinates.
fn coord_bases(layout: &LinearLayout, label: Label) -> Vec<(u32, u32)> {
    bases(layout, label)
        .into_iter()
        .map(|v| coords(layout, v))
        .collect()
}

/// Plans the `mfma` instructions of `a × b + acc` with `instr` (see the module docs).
pub fn plan_mfma_dot(
    instr: MfmaInstr,
    a: &LinearLayout,
    b: &LinearLayout,
    acc: &LinearLayout,
) -> Result<MfmaPlan, PlanError> {
    let operands = [(a, "a"), (b, "b"), (acc, "the accumulator")];
    for (l, name) in operands {
        if l.num_out_dims() != 2 || l.in_size(Label::Lane) != 32 || l.in_size(Label::Warp) < 2 {
            return Err(PlanError::new(format!(
                "mfma: {name} must be a rank-2 tile on 32-lane warps, two per wave (a wave of \
                 64 lanes runs each instruction)"
            )));
        }
    }
    let [atom_a, atom_b, atom_c] = mfma_layouts(instr, [1, 1], [instr.nd, instr.nd, instr.k()])?;
    // Lanes and warp bit 0: exactly the instruction's.
    for ((l, name), atom) in operands.into_iter().zip([&atom_a, &atom_b, &atom_c]) {
        let want = coord_bases(atom, Label::Lane)
            .into_iter()
            .chain(coord_bases(atom, Label::Warp));
        let have = coord_bases(l, Label::Lane)
            .into_iter()
            .chain(coord_bases(l, Label::Warp));
        for (bit, (w, h)) in want.zip(have).enumerate() {
            if w != h {
                let which = if bit < 5 {
                    format!("lane bit {bit}")
                } else {
                    "warp bit 0 (wave lane bit 5)".into()
                };
                return Err(PlanError::new(format!(
                    "mfma {instr}: {which} of {name} must be element {w:?} of the instruction's \
                     fragment, got {h:?}"
                )));
            }
        }
    }
    // Warp bits 1..: the accumulator's M/N tiling, repeated by the operands.
    let (a_warps, b_warps, c_warps) = (
        coord_bases(a, Label::Warp),
        coord_bases(b, Label::Warp),
        coord_bases(acc, Label::Warp),
    );
    if a_warps.len() != c_warps.len() || b_warps.len() != c_warps.len() {
        return Err(PlanError::new(
            "mfma: a, b and the accumulator use different numbers of warps",
        ));
    }
    for w in 1..c_warps.len() {
        let (m, n) = c_warps[w];
        if a_warps[w] != (m, 0) || b_warps[w] != (0, n) {
            return Err(PlanError::new(format!(
                "mfma: warp bit {w} covers accumulator ({m}, {n}) but a {:?} and b {:?}",
                a_warps[w], b_warps[w]
            )));
        }
    }
    // The instruction's register bases, found among each layout's register bits.
    let fragment_bits = |l: &LinearLayout, atom: &LinearLayout, name: &str| {
        coord_bases(atom, Label::Register)
            .into_iter()
            .map(|(r, c)| {
                register_with(l, l.pack(&[r, c])).ok_or_else(|| {
                    PlanError::new(format!(
                        "mfma {instr}: {name} holds element ({r}, {c}) in no register bit of its \
                         own (the instruction's fragment needs it)"
                    ))
                })
            })
            .collect::<Result<Vec<u32>, PlanError>>()
    };
    let a_bits = fragment_bits(a, &atom_a, "a")?;
    let b_bits = fragment_bits(b, &atom_b, "b")?;
    let c_bits = fragment_bits(acc, &atom_c, "the accumulator")?;
    // K steps: a's K-direction registers beyond the instruction's, held by b too.
    let fragment_k: Vec<u32> = coord_bases(&atom_a, Label::Lane)
        .into_iter()
        .chain(coord_bases(&atom_a, Label::Warp))
        .chain(coord_bases(&atom_a, Label::Register))
        .map(|(_, k)| k)
        .filter(|&k| k != 0)
        .collect();
    let k_steps: Vec<u32> = coord_bases(a, Label::Register)
        .into_iter()
        .filter(|&(m, k)| m == 0 && k != 0 && !fragment_k.contains(&k))
        .map(|(_, k)| k)
        .collect();
    let mut b_k_steps: Vec<u32> = coord_bases(b, Label::Register)
        .into_iter()
        .filter(|&(k, n)| n == 0 && k != 0 && !fragment_k.contains(&k))
        .map(|(k, _)| k)
        .collect();
    let mut sorted = k_steps.clone();
    sorted.sort_unstable();
    b_k_steps.sort_unstable();
    if sorted != b_k_steps {
        return Err(PlanError::new(format!(
            "mfma: a and b hold different K directions in registers ({sorted:?} vs {b_k_steps:?})"
        )));
    }
    let tiles = accumulator_tiles(acc, c_bits.iter().fold(0u32, |m, &b| m | 1 << b));
    let (a_solver, b_solver) = (RegisterSolver::new(a), RegisterSolver::new(b));
    let element = |bits: &[u32], base: u32, i: u32| -> u32 {
        xor_bits(&bits.iter().map(|&b| 1 << b).collect::<Vec<_>>(), i) ^ base
    };
    let mut steps = Vec::new();
    for step in 0..1u32 << k_steps.len() {
        let kt = xor_bits(&k_steps, step);
        for &tile in &tiles {
            let (m0, n0) = tile_origin(acc, tile);
            let missing = |name: &str, at: (u32, u32)| {
                PlanError::new(format!("mfma: {name} has no register for {at:?}"))
            };
            let a_base = a_solver
                .register_of(a.pack(&[m0, kt]))
                .ok_or_else(|| missing("a", (m0, kt)))?;
            let b_base = b_solver
                .register_of(b.pack(&[kt, n0]))
                .ok_or_else(|| missing("b", (kt, n0)))?;
            steps.push(MfmaStep {
                src0: (0..instr.k_width())
                    .map(|i| element(&b_bits, b_base, i))
                    .collect(),
                src1: (0..instr.k_width())
                    .map(|i| element(&a_bits, a_base, i))
                    .collect(),
                c: (0..instr.acc_registers())
                    .map(|i| element(&c_bits, tile, i))
                    .collect(),
            });
        }
    }
    Ok(MfmaPlan {
        instr,
        steps,
        duplicates: broadcast_duplicates(acc),
        acc_registers: acc.in_size(Label::Register),
    })
}

#[cfg(test)]
#[path = "mfma_tests.rs"]
mod tests;
