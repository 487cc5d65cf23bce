//! Applies a solution to the kernel: every tile value gets its layout, conversions are inserted
//! where a use needs another layout than its value has, and cheap values are recomputed
//! (rematerialised) in each layout their uses need instead of being converted.
//!
//! - A **grouped** value used in another layout: an `OpKind::Convert` right after its
//!   definition (at the start of the loop body for a loop-carried value), shared by every use
//!   that needs that layout — so a loop-invariant value is converted once, outside the loop. A result an op makes in another layout than its
//!   group's (a load's blocked layout in a group that settled on the mma layout, …): the op
//!   writes a fresh value and a `Convert` right after it turns that into the original value.
//! - A **cheap** value keeps the layout of its first use (in program order); for each other
//!   layout a use needs, its op is copied right after the original, in that layout, its
//!   operands recursively recomputed in the layouts the copy needs (the backward map of each
//!   shape op; scalars are shared).
//! - A **user** value (`convert_layout`'s result, known only to rustc) gets a `Convert` with no
//!   plan right after its definition for each layout its uses need.

use super::anchors::Origin;
use super::graph::{rebuild, Def, OpId};
use super::layouts::{
    broadcast_backward, inverse_perm, join_backward, join_forward, reshape, trans,
};
use super::solve::{Class, Problem};
use crate::ir::{Kernel, LayoutSlot, Op, OpKind, Value, ValueId};
use std::collections::HashMap;
use tessera_layout::plan::conversion_code::ConversionCode;
use tessera_layout::LinearLayout;

/// One inserted conversion.
#[derive(Clone, Debug)]
pub struct ConversionRecord {
    /// The conversion's result (the `Convert` op's operand and layouts are in the kernel).
    pub result: ValueId,
    /// `None` when the source is a user layout.
    pub conversion: Option<ConversionCode>,
    /// The loop weight of where it runs.
    pub weight: u64,
}

/// What the rewrite did.
#[derive(Clone, Debug, Default)]
pub struct RewriteReport {
    pub conversions: Vec<ConversionRecord>,
    /// Copies of cheap ops made to recompute a value in another layout.
    pub rematerialised: usize,
    /// Results an op now writes to a fresh value (in the layout it makes) that a conversion
    /// turns into the original value: `(original, fresh)`.
    pub made_in: Vec<(ValueId, ValueId)>,
}

struct Rewrite<'r, 'a> {
    p: &'r mut Problem<'a>,
    values: Vec<Value>,
    layout: Vec<Option<LinearLayout>>,
    before: HashMap<OpId, Vec<Op>>,
    after: HashMap<OpId, Vec<Op>>,
    operand_repl: HashMap<(OpId, usize), ValueId>,
    result_repl: HashMap<(OpId, usize), ValueId>,
    yield_repl: HashMap<(OpId, usize, usize), ValueId>,
    remat: HashMap<(ValueId, LinearLayout), ValueId>,
    converts: HashMap<(ValueId, LinearLayout), ValueId>,
    region_start: HashMap<(OpId, usize), Vec<Op>>,
    report: RewriteReport,
}

