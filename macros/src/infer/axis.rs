//! Axis analysis (Triton's `AxisInfo`): for every integer, pointer and bool value, per dimension,
//!
//! - **contiguity** `c`: the dimension splits into aligned runs of `c` elements (positions
//!   `[k·c, (k+1)·c)`) whose values increase by one element each (for pointers: by one element of
//!   the pointee, i.e. its size in bytes);
//! - **divisibility** `d`: the first value of every such run (every value when `c = 1`) is a
//!   multiple of `d` (for pointers: the address, in bytes);
//! - **constancy** `k`: the dimension splits into aligned runs of `k` equal values.
//!
//! All three are powers of two (divisibility is capped at [`MAX_DIVISIBILITY`]). Scalars are
//! treated as tiles of shape `[1]`. Facts flow forward through the ops; a loop's carried values
//! start from their initial values and are met (`gcd` of each fact) with what the body yields
//! until nothing changes. Address arithmetic is assumed not to wrap around (as Triton does).
//!
//! **Assumptions at launch** ([`AlignmentPolicy::Aligned`], the default, Triton's
//! specialisation on `divisibility = 16`): a pointer parameter that reaches the address of a
//! tile load or store is 16-byte aligned, an integer parameter that reaches the address or the
//! mask of one is a multiple of 16, except a `Tensor` parameter's innermost stride
//! ([`Param::unit_stride`](crate::ir::Param)), which is assumed to be 1 (contiguous rows: its
//! accesses vectorize as a `Ptr` kernel's with the stride left out do) — of these candidates
//! inference keeps only those without which
//! some access would be narrower (the others are not assumed: their facts are recomputed
//! without them). [`Inference::assumptions`](super::Inference) lists the kept ones per kernel;
//! **the launcher must check each one** on the actual arguments before
//! launching (`ptr as usize % 16 == 0`, `value % 16 == 0`, `stride == 1`) and refuse the launch (or pick a
//! variant inferred with [`AlignmentPolicy::Natural`]) when one fails, because the vector widths
//! of loads and stores rely on them. [`AlignmentPolicy::Natural`] assumes only what every
//! argument satisfies: pointers aligned to their element type, integers divisible by 1.

use super::graph::{Def, Graph, OpId};
use crate::ir::{BinaryOp, CmpOp, ConstValue, Kernel, OpKind, ValueId};
use crate::types::{DType, TileType};
use std::collections::BTreeSet;
use std::fmt;

/// Largest divisibility tracked (`0` is divisible by everything and gets this).
pub const MAX_DIVISIBILITY: u64 = 1 << 32;

/// The alignment (bytes) assumed for pointer parameters, and the divisibility assumed for
/// integer parameters, under [`AlignmentPolicy::Aligned`].
pub const ASSUMED_ALIGNMENT: u64 = 16;

/// What inference may assume about the kernel's arguments (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlignmentPolicy {
    /// Pointers 16-byte aligned, integers multiples of 16, where they reach a load or store:
    /// the launcher checks.
    Aligned,
    /// Pointers aligned to their element type, nothing assumed of integers.
    Natural,
}

/// One fact about an argument that the launcher must check before a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assumption {
    /// Index of the parameter in [`Kernel::params`].
    pub param: usize,
    /// Its name.
    pub name: String,
    pub kind: AssumptionKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssumptionKind {
    /// The pointer's address is a multiple of `bytes`.
    PointerAligned { bytes: u64 },
    /// The integer's value is a multiple of `by`.
    IntDivisible { by: u64 },
    /// The integer's value is `value` (a tensor's innermost stride: 1).
    IntEquals { value: i128 },
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            AssumptionKind::PointerAligned { bytes } => {
                write!(f, "{} is {bytes}-byte aligned", self.name)
            }
            AssumptionKind::IntDivisible { by } => write!(f, "{} % {by} == 0", self.name),
            AssumptionKind::IntEquals { value } => write!(f, "{} == {value}", self.name),
        }
    }
}

/// The facts of one value (see the module docs); one entry per dimension (one for a scalar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisInfo {
    pub contiguity: Vec<u64>,
    pub divisibility: Vec<u64>,
    pub constancy: Vec<u64>,
    /// The value, when it is one known integer everywhere.
    pub value: Option<i128>,
    /// Every value is `≥ 0` (needed for the `/` and `%` rules: Rust's division truncates toward
    /// zero). True of unsigned values, `arange` from 0 up, program ids, and sums and products
    /// of such (wrap-around ignored, as for addresses).
    pub nonnegative: bool,
}

