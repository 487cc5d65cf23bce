//! Building the problem: classes of values, groups, anchors, edges and first candidates.

use super::{is_cheap_kind, keeps_layout, loop_weight, Class, Problem};
use crate::infer::anchors::{axis_in_warp, blocked_layout};
use crate::infer::axis::AxisAnalysis;
use crate::infer::graph::{Def, Graph, OpId};
use crate::ir::{Kernel, OpKind, ValueId};
use std::collections::HashMap;
use tessera_layout::LinearLayout;

pub(super) struct UnionFind(Vec<usize>);

impl UnionFind {
    /// Every element in a set of its own.
    pub(super) fn new(n: usize) -> UnionFind {
        UnionFind((0..n).collect())
    }
    pub(super) fn find(&mut self, x: usize) -> usize {
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
    pub(super) fn union(&mut self, a: usize, b: usize) {
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
        let mut uf = UnionFind::new(n);
        for node in &graph.ops {
            let tile_results: Vec<ValueId> = node
                .results
                .iter()
                .copied()
                .filter(|&r| grouped(&class, r))
                .collect();
            match &node.kind {
                k if keeps_layout(k) || matches!(k, OpKind::Join) => {
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
                OpKind::For | OpKind::While => {
                    for c in node.carried() {
                        if !grouped(&class, c.result) {
                            continue;
                        }
                        let members = c.args.iter().copied().chain([c.init, c.yielded]);
                        for m in members {
                            if grouped(&class, m) {
                                uf.union(m.0 as usize, c.result.0 as usize);
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
                Def::Op(id, _) => loop_weight(graph.op(id).loop_depth),
                Def::RegionArg(id, _, _) => {
                    let node = graph.op(id);
                    loop_weight(node.loop_depth + u32::from(node.kind.is_loop()))
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

    pub(super) fn error_at(&self, op: OpId, message: &str) -> syn::Error {
        self.graph.op(op).loc.error(message)
    }
}
