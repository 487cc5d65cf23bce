//! Propagation and conflict resolution: which layout each tile value gets.
//!
//! **Classes of values.** A tile value is *cheap* when its op is pure arithmetic on cheap tiles
//! and scalars (`arange`, `splat`, constants, elementwise ops, `addptr`, shape ops): such a
//! value is never converted, it is recomputed in whatever layout each use needs
//! (rematerialisation, see `rewrite`). A *user* value is the result of `convert_layout` (a
//! layout only rustc knows): each use converts out of it. Every other tile value (loads,
//! reductions, `dot`, `gather`, loop-carried and `if` results, and arithmetic on those) belongs to
//! a *group*: values joined by elementwise ops, by a loop's initial value / argument / yield /
//! result, or by an `if`'s yields and result. A group has one layout.
//!
//! **Terms of the cost.** Each term is weighted by [`LOOP_WEIGHT`]`^depth` of where it runs (the
//! trip count is unknown; a conversion inside a loop body is assumed to run that many more
//! times): a conversion of an operand runs right after the operand's definition (so a
//! loop-invariant value is converted once, before the loop), a conversion of a result right
//! after its op:
//! - anchors (see `anchors`): an operand of a load, store, `dot` or `gather` that is in another
//!   layout than the op needs costs a conversion; so does a result the op makes in another layout
//!   than its group's;
//! - shape ops between groups (`trans`, `reshape`, `expand_dims`, `broadcast`, `join`, `split`,
//!   `reduce`): free when the result's layout is the operand's transformed (`layouts`), else the
//!   cheaper of converting the operand to the layout the result needs or converting the result;
//! - reductions: the shuffles of the butterfly along lanes, plus a shared-memory round trip and a
//!   barrier when warps share the axis ([`reduce_cost`]);
//! - gathers: the planner's cost of the chosen option (shuffle count, or shared-memory wavefronts
//!   and a barrier).
//!
//! A conversion costs what `tessera_layout::plan::conversion::plan_conversion` charges for its
//! plan (issue slots of the shared-memory pipe per warp: shuffles × 32-bit words, or store and
//! load wavefronts + the barrier; register permutations and no-ops are free) **plus one**, so
//! that no conversion at all beats a free one. Conversions between equal layouts cost nothing.
//!
//! **Search.** Each group's candidates are its anchors' layouts, carried across shape ops both
//! ways (at most [`MAX_CANDIDATES`]), the layout that keeps a reduction's axis inside a warp, or
//! Triton's default blocked layout when nothing else applies; each gather chooses among layouts
//! that keep its axis inside a warp. Starting from every group's first candidate (its first
//! anchor in program order), each group and gather in turn takes the option of least total
//! cost (ties keep the current one), until a whole sweep changes nothing.
//!
//! **Modules.** `build`: classes, groups and the problem's construction; `terms`: the anchors,
//! edges and reductions each op contributes; `candidates`: candidate layouts and gather options;
//! `search`: the costs (conversion plans and costs memoised for the compiler process) and the
//! search.

mod build;
mod candidates;
mod search;
mod terms;

use super::anchors::Origin;
use super::axis::AxisInfo;
use super::graph::{Graph, OpId};
use super::layouts::bases_along;
use crate::ir::{Kernel, OpKind, ValueId};
use std::collections::HashMap;
use tessera_layout::plan::conversion::BARRIER_COST;
use tessera_layout::plan::conversion_code::ConversionCode;
use tessera_layout::plan::gather::GatherPlan;
use tessera_layout::plan::wave::warps_as_wave;
use tessera_layout::plan::Vendor;
use tessera_layout::LinearLayout;

/// Weight of a term per enclosing loop.
pub const LOOP_WEIGHT: u64 = 16;
/// Most candidate layouts kept per group.
pub const MAX_CANDIDATES: usize = 12;
/// The cost of something impossible.
pub const INFEASIBLE: u64 = 1 << 40;

/// What a tile value is to the solver (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Scalar,
    Cheap,
    User,
    Group(usize),
}

/// An operand that must be in `layout` (converted, if at all, where it is defined).
#[derive(Clone, Debug)]
pub struct UseAnchor {
    pub op: OpId,
    pub pos: usize,
    pub value: ValueId,
    pub layout: LinearLayout,
}

/// A result the op makes in `layout`.
#[derive(Clone, Debug)]
pub struct ProduceAnchor {
    pub op: OpId,
    pub pos: usize,
    pub value: ValueId,
    pub layout: LinearLayout,
    pub weight: u64,
}

/// A shape op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    Reshape,
    Broadcast,
    Trans(Vec<usize>),
    Join,
    Split,
    Reduce(usize),
}

/// A shape op whose operand belongs to a group (its results then do too).
#[derive(Clone, Debug)]
pub struct Edge {
    pub op: OpId,
    pub kind: EdgeKind,
    /// The operand that carries the group's layout (`join`: the first non-free one).
    pub operand: ValueId,
    /// The first result.
    pub result: ValueId,
    /// Values converted when the operand side converts (`join`: its grouped operands).
    pub operand_count: u64,
    /// Values converted when the result side converts (`split`: two).
    pub result_count: u64,
    pub operand_shape: Vec<u64>,
    pub result_shape: Vec<u64>,
    pub bits: u32,
    pub weight: u64,
}

/// A reduction, for its cost.
#[derive(Clone, Debug)]
pub struct ReduceTerm {
    pub op: OpId,
    pub operand: ValueId,
    pub axis: usize,
    pub bits: u32,
    pub weight: u64,
    /// The operand's layout when it is free (cheap or user): the axis-in-warp layout.
    pub fixed: Option<LinearLayout>,
}

