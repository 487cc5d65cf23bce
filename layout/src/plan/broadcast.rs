//! Broadcast analysis (§5.1, Table 3): which hardware bits of a distributed layout only repeat
//! elements held elsewhere, so that stores (and shared-memory writes) are issued once.
//!
//! A zero column of the layout matrix is a bit whose flip reaches the same element: registers
//! `r` and `r ⊕ 2^k` hold the same value, or lanes, or warps. More generally a column in the span
//! of the columns before it (Triton's free variables, in the order register, lane, warp, block)
//! repeats an element; every element has exactly one holder whose free bits are all zero — its
//! *owner*, the only copy that needs to be stored.

use super::{check_distributed, PlanError};
use crate::{Label, LinearLayout};

/// The duplicate (free) bits of each hardware dimension of a distributed layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Broadcast {
    /// Register bits that repeat elements (bit `k` set = register bit `k`).
    pub register: u32,
    /// Lane bits that repeat elements.
    pub lane: u32,
    /// Warp bits that repeat elements.
    pub warp: u32,
    /// Block bits that repeat elements.
    pub block: u32,
}

impl Broadcast {
    /// The free bits of `layout` (a distributed layout).
    pub fn of(layout: &LinearLayout) -> Result<Self, PlanError> {
        check_distributed(layout, "distributed")?;
        let masks = layout.free_variable_masks();
        let mask = |label: Label| layout.in_index(label).map_or(0, |i| masks[i]);
        Ok(Broadcast {
            register: mask(Label::Register),
            lane: mask(Label::Lane),
            warp: mask(Label::Warp),
            block: mask(Label::Block),
        })
    }

    /// Whether `(register, lane, warp, block)` owns its element: none of its duplicate bits is set.
    pub fn is_owner(&self, register: u32, lane: u32, warp: u32, block: u32) -> bool {
        register & self.register == 0
            && lane & self.lane == 0
            && warp & self.warp == 0
            && block & self.block == 0
    }

    /// Whether the layout holds every element exactly once.
    pub fn is_trivial(&self) -> bool {
        self.register | self.lane | self.warp | self.block == 0
    }

    /// How many hardware positions hold each element.
    pub fn copies(&self) -> u64 {
        1u64 << (self.register.count_ones()
            + self.lane.count_ones()
            + self.warp.count_ones()
            + self.block.count_ones())
    }
}

/// Warp-level store instructions for a whole tile (Table 3's count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreCount {
    /// Every warp stores every register (vectors of `vector_elements`).
    pub naive: u64,
    /// Only owners store: duplicate registers and duplicate warps issue nothing; duplicate lanes
    /// are predicated off inside an instruction (they save bandwidth, not instructions).
    pub deduplicated: u64,
    /// Lanes that store (per warp) after deduplication.
    pub active_lanes: u32,
}

/// Store instructions of `layout` with `vector_elements` elements per instruction (vectors pack
/// distinct registers, so at most `2^(non-duplicate register bits)`).
pub fn store_instructions(
    layout: &LinearLayout,
    vector_elements: u32,
) -> Result<StoreCount, PlanError> {
    let broadcast = Broadcast::of(layout)?;
    let registers = layout.in_size(Label::Register) as u64;
    let unique_registers = registers >> broadcast.register.count_ones();
    if !vector_elements.is_power_of_two() || vector_elements as u64 > unique_registers {
        return Err(PlanError::new(std::format!(
            "a vector of {vector_elements} elements does not fit the {unique_registers} distinct registers of a thread"
        )));
    }
    let vec = vector_elements as u64;
    let warps = layout.in_size(Label::Warp) as u64 * layout.in_size(Label::Block) as u64;
    let unique_warps = warps >> (broadcast.warp.count_ones() + broadcast.block.count_ones());
    let lanes = layout.in_size(Label::Lane);
    Ok(StoreCount {
        naive: warps * registers.div_ceil(vec),
        deduplicated: unique_warps * (unique_registers / vec),
        active_lanes: lanes >> broadcast.lane.count_ones(),
    })
}
