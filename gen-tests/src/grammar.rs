//! A grammar of random valid tile kernels: an expression tree over tiles of known shapes and
//! element types, rendered as the body of a `#[tile_kernel]` and evaluated on the CPU by
//! `eval`. The same seed gives the same kernels, so `build.rs` renders them and the test
//! regenerates the trees it evaluates.
//!
//! Every kernel has the signature
//! `(out: Ptr<T>, fa: Ptr<f32>, fb: Ptr<f32>, ia: Ptr<i32>, n: i32, m: i32, t: i32)`, runs as one
//! program, loads its leaves from `fa`, `fb`, `ia` at an offset (masked: only elements whose last
//! index is below `n` are read, the others take a literal), and stores the root tile to `out`
//! row-major (only elements whose last index is below `m`); `t` is the trip count of its loops
//! (the most iterations of a `while`).
//!
//! Its one dependency is the workspace's seeded RNG (`tessera-test-support`): `build.rs` and the
//! macro crate's tests include this file by path.

pub use tessera_test_support::Rng;

/// Element types of the generated values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32,
    I32,
    Bool,
}

impl DType {
    pub fn rust(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::I32 => "i32",
            DType::Bool => "bool",
        }
    }
}

/// The input buffers a leaf loads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    Fa,
    Fb,
    Ia,
}

/// Elements in each input buffer (the largest leaf plus the largest offset).
pub const INPUT_LEN: usize = MAX_ELEMENTS + 64;

/// The largest tile a kernel holds (f32 or i32 elements; 16 per thread at 4 warps).
pub const MAX_ELEMENTS: usize = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Neg,
    Abs,
    /// `exp(x * 0.125)`.
    Exp,
    /// `sqrt(abs(x))`.
    SqrtAbs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Maximum,
    Minimum,
    And,
    Or,
    Xor,
    Lt,
}

impl Binary {
    fn render(self, a: &str, b: &str) -> String {
        match self {
            Binary::Add => format!("{a} + {b}"),
            Binary::Sub => format!("{a} - {b}"),
            Binary::Mul => format!("{a} * {b}"),
            Binary::Maximum => format!("maximum({a}, {b})"),
            Binary::Minimum => format!("minimum({a}, {b})"),
            Binary::And => format!("{a} & {b}"),
            Binary::Or => format!("{a} | {b}"),
            Binary::Xor => format!("{a} ^ {b}"),
            Binary::Lt => format!("{a} < {b}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Max,
    Min,
    ArgMax,
    ArgMin,
}

impl Reduction {
    fn method(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Max => "max",
            Reduction::Min => "min",
            Reduction::ArgMax => "argmax",
            Reduction::ArgMin => "argmin",
        }
    }
}

/// The integer types a value passes through in [`Op::Narrow`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrow {
    I8,
    U8,
    I16,
    U16,
}

impl Narrow {
    pub fn rust(self) -> &'static str {
        match self {
            Narrow::I8 => "i8",
            Narrow::U8 => "u8",
            Narrow::I16 => "i16",
            Narrow::U16 => "u16",
        }
    }
}

/// One value of a generated kernel: what computes it, its shape and element type, and whether
/// its f32 value is exact (no rounding anywhere below it, so the emulator must match bit for
/// bit; i32 and bool values are always exact).
#[derive(Clone, Debug)]
pub struct Node {
    pub op: Op,
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub exact: bool,
}

