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

use super::access::as_good_as;
use super::anchors::{
    axis_in_warp, blocked_layout, blocked_params, dot_operand_layout, fit, mma_layout, mma_warps,
    order_from_contiguity, own_per_thread, warps_off_axes, AnchorError, Origin,
};
use super::axis::{AxisAnalysis, AxisInfo};
use super::graph::{Def, Graph, OpId};
use super::layouts::{
    bases_along, broadcast_backward, broadcast_forward, inverse_perm, join_backward, join_forward,
    reduce_forward, reshape, trans,
};
use crate::ir::{Kernel, OpKind, ValueId};
use std::collections::HashMap;
use tessera_layout::plan::conversion::BARRIER_COST;
use tessera_layout::plan::conversion_code::{
    conversion_code_cost, plan_conversion_code, ConversionCode,
};
use tessera_layout::plan::gather::{plan_gather, GatherPlan};
use tessera_layout::plan::gather_code::gather_cost;
use tessera_layout::plan::PlanError;
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
    pub plan: GatherPlan,
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
    costs: HashMap<(LinearLayout, LinearLayout, u32), Option<u32>>,
    accepted: HashMap<(usize, LinearLayout), bool>,
    transforms: HashMap<(usize, bool, LinearLayout), Option<LinearLayout>>,
}

/// Bits of one element of a value, as the planners take them (`bool`: a byte).
pub fn element_bits(kernel: &Kernel, v: ValueId) -> u32 {
    kernel.ty(v).dtype.bits().max(8)
}

fn weight(depth: u32) -> u64 {
    LOOP_WEIGHT.pow(depth.min(4))
}

/// The cost of a planned conversion (see the module docs), without the `+ 1`.
pub fn plan_cost(c: &ConversionCode) -> u64 {
    u64::from(c.cost())
}

