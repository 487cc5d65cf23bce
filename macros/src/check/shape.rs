//! Shape operations: `trans`, `reshape`, `expand_dims`, `broadcast_to`, `join` and `split`.

use super::{one, Checker, Operand, Val};
use crate::ast::{Expr, ExprKind};
use crate::diag::Loc;
use crate::ir::{OpKind, ValueId};
use crate::types::{broadcast_shapes, numel, shape_str, Shape, TileType};

impl Checker<'_> {
    /// The tile (or scalar) and the shape of `name(x, [shape])`, both checked (each reports
    /// its own errors).
    fn tile_and_shape_args(&mut self, args: &[Expr], name: &str) -> Option<(ValueId, Shape)> {
        let x = self.tile_or_scalar(&args[0]);
        let shape = self.shape_arg(&args[1], name);
        Some((x?, shape?))
    }

    /// `kind` on the one tile `x`: its result has `x`'s element type, on `shape`.
    fn emit_on_shape(
        &mut self,
        kind: OpKind,
        x: ValueId,
        shape: Shape,
        loc: Loc,
    ) -> Option<ValueId> {
        let dtype = self.ty(x).dtype;
        self.emit(kind, vec![x], TileType::new(shape, dtype), loc)
    }

    pub(super) fn trans(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let x = self.tile(&args[0], "trans")?;
        let ty = self.ty(x).clone();
        if ty.is_scalar() {
            self.error(
                args[0].loc,
                on_scalar("trans", &ty, "a scalar has no axes to permute"),
            );
            return None;
        }
        let rank = ty.rank();
        let perm: Vec<usize> = match args.get(1) {
            None => (0..rank).rev().collect(),
            Some(p) => {
                let ExprKind::Array(elems) = &p.kind else {
                    self.error(
                        p.loc,
                        "the permutation of `trans` is an array of axes, e.g. `x.trans([1, 0])`",
                    );
                    return None;
                };
                if elems.len() != rank {
                    self.error(
                        p.loc,
                        format!(
                            "`trans` on a tile of rank {rank} (shape {}) needs a permutation of {rank} \
                             axes, found {}",
                            shape_str(&ty.shape),
                            elems.len()
                        ),
                    );
                    return None;
                }
                let mut perm = Vec::new();
                for e in elems {
                    let a = self.axis_arg(e, rank, "trans", &ty.shape, false)?;
                    if perm.contains(&a) {
                        self.error(
                            e.loc,
                            format!(
                                "axis {a} appears twice: `trans` needs a permutation of the axes"
                            ),
                        );
                        return None;
                    }
                    perm.push(a);
                }
                perm
            }
        };
        let shape = perm.iter().map(|&p| ty.shape[p]).collect();
        self.emit_on_shape(OpKind::Trans { perm }, x, shape, loc)
    }

    pub(super) fn reshape(&mut self, args: &[Expr], loc: Loc) -> Val {
        let Some((x, shape)) = self.tile_and_shape_args(args, "reshape") else {
            return Val::One(Operand::Poison);
        };
        let ty = self.ty(x).clone();
        if numel(&shape) != ty.numel() {
            self.error(
                loc,
                format!(
                    "`reshape` cannot change the number of elements: {} has {} but {} has {}",
                    shape_str(&ty.shape),
                    ty.numel(),
                    shape_str(&shape),
                    numel(&shape)
                ),
            );
            return Val::One(Operand::Poison);
        }
        if ty.is_scalar() {
            // One element in any shape: the scalar splat.
            return one(self.broadcast_value(x, &shape, loc));
        }
        if shape.is_empty() {
            self.error(
                loc,
                format!(
                    "`reshape` to a scalar (shape []) is not supported: reduce the one-element \
                     tile {ty} instead, e.g. `x.sum(0)`"
                ),
            );
            return Val::One(Operand::Poison);
        }
        one(self.emit_on_shape(OpKind::Reshape, x, shape, loc))
    }

    pub(super) fn expand_dims(&mut self, args: &[Expr], loc: Loc) -> Val {
        let Some(x) = self.tile_or_scalar(&args[0]) else {
            return Val::One(Operand::Poison);
        };
        let ty = self.ty(x).clone();
        let Some(axis) = self.axis_arg(&args[1], ty.rank(), "expand_dims", &ty.shape, true) else {
            return Val::One(Operand::Poison);
        };
        let mut shape = ty.shape.clone();
        shape.insert(axis, 1);
        if ty.is_scalar() {
            // A scalar with one axis added is the one-element tile `[1]`: its splat.
            return one(self.broadcast_value(x, &shape, loc));
        }
        one(self.emit_on_shape(OpKind::ExpandDims { axis }, x, shape, loc))
    }

    pub(super) fn broadcast_to(&mut self, args: &[Expr], loc: Loc) -> Val {
        let Some((x, shape)) = self.tile_and_shape_args(args, "broadcast_to") else {
            return Val::One(Operand::Poison);
        };
        let from = self.shape(x);
        let fits = from.len() <= shape.len()
            && broadcast_shapes(&from, &shape).as_deref() == Ok(&shape[..]);
        if !fits {
            self.error(
                loc,
                format!(
                    "cannot broadcast shape {} to {}: aligned at the last dimension, each \
                     size must equal the target size or be 1",
                    shape_str(&from),
                    shape_str(&shape)
                ),
            );
            return Val::One(Operand::Poison);
        }
        one(self.broadcast_value(x, &shape, loc))
    }

    pub(super) fn join(&mut self, args: &[Expr], loc: Loc) -> Val {
        let a = self.operand(&args[0]);
        let b = self.operand(&args[1]);
        let Some((values, dtype)) =
            self.unify(&[a, b], &["the first tile", "the second tile"], loc)
        else {
            return Val::One(Operand::Poison);
        };
        let (sa, sb) = (self.shape(values[0]), self.shape(values[1]));
        if sa != sb {
            self.error(
                loc,
                format!(
                    "shape mismatch: `join` needs two tiles of the same shape, but the first \
                     is {} and the second {}",
                    shape_str(&sa),
                    shape_str(&sb)
                ),
            );
            return Val::One(Operand::Poison);
        }
        if sa.is_empty() {
            let ty = self.ty(values[0]).clone();
            self.error(
                loc,
                on_scalar(
                    "join",
                    &ty,
                    "join one-element tiles instead, `join(a.expand_dims(0), b.expand_dims(0))`",
                ),
            );
            return Val::One(Operand::Poison);
        }
        let mut shape = sa;
        shape.push(2);
        one(self.emit(OpKind::Join, values, TileType::new(shape, dtype), loc))
    }

    pub(super) fn split(&mut self, args: &[Expr], loc: Loc) -> Val {
        let Some(x) = self.tile(&args[0], "split") else {
            return Val::Pair(Operand::Poison, Operand::Poison);
        };
        let ty = self.ty(x).clone();
        if ty.shape.last() != Some(&2) {
            self.error(
                loc,
                format!(
                    "`split` halves a last dimension of size 2 (the inverse of `join`), but \
                     this tile has shape {}",
                    shape_str(&ty.shape)
                ),
            );
            return Val::Pair(Operand::Poison, Operand::Poison);
        }
        if ty.rank() == 1 {
            self.error(
                loc,
                format!(
                    "`split` of a tile of shape {} would give two scalars, which is not \
                     supported: split a tile of rank 2 or more (e.g. `x.expand_dims(0).split()`)",
                    shape_str(&ty.shape)
                ),
            );
            return Val::Pair(Operand::Poison, Operand::Poison);
        }
        let half = TileType::new(ty.shape[..ty.rank() - 1].to_vec(), ty.dtype);
        match self.emit_op(
            OpKind::Split,
            vec![x],
            vec![half.clone(), half],
            Vec::new(),
            loc,
        ) {
            Some(r) => Val::Pair(Operand::Value(r[0]), Operand::Value(r[1])),
            None => Val::Pair(Operand::Poison, Operand::Poison),
        }
    }
}

/// Why `op` refuses the rank-0 value of type `ty`, and what to write instead.
fn on_scalar(op: &str, ty: &TileType, instead: &str) -> String {
    format!("`{op}` needs a tile of rank 1 or more, found a scalar ({ty}): {instead}")
}
