//! The tile IR: one specialisation of one kernel, in SSA form.
//!
//! - A [`Kernel`] owns every [`Value`] in one table, indexed by [`ValueId`]; each value has its
//!   [`TileType`] (shape and dtype), a [`LayoutSlot`] that layout inference fills, the user's name
//!   for it where it has one, and the location of the code that made it.
//! - Code is a tree of [`Region`]s: a region has arguments (the kernel's parameters; a loop's
//!   induction variable and carried values), a list of [`Op`]s, and the values it yields to its
//!   parent op (a loop's next carried values; an `if` branch's results).
//! - An [`Op`] has a kind, operands, results and nested regions (only `For`, `While` and `If`
//!   have regions). The operand order of each kind is documented on [`OpKind`].
//!
//! Everything implicit in the source is explicit here: broadcasting is `Splat`/`ExpandDims`/
//! `Broadcast` ops, literals are `Constant`s of a definite dtype, `dot(a, b)` has a zero
//! accumulator, `x += y` is an ordinary `Binary`, and mutable variables are gone (their values
//! flow through `For`/`If` results and region arguments, as MLIR's `scf` dialect does).
//!
//! After layout inference (`crate::infer::infer_with`), every non-scalar value's slot is
//! [`LayoutSlot::Inferred`] (or `Fixed`, for a `convert_layout` result), and wherever a consumer
//! needs another layout than its operand's producer gave, an [`OpKind::Convert`] sits between
//! them. Facts that are not layouts (the access plan of each load and store, the alignment
//! assumptions the launcher checks) are in the `crate::infer::Inference` that `infer_with`
//! returns.
//!
//! Invariants, when the checker reported no error: every value is defined once, before its uses,
//! in its region or an enclosing one; every shape is a power of two in each dimension and fits
//! the register budget (`types::MAX_TILE_REGISTERS_PER_THREAD`); operand types are exactly what
//! each [`OpKind`] documents (no implicit conversion anywhere).

use crate::diag::Loc;
use crate::types::{Scalar, TileType};
use proc_macro2::Ident;
use std::fmt::{self, Write as _};

/// Index of a value in [`Kernel::values`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// A value: what the checker knows of it, and the layout inference will decide.
#[derive(Clone, Debug)]
pub struct Value {
    pub ty: TileType,
    pub layout: LayoutSlot,
    /// The variable the user bound it to (`let name = …`, a parameter), if any.
    pub name: Option<String>,
    /// The code that produced it.
    pub loc: Loc,
}

/// How a value's elements are spread over registers, lanes and warps. The front end fills only
/// what the user fixed; layout inference replaces every `Unassigned`.
// `Inferred` is large (a `LinearLayout` has fixed capacity so it works in `const fn`); kernels
// have a few hundred values, so it is kept inline rather than boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum LayoutSlot {
    /// A rank-0 value: one copy per thread, no layout.
    Scalar,
    /// Not decided yet.
    Unassigned,
    /// Fixed by the user: the result of `convert_layout(x, PATH)`, where `PATH` names a `const`
    /// `tessera_layout::LinearLayout` (evaluated by rustc, not by the macro).
    Fixed(syn::Path),
    /// Decided by layout inference (`crate::infer::infer_with`): a distributed layout with input
    /// dimensions `register`, `lane` (size 32), `warp` (size `Kernel::num_warps`) — in that
    /// order, each present even if of size 1 — and output dimensions `dim0`, …, `dim{rank-1}`
    /// with exactly the tile's shape. It is surjective; where the tile is smaller than what the
    /// threads cover, some bases are zero (those threads or registers hold copies). Register `r`
    /// of thread `(lane, warp)` holds the element at coordinate `layout(r, lane, warp)`.
    Inferred(tessera_layout::LinearLayout),
}

