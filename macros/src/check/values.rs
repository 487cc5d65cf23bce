//! Operands made values: constants of a fixed type, weak literals materialised, element types
//! unified and shapes broadcast.

use super::{Checker, Operand};
use crate::diag::Loc;
use crate::ir::{ConstValue, OpKind, ValueId};
use crate::types::{broadcast_shapes, shape_str, DType, Scalar, Shape, TileType};

impl Checker<'_> {
    /// A rank-0 constant of `dtype`, checking that the value fits.
    pub(super) fn constant(
        &mut self,
        value: ConstValue,
        dtype: Scalar,
        loc: Loc,
    ) -> Option<ValueId> {
        let value = match (value, dtype) {
            (ConstValue::Bool(b), Scalar::Bool) => ConstValue::Bool(b),
            (ConstValue::Int(v), s) if s.is_float() => ConstValue::Float(v as f64),
            (ConstValue::Int(v), s) if s.is_int() => {
                let (lo, hi) = s.int_range().expect("integer types have a range");
                if v < lo || v > hi {
                    self.error(
                        loc,
                        format!("the literal {v} does not fit in {s} (its values are {lo}..={hi})"),
                    );
                    return None;
                }
                ConstValue::Int(v)
            }
            (ConstValue::Float(x), s) if s.is_float() => ConstValue::Float(x),
            (v, s) => {
                let what = match v {
                    ConstValue::Int(_) => "an integer literal",
                    ConstValue::Float(_) => "a float literal",
                    ConstValue::Bool(_) => "a bool literal",
                };
                self.error(loc, format!("expected a value of type {s}, found {what}"));
                return None;
            }
        };
        self.emit(
            OpKind::Constant(value),
            Vec::new(),
            TileType::scalar(DType::Scalar(dtype)),
            loc,
        )
    }

    /// A literal of type `dtype`: a float literal must stay finite in it, as rustc requires
    /// (`1e39` as an f32, or `70000.0` as an f16, would silently become infinity; the AST
    /// refuses what overflows f64).
    pub(super) fn literal(
        &mut self,
        value: ConstValue,
        dtype: Scalar,
        loc: Loc,
    ) -> Option<ValueId> {
        if let ConstValue::Float(x) = value {
            if let Some((largest, overflow)) = finite_range(dtype) {
                if x.is_finite() && x.abs() >= overflow {
                    let largest = if largest > 1e6 {
                        format!("{largest:e}")
                    } else {
                        format!("{largest}")
                    };
                    let message = if dtype == Scalar::F8E4M3 {
                        format!(
                            "floating-point literal out of range for {dtype} (it would be NaN: \
                             the largest finite {dtype} is {largest}, and {dtype} has no infinity)"
                        )
                    } else {
                        format!(
                            "floating-point literal out of range for {dtype} (it would be \
                             infinity: the largest finite {dtype} is {largest}; write \
                             `{dtype}::INFINITY` if that is meant)"
                        )
                    };
                    self.error(loc, message);
                    return None;
                }
            }
        }
        self.constant(value, dtype, loc)
    }

    /// The operand as a value: weak literals become constants of `hint` (default `i32`/`f32`).
    pub(super) fn materialize(
        &mut self,
        o: Operand,
        hint: Option<DType>,
        loc: Loc,
    ) -> Option<ValueId> {
        let (value, default) = match o {
            Operand::Value(v) => return Some(v),
            Operand::Poison => return None,
            Operand::Int(v) => (ConstValue::Int(v), Scalar::I32),
            Operand::Float(x) => (ConstValue::Float(x), Scalar::F32),
        };
        match hint {
            None => self.literal(value, default, loc),
            Some(DType::Scalar(s)) => self.literal(value, s, loc),
            Some(DType::Ptr(_)) => {
                self.error(loc, "expected a pointer, found a literal");
                None
            }
        }
    }

    /// Gives the operands one element type: values must agree; weak literals take theirs.
    /// `roles` names each operand in messages ("the left operand", …).
    pub(super) fn unify(
        &mut self,
        operands: &[Operand],
        roles: &[&str],
        loc: Loc,
    ) -> Option<(Vec<ValueId>, DType)> {
        if operands.iter().any(|o| matches!(o, Operand::Poison)) {
            return None;
        }
        let mut strong: Option<(usize, DType)> = None;
        for (i, o) in operands.iter().enumerate() {
            if let Operand::Value(v) = *o {
                let d = self.dtype(v);
                match strong {
                    None => strong = Some((i, d)),
                    Some((j, e)) if e != d => {
                        let hint = match (e, d) {
                            (DType::Scalar(_), DType::Scalar(s)) => format!(
                                "; tessera never converts implicitly: cast one side, e.g. \
                                 `x.to::<{s}>()` or `x as {s}`"
                            ),
                            _ => String::new(),
                        };
                        self.error(
                            loc,
                            format!(
                                "mismatched element types: {} is {e} but {} is {d}{hint}",
                                roles[j], roles[i]
                            ),
                        );
                        return None;
                    }
                    _ => {}
                }
            }
        }
        let target = match strong {
            Some((_, d)) => d,
            None if operands.iter().any(|o| matches!(o, Operand::Float(_))) => {
                DType::Scalar(Scalar::F32)
            }
            None => DType::Scalar(Scalar::I32),
        };
        let mut values = Vec::new();
        for (i, o) in operands.iter().enumerate() {
            if let Operand::Float(_) = o {
                if !target.is_float() {
                    self.error(
                        loc,
                        format!(
                            "{} is a float literal, but the other operand is {target}: write an \
                             integer, or cast the other operand to a float type",
                            roles[i]
                        ),
                    );
                    return None;
                }
            }
            values.push(self.materialize(*o, Some(target), loc)?);
        }
        Some((values, target))
    }

    /// The common shape of `values` by NumPy broadcasting, and each value broadcast to it.
    pub(super) fn broadcast_all(
        &mut self,
        values: &[ValueId],
        roles: &[&str],
        loc: Loc,
    ) -> Option<(Vec<ValueId>, Shape)> {
        let shapes: Vec<Shape> = values.iter().map(|&v| self.shape(v)).collect();
        let mut common: Shape = Vec::new();
        for (j, s) in shapes.iter().enumerate() {
            match broadcast_shapes(&common, s) {
                Ok(c) => common = c,
                Err(_) => {
                    let i = (0..j)
                        .find(|&i| broadcast_shapes(&shapes[i], s).is_err())
                        .unwrap_or(0);
                    let conflict = broadcast_shapes(&shapes[i], s)
                        .err()
                        .map(|c| {
                            format!(
                                ": aligned at the last dimension, sizes {} and {} differ and \
                                 neither is 1",
                                c.left, c.right
                            )
                        })
                        .unwrap_or_default();
                    self.error(
                        loc,
                        format!(
                            "cannot broadcast {} of shape {} with {} of shape {}{conflict}",
                            roles[i],
                            shape_str(&shapes[i]),
                            roles[j],
                            shape_str(s)
                        ),
                    );
                    return None;
                }
            }
        }
        let mut out = Vec::new();
        for &v in values {
            out.push(self.broadcast_value(v, &common, loc)?);
        }
        Some((out, common))
    }

    /// `v` broadcast to `shape` (which must be a broadcast of its shape), by explicit ops.
    pub(super) fn broadcast_value(
        &mut self,
        v: ValueId,
        shape: &[u64],
        loc: Loc,
    ) -> Option<ValueId> {
        let ty = self.ty(v).clone();
        if ty.shape == shape {
            return Some(v);
        }
        if ty.is_scalar() {
            return self.emit(
                OpKind::Splat,
                vec![v],
                TileType::new(shape.to_vec(), ty.dtype),
                loc,
            );
        }
        let mut v = v;
        let mut current = ty.shape.clone();
        while current.len() < shape.len() {
            current.insert(0, 1);
            v = self.emit(
                OpKind::ExpandDims { axis: 0 },
                vec![v],
                TileType::new(current.clone(), ty.dtype),
                loc,
            )?;
        }
        if current != shape {
            v = self.emit(
                OpKind::Broadcast,
                vec![v],
                TileType::new(shape.to_vec(), ty.dtype),
                loc,
            )?;
        }
        Some(v)
    }
}

/// For a float type narrower than f64: its largest finite value, and the magnitude from which a
/// value rounds (to nearest, ties to even) past it — the largest value plus half its unit in the
/// last place.
fn finite_range(dtype: Scalar) -> Option<(f64, f64)> {
    let (largest, half_ulp) = match dtype {
        Scalar::F32 => (f64::from(f32::MAX), 2f64.powi(103)),
        Scalar::F16 => (65504.0, 16.0),
        Scalar::BF16 => ((2.0 - 2f64.powi(-7)) * 2f64.powi(127), 2f64.powi(119)),
        Scalar::F8E5M2 => (57344.0, 4096.0),
        Scalar::F8E4M3 => (448.0, 16.0),
        _ => return None,
    };
    Some((largest, largest + half_ulp))
}
