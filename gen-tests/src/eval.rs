//! The CPU reference of a generated kernel: evaluates its expression tree on the inputs with the
//! language's semantics (NumPy broadcasting, wrapping i32 arithmetic, f32 arithmetic rounded per
//! operation, Rust `as` casts, first index on ties for `argmax`/`argmin`, f16 operands of `dot`).

use crate::grammar::{Binary, Buffer, DType, Narrow, Node, Op, Reduction, Unary};

/// A tile's values: row-major, each an `f64` holding the exact f32, i32 or bool (0/1) value.
#[derive(Clone, Debug)]
pub struct Tile {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

/// What a kernel reads: the input buffers and its scalar arguments.
pub struct Inputs<'a> {
    pub fa: &'a [f32],
    pub fb: &'a [f32],
    pub ia: &'a [i32],
    pub n: i32,
    pub t: i32,
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// The multi-index of a row-major flat index.
pub fn unflatten(shape: &[usize], mut flat: usize) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for axis in (0..shape.len()).rev() {
        index[axis] = flat % shape[axis];
        flat /= shape[axis];
    }
    index
}

fn flatten(shape: &[usize], index: &[usize]) -> usize {
    index.iter().zip(strides(shape)).map(|(i, s)| i * s).sum()
}

impl Tile {
    fn get(&self, index: &[usize]) -> f64 {
        self.data[flatten(&self.shape, index)]
    }

    /// The tile broadcast to `shape` (aligned at the last axis, size-1 axes repeated).
    fn broadcast(&self, shape: &[usize]) -> Tile {
        let pad = shape.len() - self.shape.len();
        let data = (0..shape.iter().product())
            .map(|flat| {
                let out = unflatten(shape, flat);
                let index: Vec<usize> = self
                    .shape
                    .iter()
                    .enumerate()
                    .map(|(a, &d)| if d == 1 { 0 } else { out[a + pad] })
                    .collect();
                self.get(&index)
            })
            .collect();
        Tile {
            shape: shape.to_vec(),
            data,
        }
    }
}

fn f16_round(x: f32) -> f32 {
    tessera::f16::from_f32(x).to_f32()
}

fn unary(op: Unary, dtype: DType, x: f64) -> f64 {
    match dtype {
        DType::F32 => {
            let x = x as f32;
            (match op {
                Unary::Neg => -x,
                Unary::Abs => x.abs(),
                // exp(y) = 2^(y · log2 e), as the device computes it.
                Unary::Exp => ((x * 0.125) * std::f32::consts::LOG2_E).exp2(),
                Unary::SqrtAbs => x.abs().sqrt(),
            }) as f64
        }
        _ => {
            let x = x as i32;
            (match op {
                Unary::Neg => x.wrapping_neg(),
                _ => x.wrapping_abs(),
            }) as f64
        }
    }
}

fn binary(op: Binary, dtype: DType, a: f64, b: f64) -> f64 {
    if op == Binary::Lt {
        return f64::from(u8::from(a < b));
    }
    match dtype {
        DType::F32 => {
            let (a, b) = (a as f32, b as f32);
            (match op {
                Binary::Add => a + b,
                Binary::Sub => a - b,
                Binary::Mul => a * b,
                Binary::Maximum => nan_max(a.into(), b.into()) as f32,
                _ => nan_min(a.into(), b.into()) as f32,
            }) as f64
        }
        _ => {
            let (a, b) = (a as i32, b as i32);
            (match op {
                Binary::Add => a.wrapping_add(b),
                Binary::Sub => a.wrapping_sub(b),
                Binary::Mul => a.wrapping_mul(b),
                Binary::Maximum => a.max(b),
                Binary::Minimum => a.min(b),
                Binary::And => a & b,
                Binary::Or => a | b,
                _ => a ^ b,
            }) as f64
        }
    }
}