/// One kernel parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// The matching argument of [`Kernel::body`].
    pub value: ValueId,
    /// The innermost stride of a `Tensor` parameter (`x__stride1` of a `Tensor<T, 2>`): the
    /// aligned variant assumes it is 1 (rows contiguous, Triton's specialisation of integer
    /// arguments equal to 1) instead of a multiple of 16 (`crate::infer::axis`).
    pub unit_stride: bool,
}

/// The GPU generation a body is inferred and lowered for. A kernel with a `dot` is compiled
/// for both NVIDIA ones (`expand` emits the Hopper body under `cfg(target_feature = "sm_90a")`);
/// any other kernel for [`Target::Ampere`], whose body runs on every target, AMD included —
/// unless that body uses an NVIDIA-only instruction a plan for AMD avoids (`ldmatrix`): then the
/// amdgpu entry has a body of its own, inferred for [`Target::Amdgpu`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// sm_80 and every PTX target but sm_90a: `dot` as `mma.sync`.
    Ampere,
    /// sm_90a: `dot` as `wgmma.mma_async` where its shape allows (else `mma.sync`).
    Hopper,
    /// `amdgcn-amd-amdhsa` (gfx942, gfx90a), warps of 32 lanes as half-waves: the Ampere
    /// plans without NVIDIA-only instructions (shared memory read by vector loads, not
    /// `ldmatrix`). A kernel with a `dot` has no such body yet (MFMA is not planned).
    Amdgpu,
}

impl Target {
    /// The target named in explain output.
    pub fn sm(self) -> &'static str {
        match self {
            Target::Ampere => "sm_80",
            Target::Hopper => "sm_90a",
            Target::Amdgpu => "amdgpu",
        }
    }

    /// Bytes of shared memory a block may use on the target (its opt-in maximum; on AMD the
    /// 64 KiB of LDS a workgroup may allocate on gfx90a and gfx942).
    pub fn shared_bytes_limit(self) -> u32 {
        match self {
            Target::Ampere => tessera_layout::plan::pipeline::SHARED_BYTES_LIMIT_SM80,
            Target::Hopper => tessera_layout::plan::pipeline::SHARED_BYTES_LIMIT_SM90,
            Target::Amdgpu => 64 * 1024,
        }
    }

    /// Whose instructions the target's plans may use.
    pub fn vendor(self) -> tessera_layout::plan::Vendor {
        match self {
            Target::Ampere | Target::Hopper => tessera_layout::plan::Vendor::Nvidia,
            Target::Amdgpu => tessera_layout::plan::Vendor::Amd,
        }
    }
}

/// How a dot is computed, as layout inference planned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DotCode {
    /// `mma.sync` on register fragments; `fallback` says why a Hopper body does not use
    /// `wgmma` (`None` on Ampere).
    MmaSync {
        plan: tessera_layout::plan::mma::DotPlan,
        fallback: Option<String>,
    },
    /// `wgmma.mma_async` on operands stored to shared memory.
    Wgmma(Box<tessera_layout::plan::wgmma_dot::WgmmaDotPlan>),
    /// AMD `v_mfma` on the register fragments of a wave (amdgpu bodies).
    Mfma(tessera_layout::plan::mfma::MfmaPlan),
}

/// One specialisation of a kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: Ident,
    pub num_warps: u32,
    /// `num_stages` of the attribute: the pipelining depth of the loops whose loads feed a
    /// `dot` (1: no pipelining; planned by `crate::infer::pipeline`).
    pub num_stages: u32,
    /// `for j in (a..b).num_stages(S)`: the loops whose own depth replaces the attribute's, by
    /// induction variable (the `For` op's first body argument).
    pub loop_stages: Vec<(ValueId, u32)>,
    /// The GPU generation this body is for (set by `expand` per specialisation).
    pub target: Target,
    /// The bodies the attribute's `targets` asks for (both by default; see `expand::prepare`).
    pub targets: Vec<Target>,
    /// The attribute's `requires` conditions, checked by the launcher before a launch.
    pub requires: Vec<crate::parse::Requirement>,
    /// The type parameters' element types in this specialisation, in declaration order.
    pub types: Vec<(String, Scalar)>,
    /// The const parameters' values in this specialisation, in declaration order.
    pub consts: Vec<(String, i128)>,
    /// Runtime parameters in order; `body.args` are their values.
    pub params: Vec<Param>,
    pub values: Vec<Value>,
    pub body: Region,
}

