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
        self.load_with_block(args, loc, None)
    }

    /// `load(args)`; with `block` (the tensor's pointer parameter index and the block's origin,
    /// one scalar per dimension of the tensor) the load of a `load_block`, which carries the
    /// origin as trailing operands for the pipeliner's TMA copies.
    fn load_with_block(
        &mut self,
        args: &[Expr],
        loc: Loc,
        block: Option<(usize, Vec<ValueId>)>,
    ) -> Option<ValueId> {
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
        let (mut values, shape) = self.broadcast_all(&operands, &roles, loc)?;
        let block = block.map(|(tensor, origin)| {
            let rank = origin.len();
            values.extend(origin);
            (tensor, rank)
        });
        self.emit(
            OpKind::Load {
                mask: mask.is_some(),
                other: other.is_some(),
                block,
            },
            values,
            TileType::new(shape, DType::Scalar(elem)),
            loc,
        )
    }

    /// `load_block(t, [row, col], [ROWS, COLS])`: the `ROWS × COLS` block of the tensor
    /// parameter `t` (rank 2; for rank 3 or 4 the origin lists an index for each leading
    /// dimension too, `[i, j, row, col]`, and the block spans the last two) whose first element
    /// is `t[…, row, col]` (`i32` scalars), zeros outside the tensor, Triton's tensor-descriptor
    /// load. It is the masked load of
    ///
    /// ```text
    /// t + i * t.stride(0) + … + (row + arange(0, ROWS)).expand_dims(1) * t.stride(R - 2)
    ///   + (col + arange(0, COLS)).expand_dims(0) * t.stride(R - 1)
    /// ```
    ///
    /// whose mask keeps every index in `0..t.size(d)`, `other` zero; the load keeps `t` and the
    /// origin, so a pipelined loop may copy it by TMA.
    pub(super) fn load_block(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        use crate::ast::ExprKind;
        use crate::ops::Op;
        let usage = "`load_block(t, [row, col], [ROWS, COLS])` takes a tensor parameter of rank 2 \
                     to 4, the block's first index along each of its dimensions (i32 scalars: \
                     `[i, j, row, col]` for rank 4) and the block's shape over the last two";
        let tensor = match &args[0].kind {
            ExprKind::Var(name) => name.clone(),
            _ => {
                self.error(args[0].loc, usage);
                return None;
            }
        };
        let is_param = |c: &Self, name: &str| {
            c.lookup(name).is_some_and(|slot| {
                matches!(c.operand_at(slot), Operand::Value(v) if c.regions[0].args.contains(&v))
            })
        };
        let scalar = |what: &str, d: usize| format!("{tensor}__{what}{d}");
        let rank = (0..=crate::check::MAX_RANK)
            .take_while(|&d| {
                is_param(self, &scalar("size", d)) && is_param(self, &scalar("stride", d))
            })
            .count();
        let pointer = self.lookup(&tensor).map(|slot| self.operand_at(slot));
        let param_index = match pointer {
            Some(Operand::Value(p)) if (2..=4).contains(&rank) => {
                self.regions[0].args.iter().position(|&a| a == p)
            }
            _ => None,
        };
        let (Some(Operand::Value(ptr)), Some(param)) = (pointer, param_index) else {
            self.error(
                args[0].loc,
                format!("`{tensor}` is not a tensor parameter of rank 2 to 4: {usage}"),
            );
            return None;
        };
        let elem = self.pointee(ptr, args[0].loc, "`load_block` reads")?;
        let ExprKind::Array(origin) = &args[1].kind else {
            self.error(args[1].loc, usage);
            return None;
        };
        let shape = self.shape_arg(&args[2], "load_block");
        if origin.len() != rank {
            self.error(
                args[1].loc,
                format!(
                    "`{tensor}` has rank {rank}: the block's origin lists {rank} indices, not {}: \
                     {usage}",
                    origin.len()
                ),
            );
            return None;
        }
        let mut at = Vec::new();
        for e in origin {
            let o = self.operand(e);
            let v = self.materialize(o, Some(DType::Scalar(Scalar::I32)), e.loc)?;
            let ty = self.ty(v).clone();
            if !ty.is_scalar() || ty.dtype != DType::Scalar(Scalar::I32) {
                self.error(
                    e.loc,
                    format!("the block's origin holds i32 scalars, found {ty}: {usage}"),
                );
                return None;
            }
            at.push(v);
        }
        let shape = shape?;
        let [rows, cols] = shape.as_slice() else {
            self.error(
                args[2].loc,
                format!("the block of `load_block` has two dimensions: {usage}"),
            );
            return None;
        };
        // The load written out, with the origin bound to names no user code can use.
        let expr = |kind: ExprKind| Expr { kind, loc };
        let var = |name: &str| expr(ExprKind::Var(name.to_string()));
        let int = |value: u64| {
            expr(ExprKind::Int {
                value: i128::from(value),
                suffix: None,
            })
        };
        let call = |op: Op, args: Vec<Expr>| {
            expr(ExprKind::Call {
                op,
                type_arg: None,
                args,
                name_loc: loc,
            })
        };
        let bin = |op: BinOp, lhs: Expr, rhs: Expr| {
            expr(ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            })
        };
        let names: Vec<String> = (0..rank)
            .map(|d| format!("__tessera_block_at{d}"))
            .collect();
        // Index `d` of the block: the origin's scalar for a leading dimension, the origin plus
        // `arange` (along the block's rows or columns) for the last two.
        let index = |d: usize| {
            if d + 2 < rank {
                return var(&names[d]);
            }
            let (size, axis) = if d + 2 == rank {
                (*rows, 1)
            } else {
                (*cols, 0)
            };
            let range = bin(
                BinOp::Add,
                var(&names[d]),
                call(Op::Arange, vec![int(0), int(size)]),
            );
            call(Op::ExpandDims, vec![range, int(axis)])
        };
        // Inside: `0 <= index < size` along every dimension (an origin may be negative, as
        // TMA's coordinates may: the elements before the tensor read zero too).
        let inside = |d: usize| {
            let ge = BinOp::Cmp(crate::ir::CmpOp::Ge);
            let lt = BinOp::Cmp(crate::ir::CmpOp::Lt);
            bin(
                BinOp::BitAnd,
                bin(ge, index(d), int(0)),
                bin(lt, index(d), var(&scalar("size", d))),
            )
        };
        let mut ptrs = var(&tensor);
        let mut mask = inside(rank - 2);
        for d in 0..rank {
            ptrs = bin(
                BinOp::Add,
                ptrs,
                bin(BinOp::Mul, index(d), var(&scalar("stride", d))),
            );
            if d != rank - 2 {
                mask = bin(BinOp::BitAnd, mask, inside(d));
            }
        }
        let zero = if elem.is_float() {
            expr(ExprKind::Float {
                value: 0.0,
                suffix: None,
            })
        } else {
            int(0)
        };
        // The hidden names are bindings only: a value that had no name keeps none (EXPLAIN
        // prints names).
        let unnamed: Vec<ValueId> = at
            .iter()
            .copied()
            .filter(|v| self.values[v.0 as usize].name.is_none())
            .collect();
        self.push_scope();
        for (name, &v) in names.iter().zip(&at) {
            self.bind(name, Operand::Value(v), false);
        }
        let loaded = self.load_with_block(&[ptrs, mask, zero], loc, Some((param, at)));
        self.pop_scope();
        for v in unnamed {
            self.values[v.0 as usize].name = None;
        }
        loaded
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
