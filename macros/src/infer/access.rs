//! The access plan of every global load and store, made once here from the final layouts and
//! axis facts, stored in the [`super::Inference`], printed by `explain` and rendered by the
//! lowering: `tessera_layout::plan::access::plan_access` decides the vector width, the dimension
//! it runs along, which registers form a vector and whether the mask needs one predicate per
//! vector or per element; the facts it is given (contiguity, alignment, mask constancy) come from
//! the axis analysis under the variant's alignment assumptions.
//!
//! The same planner is the solver's measure of a candidate layout for a memory op
//! ([`as_good_as`]): the same vector width, at least as many consecutive bytes per warp
//! instruction (up to a 128-byte line), no more registers.

use super::axis::AxisInfo;
use crate::ir::{Kernel, LayoutSlot, Op, OpKind, ValueId};
use crate::types::DType;
use tessera_layout::plan::access::{plan_access, AccessPlan, DimFacts};
use tessera_layout::{Label, LinearLayout};

/// One load or store and its plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub is_store: bool,
    /// The pointer tile (operand 0) and the mask, after inference: with the kind, they identify
    /// the op's plan (the plan depends only on their layouts and facts).
    pub pointer: ValueId,
    pub mask: Option<ValueId>,
    pub plan: AccessPlan,
}

/// The access of `op` among `accesses` (matched by kind, pointer and mask), if it is a load or
/// store that has one.
pub fn find<'a>(accesses: &'a [Access], op: &Op) -> Option<&'a Access> {
    let (is_store, pointer, mask) = operands(op)?;
    accesses
        .iter()
        .find(|a| a.is_store == is_store && a.pointer == pointer && a.mask == mask)
}

/// Whether `op` is a store, its pointer and its mask (`None` if it is no load or store).
fn operands(op: &Op) -> Option<(bool, ValueId, Option<ValueId>)> {
    let (is_store, mask_at) = match op.kind {
        OpKind::Load { mask, .. } => (false, mask.then_some(1)),
        OpKind::Store { mask } => (true, mask.then_some(2)),
        _ => return None,
    };
    let pointer = *op.operands.first()?;
    let mask = match mask_at {
        Some(i) => Some(*op.operands.get(i)?),
        None => None,
    };
    Some((is_store, pointer, mask))
}

/// The facts the planner reads, per dimension: the pointers' contiguity and alignment, the
/// mask's constancy (1 for a mask whose facts are unknown).
fn dim_facts(ptr: &AxisInfo, mask: Option<Option<&AxisInfo>>) -> Vec<DimFacts> {
    (0..ptr.contiguity.len())
        .map(|d| DimFacts {
            contiguity: ptr.contiguity[d],
            alignment: ptr.divisibility.get(d).copied().unwrap_or(1),
            mask_constancy: mask.map(|m| m.map_or(1, |m| m.constancy.get(d).copied().unwrap_or(1))),
        })
        .collect()
}

/// The plan of an access to a tile in `layout` through pointers with facts `ptr`, elements of
/// `element_bits` bits; `mask` is `Some` for a masked access (with the mask's facts if known).
fn plan_of(
    layout: &LinearLayout,
    ptr: &AxisInfo,
    mask: Option<Option<&AxisInfo>>,
    element_bits: u32,
) -> AccessPlan {
    plan_access(layout, element_bits, &dim_facts(ptr, mask), mask.is_some())
}

/// The access of load or store `op` of `kernel` under the axis facts `axis`; a scalar pointer
/// gets one element per access.
pub fn access_of(kernel: &Kernel, axis: &[AxisInfo], op: &Op) -> Option<Access> {
    let (is_store, pointer, mask) = operands(op)?;
    let element_bits = match kernel.ty(pointer).dtype {
        DType::Ptr(s) | DType::Scalar(s) => s.bits(),
    };
    let info = axis.get(pointer.0 as usize)?;
    let mask_info = mask.map(|m| axis.get(m.0 as usize));
    let plan = match &kernel.value(pointer).layout {
        LayoutSlot::Inferred(layout) => plan_of(layout, info, mask_info, element_bits),
        _ => AccessPlan::scalar(
            element_bits,
            DimFacts {
                contiguity: 1,
                alignment: info.divisibility.first().copied().unwrap_or(1),
                mask_constancy: None,
            },
        ),
    };
    Some(Access {
        is_store,
        pointer,
        mask,
        plan,
    })
}

/// Whether an access in `candidate` is as good as in `anchor`: the same vector width, at least
/// as many consecutive bytes per warp instruction (up to a 128-byte line), and no more
/// registers (no more instructions). `mask` holds the mask's facts of a masked access.
pub fn as_good_as(
    candidate: &LinearLayout,
    anchor: &LinearLayout,
    ptr: &AxisInfo,
    mask: Option<&AxisInfo>,
    element_bits: u32,
) -> bool {
    if candidate == anchor {
        return true;
    }
    let (c, a) = (
        plan_of(candidate, ptr, mask.map(Some), element_bits),
        plan_of(anchor, ptr, mask.map(Some), element_bits),
    );
    c.elements == a.elements
        && c.warp_bytes.min(128) >= a.warp_bytes.min(128)
        && candidate.in_size(Label::Register) <= anchor.in_size(Label::Register)
}