/// A list of ops with arguments and yielded values.
#[derive(Clone, Debug, Default)]
pub struct Region {
    pub args: Vec<ValueId>,
    pub ops: Vec<Op>,
    /// Given back to the parent op: the carried values for the next iteration of a `For`, the
    /// results of an `If`. Empty for the kernel body.
    pub yields: Vec<ValueId>,
}

/// One operation.
#[derive(Clone, Debug)]
pub struct Op {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub results: Vec<ValueId>,
    pub regions: Vec<Region>,
    /// The user's code this op implements (for an implicit broadcast: the expression that needed it).
    pub loc: Loc,
}

/// A constant's value (its dtype is the result's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Int(i128),
    Float(f64),
    Bool(bool),
}

/// Elementwise operations of one operand (operand and result have the same type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (signed integers, floats).
    Neg,
    /// `!x`: logical not on bool, bitwise not on integers.
    Not,
    /// e^x, 2^x, ln x, log₂ x, √x, 1/√x (floats).
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    Rsqrt,
    /// tanh x, erf x, sin x, cos x, 1 / (1 + e^-x) (floats).
    Tanh,
    Erf,
    Sin,
    Cos,
    Sigmoid,
    /// |x| (signed integers, floats; identity on unsigned).
    Abs,
}

/// Elementwise operations of two operands of the same type, giving that type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Integer division truncates toward zero (as Rust's `/`).
    Div,
    /// Remainder with the sign of the dividend (as Rust's `%`), also on floats.
    Rem,
    /// Bitwise on integers, logical on bool.
    And,
    Or,
    Xor,
    /// Shifts (integers).
    Shl,
    /// Arithmetic on signed, logical on unsigned integers.
    Shr,
    /// Elementwise maximum / minimum (floats: NaN-propagating as PTX `max.NaN`).
    Max,
    Min,
    /// The high 32 bits of the 64-bit product, the bits taken as unsigned (`i32`, `u32`).
    Umulhi,
}

/// Elementwise comparisons: two operands of one type, a `bool` result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
}

impl CmpOp {
    /// The source operator.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
        }
    }

    /// Whether the comparison holds for operands ordered `o` (left against right).
    pub fn holds(self, o: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Lt => o == Less,
            CmpOp::Le => o != Greater,
            CmpOp::Eq => o == Equal,
            CmpOp::Ne => o != Equal,
            CmpOp::Ge => o != Less,
            CmpOp::Gt => o == Greater,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    Sum,
    Max,
    Min,
    /// Index (`i32`) of the largest element along the axis; the first one on ties.
    Argmax,
    Argmin,
}

/// The combining operation of a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `cumsum`.
    Sum,
    /// `cumprod`.
    Prod,
}

/// The read-modify-write of an atomic (`atomic_add`, …, `atomic_cas`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Max,
    Min,
    And,
    Or,
    Xor,
    Xchg,
    /// Compare-and-swap: stores the value where memory equals the comparand.
    Cas,
}

impl AtomicOp {
    /// The name users write (`atomic_add`, …).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Xchg => "atomic_xchg",
            AtomicOp::Cas => "atomic_cas",
        }
    }
}

/// A `pub enum` of keywords, and its `ALL`: each variant with its spelling in a kernel.
macro_rules! spelled_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $spelling:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),*
        }

        impl $name {
            pub const ALL: [(&'static str, $name); [$($spelling),*].len()] =
                [$(($spelling, $name::$variant)),*];
        }
    };
}

spelled_enum! {
    /// The memory order of an atomic (Triton's `sem`, PTX `.sem`).
    MemSem {
        Relaxed = "relaxed",
        Acquire = "acquire",
        Release = "release",
        AcqRel = "acq_rel",
    }
}

