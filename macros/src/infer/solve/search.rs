//! Costs of the current choice and the search over candidates.

use super::{element_bits, reduce_cost, Problem, INFEASIBLE};
use crate::infer::access::as_good_as;
use crate::ir::ValueId;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use tessera_layout::plan::conversion_code::{
    conversion_code_cost, plan_conversion_code, ConversionCode,
};
use tessera_layout::plan::{PlanError, Vendor};
use tessera_layout::LinearLayout;

/// A conversion: source layout, destination layout, element bits.
type ConversionKey = (LinearLayout, LinearLayout, u32);

/// Conversion plans, which depend on their [`ConversionKey`] and the [`Vendor`] alone, kept for
/// the compiler process: it expands every kernel of a crate, and a kernel's specialisations and
/// variants (element types, consts, aligned and unaligned, sm_80 and sm_90a) plan the same
/// conversions again (planning a shared-memory conversion searches its swizzles).
type PlanKey = (ConversionKey, Vendor);
static PLANS: LazyLock<Mutex<HashMap<PlanKey, Result<ConversionCode, PlanError>>>> =
    LazyLock::new(Default::default);

/// The costs of [`conversion_code_cost`] (per vendor: the bank phases differ), kept as
/// [`PLANS`] are.
static COSTS: LazyLock<Mutex<HashMap<PlanKey, Option<u32>>>> = LazyLock::new(Default::default);

/// `compute()` for `key`, from `memo` when it was computed before. The lock is not held while
/// computing (a panic there cannot poison it; a poisoned memo is read through).
fn memoised<K: std::hash::Hash + Eq, V: Clone>(
    memo: &Mutex<HashMap<K, V>>,
    key: K,
    compute: impl FnOnce() -> V,
) -> V {
    let lock = || memo.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(value) = lock().get(&key) {
        return value.clone();
    }
    let value = compute();
    lock().insert(key, value.clone());
    value
}

impl Problem<'_> {
    /// The plan of a conversion inserted into the kernel, for its target's vendor.
    pub fn plan(
        &self,
        src: &LinearLayout,
        dst: &LinearLayout,
        bits: u32,
    ) -> Result<ConversionCode, PlanError> {
        let vendor = self.kernel.target.vendor();
        memoised(&PLANS, ((*src, *dst, bits), vendor), || {
            plan_conversion_code(src, dst, bits, vendor)
        })
    }

    /// The cost of converting `src` to `dst` (see the module docs), memoised.
    pub fn conversion_cost(&mut self, src: &LinearLayout, dst: &LinearLayout, bits: u32) -> u64 {
        if src == dst {
            return 0;
        }
        let vendor = self.kernel.target.vendor();
        let cost = memoised(&COSTS, ((*src, *dst, bits), vendor), || {
            conversion_code_cost(src, dst, bits, vendor).ok()
        });
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

    pub(super) fn layout_for(&self, v: ValueId) -> Option<LinearLayout> {
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
                let vendor = self.kernel.target.vendor();
                let slots = reduce_cost(&l, r.axis, r.bits, vendor);
                cost = cost.saturating_add(r.weight.saturating_mul(slots));
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
            for var in 0..self.groups.len() + self.gathers.len() {
                changed |= self.improve(var, &mut best);
            }
            if !changed {
                break;
            }
        }
    }

    /// Gives choice `var` (the groups, then the gathers) its option of least total cost, ties
    /// keeping the current one; whether it changed.
    fn improve(&mut self, var: usize, best: &mut u64) -> bool {
        let before = *self.choice_mut(var);
        let mut pick = before;
        for c in 0..self.option_count(var) {
            *self.choice_mut(var) = c;
            let t = self.total();
            if t < *best {
                *best = t;
                pick = c;
            }
        }
        *self.choice_mut(var) = pick;
        pick != before
    }

    /// The chosen option of choice `var`: a group's candidate, then a gather's option.
    fn choice_mut(&mut self, var: usize) -> &mut usize {
        let groups = self.groups.len();
        if var < groups {
            &mut self.choice[var]
        } else {
            &mut self.gather_choice[var - groups]
        }
    }

    /// How many options choice `var` has.
    fn option_count(&self, var: usize) -> usize {
        let groups = self.groups.len();
        if var < groups {
            self.candidates[var].len()
        } else {
            self.gathers[var - groups].options.len()
        }
    }
}