/// Applies the solution of `p` to `kernel` (the kernel `p` was built from).
pub fn apply(p: &mut Problem<'_>, kernel: &mut Kernel) -> Result<RewriteReport, syn::Error> {
    let values = kernel.values.clone();
    let n = values.len();
    let mut rw = Rewrite {
        p,
        values,
        layout: vec![None; n],
        before: HashMap::new(),
        after: HashMap::new(),
        operand_repl: HashMap::new(),
        result_repl: HashMap::new(),
        yield_repl: HashMap::new(),
        remat: HashMap::new(),
        converts: HashMap::new(),
        region_start: HashMap::new(),
        report: RewriteReport::default(),
    };
    for v in 0..n {
        let id = ValueId(v as u32);
        if let Some(l) = rw.p.layout_of(id) {
            rw.layout[v] = Some(*l);
        }
    }
    for i in 0..rw.p.graph.ops.len() {
        rw.op(OpId(i))?;
    }
    // Cheap values nothing uses: Triton's default layout.
    for v in 0..n {
        let id = ValueId(v as u32);
        if rw.p.class[v] == Class::Cheap && rw.layout[v].is_none() {
            let shape = rw.values[v].ty.shape.clone();
            let l = rw.p.default_layout(&shape, id)?;
            rw.materialize(id, &l)?;
        }
    }
    // Slots.
    for (v, value) in rw.values.iter_mut().enumerate() {
        if value.ty.is_scalar() {
            value.layout = LayoutSlot::Scalar;
            continue;
        }
        match (&rw.layout[v], &value.layout) {
            (Some(l), _) => value.layout = LayoutSlot::Inferred(*l),
            (None, LayoutSlot::Fixed(_)) => {}
            (None, _) => {
                return Err(value.loc.error(&format!(
                    "#[tile_kernel] internal error in layout inference: %{v} got no layout"
                )))
            }
        }
    }
    let Rewrite {
        values,
        mut before,
        mut after,
        mut region_start,
        operand_repl,
        result_repl,
        yield_repl,
        report,
        ..
    } = rw;
    kernel.values = values;
    rebuild(kernel, &mut |id, mut op| {
        for (k, operand) in op.operands.iter_mut().enumerate() {
            if let Some(&r) = operand_repl.get(&(id, k)) {
                *operand = r;
            }
        }
        for (k, result) in op.results.iter_mut().enumerate() {
            if let Some(&r) = result_repl.get(&(id, k)) {
                *result = r;
            }
        }
        for (ri, region) in op.regions.iter_mut().enumerate() {
            if let Some(mut first) = region_start.remove(&(id, ri)) {
                first.append(&mut region.ops);
                region.ops = first;
            }
            for (k, y) in region.yields.iter_mut().enumerate() {
                if let Some(&r) = yield_repl.get(&(id, ri, k)) {
                    *y = r;
                }
            }
        }
        let mut out = before.remove(&id).unwrap_or_default();
        out.push(op);
        out.extend(after.remove(&id).unwrap_or_default());
        out
    });
    Ok(report)
}

impl Rewrite<'_, '_> {
    fn class(&self, v: ValueId) -> Class {
        self.p
            .class
            .get(v.0 as usize)
            .copied()
            .unwrap_or(Class::Scalar)
    }

    fn is_tile(&self, v: ValueId) -> bool {
        !self.values[v.0 as usize].ty.is_scalar()
    }

    fn internal(&self, op: OpId, message: &str) -> syn::Error {
        self.p.graph.op(op).loc.error(&format!(
            "#[tile_kernel] internal error in layout inference: {message}"
        ))
    }

    /// The op defining `v` and `v`'s position among its results; an error at `v` (`what` says
    /// which value it is) when no op defines it.
    fn def_of(&self, v: ValueId, what: &str) -> Result<(OpId, usize), syn::Error> {
        self.p
            .graph
            .def_op(v)
            .ok_or_else(|| self.values[v.0 as usize].loc.error(what))
    }

    fn new_value(&mut self, like: ValueId, layout: LinearLayout) -> ValueId {
        let mut v = self.values[like.0 as usize].clone();
        v.layout = LayoutSlot::Inferred(layout);
        v.name = None;
        self.values.push(v);
        self.layout.push(Some(layout));
        ValueId(self.values.len() as u32 - 1)
    }

    fn current(&self, v: ValueId) -> Option<LinearLayout> {
        self.layout[v.0 as usize]
    }