spelled_enum! {
    /// The scope of an atomic (Triton's `scope`, PTX `.scope`).
    MemScope {
        Cta = "cta",
        Gpu = "gpu",
        Sys = "sys",
    }
}

/// What an op computes. `operands: […]` lists [`Op::operands`] in order; `results: […]` lists
/// [`Op::results`]. "`T[S]`" means dtype `T` and shape `S`.
#[derive(Clone, Debug)]
pub enum OpKind {
    /// operands: []; results: [a rank-0 constant].
    Constant(ConstValue),
    /// The program's index along grid axis 0, 1 or 2. operands: []; results: [i32].
    ProgramId { axis: u8 },
    /// The grid's size along an axis. operands: []; results: [i32].
    NumPrograms { axis: u8 },
    /// `[start, start + 1, …, end - 1]`. operands: []; results: [i32[end - start]].
    Arange { start: i64, end: i64 },
    /// A rank-0 value copied to every element. operands: [x: T]; results: [T[S]].
    Splat,
    /// Inserts a dimension of size 1 at `axis`. operands: [T[S]]; results: [T[S']].
    ExpandDims { axis: usize },
    /// Repeats size-1 dimensions to the result's shape (same rank). operands: [T[S]]; results: [T[S']].
    Broadcast,
    /// Same elements in row-major order, another shape. operands: [T[S]]; results: [T[S']].
    Reshape,
    /// Result dimension `i` is operand dimension `perm[i]`. operands: [T[S]]; results: [T[S']].
    Trans { perm: Vec<usize> },
    /// Stacks two tiles along a new last dimension of size 2. operands: [T[S], T[S]]; results: [T[S, 2]].
    Join,
    /// Inverse of `Join`. operands: [T[S, 2]]; results: [T[S], T[S]].
    Split,
    /// operands: [x]; results: [same type].
    Unary(UnaryOp),
    /// operands: [a, b] of one type; results: [that type].
    Binary(BinaryOp),
    /// operands: [a, b] of one type; results: [bool tile of their shape].
    Compare(CmpOp),
    /// `a * b + c` rounded once (floats). operands: [a, b, c]; results: [same type].
    Fma,
    /// `if cond { a } else { b }` per element. operands: [bool[S], T[S], T[S]]; results: [T[S]].
    Select,
    /// Converts the element type (Rust `as` semantics: float→int saturates, NaN→0).
    /// operands: [A[S]]; results: [B[S]].
    Cast { to: Scalar },
    /// Pointer plus element offset. operands: [Ptr<T>[S], int[S]]; results: [Ptr<T>[S]].
    AddPtr,
    /// Reads global memory. operands: [Ptr<T>[S], (mask: bool[S] if `mask`), (other: T[S] if
    /// `other`), (the origin: `rank` i32 scalars if `block`)]; results: [T[S]]; masked-off
    /// elements read `other` (unspecified without it). `block = (p, rank)`: the load of a
    /// `load_block` of the tensor of `rank` whose pointer is kernel parameter `p`, its first
    /// element at the origin (what a TMA copy of it needs; the pointers and mask are that
    /// block's).
    Load {
        mask: bool,
        other: bool,
        block: Option<(usize, usize)>,
    },
    /// Writes global memory. operands: [Ptr<T>[S], value: T[S], (mask: bool[S] if `mask`)];
    /// results: [].
    Store { mask: bool },
    /// An atomic read-modify-write of global memory, each element once (duplicates in the
    /// layout skip it and receive the owner's old value). operands: [Ptr<T>[S], value: T[S],
    /// (mask: bool[S] if `mask`)], for `Cas` [Ptr<T>[S], compare: T[S], value: T[S]];
    /// results: [the old values T[S]] (masked-off elements: zero).
    Atomic {
        op: AtomicOp,
        mask: bool,
        sem: MemSem,
        scope: MemScope,
    },
    /// Reduces dimension `axis` away. operands: [T[S]]; results: [T[S without axis]]
    /// (i32 for `Argmax`/`Argmin`).
    Reduce { kind: ReduceKind, axis: usize },
    /// The inclusive prefix sum or product along `axis` (from the end of the axis when
    /// `reverse`). operands: [T[S]]; results: [T[S]], in the operand's layout. `plan` is set by
    /// layout inference (`tessera_layout::plan::scan`), which the lowering renders.
    Scan {
        kind: ScanKind,
        axis: usize,
        reverse: bool,
        plan: Option<Box<tessera_layout::plan::scan::ScanPlan>>,
    },
    /// `a × b + acc`. operands: [A[M, K], A[M, K] × A[K, N], acc: C[M, N]]; results: [C[M, N]],
    /// A ∈ {f16, bf16, f8e4m3, f8e5m2} with C = f32, or A = i8 with C = i32.
    /// `plan` is set by layout inference: the `mma.sync` instructions on the operands' layouts
    /// (`tessera_layout::plan::mma`) or, on [`Target::Hopper`], the `wgmma` plan
    /// (`tessera_layout::plan::wgmma_dot`), which the lowering renders.
    Dot { plan: Option<Box<DotCode>> },
    /// `result[i] = src[i with i[axis] replaced by index[i]]`.
    /// operands: [src: T[S], index: int[S']] (S' = S except at axis); results: [T[S']].
    /// `code` is set by layout inference: the plan it chose for the operands' layouts
    /// (`tessera_layout::plan::gather_code`), which the lowering renders.
    Gather {
        axis: usize,
        code: Option<Box<tessera_layout::plan::gather_code::GatherCode>>,
    },
    /// Same values, in the user's layout (see [`LayoutSlot::Fixed`]). operands: [T[S]]; results: [T[S]].
    ConvertLayout { layout: syn::Path },
    /// A layout conversion inserted by layout inference: the same values, moved from the
    /// operand's layout to the result's. Between two [`LayoutSlot::Inferred`] layouts,
    /// `conversion` is `Some(plan)`: no-op, register permutation, warp shuffles or swizzled
    /// shared memory, planned by `tessera_layout::plan::conversion::plan_conversion(operand
    /// layout, result layout, bits of T)` and resolved to steps by
    /// `tessera_layout::plan::conversion_code::plan_conversion_code` (the costs it chose on
    /// included).
    /// It is `None` exactly when the operand is a [`LayoutSlot::Fixed`] user layout (the result
    /// of `convert_layout`), which only rustc knows, so nothing could be planned.
    /// operands: [T[S]]; results: [T[S]].
    Convert {
        conversion: Option<Box<tessera_layout::plan::conversion_code::ConversionCode>>,
    },
    /// `for iv in (lower..upper).step_by(step)`. operands: [lower, upper, step: I (an integer
    /// scalar type), init₀, init₁, …]; regions: [body with args [iv: I, carried₀, …] yielding the
    /// next carried values]; results: [the carried values after the last iteration].
    For,
    /// `while cond { … }`. operands: [init₀, init₁, …]; regions: [the condition with args
    /// [carried₀, …] yielding [cond: bool scalar], the body with args [carried₀, …] yielding the
    /// next carried values]; results: [the carried values when the condition is false]. Each
    /// iteration evaluates the condition on the carried values, then (while it holds) the body.
    While,
    /// operands: [cond: bool scalar]; regions: [then, else], each yielding the results;
    /// results: [values of the taken branch].
    If,
}

