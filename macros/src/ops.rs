//! The operations of the tile language by name: what the parser resolves calls to.
//!
//! Every operation whose first argument is a tile can be written as a free function or as a
//! method on that tile: `exp(x)` ≡ `x.exp()`, `load(p, m, o)` ≡ `p.load(m, o)`,
//! `sum(x, 1)` ≡ `x.sum(1)`. Those with no tile argument (`program_id`, `num_programs`,
//! `arange`, `full`, `zeros`) and those whose first argument is a seed (`randint`, `rand`,
//! `randn`) are free functions only.

use crate::ir::{AtomicOp, ReduceKind, ScanKind, UnaryOp};

/// An operation of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    ProgramId,
    NumPrograms,
    Arange,
    Full,
    Zeros,
    Cdiv,
    Load,
    /// `load_block(t, [row, col], [ROWS, COLS])`: a block of a rank-2 tensor, zeros outside.
    LoadBlock,
    Store,
    /// The atomics: `atomic_add`, …, `atomic_xchg`, `atomic_cas`.
    Atomic(AtomicOp),
    Where,
    /// The elementwise math functions of one operand: `exp`, `log`, `sqrt`, `abs`, `sin`, ….
    Math(UnaryOp),
    Clamp,
    Umulhi,
    Randint,
    Rand,
    Randn,
    Maximum,
    Minimum,
    Fma,
    To,
    ExpandDims,
    BroadcastTo,
    /// The reductions along an axis: `sum`, `max`, `min`, `argmax`, `argmin`.
    Reduce(ReduceKind),
    /// The inclusive scans along an axis: `cumsum`, `cumprod`.
    Scan(ScanKind),
    Dot,
    Trans,
    Reshape,
    Join,
    Split,
    Gather,
    ConvertLayout,
}

/// Whether an operation takes an element type as `::<T>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeArg {
    None,
    Optional,
    Required,
}

/// What the parser knows about an operation.
#[derive(Debug)]
pub struct OpInfo {
    pub op: Op,
    /// The name users write.
    pub name: &'static str,
    /// How it is called, for messages and the docs.
    pub usage: &'static str,
    /// Fewest and most arguments, counting the receiver of a method call.
    pub min_args: usize,
    pub max_args: usize,
    /// Callable as a method on its first argument.
    pub method: bool,
    pub type_arg: TypeArg,
}

const fn info(
    op: Op,
    name: &'static str,
    usage: &'static str,
    args: (usize, usize),
    method: bool,
    type_arg: TypeArg,
) -> OpInfo {
    OpInfo {
        op,
        name,
        usage,
        min_args: args.0,
        max_args: args.1,
        method,
        type_arg,
    }
}

use TypeArg::{None as NoType, Optional, Required};

/// Every operation, as the docs list them.
#[rustfmt::skip]
pub const OPS: &[OpInfo] = &[
    info(Op::ProgramId, "program_id", "program_id(axis)", (1, 1), false, NoType),
    info(Op::NumPrograms, "num_programs", "num_programs(axis)", (1, 1), false, NoType),
    info(Op::Arange, "arange", "arange(start, end)", (2, 2), false, NoType),
    info(Op::Full, "full", "full::<T>([shape], value)", (2, 2), false, Optional),
    info(Op::Zeros, "zeros", "zeros::<T>([shape])", (1, 1), false, Optional),
    info(Op::Cdiv, "cdiv", "cdiv(a, b)", (2, 2), true, NoType),
    info(Op::Load, "load", "load(ptrs) / load(ptrs, mask) / load(ptrs, mask, other)", (1, 3), true, NoType),
    info(Op::LoadBlock, "load_block", "load_block(t, [row, col], [ROWS, COLS])", (3, 3), false, NoType),
    info(Op::Store, "store", "store(ptrs, value) / store(ptrs, value, mask)", (2, 3), true, NoType),
    info(Op::Where, "where_", "where_(condition, if_true, if_false)", (3, 3), true, NoType),
    info(Op::Math(UnaryOp::Exp), "exp", "exp(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Exp2), "exp2", "exp2(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Log), "log", "log(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Log2), "log2", "log2(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Sqrt), "sqrt", "sqrt(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Rsqrt), "rsqrt", "rsqrt(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Abs), "abs", "abs(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Tanh), "tanh", "tanh(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Erf), "erf", "erf(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Sin), "sin", "sin(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Cos), "cos", "cos(x)", (1, 1), true, NoType),
    info(Op::Math(UnaryOp::Sigmoid), "sigmoid", "sigmoid(x)", (1, 1), true, NoType),
    info(Op::Clamp, "clamp", "clamp(x, lo, hi)", (3, 3), true, NoType),
    info(Op::Umulhi, "umulhi", "umulhi(a, b)", (2, 2), true, NoType),
    info(Op::Randint, "randint", "randint(seed, offsets)", (2, 2), false, NoType),
    info(Op::Rand, "rand", "rand(seed, offsets)", (2, 2), false, NoType),
    info(Op::Randn, "randn", "randn(seed, offsets)", (2, 2), false, NoType),
    info(Op::Maximum, "maximum", "maximum(a, b)", (2, 2), true, NoType),
    info(Op::Minimum, "minimum", "minimum(a, b)", (2, 2), true, NoType),
    info(Op::Fma, "fma", "fma(a, b, c)", (3, 3), true, NoType),
    info(Op::To, "to", "x.to::<T>()", (1, 1), true, Required),
    info(Op::ExpandDims, "expand_dims", "x.expand_dims(axis)", (2, 2), true, NoType),
    info(Op::BroadcastTo, "broadcast_to", "x.broadcast_to([shape])", (2, 2), true, NoType),
    info(Op::Reduce(ReduceKind::Sum), "sum", "x.sum(axis)", (2, 2), true, NoType),
    info(Op::Reduce(ReduceKind::Max), "max", "x.max(axis)", (2, 2), true, NoType),
    info(Op::Reduce(ReduceKind::Min), "min", "x.min(axis)", (2, 2), true, NoType),
    info(Op::Reduce(ReduceKind::Argmax), "argmax", "x.argmax(axis)", (2, 2), true, NoType),
    info(Op::Reduce(ReduceKind::Argmin), "argmin", "x.argmin(axis)", (2, 2), true, NoType),
    info(Op::Scan(ScanKind::Sum), "cumsum", "x.cumsum(axis) / x.cumsum(axis, reverse)", (2, 3), true, NoType),
    info(Op::Scan(ScanKind::Prod), "cumprod", "x.cumprod(axis) / x.cumprod(axis, reverse)", (2, 3), true, NoType),
    info(Op::Dot, "dot", "dot(a, b) / dot(a, b, acc)", (2, 3), true, NoType),
    info(Op::Trans, "trans", "x.trans() / x.trans([permutation])", (1, 2), true, NoType),
    info(Op::Reshape, "reshape", "x.reshape([shape])", (2, 2), true, NoType),
    info(Op::Join, "join", "join(a, b)", (2, 2), true, NoType),
    info(Op::Split, "split", "let (a, b) = x.split()", (1, 1), true, NoType),
    info(Op::Gather, "gather", "gather(src, index, axis)", (3, 3), true, NoType),
    info(Op::ConvertLayout, "convert_layout", "x.convert_layout(LAYOUT)", (2, 2), true, NoType),
];