    /// A `Convert` op of `source` (in `from`, or a user layout) to a new value in `to`.
    /// `into`: the value it writes (default: a new one).
    fn convert_op(
        &mut self,
        at: OpId,
        source: ValueId,
        from: Option<LinearLayout>,
        to: LinearLayout,
        into: Option<ValueId>,
    ) -> Result<(Op, ValueId), syn::Error> {
        let conversion = match from {
            Some(f) => {
                let bits = self.values[source.0 as usize].ty.dtype.bits().max(8);
                let c = self
                    .p
                    .plan(&f, &to, bits)
                    .map_err(|e| self.internal(at, &format!("conversion not plannable: {e}")))?;
                Some(c)
            }
            None => None,
        };
        let result = match into {
            Some(r) => r,
            None => self.new_value(source, to),
        };
        let weight = super::solve::loop_weight(self.p.graph.op(at).loop_depth);
        self.report.conversions.push(ConversionRecord {
            result,
            conversion: conversion.clone(),
            weight,
        });
        let op = Op {
            kind: OpKind::Convert {
                conversion: conversion.map(Box::new),
            },
            operands: vec![source],
            results: vec![result],
            regions: Vec::new(),
            loc: self.p.graph.op(at).loc,
        };
        Ok((op, result))
    }

    /// `v` in layout `to`, for a use by op `at`: `v` itself, a conversion before `at`, a
    /// recomputed copy, or a conversion out of a user layout.
    fn value_in(&mut self, at: OpId, v: ValueId, to: &LinearLayout) -> Result<ValueId, syn::Error> {
        match self.class(v) {
            Class::Scalar => Ok(v),
            Class::Cheap => self.materialize(v, to),
            Class::User => self.out_of_user(v, to),
            Class::Group(_) => {
                let from = self
                    .current(v)
                    .ok_or_else(|| self.internal(at, &format!("{v} has no layout")))?;
                if from == *to {
                    return Ok(v);
                }
                if let Some(&c) = self.converts.get(&(v, *to)) {
                    return Ok(c);
                }
                // Right after the definition: once, wherever the uses are.
                let (op, c) = self.convert_op(at, v, Some(from), *to, None)?;
                match self.p.graph.def[v.0 as usize] {
                    Def::Op(def, _) => self.after.entry(def).or_default().push(op),
                    Def::RegionArg(parent, region, _) => self
                        .region_start
                        .entry((parent, region))
                        .or_default()
                        .push(op),
                    Def::Param(_) | Def::Nowhere => self.before.entry(at).or_default().push(op),
                }
                if let Some(rec) = self.report.conversions.last_mut() {
                    rec.weight = self.p.def_weight[v.0 as usize];
                }
                self.converts.insert((v, *to), c);
                Ok(c)
            }
        }
    }

    /// Operand `pos` of op `at` must be in `to`.
    fn require(&mut self, at: OpId, pos: usize, to: &LinearLayout) -> Result<(), syn::Error> {
        let v = self.p.graph.op(at).operands[pos];
        if !self.is_tile(v) {
            return Ok(());
        }
        let r = self.value_in(at, v, to)?;
        if r != v {
            self.operand_repl.insert((at, pos), r);
        }
        Ok(())
    }

    /// Yield `k` of region `region` of op `at` must be in `to`.
    fn require_yield(
        &mut self,
        at: OpId,
        region: usize,
        k: usize,
        to: &LinearLayout,
    ) -> Result<(), syn::Error> {
        let v = self.p.graph.op(at).regions[region].1[k];
        if !self.is_tile(v) {
            return Ok(());
        }
        let r = match self.class(v) {
            Class::Cheap => self.materialize(v, to)?,
            Class::User => self.out_of_user(v, to)?,
            Class::Group(_) if self.current(v) == Some(*to) => v,
            _ => {
                return Err(self.internal(
                    at,
                    &format!("the yielded {v} is not in the layout of the carried value"),
                ))
            }
        };
        if r != v {
            self.yield_repl.insert((at, region, k), r);
        }
        Ok(())
    }

