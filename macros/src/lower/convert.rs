//! Layout conversions in generated code: each plan of `tessera_layout::plan::conversion`, turned
//! into straight-line per-thread code on register arrays.
//!
//! A tile in layout `L` is a local array `[T; R]` per thread; register `r` of thread
//! `(lane, warp)` holds the element `L(r, lane, warp)`. A conversion `A → B` reads the array of `A`
//! and builds the array of `B`:
//!
//! | plan | generated code |
//! |---|---|
//! | no-op | `B[r] = A[r]` (B's registers are a prefix of A's) |
//! | register permutation | `B[r] = A[s(r)]` with `s` resolved at expansion time; where the source register also depends on lane/warp bits (lane-selected registers), a `match` on the XOR-linear selector `⊕ lane_k·from_lane[k] ⊕ …` |
//! | warp shuffles | per round: each lane packs the vector it sends (`2^|V|` elements, ≤ 32 bits, element `j` at bits `j·b`) into words, `shfl.sync.idx` from its source lane, unpacks into its receive registers; the per-lane send register, source lane and receive register are XOR-affine functions of the lane id when the plan's tables are (else a 32-entry lookup table); duplicate registers of `B` are copied at the end |
//! | shared memory | barrier; owners of `A` (broadcast copies skipped) store vectors of the planned width (`st.shared.v1/v2/v4.b32`, elements packed) at `store_address(r, lane, warp)` (the swizzle); barrier; `B` loads at `load_address` with its planned width — or with `ldmatrix[.trans]` when the read left-divides the `ldmatrix` tile (plan/ldmatrix.rs) and that costs fewer issue slots |
//!
//! Where the lowering departs from the plan, and why:
//! - **Shared-memory layout.** Besides the plan's memory (its optimal swizzle), the lowering
//!   builds memories made for an `ldmatrix` read ([`ldmatrix_memories`]: the instruction's
//!   16-byte rows first, rows swizzled by the construction of Lemma 9.5) and keeps the candidate
//!   with the fewest issue slots (wavefronts + instructions on the emulator's bank model), an
//!   `ldmatrix` read winning ties. This is how the operands of `dot` reach `ldmatrix` (`.trans`
//!   for `b`): the planner's swizzle is optimal for bank conflicts but rarely divisible by the
//!   `ldmatrix` tile.
//! - **Sub-word stores.** A store narrower than a 32-bit word (sub-word elements whose plan
//!   fills the word from the read side) has no race-free 32-bit form, so such a conversion runs
//!   on the optimal swizzle planned for 32-bit elements, each element in its own word. Loads
//!   narrower than a word load the word and extract.
//! - **Shuffles vs. shared memory.** The planner prices shuffles by their count; a round whose
//!   send or receive register depends on the lane also costs a register select per candidate
//!   ([`conversion_movement`]). When that makes the shuffles dearer than the planner's
//!   shared-memory alternative, the conversion goes through shared memory.
//! - **Barriers.** Every shared-memory conversion starts with `bar.sync` (its bytes may still
//!   be read by an earlier op, or by the previous iteration of a loop) and has one between its
//!   stores and its loads.
//!
//! The code is built in two stages so that it can be tested without a compiler: [`Movement`]
//! (steps with every table resolved: registers, XOR-affine functions of lane and warp, byte
//! offsets) and its rendering to tokens, which is one `quote!` per step. The unit tests execute
//! movements on a CTA model that follows PTX semantics (`shfl.sync.idx`, `ld/st.shared`,
//! `ldmatrix`) and count bank wavefronts as the emulator does.

use super::{elem_type, internal, Ctx};
use crate::ir::Op;
use crate::types::DType;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use tessera_layout::families::ldmatrix::ldmatrix_fragment;
use tessera_layout::plan::bank::bank_wavefronts;
use tessera_layout::plan::broadcast::Broadcast;
use tessera_layout::plan::conversion::{
    shared_plan, Conversion, ConversionPlan, RegisterPlan, SharedPlan, ShufflePlan,
};
use tessera_layout::plan::ldmatrix::matrix_plan;
use tessera_layout::plan::{bases, Space};
use tessera_layout::{Label, LinearLayout};

/// Lowers an `OpKind::Convert` of `src` (the registers `[T; R]` of a tile in `src_layout`) to
/// `dst_layout`, executing `conversion.plan` (see the module docs): the statements and the
/// local `[T; R']` holding the destination's registers.
pub fn lower_convert(
    ctx: &mut Ctx,
    op: &Op,
    src: &Ident,
    src_layout: &LinearLayout,
    dst_layout: &LinearLayout,
    dtype: DType,
    conversion: &Conversion,
) -> Result<(TokenStream, Ident), syn::Error> {
    let movement = conversion_movement(conversion, src_layout, dst_layout, dtype.bits())
        .map_err(|e| internal(&op.loc, &format!("layout conversion: {e}")))?;
    let out = ctx.fresh("cvt");
    let code = emit(ctx, op, &movement, src, dtype, &out);
    Ok((code, out))
}

