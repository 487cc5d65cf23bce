//! `dot`: the matrix product with accumulator.

use super::{Checker, Operand};
use crate::ast::Expr;
use crate::diag::Loc;
use crate::ir::{ConstValue, OpKind, ValueId};
use crate::types::{shape_str, DType, Scalar, TileType};

impl Checker<'_> {
    pub(super) fn dot(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let a = self.tile(&args[0], "dot");
        let b = self.tile(&args[1], "dot");
        let acc = args.get(2).map(|e| (self.operand(e), e.loc));
        let (a, b) = (a?, b?);
        let (ta, tb) = (self.ty(a).clone(), self.ty(b).clone());
        for (t, which, e) in [(&ta, "a", &args[0]), (&tb, "b", &args[1])] {
            if t.rank() != 2 {
                self.error(
                    e.loc,
                    format!(
                        "`dot(a, b)` multiplies 2-D tiles, but `{which}` has shape {}",
                        shape_str(&t.shape)
                    ),
                );
                return None;
            }
        }
        if ta.dtype != tb.dtype {
            self.error(
                loc,
                format!(
                    "`dot` needs both operands of one element type, but `a` is {} and `b` is {}",
                    ta.dtype, tb.dtype
                ),
            );
            return None;
        }
        let (acc_dtype, k_min) = match ta.dtype.scalar() {
            Some(Scalar::F16 | Scalar::BF16) => (Scalar::F32, 16),
            Some(Scalar::F8E4M3 | Scalar::F8E5M2) => (Scalar::F32, 32),
            Some(Scalar::I8) => (Scalar::I32, 32),
            _ => {
                self.error(
                    loc,
                    format!(
                        "wrong element type for `dot`: the operands are {}, but the tensor cores \
                         multiply f16, bf16, f8e4m3, f8e5m2 or i8 (cast the operands, e.g. \
                         `a.to::<f16>()`)",
                        ta.dtype
                    ),
                );
                return None;
            }
        };
        let (m, k, k2, n) = (ta.shape[0], ta.shape[1], tb.shape[0], tb.shape[1]);
        if k != k2 {
            self.error(
                loc,
                format!(
                    "shape mismatch in `dot`: `a` is [M, K] = {} and `b` is [K, N] = {}, so their \
                     inner sizes {k} and {k2} must be equal",
                    shape_str(&ta.shape),
                    shape_str(&tb.shape)
                ),
            );
            return None;
        }
        if m < 16 || n < 16 || k < k_min {
            self.error(
                loc,
                format!(
                    "`dot` on {} tensor cores needs M ≥ 16, N ≥ 16 and K ≥ {k_min}, but here M = {m}, \
                     N = {n}, K = {k}",
                    ta.dtype
                ),
            );
            return None;
        }
        let acc_ty = TileType::new(vec![m, n], DType::Scalar(acc_dtype));
        let acc = match acc {
            None => {
                let zero = self.constant(ConstValue::Int(0), acc_dtype, loc)?;
                self.broadcast_value(zero, &acc_ty.shape, loc)?
            }
            Some((o, aloc)) => {
                if let Operand::Value(v) = o {
                    let d = self.dtype(v);
                    if d != acc_ty.dtype {
                        self.error(
                            aloc,
                            format!(
                                "the accumulator of `dot` on {} operands must be {acc_dtype}, found {d}",
                                ta.dtype
                            ),
                        );
                        return None;
                    }
                }
                let v = self.materialize(o, Some(acc_ty.dtype), aloc)?;
                let shape = self.shape(v);
                if !shape.is_empty() && shape != acc_ty.shape {
                    self.error(
                        aloc,
                        format!(
                            "shape mismatch: the accumulator of `dot` must have shape [M, N] = {}, \
                             found {}",
                            shape_str(&acc_ty.shape),
                            shape_str(&shape)
                        ),
                    );
                    return None;
                }
                self.broadcast_value(v, &acc_ty.shape, aloc)?
            }
        };
        self.emit(OpKind::Dot { plan: None }, vec![a, b, acc], acc_ty, loc)
    }
}