/// One way to lay out a gather.
#[derive(Clone, Debug)]
pub struct GatherOption {
    pub src: LinearLayout,
    pub index: LinearLayout,
    pub cost: u64,
    /// The plan, of the wave views of `src` and `index` when `lanes` is `Lanes::Wave` (AMD).
    pub plan: GatherPlan,
    pub lanes: tessera_layout::plan::wave::Lanes,
}

/// A gather and its options.
#[derive(Clone, Debug)]
pub struct GatherVar {
    pub op: OpId,
    pub src: ValueId,
    pub index: ValueId,
    pub result: ValueId,
    pub axis: usize,
    pub bits: u32,
    pub weight: u64,
    pub options: Vec<GatherOption>,
}

/// A load or store: its anchor (Triton's coalesced layout) and what decides whether another
/// layout is as good (`access::as_good_as`). All its tile operands and its result share one
/// layout: its data's group layout when that is as good as the anchor, else the anchor.
#[derive(Clone, Debug)]
pub struct MemoryAnchor {
    pub op: OpId,
    pub layout: LinearLayout,
    /// Tile operands with their positions, and the result of a load.
    pub operands: Vec<(usize, ValueId)>,
    pub result: Option<ValueId>,
    /// The loaded or stored values.
    pub data: Option<ValueId>,
    pub ptr_info: AxisInfo,
    pub mask_info: Option<AxisInfo>,
    pub bits: u32,
    pub weight: u64,
}

/// The problem and, after [`Problem::solve`], its solution.
pub struct Problem<'a> {
    pub kernel: &'a Kernel,
    pub graph: &'a Graph,
    pub num_warps: u32,
    pub class: Vec<Class>,
    pub groups: Vec<Vec<ValueId>>,
    pub uses: Vec<UseAnchor>,
    pub produces: Vec<ProduceAnchor>,
    pub edges: Vec<Edge>,
    pub reduces: Vec<ReduceTerm>,
    pub gathers: Vec<GatherVar>,
    pub memory: Vec<MemoryAnchor>,
    /// The reduce operand layout demanded of a free operand, per reduce op.
    pub reduce_fixed: HashMap<OpId, LinearLayout>,
    pub candidates: Vec<Vec<LinearLayout>>,
    /// The loop weight where each value is defined (where a conversion of it runs).
    pub def_weight: Vec<u64>,
    pub origins: HashMap<LinearLayout, Origin>,
    /// Chosen candidate per group, option per gather.
    pub choice: Vec<usize>,
    pub gather_choice: Vec<usize>,
    accepted: HashMap<(usize, LinearLayout), bool>,
    transforms: HashMap<(usize, bool, LinearLayout), Option<LinearLayout>>,
}

/// Bits of one element of a value, as the planners take them (`bool`: a byte).
pub fn element_bits(kernel: &Kernel, v: ValueId) -> u32 {
    kernel.ty(v).dtype.bits().max(8)
}

/// The weight of a term that runs at loop depth `depth` (deeper nests count as four).
pub fn loop_weight(depth: u32) -> u64 {
    LOOP_WEIGHT.pow(depth.min(4))
}

/// The cost of a planned conversion (see the module docs), without the `+ 1`.
pub fn plan_cost(c: &ConversionCode) -> u64 {
    u64::from(c.cost())
}

/// The threads a reduction of a tile in `layout` shuffles among on `vendor`'s GPUs: the layout
/// itself (lanes of a warp), or on AMD its wave view (`plan::wave`: warp bit 0 as lane bit 5,
/// the reduction's butterfly across the wave) when it has one.
pub fn reduction_threads(layout: &LinearLayout, vendor: Vendor) -> LinearLayout {
    match vendor {
        Vendor::Amd => warps_as_wave(layout).unwrap_or(*layout),
        Vendor::Nvidia => *layout,
    }
}

/// Issue slots of a reduction of a tile in `layout` along `axis` on `vendor`'s GPUs (see the
/// module docs): per output register, a shuffle per lane bit along the axis (per 32-bit word;
/// the lanes of [`reduction_threads`]), and when warps share the axis a store and a load of
/// each partial through shared memory and a barrier.
pub fn reduce_cost(layout: &LinearLayout, axis: usize, bits: u32, vendor: Vendor) -> u64 {
    let layout = &reduction_threads(layout, vendor);
    let (registers, lanes, warps) = bases_along(layout, axis);
    let total_registers = layout.in_bits(tessera_layout::Label::Register);
    let out_registers = 1u64 << total_registers.saturating_sub(registers);
    let words = u64::from(bits.div_ceil(32));
    let shuffles = u64::from(lanes) * out_registers * words;
    let cross = if warps > 0 {
        2 * out_registers * words + u64::from(BARRIER_COST)
    } else {
        0
    };
    shuffles + cross
}

pub fn is_elementwise(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Compare(_)
            | OpKind::Fma
            | OpKind::Select
            | OpKind::Cast { .. }
            | OpKind::AddPtr
    )
}

/// Ops whose result has the layout of their tile operands: the elementwise ops and the scans
/// (`cumsum`, `cumprod`, which work in any layout: `tessera_layout::plan::scan`).
pub fn keeps_layout(kind: &OpKind) -> bool {
    is_elementwise(kind) || matches!(kind, OpKind::Scan { .. })
}

/// Ops whose result is cheap when their tile operands are (register-only, free of side effects).
pub(in crate::infer) fn is_cheap_kind(kind: &OpKind) -> bool {
    is_elementwise(kind)
        || matches!(
            kind,
            OpKind::Constant(_)
                | OpKind::Arange { .. }
                | OpKind::Splat
                | OpKind::ExpandDims { .. }
                | OpKind::Broadcast
                | OpKind::Reshape
                | OpKind::Trans { .. }
                | OpKind::Join
                | OpKind::Split
        )
}
