//! Elementwise operations: operators (with constant folding of weak literals), casts, the special
//! float constants, `where`, math functions, `maximum`/`minimum`, `clamp`, `umulhi` and `fma`.

use super::{Checker, Operand};
use crate::ast::{BinOp, Expr, Special, UnOp};
use crate::diag::Loc;
use crate::ir::{BinaryOp, CmpOp, ConstValue, OpKind, UnaryOp, ValueId};
use crate::ops::Op;
use crate::types::{DType, Scalar, TileType};

impl Checker<'_> {
    pub(super) fn special(&mut self, ty: Scalar, which: Special, loc: Loc) -> Option<ValueId> {
        let value = if let Some((lo, hi)) = ty.int_range() {
            ConstValue::Int(if which == Special::Max { hi } else { lo })
        } else {
            let max = match ty {
                Scalar::F8E4M3 => 448.0,
                Scalar::F8E5M2 => 57344.0,
                Scalar::F16 => 65504.0,
                Scalar::BF16 => 3.3895313892515355e38,
                Scalar::F32 => f64::from(f32::MAX),
                _ => f64::MAX,
            };
            if ty == Scalar::F8E4M3 && matches!(which, Special::Infinity | Special::NegInfinity) {
                self.error(loc, "f8e4m3 has no infinity (its largest value is 448)");
                return None;
            }
            ConstValue::Float(match which {
                Special::Max => max,
                Special::Min => -max,
                Special::Infinity => f64::INFINITY,
                Special::NegInfinity => f64::NEG_INFINITY,
                Special::Nan => f64::NAN,
            })
        };
        self.constant(value, ty, loc)
    }

    /// `l op r`: folds weak literals, else unifies dtypes, broadcasts, and emits.
    pub(super) fn binary(&mut self, op: BinOp, l: Operand, r: Operand, loc: Loc) -> Operand {
        if matches!(l, Operand::Poison) || matches!(r, Operand::Poison) {
            return Operand::Poison;
        }
        if let (Some(a), Some(b)) = (weak(l), weak(r)) {
            return self.fold(op, a, b, loc);
        }
        let is_ptr = |c: &Self, o: Operand| matches!(o, Operand::Value(v) if matches!(c.dtype(v), DType::Ptr(_)));
        if is_ptr(self, l) || is_ptr(self, r) {
            return self.pointer_arithmetic(op, l, r, loc);
        }
        let sym = op.symbol();
        let roles = [
            &*format!("the left operand of `{sym}`"),
            &*format!("the right operand of `{sym}`"),
        ];
        let Some((values, dtype)) = self.unify(&[l, r], &roles, loc) else {
            return Operand::Poison;
        };
        let allowed = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => dtype.is_numeric(),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => dtype.is_int() || dtype.is_bool(),
            BinOp::And | BinOp::Or => dtype.is_bool(),
            BinOp::Shl | BinOp::Shr => dtype.is_int(),
            BinOp::Cmp(_) => dtype.is_numeric() || dtype.is_bool(),
        };
        if !allowed {
            let needs = match op {
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => "integer or bool",
                BinOp::And | BinOp::Or => "bool",
                BinOp::Shl | BinOp::Shr => "integer",
                _ => "number",
            };
            self.error(
                loc,
                format!("`{sym}` needs {needs} operands, but these are {dtype}"),
            );
            return Operand::Poison;
        }
        if matches!(op, BinOp::Div | BinOp::Rem) && dtype.is_int() && matches!(r, Operand::Int(0)) {
            self.error(
                loc,
                format!(
                    "integer `{sym}` by a literal zero: every element would be 0 (a zero \
                     divisor gives 0 at run time), which is surely not meant"
                ),
            );
            return Operand::Poison;
        }
        let Some((values, shape)) = self.broadcast_all(&values, &roles, loc) else {
            return Operand::Poison;
        };
        let (kind, result) = match ir_binary(op) {
            Ok(b) => (OpKind::Binary(b), dtype),
            Err(c) => (OpKind::Compare(c), DType::Scalar(Scalar::Bool)),
        };
        self.emit(kind, values, TileType::new(shape, result), loc)
            .map_or(Operand::Poison, Operand::Value)
    }

    /// Compile-time arithmetic on two weak literals.
    pub(super) fn fold(&mut self, op: BinOp, a: Weak, b: Weak, loc: Loc) -> Operand {
        if let (Weak::Int(x), Weak::Int(y)) = (a, b) {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                BinOp::BitAnd => Some(x & y),
                BinOp::BitOr => Some(x | y),
                BinOp::BitXor => Some(x ^ y),
                BinOp::Shl => u32::try_from(y)
                    .ok()
                    .filter(|&s| s < 126)
                    .and_then(|s| x.checked_shl(s)),
                BinOp::Shr => u32::try_from(y).ok().filter(|&s| s < 128).map(|s| x >> s),
                BinOp::And | BinOp::Or => {
                    self.error(
                        loc,
                        format!("`{}` needs bool operands, not integers", op.symbol()),
                    );
                    return Operand::Poison;
                }
                BinOp::Cmp(cmp) => {
                    let truth = cmp.holds(x.cmp(&y));
                    return self
                        .constant(ConstValue::Bool(truth), Scalar::Bool, loc)
                        .map_or(Operand::Poison, Operand::Value);
                }
            };
            return match r {
                Some(v) => Operand::Int(v),
                None => {
                    self.error(loc, "this constant arithmetic overflows or divides by zero");
                    Operand::Poison
                }
            };
        }
        let (x, y) = (a.as_f64(), b.as_f64());
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Rem => x % y,
            BinOp::Cmp(cmp) => {
                let truth = x.partial_cmp(&y).is_some_and(|o| cmp.holds(o));
                return self
                    .constant(ConstValue::Bool(truth), Scalar::Bool, loc)
                    .map_or(Operand::Poison, Operand::Value);
            }
            _ => {
                self.error(
                    loc,
                    format!("`{}` needs integer operands, not floats", op.symbol()),
                );
                return Operand::Poison;
            }
        };
        Operand::Float(r)
    }

    pub(super) fn unary(&mut self, op: UnOp, o: Operand, loc: Loc) -> Operand {
        match (op, o) {
            (_, Operand::Poison) => Operand::Poison,
            (UnOp::Neg, Operand::Int(v)) => Operand::Int(-v),
            (UnOp::Neg, Operand::Float(x)) => Operand::Float(-x),
            (UnOp::Not, Operand::Float(_)) => {
                self.error(
                    loc,
                    "`!` needs an integer or bool operand, found a float literal",
                );
                Operand::Poison
            }
            (_, o) => {
                let Some(v) = self.materialize(o, None, loc) else {
                    return Operand::Poison;
                };
                let ty = self.ty(v).clone();
                let ok = match op {
                    UnOp::Neg => {
                        ty.dtype.is_float() || ty.dtype.scalar().is_some_and(Scalar::is_signed_int)
                    }
                    UnOp::Not => ty.dtype.is_int() || ty.dtype.is_bool(),
                };
                if !ok {
                    let message = match op {
                        UnOp::Neg => format!(
                            "cannot negate {}: `-` needs a signed integer or float operand",
                            ty
                        ),
                        UnOp::Not => format!("`!` needs an integer or bool operand, found {ty}"),
                    };
                    self.error(loc, message);
                    return Operand::Poison;
                }
                let kind = if op == UnOp::Neg {
                    UnaryOp::Neg
                } else {
                    UnaryOp::Not
                };
                self.emit(OpKind::Unary(kind), vec![v], ty, loc)
                    .map_or(Operand::Poison, Operand::Value)
            }
        }
    }

    pub(super) fn cast(&mut self, o: Operand, to: Scalar, loc: Loc) -> Operand {
        if to == Scalar::Bool {
            self.error(
                loc,
                "casting to bool is not supported: compare instead, e.g. `x != 0`",
            );
            return Operand::Poison;
        }
        let v = match o {
            Operand::Poison => return Operand::Poison,
            Operand::Int(v) => {
                return self
                    .constant(ConstValue::Int(v), to, loc)
                    .map_or(Operand::Poison, Operand::Value)
            }
            Operand::Float(x) if to.is_float() => {
                return self
                    .constant(ConstValue::Float(x), to, loc)
                    .map_or(Operand::Poison, Operand::Value)
            }
            Operand::Float(x) => {
                // Rust `as` from a float: truncate toward zero, saturate, NaN to 0.
                let (lo, hi) = to
                    .int_range()
                    .expect("a non-float, non-bool type is an integer");
                let v = if x.is_nan() {
                    0
                } else {
                    (x.trunc().clamp(lo as f64, hi as f64)) as i128
                };
                return self
                    .constant(ConstValue::Int(v), to, loc)
                    .map_or(Operand::Poison, Operand::Value);
            }
            Operand::Value(v) => v,
        };
        let ty = self.ty(v).clone();
        match ty.dtype {
            DType::Ptr(_) => {
                self.error(
                    loc,
                    format!("pointers cannot be cast ({ty}): a `Ptr<T>` parameter points to the element type it declares"),
                );
                Operand::Poison
            }
            DType::Scalar(from) if from == to => Operand::Value(v),
            DType::Scalar(_) => self
                .emit(
                    OpKind::Cast { to },
                    vec![v],
                    TileType::new(ty.shape, DType::Scalar(to)),
                    loc,
                )
                .map_or(Operand::Poison, Operand::Value),
        }
    }

    pub(super) fn cdiv(&mut self, a: Operand, b: Operand, loc: Loc) -> Operand {
        if matches!(b, Operand::Int(0)) {
            self.error(loc, "`cdiv` divides by zero");
            return Operand::Poison;
        }
        if let (Operand::Int(x), Operand::Int(y)) = (a, b) {
            return match x.checked_add(y - 1) {
                Some(n) => Operand::Int(n.div_euclid(y)),
                None => Operand::Poison,
            };
        }
        let Some((values, dtype)) = self.unify(
            &[a, b],
            &["the dividend of `cdiv`", "the divisor of `cdiv`"],
            loc,
        ) else {
            return Operand::Poison;
        };
        if !dtype.is_int() {
            self.error(loc, format!("`cdiv` divides integers, found {dtype}"));
            return Operand::Poison;
        }
        // (a + b - 1) / b
        let sum = self.binary(
            BinOp::Add,
            Operand::Value(values[0]),
            Operand::Value(values[1]),
            loc,
        );
        let minus_one = self.binary(BinOp::Sub, sum, Operand::Int(1), loc);
        self.binary(BinOp::Div, minus_one, Operand::Value(values[1]), loc)
    }

    pub(super) fn select(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let c = self.operand(&args[0]);
        let a = self.operand(&args[1]);
        let b = self.operand(&args[2]);
        let c = self.mask(c, args[0].loc, "where_")?;
        let (values, dtype) =
            self.unify(&[a, b], &["the value if true", "the value if false"], loc)?;
        let (all, shape) = self.broadcast_all(
            &[c, values[0], values[1]],
            &["the condition", "the value if true", "the value if false"],
            loc,
        )?;
        self.emit(OpKind::Select, all, TileType::new(shape, dtype), loc)
    }

    pub(super) fn math(
        &mut self,
        kind: UnaryOp,
        x: Operand,
        name_loc: Loc,
        loc: Loc,
    ) -> Option<ValueId> {
        let name = crate::ops::info_of(Op::Math(kind)).name;
        let x = match x {
            Operand::Int(_) if kind != UnaryOp::Abs => {
                self.error(loc, format!("`{name}` needs a float operand, found an integer literal (write e.g. `1.0`)"));
                return None;
            }
            o => self.materialize(o, None, loc)?,
        };
        let ty = self.ty(x).clone();
        let ok = match kind {
            UnaryOp::Abs => ty.dtype.is_numeric(),
            _ => ty.dtype.is_float(),
        };
        if !ok {
            let needs = if kind == UnaryOp::Abs {
                "a number"
            } else {
                "a float"
            };
            self.error(
                name_loc,
                format!(
                    "`{name}` needs {needs} operand, found {ty}{}",
                    if ty.dtype.is_int() {
                        " (cast it first, e.g. `x.to::<f32>()`)"
                    } else {
                        ""
                    }
                ),
            );
            return None;
        }
        self.emit(OpKind::Unary(kind), vec![x], ty, loc)
    }

    pub(super) fn min_max(&mut self, op: Op, a: Operand, b: Operand, loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(op).name;
        let roles = [
            &*format!("the first operand of `{name}`"),
            &*format!("the second operand of `{name}`"),
        ];
        let (values, ty) =
            self.same_type_operands(&[a, b], &roles, name, "number", DType::is_numeric, loc)?;
        let kind = if op == Op::Maximum {
            BinaryOp::Max
        } else {
            BinaryOp::Min
        };
        self.emit(OpKind::Binary(kind), values, ty, loc)
    }

    /// `clamp(x, lo, hi)` = `minimum(maximum(x, lo), hi)`: numbers of one type; NaN-propagating
    /// on floats as `maximum`/`minimum`.
    pub(super) fn clamp(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let params = ["x", "lo", "hi"];
        let (values, ty) =
            self.three_operands(Op::Clamp, params, args, "number", DType::is_numeric, loc)?;
        let low = self.emit(
            OpKind::Binary(BinaryOp::Max),
            vec![values[0], values[1]],
            ty.clone(),
            loc,
        )?;
        self.emit(OpKind::Binary(BinaryOp::Min), vec![low, values[2]], ty, loc)
    }

    /// `umulhi(a, b)`: the high 32 bits of the 64-bit product of two `i32` or two `u32`.
    pub(super) fn umulhi(&mut self, a: Operand, b: Operand, loc: Loc) -> Option<ValueId> {
        let roles = [
            "the first operand of `umulhi`",
            "the second operand of `umulhi`",
        ];
        let is_32_bit_int = |d: DType| matches!(d, DType::Scalar(Scalar::I32 | Scalar::U32));
        let (values, ty) =
            self.same_type_operands(&[a, b], &roles, "umulhi", "i32 or u32", is_32_bit_int, loc)?;
        self.emit(OpKind::Binary(BinaryOp::Umulhi), values, ty, loc)
    }

    pub(super) fn fma(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let params = ["a", "b", "c"];
        let (values, ty) =
            self.three_operands(Op::Fma, params, args, "float", DType::is_float, loc)?;
        self.emit(OpKind::Fma, values, ty, loc)
    }

    /// The three operands of `op`, each named in messages as a parameter of its usage (e.g.
    /// "`lo` of `clamp(x, lo, hi)`"), checked as by [`Self::same_type_operands`].
    fn three_operands(
        &mut self,
        op: Op,
        params: [&str; 3],
        args: &[Expr],
        needs: &str,
        accepts: impl Fn(DType) -> bool,
        loc: Loc,
    ) -> Option<(Vec<ValueId>, TileType)> {
        let info = crate::ops::info_of(op);
        let roles = params.map(|p| format!("`{p}` of `{}`", info.usage));
        let roles = roles.each_ref().map(String::as_str);
        let ops: Vec<Operand> = args.iter().map(|a| self.operand(a)).collect();
        self.same_type_operands(&ops, &roles, info.name, needs, accepts, loc)
    }

    /// The operands of the elementwise op `name` unified to one element type, which `accepts`
    /// (else "`name` needs `needs` operands"), and broadcast to one shape: the values and the
    /// type of the result.
    fn same_type_operands(
        &mut self,
        operands: &[Operand],
        roles: &[&str],
        name: &str,
        needs: &str,
        accepts: impl Fn(DType) -> bool,
        loc: Loc,
    ) -> Option<(Vec<ValueId>, TileType)> {
        let (values, dtype) = self.unify(operands, roles, loc)?;
        if !accepts(dtype) {
            self.error(
                loc,
                format!("`{name}` needs {needs} operands, found {dtype}"),
            );
            return None;
        }
        let (values, shape) = self.broadcast_all(&values, roles, loc)?;
        Some((values, TileType::new(shape, dtype)))
    }
}

/// A weak literal's value.
#[derive(Clone, Copy)]
pub(super) enum Weak {
    Int(i128),
    Float(f64),
}

impl Weak {
    fn as_f64(self) -> f64 {
        match self {
            Weak::Int(v) => v as f64,
            Weak::Float(x) => x,
        }
    }
}

pub(super) fn weak(o: Operand) -> Option<Weak> {
    match o {
        Operand::Int(v) => Some(Weak::Int(v)),
        Operand::Float(x) => Some(Weak::Float(x)),
        _ => None,
    }
}

/// The IR op of a source operator: arithmetic/logic, or a comparison.
pub(super) fn ir_binary(op: BinOp) -> Result<BinaryOp, CmpOp> {
    Ok(match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::Mul => BinaryOp::Mul,
        BinOp::Div => BinaryOp::Div,
        BinOp::Rem => BinaryOp::Rem,
        BinOp::BitAnd | BinOp::And => BinaryOp::And,
        BinOp::BitOr | BinOp::Or => BinaryOp::Or,
        BinOp::BitXor => BinaryOp::Xor,
        BinOp::Shl => BinaryOp::Shl,
        BinOp::Shr => BinaryOp::Shr,
        BinOp::Cmp(c) => return Err(c),
    })
}
