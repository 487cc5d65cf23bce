//! Memory: pointer arithmetic, `load` and `store` with their masks.

use super::{Checker, Operand};
use crate::ast::{BinOp, Expr, UnOp};
use crate::diag::Loc;
use crate::ir::{OpKind, ValueId};
use crate::types::{broadcast_shapes, shape_str, DType, Scalar, TileType};

impl Checker<'_> {
    /// `ptr + offset`, `offset + ptr`, `ptr - offset`.
    pub(super) fn pointer_arithmetic(
        &mut self,
        op: BinOp,
        l: Operand,
        r: Operand,
        loc: Loc,
    ) -> Operand {
        let is_ptr = |c: &Self, o: Operand| matches!(o, Operand::Value(v) if matches!(c.dtype(v), DType::Ptr(_)));
        let (ptr, offset) = match op {
            BinOp::Add if is_ptr(self, l) && is_ptr(self, r) => {
                self.error(
                    loc,
                    "cannot add two pointers: add an integer offset to one pointer",
                );
                return Operand::Poison;
            }
            BinOp::Add if is_ptr(self, l) => (l, r),
            BinOp::Add => (r, l),
            BinOp::Sub if is_ptr(self, l) && !is_ptr(self, r) => {
                let negated = self.unary(UnOp::Neg, r, loc);
                (l, negated)
            }
            _ => {
                self.error(
                    loc,
                    format!(
                        "`{}` does not apply to pointers: pointers support `ptr + offset` and \
                         `ptr - offset` with integer offsets",
                        op.symbol()
                    ),
                );
                return Operand::Poison;
            }
        };
        let Operand::Value(ptr) = ptr else {
            return Operand::Poison;
        };
        let offset = match offset {
            Operand::Float(_) => {
                self.error(
                    loc,
                    "a pointer offset must be an integer, found a float literal",
                );
                return Operand::Poison;
            }
            o => match self.materialize(o, Some(DType::Scalar(Scalar::I32)), loc) {
                Some(v) => v,
                None => return Operand::Poison,
            },
        };
        let offset_ty = self.ty(offset).clone();
        if !offset_ty.dtype.is_int() {
            self.error(
                loc,
                format!("a pointer offset must be an integer tile, found {offset_ty}"),
            );
            return Operand::Poison;
        }
        let ptr_dtype = self.dtype(ptr);
        let Some((values, shape)) =
            self.broadcast_all(&[ptr, offset], &["the pointer", "the offset"], loc)
        else {
            return Operand::Poison;
        };
        self.emit(OpKind::AddPtr, values, TileType::new(shape, ptr_dtype), loc)
            .map_or(Operand::Poison, Operand::Value)
    }

    /// The element type the pointer tile `ptrs` points to; an error at `at` when it holds no
    /// pointers (`access`: what the op does through them, "`load` reads").
    pub(super) fn pointee(&mut self, ptrs: ValueId, at: Loc, access: &str) -> Option<Scalar> {
        let ptr_ty = self.ty(ptrs).clone();
        let DType::Ptr(elem) = ptr_ty.dtype else {
            self.error(
                at,
                format!(
                    "{access} through pointers: its first argument must be a `Ptr<T>` or a tile \
                     of them (`ptr + offsets`), found {ptr_ty}"
                ),
            );
            return None;
        };
        Some(elem)
    }

    pub(super) fn load(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let ptrs = self.tile(&args[0], "load");
        let mask = args.get(1).map(|m| (self.operand(m), m.loc));
        let other = args.get(2).map(|o| (self.operand(o), o.loc));
        let ptrs = ptrs?;
        let elem = self.pointee(ptrs, args[0].loc, "`load` reads")?;
        let mut operands = vec![ptrs];
        let mut roles = vec!["the pointers"];
        if let Some((m, mloc)) = mask {
            operands.push(self.mask(m, mloc, "load")?);
            roles.push("the mask");
        }
        if let Some((o, oloc)) = other {
            let o = self.materialize(o, Some(DType::Scalar(elem)), oloc)?;
            let d = self.dtype(o);
            if d != DType::Scalar(elem) {
                self.error(
                    oloc,
                    format!("`other` is {d} but the pointers load {elem}: cast it with `.to::<{elem}>()`"),
                );
                return None;
            }
            operands.push(o);
            roles.push("`other`");
        }
        let (values, shape) = self.broadcast_all(&operands, &roles, loc)?;
        self.emit(
            OpKind::Load {
                mask: mask.is_some(),
                other: other.is_some(),
            },
            values,
            TileType::new(shape, DType::Scalar(elem)),
            loc,
        )
    }

    /// The value or mask `v` of a store broadcast to the pointers' `shape`, Triton's rule: a
    /// store writes one element per pointer, so `v` may be smaller than the pointers, never larger.
    fn broadcast_to_pointers(
        &mut self,
        v: ValueId,
        role: &str,
        shape: &[u64],
        loc: Loc,
    ) -> Option<ValueId> {
        let from = self.shape(v);
        let fits =
            from.len() <= shape.len() && broadcast_shapes(&from, shape).as_deref() == Ok(shape);
        if !fits {
            self.error(
                loc,
                format!(
                    "`store` writes one element per pointer, but the {role} has shape {} and the \
                     pointers {}: the {role} must broadcast to the pointers' shape (aligned at \
                     the last dimension, each size equal or 1), or elements would be lost",
                    shape_str(&from),
                    shape_str(shape)
                ),
            );
            return None;
        }
        self.broadcast_value(v, shape, loc)
    }

    /// A mask operand: bool.
    pub(super) fn mask(&mut self, m: Operand, loc: Loc, op: &str) -> Option<ValueId> {
        let v = match m {
            Operand::Value(v) => v,
            Operand::Poison => return None,
            other => {
                let found = self.describe(other);
                self.error(
                    loc,
                    format!("the mask of `{op}` must be bool, found {found}"),
                );
                return None;
            }
        };
        let ty = self.ty(v).clone();
        if !ty.dtype.is_bool() {
            self.error(
                loc,
                format!("the mask of `{op}` must be bool (e.g. `offsets < n`), found {ty}"),
            );
            return None;
        }
        Some(v)
    }

    pub(super) fn store(&mut self, args: &[Expr], loc: Loc) {
        let ptrs = self.tile(&args[0], "store");
        let value = self.operand(&args[1]);
        let mask = args.get(2).map(|m| (self.operand(m), m.loc));
        let Some(ptrs) = ptrs else { return };
        let Some(elem) = self.pointee(ptrs, args[0].loc, "`store` writes") else {
            return;
        };
        let ptr_shape = self.shape(ptrs);
        let Some(value) = self.materialize(value, Some(DType::Scalar(elem)), args[1].loc) else {
            return;
        };
        let d = self.dtype(value);
        if d != DType::Scalar(elem) {
            self.error(
                args[1].loc,
                format!(
                    "`store` writes {d} values through pointers to {elem}: cast them first, e.g. \
                     `value.to::<{elem}>()`"
                ),
            );
            return;
        }
        let mut values = vec![ptrs];
        let Some(value) = self.broadcast_to_pointers(value, "value", &ptr_shape, args[1].loc)
        else {
            return;
        };
        values.push(value);
        if let Some((m, mloc)) = mask {
            let Some(m) = self.mask(m, mloc, "store") else {
                return;
            };
            let Some(m) = self.broadcast_to_pointers(m, "mask", &ptr_shape, mloc) else {
                return;
            };
            values.push(m);
        }
        self.emit_op(
            OpKind::Store {
                mask: mask.is_some(),
            },
            values,
            Vec::new(),
            Vec::new(),
            loc,
        );
    }
}
