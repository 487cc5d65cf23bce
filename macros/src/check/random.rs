//! `randint`, `rand`, `randn`: Triton's counter-based random numbers (`triton/language/random.py`),
//! built from elementwise ops as Triton builds them, so the bits are Triton's.
//!
//! Philox 4x32-10: counter `(offset, 0, 0, 0)`, key `(seed mod 2^32, seed >> 32)` with the seed
//! taken as u64 (signed seeds sign-extended), ten rounds of
//! `(c0, c1, c2, c3) ← (hi(B·c2) ^ c1 ^ k0, B·c2, hi(A·c0) ^ c3 ^ k1, A·c0)`, the key raised by
//! `(KEY_A, KEY_B)` after each. `randint` is `c0`; `rand` maps it to [0, 1) as
//! `uint_to_uniform_float`; `randn` is the Box–Muller cosine of `rand(c0)` and `rand(c1)`.

use super::{Checker, Operand};
use crate::ast::{BinOp, Expr, UnOp};
use crate::diag::Loc;
use crate::ir::{CmpOp, ConstValue, OpKind, UnaryOp, ValueId};
use crate::ops::Op;
use crate::types::{DType, Scalar, TileType};

/// Philox's round multipliers and key increments (Random123, as Triton).
const ROUND_A: i128 = 0xD251_1F53;
const ROUND_B: i128 = 0xCD9E_8D57;
const KEY_A: i128 = 0x9E37_79B9;
const KEY_B: i128 = 0xBB67_AE85;
const ROUNDS: usize = 10;
/// The largest f32 `s` with `i32::MAX · s < 1` (Triton's `uint_to_uniform_float` scale).
const UNIFORM_SCALE: f64 = 4.656_612_734_2e-10;