fn gcd(a: u64, b: u64) -> u64 {
    // Every fact is a power of two: the gcd is the smaller one.
    a.min(b)
}

/// Largest power of two dividing `v` (capped).
pub fn pow2_divisor(v: i128) -> u64 {
    if v == 0 {
        return MAX_DIVISIBILITY;
    }
    let tz = v.unsigned_abs().trailing_zeros();
    if tz >= 32 {
        MAX_DIVISIBILITY
    } else {
        1 << tz
    }
}

fn cap(v: u64) -> u64 {
    v.clamp(1, MAX_DIVISIBILITY)
}

impl AxisInfo {
    /// Nothing known, for a tile of `rank` dimensions.
    pub fn unknown(rank: usize) -> AxisInfo {
        let n = rank.max(1);
        AxisInfo {
            contiguity: vec![1; n],
            divisibility: vec![1; n],
            constancy: vec![1; n],
            value: None,
            nonnegative: false,
        }
    }

    /// A scalar with divisibility `d` and maybe a known value.
    fn scalar(d: u64, value: Option<i128>) -> AxisInfo {
        AxisInfo {
            contiguity: vec![1],
            divisibility: vec![cap(d)],
            constancy: vec![1],
            value,
            nonnegative: value.is_some_and(|v| v >= 0),
        }
    }

    fn rank(&self) -> usize {
        self.contiguity.len()
    }

    /// The divisibility of every single element (not just of run starts).
    pub fn element_divisibility(&self) -> u64 {
        (0..self.rank())
            .map(|d| {
                if self.contiguity[d] > 1 {
                    1
                } else {
                    self.divisibility[d]
                }
            })
            .min()
            .unwrap_or(1)
    }

    /// The divisibility of the starts of runs of `run` elements along `d` (a run of this
    /// value's contiguity split into shorter aligned runs starts at `start + k·run`).
    fn divisibility_at(&self, d: usize, run: u64) -> u64 {
        if self.contiguity[d] > 1 && run < self.contiguity[d] {
            gcd(self.divisibility[d], run)
        } else {
            self.divisibility[d]
        }
    }

    /// The meet (what holds of both): `gcd` of every fact.
    pub fn meet(&self, other: &AxisInfo) -> AxisInfo {
        if self.rank() != other.rank() {
            return AxisInfo::unknown(self.rank());
        }
        let zip = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(&x, &y)| gcd(x, y)).collect();
        AxisInfo {
            contiguity: zip(&self.contiguity, &other.contiguity),
            divisibility: zip(&self.divisibility, &other.divisibility),
            constancy: zip(&self.constancy, &other.constancy),
            value: if self.value == other.value {
                self.value
            } else {
                None
            },
            nonnegative: self.nonnegative && other.nonnegative,
        }
    }

    /// Only the constancy of `self` (elementwise ops that keep equal inputs equal).
    fn constancy_only(&self) -> AxisInfo {
        AxisInfo {
            constancy: self.constancy.clone(),
            ..AxisInfo::unknown(self.rank())
        }
    }
}

/// The analysis result: facts per value, and the assumptions they rest on.
#[derive(Clone, Debug)]
pub struct AxisAnalysis {
    pub info: Vec<AxisInfo>,
    pub assumptions: Vec<Assumption>,
}

/// The integer parameters whose value `analysis` knows (an assumed unit stride, or a value
/// pinned by `requires`), with the value: [`Inference::param_values`](super::Inference).
pub fn known_param_values(kernel: &Kernel, analysis: &AxisAnalysis) -> Vec<(usize, i128)> {
    kernel
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(kernel.ty(p.value).dtype, DType::Scalar(s) if s.is_int()))
        .filter_map(|(i, p)| analysis.info[p.value.0 as usize].value.map(|v| (i, v)))
        .collect()
}

/// Bytes of one element a pointer of dtype `Ptr(s)` points at (`bool`: one byte).
pub fn pointee_bytes(dtype: DType) -> u64 {
    match dtype {
        DType::Ptr(s) => u64::from(s.bits() / 8).max(1),
        DType::Scalar(s) => u64::from(s.bits() / 8).max(1),
    }
}