/// The atomics: `(ptrs, value, mask)` (`atomic_cas`: `(ptrs, cmp, value)`), then the optional
/// memory order and scope as string literals.
const fn atomic(op: AtomicOp, name: &'static str, usage: &'static str) -> OpInfo {
    let args = match op {
        AtomicOp::Cas => (3, 5),
        _ => (2, 5),
    };
    info(Op::Atomic(op), name, usage, args, true, NoType)
}

/// `atomic(AtomicOp::$op, "$name", usage)` for an atomic taking `(ptrs, value, mask)` and the
/// optional order and scope; the usage line is written once here.
macro_rules! value_atomic {
    ($op:ident, $name:literal) => {
        atomic(
            AtomicOp::$op,
            $name,
            concat!(
                $name,
                "(ptrs, value, mask, \"acq_rel\", \"gpu\") (mask, order and scope optional)"
            ),
        )
    };
}

/// The atomics, listed with [`OPS`].
pub const ATOMIC_OPS: &[OpInfo] = &[
    value_atomic!(Add, "atomic_add"),
    value_atomic!(Max, "atomic_max"),
    value_atomic!(Min, "atomic_min"),
    value_atomic!(And, "atomic_and"),
    value_atomic!(Or, "atomic_or"),
    value_atomic!(Xor, "atomic_xor"),
    value_atomic!(Xchg, "atomic_xchg"),
    atomic(
        AtomicOp::Cas,
        "atomic_cas",
        "atomic_cas(ptrs, cmp, value, \"acq_rel\", \"gpu\") (order and scope optional)",
    ),
];

/// The operation called `name`.
pub fn lookup(name: &str) -> Option<&'static OpInfo> {
    all().find(|o| o.name == name)
}

/// Every operation: [`OPS`] and [`ATOMIC_OPS`].
pub fn all() -> impl Iterator<Item = &'static OpInfo> {
    OPS.iter().chain(ATOMIC_OPS)
}

/// The description of `op`.
pub fn info_of(op: Op) -> &'static OpInfo {
    all()
        .find(|o| o.op == op)
        .expect("every Op has an entry in OPS")
}

/// Names from Rust, NumPy or PyTorch that mean an operation of ours under another name.
pub const OTHER_NAMES: &[(&str, &str)] = &[
    ("ln", "log"),
    ("mul_add", "fma"),
    ("select", "where_"),
    ("where", "where_"),
    ("transpose", "trans"),
    ("permute", "trans"),
    ("t", "trans"),
    ("view", "reshape"),
    ("unsqueeze", "expand_dims"),
    ("broadcast", "broadcast_to"),
    ("expand", "broadcast_to"),
    ("matmul", "dot"),
    ("mm", "dot"),
    ("cast", "to"),
    ("amax", "max"),
    ("amin", "min"),
    ("reduce_sum", "sum"),
    ("stack", "join"),
    ("take_along_axis", "gather"),
    ("recip_sqrt", "rsqrt"),
    ("clip", "clamp"),
    ("mulhi", "umulhi"),
    ("logistic", "sigmoid"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_complete() {
        let every: Vec<&OpInfo> = all().collect();
        for (i, a) in every.iter().enumerate() {
            for b in &every[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.op, b.op);
            }
            assert!(a.min_args <= a.max_args);
            assert!(a.max_args >= 1);
            assert_eq!(info_of(a.op).name, a.name);
        }
        for (_, ours) in OTHER_NAMES {
            assert!(lookup(ours).is_some(), "{ours}");
        }
    }
}