    /// Result `pos` of op `at` is made in `made`; its value keeps its own layout by a
    /// conversion right after the op.
    fn produce(&mut self, at: OpId, pos: usize, made: &LinearLayout) -> Result<(), syn::Error> {
        let r = self.p.graph.op(at).results[pos];
        let Some(target) = self.current(r) else {
            return Err(self.internal(at, &format!("{r} has no layout")));
        };
        if target == *made {
            return Ok(());
        }
        let fresh = self.new_value(r, *made);
        let (op, _) = self.convert_op(at, fresh, Some(*made), target, Some(r))?;
        self.result_repl.insert((at, pos), fresh);
        self.report.made_in.push((r, fresh));
        self.after.entry(at).or_default().push(op);
        Ok(())
    }

    /// A conversion out of user value `v` to `to`, right after its definition.
    fn out_of_user(&mut self, v: ValueId, to: &LinearLayout) -> Result<ValueId, syn::Error> {
        if let Some(&r) = self.remat.get(&(v, *to)) {
            return Ok(r);
        }
        let (def, _) = self.def_of(v, "a user layout value without an op")?;
        let (op, r) = self.convert_op(def, v, None, *to, None)?;
        self.after.entry(def).or_default().push(op);
        self.remat.insert((v, *to), r);
        Ok(r)
    }

    /// The layouts a cheap op's tile operands need for its results to be in `l` (`None` when a
    /// `join` cannot give `l`).
    fn operand_layouts(&mut self, at: OpId, l: &LinearLayout) -> Option<Vec<Option<LinearLayout>>> {
        let node = self.p.graph.op(at).clone();
        let nw = self.p.num_warps;
        let mut out = Vec::new();
        for &o in &node.operands {
            if !self.is_tile(o) {
                out.push(None);
                continue;
            }
            let shape = &self.values[o.0 as usize].ty.shape;
            let need = match &node.kind {
                OpKind::ExpandDims { .. } | OpKind::Reshape => reshape(l, shape, nw)?,
                OpKind::Broadcast => broadcast_backward(l, shape, nw)?,
                OpKind::Trans { perm } => trans(l, &inverse_perm(perm), nw)?,
                OpKind::Join => join_backward(l, nw)?,
                OpKind::Split => join_forward(l, nw)?,
                _ => *l,
            };
            if need != *l {
                self.p.origins.entry(need).or_insert(Origin::Derived {
                    what: format!("{} operand", node.kind.name()),
                    from: Box::new(*l),
                });
            }
            out.push(Some(need));
        }
        Some(out)
    }

    /// Cheap value `v` in layout `l` (see the module docs).
    fn materialize(&mut self, v: ValueId, l: &LinearLayout) -> Result<ValueId, syn::Error> {
        if let Some(&r) = self.remat.get(&(v, *l)) {
            return Ok(r);
        }
        let (def, pos) = self.def_of(v, "a cheap value without an op")?;
        let node = self.p.graph.op(def).clone();
        // A join whose result layout has no register for the new dimension: operands in the
        // default layout, the join in its natural layout, then a conversion.
        let (operand_layouts, made) = match self.operand_layouts(def, l) {
            Some(ls) => (ls, *l),
            None => {
                let shape = self.values[node.operands[0].0 as usize].ty.shape.clone();
                let d = self.p.default_layout(&shape, v)?;
                let made = join_forward(&d, self.p.num_warps)
                    .ok_or_else(|| self.internal(def, "join of the default layout"))?;
                (vec![Some(d); node.operands.len()], made)
            }
        };
        let first = self.current(v).is_none();
        let mut operands = node.operands.clone();
        for (k, need) in operand_layouts.iter().enumerate() {
            if let Some(need) = need {
                operands[k] = match self.class(node.operands[k]) {
                    Class::Scalar => node.operands[k],
                    Class::Cheap => self.materialize(node.operands[k], need)?,
                    _ => return Err(self.internal(def, "a cheap op with a non-cheap operand")),
                };
            }
        }
        if first {
            for &r in &node.results {
                if self.current(r).is_none() {
                    self.layout[r.0 as usize] = Some(*l);
                    self.remat.insert((r, *l), r);
                }
            }
            for (k, &o) in operands.iter().enumerate() {
                if o != node.operands[k] {
                    self.operand_repl.insert((def, k), o);
                }
            }
            if made != *l {
                // The op makes `made`; a conversion right after gives `v` its layout `l`.
                self.produce(def, pos, &made)?;
            }
            return Ok(v);
        }
        // A copy of the op in layout `l`.
        self.report.rematerialised += 1;
        let results: Vec<ValueId> = node
            .results
            .iter()
            .map(|&r| {
                let c = self.new_value(r, made);
                self.remat.insert((r, *l), c);
                c
            })
            .collect();
        let copy = Op {
            kind: node.kind.clone(),
            operands,
            results: results.clone(),
            regions: Vec::new(),
            loc: node.loc,
        };
        self.after.entry(def).or_default().push(copy);
        if made != *l {
            let (op, c) = self.convert_op(def, results[pos], Some(made), *l, None)?;
            self.after.entry(def).or_default().push(op);
            self.remat.insert((v, *l), c);
            return Ok(c);
        }
        Ok(results[pos])
    }