#[derive(Clone, Debug)]
pub enum Op {
    /// `load(buffer + offset + row-major offsets, last index < n, other)`.
    Load {
        buffer: Buffer,
        offset: usize,
        other: i32,
    },
    /// A scalar literal (f32 or i32), broadcast where it is used.
    Literal(i32),
    Unary(Unary, Box<Node>),
    Binary(Binary, Box<Node>, Box<Node>),
    Where(Box<Node>, Box<Node>, Box<Node>),
    ExpandDims(usize, Box<Node>),
    Reduce(Reduction, usize, Box<Node>),
    /// `x.to::<T>()` to this node's element type.
    Cast(Box<Node>),
    /// `(x as N) as i32` through a narrower integer type `N` (an i32 node).
    Narrow(Narrow, Box<Node>),
    /// `x.trans([perm])`: `out.shape[j] = x.shape[perm[j]]`.
    Trans(Vec<usize>, Box<Node>),
    Reshape(Box<Node>),
    Join(Box<Node>, Box<Node>),
    /// The first (`false`) or second (`true`) half of `x.split()`.
    Split(bool, Box<Node>),
    /// `gather(src, index & (src.shape[axis] - 1), axis)`.
    Gather(usize, Box<Node>, Box<Node>),
    /// `dot(a.to::<f16>(), b.to::<f16>()[, acc])`.
    Dot(Box<Node>, Box<Node>, Option<Box<Node>>),
    /// `let mut acc = init; for i in 0..t { acc = acc * 0.5 + body + i as f32 }` (f32) or
    /// `acc = (acc ^ body) + i` (i32).
    Loop(Box<Node>, Box<Node>),
    /// `let mut acc = init; let mut k = 0; while (k < t) & (max(acc) % 7 != 3) { acc = (acc ^
    /// body) + k; k += 1; }` (i32; `max(acc)` reduces every axis to a scalar).
    While(Box<Node>, Box<Node>),
    /// `x.cumsum(axis)` (i32, wrapping).
    Cumsum(usize, Box<Node>),
}

/// A generated kernel: its name, `num_warps`, the root value it stores.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub num_warps: u32,
    pub root: Node,
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The `index`-th kernel of the run with `seed`.
pub fn kernel(seed: u64, index: usize) -> Kernel {
    let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    // One kernel in six stores an f32 matrix large enough for `dot` (M, N >= 16).
    let (shape, dtype) = if rng.chance(1, 6) {
        let shape = vec![16 << rng.index(2), 16 << rng.index(2)];
        (shape, DType::F32)
    } else {
        let rank = 1 + rng.index(3);
        let shape = random_shape(&mut rng, rank, MAX_ELEMENTS / 2);
        let dtype = if rng.chance(1, 3) {
            DType::I32
        } else {
            DType::F32
        };
        (shape, dtype)
    };
    let root = Generator { rng: &mut rng }.exact_shape(&shape, dtype, 4);
    Kernel {
        name: format!("gen_{index}"),
        num_warps: [1, 2, 4][index % 3],
        root,
    }
}

/// A shape of `rank` powers of two (mostly 2..=32, sometimes 1) of at most `limit` elements.
fn random_shape(rng: &mut Rng, rank: usize, limit: usize) -> Vec<usize> {
    loop {
        let shape: Vec<usize> = (0..rank)
            .map(|_| {
                if rng.chance(1, 10) {
                    1
                } else {
                    1 << (1 + rng.index(5))
                }
            })
            .collect();
        if numel(&shape) <= limit {
            return shape;
        }
    }
}

struct Generator<'a> {
    rng: &'a mut Rng,
}

fn node(op: Op, shape: Vec<usize>, dtype: DType, exact: bool) -> Node {
    Node {
        op,
        shape,
        dtype,
        exact,
    }
}

