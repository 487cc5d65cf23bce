//! Layout conversions `A → B` between distributed layouts of one tile (§5.4).
//!
//! Every position `(register, lane, warp)` of `B` needs the element `B(x)`; `A` holds it at some
//! position of `A⁻¹(B(x))`. By increasing cost the planner finds:
//! - **no-op**: `A` already holds `B(x)` at `x` for every position of `B` (the layouts are equal
//!   on `B`'s domain; `A` may have extra duplicate registers);
//! - **register permutation**: each thread already holds what it needs (`span(B_Reg) ⊆
//!   span(A_Reg)` and `B`'s lane and warp bases differ from `A`'s by register directions): the
//!   source register is a linear function of the destination register (and, when lane or warp
//!   bases differ by register directions, of the lane/warp index);
//! - **warp shuffles** when no element crosses a warp (`A_Wrp = B_Wrp` bit for bit): with
//!   `U = span(A_Reg)`, `W = span(B_Reg)` and `X` the space a warp holds, a vector
//!   `V ⊆ A_Reg ∩ B_Reg` of up to 32 bits moves per shuffle; `I = U ∩ W`, `U = I ⊕ E`,
//!   `W = I ⊕ F`, `C` completes `U + W` to `X`, `G = {eᵢ ⊕ fᵢ}`, and `S = span(V ∪ C ∪ G)` meets
//!   `U` and `W` only in `span(V)` (Lemma 9.5), so each coset of `S` holds at most one vector per
//!   sending thread of `A` and per receiving thread of `B`. `R` completes `S` to `X`; round
//!   `i < 2^|R|` moves the coset `R(i) ⊕ S`: each lane sends its vector of that coset and reads
//!   the one it needs from the lane that holds it. With no broadcasting this is the paper's
//!   construction (`C` is `I_Thr`, the lanes shared by both); broadcast bits (zero bases) only
//!   shrink `U`, `W` or the lanes, and duplicate registers of `B` are filled by copies at the end;
//! - **shared memory**: store `A` once per element (broadcast copies skipped), barrier, load `B`,
//!   through the optimal swizzle of [`optimal_swizzle_on`] for the target's bank phases
//!   ([`plan_conversion_on`]; [`plan_conversion`] plans for NVIDIA's, as Triton does).
//!
//! **Cost model** (in issue slots of the shared-memory pipe per warp, which also executes
//! shuffles): no-op and register permutations are free (register moves); warp shuffles cost
//! `rounds × ⌈vector bits / 32⌉`; shared memory costs the wavefronts of all stores and loads
//! ([`BankAccess::total_wavefronts`]) plus [`BARRIER_COST`] for the barrier between them. The
//! cheaper of shuffles and shared memory is chosen, shuffles on a tie (no shared memory used).
//! Conversions across CTAs (different `block` bases) need distributed shared memory and are an
//! error.

use super::bank::BankAccess;
use super::broadcast::Broadcast;
use super::space::RegisterSolver;
use super::swizzle::{optimal_swizzle_on, Swizzle};
use super::{bases, check_distributed_pair, combine, nonzero_bases, PlanError, Space, Vendor};
use crate::f2::EchelonBasis;
use crate::{Label, LinearLayout};
use std::boxed::Box;
use std::vec::Vec;

/// Issue slots charged for the barrier between the shared-memory store and load.
pub const BARRIER_COST: u32 = 8;

/// How a conversion moves data.
#[derive(Clone, Debug)]
pub enum ConversionPlan {
    /// Nothing moves.
    NoOp,
    /// Registers are renamed inside each thread.
    RegisterPermutation(RegisterPlan),
    /// Lanes exchange registers by warp shuffles.
    WarpShuffle(Box<ShufflePlan>),
    /// Through shared memory.
    SharedMemory(Box<SharedPlan>),
}

impl ConversionPlan {
    /// A short name.
    pub fn kind(&self) -> &'static str {
        Self::KINDS[match self {
            ConversionPlan::NoOp => 0,
            ConversionPlan::RegisterPermutation(_) => 1,
            ConversionPlan::WarpShuffle(_) => 2,
            ConversionPlan::SharedMemory(_) => 3,
        }]
    }

    /// The [`kind`](Self::kind) of every variant, in declaration order.
    pub const KINDS: [&'static str; 4] = [
        "no-op",
        "register permutation",
        "warp shuffle",
        "shared memory",
    ];
}