impl Kernel {
    /// Whether the kernel is built for sm_90a alone (`targets = [sm_90a]`): a Hopper body only,
    /// an entry of the sm_90a PTX only, `KernelTargets::Sm90aOnly` on its handle.
    pub fn sm90a_only(&self) -> bool {
        self.targets == [Target::Hopper]
    }

    /// The pipelining depth of the `for` op `op`: its own `num_stages(S)`, else the
    /// attribute's.
    pub fn loop_stages_of(&self, op: &Op) -> u32 {
        let iv = op.regions.first().and_then(|body| body.args.first());
        self.loop_stages
            .iter()
            .find(|(v, _)| Some(v) == iv)
            .map_or(self.num_stages, |&(_, s)| s)
    }

    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id.0 as usize]
    }

    pub fn ty(&self, id: ValueId) -> &TileType {
        &self.value(id).ty
    }

    /// Calls `f` on every op, in program order, parents before the ops of their regions.
    pub fn walk(&self, f: &mut impl FnMut(&Op)) {
        self.body.walk(f);
    }
}

impl Region {
    /// Whether an op of this region itself (not of a nested one) is a `dot`: a `for` loop with
    /// such a body is what software pipelining plans (`crate::infer::pipeline`).
    pub fn computes_dot(&self) -> bool {
        self.ops
            .iter()
            .any(|o| matches!(o.kind, OpKind::Dot { .. }))
    }