/// Issue slots of a reduction of a tile in `layout` along `axis` (see the module docs): per
/// output register, a shuffle per lane bit along the axis (per 32-bit word), and when warps
/// share the axis a store and a load of each partial through shared memory and a barrier.
pub fn reduce_cost(layout: &LinearLayout, axis: usize, bits: u32) -> u64 {
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

/// Ops whose result is cheap when their tile operands are.
fn is_cheap_kind(kind: &OpKind) -> bool {
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

struct UnionFind(Vec<usize>);

impl UnionFind {
    fn find(&mut self, x: usize) -> usize {
        let mut r = x;
        while self.0[r] != r {
            r = self.0[r];
        }
        let mut y = x;
        while self.0[y] != r {
            let next = self.0[y];
            self.0[y] = r;
            y = next;
        }
        r
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.0[hi] = lo;
        }
    }
}

impl<'a> Problem<'a> {
    /// Builds the problem: classes, groups, anchors, edges, candidates.
    pub fn new(
        kernel: &'a Kernel,
        graph: &'a Graph,
        axis: &AxisAnalysis,
    ) -> Result<Problem<'a>, syn::Error> {
        let num_warps = kernel.num_warps;
        let n = kernel.values.len();
        let mut class = vec![Class::Scalar; n];
        // Cheap and user values, in program order (operands come first).
        for (c, v) in class.iter_mut().zip(&kernel.values) {
            if !v.ty.is_scalar() {
                *c = Class::Group(usize::MAX);
            }
        }
        for node in &graph.ops {
            for &r in &node.results {
                if class[r.0 as usize] == Class::Scalar {
                    continue;
                }
                if matches!(node.kind, OpKind::ConvertLayout { .. }) {
                    class[r.0 as usize] = Class::User;
                } else if is_cheap_kind(&node.kind)
                    && node
                        .operands
                        .iter()
                        .all(|&o| matches!(class[o.0 as usize], Class::Scalar | Class::Cheap))
                {
                    class[r.0 as usize] = Class::Cheap;
                }
            }
        }
        let grouped = |class: &[Class], v: ValueId| matches!(class[v.0 as usize], Class::Group(_));
        let mut uf = UnionFind((0..n).collect());
        for node in &graph.ops {
            let tile_results: Vec<ValueId> = node
                .results
                .iter()
                .copied()
                .filter(|&r| grouped(&class, r))
                .collect();
            match &node.kind {
                k if is_elementwise(k) || matches!(k, OpKind::Join) => {
                    if let Some(&r) = tile_results.first() {
                        let join = matches!(k, OpKind::Join);
                        for &o in &node.operands {
                            if grouped(&class, o) {
                                if join {
                                    // Join's operands share a layout; the result is across an edge.
                                    uf.union(o.0 as usize, node.operands[0].0 as usize);
                                } else {
                                    uf.union(o.0 as usize, r.0 as usize);
                                }
                            }
                        }
                    }
                }
                OpKind::Split => {
                    if let [a, b] = tile_results.as_slice() {
                        uf.union(a.0 as usize, b.0 as usize);
                    }
                }
                OpKind::For => {
                    if let Some((args, yields)) = node.regions.first() {
                        for (k, &res) in node.results.iter().enumerate() {
                            if !grouped(&class, res) {
                                continue;
                            }
                            let mut members = vec![res, args[k + 1]];
                            members.push(node.operands[3 + k]);
                            members.push(yields[k]);
                            for m in members {
                                if grouped(&class, m) {
                                    uf.union(m.0 as usize, res.0 as usize);
                                }
                            }
                        }
                    }
                }
                OpKind::If => {
                    for (k, &res) in node.results.iter().enumerate() {
                        if !grouped(&class, res) {
                            continue;
                        }
                        for (_, yields) in &node.regions {
                            if let Some(&y) = yields.get(k) {
                                if grouped(&class, y) {
                                    uf.union(y.0 as usize, res.0 as usize);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let mut group_index: HashMap<usize, usize> = HashMap::new();
        let mut groups: Vec<Vec<ValueId>> = Vec::new();
        for (v, c) in class.iter_mut().enumerate() {
            if let Class::Group(_) = *c {
                let root = uf.find(v);
                let g = *group_index.entry(root).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(ValueId(v as u32));
                *c = Class::Group(g);
            }
        }
        let def_weight = graph
            .def
            .iter()
            .map(|d| match *d {
                Def::Op(id, _) => weight(graph.op(id).loop_depth),
                Def::RegionArg(id, _, _) => {
                    let node = graph.op(id);
                    weight(node.loop_depth + u32::from(matches!(node.kind, OpKind::For)))
                }
                Def::Param(_) | Def::Nowhere => 1,
            })
            .collect();
        let mut p = Problem {
            kernel,
            graph,
            num_warps,
            def_weight,
            candidates: vec![Vec::new(); groups.len()],
            choice: vec![0; groups.len()],
            class,
            groups,
            uses: Vec::new(),
            produces: Vec::new(),
            edges: Vec::new(),
            reduces: Vec::new(),
            gathers: Vec::new(),
            memory: Vec::new(),
            reduce_fixed: HashMap::new(),
            origins: HashMap::new(),
            gather_choice: Vec::new(),
            costs: HashMap::new(),
            accepted: HashMap::new(),
            transforms: HashMap::new(),
        };
        p.memory_anchors(axis)?;
        p.other_anchors()?;
        // Candidates: anchors first (program order), carried across shape ops.
        for m in p.memory.clone() {
            for &(_, v) in &m.operands {
                p.add_candidate_of(v, &m.layout);
            }
            if let Some(r) = m.result {
                p.add_candidate_of(r, &m.layout);
            }
        }
        for u in p.uses.clone() {
            p.add_candidate_of(u.value, &u.layout);
        }
        for a in p.produces.clone() {
            p.add_candidate_of(a.value, &a.layout);
        }
        p.propagate_candidates();
        p.gather_options()?;
        for g in p.gathers.clone() {
            for o in &g.options {
                p.add_candidate_of(g.src, &o.src);
                p.add_candidate_of(g.index, &o.index);
                p.add_candidate_of(g.result, &o.index);
            }
        }
        p.propagate_candidates();
        // Reductions: the layout that keeps the axis in a warp is a candidate of the operand.
        for r in p.reduces.clone() {
            if r.fixed.is_none() {
                let shape = kernel.ty(r.operand).shape.clone();
                let origin = axis_in_warp(&shape, r.axis, num_warps);
                if let Ok(l) = blocked_layout(&origin, &shape, num_warps) {
                    p.origins.entry(l).or_insert(origin);
                    p.add_candidate_of(r.operand, &l);
                }
            }
        }
        p.propagate_candidates();
        for g in 0..p.groups.len() {
            if p.candidates[g].is_empty() {
                let v = p.groups[g][0];
                let l = p.default_layout(&kernel.ty(v).shape.clone(), v)?;
                p.candidates[g].push(l);
                p.propagate_candidates();
            }
        }
        p.gather_choice = vec![0; p.gathers.len()];
        Ok(p)
    }

    pub fn is_free(&self, v: ValueId) -> bool {
        matches!(self.class[v.0 as usize], Class::Cheap | Class::User)
    }

    pub fn group_of(&self, v: ValueId) -> Option<usize> {
        match self.class[v.0 as usize] {
            Class::Group(g) => Some(g),
            _ => None,
        }
    }

    /// The chosen layout of a grouped value.
    pub fn layout_of(&self, v: ValueId) -> Option<&LinearLayout> {
        self.group_of(v)
            .and_then(|g| self.candidates[g].get(self.choice[g]))
    }

    fn error_at(&self, op: OpId, message: &str) -> syn::Error {
        self.graph.op(op).loc.error(message)
    }

    /// Triton's default blocked layout (one element per thread, last dimension fastest).
    pub fn default_layout(
        &mut self,
        shape: &[u64],
        v: ValueId,
    ) -> Result<LinearLayout, syn::Error> {
        let order: Vec<usize> = (0..shape.len()).rev().collect();
        let origin = blocked_params(shape, &order, 1, self.num_warps);
        let l = blocked_layout(&origin, shape, self.num_warps).map_err(|e| {
            self.kernel
                .value(v)
                .loc
                .error(&format!("no layout for this tile: {e}"))
        })?;
        self.origins.entry(l).or_insert(origin);
        Ok(l)
    }

    fn add_candidate_of(&mut self, v: ValueId, l: &LinearLayout) {
        if let Some(g) = self.group_of(v) {
            let list = &mut self.candidates[g];
            if !list.contains(l) && list.len() < MAX_CANDIDATES {
                list.push(*l);
            }
        }
    }

    /// Carries candidates across shape ops (forward and backward) until nothing is added.
    fn propagate_candidates(&mut self) {
        loop {
            let mut added = false;
            for e in 0..self.edges.len() {
                let (operand, result) = (self.edges[e].operand, self.edges[e].result);
                let (Some(go), Some(gr)) = (self.group_of(operand), self.group_of(result)) else {
                    continue;
                };
                for c in self.candidates[go].clone() {
                    if let Some(f) = self.forward(e, &c) {
                        let before = self.candidates[gr].len();
                        self.add_candidate_of(result, &f);
                        added |= self.candidates[gr].len() > before;
                    }
                }
                for c in self.candidates[gr].clone() {
                    if let Some(b) = self.backward(e, &c) {
                        let before = self.candidates[go].len();
                        self.add_candidate_of(operand, &b);
                        added |= self.candidates[go].len() > before;
                    }
                }
            }
            if !added {
                break;
            }
        }
    }

    /// The result layout of edge `e` for an operand in `l`.
    pub fn forward(&mut self, e: usize, l: &LinearLayout) -> Option<LinearLayout> {
        if let Some(r) = self.transforms.get(&(e, true, *l)) {
            return *r;
        }
        let edge = &self.edges[e];
        let nw = self.num_warps;
        let (out, what) = match &edge.kind {
            EdgeKind::Reshape => (reshape(l, &edge.result_shape, nw), "reshape".to_string()),
            EdgeKind::Broadcast => (
                broadcast_forward(l, &edge.result_shape, nw),
                "broadcast".to_string(),
            ),
            EdgeKind::Trans(perm) => (trans(l, perm, nw), format!("trans {perm:?}")),
            EdgeKind::Join => (join_forward(l, nw), "join".to_string()),
            EdgeKind::Split => (join_backward(l, nw), "split".to_string()),
            EdgeKind::Reduce(axis) => (reduce_forward(l, *axis, nw), format!("slice dim={axis}")),
        };
        if let Some(o) = out {
            self.origins.entry(o).or_insert(Origin::Derived {
                what,
                from: Box::new(*l),
            });
        }
        self.transforms.insert((e, true, *l), out);
        out
    }

    /// The operand layout of edge `e` that gives a result in `l` for free.
    pub fn backward(&mut self, e: usize, l: &LinearLayout) -> Option<LinearLayout> {
        if let Some(r) = self.transforms.get(&(e, false, *l)) {
            return *r;
        }
        let edge = &self.edges[e];
        let nw = self.num_warps;
        let (out, what) = match &edge.kind {
            EdgeKind::Reshape => (reshape(l, &edge.operand_shape, nw), "reshape".to_string()),
            EdgeKind::Broadcast => (
                broadcast_backward(l, &edge.operand_shape, nw),
                "broadcast operand".to_string(),
            ),
            EdgeKind::Trans(perm) => {
                let inv = inverse_perm(perm);
                (trans(l, &inv, nw), format!("trans {inv:?}"))
            }
            EdgeKind::Join => (join_backward(l, nw), "join operand".to_string()),
            EdgeKind::Split => (join_forward(l, nw), "split operand".to_string()),
            EdgeKind::Reduce(_) => (None, String::new()),
        };
        if let Some(o) = out {
            self.origins.entry(o).or_insert(Origin::Derived {
                what,
                from: Box::new(*l),
            });
        }
        self.transforms.insert((e, false, *l), out);
        out
    }

    // ------------------------------------------------------------------ anchors

    fn memory_anchors(&mut self, axis: &AxisAnalysis) -> Result<(), syn::Error> {
        // Connected components of the data flow (tile values), as Triton's multi-root slice.
        let n = self.kernel.values.len();
        let mut uf = UnionFind((0..n).collect());
        for node in &self.graph.ops {
            let tiles: Vec<usize> = node
                .operands
                .iter()
                .chain(&node.results)
                .filter(|v| !self.kernel.ty(**v).is_scalar())
                .map(|v| v.0 as usize)
                .collect();
            for w in tiles.windows(2) {
                uf.union(w[0], w[1]);
            }
            for (args, yields) in &node.regions {
                for &v in args.iter().chain(yields) {
                    if let Some(&t) = tiles.first() {
                        if !self.kernel.ty(v).is_scalar() {
                            uf.union(t, v.0 as usize);
                        }
                    }
                }
            }
        }
        struct Access {
            op: OpId,
            ptr: ValueId,
            shape: Vec<u64>,
            order: Vec<usize>,
            own: u32,
            is_load: bool,
            component: usize,
        }
        let mut accesses = Vec::new();
        for (i, node) in self.graph.ops.iter().enumerate() {
            let is_load = matches!(node.kind, OpKind::Load { .. });
            if !is_load && !matches!(node.kind, OpKind::Store { .. }) {
                continue;
            }
            let ptr = node.operands[0];
            let ty = self.kernel.ty(ptr);
            if ty.is_scalar() {
                continue;
            }
            let info = &axis.info[ptr.0 as usize];
            let order = order_from_contiguity(&info.contiguity);
            let bits = ty_pointee_bits(ty.dtype);
            let own = own_per_thread(
                info.contiguity[order[0]],
                info.divisibility[order[0]],
                ty.shape[order[0]],
                bits,
            );
            accesses.push(Access {
                op: OpId(i),
                ptr,
                shape: ty.shape.clone(),
                order,
                own,
                is_load,
                component: uf.find(ptr.0 as usize),
            });
        }
        let threads = u64::from(32 * self.num_warps);
        for a in &accesses {
            let mut per_thread = a.own;
            for b in &accesses {
                if b.component == a.component && b.shape == a.shape && b.order == a.order {
                    per_thread = per_thread.max(b.own);
                }
            }
            let numel: u64 = a.shape.iter().product();
            per_thread = per_thread.min((numel / threads).max(1) as u32);
            if !a.is_load {
                per_thread = per_thread.min(a.own);
            }
            let mut origin = blocked_params(&a.shape, &a.order, per_thread, self.num_warps);
            // Reductions of the loaded or stored data: keep their axes inside warps when the
            // shape leaves room for the warps elsewhere.
            let data = if a.is_load {
                self.graph.op(a.op).results.first().copied()
            } else {
                self.graph.op(a.op).operands.get(1).copied()
            };
            let axes = data.map(|v| self.reduce_axes_of(v)).unwrap_or_default();
            if !axes.is_empty() {
                if let Some(better) = warps_off_axes(&origin, &a.shape, &axes, self.num_warps) {
                    origin = better;
                }
            }
            let layout = blocked_layout(&origin, &a.shape, self.num_warps).map_err(|e| {
                self.error_at(a.op, &format!("no layout for this memory access: {e}"))
            })?;
            self.origins.entry(layout).or_insert(origin);
            let node = self.graph.op(a.op);
            let ptr_info = axis.info[a.ptr.0 as usize].clone();
            let mask_position = match node.kind {
                OpKind::Load { mask: true, .. } => Some(1),
                OpKind::Store { mask: true } => Some(2),
                _ => None,
            };
            let mask_info = mask_position.map(|p| axis.info[node.operands[p].0 as usize].clone());
            self.memory.push(MemoryAnchor {
                op: a.op,
                layout,
                operands: node
                    .operands
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(_, o)| !self.kernel.ty(*o).is_scalar())
                    .collect(),
                result: node.results.first().copied(),
                data,
                ptr_info,
                mask_info,
                bits: ty_pointee_bits(self.kernel.ty(a.ptr).dtype),
                weight: weight(node.loop_depth),
            });
        }
        Ok(())
    }

    fn other_anchors(&mut self) -> Result<(), syn::Error> {
        let nw = self.num_warps;
        for i in 0..self.graph.ops.len() {
            let id = OpId(i);
            let node = self.graph.op(id).clone();
            let w = weight(node.loop_depth);
            match &node.kind {
                OpKind::Dot { .. } => {
                    let (a, b) = (node.operands[0], node.operands[1]);
                    let (ta, tb) = (self.kernel.ty(a).clone(), self.kernel.ty(b).clone());
                    let (m, k, n) = (ta.shape[0], ta.shape[1], tb.shape[1]);
                    let in_bits = ta.dtype.bits();
                    let min_k = if in_bits == 8 { 32 } else { 16 };
                    if m < 16 || n < 8 || k < min_k {
                        return Err(self.error_at(
                            id,
                            &format!(
                                "`dot` of [{m}, {k}] × [{k}, {n}] is smaller than one tensor-core \
                                 instruction (mma.sync m16n8k{min_k}): M must be at least 16, N at \
                                 least 8 and K at least {min_k}"
                            ),
                        ));
                    }
                    let warps = mma_warps(m, n, nw);
                    let k_width = 32 / in_bits;
                    let err =
                        |e: AnchorError| self.error_at(id, &format!("no tensor-core layout: {e}"));
                    let acc_layout = mma_layout(&[m, n], &warps, nw).map_err(err)?;
                    let a_layout =
                        dot_operand_layout(0, k_width, &[m, k], &warps, nw).map_err(err)?;
                    let b_layout =
                        dot_operand_layout(1, k_width, &[k, n], &warps, nw).map_err(err)?;
                    self.origins.entry(acc_layout).or_insert(Origin::Mma {
                        warps_per_cta: warps.clone(),
                    });
                    for (op_idx, l) in [(0, a_layout), (1, b_layout)] {
                        self.origins.entry(l).or_insert(Origin::DotOperand {
                            op_idx,
                            k_width,
                            warps_per_cta: warps.clone(),
                        });
                    }
                    for (pos, l) in [(0, a_layout), (1, b_layout), (2, acc_layout)] {
                        self.uses.push(UseAnchor {
                            op: id,
                            pos,
                            value: node.operands[pos],
                            layout: l,
                        });
                    }
                    self.produces.push(ProduceAnchor {
                        op: id,
                        pos: 0,
                        value: node.results[0],
                        layout: acc_layout,
                        weight: w,
                    });
                }
                OpKind::Gather { axis, .. } => {
                    self.gathers.push(GatherVar {
                        op: id,
                        src: node.operands[0],
                        index: node.operands[1],
                        result: node.results[0],
                        axis: *axis,
                        bits: element_bits(self.kernel, node.operands[0]),
                        weight: w,
                        options: Vec::new(),
                    });
                }
                OpKind::Reduce { axis, .. } => {
                    let x = node.operands[0];
                    let bits = element_bits(self.kernel, x);
                    let fixed = if self.is_free(x) {
                        let shape = self.kernel.ty(x).shape.clone();
                        let origin = axis_in_warp(&shape, *axis, nw);
                        let l = blocked_layout(&origin, &shape, nw)
                            .map_err(|e| self.error_at(id, &format!("no layout: {e}")))?;
                        self.origins.entry(l).or_insert(origin);
                        self.uses.push(UseAnchor {
                            op: id,
                            pos: 0,
                            value: x,
                            layout: l,
                        });
                        if let Some(out) = reduce_forward(&l, *axis, nw) {
                            self.origins.entry(out).or_insert(Origin::Derived {
                                what: format!("slice dim={axis}"),
                                from: Box::new(l),
                            });
                            self.produces.push(ProduceAnchor {
                                op: id,
                                pos: 0,
                                value: node.results[0],
                                layout: out,
                                weight: w,
                            });
                        }
                        self.reduce_fixed.insert(id, l);
                        Some(l)
                    } else {
                        let r = node.results[0];
                        if !self.kernel.ty(r).is_scalar() {
                            self.push_edge(id, EdgeKind::Reduce(*axis), x, r, 1, 1, w);
                        }
                        None
                    };
                    self.reduces.push(ReduceTerm {
                        op: id,
                        operand: x,
                        axis: *axis,
                        bits,
                        weight: w,
                        fixed,
                    });
                }
                OpKind::ExpandDims { .. }
                | OpKind::Reshape
                | OpKind::Broadcast
                | OpKind::Trans { .. } => {
                    let (x, r) = (node.operands[0], node.results[0]);
                    if self.group_of(x).is_some() {
                        let kind = match &node.kind {
                            OpKind::Broadcast => EdgeKind::Broadcast,
                            OpKind::Trans { perm } => EdgeKind::Trans(perm.clone()),
                            _ => EdgeKind::Reshape,
                        };
                        self.push_edge(id, kind, x, r, 1, 1, w);
                    }
                }
                OpKind::Join => {
                    let grouped: Vec<ValueId> = node
                        .operands
                        .iter()
                        .copied()
                        .filter(|&o| self.group_of(o).is_some())
                        .collect();
                    if let Some(&x) = grouped.first() {
                        let count = grouped.len() as u64;
                        self.push_edge(id, EdgeKind::Join, x, node.results[0], count, 1, w);
                    }
                }
                OpKind::Split => {
                    let x = node.operands[0];
                    if self.group_of(x).is_some() {
                        self.push_edge(id, EdgeKind::Split, x, node.results[0], 1, 2, w);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The axes along which values of `v`'s group are reduced.
    fn reduce_axes_of(&self, v: ValueId) -> Vec<usize> {
        let Some(g) = self.group_of(v) else {
            return Vec::new();
        };
        let mut axes = Vec::new();
        for node in &self.graph.ops {
            if let OpKind::Reduce { axis, .. } = node.kind {
                if self.group_of(node.operands[0]) == Some(g) && !axes.contains(&axis) {
                    axes.push(axis);
                }
            }
        }
        axes
    }

    #[allow(clippy::too_many_arguments)]
    fn push_edge(
        &mut self,
        op: OpId,
        kind: EdgeKind,
        operand: ValueId,
        result: ValueId,
        operand_count: u64,
        result_count: u64,
        weight: u64,
    ) {
        self.edges.push(Edge {
            op,
            kind,
            operand,
            result,
            operand_count,
            result_count,
            operand_shape: self.kernel.ty(operand).shape.clone(),
            result_shape: self.kernel.ty(result).shape.clone(),
            bits: element_bits(self.kernel, operand),
            weight,
        });
    }

    fn gather_options(&mut self) -> Result<(), syn::Error> {
        let nw = self.num_warps;
        for gi in 0..self.gathers.len() {
            let g = self.gathers[gi].clone();
            let src_shape = self.kernel.ty(g.src).shape.clone();
            let index_shape = self.kernel.ty(g.index).shape.clone();
            let mut pairs: Vec<(LinearLayout, LinearLayout)> = Vec::new();
            // Fresh: the axis in registers and lanes of one warp.
            let origin = axis_in_warp(&index_shape, g.axis, nw);
            let fresh_index = blocked_layout(&origin, &index_shape, nw)
                .map_err(|e| self.error_at(g.op, &format!("no layout for this gather: {e}")))?;
            let fresh_src = blocked_layout(&origin, &src_shape, nw)
                .map_err(|e| self.error_at(g.op, &format!("no layout for this gather: {e}")))?;
            self.origins.entry(fresh_index).or_insert(origin.clone());
            self.origins.entry(fresh_src).or_insert(origin);
            // From the layouts the index (or result) and source would have anyway.
            let mut index_side: Vec<LinearLayout> = Vec::new();
            for v in [g.index, g.result] {
                if let Some(gr) = self.group_of(v) {
                    index_side.extend(self.candidates[gr].iter().copied());
                }
            }
            for gi_layout in index_side {
                if let Some(gs) = fit(&gi_layout, &src_shape, nw) {
                    self.origins.entry(gs).or_insert(Origin::Derived {
                        what: format!("fit to {src_shape:?}"),
                        from: Box::new(gi_layout),
                    });
                    pairs.push((gs, gi_layout));
                }
            }
            if let Some(gs_group) = self.group_of(g.src) {
                for gs in self.candidates[gs_group].clone() {
                    if let Some(gil) = fit(&gs, &index_shape, nw) {
                        self.origins.entry(gil).or_insert(Origin::Derived {
                            what: format!("fit to {index_shape:?}"),
                            from: Box::new(gs),
                        });
                        pairs.push((gs, gil));
                    }
                }
            }
            pairs.push((fresh_src, fresh_index));
            let mut options: Vec<GatherOption> = Vec::new();
            for (src, index) in pairs {
                if options.iter().any(|o| o.src == src && o.index == index) {
                    continue;
                }
                let Ok(plan) = plan_gather(&src, &index, g.axis as u32, g.bits) else {
                    continue;
                };
                options.push(GatherOption {
                    src,
                    index,
                    cost: gather_cost(&plan, &index, g.bits),
                    plan,
                });
            }
            if options.is_empty() {
                return Err(self.error_at(g.op, "no layout could be planned for this gather"));
            }
            self.gathers[gi].options = options;
        }
        Ok(())
    }

    // ------------------------------------------------------------------ costs

    /// The plan of a conversion inserted into the kernel.
    pub fn plan(
        &self,
        src: &LinearLayout,
        dst: &LinearLayout,
        bits: u32,
    ) -> Result<ConversionCode, PlanError> {
        plan_conversion_code(src, dst, bits)
    }

    /// The cost of converting `src` to `dst` (see the module docs), memoised.
    pub fn conversion_cost(&mut self, src: &LinearLayout, dst: &LinearLayout, bits: u32) -> u64 {
        if src == dst {
            return 0;
        }
        let cost = *self
            .costs
            .entry((*src, *dst, bits))
            .or_insert_with(|| conversion_code_cost(src, dst, bits).ok());
        match cost {
            Some(c) => u64::from(c) + 1,
            None => INFEASIBLE,
        }
    }

    /// How edge `e` is resolved for operand layout `lo` and result layout `lr`: `None` when
    /// free, else the cheaper side to convert (`true`: the operand, right after its definition;
    /// `false`: the result, right after the op) and its cost, loop weights included.
    pub fn edge_resolution(
        &mut self,
        e: usize,
        lo: &LinearLayout,
        lr: &LinearLayout,
    ) -> Option<(bool, u64)> {
        let f = self.forward(e, lo);
        let b = self.backward(e, lr);
        if f.as_ref() == Some(lr) || b.as_ref() == Some(lo) {
            return None;
        }
        let (bits, oc, rc, wr, operand) = {
            let edge = &self.edges[e];
            (
                edge.bits,
                edge.operand_count,
                edge.result_count,
                edge.weight,
                edge.operand,
            )
        };
        let wa = self.def_weight[operand.0 as usize];
        let a = b.map(|b| {
            wa.saturating_mul(oc)
                .saturating_mul(self.conversion_cost(lo, &b, bits))
        });
        let r = f.map(|f| {
            wr.saturating_mul(rc)
                .saturating_mul(self.conversion_cost(&f, lr, bits))
        });
        match (a, r) {
            (Some(a), Some(r)) if r < a => Some((false, r)),
            (Some(a), _) => Some((true, a)),
            (None, Some(r)) => Some((false, r)),
            (None, None) => Some((true, INFEASIBLE)),
        }
    }

    fn layout_for(&self, v: ValueId) -> Option<LinearLayout> {
        self.layout_of(v).copied()
    }

    /// The layout of memory op `m` under the current choice (see [`MemoryAnchor`]).
    pub fn memory_layout(&mut self, m: usize) -> LinearLayout {
        let anchor = self.memory[m].layout;
        let Some(candidate) = self.memory[m].data.and_then(|d| self.layout_for(d)) else {
            return anchor;
        };
        if let Some(&ok) = self.accepted.get(&(m, candidate)) {
            return if ok { candidate } else { anchor };
        }
        let mem = &self.memory[m];
        let ok = as_good_as(
            &candidate,
            &anchor,
            &mem.ptr_info,
            mem.mask_info.as_ref(),
            mem.bits,
        );
        self.accepted.insert((m, candidate), ok);
        if ok {
            candidate
        } else {
            anchor
        }
    }

    /// The total cost of the current choice.
    pub fn total(&mut self) -> u64 {
        let mut cost = 0u64;
        for m in 0..self.memory.len() {
            let l = self.memory_layout(m);
            let mem = self.memory[m].clone();
            for &(_, v) in &mem.operands {
                if let Some(from) = self.layout_for(v) {
                    let bits = element_bits(self.kernel, v);
                    let c = self.conversion_cost(&from, &l, bits);
                    cost = cost.saturating_add(self.def_weight[v.0 as usize].saturating_mul(c));
                }
            }
            if let Some(r) = mem.result {
                if let Some(to) = self.layout_for(r) {
                    let bits = element_bits(self.kernel, r);
                    let c = self.conversion_cost(&l, &to, bits);
                    cost = cost.saturating_add(mem.weight.saturating_mul(c));
                }
            }
        }
        for i in 0..self.uses.len() {
            let u = self.uses[i].clone();
            if let Some(l) = self.layout_for(u.value) {
                let bits = element_bits(self.kernel, u.value);
                cost = cost.saturating_add(
                    self.def_weight[u.value.0 as usize]
                        .saturating_mul(self.conversion_cost(&l, &u.layout, bits)),
                );
            }
        }
        for i in 0..self.produces.len() {
            let a = self.produces[i].clone();
            if let Some(l) = self.layout_for(a.value) {
                let bits = element_bits(self.kernel, a.value);
                cost = cost.saturating_add(
                    a.weight
                        .saturating_mul(self.conversion_cost(&a.layout, &l, bits)),
                );
            }
        }
        for e in 0..self.edges.len() {
            let (o, r) = (self.edges[e].operand, self.edges[e].result);
            if let (Some(lo), Some(lr)) = (self.layout_for(o), self.layout_for(r)) {
                if let Some((_, c)) = self.edge_resolution(e, &lo, &lr) {
                    cost = cost.saturating_add(c);
                }
            }
        }
        for r in &self.reduces {
            let l = r.fixed.or_else(|| self.layout_for(r.operand));
            if let Some(l) = l {
                cost =
                    cost.saturating_add(r.weight.saturating_mul(reduce_cost(&l, r.axis, r.bits)));
            }
        }
        for gi in 0..self.gathers.len() {
            let g = self.gathers[gi].clone();
            let o = &g.options[self.gather_choice[gi]];
            let mut c = o.cost;
            for (v, need) in [(g.src, o.src), (g.index, o.index)] {
                if let Some(l) = self.layout_for(v) {
                    let conversion = self.conversion_cost(&l, &need, element_bits(self.kernel, v));
                    // Runs where `v` is defined, not at the gather.
                    let w = self.def_weight[v.0 as usize];
                    cost = cost.saturating_add(w.saturating_mul(conversion));
                }
            }
            if let Some(l) = self.layout_for(g.result) {
                c = c.saturating_add(self.conversion_cost(
                    &o.index,
                    &l,
                    element_bits(self.kernel, g.result),
                ));
            }
            cost = cost.saturating_add(g.weight.saturating_mul(c));
        }
        cost
    }

    /// The search (see the module docs).
    pub fn solve(&mut self) {
        let mut best = self.total();
        for _sweep in 0..32 {
            let mut changed = false;
            for g in 0..self.groups.len() {
                let before = self.choice[g];
                let mut pick = before;
                for c in 0..self.candidates[g].len() {
                    self.choice[g] = c;
                    let t = self.total();
                    if t < best {
                        best = t;
                        pick = c;
                    }
                }
                changed |= pick != before;
                self.choice[g] = pick;
            }
            for gi in 0..self.gathers.len() {
                let mut pick = self.gather_choice[gi];
                let before = pick;
                for c in 0..self.gathers[gi].options.len() {
                    self.gather_choice[gi] = c;
                    let t = self.total();
                    if t < best {
                        best = t;
                        pick = c;
                    }
                }
                changed |= pick != before;
                self.gather_choice[gi] = pick;
            }
            if !changed {
                break;
            }
        }
    }
}

fn ty_pointee_bits(dtype: crate::types::DType) -> u32 {
    match dtype {
        crate::types::DType::Ptr(s) => s.bits(),
        crate::types::DType::Scalar(s) => s.bits(),
    }
}