/// The tile language's float `maximum`/`max` (PTX `max.NaN`): NaN when either operand is.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The tile language's float `minimum`/`min` (PTX `min.NaN`): NaN when either operand is.
fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// `f32` sum in order, `i32` wrapping sum, max, min (NaN-propagating), first index of the max /
/// min.
fn reduce(reduction: Reduction, dtype: DType, values: &[f64]) -> f64 {
    match reduction {
        Reduction::Sum if dtype == DType::F32 => {
            values.iter().fold(0f32, |s, &v| s + v as f32) as f64
        }
        Reduction::Sum => values.iter().fold(0i32, |s, &v| s.wrapping_add(v as i32)) as f64,
        Reduction::Max => values.iter().copied().fold(f64::NEG_INFINITY, nan_max),
        Reduction::Min => values.iter().copied().fold(f64::INFINITY, nan_min),
        Reduction::ArgMax | Reduction::ArgMin => {
            let mut best = 0;
            for (i, &v) in values.iter().enumerate() {
                let better = match reduction {
                    Reduction::ArgMax => v > values[best],
                    _ => v < values[best],
                };
                if better {
                    best = i;
                }
            }
            best as f64
        }
    }
}

fn map(shape: &[usize], f: impl Fn(&[usize]) -> f64) -> Tile {
    let data = (0..shape.iter().product())
        .map(|flat| f(&unflatten(shape, flat)))
        .collect();
    Tile {
        shape: shape.to_vec(),
        data,
    }
}

