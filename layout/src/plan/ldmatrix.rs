//! `ldmatrix` / `stmatrix` applicability (Theorem 5.1) and generalized vectorization (§5.3).
//!
//! With `M` the memory layout and `L` the distributed one, `cvt = M⁻¹ ∘ L` maps
//! `(register, lane, warp)` to shared-memory offsets. An instruction whose tile `T` fixes part of
//! that map can lower the access iff `T` left-divides `cvt` (Theorem 5.1). For `ldmatrix` /
//! `stmatrix` (`.m8n8.b16`, 8×16-byte rows, each thread a 32-bit word of a row),
//! `T = id(32/bits: register → offset) × id(4: lane → offset)`
//! ([`ldmatrix_tile`]): the first registers fill a 4-byte word, lanes 0–1 walk the four words of
//! a 16-byte row, and lanes 2–4 (each supplying one row address) and the remaining registers
//! (further matrices, `.x2`/`.x4`) are free. When `L` is not in that register order — column
//! major, say — the registers are permuted first ("generalized vectorization"): the permutation
//! is found while dividing, by looking up, for each register column of `T`, a register of `cvt`
//! with that image. `.trans` (16-bit only) is Triton's check instead of a division: lanes 2–4
//! must reach offsets 1, 2, 4 and nothing else may touch those offsets bits.

use super::{check_element_bits, check_same_tile, memory_offsets, nonzero_bases, PlanError};
use crate::families::ldmatrix::{ldmatrix_tile, LDMATRIX_TRANS_LANE_OFFSETS};
use crate::{Label, LinearLayout};
use std::vec::Vec;

/// How `ldmatrix`/`stmatrix` lowers an access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixPlan {
    /// Bits of one element.
    pub element_bits: u32,
    /// Whether it is the `.trans` variant.
    pub transposed: bool,
    /// The register order the instruction uses: entry `k` is the register bit of the layout that
    /// becomes bit `k` (identity when no permutation is needed).
    pub register_order: Vec<u32>,
    /// Matrices per instruction: 1, 2 or 4 (`.x1`, `.x2`, `.x4`).
    pub matrices: u32,
    /// `cvt / T` (for `.trans`, `cvt` with the registers permuted).
    pub quotient: LinearLayout,
}

impl MatrixPlan {
    /// Whether the registers had to be permuted.
    pub fn needs_permutation(&self) -> bool {
        self.register_order
            .iter()
            .enumerate()
            .any(|(k, &r)| r != k as u32)
    }
}

/// The `ldmatrix`/`stmatrix` plan (`transposed`: the `.trans` variant) for `distributed`
/// accessing shared memory laid out by `memory`, or `None` when the instruction cannot lower it.
pub fn matrix_plan(
    memory: &LinearLayout,
    distributed: &LinearLayout,
    element_bits: u32,
    transposed: bool,
) -> Result<Option<MatrixPlan>, PlanError> {
    check_element_bits(element_bits)?;
    check_same_tile(memory, distributed)?;
    memory_offsets(memory)?;
    if element_bits > 32 || (transposed && element_bits != 16) {
        return Ok(None);
    }
    if distributed.in_bits(Label::Lane) != 5 {
        return Ok(None);
    }
    let cvt = distributed.invert_and_compose(memory)?;
    let cvt = cvt.flatten_outs()?;
    let reg = cvt
        .in_index(Label::Register)
        .ok_or_else(|| PlanError::new("the distributed layout has no registers"))?;
    let regs: Vec<u64> = (0..cvt.in_bits_at(reg) as usize)
        .map(|k| cvt.packed_basis(reg, k))
        .collect();
    // Registers that must come first: offsets 1, 2, … of one 32-bit word (none for `.trans`,
    // where the word's two elements come from two rows: any non-zero register).
    let word = (32 / element_bits).trailing_zeros() as usize;
    let mut order: Vec<u32> = Vec::new();
    if transposed {
        match nonzero_bases(&cvt, Label::Register).first() {
            Some(&(k, _)) => order.push(k),
            None => return Ok(None),
        }
    } else {
        for i in 0..word {
            match (0..regs.len() as u32)
                .find(|&k| regs[k as usize] == 1 << i && !order.contains(&k))
            {
                Some(k) => order.push(k),
                None => return Ok(None),
            }
        }
    }
    let rest: Vec<u32> = (0..regs.len() as u32)
        .filter(|k| !order.contains(k))
        .collect();
    order.extend(rest);
    let mut permuted = cvt;
    for (k, &r) in order.iter().enumerate() {
        permuted.set_packed_basis(reg, k, regs[r as usize]);
    }
    let quotient = if transposed {
        let lane = permuted.in_index(Label::Lane).expect("checked");
        let lanes_ok = LDMATRIX_TRANS_LANE_OFFSETS
            .iter()
            .all(|&(k, off)| permuted.packed_basis(lane, k as usize) == off as u64);
        let others_clear = (0..permuted.num_in_dims()).all(|i| {
            (0..permuted.in_bits_at(i) as usize).all(|k| {
                let is_tile = i == lane
                    && LDMATRIX_TRANS_LANE_OFFSETS
                        .iter()
                        .any(|&(t, _)| t as usize == k);
                is_tile || permuted.packed_basis(i, k) & 0b111 == 0
            })
        });
        if !(lanes_ok && others_clear) {
            return Ok(None);
        }
        permuted
    } else {
        let tile = ldmatrix_tile(element_bits)?;
        match permuted.divide_left(&tile) {
            Some(q) => q,
            None => return Ok(None),
        }
    };
    // Further matrices come from the next non-broadcast registers.
    let first_free = if transposed { 1 } else { word };
    let extra = order[first_free..]
        .iter()
        .filter(|&&r| regs[r as usize] != 0)
        .count()
        .min(2);
    Ok(Some(MatrixPlan {
        element_bits,
        transposed,
        register_order: order,
        matrices: 1 << extra,
        quotient,
    }))
}