impl Checker<'_> {
    pub(super) fn random(&mut self, op: Op, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(op).name;
        let seed = self.operand(&args[0]);
        let offsets = self.operand(&args[1]);
        let (k0, k1) = self.philox_key(seed, name, args[0].loc)?;
        let c0 = self.philox_counter(offsets, name, args[1].loc)?;
        let [r0, r1] = self.philox(c0, k0, k1, loc)?;
        match op {
            Op::Randint => Some(r0),
            Op::Rand => self.uniform(r0, loc),
            _ => {
                // Box–Muller: √(−2 ln max(u1, 1e-7)) · cos(2π u2).
                let u1 = self.uniform(r0, loc)?;
                let u2 = self.uniform(r1, loc)?;
                let u1 =
                    self.min_max(Op::Maximum, Operand::Float(1.0e-7), Operand::Value(u1), loc)?;
                let th = self.binary(
                    BinOp::Mul,
                    Operand::Float(std::f64::consts::TAU),
                    Operand::Value(u2),
                    loc,
                );
                let ln = self.math(UnaryOp::Log, Operand::Value(u1), loc, loc)?;
                let r2 = self.binary(BinOp::Mul, Operand::Float(-2.0), Operand::Value(ln), loc);
                let r = self.math(UnaryOp::Sqrt, r2, loc, loc)?;
                let cos = self.math(UnaryOp::Cos, th, loc, loc)?;
                self.value(BinOp::Mul, Operand::Value(r), Operand::Value(cos), loc)
            }
        }
    }

    /// `(seed mod 2^32, seed >> 32)` as u32, the seed an integer taken as u64.
    fn philox_key(&mut self, seed: Operand, name: &str, loc: Loc) -> Option<(ValueId, ValueId)> {
        let seed = match seed {
            Operand::Poison => return None,
            Operand::Float(_) => {
                self.error(
                    loc,
                    format!("`{name}` needs an integer seed, found a float literal"),
                );
                return None;
            }
            Operand::Int(v) => {
                let bits = v as u64;
                let k0 =
                    self.constant(ConstValue::Int(i128::from(bits as u32)), Scalar::U32, loc)?;
                let hi = i128::from((bits >> 32) as u32);
                let k1 = self.constant(ConstValue::Int(hi), Scalar::U32, loc)?;
                return Some((k0, k1));
            }
            Operand::Value(v) => v,
        };
        let ty = self.ty(seed).clone();
        if !ty.dtype.is_int() {
            self.error(
                loc,
                format!(
                    "`{name}` needs an integer seed, found {ty}{}",
                    if ty.dtype.is_float() {
                        " (a float seed would be rounded: pass the integer seed itself)"
                    } else {
                        ""
                    }
                ),
            );
            return None;
        }
        let wide = self.cast(Operand::Value(seed), Scalar::U64, loc);
        let k0 = self.cast(wide, Scalar::U32, loc);
        let high = self.binary(BinOp::Shr, wide, Operand::Int(32), loc);
        let k1 = self.cast(high, Scalar::U32, loc);
        Some((
            self.materialize(k0, None, loc)?,
            self.materialize(k1, None, loc)?,
        ))
    }

    /// The first counter word: the offsets (i32 or u32) as u32 bits.
    fn philox_counter(&mut self, offsets: Operand, name: &str, loc: Loc) -> Option<ValueId> {
        let offsets = self.materialize(offsets, Some(DType::Scalar(Scalar::I32)), loc)?;
        let ty = self.ty(offsets).clone();
        if !matches!(ty.dtype, DType::Scalar(Scalar::I32 | Scalar::U32)) {
            self.error(
                loc,
                format!("`{name}` needs i32 or u32 offsets, found {ty}"),
            );
            return None;
        }
        let c0 = self.cast(Operand::Value(offsets), Scalar::U32, loc);
        self.materialize(c0, None, loc)
    }

    /// Ten Philox rounds from the counter `(c0, 0, 0, 0)` and key `(k0, k1)`: the first two
    /// words of the result.
    fn philox(&mut self, c0: ValueId, k0: ValueId, k1: ValueId, loc: Loc) -> Option<[ValueId; 2]> {
        let zero = self.constant(ConstValue::Int(0), Scalar::U32, loc)?;
        let (mut c0, mut c1, mut c2, mut c3) = (c0, zero, zero, zero);
        let (mut k0, mut k1) = (k0, k1);
        for _ in 0..ROUNDS {
            let (a, b) = (Operand::Int(ROUND_A), Operand::Int(ROUND_B));
            let hi_b = self.umulhi(b, Operand::Value(c2), loc)?;
            let hi_a = self.umulhi(a, Operand::Value(c0), loc)?;
            let x = self.value(BinOp::BitXor, Operand::Value(hi_b), Operand::Value(c1), loc)?;
            let next0 = self.value(BinOp::BitXor, Operand::Value(x), Operand::Value(k0), loc)?;
            let y = self.value(BinOp::BitXor, Operand::Value(hi_a), Operand::Value(c3), loc)?;
            let next2 = self.value(BinOp::BitXor, Operand::Value(y), Operand::Value(k1), loc)?;
            c1 = self.value(BinOp::Mul, b, Operand::Value(c2), loc)?;
            c3 = self.value(BinOp::Mul, a, Operand::Value(c0), loc)?;
            (c0, c2) = (next0, next2);
            k0 = self.value(BinOp::Add, Operand::Value(k0), Operand::Int(KEY_A), loc)?;
            k1 = self.value(BinOp::Add, Operand::Value(k1), Operand::Int(KEY_B), loc)?;
        }
        Some([c0, c1])
    }

    /// u32 bits to f32 in [0, 1): `x` as i32, `−x − 1` where negative, times
    /// [`UNIFORM_SCALE`] (Triton's `uint_to_uniform_float`).
    fn uniform(&mut self, bits: ValueId, loc: Loc) -> Option<ValueId> {
        let x = self.cast(Operand::Value(bits), Scalar::I32, loc);
        let x = self.materialize(x, None, loc)?;
        let negated = self.unary(UnOp::Neg, Operand::Value(x), loc);
        let flipped = self.value(BinOp::Sub, negated, Operand::Int(1), loc)?;
        let negative = self.value(
            BinOp::Cmp(CmpOp::Lt),
            Operand::Value(x),
            Operand::Int(0),
            loc,
        )?;
        let (all, shape) =
            self.broadcast_all(&[negative, flipped, x], &["the sign", "−x − 1", "x"], loc)?;
        let ty = TileType::new(shape, DType::Scalar(Scalar::I32));
        let folded = self.emit(OpKind::Select, all, ty, loc)?;
        let f = self.cast(Operand::Value(folded), Scalar::F32, loc);
        self.value(BinOp::Mul, f, Operand::Float(UNIFORM_SCALE), loc)
    }

    /// `l op r` as a value (`None` after an error).
    fn value(&mut self, op: BinOp, l: Operand, r: Operand, loc: Loc) -> Option<ValueId> {
        let o = self.binary(op, l, r, loc);
        self.materialize(o, None, loc)
    }
}