/// The analysis with the [`AlignmentPolicy::Aligned`] assumption made for exactly the
/// parameters in `assumed` (indices into [`Kernel::params`]; others get the natural alignment).
pub fn analyze_assuming(kernel: &Kernel, graph: &Graph, assumed: &BTreeSet<usize>) -> AxisAnalysis {
    let mut info: Vec<AxisInfo> = kernel
        .values
        .iter()
        .map(|v| AxisInfo::unknown(v.ty.rank()))
        .collect();
    let mut assumptions = Vec::new();
    let pinned = required_values(kernel);
    for (i, p) in kernel.params.iter().enumerate() {
        let ty = kernel.ty(p.value);
        if let (Some(&value), DType::Scalar(s)) = (pinned.get(p.name.as_str()), ty.dtype) {
            if s.is_int() {
                // The launcher refuses any other value before a variant runs: a fact of every
                // variant, assumed by none.
                info[p.value.0 as usize] = AxisInfo {
                    nonnegative: value >= 0,
                    ..AxisInfo::scalar(pow2_divisor(value), Some(value))
                };
                continue;
            }
        }
        let (d, kind) = match ty.dtype {
            DType::Scalar(s) if s.is_int() && assumed.contains(&i) && p.unit_stride => {
                let kind = AssumptionKind::IntEquals { value: 1 };
                info[p.value.0 as usize] = AxisInfo::scalar(1, Some(1));
                assumptions.push(Assumption {
                    param: i,
                    name: p.name.clone(),
                    kind,
                });
                continue;
            }
            DType::Ptr(_) if assumed.contains(&i) => (
                ASSUMED_ALIGNMENT,
                Some(AssumptionKind::PointerAligned {
                    bytes: ASSUMED_ALIGNMENT,
                }),
            ),
            DType::Ptr(_) => (pointee_bytes(ty.dtype), None),
            DType::Scalar(s) if s.is_int() && assumed.contains(&i) => (
                ASSUMED_ALIGNMENT,
                Some(AssumptionKind::IntDivisible {
                    by: ASSUMED_ALIGNMENT,
                }),
            ),
            _ => (1, None),
        };
        info[p.value.0 as usize] = AxisInfo {
            nonnegative: is_unsigned(ty.dtype),
            ..AxisInfo::scalar(d, None)
        };
        if let Some(kind) = kind {
            assumptions.push(Assumption {
                param: i,
                name: p.name.clone(),
                kind,
            });
        }
    }
    // Loop-carried values start from their initial values; iterate to the fixpoint.
    let mut carried: Vec<Option<AxisInfo>> = vec![None; kernel.values.len()];
    for round in 0..64 {
        pass(kernel, graph, &mut info, &carried);
        // Meet each carried value with what the body yields.
        let mut changed = false;
        for node in &graph.ops {
            for c in node.carried() {
                for &arg in &c.args {
                    let met = info[arg.0 as usize].meet(&info[c.yielded.0 as usize]);
                    if met != info[arg.0 as usize] {
                        changed = true;
                    }
                    carried[arg.0 as usize] = Some(met);
                }
            }
        }
        if !changed {
            break;
        }
        if round == 63 {
            // Not settled (cannot happen: facts only shrink): assume nothing of carried values.
            for node in &graph.ops {
                for &arg in node.carried().iter().flat_map(|c| &c.args) {
                    let rank = kernel.ty(arg).rank();
                    carried[arg.0 as usize] = Some(AxisInfo::unknown(rank));
                }
            }
            pass(kernel, graph, &mut info, &carried);
        }
    }
    AxisAnalysis { info, assumptions }
}

