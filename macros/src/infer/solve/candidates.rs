//! Candidate layouts: carried across shape ops both ways, defaults, and the options of each
//! gather.

use super::{EdgeKind, GatherOption, Problem, MAX_CANDIDATES};
use crate::infer::anchors::{axis_in_warp, blocked_layout, blocked_params, fit, Origin};
use crate::infer::layouts::{
    broadcast_backward, broadcast_forward, inverse_perm, join_backward, join_forward,
    reduce_forward, reshape, trans,
};
use crate::ir::ValueId;
use tessera_layout::plan::gather_code::plan_gather_on;
use tessera_layout::LinearLayout;

impl Problem<'_> {
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

    pub(super) fn add_candidate_of(&mut self, v: ValueId, l: &LinearLayout) {
        if let Some(g) = self.group_of(v) {
            let list = &mut self.candidates[g];
            if !list.contains(l) && list.len() < MAX_CANDIDATES {
                list.push(*l);
            }
        }
    }

    /// Carries candidates across shape ops (forward and backward) until nothing is added.
    pub(super) fn propagate_candidates(&mut self) {
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
        self.carry(e, true, l)
    }

    /// The operand layout of edge `e` that gives a result in `l` for free.
    pub fn backward(&mut self, e: usize, l: &LinearLayout) -> Option<LinearLayout> {
        self.carry(e, false, l)
    }

    /// `l` carried across edge `e` (`forward`: from operand to result), memoised, with the
    /// origin of what it gives.
    fn carry(&mut self, e: usize, forward: bool, l: &LinearLayout) -> Option<LinearLayout> {
        if let Some(r) = self.transforms.get(&(e, forward, *l)) {
            return *r;
        }
        let edge = &self.edges[e];
        let nw = self.num_warps;
        let (out, what) = if forward {
            match &edge.kind {
                EdgeKind::Reshape => (reshape(l, &edge.result_shape, nw), "reshape".to_string()),
                EdgeKind::Broadcast => (
                    broadcast_forward(l, &edge.result_shape, nw),
                    "broadcast".to_string(),
                ),
                EdgeKind::Trans(perm) => (trans(l, perm, nw), format!("trans {perm:?}")),
                EdgeKind::Join => (join_forward(l, nw), "join".to_string()),
                EdgeKind::Split => (join_backward(l, nw), "split".to_string()),
                EdgeKind::Reduce(axis) => {
                    (reduce_forward(l, *axis, nw), format!("slice dim={axis}"))
                }
            }
        } else {
            match &edge.kind {
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
            }
        };
        if let Some(o) = out {
            self.origins.entry(o).or_insert(Origin::Derived {
                what,
                from: Box::new(*l),
            });
        }
        self.transforms.insert((e, forward, *l), out);
        out
    }

    pub(super) fn gather_options(&mut self) -> Result<(), syn::Error> {
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
                let vendor = self.kernel.target.vendor();
                let Ok(choice) = plan_gather_on(vendor, &src, &index, g.axis as u32, g.bits) else {
                    continue;
                };
                options.push(GatherOption {
                    src,
                    index,
                    cost: choice.cost,
                    plan: choice.plan,
                    lanes: choice.lanes,
                });
            }
            if options.is_empty() {
                return Err(self.error_at(g.op, "no layout could be planned for this gather"));
            }
            self.gathers[gi].options = options;
        }
        Ok(())
    }
}
