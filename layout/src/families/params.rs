//! Checks of a family's parameters, with errors naming the family and the parameter, and the
//! small `const` list helpers the families share.

use crate::{Label, LayoutError, MAX_DIMS};

/// `Dim(k)`.
pub(crate) const fn dim(k: usize) -> Label {
    Label::Dim(k as u8)
}

pub(crate) const fn bad(
    family: &'static str,
    param: &'static str,
    index: Option<u8>,
    value: u32,
    reason: &'static str,
) -> LayoutError {
    LayoutError::InvalidParameter {
        family,
        param,
        index,
        value,
        reason,
    }
}

/// `list` has one entry per tensor dimension.
pub(crate) const fn check_len(
    family: &'static str,
    param: &'static str,
    list: &[u32],
    rank: usize,
) -> Result<(), LayoutError> {
    if list.len() != rank {
        return Err(bad(
            family,
            param,
            None,
            list.len() as u32,
            "entries long, which is not the rank of the tensor shape",
        ));
    }
    Ok(())
}

/// `value` (entry `index` of `param`, if a list) is a power of two (at least 1).
pub(crate) const fn check_pow2(
    family: &'static str,
    param: &'static str,
    index: Option<u8>,
    value: u32,
) -> Result<(), LayoutError> {
    if crate::log2_exact(value).is_none() {
        return Err(bad(
            family,
            param,
            index,
            value,
            "which is not a power of two",
        ));
    }
    Ok(())
}

/// Every entry of `list` is a power of two (at least 1).
pub(crate) const fn check_pow2_list(
    family: &'static str,
    param: &'static str,
    list: &[u32],
) -> Result<(), LayoutError> {
    let mut i = 0;
    while i < list.len() {
        tri!(check_pow2(family, param, Some(i as u8), list[i]));
        i += 1;
    }
    Ok(())
}

/// `value` (entry `index` of `param`, if a list) is one of `allowed`; `reason` words the error.
pub(crate) const fn check_one_of(
    family: &'static str,
    param: &'static str,
    index: Option<u8>,
    value: u32,
    allowed: &[u32],
    reason: &'static str,
) -> Result<(), LayoutError> {
    let mut i = 0;
    while i < allowed.len() {
        if allowed[i] == value {
            return Ok(());
        }
        i += 1;
    }
    Err(bad(family, param, index, value, reason))
}

/// `element_bitwidth` is 8, 16, 32 or 64.
pub(crate) const fn check_element_bitwidth(
    family: &'static str,
    element_bitwidth: u32,
) -> Result<(), LayoutError> {
    let reason = "but it must be 8, 16, 32 or 64";
    check_one_of(
        family,
        "element_bitwidth",
        None,
        element_bitwidth,
        &[8, 16, 32, 64],
        reason,
    )
}

/// `order` is a permutation of `0..rank`.
pub(crate) const fn check_order(
    family: &'static str,
    param: &'static str,
    order: &[u32],
    rank: usize,
) -> Result<(), LayoutError> {
    tri!(check_len(family, param, order, rank));
    let mut seen = 0u32;
    let mut i = 0;
    while i < order.len() {
        if order[i] as usize >= rank {
            return Err(bad(
                family,
                param,
                Some(i as u8),
                order[i],
                "which is not a dimension of the tensor",
            ));
        }
        if seen & (1 << order[i]) != 0 {
            return Err(bad(
                family,
                param,
                Some(i as u8),
                order[i],
                "which is listed twice (the order must be a permutation)",
            ));
        }
        seen |= 1 << order[i];
        i += 1;
    }
    Ok(())
}

/// A fixed-capacity list of up to [`MAX_DIMS`] entries (a shape or an order built in `const`).
pub(crate) const fn prefix(list: &[u32; MAX_DIMS], len: usize) -> &[u32] {
    list.split_at(len).0
}