/// One forward pass in program order: an op with regions sets its regions' arguments when it is
/// reached and computes its results once the ops of its regions are done.
fn pass(kernel: &Kernel, graph: &Graph, info: &mut [AxisInfo], carried: &[Option<AxisInfo>]) {
    let mut pending: Vec<OpId> = Vec::new();
    let finish = |id: OpId, info: &mut [AxisInfo]| {
        let results = transfer(kernel, graph, info, id);
        for (&r, mut fact) in graph.op(id).results.iter().zip(results) {
            fact.nonnegative |= is_unsigned(kernel.ty(r).dtype);
            info[r.0 as usize] = fact;
        }
    };
    for (index, node) in graph.ops.iter().enumerate() {
        while let Some(&open) = pending.last() {
            if graph.op(open).subtree_end > index {
                break;
            }
            pending.pop();
            finish(open, info);
        }
        let id = OpId(index);
        if node.regions.is_empty() {
            finish(id, info);
            continue;
        }
        if let (OpKind::For, Some((args, _))) = (&node.kind, node.regions.first()) {
            if let Some(&iv) = args.first() {
                let lower = info[node.operands[0].0 as usize].divisibility[0];
                let step = info[node.operands[2].0 as usize].divisibility[0];
                let nonnegative = info[node.operands[0].0 as usize].nonnegative
                    && info[node.operands[2].0 as usize].nonnegative;
                info[iv.0 as usize] = AxisInfo {
                    nonnegative,
                    ..AxisInfo::scalar(gcd(lower, step), None)
                };
            }
        }
        for c in node.carried() {
            for &arg in &c.args {
                let init = &info[c.init.0 as usize];
                info[arg.0 as usize] = match &carried[arg.0 as usize] {
                    Some(fact) => fact.meet(init),
                    None => init.clone(),
                };
            }
        }
        pending.push(id);
    }
    while let Some(open) = pending.pop() {
        finish(open, info);
    }
}

