//! Reductions along an axis: `sum`, `max`, `min`, `argmax`, `argmin`.

use super::{Checker, Operand};
use crate::ast::{Expr, ExprKind};
use crate::diag::Loc;
use crate::ir::{OpKind, ReduceKind, ValueId};
use crate::ops::Op;
use crate::types::{DType, Scalar, TileType};

impl Checker<'_> {
    /// Whether `e` can be a compile-time integer (to tell `x.max(axis)` from a mistaken
    /// elementwise `x.max(y)`).
    pub(super) fn looks_like_axis(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int { suffix, .. } => suffix.is_none_or(Scalar::is_int),
            ExprKind::Var(name) => self.lookup(name).is_none_or(|(s, i)| {
                matches!(self.scopes[s][i].operand, Operand::Int(_) | Operand::Poison)
            }),
            ExprKind::Unary { operand, .. } => self.looks_like_axis(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.looks_like_axis(lhs) && self.looks_like_axis(rhs)
            }
            ExprKind::Call { op: Op::Cdiv, .. } | ExprKind::Invalid => true,
            _ => false,
        }
    }

    /// The tile `x` of an op that works along one of its axes (`reduce`, `scan`), its type, and
    /// the axis `axis` names; an error at `loc` when `x` is a scalar (`verb`: what `name` does
    /// to a tile, "reduces").
    pub(super) fn tile_and_axis(
        &mut self,
        x: ValueId,
        axis: &Expr,
        name: &str,
        verb: &str,
        loc: Loc,
    ) -> Option<(ValueId, TileType, usize)> {
        let ty = self.ty(x).clone();
        if ty.is_scalar() {
            self.error(
                loc,
                format!(
                    "`{name}` {verb} a tile along an axis, but this is a scalar {}",
                    ty.dtype
                ),
            );
            return None;
        }
        let axis = self.axis_arg(axis, ty.rank(), name, &ty.shape, false)?;
        Some((x, ty, axis))
    }

    pub(super) fn reduce(&mut self, kind: ReduceKind, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(Op::Reduce(kind)).name;
        let x = self.tile(&args[0], name);
        if matches!(kind, ReduceKind::Max | ReduceKind::Min) && !self.looks_like_axis(&args[1]) {
            let elementwise = if kind == ReduceKind::Max {
                "maximum"
            } else {
                "minimum"
            };
            self.error(
                args[1].loc,
                format!(
                    "`{name}(x, axis)` reduces along an axis, so its argument must be an integer axis \
                     such as `x.{name}(0)`; for the elementwise {elementwise} of two values write \
                     `{elementwise}(a, b)`"
                ),
            );
            return None;
        }
        let (x, ty, axis) = self.tile_and_axis(x?, &args[1], name, "reduces", loc)?;
        if !ty.dtype.is_numeric() {
            self.error(loc, format!("`{name}` needs a tile of numbers, found {ty}"));
            return None;
        }
        let dtype = match kind {
            ReduceKind::Argmax | ReduceKind::Argmin => DType::Scalar(Scalar::I32),
            _ => ty.dtype,
        };
        let mut shape = ty.shape.clone();
        shape.remove(axis);
        self.emit(
            OpKind::Reduce { kind, axis },
            vec![x],
            TileType::new(shape, dtype),
            loc,
        )
    }
}
