//! Tiles made from nothing: `program_id`/`num_programs`, `arange`, `full` and `zeros`.

use super::consts::{is_power_of_two, next_power_of_two};
use super::{one, Checker, Operand, Val};
use crate::ast::Expr;
use crate::diag::Loc;
use crate::ir::{OpKind, ValueId};
use crate::ops::Op;
use crate::types::{DType, Scalar, Shape, TileType};

impl Checker<'_> {
    pub(super) fn program_id(&mut self, op: Op, args: &[Expr], loc: Loc) -> Val {
        let Some(axis) = self.const_int(&args[0], "the grid axis") else {
            return Val::One(Operand::Poison);
        };
        if !(0..=2).contains(&axis) {
            self.error(
                args[0].loc,
                format!("grid axis {axis} is out of range: the grid has axes 0, 1 and 2"),
            );
            return Val::One(Operand::Poison);
        }
        let axis = axis as u8;
        let kind = if op == Op::ProgramId {
            OpKind::ProgramId { axis }
        } else {
            OpKind::NumPrograms { axis }
        };
        one(self.emit(
            kind,
            vec![],
            TileType::scalar(DType::Scalar(Scalar::I32)),
            loc,
        ))
    }

    pub(super) fn arange(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let start = self.const_int(&args[0], "the start of `arange`");
        let end = self.const_int(&args[1], "the end of `arange`");
        let (start, end) = (start?, end?);
        let i32_range = i128::from(i32::MIN)..=i128::from(i32::MAX);
        if !i32_range.contains(&start) || !i32_range.contains(&end) {
            self.error(
                loc,
                format!("`arange({start}, {end})` leaves the range of i32"),
            );
            return None;
        }
        let n = end - start;
        if n <= 0 {
            self.error(
                loc,
                format!(
                    "`arange({start}, {end})` is empty: the end must be greater than the start"
                ),
            );
            return None;
        }
        if !is_power_of_two(n) {
            let source = format!("arange({}, {})", args[0], args[1]);
            self.error(
                loc,
                format!(
                    "`{source}` has {n} elements, not a power of two: every tile dimension must be \
                     a power of two (take arange({start}, {}) and mask off the indices from {end} on)",
                    start + next_power_of_two(n)
                ),
            );
            return None;
        }
        self.emit(
            OpKind::Arange {
                start: start as i64,
                end: end as i64,
            },
            vec![],
            TileType::new(vec![n as u64], DType::Scalar(Scalar::I32)),
            loc,
        )
    }

    pub(super) fn full(
        &mut self,
        shape: Option<Shape>,
        value: Operand,
        dtype: Option<Scalar>,
        value_expr: &Expr,
        loc: Loc,
    ) -> Option<ValueId> {
        let shape = shape?;
        let v = self.materialize(value, dtype.map(DType::Scalar), value_expr.loc)?;
        let ty = self.ty(v).clone();
        if !ty.is_scalar() {
            self.error(
                value_expr.loc,
                format!("the value of `full` is a scalar, found a tile {ty}"),
            );
            return None;
        }
        if let Some(d) = dtype {
            if ty.dtype != DType::Scalar(d) {
                self.error(
                    value_expr.loc,
                    format!("`full::<{d}>` needs a {d} value, found {}", ty.dtype),
                );
                return None;
            }
        }
        self.broadcast_value(v, &shape, loc)
    }
}