    /// Calls `f` on every op of this region and its nested regions, in program order.
    pub fn walk(&self, f: &mut impl FnMut(&Op)) {
        for op in &self.ops {
            f(op);
            for r in &op.regions {
                r.walk(f);
            }
        }
    }
}

impl OpKind {
    /// `for` and `while`: ops whose regions run repeatedly.
    pub fn is_loop(&self) -> bool {
        matches!(self, OpKind::For | OpKind::While)
    }

    /// What listings print between two regions of the op: `while (…) { cond } do (…) { body }`,
    /// `if … { then } else { else }`.
    pub fn region_separator(&self) -> &'static str {
        match self {
            OpKind::While => " do",
            _ => " else",
        }
    }

    /// The op's name in the printed IR.
    pub fn name(&self) -> String {
        match self {
            OpKind::Constant(_) => "constant".into(),
            OpKind::ProgramId { .. } => "program_id".into(),
            OpKind::NumPrograms { .. } => "num_programs".into(),
            OpKind::Arange { .. } => "arange".into(),
            OpKind::Splat => "splat".into(),
            OpKind::ExpandDims { .. } => "expand_dims".into(),
            OpKind::Broadcast => "broadcast".into(),
            OpKind::Reshape => "reshape".into(),
            OpKind::Trans { .. } => "trans".into(),
            OpKind::Join => "join".into(),
            OpKind::Split => "split".into(),
            OpKind::Unary(u) => format!("{u:?}").to_lowercase(),
            OpKind::Binary(b) => format!("{b:?}").to_lowercase(),
            OpKind::Compare(c) => format!("cmp.{}", format!("{c:?}").to_lowercase()),
            OpKind::Fma => "fma".into(),
            OpKind::Select => "select".into(),
            OpKind::Cast { .. } => "cast".into(),
            OpKind::AddPtr => "addptr".into(),
            OpKind::Load { .. } => "load".into(),
            OpKind::Store { .. } => "store".into(),
            OpKind::Atomic { op, .. } => op.name().into(),
            OpKind::Reduce { kind, .. } => format!("reduce.{}", format!("{kind:?}").to_lowercase()),
            OpKind::Scan { kind, .. } => format!("scan.{}", format!("{kind:?}").to_lowercase()),
            OpKind::Dot { .. } => "dot".into(),
            OpKind::Gather { .. } => "gather".into(),
            OpKind::ConvertLayout { .. } => "convert_layout".into(),
            OpKind::Convert { .. } => "convert".into(),
            OpKind::For => "for".into(),
            OpKind::While => "while".into(),
            OpKind::If => "if".into(),
        }
    }

    /// The op's attributes in the printed IR (` axis = 1`, ` 0..128`, …).
    pub(crate) fn attributes(&self) -> String {
        match self {
            OpKind::Constant(ConstValue::Int(v)) => format!(" {v}"),
            OpKind::Constant(ConstValue::Float(v)) => format!(" {v:?}"),
            OpKind::Constant(ConstValue::Bool(v)) => format!(" {v}"),
            OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => format!(" axis={axis}"),
            OpKind::Arange { start, end } => format!(" {start}..{end}"),
            OpKind::ExpandDims { axis }
            | OpKind::Gather { axis, .. }
            | OpKind::Reduce { axis, .. } => {
                format!(" axis={axis}")
            }
            OpKind::Scan { axis, reverse, .. } => {
                format!(" axis={axis}{}", if *reverse { " reverse" } else { "" })
            }
            OpKind::Trans { perm } => format!(" perm={perm:?}"),
            OpKind::Cast { to } => format!(" to {to}"),
            OpKind::Load { mask, other, block } => {
                format!(
                    "{}{}{}",
                    if *mask { " masked" } else { "" },
                    if *other { "+other" } else { "" },
                    block.map_or(String::new(), |(p, r)| format!(
                        " block of param {p} (rank {r})"
                    ))
                )
            }
            OpKind::Store { mask } => (if *mask { " masked" } else { "" }).into(),
            OpKind::Atomic {
                mask, sem, scope, ..
            } => format!("{} {sem:?} {scope:?}", if *mask { " masked" } else { "" }),
            OpKind::ConvertLayout { layout } => {
                let segments: Vec<String> = layout
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                format!(" {}", segments.join("::"))
            }
            OpKind::Convert {
                conversion: Some(c),
            } => format!(" {}", c.plan.kind()),
            OpKind::Convert { conversion: None } => " from user layout".into(),
            _ => String::new(),
        }
    }
}