/// The integer parameters the kernel's `requires` pins to one value: each condition, or
/// `&&`-operand of one, `p == c` or `c == p` with `p` a runtime parameter (`n`, `x.stride(1)`)
/// and `c` a literal or a const parameter (e.g. `requires = [x.stride(1) == 1]`: the unaligned
/// variant, too, knows the rows are contiguous).
fn required_values(kernel: &Kernel) -> std::collections::HashMap<&str, i128> {
    use crate::parse::{Compare, Condition, Integer};
    fn walk<'k>(
        kernel: &'k Kernel,
        c: &'k Condition,
        out: &mut std::collections::HashMap<&'k str, i128>,
    ) {
        let value = |i: &Integer| match i {
            Integer::Literal(v) => Some(*v),
            Integer::Const(name) => kernel
                .consts
                .iter()
                .find(|(n, _)| n == name)
                .map(|&(_, v)| v),
            _ => None,
        };
        match c {
            Condition::And(a, b) => {
                walk(kernel, a, out);
                walk(kernel, b, out);
            }
            Condition::Compare(Compare::Eq, a, b) => match (&**a, &**b) {
                (Integer::Param { param, .. }, c) | (c, Integer::Param { param, .. }) => {
                    if let Some(v) = value(c) {
                        out.insert(param.as_str(), v);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    let mut out = std::collections::HashMap::new();
    for r in &kernel.requires {
        walk(kernel, &r.condition, &mut out);
    }
    out
}

/// Parameters whose value reaches the address or mask of a load or store of a tile (through
/// any chain of ops, loop-carried values and loop bounds): the candidates for the
/// [`AlignmentPolicy::Aligned`] assumption (inference then keeps only those that widen some
/// access).
pub fn assumed_params(kernel: &Kernel, graph: &Graph, policy: AlignmentPolicy) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    if policy == AlignmentPolicy::Natural {
        return out;
    }
    let mut stack: Vec<ValueId> = Vec::new();
    for node in &graph.ops {
        let tile_access = matches!(node.kind, OpKind::Load { .. } | OpKind::Store { .. })
            && node
                .operands
                .first()
                .is_some_and(|&p| !kernel.ty(p).is_scalar());
        if !tile_access {
            continue;
        }
        match node.kind {
            OpKind::Load { mask, .. } => {
                stack.push(node.operands[0]);
                if mask {
                    stack.push(node.operands[1]);
                }
            }
            OpKind::Store { mask } => {
                stack.push(node.operands[0]);
                if mask {
                    stack.push(node.operands[2]);
                }
            }
            _ => {}
        }
    }
    let mut seen = vec![false; kernel.values.len()];
    while let Some(v) = stack.pop() {
        if std::mem::replace(&mut seen[v.0 as usize], true) {
            continue;
        }
        match graph.def[v.0 as usize] {
            Def::Param(i) => {
                out.insert(i);
            }
            Def::Op(id, pos) => {
                let node = graph.op(id);
                match node.kind {
                    // Loaded, reduced, multiplied-out values carry no facts from parameters.
                    OpKind::Load { .. }
                    | OpKind::Atomic { .. }
                    | OpKind::Reduce { .. }
                    | OpKind::Scan { .. }
                    | OpKind::Dot { .. }
                    | OpKind::Gather { .. } => {}
                    OpKind::For | OpKind::While => {
                        // The loop's result: its initial value and what the body yields.
                        if let Some(c) = node.carried().get(pos) {
                            stack.push(c.init);
                            stack.push(c.yielded);
                        }
                    }
                    OpKind::If => {
                        for (_, yields) in &node.regions {
                            if let Some(&y) = yields.get(pos) {
                                stack.push(y);
                            }
                        }
                    }
                    _ => stack.extend(node.operands.iter().copied()),
                }
            }
            Def::RegionArg(id, region, arg) => {
                let node = graph.op(id);
                if let (OpKind::For, 0) = (&node.kind, arg) {
                    stack.push(node.operands[0]);
                    stack.push(node.operands[2]);
                }
                let arg_value = node.regions[region].0[arg];
                for c in node.carried() {
                    if c.args.contains(&arg_value) {
                        stack.push(c.init);
                        stack.push(c.yielded);
                    }
                }
            }
            Def::Nowhere => {}
        }
    }
    out
}

/// The facts of an op's results from those of its operands.
fn transfer(kernel: &Kernel, graph: &Graph, info: &[AxisInfo], id: OpId) -> Vec<AxisInfo> {
    let node = graph.op(id);
    let of = |k: usize| &info[node.operands[k].0 as usize];
    let result_ty = |k: usize| kernel.ty(node.results[k]);
    let unknown = |k: usize| AxisInfo::unknown(result_ty(k).rank());
    match &node.kind {
        OpKind::Constant(c) => vec![match *c {
            ConstValue::Int(v) => AxisInfo::scalar(pow2_divisor(v), Some(v)),
            ConstValue::Bool(b) => AxisInfo::scalar(1, Some(i128::from(b))),
            ConstValue::Float(_) => AxisInfo::scalar(1, None),
        }],
        OpKind::ProgramId { .. } | OpKind::NumPrograms { .. } => vec![AxisInfo {
            nonnegative: true,
            ..AxisInfo::scalar(1, None)
        }],
        OpKind::Arange { start, end } => {
            let n = (*end - *start).max(1) as u64;
            vec![AxisInfo {
                contiguity: vec![n],
                divisibility: vec![pow2_divisor(i128::from(*start))],
                constancy: vec![1],
                value: if n == 1 {
                    Some(i128::from(*start))
                } else {
                    None
                },
                nonnegative: *start >= 0,
            }]
        }
        OpKind::Splat => {
            let x = of(0);
            let ty = result_ty(0);
            vec![AxisInfo {
                contiguity: vec![1; ty.rank().max(1)],
                divisibility: vec![x.element_divisibility(); ty.rank().max(1)],
                constancy: shape_or_one(ty),
                value: x.value,
                nonnegative: x.nonnegative,
            }]
        }
        OpKind::Binary(b) => vec![binary(*b, of(0), of(1), result_ty(0), None)],
        OpKind::AddPtr => {
            let bytes = pointee_bytes(result_ty(0).dtype);
            vec![binary(
                BinaryOp::Add,
                of(0),
                of(1),
                result_ty(0),
                Some(bytes),
            )]
        }
        OpKind::Compare(c) => vec![compare(*c, of(0), of(1))],
        OpKind::Select => {
            let (c, a, b) = (of(0), of(1), of(2));
            let rank = a.rank();
            let mut out = AxisInfo::unknown(rank);
            for d in 0..rank {
                let run = gcd(c.constancy[d], gcd(a.contiguity[d], b.contiguity[d]));
                out.contiguity[d] = run;
                out.divisibility[d] = gcd(a.divisibility_at(d, run), b.divisibility_at(d, run));
                out.constancy[d] = gcd(c.constancy[d], gcd(a.constancy[d], b.constancy[d]));
            }
            out.value = match (c.value, a.value, b.value) {
                (Some(1), Some(v), _) => Some(v),
                (Some(0), _, Some(v)) => Some(v),
                (_, Some(x), Some(y)) if x == y => Some(x),
                _ => None,
            };
            out.nonnegative = a.nonnegative && b.nonnegative;
            vec![out]
        }
        OpKind::Unary(_) | OpKind::Fma => {
            let mut out = of(0).constancy_only();
            for k in 1..node.operands.len() {
                out = out.meet(&of(k).constancy_only());
            }
            vec![out]
        }
        OpKind::Cast { to } => {
            let x = of(0);
            let from = kernel.ty(node.operands[0]).dtype;
            // Integer casts that keep every value: widening from unsigned, between types of the
            // same signedness, or of nonnegative signed values to unsigned (never narrowing).
            let keeps_value = match from {
                DType::Scalar(f) if f.is_int() && to.is_int() => {
                    let same_sign = f.is_signed_int() == to.is_signed_int();
                    (to.bits() > f.bits() && (same_sign || !f.is_signed_int()))
                        || (to.bits() == f.bits() && same_sign)
                        || (to.bits() >= f.bits() && f.is_signed_int() && x.nonnegative)
                }
                _ => false,
            };
            vec![if keeps_value {
                x.clone()
            } else {
                x.constancy_only()
            }]
        }
        OpKind::ExpandDims { axis } => {
            let x = of(0);
            let rank = result_ty(0).rank();
            let mut out = if kernel.ty(node.operands[0]).rank() == 0 {
                AxisInfo {
                    contiguity: vec![],
                    divisibility: vec![],
                    constancy: vec![],
                    value: x.value,
                    nonnegative: x.nonnegative,
                }
            } else {
                x.clone()
            };
            let at = (*axis).min(out.contiguity.len());
            out.contiguity.insert(at, 1);
            out.divisibility.insert(at, x.element_divisibility());
            out.constancy.insert(at, 1);
            if out.contiguity.len() != rank.max(1) {
                return vec![unknown(0)];
            }
            vec![out]
        }
        OpKind::Broadcast => {
            let x = of(0);
            let from = &kernel.ty(node.operands[0]).shape;
            let to = &result_ty(0).shape;
            if from.len() != to.len() || x.rank() != to.len() {
                return vec![unknown(0)];
            }
            let mut out = x.clone();
            for d in 0..to.len() {
                if from[d] == 1 && to[d] != 1 {
                    out.contiguity[d] = 1;
                    out.constancy[d] = to[d];
                    out.divisibility[d] = x.element_divisibility();
                }
            }
            vec![out]
        }
        OpKind::Trans { perm } => {
            let x = of(0);
            if perm.len() != x.rank() || perm.iter().any(|&p| p >= x.rank()) {
                return vec![unknown(0)];
            }
            let pick = |v: &[u64]| perm.iter().map(|&p| v[p]).collect();
            vec![AxisInfo {
                contiguity: pick(&x.contiguity),
                divisibility: pick(&x.divisibility),
                constancy: pick(&x.constancy),
                value: x.value,
                nonnegative: x.nonnegative,
            }]
        }
        OpKind::Reshape => {
            let x = of(0);
            let shape = &result_ty(0).shape;
            let rank = shape.len().max(1);
            let mut out = AxisInfo::unknown(rank);
            let elem = x.element_divisibility();
            out.divisibility = vec![elem; rank];
            out.value = x.value;
            out.nonnegative = x.nonnegative;
            // Row-major: aligned runs along the operand's last dimension stay aligned runs of
            // the flattened order, so they survive along the result's last dimension.
            let last = x.rank() - 1;
            let new_last = shape.last().copied().unwrap_or(1);
            let run = gcd(x.contiguity[last], new_last);
            out.contiguity[rank - 1] = run;
            out.constancy[rank - 1] = gcd(x.constancy[last], new_last);
            // (Along a dimension of contiguity 1 the divisibility holds for every element.)
            out.divisibility[rank - 1] = x.divisibility_at(last, run);
            vec![out]
        }
        OpKind::Join => {
            let (a, b) = (of(0), of(1));
            let mut out = a.meet(b);
            let elem = gcd(a.element_divisibility(), b.element_divisibility());
            // (`meet` keeps `nonnegative` of both.)
            out.contiguity.push(1);
            out.divisibility.push(elem);
            out.constancy.push(1);
            out.value = None;
            if out.contiguity.len() != result_ty(0).rank() {
                return vec![unknown(0)];
            }
            vec![out]
        }
        OpKind::Split => {
            let x = of(0);
            let mut out = x.clone();
            out.contiguity.pop();
            out.divisibility.pop();
            out.constancy.pop();
            if out.contiguity.is_empty() {
                out = AxisInfo::unknown(0);
            }
            vec![out.clone(), out]
        }
        OpKind::Convert { .. } | OpKind::ConvertLayout { .. } => vec![of(0).clone()],
        OpKind::If => {
            let mut out: Vec<AxisInfo> = (0..node.results.len()).map(unknown).collect();
            if let [(_, then_yields), (_, else_yields)] = node.regions.as_slice() {
                for (k, fact) in out.iter_mut().enumerate() {
                    if let (Some(&t), Some(&e)) = (then_yields.get(k), else_yields.get(k)) {
                        *fact = info[t.0 as usize].meet(&info[e.0 as usize]);
                    }
                }
            }
            out
        }
        OpKind::For | OpKind::While => {
            // The carried values after the loop: what holds of the region arguments.
            let mut out: Vec<AxisInfo> = (0..node.results.len()).map(unknown).collect();
            for (fact, c) in out.iter_mut().zip(node.carried()) {
                if let Some(&a) = c.args.first() {
                    *fact = info[a.0 as usize].meet(&info[c.yielded.0 as usize]);
                }
            }
            out
        }
        OpKind::Load { .. }
        | OpKind::Store { .. }
        | OpKind::Atomic { .. }
        | OpKind::Reduce { .. }
        | OpKind::Scan { .. }
        | OpKind::Dot { .. }
        | OpKind::Gather { .. } => (0..node.results.len()).map(unknown).collect(),
    }
}

fn is_unsigned(dtype: DType) -> bool {
    matches!(dtype, DType::Scalar(s) if s.is_int() && !s.is_signed_int())
}

fn shape_or_one(ty: &TileType) -> Vec<u64> {
    if ty.shape.is_empty() {
        vec![1]
    } else {
        ty.shape.clone()
    }
}

/// Facts of `a op b` for the arithmetic ops; `pointer_bytes` makes it `addptr` (offsets scale
/// by the pointee size).
fn binary(
    op: BinaryOp,
    a: &AxisInfo,
    b: &AxisInfo,
    ty: &TileType,
    pointer_bytes: Option<u64>,
) -> AxisInfo {
    let rank = a.rank();
    if b.rank() != rank {
        return AxisInfo::unknown(ty.rank());
    }
    let is_int = matches!(ty.dtype, DType::Scalar(s) if s.is_int()) || pointer_bytes.is_some();
    let mut out = AxisInfo::unknown(rank);
    let constancy: Vec<u64> = (0..rank)
        .map(|d| gcd(a.constancy[d], b.constancy[d]))
        .collect();
    out.constancy.clone_from(&constancy);
    if !is_int {
        return out;
    }
    out.nonnegative = match op {
        BinaryOp::Add | BinaryOp::Mul | BinaryOp::Shl | BinaryOp::Div => {
            a.nonnegative && b.nonnegative
        }
        BinaryOp::Or | BinaryOp::Xor | BinaryOp::Min => a.nonnegative && b.nonnegative,
        BinaryOp::And | BinaryOp::Max => a.nonnegative || b.nonnegative,
        BinaryOp::Rem | BinaryOp::Shr => a.nonnegative,
        BinaryOp::Sub | BinaryOp::Umulhi => false,
    };
    // Offsets of an addptr count elements of the pointee.
    let scale = pointer_bytes.unwrap_or(1);
    let b_div = |d: usize, run: u64| cap(b.divisibility_at(d, run).saturating_mul(scale));
    let b_value = b.value.map(|v| v.saturating_mul(i128::from(scale)));
    match op {
        BinaryOp::Add | BinaryOp::Sub => {
            for d in 0..rank {
                let run = if op == BinaryOp::Add {
                    gcd(a.contiguity[d], b.constancy[d]).max(gcd(a.constancy[d], b.contiguity[d]))
                } else {
                    gcd(a.contiguity[d], b.constancy[d])
                };
                out.contiguity[d] = run;
                out.divisibility[d] = gcd(a.divisibility_at(d, run), b_div(d, run));
            }
            out.value = match (a.value, b_value) {
                (Some(x), Some(y)) => {
                    if op == BinaryOp::Add {
                        x.checked_add(y)
                    } else {
                        x.checked_sub(y)
                    }
                }
                _ => None,
            };
            if let Some(v) = out.value {
                out.divisibility = vec![pow2_divisor(v); rank];
            }
        }
        BinaryOp::Mul | BinaryOp::Shl => {
            // `x << k` is `x * 2^k`.
            let b_factor = if op == BinaryOp::Shl {
                match b.value {
                    Some(k) if (0..32).contains(&k) => Some(1i128 << k),
                    _ => return out,
                }
            } else {
                b.value
            };
            for d in 0..rank {
                if b_factor == Some(1) {
                    out.contiguity[d] = a.contiguity[d];
                    out.divisibility[d] = a.divisibility[d];
                } else if a.value == Some(1) && op == BinaryOp::Mul {
                    out.contiguity[d] = b.contiguity[d];
                    out.divisibility[d] = b.divisibility[d];
                } else {
                    let da = if a.contiguity[d] > 1 {
                        1
                    } else {
                        a.divisibility[d]
                    };
                    let db = match b_factor {
                        Some(f) if op == BinaryOp::Shl => pow2_divisor(f),
                        _ => {
                            if b.contiguity[d] > 1 {
                                1
                            } else {
                                b.divisibility[d]
                            }
                        }
                    };
                    out.divisibility[d] = cap(da.saturating_mul(db));
                }
            }
            out.value = match (a.value, b_factor) {
                (Some(x), Some(y)) => x.checked_mul(y),
                _ => None,
            };
            if let Some(v) = out.value {
                out.divisibility = vec![pow2_divisor(v); rank];
            }
        }
        BinaryOp::Div => {
            // x / 2^k (x ≥ 0; Rust truncates toward zero): constant on aligned runs of 2^k of
            // a contiguous x.
            if let Some(p) = b
                .value
                .filter(|&p| a.nonnegative && p > 0 && (p as u128).is_power_of_two())
            {
                let p = p as u64;
                for (d, k) in out.constancy.iter_mut().enumerate() {
                    if a.contiguity[d] > 1 {
                        *k = (*k).max(gcd(gcd(a.contiguity[d], p), a.divisibility[d]));
                    }
                }
            }
            if b.value == Some(1) {
                return a.clone();
            }
        }
        BinaryOp::Rem => {
            // x % r with r a multiple of d_r and x ≥ 0 (Rust's remainder takes the dividend's
            // sign): runs of x stay runs inside aligned blocks of gcd(c_x, d_x, d_r, k_r). Any
            // x % r is x - q·r: a multiple of gcd(d_x, d_r).
            for d in 0..rank {
                if a.contiguity[d] > 1 && a.nonnegative {
                    let run = gcd(
                        gcd(a.contiguity[d], b.constancy[d]),
                        gcd(a.divisibility[d], b.divisibility[d]),
                    );
                    out.contiguity[d] = run;
                    out.divisibility[d] = run;
                } else if a.contiguity[d] == 1 {
                    out.divisibility[d] = gcd(a.divisibility[d], b.divisibility_at(d, 1));
                }
            }
        }
        _ => {}
    }
    if let Some(v) = out.value {
        out.nonnegative = v >= 0;
    }
    out
}

/// Facts of a comparison: constant where both sides are, or where a run of consecutive values is
/// compared against a threshold that is a multiple of the run length (so the run lies on one
/// side of it).
fn compare(op: CmpOp, a: &AxisInfo, b: &AxisInfo) -> AxisInfo {
    let rank = a.rank();
    if b.rank() != rank {
        return AxisInfo::unknown(rank);
    }
    let mut out = AxisInfo::unknown(rank);
    for d in 0..rank {
        let mut k = gcd(a.constancy[d], b.constancy[d]);
        // x < n and x >= n split at n; n > x and n <= x likewise.
        let run_vs_threshold = |run: &AxisInfo, threshold: &AxisInfo| {
            gcd(
                gcd(run.contiguity[d], threshold.constancy[d]),
                gcd(run.divisibility[d], threshold.divisibility[d]),
            )
        };
        if a.contiguity[d] > 1 && matches!(op, CmpOp::Lt | CmpOp::Ge) {
            k = k.max(run_vs_threshold(a, b));
        }
        if b.contiguity[d] > 1 && matches!(op, CmpOp::Gt | CmpOp::Le) {
            k = k.max(run_vs_threshold(b, a));
        }
        out.constancy[d] = k;
    }
    if let (Some(x), Some(y)) = (a.value, b.value) {
        out.value = Some(i128::from(op.holds(x.cmp(&y))));
    }
    out
}