impl Generator<'_> {
    /// A value of exactly `shape` and `dtype` (`dtype` F32 or I32).
    fn exact_shape(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let n = numel(shape);
        let rank = shape.len();
        if depth == 0 || self.rng.chance(1, 5) {
            return self.load(shape, dtype);
        }
        let matrix = dtype == DType::F32 && rank == 2 && shape[0] >= 16 && shape[1] >= 16;
        if matrix && self.rng.chance(1, 2) {
            return self.dot(shape, depth - 1);
        }
        for _ in 0..8 {
            let choice = self.rng.index(16);
            let d = depth - 1;
            let made = match choice {
                0 | 1 => Some(self.unary(shape, dtype, d)),
                2..=4 => Some(self.binary(shape, dtype, d)),
                5 => Some(self.where_(shape, dtype, d)),
                6 if rank < 3 => self.reduce(shape, dtype, d),
                7 => Some(self.cast(shape, dtype, d)),
                8 if rank >= 2 => Some(self.trans(shape, dtype, d)),
                9 => Some(self.reshape(shape, dtype, d)),
                10 if rank >= 2 && shape[rank - 1] == 2 => {
                    let half = &shape[..rank - 1];
                    let a = self.exact_shape(half, dtype, d);
                    let b = self.exact_shape(half, dtype, d);
                    let exact = a.exact && b.exact;
                    Some(node(
                        Op::Join(Box::new(a), Box::new(b)),
                        shape.to_vec(),
                        dtype,
                        exact,
                    ))
                }
                10 if rank < 3 && 2 * n <= MAX_ELEMENTS => {
                    let mut wide = shape.to_vec();
                    wide.push(2);
                    let x = self.exact_shape(&wide, dtype, d);
                    let exact = x.exact;
                    let hi = self.rng.chance(1, 2);
                    Some(node(
                        Op::Split(hi, Box::new(x)),
                        shape.to_vec(),
                        dtype,
                        exact,
                    ))
                }
                11 => self.gather(shape, dtype, d),
                12 => Some(self.loop_(shape, dtype, d)),
                13 if dtype == DType::I32 => {
                    let narrow =
                        [Narrow::I8, Narrow::U8, Narrow::I16, Narrow::U16][self.rng.index(4)];
                    let from = if self.rng.chance(1, 2) {
                        DType::F32
                    } else {
                        DType::I32
                    };
                    let mut x = self.exact_shape(shape, from, d);
                    if from == DType::F32 && !x.exact {
                        x = self.load(shape, from);
                    }
                    let op = Op::Narrow(narrow, Box::new(x));
                    Some(node(op, shape.to_vec(), dtype, true))
                }
                14 if dtype == DType::I32 => Some(self.while_(shape, d)),
                15 if dtype == DType::I32 => {
                    let axis = self.rng.index(rank);
                    let x = self.exact_shape(shape, dtype, d);
                    let op = Op::Cumsum(axis, Box::new(x));
                    Some(node(op, shape.to_vec(), dtype, true))
                }
                _ => None,
            };
            if let Some(made) = made {
                return made;
            }
        }
        self.load(shape, dtype)
    }

    fn load(&mut self, shape: &[usize], dtype: DType) -> Node {
        let buffer = match dtype {
            DType::I32 => Buffer::Ia,
            _ if self.rng.chance(1, 2) => Buffer::Fa,
            _ => Buffer::Fb,
        };
        let offset = if self.rng.chance(1, 2) {
            16 * self.rng.index(4)
        } else {
            self.rng.index(64)
        };
        let other = [0, 1, -3, 7][self.rng.index(4)];
        let op = Op::Load {
            buffer,
            offset,
            other,
        };
        node(op, shape.to_vec(), dtype, true)
    }

    /// An operand that broadcasts to `shape`: the shape itself, a scalar literal, a shorter
    /// suffix of it, a size-1 axis made by `expand_dims`, or a scalar made by a reduction.
    fn operand(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let rank = shape.len();
        match self.rng.index(8) {
            0 => {
                let value = [0, 1, 2, -1, 3, 5][self.rng.index(6)];
                node(Op::Literal(value), Vec::new(), dtype, true)
            }
            1 if rank >= 2 => self.exact_shape(&shape[1..], dtype, depth),
            2 if rank >= 2 => {
                let axis = self.rng.index(rank);
                let mut smaller = shape.to_vec();
                smaller.remove(axis);
                let x = self.exact_shape(&smaller, dtype, depth);
                let exact = x.exact;
                let mut out = shape.to_vec();
                out[axis] = 1;
                node(Op::ExpandDims(axis, Box::new(x)), out, dtype, exact)
            }
            3 if dtype == DType::I32 || self.rng.chance(1, 2) => {
                let reduction = [Reduction::Max, Reduction::Min, Reduction::Sum][self.rng.index(3)];
                let len = 1 << self.rng.index(6);
                let x = self.exact_shape(&[len], dtype, depth);
                let exact = x.exact;
                node(
                    Op::Reduce(reduction, 0, Box::new(x)),
                    Vec::new(),
                    dtype,
                    exact,
                )
            }
            _ => self.exact_shape(shape, dtype, depth),
        }
    }

    fn unary(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let x = self.exact_shape(shape, dtype, depth);
        let op = match (dtype, self.rng.index(4)) {
            (DType::F32, 2) if x.exact => Unary::Exp,
            (DType::F32, 3) => Unary::SqrtAbs,
            (_, 0 | 2) => Unary::Neg,
            _ => Unary::Abs,
        };
        let exact = x.exact && matches!(op, Unary::Neg | Unary::Abs);
        node(Op::Unary(op, Box::new(x)), shape.to_vec(), dtype, exact)
    }

    /// Two operands, one of the full shape (either side), broadcasting.
    fn pair(&mut self, shape: &[usize], dtype: DType, depth: usize) -> (Node, Node) {
        let full = self.exact_shape(shape, dtype, depth);
        let other = self.operand(shape, dtype, depth);
        if self.rng.chance(1, 2) {
            (full, other)
        } else {
            (other, full)
        }
    }

    fn binary(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let ops: &[Binary] = match dtype {
            DType::I32 => &[
                Binary::Add,
                Binary::Sub,
                Binary::Mul,
                Binary::Maximum,
                Binary::Minimum,
                Binary::And,
                Binary::Or,
                Binary::Xor,
            ],
            _ => &[
                Binary::Add,
                Binary::Sub,
                Binary::Mul,
                Binary::Maximum,
                Binary::Minimum,
            ],
        };
        let op = ops[self.rng.index(ops.len())];
        let (a, b) = self.pair(shape, dtype, depth);
        // A product of f32 values rounds once the factors carry enough bits: not exact.
        let exact = a.exact && b.exact && !(dtype == DType::F32 && op == Binary::Mul);
        node(
            Op::Binary(op, Box::new(a), Box::new(b)),
            shape.to_vec(),
            dtype,
            exact,
        )
    }

    fn where_(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let compared = if self.rng.chance(1, 2) {
            DType::F32
        } else {
            DType::I32
        };
        let (l, r) = self.pair(shape, compared, depth);
        let cond = node(
            Op::Binary(Binary::Lt, Box::new(l), Box::new(r)),
            shape.to_vec(),
            DType::Bool,
            true,
        );
        let (a, b) = self.pair(shape, dtype, depth);
        let exact = a.exact && b.exact;
        let op = Op::Where(Box::new(cond), Box::new(a), Box::new(b));
        node(op, shape.to_vec(), dtype, exact)
    }

    fn reduce(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Option<Node> {
        let axis = self.rng.index(shape.len() + 1);
        let len = 1 << self.rng.index(6);
        if numel(shape) * len > MAX_ELEMENTS {
            return None;
        }
        let mut wide = shape.to_vec();
        wide.insert(axis, len);
        let (reduction, input) = match (dtype, self.rng.index(3)) {
            (DType::I32, 0) => {
                let input = if self.rng.chance(1, 2) {
                    DType::F32
                } else {
                    DType::I32
                };
                let arg = [Reduction::ArgMax, Reduction::ArgMin][self.rng.index(2)];
                (arg, input)
            }
            (_, 1) => (Reduction::Max, dtype),
            (_, 2) => (Reduction::Min, dtype),
            _ => (Reduction::Sum, dtype),
        };
        let x = self.exact_shape(&wide, input, depth);
        let exact = x.exact;
        let op = Op::Reduce(reduction, axis, Box::new(x));
        Some(node(op, shape.to_vec(), dtype, exact))
    }

    /// `i32 → f32`, or `f32 → i32` from an exact value (so the truncation sees the same value).
    fn cast(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let from = match dtype {
            DType::F32 => DType::I32,
            _ => DType::F32,
        };
        let mut x = self.exact_shape(shape, from, depth);
        if from == DType::F32 && !x.exact {
            x = self.load(shape, from);
        }
        // i32 → f32 rounds above 2^24.
        let exact = dtype == DType::I32;
        node(Op::Cast(Box::new(x)), shape.to_vec(), dtype, exact)
    }

    fn trans(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let rank = shape.len();
        let mut perm: Vec<usize> = (0..rank).rev().collect();
        if rank == 3 && self.rng.chance(1, 2) {
            perm = [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1]][self.rng.index(4)].to_vec();
        }
        // out.shape[j] = in.shape[perm[j]]
        let mut input = vec![0; rank];
        for (j, &p) in perm.iter().enumerate() {
            input[p] = shape[j];
        }
        let x = self.exact_shape(&input, dtype, depth);
        let exact = x.exact;
        node(Op::Trans(perm, Box::new(x)), shape.to_vec(), dtype, exact)
    }

    fn reshape(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let n = numel(shape);
        let rank = 1 + self.rng.index(3);
        let mut input = vec![1; rank];
        let mut left = n;
        for (i, dim) in input.iter_mut().enumerate() {
            if i + 1 == rank {
                *dim = left;
            } else {
                let take = 1 << self.rng.index(left.trailing_zeros() as usize + 1);
                *dim = take;
                left /= take;
            }
        }
        let x = self.exact_shape(&input, dtype, depth);
        let exact = x.exact;
        node(Op::Reshape(Box::new(x)), shape.to_vec(), dtype, exact)
    }

    fn gather(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Option<Node> {
        let axis = self.rng.index(shape.len());
        let len = 1 << self.rng.index(6);
        let mut source_shape = shape.to_vec();
        source_shape[axis] = len;
        if numel(&source_shape) > MAX_ELEMENTS {
            return None;
        }
        let source = self.exact_shape(&source_shape, dtype, depth);
        let index = self.exact_shape(shape, DType::I32, depth);
        let exact = source.exact;
        let op = Op::Gather(axis, Box::new(source), Box::new(index));
        Some(node(op, shape.to_vec(), dtype, exact))
    }

    fn dot(&mut self, shape: &[usize], depth: usize) -> Node {
        let k = [16, 32][self.rng.index(2)];
        let (m, n) = (shape[0], shape[1]);
        // Shallow operands: f16 holds them (deep ones may be i32 casts far past f16's range).
        let a = self.exact_shape(&[m, k], DType::F32, depth.min(1));
        let b = self.exact_shape(&[k, n], DType::F32, depth.min(1));
        let acc = self
            .rng
            .chance(1, 2)
            .then(|| Box::new(self.exact_shape(shape, DType::F32, depth)));
        node(
            Op::Dot(Box::new(a), Box::new(b), acc),
            shape.to_vec(),
            DType::F32,
            false,
        )
    }

    fn while_(&mut self, shape: &[usize], depth: usize) -> Node {
        let init = self.exact_shape(shape, DType::I32, depth);
        let body = self.operand(shape, DType::I32, depth);
        node(
            Op::While(Box::new(init), Box::new(body)),
            shape.to_vec(),
            DType::I32,
            true,
        )
    }

    fn loop_(&mut self, shape: &[usize], dtype: DType, depth: usize) -> Node {
        let init = self.exact_shape(shape, dtype, depth);
        let body = self.operand(shape, dtype, depth);
        let exact = dtype == DType::I32;
        node(
            Op::Loop(Box::new(init), Box::new(body)),
            shape.to_vec(),
            dtype,
            exact,
        )
    }
}