impl fmt::Display for Kernel {
    /// A readable listing, e.g. `%4: f32[128] = exp %3` per op, regions indented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel {}[num_warps={}", self.name, self.num_warps)?;
        for (name, v) in &self.consts {
            write!(f, ", {name}={v}")?;
        }
        write!(f, "](")?;
        for (i, p) in self.params.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{}: {} {}", p.value, self.ty(p.value), p.name)?;
        }
        writeln!(f, ") {{")?;
        let mut out = String::new();
        self.print_region(&mut out, &self.body, 1)?;
        f.write_str(&out)?;
        writeln!(f, "}}")
    }
}

impl Kernel {
    fn print_region(&self, out: &mut String, region: &Region, depth: usize) -> fmt::Result {
        let indent = "  ".repeat(depth);
        for op in &region.ops {
            out.push_str(&indent);
            let results: Vec<String> = op
                .results
                .iter()
                .map(|&r| format!("{r}: {}", self.ty(r)))
                .collect();
            if !results.is_empty() {
                write!(out, "{} = ", results.join(", "))?;
            }
            out.push_str(&op.kind.name());
            out.push_str(&op.kind.attributes());
            let operands: Vec<String> = op.operands.iter().map(ValueId::to_string).collect();
            if !operands.is_empty() {
                write!(out, " {}", operands.join(", "))?;
            }
            for (i, r) in op.regions.iter().enumerate() {
                let args: Vec<String> = r
                    .args
                    .iter()
                    .map(|&a| format!("{a}: {}", self.ty(a)))
                    .collect();
                if i > 0 {
                    out.push_str(op.kind.region_separator());
                }
                if args.is_empty() {
                    writeln!(out, " {{")?;
                } else {
                    writeln!(out, " ({}) {{", args.join(", "))?;
                }
                self.print_region(out, r, depth + 1)?;
                if !r.yields.is_empty() {
                    let ys: Vec<String> = r.yields.iter().map(ValueId::to_string).collect();
                    writeln!(out, "{indent}  yield {}", ys.join(", "))?;
                }
                write!(out, "{indent}}}")?;
            }
            if let Some(name) = op
                .results
                .first()
                .and_then(|&r| self.value(r).name.as_deref())
            {
                write!(out, "  // {name}")?;
            }
            out.push('\n');
        }
        Ok(())
    }
}