    /// The requirements and results of one op of the original kernel.
    fn op(&mut self, id: OpId) -> Result<(), syn::Error> {
        let node = self.p.graph.op(id).clone();
        let uses = at_op(&self.p.uses, id, |u| (u.op, u.pos, u.layout));
        let produces = at_op(&self.p.produces, id, |a| (a.op, a.pos, a.layout));
        let result_grouped = node
            .results
            .first()
            .is_some_and(|&r| matches!(self.class(r), Class::Group(_)));
        match &node.kind {
            // A scalar access (rank-0 pointers) has no layout: every thread holds its value.
            OpKind::Load { .. } | OpKind::Store { .. } | OpKind::Atomic { .. }
                if !self.is_tile(node.operands[0]) => {}
            OpKind::Load { .. } | OpKind::Store { .. } | OpKind::Atomic { .. } => {
                let m = self
                    .p
                    .memory
                    .iter()
                    .position(|m| m.op == id)
                    .ok_or_else(|| self.internal(id, "a memory op without an anchor"))?;
                let l = self.p.memory_layout(m);
                for (pos, _) in self.p.memory[m].operands.clone() {
                    self.require(id, pos, &l)?;
                }
                if self.p.memory[m].result.is_some() {
                    self.produce(id, 0, &l)?;
                }
            }
            OpKind::Dot { .. } | OpKind::Reduce { .. } => {
                for (pos, l) in &uses {
                    self.require(id, *pos, l)?;
                }
                for (pos, l) in &produces {
                    self.produce(id, *pos, l)?;
                }
                if let OpKind::Reduce { .. } = node.kind {
                    self.edge_at(id)?;
                }
            }
            OpKind::Gather { .. } => {
                let gi = self
                    .p
                    .gathers
                    .iter()
                    .position(|g| g.op == id)
                    .ok_or_else(|| self.internal(id, "gather without options"))?;
                let o = self.p.gathers[gi].options[self.p.gather_choice[gi]].clone();
                self.require(id, 0, &o.src)?;
                self.require(id, 1, &o.index)?;
                self.produce(id, 0, &o.index)?;
            }
            k if super::solve::keeps_layout(k) => {
                if result_grouped {
                    let l = self
                        .current(node.results[0])
                        .ok_or_else(|| self.internal(id, "no layout"))?;
                    for pos in 0..node.operands.len() {
                        self.require(id, pos, &l)?;
                    }
                }
            }
            OpKind::ExpandDims { .. }
            | OpKind::Reshape
            | OpKind::Broadcast
            | OpKind::Trans { .. }
            | OpKind::Join
            | OpKind::Split => {
                if result_grouped && !self.edge_at(id)? {
                    // Operands free (user values): in the layouts the result needs.
                    let l = self
                        .current(node.results[0])
                        .ok_or_else(|| self.internal(id, "no layout"))?;
                    let needs = self.operand_layouts(id, &l).ok_or_else(|| {
                        node.loc.error(
                            "layout inference: this `join` of `convert_layout` results cannot be \
                             laid out; convert its operands to a layout first",
                        )
                    })?;
                    for (pos, need) in needs.iter().enumerate() {
                        if let Some(need) = need {
                            self.require(id, pos, need)?;
                        }
                    }
                }
            }
            OpKind::For | OpKind::While => {
                // A loop's carried tile enters as an operand and the body yields it.
                for c in node.carried() {
                    if !self.is_tile(c.result) {
                        continue;
                    }
                    let l = self
                        .current(c.result)
                        .ok_or_else(|| self.internal(id, "no layout"))?;
                    self.require(id, c.init_pos, &l)?;
                    self.require_yield(id, c.yield_region, c.yield_pos, &l)?;
                }
            }
            OpKind::If => {
                // Each branch yields each result.
                for (k, &r) in node.results.iter().enumerate() {
                    if !self.is_tile(r) {
                        continue;
                    }
                    let l = self
                        .current(r)
                        .ok_or_else(|| self.internal(id, "no layout"))?;
                    for region in 0..node.regions.len() {
                        self.require_yield(id, region, k, &l)?;
                    }
                }
            }
            OpKind::ConvertLayout { .. } => {
                // A user layout converts to another user layout directly (generic code).
                let x = node.operands[0];
                if self.class(x) == Class::Cheap {
                    let shape = self.values[x.0 as usize].ty.shape.clone();
                    let d = self.p.default_layout(&shape, x)?;
                    self.require(id, 0, &d)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Resolves the shape-op edge at `id`, if there is one (`false`: none).
    fn edge_at(&mut self, id: OpId) -> Result<bool, syn::Error> {
        let Some(e) = self.p.edges.iter().position(|e| e.op == id) else {
            return Ok(false);
        };
        let (operand, result) = (self.p.edges[e].operand, self.p.edges[e].result);
        let (Some(lo), Some(lr)) = (self.current(operand), self.current(result)) else {
            return Err(self.internal(id, "a shape op without layouts"));
        };
        let node = self.p.graph.op(id).clone();
        match self.p.edge_resolution(e, &lo, &lr) {
            Some((true, _)) => {
                let b = self
                    .p
                    .backward(e, &lr)
                    .ok_or_else(|| self.internal(id, "no operand layout"))?;
                for pos in 0..node.operands.len() {
                    self.require(id, pos, &b)?;
                }
            }
            resolution => {
                // Free operands of a join take the grouped operand's layout.
                for pos in 0..node.operands.len() {
                    if self.p.is_free(node.operands[pos]) {
                        self.require(id, pos, &lo)?;
                    }
                }
                // The result side converts: the op makes the carried layout.
                if resolution.is_some() {
                    let f = self
                        .p
                        .forward(e, &lo)
                        .ok_or_else(|| self.internal(id, "no result layout"))?;
                    for pos in 0..node.results.len() {
                        self.produce(id, pos, &f)?;
                    }
                }
            }
        }
        Ok(true)
    }
}

/// `(position, layout)` of each anchor of `anchors` on op `id`; `parts` reads an anchor's op,
/// position and layout.
fn at_op<A>(
    anchors: &[A],
    id: OpId,
    parts: impl Fn(&A) -> (OpId, usize, LinearLayout),
) -> Vec<(usize, LinearLayout)> {
    anchors
        .iter()
        .map(parts)
        .filter(|&(op, _, _)| op == id)
        .map(|(_, pos, layout)| (pos, layout))
        .collect()
}
