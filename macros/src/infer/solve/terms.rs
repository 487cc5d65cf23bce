//! The terms of the cost: memory, use and produce anchors, shape-op edges and reductions.

use super::build::UnionFind;
use super::{
    element_bits, loop_weight, Edge, EdgeKind, GatherVar, MemoryAnchor, Problem, ProduceAnchor,
    ReduceTerm, UseAnchor,
};
use crate::infer::anchors::{
    axis_in_warp, blocked_layout, blocked_params, chained_mma_warps, dot_operand_layout,
    mfma_anchor_layouts, mma_layout, mma_v3_layout, mma_warps, order_from_contiguity,
    own_per_thread, warps_off_axes, AnchorError, Origin,
};
use crate::infer::axis::AxisAnalysis;
use crate::infer::dot::{mfma_choice, wgmma_choice};
use crate::infer::graph::{OpId, Use};
use crate::infer::layouts::reduce_forward;
use crate::ir::{OpKind, ValueId};
use std::collections::{HashMap, HashSet};
use tessera_layout::LinearLayout;

impl Problem<'_> {
    pub(super) fn memory_anchors(&mut self, axis: &AxisAnalysis) -> Result<(), syn::Error> {
        // Connected components of the data flow (tile values), as Triton's multi-root slice.
        let n = self.kernel.values.len();
        let mut uf = UnionFind::new(n);
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
            // An atomic is anchored as a store: each element once, its old values in that layout.
            let is_store = matches!(node.kind, OpKind::Store { .. } | OpKind::Atomic { .. });
            if !is_load && !is_store {
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
                OpKind::Atomic { mask: true, .. } => Some(2),
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
                weight: loop_weight(node.loop_depth),
            });
        }
        Ok(())
    }

    /// The warps of each dot in a chain (see [`chained_mma_warps`]): dots joined by data flow
    /// through ops of one loop depth (result to operand, either way, and through the branches of
    /// an `if` to its result), all taking the warps the
    /// chain's first dot in program order gets, where its accumulator holds an instruction tile
    /// per warp with them. Other dots are absent (the per-dot rule, [`mma_warps`]).
    fn chained_dot_warps(&self) -> HashMap<OpId, Vec<u32>> {
        let dots: Vec<OpId> = (0..self.graph.ops.len())
            .map(OpId)
            .filter(|&id| matches!(self.graph.op(id).kind, OpKind::Dot { .. }))
            .collect();
        let mut chain = UnionFind::new(self.graph.ops.len());
        for &dot in &dots {
            let depth = self.graph.op(dot).loop_depth;
            let mut stack = self.graph.op(dot).results.clone();
            let mut seen = HashSet::new();
            let mut seen_values = HashSet::new();
            while let Some(v) = stack.pop() {
                for u in &self.graph.uses[v.0 as usize] {
                    match *u {
                        Use::Operand(op, _) => {
                            let node = self.graph.op(op);
                            if node.loop_depth != depth
                                || !node.regions.is_empty()
                                || !seen.insert(op)
                            {
                                continue;
                            }
                            if matches!(node.kind, OpKind::Dot { .. }) {
                                chain.union(dot.0, op.0);
                            } else {
                                stack.extend(node.results.iter().copied());
                            }
                        }
                        // A branch's yield of an `if` becomes the `if`'s result (`let s = if
                        // edge { where_(keep, s, -inf) } else { s }` keeps the chain).
                        Use::Yield(op, _, pos) => {
                            let node = self.graph.op(op);
                            if matches!(node.kind, OpKind::If) && node.loop_depth == depth {
                                if let Some(&r) = node.results.get(pos) {
                                    if seen_values.insert(r) {
                                        stack.push(r);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut warps = HashMap::new();
        for &dot in &dots {
            let root = chain.find(dot.0);
            let first = OpId(root);
            if !dots.iter().any(|&d| d != dot && chain.find(d.0) == root) {
                continue;
            }
            let node = self.graph.op(first);
            let (ta, tb) = (
                self.kernel.ty(node.operands[0]),
                self.kernel.ty(node.operands[1]),
            );
            let Some(w) = chained_mma_warps(ta.shape[0], tb.shape[1], self.num_warps) else {
                continue;
            };
            // This dot's accumulator must hold an instruction tile per warp too.
            let this = self.graph.op(dot);
            let m = self.kernel.ty(this.operands[0]).shape[0];
            let n = self.kernel.ty(this.operands[1]).shape[1];
            if m >= 16 * u64::from(w[0]) && n >= 8 * u64::from(w[1]) {
                warps.insert(dot, w);
            }
        }
        warps
    }

    pub(super) fn other_anchors(&mut self) -> Result<(), syn::Error> {
        let nw = self.num_warps;
        let chained = self.chained_dot_warps();
        for i in 0..self.graph.ops.len() {
            let id = OpId(i);
            let node = self.graph.op(id).clone();
            let w = loop_weight(node.loop_depth);
            match &node.kind {
                OpKind::Dot { .. } => {
                    let operands = [node.operands[0], node.operands[1], node.operands[2]];
                    let chain = chained.get(&id).map(Vec::as_slice);
                    let amd =
                        mfma_choice(self.kernel.target, nw, &self.kernel.values, operands, chain);
                    if let Some(choice) = amd {
                        let no_layout = |e: String| {
                            self.error_at(id, &format!("no AMD matrix-core layout: {e}"))
                        };
                        let (instr, waves) = choice.map_err(no_layout)?;
                        let (ta, tb) = (self.kernel.ty(operands[0]), self.kernel.ty(operands[1]));
                        let mnk = [ta.shape[0], tb.shape[1], ta.shape[1]];
                        let layouts = mfma_anchor_layouts(instr, waves, mnk, nw)
                            .map_err(|e| no_layout(e.to_string()))?;
                        for (pos, l) in layouts.into_iter().enumerate() {
                            let op_idx = (pos < 2).then_some(pos as u32);
                            self.origins.entry(l).or_insert(Origin::Mfma {
                                instr,
                                waves,
                                op_idx,
                            });
                            self.use_anchor(id, pos, node.operands[pos], l);
                        }
                        self.produce_anchor(id, 0, node.results[0], layouts[2], w);
                        continue;
                    }
                    let choice =
                        wgmma_choice(self.kernel.target, nw, &self.kernel.values, operands);
                    if let Some(Ok(shape)) = choice {
                        // wgmma: the accumulator in mma v3; the operands go through shared
                        // memory from whatever layout they have (no anchor).
                        let acc_layout = mma_v3_layout(&shape, nw).map_err(|e| {
                            self.error_at(id, &format!("no wgmma accumulator layout: {e}"))
                        })?;
                        self.origins.entry(acc_layout).or_insert(Origin::MmaV3 {
                            warps_per_cta: shape.warps_per_cta().to_vec(),
                            instr_n: shape.instr_n,
                        });
                        self.use_anchor(id, 2, node.operands[2], acc_layout);
                        self.produce_anchor(id, 0, node.results[0], acc_layout, w);
                        continue;
                    }
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
                    let warps = chained
                        .get(&id)
                        .cloned()
                        .unwrap_or_else(|| mma_warps(m, n, nw));
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
                        self.use_anchor(id, pos, node.operands[pos], l);
                    }
                    self.produce_anchor(id, 0, node.results[0], acc_layout, w);
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
                        self.use_anchor(id, 0, x, l);
                        if let Some(out) = reduce_forward(&l, *axis, nw) {
                            self.origins.entry(out).or_insert(Origin::Derived {
                                what: format!("slice dim={axis}"),
                                from: Box::new(l),
                            });
                            self.produce_anchor(id, 0, node.results[0], out, w);
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
    pub(super) fn reduce_axes_of(&self, v: ValueId) -> Vec<usize> {
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

    /// Operand `pos` of `op` (the value `value`) must be in `layout`.
    fn use_anchor(&mut self, op: OpId, pos: usize, value: ValueId, layout: LinearLayout) {
        self.uses.push(UseAnchor {
            op,
            pos,
            value,
            layout,
        });
    }

    /// `op` makes its result `pos` (the value `value`) in `layout`.
    fn produce_anchor(
        &mut self,
        op: OpId,
        pos: usize,
        value: ValueId,
        layout: LinearLayout,
        weight: u64,
    ) {
        self.produces.push(ProduceAnchor {
            op,
            pos,
            value,
            layout,
            weight,
        });
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_edge(
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
}

fn ty_pointee_bits(dtype: crate::types::DType) -> u32 {
    match dtype {
        crate::types::DType::Ptr(s) => s.bits(),
        crate::types::DType::Scalar(s) => s.bits(),
    }
}
