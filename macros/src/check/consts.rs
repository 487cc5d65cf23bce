//! Integers known at expansion time: const arguments, shapes and axes, and the power-of-two rule
//! for tile sizes.

use super::{Checker, Operand};
use crate::ast::{BinOp, Expr, ExprKind, UnOp};
use crate::ops::Op;
use crate::types::{shape_str, Scalar, Shape};

impl Checker<'_> {
    /// An integer known at expansion time (literal, const parameter, arithmetic on those).
    /// `what` says what it is for in the message when it is not.
    pub(super) fn const_int(&mut self, e: &Expr, what: &str) -> Option<i128> {
        match &e.kind {
            ExprKind::Int { value, suffix } if suffix.is_none_or(Scalar::is_int) => Some(*value),
            ExprKind::Var(name) => match self.lookup(name) {
                None => {
                    self.unknown_variable(name, e.loc);
                    None
                }
                Some(slot) => match self.binding(slot).operand {
                    Operand::Int(v) => Some(v),
                    Operand::Poison => None,
                    _ => {
                        self.error(
                            e.loc,
                            format!(
                                "{what} must be known at expansion time, but `{name}` is a run-time \
                                 value: use an integer literal or a const parameter whose values \
                                 are listed in #[tile_kernel(..)]"
                            ),
                        );
                        None
                    }
                },
            },
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => self.const_int(operand, what)?.checked_neg(),
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.const_int(lhs, what);
                let r = self.const_int(rhs, what);
                let (l, r) = (l?, r?);
                let result = match op {
                    BinOp::Add => l.checked_add(r),
                    BinOp::Sub => l.checked_sub(r),
                    BinOp::Mul => l.checked_mul(r),
                    BinOp::Div => l.checked_div(r),
                    BinOp::Rem => l.checked_rem(r),
                    BinOp::Shl => u32::try_from(r)
                        .ok()
                        .filter(|&s| s < 126)
                        .and_then(|s| l.checked_shl(s)),
                    BinOp::Shr => u32::try_from(r).ok().filter(|&s| s < 128).map(|s| l >> s),
                    _ => {
                        self.error(
                            e.loc,
                            format!("{what} must be an integer, not a comparison or logic"),
                        );
                        return None;
                    }
                };
                if result.is_none() {
                    self.error(e.loc, format!("`{e}` overflows or divides by zero"));
                }
                result
            }
            ExprKind::Call {
                op: Op::Cdiv, args, ..
            } => {
                let a = self.const_int(&args[0], what);
                let b = self.const_int(&args[1], what);
                let (a, b) = (a?, b?);
                if b == 0 {
                    self.error(e.loc, "`cdiv` divides by zero");
                    return None;
                }
                a.checked_add(b - 1).map(|n| n.div_euclid(b))
            }
            ExprKind::Invalid => None,
            _ => {
                self.error(
                    e.loc,
                    format!(
                        "{what} must be an integer known at expansion time (a literal, a const \
                         parameter, or arithmetic on them), but `{e}` is not"
                    ),
                );
                None
            }
        }
    }

    /// A shape argument `[d0, d1, …]`: each size at least 1 and a power of two.
    pub(super) fn shape_arg(&mut self, e: &Expr, op: &str) -> Option<Shape> {
        let ExprKind::Array(elems) = &e.kind else {
            if !matches!(e.kind, ExprKind::Invalid) {
                self.error(
                    e.loc,
                    format!("the shape of `{op}` is an array of sizes, e.g. `[BLOCK_M, BLOCK_N]`"),
                );
            }
            return None;
        };
        let mut shape = Vec::new();
        let mut ok = true;
        for elem in elems {
            let Some(size) = self.const_int(elem, "a tile size") else {
                ok = false;
                continue;
            };
            if size < 1 {
                let named = size_name(&elem.to_string(), size);
                self.error(
                    elem.loc,
                    format!("{named} is not a valid size: sizes must be at least 1"),
                );
                ok = false;
            } else if !is_power_of_two(size) {
                self.error(elem.loc, not_power_of_two(&elem.to_string(), size));
                ok = false;
            } else {
                shape.push(size as u64);
            }
        }
        ok.then_some(shape)
    }

    /// An axis argument for a tile of `rank` dimensions (`rank + 1` positions with `insert`).
    pub(super) fn axis_arg(
        &mut self,
        e: &Expr,
        rank: usize,
        op: &str,
        shape: &[u64],
        insert: bool,
    ) -> Option<usize> {
        let axis = self.const_int(e, &format!("the axis of `{op}`"))?;
        let positions = if insert { rank + 1 } else { rank };
        if axis < 0 || axis >= positions as i128 {
            let valid = match positions {
                0 => "it has no axes".to_string(),
                1 => "the only axis is 0".to_string(),
                n => format!("the axes are 0 to {}", n - 1),
            };
            self.error(
                e.loc,
                format!(
                    "axis {axis} is out of range for `{op}` on a tile of rank {rank} (shape {}): \
                     {valid}",
                    shape_str(shape)
                ),
            );
            return None;
        }
        Some(axis as usize)
    }
}

pub(super) fn is_power_of_two(n: i128) -> bool {
    n > 0 && n & (n - 1) == 0
}

pub(super) fn next_power_of_two(n: i128) -> i128 {
    let mut p = 1;
    while p < n {
        p <<= 1;
    }
    p
}

/// `tile size 3`, or ``tile size `BLOCK * 3` = 384`` when the source is not the number itself.
pub(super) fn size_name(source: &str, size: i128) -> String {
    if source == size.to_string() {
        format!("tile size {size}")
    } else {
        format!("tile size `{source}` = {size}")
    }
}

pub(super) fn not_power_of_two(source: &str, size: i128) -> String {
    let named = size_name(source, size);
    format!(
        "{named} is not a power of two: every tile dimension must be a power of two (use {} and \
         mask off the extra elements)",
        next_power_of_two(size)
    )
}