/// `arange(0, dims[axis])` with trailing size-1 axes, so it broadcasts along `axis` of a tile of
/// rank `dims.len()`.
fn axis_index(dims: &[usize], axis: usize) -> String {
    let mut text = format!("arange(0, {})", dims[axis]);
    for k in axis + 1..dims.len() {
        text.push_str(&format!(".expand_dims({})", k - axis));
    }
    text
}

/// The row-major element offsets of a tile of `shape`, as an i32 tile expression.
fn offsets(shape: &[usize]) -> String {
    let mut terms = Vec::new();
    for axis in 0..shape.len() {
        let stride: usize = shape[axis + 1..].iter().product();
        let index = axis_index(shape, axis);
        terms.push(if stride == 1 {
            index
        } else {
            format!("{index} * {stride}")
        });
    }
    terms.join(" + ")
}

/// Renders kernel bodies: one `let` per value.
struct Renderer {
    lines: Vec<String>,
    next: usize,
}

fn literal(value: i32, dtype: DType) -> String {
    match dtype {
        DType::F32 => format!("{value}.0"),
        _ => format!("{value}"),
    }
}

impl Renderer {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("v{}", self.next)
    }

    fn bind(&mut self, expr: String) -> String {
        let name = self.fresh();
        self.lines.push(format!("    let {name} = {expr};"));
        name
    }

    fn value(&mut self, node: &Node) -> String {
        match &node.op {
            Op::Load {
                buffer,
                offset,
                other,
            } => {
                let base = match buffer {
                    Buffer::Fa => "fa",
                    Buffer::Fb => "fb",
                    Buffer::Ia => "ia",
                };
                let last = node.shape.len() - 1;
                self.bind(format!(
                    "load({base} + {offset} + {}, {} < n, {})",
                    offsets(&node.shape),
                    axis_index(&node.shape, last),
                    literal(*other, node.dtype)
                ))
            }
            Op::Literal(value) => literal(*value, node.dtype),
            Op::Unary(op, x) => {
                let x = self.value(x);
                self.bind(match op {
                    Unary::Neg => format!("-{x}"),
                    Unary::Abs => format!("abs({x})"),
                    Unary::Exp => format!("exp({x} * 0.125)"),
                    Unary::SqrtAbs => format!("sqrt(abs({x}))"),
                })
            }
            Op::Binary(op, a, b) => {
                let (a, b) = (self.value(a), self.value(b));
                self.bind(op.render(&a, &b))
            }
            Op::Where(c, a, b) => {
                let (c, a, b) = (self.value(c), self.value(a), self.value(b));
                self.bind(format!("where_({c}, {a}, {b})"))
            }
            Op::ExpandDims(axis, x) => {
                let x = self.value(x);
                self.bind(format!("{x}.expand_dims({axis})"))
            }
            Op::Reduce(reduction, axis, x) => {
                let x = self.value(x);
                self.bind(format!("{x}.{}({axis})", reduction.method()))
            }
            Op::Cast(x) => {
                let x = self.value(x);
                if self.next.is_multiple_of(2) {
                    self.bind(format!("{x}.to::<{}>()", node.dtype.rust()))
                } else {
                    self.bind(format!("{x} as {}", node.dtype.rust()))
                }
            }
            Op::Narrow(narrow, x) => {
                let x = self.value(x);
                self.bind(format!("({x} as {}) as i32", narrow.rust()))
            }
            Op::Trans(perm, x) => {
                let x = self.value(x);
                let reversed = perm.iter().rev().copied().eq(0..perm.len());
                if reversed && perm.len() == 2 {
                    self.bind(format!("{x}.trans()"))
                } else {
                    let list: Vec<String> = perm.iter().map(|p| p.to_string()).collect();
                    self.bind(format!("{x}.trans([{}])", list.join(", ")))
                }
            }
            Op::Reshape(x) => {
                let x = self.value(x);
                let dims: Vec<String> = node.shape.iter().map(|d| d.to_string()).collect();
                self.bind(format!("{x}.reshape([{}])", dims.join(", ")))
            }
            Op::Join(a, b) => {
                let (a, b) = (self.value(a), self.value(b));
                self.bind(format!("join({a}, {b})"))
            }
            Op::Split(hi, x) => {
                let x = self.value(x);
                let (lo_name, hi_name) = (self.fresh(), self.fresh());
                self.lines
                    .push(format!("    let ({lo_name}, {hi_name}) = {x}.split();"));
                if *hi {
                    hi_name
                } else {
                    lo_name
                }
            }
            Op::Gather(axis, source, index) => {
                let source_len = source.shape[*axis];
                let (s, i) = (self.value(source), self.value(index));
                self.bind(format!(
                    "gather({s}, {i} & {}, {axis})",
                    source_len as i32 - 1
                ))
            }
            Op::Dot(a, b, acc) => {
                let (a, b) = (self.value(a), self.value(b));
                match acc {
                    Some(acc) => {
                        let acc = self.value(acc);
                        self.bind(format!("dot({a}.to::<f16>(), {b}.to::<f16>(), {acc})"))
                    }
                    None => self.bind(format!("dot({a}.to::<f16>(), {b}.to::<f16>())")),
                }
            }
            Op::Loop(init, body) => {
                let init = self.value(init);
                let body = self.value(body);
                let acc = self.fresh();
                self.lines.push(format!("    let mut {acc} = {init};"));
                self.lines.push("    for i in 0..t {".to_string());
                self.lines.push(match node.dtype {
                    DType::F32 => format!("        {acc} = {acc} * 0.5 + {body} + i as f32;"),
                    _ => format!("        {acc} = ({acc} ^ {body}) + i;"),
                });
                self.lines.push("    }".to_string());
                acc
            }
            Op::While(init, body) => {
                let init = self.value(init);
                let body = self.value(body);
                let (acc, k) = (self.fresh(), self.fresh());
                let all: String = (0..node.shape.len())
                    .rev()
                    .map(|axis| format!(".max({axis})"))
                    .collect();
                self.lines.push(format!("    let mut {acc} = {init};"));
                self.lines.push(format!("    let mut {k} = 0;"));
                self.lines
                    .push(format!("    while ({k} < t) & ({acc}{all} % 7 != 3) {{"));
                self.lines
                    .push(format!("        {acc} = ({acc} ^ {body}) + {k};"));
                self.lines.push(format!("        {k} += 1;"));
                self.lines.push("    }".to_string());
                acc
            }
            Op::Cumsum(axis, x) => {
                let x = self.value(x);
                self.bind(format!("{x}.cumsum({axis})"))
            }
        }
    }
}

/// The `#[tile_kernel]` attribute arguments of a kernel.
pub fn attribute(kernel: &Kernel) -> String {
    format!("num_warps = {}", kernel.num_warps)
}

/// The function of a kernel (without its attribute).
pub fn function(kernel: &Kernel) -> String {
    let mut renderer = Renderer {
        lines: Vec::new(),
        next: 0,
    };
    let root = renderer.value(&kernel.root);
    let shape = &kernel.root.shape;
    let last = shape.len() - 1;
    let store = format!(
        "    store(out + {}, {root}, {} < m);",
        offsets(shape),
        axis_index(shape, last)
    );
    format!(
        "pub fn {}(out: Ptr<{}>, fa: Ptr<f32>, fb: Ptr<f32>, ia: Ptr<i32>, n: i32, m: i32, t: i32) {{\n{}\n{store}\n}}\n",
        kernel.name,
        kernel.root.dtype.rust(),
        renderer.lines.join("\n"),
    )
}