/// The value of `node` on `inputs`.
pub fn eval(node: &Node, inputs: &Inputs) -> Tile {
    let shape = &node.shape;
    match &node.op {
        Op::Load {
            buffer,
            offset,
            other,
        } => map(shape, |index| {
            if index[index.len() - 1] as i64 >= i64::from(inputs.n) {
                return f64::from(*other);
            }
            let at = offset + flatten(shape, index);
            match buffer {
                Buffer::Fa => f64::from(inputs.fa[at]),
                Buffer::Fb => f64::from(inputs.fb[at]),
                Buffer::Ia => f64::from(inputs.ia[at]),
            }
        }),
        Op::Literal(value) => Tile {
            shape: Vec::new(),
            data: vec![f64::from(*value)],
        },
        Op::Unary(op, x) => {
            let x = eval(x, inputs);
            map(shape, |i| unary(*op, node.dtype, x.get(i)))
        }
        Op::Binary(op, a, b) => {
            let dtype = a.dtype;
            let (a, b) = (
                eval(a, inputs).broadcast(shape),
                eval(b, inputs).broadcast(shape),
            );
            map(shape, |i| binary(*op, dtype, a.get(i), b.get(i)))
        }
        Op::Where(c, a, b) => {
            let c = eval(c, inputs).broadcast(shape);
            let (a, b) = (
                eval(a, inputs).broadcast(shape),
                eval(b, inputs).broadcast(shape),
            );
            map(shape, |i| if c.get(i) != 0.0 { a.get(i) } else { b.get(i) })
        }
        Op::ExpandDims(_, x) | Op::Reshape(x) => {
            let x = eval(x, inputs);
            Tile {
                shape: shape.clone(),
                data: x.data,
            }
        }
        Op::Reduce(reduction, axis, x) => {
            let dtype = x.dtype;
            let x = eval(x, inputs);
            let len = x.shape[*axis];
            map(shape, |out| {
                let values: Vec<f64> = (0..len)
                    .map(|k| {
                        let mut index = out.to_vec();
                        index.insert(*axis, k);
                        x.get(&index)
                    })
                    .collect();
                reduce(*reduction, dtype, &values)
            })
        }
        Op::Cast(x) => {
            let x = eval(x, inputs);
            map(shape, |i| match node.dtype {
                DType::F32 => f64::from(x.get(i) as i32 as f32),
                _ => f64::from(x.get(i) as f32 as i32),
            })
        }
        Op::Narrow(narrow, x) => {
            let from = x.dtype;
            let x = eval(x, inputs);
            map(shape, |i| {
                let v = x.get(i);
                // Rust `as`: integers wrap to the narrow type, floats saturate (NaN to 0).
                f64::from(match (from, narrow) {
                    (DType::F32, Narrow::I8) => i32::from(v as f32 as i8),
                    (DType::F32, Narrow::U8) => i32::from(v as f32 as u8),
                    (DType::F32, Narrow::I16) => i32::from(v as f32 as i16),
                    (DType::F32, Narrow::U16) => i32::from(v as f32 as u16),
                    (_, Narrow::I8) => i32::from(v as i32 as i8),
                    (_, Narrow::U8) => i32::from(v as i32 as u8),
                    (_, Narrow::I16) => i32::from(v as i32 as i16),
                    (_, Narrow::U16) => i32::from(v as i32 as u16),
                })
            })
        }
        Op::Trans(perm, x) => {
            let x = eval(x, inputs);
            map(shape, |out| {
                let mut index = vec![0; perm.len()];
                for (j, &p) in perm.iter().enumerate() {
                    index[p] = out[j];
                }
                x.get(&index)
            })
        }
        Op::Join(a, b) => {
            let (a, b) = (eval(a, inputs), eval(b, inputs));
            map(shape, |out| {
                let (last, rest) = out.split_last().expect("join has rank 2 or more");
                if *last == 0 {
                    a.get(rest)
                } else {
                    b.get(rest)
                }
            })
        }
        Op::Split(hi, x) => {
            let x = eval(x, inputs);
            map(shape, |out| {
                let mut index = out.to_vec();
                index.push(usize::from(*hi));
                x.get(&index)
            })
        }
        Op::Gather(axis, source, index) => {
            let source_len = source.shape[*axis];
            let (source, index) = (eval(source, inputs), eval(index, inputs));
            map(shape, |out| {
                let mut at = out.to_vec();
                at[*axis] = (index.get(out) as i32 & (source_len as i32 - 1)) as usize;
                source.get(&at)
            })
        }
        Op::Dot(a, b, acc) => {
            let (a, b) = (eval(a, inputs), eval(b, inputs));
            let acc = acc.as_ref().map(|acc| eval(acc, inputs));
            let k = a.shape[1];
            map(shape, |out| {
                let mut sum = acc.as_ref().map_or(0.0, |acc| acc.get(out));
                for kk in 0..k {
                    let x = f16_round(a.get(&[out[0], kk]) as f32);
                    let y = f16_round(b.get(&[kk, out[1]]) as f32);
                    sum += f64::from(x) * f64::from(y);
                }
                sum as f32 as f64
            })
        }
        Op::Loop(init, body) => {
            let mut acc = eval(init, inputs);
            let body = eval(body, inputs).broadcast(shape);
            for i in 0..inputs.t {
                acc = map(shape, |index| match node.dtype {
                    DType::F32 => {
                        let a = acc.get(index) as f32;
                        f64::from(a * 0.5 + body.get(index) as f32 + i as f32)
                    }
                    _ => {
                        let a = acc.get(index) as i32;
                        f64::from((a ^ body.get(index) as i32).wrapping_add(i))
                    }
                });
            }
            acc
        }
        Op::While(init, body) => {
            let mut acc = eval(init, inputs);
            let body = eval(body, inputs).broadcast(shape);
            let mut k = 0i32;
            let largest = |t: &Tile| t.data.iter().map(|&v| v as i32).max().unwrap_or(i32::MIN);
            while k < inputs.t && largest(&acc) % 7 != 3 {
                acc = map(shape, |index| {
                    let a = acc.get(index) as i32;
                    f64::from((a ^ body.get(index) as i32).wrapping_add(k))
                });
                k += 1;
            }
            acc
        }
        Op::Cumsum(axis, x) => {
            let x = eval(x, inputs);
            map(shape, |index| {
                let mut at = index.to_vec();
                let mut sum = 0i32;
                for j in 0..=index[*axis] {
                    at[*axis] = j;
                    sum = sum.wrapping_add(x.get(&at) as i32);
                }
                f64::from(sum)
            })
        }
    }
}