/// `let out: [T; R'] = <movement of src>;`, with the movement's shared memory allocated.
pub(crate) fn emit(
    ctx: &mut Ctx,
    op: &Op,
    movement: &Movement,
    src: &Ident,
    dtype: DType,
    out: &Ident,
) -> TokenStream {
    let shared_offset = if movement.shared_bytes > 0 {
        ctx.alloc_shared(movement.shared_bytes, 16)
    } else {
        0
    };
    let rc = Render {
        lane: ctx.lane(),
        warp: ctx.warp(),
        elem: elem_type(dtype),
        span: op.loc.first,
        shared_offset,
    };
    let expr = render_movement(movement, src, &rc);
    let (elem, n) = (&rc.elem, index_lit(movement.dst_registers));
    quote!(let #out: [#elem; #n] = #expr;)
}

/// The movement of a planned conversion. The planner prices warp shuffles by shuffle count
/// alone; rounds whose send or receive register depends on the lane also need a register
/// select per candidate register and element (`SEL`/`MOV` on the ALU, counted here as a
/// quarter of a shared-memory-pipe slot). When that makes the shuffles dearer than the
/// planner's shared-memory alternative ([`Conversion::shared_alternative`]), the conversion
/// goes through shared memory instead.
pub(crate) fn conversion_movement(
    conversion: &Conversion,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<Movement, String> {
    let movement = movement_for(&conversion.plan, src, dst, element_bits)?;
    if let (Some(shared), Some(shared_cost)) =
        (&conversion.shared_alternative, conversion.shared_cost)
    {
        if shuffle_cost_quarters(&movement) > 4 * shared_cost {
            let mut alternative = shared_movement(shared, src, dst, element_bits)?;
            alternative.description = format!(
                "{} (instead of warp shuffles: their lane-dependent register selects cost more)",
                alternative.description
            );
            return Ok(alternative);
        }
    }
    Ok(movement)
}

/// Issue slots × 4 of a shuffle movement: 4 per shuffle, 1 per register select.
pub(crate) fn shuffle_cost_quarters(movement: &Movement) -> u32 {
    movement
        .steps
        .iter()
        .map(|step| match step {
            Step::Shuffle(s) => {
                let n = s.send_offsets.len() as u32;
                let words = word_count(n as usize, movement.element_bits) as u32;
                let selects = (s.send.values().len() as u32 - 1) * n
                    + (s.receive.values().len() as u32 - 1) * n;
                4 * words + selects
            }
            Step::Select { select, .. } => select.values().len() as u32 - 1,
            _ => 0,
        })
        .sum()
}

/// Lanes of a warp.
pub(crate) const LANES: u32 = 32;

/// The XOR of `terms[k]` over the set bits `k` of `x`.
pub(crate) fn xor_bits(terms: &[u32], x: u32) -> u32 {
    terms
        .iter()
        .enumerate()
        .filter(|&(k, _)| k < 32 && x >> k & 1 == 1)
        .fold(0, |acc, (_, &t)| acc ^ t)
}

/// A value computed per thread: `constant ⊕ ⨁ₖ lane_k·lane[k] ⊕ ⨁ₖ warp_k·warp[k]` (XOR-affine in
/// the bits of the lane and warp ids), e.g. a shared-memory byte offset or a source lane.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Affine {
    pub constant: u32,
    pub lane: Vec<u32>,
    pub warp: Vec<u32>,
}

impl Affine {
    #[cfg(test)]
    pub fn constant(constant: u32) -> Self {
        Affine {
            constant,
            ..Affine::default()
        }
    }

    pub fn eval(&self, lane: u32, warp: u32) -> u32 {
        self.constant ^ xor_bits(&self.lane, lane) ^ xor_bits(&self.warp, warp)
    }

    pub fn is_constant(&self) -> bool {
        self.lane.iter().chain(&self.warp).all(|&t| t == 0)
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

    /// `c ^ bit_term(lane, k, t_k) ^ …` (zero terms left out).
    pub fn render(&self, lane: &TokenStream, warp: &TokenStream) -> TokenStream {
        let mut parts: Vec<TokenStream> = Vec::new();
        if self.constant != 0 || self.is_constant() {
            let c = Literal::u32_suffixed(self.constant);
            parts.push(quote!(#c));
        }
        for (var, terms) in [(lane, &self.lane), (warp, &self.warp)] {
            for (k, &t) in terms.iter().enumerate() {
                if t != 0 {
                    let (k, t) = (Literal::u32_suffixed(k as u32), Literal::u32_suffixed(t));
                    parts.push(quote!(::tessera::tile_move::bit_term(#var, #k, #t)));
                }
            }
        }
        quote!((#(#parts)^*))
    }
}

/// A per-lane value: XOR-affine in the lane bits when the plan's table is, else the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LaneFn {
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

    #[cfg(test)]
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

    pub fn render(&self, lane: &TokenStream, warp: &TokenStream) -> TokenStream {
        match self {
            LaneFn::Affine(a) => a.render(lane, warp),
            LaneFn::Table(t) => {
                let n = t.len();
                let entries = t.iter().map(|&v| Literal::u32_suffixed(v));
                quote!({
                    const TABLE: [u32; #n] = [#(#entries),*];
                    TABLE[(#lane as usize) % #n]
                })
            }
        }
    }
}

/// One shuffle round: every lane sends a vector of `A` registers, reads the vector of its source
/// lane and, if active, writes it to `B` registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShuffleStep {
    /// Element `j` of a sent vector is `A` register `send ⊕ send_offsets[j]`.
    pub send_offsets: Vec<u32>,
    /// Element `j` of a received vector goes to `B` register `receive ⊕ receive_offsets[j]`.
    pub receive_offsets: Vec<u32>,
    pub send: LaneFn,
    pub source_lane: LaneFn,
    pub receive: LaneFn,
    /// Lanes that keep what they receive (bit per lane).
    pub active: u32,
}

/// Vectorized shared-memory stores of the owners of a source layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoreStep {
    /// Only threads with `lane & lane_guard == 0 && warp & warp_guard == 0` store (the others
    /// hold broadcast copies).
    pub lane_guard: u32,
    pub warp_guard: u32,
    /// The thread's byte offset (⊕ each chunk's register part).
    pub thread_offset: Affine,
    /// One instruction per chunk: (first source register, byte offset of the register part).
    pub chunks: Vec<(u32, u32)>,
    /// Element `j` of a vector is register `first ⊕ elements[j]`, at byte `+ j·stride`.
    pub elements: Vec<u32>,
    /// Bytes between consecutive elements in memory: the element size, or 4 when widened.
    pub stride: u32,
}

/// Vectorized shared-memory loads into a destination layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoadStep {
    pub thread_offset: Affine,
    /// One instruction per chunk: (first destination register, register byte offset).
    pub chunks: Vec<(u32, u32)>,
    /// Element `j` goes to register `first ⊕ elements[j]`, read at byte `+ j·stride`.
    pub elements: Vec<u32>,
    pub stride: u32,
}

/// `ldmatrix.sync.aligned.m8n8.x{matrices}[.trans].shared.b16` loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LdmatrixStep {
    pub matrices: u32,
    pub transposed: bool,
    /// Byte offset of the row this thread addresses (as addressing lane `l`, warp `w`).
    pub row_offset: Affine,
    /// Per instruction: the register byte offset and, per matrix `m` and element `j` of the
    /// received 32-bit word, the destination register.
    pub chunks: Vec<(u32, Vec<Vec<u32>>)>,
}

/// One step of a movement; every thread runs every step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// `out[dst] = src[src]`.
    Copy {
        dst: u32,
        src: u32,
    },
    /// `out[dst] = src[base ⊕ select(lane, warp)]`.
    Select {
        dst: u32,
        base: u32,
        select: Affine,
    },
    /// `out[dst] = out[src]` (a broadcast register of the destination).
    Duplicate {
        dst: u32,
        src: u32,
    },
    Shuffle(ShuffleStep),
    /// `bar.sync 0`.
    Barrier,
    Store(StoreStep),
    Load(LoadStep),
    Ldmatrix(LdmatrixStep),
}

/// A conversion (or the data movement of a gather), resolved to steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Movement {
    pub steps: Vec<Step>,
    pub src_registers: u32,
    pub dst_registers: u32,
    pub element_bits: u32,
    /// Shared memory used (0: none), allocated 16-byte aligned.
    pub shared_bytes: u32,
    /// How it is done, in words (for explain output and tests).
    pub description: String,
}

/// The XOR offsets of the `2^bits.len()` elements of a vector whose element index bit `i` is
/// register bit `bits[i]`.
pub(crate) fn vector_offsets(bits: &[u32]) -> Vec<u32> {
    (0..1u32 << bits.len())
        .map(|j| xor_bits(&bits.iter().map(|&b| 1 << b).collect::<Vec<_>>(), j))
        .collect()
}

/// The packed bases of `label` as `u32` (the layouts here have one output dimension or fewer
/// than 32 output bits).
fn bases32(layout: &LinearLayout, label: Label) -> Vec<u32> {
    bases(layout, label).iter().map(|&v| v as u32).collect()
}

/// Plans the code of a conversion `src → dst` (`plan` from `plan_conversion(src, dst, bits)`).
pub(crate) fn movement_for(
    plan: &ConversionPlan,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<Movement, String> {
    let src_registers = src.in_size(Label::Register);
    let dst_registers = dst.in_size(Label::Register);
    let mut movement = Movement {
        steps: Vec::new(),
        src_registers,
        dst_registers,
        element_bits,
        shared_bytes: 0,
        description: plan.kind().to_string(),
    };
    match plan {
        ConversionPlan::NoOp => {
            if dst_registers > src_registers {
                return Err(format!(
                    "a no-op conversion cannot fill {dst_registers} registers from {src_registers}"
                ));
            }
            movement.steps = (0..dst_registers)
                .map(|r| Step::Copy { dst: r, src: r })
                .collect();
        }
        ConversionPlan::RegisterPermutation(p) => movement.steps = register_steps(p, dst),
        ConversionPlan::WarpShuffle(p) => {
            movement.steps = shuffle_steps(p, dst);
            movement.description = format!(
                "warp shuffle: {} rounds of {} shuffle(s)",
                p.rounds.len(),
                p.shuffles_per_round
            );
        }
        ConversionPlan::SharedMemory(p) => return shared_movement(p, src, dst, element_bits),
    }
    Ok(movement)
}

fn register_steps(p: &RegisterPlan, dst: &LinearLayout) -> Vec<Step> {
    (0..dst.in_size(Label::Register))
        .map(|r| {
            let base = xor_bits(&p.from_register, r);
            if p.is_thread_uniform() {
                Step::Copy { dst: r, src: base }
            } else {
                Step::Select {
                    dst: r,
                    base,
                    select: Affine {
                        constant: 0,
                        lane: p.from_lane.clone(),
                        warp: p.from_warp.clone(),
                    },
                }
            }
        })
        .collect()
}

fn shuffle_steps(p: &ShufflePlan, dst: &LinearLayout) -> Vec<Step> {
    let send_offsets = vector_offsets(&p.vector.iter().map(|&(a, _)| a).collect::<Vec<_>>());
    let receive_offsets = vector_offsets(&p.vector.iter().map(|&(_, b)| b).collect::<Vec<_>>());
    let mut steps: Vec<Step> = p
        .rounds
        .iter()
        .map(|round| {
            let active = (0..round.source_lane.len())
                .filter(|&l| round.source_lane[l].is_some() && round.receive_register[l].is_some())
                .fold(0u32, |m, l| m | 1 << l);
            Step::Shuffle(ShuffleStep {
                send_offsets: send_offsets.clone(),
                receive_offsets: receive_offsets.clone(),
                send: LaneFn::fit(&round.send_register),
                source_lane: LaneFn::fit(&round.source_lane),
                receive: LaneFn::fit(&round.receive_register),
                active,
            })
        })
        .collect();
    steps.extend(duplicate_steps(dst));
    steps
}

/// `out[r] = out[r without its broadcast bits]` for every broadcast register of `dst`.
pub(crate) fn duplicate_steps(dst: &LinearLayout) -> Vec<Step> {
    let zeros = dst.zero_bases_mask(Label::Register);
    (0..dst.in_size(Label::Register))
        .filter(|r| r & zeros != 0)
        .map(|r| Step::Duplicate {
            dst: r,
            src: r & !zeros,
        })
        .collect()
}

/// The shared-memory conversion. Candidates: the plan's memory (its optimal swizzle), read by
/// vector loads or by `ldmatrix` where divisible, and the memories built for an `ldmatrix` read
/// ([`ldmatrix_memories`]); the one with the fewest issue slots (wavefronts plus instructions, on
/// the emulator's bank model) wins; on a tie an `ldmatrix` read, then the plan's own memory.
fn shared_movement(
    plan: &SharedPlan,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<Movement, String> {
    // A store narrower than a word cannot be done race-free with 32-bit accesses: plan the
    // memory for 32-bit elements and store each element in its own word.
    if plan.write().vector.bits < 32 {
        let widened = shared_plan(src, dst, 32).map_err(|e| e.to_string())?;
        return shared_candidate(&widened.swizzle.memory, src, dst, element_bits, true)
            .map(|(m, _)| m)
            .ok_or_else(|| "the widened shared-memory plan cannot be lowered".to_string());
    }
    let mut best: Option<(Movement, (u32, bool))> = None;
    let mut memories = vec![plan.swizzle.memory];
    memories.extend(ldmatrix_memories(src, dst, element_bits));
    for memory in &memories {
        if let Some((movement, cost)) = shared_candidate(memory, src, dst, element_bits, false) {
            // On equal cost, an ldmatrix read wins (fewer address computations).
            let key = (cost, !movement.description.contains("ldmatrix"));
            if best.as_ref().is_none_or(|(_, k)| key < *k) {
                best = Some((movement, key));
            }
        }
    }
    best.map(|(m, _)| m)
        .ok_or_else(|| "the shared-memory plan cannot be lowered".to_string())
}

/// The movement through `memory` (offset → tile) and its issue cost; `widened`: one element per
/// 32-bit word. `None` if the store would be narrower than a word.
pub(crate) fn shared_candidate(
    memory: &LinearLayout,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    widened: bool,
) -> Option<(Movement, u32)> {
    let bits = if widened { 32 } else { element_bits };
    let shift = (bits / 8).trailing_zeros();
    let store_address = src.invert_and_compose(memory).ok()?;
    let load_address = dst.invert_and_compose(memory).ok()?;
    let write = bank_wavefronts(memory, src, bits).ok()?;
    let read = bank_wavefronts(memory, dst, bits).ok()?;
    if write.vector.bits < 32 {
        return None;
    }
    let owners = Broadcast::of(src).ok()?;
    let store = Step::Store(store_step(
        &store_address,
        src,
        &write.vector.registers,
        &owners,
        shift,
    ));
    let warps = dst.in_size(Label::Warp);
    let cells = 1u32 << memory.total_in_bits();
    let mut read_step = Step::Load(load_step(&load_address, dst, &read.vector.registers, shift));
    let mut how = format!("{}-element loads", read.vector.elements);
    if !widened {
        if let Some(ldm) = ldmatrix_read(memory, &load_address, dst, element_bits) {
            let (matrices, transposed) = (ldm.matrices, ldm.transposed);
            let ldm = Step::Ldmatrix(ldm);
            if issue_cost(&ldm, warps) <= issue_cost(&read_step, warps) {
                how = format!(
                    "ldmatrix.x{matrices}{} loads",
                    if transposed { ".trans" } else { "" }
                );
                read_step = ldm;
            }
        }
    }
    let cost = issue_cost(&store, src.in_size(Label::Warp)) + issue_cost(&read_step, warps);
    let description = format!(
        "shared memory: {} B, {}-element stores, {how}{}",
        cells * (1 << shift),
        write.vector.elements,
        if widened {
            ", one element per word"
        } else {
            ""
        }
    );
    let mut steps = vec![Step::Barrier, store, Step::Barrier, read_step];
    steps.extend(duplicate_steps(dst));
    Some((
        Movement {
            steps,
            src_registers: src.in_size(Label::Register),
            dst_registers: dst.in_size(Label::Register),
            element_bits,
            shared_bytes: cells * (1 << shift),
            description,
        },
        cost,
    ))
}

/// Stores of `src` by its owners at `store_address` (registers/lanes/warps → offsets), `vector`
/// register bits per instruction (`shift`: log2 bytes per memory cell).
pub(crate) fn store_step(
    store_address: &LinearLayout,
    src: &LinearLayout,
    vector: &[u32],
    owners: &Broadcast,
    shift: u32,
) -> StoreStep {
    let vector_mask = vector.iter().fold(0u32, |m, &b| m | 1 << b);
    let registers = bases32(store_address, Label::Register);
    let chunks = (0..src.in_size(Label::Register))
        .filter(|r| r & (vector_mask | owners.register) == 0)
        .map(|r| (r, xor_bits(&registers, r) << shift))
        .collect();
    StoreStep {
        lane_guard: owners.lane,
        warp_guard: owners.warp,
        thread_offset: Affine {
            constant: 0,
            lane: bases32(store_address, Label::Lane),
            warp: bases32(store_address, Label::Warp),
        }
        .shifted(shift),
        chunks,
        elements: vector_offsets(vector),
        stride: 1 << shift,
    }
}

/// Memory layouts made for an `ldmatrix` read of `dst` (non-transposed and, for 16-bit
/// elements, transposed): offsets `0..q` are the 16-byte row the instruction fixes (the word's
/// registers and lanes 0–1; for `.trans` lanes 2–4), and the rows are swizzled as in Lemma 9.5
/// so that the 8 rows of one matrix (lanes 2–4; for `.trans` the word register and lanes 0–1)
/// and the lanes of one phase of `src`'s stores fall into distinct bank groups where possible.
pub(crate) fn ldmatrix_memories(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Vec<LinearLayout> {
    if element_bits > 32 || dst.in_size(Label::Lane) != LANES || src.in_size(Label::Lane) != LANES {
        return Vec::new();
    }
    let d = src.total_out_bits();
    let src_regs: Vec<u64> = bases(src, Label::Register)
        .into_iter()
        .filter(|&v| v != 0)
        .collect();
    let dst_regs: Vec<u64> = bases(dst, Label::Register)
        .into_iter()
        .filter(|&v| v != 0)
        .collect();
    let dst_lanes = bases(dst, Label::Lane);
    let mut out = Vec::new();
    for transposed in [false, true] {
        if transposed && element_bits != 16 {
            continue;
        }
        let (q, rows): (Vec<u64>, Vec<u64>) = if transposed {
            let Some(&word) = dst_regs.first() else {
                continue;
            };
            (
                dst_lanes[2..5].to_vec(),
                vec![word, dst_lanes[0], dst_lanes[1]],
            )
        } else {
            let w = (32 / element_bits).trailing_zeros() as usize;
            // The word's registers: those the source also holds first (wider stores).
            let mut regs: Vec<u64> = dst_regs
                .iter()
                .copied()
                .filter(|v| src_regs.contains(v))
                .collect();
            regs.extend(dst_regs.iter().copied().filter(|v| !src_regs.contains(v)));
            if regs.len() < w {
                continue;
            }
            let mut q = regs[..w].to_vec();
            q.extend([dst_lanes[0], dst_lanes[1]]);
            (q, dst_lanes[2..5].to_vec())
        };
        if Space::spanned_by(&q).dim() as usize != q.len() || q.len() as u32 > d {
            continue;
        }
        let line = (1024 / element_bits).trailing_zeros().min(d);
        let s = (d - line) as usize;
        // The lanes of one phase of the source's stores: its vector is the prefix of q it holds.
        let k = q.iter().take_while(|v| src_regs.contains(v)).count() as u32;
        let phases = (((1u32 << k) * element_bits) / 32).max(1);
        let src_lanes = bases(src, Label::Lane);
        let keep = src_lanes.len() - phases.trailing_zeros() as usize;
        let a_thr: Vec<u64> = src_lanes[..keep]
            .iter()
            .copied()
            .filter(|&v| v != 0)
            .collect();
        let u = Space::spanned_by(&[q.as_slice(), &a_thr].concat());
        let w = Space::spanned_by(&[q.as_slice(), &rows].concat());
        let segment = avoiding_segment(u.basis(), w.basis(), &q, d, s);
        let taken = [q.as_slice(), &segment].concat();
        let bank = tessera_layout::plan::space::complement_units(&taken, d);
        let offsets = [q.as_slice(), &bank, &segment].concat();
        if let Some(memory) = memory_from_offsets(src, &offsets) {
            out.push(memory);
        }
    }
    out
}

/// `s` segment (row) directions meeting `span(u)` and `span(w)` as little as possible, by the
/// construction of Lemma 9.5 (the one `plan/swizzle.rs` uses): a complement `C` of `U + W`,
/// then `eᵢ ⊕ fᵢ` for `U = I ⊕ E`, `W = I ⊕ F`; if that is too small, the unpaired vectors of the
/// larger side, vectors of `I` outside `q`, and broken pairs.
fn avoiding_segment(u: &[u64], w: &[u64], q: &[u64], d: u32, s: usize) -> Vec<u64> {
    use tessera_layout::plan::space::{complement_units, extend, intersection};
    let i = intersection(u, w);
    let i_extra = extend(q, &i);
    let e = extend(&i, u);
    let f = extend(&i, w);
    let c = complement_units(&[u, w].concat(), d);
    let pairs = e.len().min(f.len());
    let leftover: Vec<u64> = if e.len() > f.len() {
        e[pairs..].to_vec()
    } else {
        f[pairs..].to_vec()
    };
    let mut segment: Vec<u64> = c;
    segment.extend((0..pairs).map(|k| e[k] ^ f[k]));
    if segment.len() < s {
        segment.extend(leftover);
        segment.extend(i_extra);
        let mut k = 0;
        while segment.len() < s && k < pairs {
            let g = e[k] ^ f[k];
            if let Some(at) = segment.iter().position(|&v| v == g) {
                segment[at] = e[k];
                segment.push(f[k]);
            }
            k += 1;
        }
    }
    // Keep it independent of q and of itself.
    let mut space = Space::spanned_by(q);
    segment.retain(|&v| space.insert(v));
    segment.truncate(s);
    segment
}

/// `offset → tile` with the given images of the offset bits, on `like`'s tile (bijective).
pub(crate) fn memory_from_offsets(like: &LinearLayout, offsets: &[u64]) -> Option<LinearLayout> {
    let mut memory = LinearLayout::empty();
    for o in 0..like.num_out_dims() {
        memory = memory
            .with_out_dim(like.out_label(o), 1 << like.out_bits_at(o))
            .ok()?;
    }
    memory = memory.with_in_dim(Label::Offset).ok()?;
    for &v in offsets {
        memory.push_packed_basis(0, v).ok()?;
    }
    memory.is_invertible().then_some(memory)
}

/// Loads of every non-broadcast register of `dst` from `load_address` (registers → offsets),
/// `vector` register bits per instruction.
pub(crate) fn load_step(
    load_address: &LinearLayout,
    dst: &LinearLayout,
    vector: &[u32],
    shift: u32,
) -> LoadStep {
    let vector_mask = vector.iter().fold(0u32, |m, &b| m | 1 << b);
    let zeros = dst.zero_bases_mask(Label::Register);
    let registers = bases32(load_address, Label::Register);
    LoadStep {
        thread_offset: Affine {
            constant: 0,
            lane: bases32(load_address, Label::Lane),
            warp: bases32(load_address, Label::Warp),
        }
        .shifted(shift),
        chunks: (0..dst.in_size(Label::Register))
            .filter(|r| r & (vector_mask | zeros) == 0)
            .map(|r| (r, xor_bits(&registers, r) << shift))
            .collect(),
        elements: vector_offsets(vector),
        stride: 1 << shift,
    }
}

/// The `ldmatrix` read of `dst` from `memory` (`load_address` = `dst`'s registers, lanes, warps →
/// offsets), if the access left-divides the `ldmatrix` tile (plan/ldmatrix.rs), non-transposed
/// first.
pub(crate) fn ldmatrix_read(
    memory: &LinearLayout,
    load_address: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Option<LdmatrixStep> {
    if element_bits > 32 || dst.in_size(Label::Lane) != LANES {
        return None;
    }
    for transposed in [false, true] {
        if transposed && element_bits != 16 {
            continue;
        }
        let Ok(Some(plan)) = matrix_plan(memory, dst, element_bits, transposed) else {
            continue;
        };
        let word_bits = if transposed {
            1
        } else {
            (32 / element_bits).trailing_zeros() as usize
        };
        if let Some(step) = ldmatrix_step(
            load_address,
            &plan.register_order[..word_bits],
            transposed,
            element_bits,
        ) {
            return Some(step);
        }
    }
    None
}

/// Builds the `ldmatrix` loads given the registers that form one 32-bit word (`word[i]` = the
/// register bit of element-index bit `i`). Returns `None` if the addresses do not come out
/// 16-byte aligned (then the access was not divisible after all).
fn ldmatrix_step(
    load_address: &LinearLayout,
    word: &[u32],
    transposed: bool,
    element_bits: u32,
) -> Option<LdmatrixStep> {
    let registers = bases32(load_address, Label::Register);
    let lanes = bases32(load_address, Label::Lane);
    let warps = bases32(load_address, Label::Warp);
    // Register order: the word, then the non-broadcast registers (matrices, then chunks).
    let mut order: Vec<u32> = word.to_vec();
    order.extend(
        (0..registers.len() as u32).filter(|k| !word.contains(k) && registers[*k as usize] != 0),
    );
    let nonzero_rest = order.len() - word.len();
    let matrix_bits = nonzero_rest.min(2);
    let matrices = 1u32 << matrix_bits;
    let fragment = ldmatrix_fragment(matrices, transposed, element_bits).ok()?;
    let instruction_bits = word.len() + matrix_bits;
    // The fragment's (register, lane) of each (row, element), by enumeration (≤ 512 entries).
    let f_regs = bases32(&fragment, Label::Register);
    let f_lanes = bases32(&fragment, Label::Lane);
    let (row_o, elem_o) = (
        fragment.out_index(Label::Dim(0))?,
        fragment.out_index(Label::Dim(1))?,
    );
    // `cvt'(register', lane)`: the offset of fragment register `register'` (permuted order).
    let cvt = |reg_prime: u32, lane: u32| -> u32 {
        let reg = (0..instruction_bits)
            .filter(|&k| reg_prime >> k & 1 == 1)
            .fold(0u32, |r, k| r | 1 << order[k]);
        xor_bits(&registers, reg) ^ xor_bits(&lanes, lane)
    };
    let rows = 8 * matrices;
    let mut row_start = vec![None; rows as usize];
    for reg_prime in 0..1u32 << instruction_bits {
        for lane in 0..LANES {
            let packed = xor_bits(&f_regs, reg_prime) ^ xor_bits(&f_lanes, lane);
            let row = fragment.coord(packed as u64, row_o);
            if fragment.coord(packed as u64, elem_o) == 0 {
                row_start[row as usize] = Some(cvt(reg_prime, lane));
            }
        }
    }
    let bytes = element_bits / 8;
    let row_offsets: Vec<u32> = row_start.into_iter().collect::<Option<Vec<_>>>()?;
    // Addressing lane l supplies row l mod rows: XOR-linear in the low bits of l.
    let lane_terms: Vec<u32> = (0..5)
        .map(|k| {
            if 1 << k < rows {
                row_offsets[1 << k] ^ row_offsets[0]
            } else {
                0
            }
        })
        .collect();
    if row_offsets[0] != 0 {
        return None;
    }
    for l in 0..rows {
        if xor_bits(&lane_terms, l) != row_offsets[l as usize] {
            return None;
        }
    }
    let row_offset = Affine {
        constant: 0,
        lane: lane_terms,
        warp: warps,
    }
    .shifted(bytes.trailing_zeros());
    // Chunks: the non-broadcast registers above the instruction's.
    let chunk_bits: Vec<u32> = order[instruction_bits..].to_vec();
    let per_word = if transposed { 2 } else { 32 / element_bits };
    let chunks = (0..1u32 << chunk_bits.len())
        .map(|c| {
            let first = chunk_bits
                .iter()
                .enumerate()
                .filter(|&(i, _)| c >> i & 1 == 1)
                .fold(0u32, |r, (_, &k)| r | 1 << k);
            let offset = xor_bits(&registers, first) << bytes.trailing_zeros();
            let targets = (0..matrices)
                .map(|m| {
                    (0..per_word)
                        .map(|j| {
                            let reg_prime = j | m << word.len();
                            (0..instruction_bits)
                                .filter(|&k| reg_prime >> k & 1 == 1)
                                .fold(first, |r, k| r | 1 << order[k])
                        })
                        .collect()
                })
                .collect();
            (offset, targets)
        })
        .collect();
    // Every address must be 16-byte aligned.
    let aligned = |v: u32| v.is_multiple_of(16);
    if !row_offset
        .lane
        .iter()
        .chain(&row_offset.warp)
        .all(|&t| aligned(t))
        || !chunk_bits
            .iter()
            .all(|&k| aligned(registers[k as usize] << bytes.trailing_zeros()))
    {
        return None;
    }
    Some(LdmatrixStep {
        matrices,
        transposed,
        row_offset,
        chunks,
    })
}

/// The shared-memory accesses of a memory step in one warp: per instruction, `(byte address,
/// bytes)` of each participating lane (for `ldmatrix`: each row address).
pub(crate) fn step_accesses(step: &Step, warp: u32) -> Vec<Vec<(u32, u32)>> {
    match step {
        Step::Store(s) => s
            .chunks
            .iter()
            .map(|&(_, off)| {
                (0..LANES)
                    .filter(|l| l & s.lane_guard == 0 && warp & s.warp_guard == 0)
                    .map(|l| {
                        (
                            off ^ s.thread_offset.eval(l, warp),
                            s.stride * s.elements.len() as u32,
                        )
                    })
                    .collect()
            })
            .collect(),
        Step::Load(s) => s
            .chunks
            .iter()
            .map(|&(_, off)| {
                (0..LANES)
                    .map(|l| {
                        let at = off ^ s.thread_offset.eval(l, warp);
                        let bytes = s.stride * s.elements.len() as u32;
                        if bytes < 4 {
                            (at & !3, 4)
                        } else {
                            (at, bytes)
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
                    .map(|l| (off ^ s.row_offset.eval(l, warp), 16))
                    .collect()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Wavefronts of one warp-wide access: 32 banks × 4 bytes, the most distinct words any bank
/// serves (the emulator's model).
pub(crate) fn wavefronts(access: &[(u32, u32)]) -> u32 {
    let mut words: Vec<u32> = access
        .iter()
        .flat_map(|&(at, bytes)| (at / 4)..(at + bytes).div_ceil(4))
        .collect();
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u32; 32];
    for w in words {
        per_bank[(w % 32) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0)
}

/// Issue slots of a memory step summed over the warps: wavefronts plus one per instruction.
pub(crate) fn issue_cost(step: &Step, warps: u32) -> u32 {
    (0..warps)
        .map(|w| {
            step_accesses(step, w)
                .iter()
                .map(|a| wavefronts(a) + 1)
                .sum::<u32>()
        })
        .sum()
}

// -------------------------------------------------------------------------------------------
// Rendering
// -------------------------------------------------------------------------------------------

/// What rendering needs besides the movement: the thread's lane and warp (`u32` expressions
/// computed once per thread), the element type, the span of the user's code the calls are
/// attributed to, and the shared-memory address of the movement's region.
pub(crate) struct Render {
    pub lane: TokenStream,
    pub warp: TokenStream,
    pub elem: TokenStream,
    pub span: Span,
    pub shared_offset: u32,
}

/// An unsuffixed integer literal for an array index or length.
pub(crate) fn index_lit(i: u32) -> Literal {
    Literal::usize_unsuffixed(i as usize)
}

/// The expression (a block) computing the destination array of `movement` from the array
/// `src` (elements of type `elem`); shared memory at `shared_offset` bytes into the kernel's
/// dynamic shared memory. Calls that the emulator attributes to a source line carry `span`.
pub(crate) fn render_movement(movement: &Movement, src: &Ident, rc: &Render) -> TokenStream {
    let elem = &rc.elem;
    let shared_offset = rc.shared_offset;
    let out = format_ident!("__tessera_out");
    let n_out = index_lit(movement.dst_registers);
    // A pure copy of a prefix: no per-thread code.
    if movement
        .steps
        .iter()
        .all(|s| matches!(s, Step::Copy { .. }))
    {
        let elements = movement.steps.iter().map(|s| match s {
            Step::Copy { src: r, .. } => {
                let r = index_lit(*r);
                quote!(#src[#r])
            }
            _ => unreachable!("all steps are copies"),
        });
        return quote!({ let __tessera_copy: [#elem; #n_out] = [#(#elements),*]; __tessera_copy });
    }
    let smem = quote!(__tessera_smem);
    let offset = Literal::u32_suffixed(shared_offset);
    let body: Vec<TokenStream> = movement
        .steps
        .iter()
        .map(|step| render_step(step, movement.element_bits, src, &out, rc, &smem))
        .collect();
    let smem_decl = if movement.shared_bytes > 0 {
        quote!(let #smem: u32 = ::tessera::device::dynamic_shared_base() + #offset;)
    } else {
        quote!()
    };
    quote! {{
        #smem_decl
        #[allow(unused_mut)]
        let mut #out: [#elem; #n_out] = [#src[0]; #n_out];
        #(#body)*
        #out
    }}
}

/// `(words, elements)` of a vector of `n` elements of `bits` bits packed into 32-bit words.
fn word_count(n: usize, bits: u32) -> usize {
    (n * bits as usize).div_ceil(32)
}

fn render_step(
    step: &Step,
    bits: u32,
    src: &Ident,
    out: &Ident,
    rc: &Render,
    smem: &TokenStream,
) -> TokenStream {
    let (lane, warp, elem, span) = (&rc.lane, &rc.warp, &rc.elem, rc.span);
    match step {
        Step::Copy { dst, src: s } => {
            let (d, s) = (index_lit(*dst), index_lit(*s));
            quote!(#out[#d] = #src[#s];)
        }
        Step::Duplicate { dst, src: s } => {
            let (d, s) = (index_lit(*dst), index_lit(*s));
            quote!(#out[#d] = #out[#s];)
        }
        Step::Select { dst, base, select } => {
            let d = index_lit(*dst);
            let sel = select.render(lane, warp);
            let arms = select.values().into_iter().map(|v| {
                let (lit, r) = (Literal::u32_suffixed(v), index_lit(base ^ v));
                quote!(#lit => #src[#r],)
            });
            let fallback = index_lit(*base);
            quote!(#out[#d] = match #sel { #(#arms)* _ => #src[#fallback], };)
        }
        Step::Barrier => quote_spanned!(span=> ::tessera::device::sync_threads();),
        Step::Shuffle(s) => render_shuffle(s, bits, src, out, rc),
        Step::Store(s) => render_store(s, bits, src, rc, smem),
        Step::Load(s) => {
            let n = s.elements.len();
            let thread = s.thread_offset.render(lane, warp);
            let widened = s.stride * 8 != bits;
            let bytes = s.stride as usize * n;
            let loads = s.chunks.iter().map(|&(first, off)| {
                let off = Literal::u32_suffixed(off);
                let addr = quote!(#smem + (#off ^ __tessera_thread));
                let targets: Vec<Literal> = s.elements.iter().map(|&e| index_lit(first ^ e)).collect();
                if widened {
                    let load = match n {
                        1 => quote_spanned!(span=> [::tessera::device::ld_shared_v1::<u32>(#addr)]),
                        2 => quote_spanned!(span=> ::tessera::device::ld_shared_v2::<u32>(#addr)),
                        _ => quote_spanned!(span=> ::tessera::device::ld_shared_v4::<u32>(#addr)),
                    };
                    let assigns = targets.iter().enumerate().map(|(j, t)| {
                        let j = index_lit(j as u32);
                        quote!(#out[#t] = ::tessera::tile_move::extract_element::<#elem>(__tessera_words[#j], 0);)
                    });
                    quote!({ let __tessera_words: [u32; #n] = #load; #(#assigns)* })
                } else if bytes < 4 {
                    // Sub-word: load the word, take the elements at their byte.
                    let load = quote_spanned!(span=> ::tessera::device::ld_shared_v1::<u32>(__tessera_at & !3u32));
                    let step_bytes = Literal::u32_suffixed(bits / 8);
                    let assigns = targets.iter().enumerate().map(|(j, t)| {
                        let j = Literal::u32_suffixed(j as u32);
                        quote!(#out[#t] = ::tessera::tile_move::extract_element::<#elem>(
                            __tessera_word, (__tessera_at & 3u32) + #j * #step_bytes);)
                    });
                    quote!({ let __tessera_at: u32 = #addr; let __tessera_word: u32 = #load; #(#assigns)* })
                } else {
                    let w = word_count(n, bits);
                    let load = match w {
                        1 => quote_spanned!(span=> [::tessera::device::ld_shared_v1::<u32>(#addr)]),
                        2 => quote_spanned!(span=> ::tessera::device::ld_shared_v2::<u32>(#addr)),
                        _ => quote_spanned!(span=> ::tessera::device::ld_shared_v4::<u32>(#addr)),
                    };
                    let assigns = targets.iter().enumerate().map(|(j, t)| {
                        let j = index_lit(j as u32);
                        quote!(#out[#t] = __tessera_elements[#j];)
                    });
                    quote!({
                        let __tessera_elements: [#elem; #n] =
                            ::tessera::tile_move::unpack_words::<#elem, #n, #w>(#load);
                        #(#assigns)*
                    })
                }
            });
            quote! {{
                let __tessera_thread: u32 = #thread;
                // SAFETY: planned in-bounds, aligned addresses of this conversion's region.
                unsafe { #(#loads)* }
            }}
        }
        Step::Ldmatrix(s) => {
            let row = s.row_offset.render(lane, warp);
            let per_word = if s.transposed {
                2
            } else {
                (32 / bits) as usize
            };
            let name = format_ident!(
                "ldmatrix_x{}{}",
                s.matrices,
                if s.transposed { "_trans" } else { "" }
            );
            let loads = s.chunks.iter().map(|(off, targets)| {
                let off = Literal::u32_suffixed(*off);
                let assigns = targets.iter().enumerate().map(|(m, regs)| {
                    let m = index_lit(m as u32);
                    let sets = regs.iter().enumerate().map(|(j, &r)| {
                        let (j, r) = (index_lit(j as u32), index_lit(r));
                        quote!(#out[#r] = __tessera_elements[#j];)
                    });
                    quote!({
                        let __tessera_elements: [#elem; #per_word] =
                            ::tessera::tile_move::unpack_words::<#elem, #per_word, 1>([__tessera_words[#m]]);
                        #(#sets)*
                    })
                });
                let call = quote_spanned!(span=> ::tessera::device::#name(#smem + (#off ^ __tessera_row)));
                quote!({ let __tessera_words = #call; #(#assigns)* })
            });
            quote! {{
                let __tessera_row: u32 = #row;
                // SAFETY: every lane executes it; rows are 16-byte aligned in this region.
                unsafe { #(#loads)* }
            }}
        }
    }
}

/// The owners' vector stores of `s` (`smem`: the region's shared-window address).
pub(crate) fn render_store(
    s: &StoreStep,
    bits: u32,
    src: &Ident,
    rc: &Render,
    smem: &TokenStream,
) -> TokenStream {
    let (lane, warp, elem, span) = (&rc.lane, &rc.warp, &rc.elem, rc.span);
    let n = s.elements.len();
    let thread = s.thread_offset.render(lane, warp);
    let widened = s.stride * 8 != bits;
    let stores = s.chunks.iter().map(|&(first, off)| {
        let off = Literal::u32_suffixed(off);
        let values = s.elements.iter().map(|&e| {
            let r = index_lit(first ^ e);
            quote!(#src[#r])
        });
        let (words, value) = if widened {
            let values = values.map(|v| quote!(::tessera::tile::Elem::to_bits(#v) as u32));
            (n, quote!([#(#values),*]))
        } else {
            let w = word_count(n, bits);
            (
                w,
                quote!(::tessera::tile_move::pack_words::<#elem, #n, #w>([#(#values),*])),
            )
        };
        let addr = quote!(#smem + (#off ^ __tessera_thread));
        match words {
            1 => quote_spanned!(span=> ::tessera::device::st_shared_v1::<u32>(#addr, (#value)[0]);),
            2 => quote_spanned!(span=> ::tessera::device::st_shared_v2::<u32>(#addr, #value);),
            _ => quote_spanned!(span=> ::tessera::device::st_shared_v4::<u32>(#addr, #value);),
        }
    });
    let lane_guard = Literal::u32_suffixed(s.lane_guard);
    let warp_guard = Literal::u32_suffixed(s.warp_guard);
    quote! {
        if #lane & #lane_guard == 0 && #warp & #warp_guard == 0 {
            let __tessera_thread: u32 = #thread;
            // SAFETY: the addresses lie in this conversion's region of dynamic shared
            // memory, aligned to the access (planned at expansion time).
            unsafe { #(#stores)* }
        }
    }
}

fn render_shuffle(
    s: &ShuffleStep,
    bits: u32,
    src: &Ident,
    out: &Ident,
    rc: &Render,
) -> TokenStream {
    let (lane, warp, elem, span) = (&rc.lane, &rc.warp, &rc.elem, rc.span);
    let n = s.send_offsets.len();
    let w = word_count(n, bits);
    let pack = |base: u32| {
        let values = s.send_offsets.iter().map(|&o| {
            let r = index_lit(base ^ o);
            quote!(#src[#r])
        });
        quote!(::tessera::tile_move::pack_words::<#elem, #n, #w>([#(#values),*]))
    };
    let send_values = s.send.values();
    let sent = if send_values.len() == 1 {
        pack(send_values[0])
    } else {
        let arms = send_values.iter().map(|&v| {
            let lit = Literal::u32_suffixed(v);
            let p = pack(v);
            quote!(#lit => #p,)
        });
        let fallback = pack(send_values[0]);
        let sel = s.send.render(lane, warp);
        quote!(match #sel { #(#arms)* _ => #fallback, })
    };
    let source = s.source_lane.render(lane, warp);
    let shuffles = (0..w).map(|k| {
        let k = index_lit(k as u32);
        quote_spanned!(span=> ::tessera::device::shfl_idx_b32(
            ::tessera::device::FULL_MASK, __tessera_sent[#k], __tessera_source,
            ::tessera::device::SHFL_C_FULL))
    });
    let store = |base: u32| {
        let sets = s.receive_offsets.iter().enumerate().map(|(j, &o)| {
            let (j, r) = (index_lit(j as u32), index_lit(base ^ o));
            quote!(#out[#r] = __tessera_got[#j];)
        });
        quote!(#(#sets)*)
    };
    let receive_values = s.receive.values();
    let write = if receive_values.len() == 1 {
        store(receive_values[0])
    } else {
        let arms = receive_values.iter().map(|&v| {
            let lit = Literal::u32_suffixed(v);
            let st = store(v);
            quote!(#lit => { #st })
        });
        let sel = s.receive.render(lane, warp);
        quote!(match #sel { #(#arms)* _ => {} })
    };
    let guarded = if s.active == u32::MAX {
        write
    } else {
        let active = Literal::u32_suffixed(s.active);
        quote!(if (#active >> #lane) & 1 == 1 { #write })
    };
    quote! {{
        let __tessera_sent: [u32; #w] = #sent;
        let __tessera_source: u32 = #source;
        let __tessera_got: [#elem; #n] = ::tessera::tile_move::unpack_words::<#elem, #n, #w>(
            [#(#shuffles),*]);
        #guarded
    }}
}

#[cfg(test)]
#[path = "convert_tests.rs"]
pub(crate) mod tests;