/// `B` register `r` of lane `l`, warp `w` takes `A` register
/// `⊕ from_register[k] (r_k) ⊕ from_lane[k] (l_k) ⊕ from_warp[k] (w_k)` of the same thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterPlan {
    /// Per bit of `B`'s register index: the `A` register index it contributes.
    pub from_register: Vec<u32>,
    /// Per lane bit: the `A` register index it contributes (0 unless the lane bases differ).
    pub from_lane: Vec<u32>,
    /// Per warp bit: likewise.
    pub from_warp: Vec<u32>,
}

impl RegisterPlan {
    /// The `A` register that `B` register `register` of `(lane, warp)` copies.
    pub fn source(&self, register: u32, lane: u32, warp: u32) -> u32 {
        let pick = |table: &[u32], x: u32| {
            table
                .iter()
                .enumerate()
                .filter(|(k, _)| x >> k & 1 == 1)
                .fold(0, |acc, (_, &v)| acc ^ v)
        };
        pick(&self.from_register, register)
            ^ pick(&self.from_lane, lane)
            ^ pick(&self.from_warp, warp)
    }

    /// Whether the source register depends on the destination register only (a plain renaming).
    pub fn is_thread_uniform(&self) -> bool {
        self.from_lane
            .iter()
            .chain(&self.from_warp)
            .all(|&v| v == 0)
    }
}

/// One round of a shuffle plan: per lane (index = lane id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShuffleRound {
    /// The `A` register of the first element of the vector the lane sends (`None`: it holds
    /// nothing of this round's coset and sends nothing useful).
    pub send_register: Vec<Option<u32>>,
    /// The lane it reads from (`None`: it needs nothing this round).
    pub source_lane: Vec<Option<u32>>,
    /// The `B` register where the first element of the received vector goes.
    pub receive_register: Vec<Option<u32>>,
}

/// A conversion by warp shuffles (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShufflePlan {
    /// Bits of one element.
    pub element_bits: u32,
    /// `V`: the `(A register bit, B register bit)` pairs with the same element direction, packed
    /// into each shuffle: element `j` of a vector is register `base ⊕ Σ_{j_i = 1} 2^bit_i`.
    pub vector: Vec<(u32, u32)>,
    /// 32-bit shuffles per round: `⌈2^|V| × bits / 32⌉`.
    pub shuffles_per_round: u32,
    /// `S = span(V ∪ C ∪ G)`: the elements exchanged in one round.
    pub exchange_basis: Vec<u64>,
    /// `R`: round `i` moves the coset `R(i) ⊕ S`.
    pub round_basis: Vec<u64>,
    /// The rounds, `2^|R|` of them.
    pub rounds: Vec<ShuffleRound>,
    /// Register bits of `B` that repeat elements: after the rounds, `B` register `r` copies
    /// register `r & !duplicate_registers`.
    pub duplicate_registers: u32,
}

impl ShufflePlan {
    /// Shuffle instructions per warp.
    pub fn shuffles(&self) -> u32 {
        self.rounds.len() as u32 * self.shuffles_per_round
    }
}

/// A conversion through shared memory.
#[derive(Clone, Debug)]
pub struct SharedPlan {
    /// The memory layout and the wavefronts of both sides.
    pub swizzle: Swizzle,
    /// `A`'s `(register, lane, warp) → offset` (the store addresses).
    pub store_address: LinearLayout,
    /// `B`'s `(register, lane, warp) → offset` (the load addresses).
    pub load_address: LinearLayout,
    /// Which positions of `A` store (the owner of each element).
    pub store_owners: Broadcast,
}

impl SharedPlan {
    /// The store (`A`) side.
    pub fn write(&self) -> &BankAccess {
        &self.swizzle.write
    }

    /// The load (`B`) side.
    pub fn read(&self) -> &BankAccess {
        &self.swizzle.read
    }
}

