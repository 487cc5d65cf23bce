//! Registers that hold equal values: an elementwise op is computed once per group of them.
//!
//! The axis analysis knows a value's **constancy** (`AxisInfo::constancy[d]`: along dimension
//! `d`, aligned blocks of that many elements are equal): `cols < n` with `cols` an `arange`
//! from a multiple of 16 and `n` assumed divisible by 16 is constant over blocks of 16. Register
//! `r` holds the element at `L(r) ⊕ L(thread)`; when each of the first `k` register bases stays
//! inside a block (every coordinate below that dimension's constancy), the `2^k` registers
//! `g·2^k … g·2^k + 2^k − 1` hold elements of one block: one computation serves them all. Triton
//! gets the same from its per-vector masks; without it a layernorm made 32 compares per thread
//! where 4 do, and ptxas kept the 32 predicates in registers.

use super::axis::AxisInfo;
use super::solve::is_elementwise;
use crate::ir::{Kernel, LayoutSlot, ValueId};
use std::collections::HashMap;
use tessera_layout::{Label, LinearLayout};

/// The number of consecutive registers holding equal values in `layout` for a value with
/// `constancy` (per dimension): `2^k` for the longest prefix of `k` register bases that stay
/// inside an aligned constancy block.
pub fn uniform_group(layout: &LinearLayout, constancy: &[u64]) -> u32 {
    let mut k = 0;
    while let Some(basis) = layout.basis(Label::Register, k) {
        let inside = (constancy.iter().enumerate()).all(|(d, &c)| (basis[d] as u64) < c);
        if !inside {
            break;
        }
        k += 1;
    }
    1 << k
}

/// Every elementwise tile result of `kernel` whose registers come in groups of equal values
/// (group size > 1), with its group size.
pub fn uniform_registers(kernel: &Kernel, info: &[AxisInfo]) -> HashMap<ValueId, u32> {
    let mut out = HashMap::new();
    kernel.walk(&mut |op| {
        if !is_elementwise(&op.kind) {
            return;
        }
        for &r in &op.results {
            let LayoutSlot::Inferred(layout) = &kernel.value(r).layout else {
                continue;
            };
            let Some(facts) = info.get(r.0 as usize) else {
                continue;
            };
            let group = uniform_group(layout, &facts.constancy);
            if group > 1 {
                out.insert(r, group);
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 registers along dim0 (elements `8·lane + r`), then lanes.
    fn blocked_1d() -> LinearLayout {
        let mut l = LinearLayout::empty()
            .with_in_dim(Label::Register)
            .and_then(|l| l.with_in_dim(Label::Lane))
            .and_then(|l| l.with_in_dim(Label::Warp))
            .and_then(|l| l.with_out_dim(Label::Dim(0), 256))
            .expect("dims");
        for b in [1, 2, 4] {
            l = l.with_basis(Label::Register, &[b]).expect("register basis");
        }
        for b in [8, 16, 32, 64, 128] {
            l = l.with_basis(Label::Lane, &[b]).expect("lane basis");
        }
        l
    }

    #[test]
    fn groups_stop_at_the_constancy_block() {
        let l = blocked_1d();
        assert_eq!(uniform_group(&l, &[1]), 1);
        assert_eq!(uniform_group(&l, &[2]), 2);
        assert_eq!(uniform_group(&l, &[4]), 4);
        // Constancy beyond a thread's registers: every register of the thread is one group.
        assert_eq!(uniform_group(&l, &[16]), 8);
        assert_eq!(uniform_group(&l, &[256]), 8);
    }

    /// The law the renderer relies on: within a group, every register's element lies in the
    /// same aligned constancy block as the group's first register's, for every thread.
    #[test]
    fn registers_of_a_group_share_a_constancy_block() {
        let l = blocked_1d();
        for c in [1u64, 2, 4, 8, 16, 64] {
            let g = uniform_group(&l, &[c]);
            for lane in 0..32u32 {
                for r in 0..8u32 {
                    let at = |r: u32| {
                        l.apply(&[(Label::Register, r), (Label::Lane, lane), (Label::Warp, 0)])
                            .expect("apply")[0] as u64
                    };
                    assert_eq!(at(r) / c, at(r - r % g) / c, "c {c} lane {lane} r {r}");
                }
            }
        }
    }
}