/// A planned conversion with the costs the choice was made on.
#[derive(Clone, Debug)]
pub struct Conversion {
    /// The chosen plan.
    pub plan: ConversionPlan,
    /// Cost of the warp-shuffle plan, when one exists.
    pub shuffle_cost: Option<u32>,
    /// Cost of the shared-memory plan, when it was considered (not for no-ops and register
    /// permutations).
    pub shared_cost: Option<u32>,
    /// The shared-memory alternative when shuffles were chosen (for comparison).
    pub shared_alternative: Option<SharedPlan>,
}

/// Plans the conversion of a tile from distributed layout `src` (`A`) to `dst` (`B`), elements
/// of `element_bits` bits, on an NVIDIA GPU. See the module docs.
pub fn plan_conversion(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<Conversion, PlanError> {
    plan_conversion_on(Vendor::Nvidia, src, dst, element_bits)
}

/// [`plan_conversion`] on `vendor`'s GPUs: its shared-memory plan swizzled and priced for the
/// vendor's bank phases ([`optimal_swizzle_on`]).
pub fn plan_conversion_on(
    vendor: Vendor,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<Conversion, PlanError> {
    check_distributed_pair((src, "source"), (dst, "destination"), element_bits)?;
    for label in [Label::Lane, Label::Warp] {
        if src.in_bits(label) != dst.in_bits(label) {
            return Err(PlanError::DifferentHardware {
                label,
                src: src.in_size(label),
                dst: dst.in_size(label),
            });
        }
    }
    if bases(src, Label::Block) != bases(dst, Label::Block) {
        return Err(PlanError::CrossCtaBlocks);
    }
    let in_cta = Space::spanned_by(&hardware_bases(
        src,
        &[Label::Register, Label::Lane, Label::Warp],
    ));
    if hardware_bases(dst, &[Label::Register, Label::Lane, Label::Warp])
        .iter()
        .any(|&v| !in_cta.contains(v))
    {
        return Err(PlanError::CrossCtaElements);
    }
    if is_noop(src, dst) {
        return Ok(Conversion {
            plan: ConversionPlan::NoOp,
            shuffle_cost: None,
            shared_cost: None,
            shared_alternative: None,
        });
    }
    if let Some(plan) = register_plan(src, dst) {
        return Ok(Conversion {
            plan: ConversionPlan::RegisterPermutation(plan),
            shuffle_cost: None,
            shared_cost: None,
            shared_alternative: None,
        });
    }
    let shared = shared_plan_on(vendor, src, dst, element_bits)?;
    let shared_cost =
        shared.write().total_wavefronts() + shared.read().total_wavefronts() + BARRIER_COST;
    match shuffle_plan(src, dst, element_bits) {
        Some(shuffle) if shuffle.shuffles() <= shared_cost => Ok(Conversion {
            shuffle_cost: Some(shuffle.shuffles()),
            plan: ConversionPlan::WarpShuffle(Box::new(shuffle)),
            shared_cost: Some(shared_cost),
            shared_alternative: Some(shared),
        }),
        shuffle => Ok(Conversion {
            shuffle_cost: shuffle.map(|s| s.shuffles()),
            plan: ConversionPlan::SharedMemory(Box::new(shared)),
            shared_cost: Some(shared_cost),
            shared_alternative: None,
        }),
    }
}

/// The packed bases of the given input dimensions, in order.
fn hardware_bases(layout: &LinearLayout, labels: &[Label]) -> Vec<u64> {
    labels.iter().flat_map(|&l| bases(layout, l)).collect()
}

/// Whether every position of `dst` already holds its element in `src`.
fn is_noop(src: &LinearLayout, dst: &LinearLayout) -> bool {
    [Label::Register, Label::Lane, Label::Warp]
        .iter()
        .all(|&label| {
            let (a, b) = (bases(src, label), bases(dst, label));
            b.len() <= a.len() && a[..b.len()] == b[..]
        })
}

/// The register plan, if every thread already holds what it needs.
fn register_plan(src: &LinearLayout, dst: &LinearLayout) -> Option<RegisterPlan> {
    let solver = RegisterSolver::new(src);
    let from_register = bases(dst, Label::Register)
        .iter()
        .map(|&v| solver.register_of(v))
        .collect::<Option<Vec<u32>>>()?;
    let differences = |label: Label| {
        bases(dst, label)
            .iter()
            .zip(bases(src, label))
            .map(|(&b, a)| solver.register_of(a ^ b))
            .collect::<Option<Vec<u32>>>()
    };
    Some(RegisterPlan {
        from_register,
        from_lane: differences(Label::Lane)?,
        from_warp: differences(Label::Warp)?,
    })
}

/// Whether the non-zero bases of `label` are linearly independent (no duplicate other than zero
/// columns), the shape the shuffle construction relies on.
fn nonzero_independent(layout: &LinearLayout, labels: &[Label]) -> bool {
    let mut space = Space::new();
    labels
        .iter()
        .flat_map(|&l| nonzero_bases(layout, l))
        .all(|(_, v)| space.insert(v))
}

/// The warp-shuffle plan, if no element crosses a warp.
pub fn shuffle_plan(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Option<ShufflePlan> {
    if bases(src, Label::Warp) != bases(dst, Label::Warp)
        || !nonzero_independent(src, &[Label::Register, Label::Lane])
        || !nonzero_independent(dst, &[Label::Register, Label::Lane])
    {
        return None;
    }
    let a_regs = nonzero_bases(src, Label::Register);
    let b_regs = nonzero_bases(dst, Label::Register);
    let a_lanes: Vec<u64> = bases(src, Label::Lane);
    let b_lanes: Vec<u64> = bases(dst, Label::Lane);
    let a_reg_vectors: Vec<u64> = a_regs.iter().map(|&(_, v)| v).collect();
    let b_reg_vectors: Vec<u64> = b_regs.iter().map(|&(_, v)| v).collect();
    let warp_space = Space::spanned_by(&[a_reg_vectors.as_slice(), &a_lanes].concat());
    if !b_reg_vectors
        .iter()
        .chain(&b_lanes)
        .all(|&v| warp_space.contains(v))
    {
        return None;
    }
    // V: common register directions, up to 32 bits per shuffle.
    let max_vector = if element_bits >= 32 {
        0
    } else {
        (32 / element_bits).trailing_zeros() as usize
    };
    let vector: Vec<(u32, u32)> = a_regs
        .iter()
        .filter_map(|&(ka, v)| {
            b_regs
                .iter()
                .find(|&&(_, w)| w == v)
                .map(|&(kb, _)| (ka, kb))
        })
        .take(max_vector)
        .collect();
    let v_vectors: Vec<u64> = vector
        .iter()
        .map(|&(ka, _)| src.packed_basis(src.in_index(Label::Register).unwrap(), ka as usize))
        .collect();
    // Lemma 9.5 inside the warp's space X.
    let u = Space::spanned_by(&a_reg_vectors);
    let w = Space::spanned_by(&b_reg_vectors);
    let i = super::space::intersection(u.basis(), w.basis());
    let e = super::space::extend(&i, u.basis());
    let f = super::space::extend(&i, w.basis());
    let c = super::space::extend(&[u.basis(), w.basis()].concat(), warp_space.basis());
    let mut exchange = v_vectors.clone();
    exchange.extend(c.iter().copied());
    exchange.extend(e.iter().zip(&f).map(|(&x, &y)| x ^ y));
    let exchange_space = Space::spanned_by(&exchange);
    let round_basis = super::space::extend(exchange_space.basis(), warp_space.basis());

    // Canonical element of a vector: reduced modulo span(V).
    let mut v_echelon = EchelonBasis::new();
    for &v in &v_vectors {
        v_echelon.insert(v);
    }
    let canonical = |x: u64| v_echelon.reduce(x).0;
    // Solving "which element of my set lies in coset c": my set is lane ⊕ span(regs); the coset
    // is c ⊕ S. Solve lane ⊕ c ∈ span(regs) + S over [S basis, regs].
    let coset_solver = |regs: &[u64]| {
        let mut echelon = EchelonBasis::new();
        for &s in exchange_space.basis() {
            echelon.insert(s);
        }
        let n = exchange_space.dim();
        for &r in regs {
            echelon.insert(r);
        }
        (echelon, n, regs.to_vec())
    };
    let non_v = |regs: &[u64]| -> Vec<u64> {
        regs.iter()
            .copied()
            .filter(|x| !v_vectors.contains(x))
            .collect()
    };
    let (a_echelon, a_skip, a_rest) = coset_solver(&non_v(&a_reg_vectors));
    let (b_echelon, b_skip, b_rest) = coset_solver(&non_v(&b_reg_vectors));
    let element_in = |echelon: &EchelonBasis, skip: u32, rest: &[u64], lane_image: u64, c: u64| {
        let combo = echelon.express(lane_image ^ c)?;
        let regs = combine(rest, combo >> skip);
        Some(lane_image ^ regs)
    };
    let a_solver = RegisterSolver::new(src);
    let b_solver = RegisterSolver::new(dst);
    let mut holder = EchelonBasis::new();
    let mut holder_lane_bits = Vec::new();
    for &v in &a_reg_vectors {
        holder.insert(v);
        holder_lane_bits.push(u32::MAX);
    }
    for (k, &v) in a_lanes.iter().enumerate() {
        if v != 0 {
            holder.insert(v);
            holder_lane_bits.push(k as u32);
        }
    }
    let lane_of = |x: u64| -> Option<u32> {
        let combo = holder.express(x)?;
        Some(
            holder_lane_bits
                .iter()
                .enumerate()
                .filter(|&(j, &k)| combo >> j & 1 == 1 && k != u32::MAX)
                .fold(0, |acc, (_, &k)| acc | 1 << k),
        )
    };
    let lanes = 1u32 << a_lanes.len();
    let lane_image = |table: &[u64], lane: u32| combine(table, lane as u64);
    let mut rounds = Vec::with_capacity(1 << round_basis.len());
    for round in 0..(1u64 << round_basis.len()) {
        let c = combine(&round_basis, round);
        let mut r = ShuffleRound {
            send_register: Vec::with_capacity(lanes as usize),
            source_lane: Vec::with_capacity(lanes as usize),
            receive_register: Vec::with_capacity(lanes as usize),
        };
        for lane in 0..lanes {
            let a_lane = lane_image(&a_lanes, lane);
            let send = element_in(&a_echelon, a_skip, &a_rest, a_lane, c)
                .map(canonical)
                .map(|x| a_solver.register_of(x ^ a_lane).expect("the lane holds it"));
            let b_lane = lane_image(&b_lanes, lane);
            let need = element_in(&b_echelon, b_skip, &b_rest, b_lane, c).map(canonical);
            r.send_register.push(send);
            r.receive_register
                .push(need.map(|x| b_solver.register_of(x ^ b_lane).expect("the lane needs it")));
            r.source_lane
                .push(need.map(|x| lane_of(x).expect("the warp holds it")));
        }
        rounds.push(r);
    }
    let elements = 1u32 << vector.len();
    Some(ShufflePlan {
        element_bits,
        shuffles_per_round: (elements * element_bits).div_ceil(32),
        vector,
        exchange_basis: exchange_space.basis().to_vec(),
        round_basis,
        rounds,
        duplicate_registers: dst.zero_bases_mask(Label::Register),
    })
}

/// The shared-memory plan on an NVIDIA GPU: the optimal swizzle and both address maps.
pub fn shared_plan(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<SharedPlan, PlanError> {
    shared_plan_on(Vendor::Nvidia, src, dst, element_bits)
}

/// [`shared_plan`] for `vendor`'s bank phases.
pub fn shared_plan_on(
    vendor: Vendor,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Result<SharedPlan, PlanError> {
    let swizzle = optimal_swizzle_on(vendor, src, dst, element_bits)?;
    let store_address = src.invert_and_compose(&swizzle.memory)?;
    let load_address = dst.invert_and_compose(&swizzle.memory)?;
    Ok(SharedPlan {
        store_owners: Broadcast::of(src)?,
        swizzle,
        store_address,
        load_address,
    })
}
