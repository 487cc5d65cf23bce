//! Software pipelining (`num_stages = S`), planned once per loop after layout inference.
//!
//! In a `for` loop whose body computes a `dot`, a load qualifies when
//! - it sits in the loop body (not in a nested region), its value's only use is a conversion
//!   through shared memory (stores, a barrier, reads: the conversion planner chose the shared
//!   layout and swizzle), and that conversion's result feeds the `dot`;
//! - its masked-off elements read zero (no `other`, or a zero constant): copies zero-fill them;
//! - `tessera_layout::plan::pipeline::plan_async_copy` finds `cp.async` copies of 4, 8 or 16
//!   bytes that write the conversion's shared layout (vectors contiguous in global and shared
//!   memory, the mask uniform over each copy);
//! - the ops computing its pointers, mask and `other` (the *issue ops*) are side-effect-free
//!   register ops of the body (arithmetic, pointer offsets, shape ops, register conversions) on
//!   the induction variable, values from outside the loop and loop-carried values whose next
//!   value is itself computed by issue ops only (pointer increments).
//!
//! The plan ([`LoopPipeline`]) lists the qualifying loads with their copies, the issue ops (body
//! indices, in order) and the carried values they advance; `lower::pipeline` renders the ring of
//! `S` slots per load, the prologue issuing iterations `0..S-1`, and the steady state. A loop with
//! a `dot` where no load qualifies gets a plan without loads, and the reasons (EXPLAIN prints
//! them).
//!
//! **`wgmma` dots** (sm_90a bodies: the dot's plan is `DotCode::Wgmma`) read their operands from
//! shared memory through descriptors. Every `wgmma` dot of the loop is planned on its own
//! ([`WgmmaPipeline`], one per dot): an operand whose value is a load of the body, or the transpose
//! of one (`k_tile.trans()`, the registers unchanged), used by nothing else, qualifies as above
//! with copies writing the operand's NVMMA shared layout (`plan_wgmma_operand_copy`) and is read
//! from ring slot `i mod slots` in iteration `i`; an operand from before the loop (attention's `q`)
//! is stored once before the loop into a region of its own (`hoisted`); any other operand (a
//! computed tile such as attention's `p`) is stored from registers in each iteration as without
//! pipelining, or read from its registers when they hold the A fragments. All loads of an iteration
//! are one `cp.async` group, so the waits count iterations whatever the number of rings. When the
//! loop has one `wgmma` dot, both its operands come from rings (or were stored before the loop) and
//! its accumulator is a carried value that nothing else in the loop reads or writes (`acc = dot(a,
//! b, acc)` yielded as is), one `wgmma` group stays in flight across iterations (`wgmma.wait_group
//! 1`; the accumulator is retired by `wait_group 0` after the loop) and the rings have `S + 1`
//! slots; otherwise each dot waits for its group (`wait_group 0`, the reason in EXPLAIN) and the
//! rings have `S`. `lower::pipeline` states the slot invariant.

use crate::ir::DotCode;
use crate::ir::{ConstValue, Kernel, Op, OpKind, Region, ValueId};
use std::collections::{HashMap, HashSet};
use tessera_layout::plan::access::AccessPlan;
use tessera_layout::plan::pipeline::{
    plan_async_copy, plan_tma_operand_copy, plan_wgmma_operand_copy, ring_bytes, AsyncCopyPlan,
    TmaCopyPlan,
};
use tessera_layout::plan::wgmma_dot::WgmmaOperand;

use super::access::{self, Access};

/// The pipelining plan of one `for` loop with a `dot`.
#[derive(Clone, Debug)]
pub struct LoopPipeline {
    /// The loop's induction variable (identifies its `For` op).
    pub iv: ValueId,
    /// `for kk in …`: the induction variable's name, for explain text.
    pub label: String,
    pub stages: u32,
    /// The loads copied asynchronously into rings (empty: the loop runs unpipelined).
    pub loads: Vec<PipelinedLoad>,
    /// Why each other candidate load, or the loop, is not pipelined.
    pub refusals: Vec<String>,
    /// Indices into the body's ops of the issue ops, in program order.
    pub issue_ops: Vec<usize>,
    /// Carried values the issue ops read, and how their copies ahead of the loop advance.
    pub carried: Vec<AheadCarried>,
    /// The loop's `wgmma` dots with at least one operand copied into a ring in its NVMMA
    /// layout, in body order.
    pub wgmma: Vec<WgmmaPipeline>,
}

/// A ring load copied by TMA (`cp.async.bulk.tensor`) rather than by `cp.async`: a
/// `load_block` of a tensor whose every row is 16-byte aligned (the variant's 16-byte global
/// vectors along its contiguous dimension, which the launch checks), feeding a `wgmma` operand
/// whose NVMMA layout is what the boxes write.
#[derive(Clone, Debug)]
pub struct TmaLoad {
    pub plan: TmaCopyPlan,
    /// The kernel parameter index of the tensor's pointer (the launcher's map is built from it
    /// and the sizes and strides after it).
    pub tensor: usize,
    /// The block's origin, one index per dimension of the tensor, the row and column last
    /// (issue-op values).
    pub origin: Vec<ValueId>,
}

/// A carried value the issue ops read (index `j`: body argument `1 + j`, yield `j`): the issue
/// ops run on a copy of it that is `S - 1` iterations ahead of the loop's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AheadCarried {
    pub carried: usize,
    /// `Some(s)`: pointers moved by one loop-invariant scalar `s` each iteration (`p += s`), so
    /// the copy is the pointers before the loop plus one running offset of `Σ s` elements: the
    /// loop carries one scalar instead of a register per pointer, and each copy's address is
    /// `base + offset` (Triton's loops address their copies so). `None`: the copy is advanced
    /// by the yield, which issue ops compute.
    pub step: Option<ValueId>,
    /// The carried value's name, for explain text.
    pub name: String,
}

/// A `wgmma` dot fed by the rings of a pipelined loop.
#[derive(Clone, Debug)]
pub struct WgmmaPipeline {
    /// Index of the dot in the loop body.
    pub dot: usize,
    /// Per operand (`a`, `b`): the index into the plan's `loads` of its ring, or `None` when the
    /// operand is stored from registers in each iteration.
    pub rings: [Option<usize>; 2],
    /// Operand `a` without a ring is read from its registers (they hold the `wgmma` A
    /// fragments) rather than stored.
    pub a_in_registers: bool,
    /// Per operand: a value from before the loop (loop-invariant), stored to shared memory once
    /// before the loop and read from there in every iteration.
    pub hoisted: [bool; 2],
    /// `wgmma` groups left in flight at the end of an iteration: 1 (`wait_group 1`), or 0.
    pub in_flight: u32,
    /// With one group in flight: the carried value (index `j`) that is the accumulator.
    pub accumulator: Option<usize>,
    /// With no group in flight: why.
    pub synchronous: Option<String>,
    /// The instruction, for explain text.
    pub instruction: String,
    /// With its group left in flight into the next iteration: where it is retired.
    pub deferred: Option<DeferredRetire>,
}

/// A `wgmma` dot whose group stays in flight from its iteration into the next one, where the
/// `wait_group 0` of an earlier `wgmma` dot of the body retires it (flash attention's `p · v`,
/// retired by the next iteration's `q · kᵀ`): the tensor cores run it while the loop waits for
/// its copies, synchronises, issues the next copies and starts the next dot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeferredRetire {
    /// The carried value (index `j`: body argument `1 + j`, yield `j`) the dot's result becomes.
    pub carried: usize,
    /// The body index of the dot whose wait retires the group; every use of the carried value
    /// in the body comes after it.
    pub retired_by: usize,
    /// That dot's result name, for explain text.
    pub retired_by_name: String,
}

/// One load turned into asynchronous copies.
#[derive(Clone, Debug)]
pub struct PipelinedLoad {
    pub pointer: ValueId,
    pub mask: Option<ValueId>,
    /// The loaded value.
    pub value: ValueId,
    /// The transpose of the loaded value that is the `wgmma` operand (same registers), if the
    /// operand is not the loaded value itself; lowering skips it with the load.
    pub transposed: Option<ValueId>,
    /// `a_tile f16[128, 32]`, for explain text.
    pub what: String,
    pub copy: AsyncCopyPlan,
    /// When every ring load of the loop can be: the TMA copy that replaces `copy`'s.
    pub tma: Option<TmaLoad>,
}

impl LoopPipeline {
    /// Slots of each ring: the stages, and one more for the slot a `wgmma` group left in
    /// flight (or deferred into the next iteration) still reads.
    pub fn slots(&self) -> u32 {
        let in_flight = |w: &WgmmaPipeline| w.in_flight.max(u32::from(w.deferred.is_some()));
        self.stages + self.wgmma.iter().map(in_flight).max().unwrap_or(0)
    }

    /// Whether the loop's ring loads are copied by TMA (all of them; an `mbarrier` per slot).
    pub fn uses_tma(&self) -> bool {
        !self.loads.is_empty() && self.loads.iter().all(|l| l.tma.is_some())
    }

    /// Bytes of shared memory of all rings (with TMA, and an 8-byte `mbarrier` per slot).
    pub fn ring_bytes(&self) -> u64 {
        let rings: Vec<(u32, u32)> = self
            .loads
            .iter()
            .map(|l| (l.copy.slot_bytes, l.copy.slot_alignment))
            .collect();
        let barriers = if self.uses_tma() {
            8 * u64::from(self.slots())
        } else {
            0
        };
        ring_bytes(self.slots(), &rings) + barriers
    }

    /// The explain text, e.g. `loop for kk: 3 stages, cp.async.cg 16 B; a_tile f16[64, 32] into a
    /// shared ring of 3 × 4096 B (2 copies per thread) …`.
    pub fn text(&self) -> String {
        let mut t = format!("loop `for {}`: ", self.label);
        if !self.loads.is_empty() {
            t.push_str(&format!("{} stages", self.stages));
            for l in &self.loads {
                // Who copies: thread 0 by TMA boxes, or every thread by `cp.async`.
                let (instruction, copies) = match &l.tma {
                    Some(tma) => (tma.plan.instruction(), "from thread 0".to_string()),
                    None => {
                        let n = l.copy.copies_per_thread();
                        let noun = if n == 1 { "copy" } else { "copies" };
                        (l.copy.instruction(), format!("{n} {noun} per thread"))
                    }
                };
                t.push_str(&format!(
                    "; {} by {instruction} into a shared ring of {} × {} B ({copies}, then {})",
                    l.what,
                    self.slots(),
                    l.copy.slot_bytes,
                    read_text(&l.copy),
                ));
            }
            let offsets: Vec<String> = self
                .carried
                .iter()
                .filter(|c| c.step.is_some())
                .map(|c| format!("`{}`", c.name))
                .collect();
            if !offsets.is_empty() {
                t.push_str(&format!(
                    "; the copies address {} as the pointers before the loop plus one running \
                     offset",
                    offsets.join(", ")
                ));
            }
            let wait = if self.uses_tma() {
                format!(
                    "mbarrier of slot i mod {} at phase parity (i / {}) mod 2, bar.sync",
                    self.slots(),
                    self.slots()
                )
            } else {
                format!("cp.async.wait_group {}, bar.sync", self.stages - 2)
            };
            t.push_str(&format!(
                "; {} B of shared memory; the prologue issues iterations 0 to {}, iteration i \
                 waits ({wait}) then issues i+{}",
                self.ring_bytes(),
                self.stages - 2,
                self.stages - 1
            ));
            for w in &self.wgmma {
                let from = |k: usize| match w.rings[k] {
                    Some(l) => format!("{} from its ring", self.loads[l].what),
                    None if k == 0 && w.a_in_registers => "a from registers".to_string(),
                    None if w.hoisted[k] => {
                        format!("{} stored once before the loop", ["a", "b"][k])
                    }
                    None => format!("{} stored from registers", ["a", "b"][k]),
                };
                t.push_str(&format!(
                    "; {} reads ring slot i mod {} by descriptors ({}, {})",
                    w.instruction,
                    self.slots(),
                    from(0),
                    from(1)
                ));
                match (&w.synchronous, &w.deferred) {
                    (_, Some(d)) => t.push_str(&format!(
                        ", its group left in flight into the next iteration, retired there by \
                         the wgmma.wait_group 0 of `{}` (after the loop by wgmma.wait_group 0)",
                        d.retired_by_name
                    )),
                    (None, None) => t.push_str(
                        ", one wgmma group in flight (wgmma.wait_group 1 per iteration, the \
                         accumulator retired by wgmma.wait_group 0 after the loop)",
                    ),
                    (Some(why), None) => {
                        t.push_str(&format!(", wgmma.wait_group 0 per iteration ({why})"))
                    }
                }
            }
        }
        let refusals: Vec<String> = self
            .refusals
            .iter()
            .map(|r| format!("not pipelined: {r}"))
            .collect();
        if !refusals.is_empty() {
            if !self.loads.is_empty() {
                t.push_str("; ");
            }
            t.push_str(&refusals.join("; "));
        }
        t
    }
}

fn read_text(copy: &AsyncCopyPlan) -> String {
    use tessera_layout::plan::movement::Step;
    if copy.reads.is_empty() {
        return format!(
            "wgmma descriptors, NVMMA layout aligned to {} B",
            copy.slot_alignment
        );
    }
    let reads: Vec<String> = copy
        .reads
        .iter()
        .filter_map(|s| match s {
            Step::Ldmatrix(l) => Some(format!(
                "{} × ldmatrix.x{}{}",
                l.chunks.len(),
                l.matrices,
                if l.transposed { ".trans" } else { "" }
            )),
            Step::Load(l) => Some(format!("{} × ld.shared", l.chunks.len())),
            _ => None,
        })
        .collect();
    reads.join(", ")
}

/// Where each value is defined: `(region, op index)` of its defining op, or the region whose
/// argument it is (op index `None`).
struct Defs<'k> {
    ops: HashMap<ValueId, &'k Op>,
    uses: HashMap<ValueId, usize>,
}

impl<'k> Defs<'k> {
    fn new(kernel: &'k Kernel) -> Self {
        let mut defs = Defs {
            ops: HashMap::new(),
            uses: HashMap::new(),
        };
        defs.add(&kernel.body);
        defs
    }

    fn add(&mut self, region: &'k Region) {
        for op in &region.ops {
            for &r in &op.results {
                self.ops.insert(r, op);
            }
            for &v in &op.operands {
                *self.uses.entry(v).or_default() += 1;
            }
            for r in &op.regions {
                self.add(r);
            }
        }
        for &v in &region.yields {
            *self.uses.entry(v).or_default() += 1;
        }
    }

    /// Whether `v` is zero in every element: a zero constant, possibly splat, broadcast,
    /// reshaped or converted.
    fn is_zero(&self, v: ValueId) -> bool {
        match self.ops.get(&v) {
            Some(op) => match &op.kind {
                OpKind::Constant(ConstValue::Int(0))
                | OpKind::Constant(ConstValue::Bool(false)) => true,
                OpKind::Constant(ConstValue::Float(f)) => f.to_bits() == 0,
                OpKind::Splat
                | OpKind::Broadcast
                | OpKind::ExpandDims { .. }
                | OpKind::Reshape
                | OpKind::Convert { .. }
                | OpKind::Cast { .. } => op.operands.first().is_some_and(|&x| self.is_zero(x)),
                _ => false,
            },
            None => false,
        }
    }
}

/// Whether `op` may run again, ahead of its iteration, in the issue code: register-only and
/// free of side effects (the solver's cheap ops, the program ids, a conversion without shared
/// memory).
fn reissuable(op: &Op) -> bool {
    match &op.kind {
        OpKind::ProgramId { .. } | OpKind::NumPrograms { .. } => true,
        OpKind::Convert {
            conversion: Some(c),
        } => c.movement.shared_bytes == 0,
        kind => super::solve::is_cheap_kind(kind),
    }
}

/// The pipelining plans of every `for` loop of `kernel` with a `dot` in its body whose depth
/// ([`Kernel::loop_stages_of`]: its own `num_stages(S)`, else the attribute's) is above 1; an
/// error when the rings of a loop exceed the shared memory a block may use.
pub fn plan_pipelines(
    kernel: &Kernel,
    accesses: &[Access],
) -> Result<Vec<LoopPipeline>, syn::Error> {
    let mut out = Vec::new();
    let defs = Defs::new(kernel);
    let mut loops = Vec::new();
    collect_loops(&kernel.body, &mut loops);
    for op in loops {
        let stages = kernel.loop_stages_of(op);
        if stages < 2 {
            continue;
        }
        let p = plan_loop(kernel, &defs, accesses, op, stages);
        let bytes = p.ring_bytes();
        let limit = kernel.target.shared_bytes_limit();
        if bytes > u64::from(limit) {
            return Err(op.loc.error(&format!(
                "num_stages = {}: the loop `for {}` needs {bytes} bytes of shared memory for its \
                 rings of asynchronous copies, above the {limit} bytes ({} KiB) a block may use \
                 on {}: use fewer stages or smaller tiles",
                stages,
                p.label,
                limit / 1024,
                kernel.target.sm()
            )));
        }
        out.push(p);
    }
    Ok(out)
}

fn collect_loops<'k>(region: &'k Region, out: &mut Vec<&'k Op>) {
    for op in &region.ops {
        if let (OpKind::For, Some(body)) = (&op.kind, op.regions.first()) {
            if body.computes_dot() {
                out.push(op);
            }
        }
        for r in &op.regions {
            collect_loops(r, out);
        }
    }
}

/// The loop body and what is known of it while its loads are qualified.
struct Body<'a, 'k> {
    kernel: &'k Kernel,
    defs: &'a Defs<'k>,
    accesses: &'a [Access],
    body: &'k Region,
    index_of: HashMap<ValueId, usize>,
}

impl Body<'_, '_> {
    /// The carried values `js`, each with its step when its yield is `addptr(arg, s)` for a
    /// scalar `s` the same in every iteration: defined before the loop, or a constant, directly
    /// or splat to the pointers' shape.
    fn ahead_carried(&self, js: Vec<usize>) -> Vec<AheadCarried> {
        js.into_iter()
            .map(|j| {
                let arg = self.body.args[1 + j];
                AheadCarried {
                    carried: j,
                    step: self.invariant_step(j),
                    name: self
                        .kernel
                        .value(arg)
                        .name
                        .clone()
                        .unwrap_or_else(|| arg.to_string()),
                }
            })
            .collect()
    }

    /// The scalar `s` by which carried value `j` moves each iteration when its yield is
    /// `addptr(arg, s)` or `addptr(arg, splat(s))` with `s` the same in every iteration (defined
    /// before the loop, or a constant): the [`AheadCarried::step`] of a pointer tile.
    fn invariant_step(&self, j: usize) -> Option<ValueId> {
        let body = self.body;
        let def = |v: ValueId| self.index_of.get(&v).map(|&i| &body.ops[i]);
        let add = def(body.yields[j]).filter(|op| matches!(op.kind, OpKind::AddPtr))?;
        if add.operands.first() != Some(&body.args[1 + j]) {
            return None;
        }
        let off = *add.operands.get(1)?;
        let s = match def(off) {
            Some(op) if matches!(op.kind, OpKind::Splat) => *op.operands.first()?,
            _ => off,
        };
        let invariant = match def(s) {
            None => !body.args.contains(&s),
            Some(op) => matches!(op.kind, OpKind::Constant(_)),
        };
        (self.kernel.ty(s).is_scalar() && invariant).then_some(s)
    }

    /// The load in the body defining `value`, with its explain name.
    fn load_of(&self, value: ValueId) -> Option<(&Op, String)> {
        let &li = self.index_of.get(&value)?;
        let load = &self.body.ops[li];
        if !matches!(load.kind, OpKind::Load { .. }) {
            return None;
        }
        let what = format!(
            "{} {}",
            self.kernel
                .value(value)
                .name
                .clone()
                .unwrap_or_else(|| value.to_string()),
            self.kernel.ty(value)
        );
        Some((load, what))
    }

    /// Whether the load `load` of `value` can be issued ahead as copies planned by `plan`
    /// (given the load's access plan and whether it is masked): the load, with the issue ops
    /// and carried values added to `p`'s, or why not.
    fn qualify(
        &self,
        p: &LoopPipeline,
        load: &Op,
        value: ValueId,
        transposed: bool,
        plan: impl FnOnce(&AccessPlan, bool) -> Result<AsyncCopyPlan, String>,
    ) -> Result<(AsyncCopyPlan, Vec<usize>, Vec<usize>), String> {
        let OpKind::Load { mask, other, .. } = load.kind else {
            return Err("not a load".into());
        };
        if self.defs.uses.get(&value).copied() != Some(1) {
            return Err(if transposed {
                "the loaded value has other uses than its transpose".into()
            } else {
                "the loaded value has other uses than the conversion".into()
            });
        }
        if other {
            let o = load.operands[1 + usize::from(mask)];
            if !self.defs.is_zero(o) {
                return Err(
                    "masked-off elements read a value other than zero (copies zero-fill)".into(),
                );
            }
        }
        let Some(access) = access::find(self.accesses, load) else {
            return Err("the load has no access plan".into());
        };
        let copy = plan(&access.plan, mask)?;
        // The issue ops: the backward slice of the load's operands inside the body.
        let body = self.body;
        let iv = body.args[0];
        let carried_arg = |v: ValueId| body.args[1..].iter().position(|&a| a == v);
        let mut slice: HashSet<usize> = p.issue_ops.iter().copied().collect();
        let mut carried: HashSet<usize> = p.carried.iter().map(|c| c.carried).collect();
        let mut work: Vec<ValueId> = load.operands.clone();
        while let Some(v) = work.pop() {
            if v == iv {
                continue;
            }
            if let Some(j) = carried_arg(v) {
                // A copy of pointers moved by an invariant step is advanced by a running offset
                // of that step (the lowering's), not by the yield: only the step is issued.
                if carried.insert(j) {
                    work.push(self.invariant_step(j).unwrap_or(body.yields[j]));
                }
                continue;
            }
            let Some(&i) = self.index_of.get(&v) else {
                continue; // defined outside the loop
            };
            if !slice.insert(i) {
                continue;
            }
            if !reissuable(&body.ops[i]) {
                return Err(format!(
                    "its address, mask or loop-carried pointers depend on a `{}` in the loop, \
                     which cannot be issued ahead of its iteration",
                    body.ops[i].kind.name()
                ));
            }
            work.extend(body.ops[i].operands.iter().copied());
        }
        let mut issue: Vec<usize> = slice.into_iter().collect();
        issue.sort_unstable();
        let mut carried: Vec<usize> = carried.into_iter().collect();
        carried.sort_unstable();
        Ok((copy, issue, carried))
    }
}

fn plan_loop(
    kernel: &Kernel,
    defs: &Defs<'_>,
    accesses: &[Access],
    op: &Op,
    stages: u32,
) -> LoopPipeline {
    let body = &op.regions[0];
    let iv = body.args[0];
    let mut p = LoopPipeline {
        iv,
        label: kernel
            .value(iv)
            .name
            .clone()
            .unwrap_or_else(|| iv.to_string()),
        stages,
        loads: Vec::new(),
        refusals: Vec::new(),
        issue_ops: Vec::new(),
        carried: Vec::new(),
        wgmma: Vec::new(),
    };
    if kernel.target == crate::ir::Target::Amdgpu {
        p.refusals.push(
            "amdgpu: no asynchronous copies are planned for AMD GPUs yet (the loop runs \
             unpipelined)"
                .into(),
        );
        return p;
    }
    let cx = Body {
        kernel,
        defs,
        accesses,
        body,
        index_of: body
            .ops
            .iter()
            .enumerate()
            .flat_map(|(i, o)| o.results.iter().map(move |&r| (r, i)))
            .collect(),
    };
    let dots: Vec<usize> = (0..body.ops.len())
        .filter(|&i| matches!(body.ops[i].kind, OpKind::Dot { .. }))
        .collect();
    let wgmma_dot = |i: usize| match &body.ops[i].kind {
        OpKind::Dot { plan: Some(code) } => match &**code {
            DotCode::Wgmma(plan) => Some(plan),
            DotCode::MmaSync { .. } | DotCode::Mfma(_) => None,
        },
        _ => None,
    };
    let wgmma_dots: Vec<usize> = dots
        .iter()
        .copied()
        .filter(|&d| wgmma_dot(d).is_some())
        .collect();
    for &d in &wgmma_dots {
        if let Some(plan) = wgmma_dot(d) {
            plan_wgmma_loads(&cx, &mut p, d, plan, wgmma_dots.len());
        }
    }
    plan_deferred_retire(&cx, &mut p);
    let dot_operands: HashSet<ValueId> = dots
        .iter()
        .flat_map(|&d| body.ops[d].operands.iter().take(2).copied())
        .collect();
    for convert in &body.ops {
        let OpKind::Convert {
            conversion: Some(code),
        } = &convert.kind
        else {
            continue;
        };
        let (Some(&value), Some(&converted)) = (convert.operands.first(), convert.results.first())
        else {
            continue;
        };
        if !dot_operands.contains(&converted) || code.movement.shared_bytes == 0 {
            continue;
        }
        let Some((load, what)) = cx.load_of(value) else {
            continue;
        };
        match cx.qualify(&p, load, value, false, |access, masked| {
            plan_async_copy(access, &code.movement, masked)
        }) {
            Ok((copy, issue, carried)) => {
                p.issue_ops = issue;
                p.carried = cx.ahead_carried(carried);
                p.loads.push(PipelinedLoad {
                    pointer: load.operands[0],
                    mask: matches!(load.kind, OpKind::Load { mask: true, .. })
                        .then(|| load.operands[1]),
                    value,
                    transposed: None,
                    what,
                    copy,
                    tma: None,
                });
            }
            Err(why) => p.refusals.push(format!("{what}: {why}")),
        }
    }
    if p.loads.is_empty() && p.refusals.is_empty() {
        p.refusals
            .push("no load in the loop feeds the `dot` through shared memory".into());
    }
    // TMA for all ring loads or for none: the loop waits on mbarriers or on cp.async groups.
    let tma_loads = p.loads.iter().filter(|l| l.tma.is_some()).count();
    if tma_loads > 0 && tma_loads < p.loads.len() {
        for l in &mut p.loads {
            l.tma = None;
        }
        p.refusals.push(format!(
            "TMA: only {tma_loads} of the {} ring loads can be copied by TMA, so all are copied \
             by cp.async",
            p.loads.len()
        ));
    }
    p
}

/// The tensor-map element type (`tessera::device::TmaElement`'s variant) of `dtype`, if TMA
/// copies it.
pub fn tma_element(dtype: crate::types::DType) -> Option<&'static str> {
    use crate::types::{DType, Scalar};
    match dtype {
        DType::Scalar(Scalar::F16) => Some("F16"),
        DType::Scalar(Scalar::BF16) => Some("Bf16"),
        DType::Scalar(Scalar::F32) => Some("F32"),
        DType::Scalar(Scalar::I8 | Scalar::U8 | Scalar::F8E4M3 | Scalar::F8E5M2) => Some("U8"),
        _ => None,
    }
}

/// The TMA copy of ring load `load` (of `value`, the `wgmma` operand `operand` or, when
/// `transposed`, its transpose), or why there is none.
fn tma_load(
    cx: &Body<'_, '_>,
    load: &Op,
    operand: &WgmmaOperand,
    value: ValueId,
    transposed: bool,
) -> Result<TmaLoad, String> {
    let OpKind::Load {
        block: Some((tensor, rank)),
        ..
    } = load.kind
    else {
        return Err("not a `load_block`".into());
    };
    let access = access::find(cx.accesses, load).ok_or("the load has no access plan")?;
    let plan = &access.plan;
    if plan.dim != 1 || plan.elements * plan.element_bits != 128 {
        return Err(format!(
            "its global accesses are not 16-byte vectors along the rows ({} × {}-bit along \
             dimension {}): the tensor's alignment is not assumed in this variant",
            plan.elements, plan.element_bits, plan.dim
        ));
    }
    let shape = &cx.kernel.ty(value).shape;
    let [rows, cols] = shape.as_slice() else {
        return Err("not a rank-2 block".into());
    };
    let (rows, cols) = (
        u32::try_from(*rows).map_err(|_| "a block too large")?,
        u32::try_from(*cols).map_err(|_| "a block too large")?,
    );
    let elem = cx.kernel.ty(value).dtype;
    if tma_element(elem).is_none() {
        return Err(format!(
            "TMA copies f16, bf16, f32 and 8-bit elements, not {elem}"
        ));
    }
    let origin = load.operands[load.operands.len() - rank..].to_vec();
    Ok(TmaLoad {
        plan: plan_tma_operand_copy(operand, [rows, cols], transposed)?,
        tensor,
        origin,
    })
}

/// The load whose value is `operand`, or whose transpose (same registers) is: the load, its
/// explain name and the transpose's value.
fn operand_load<'a>(
    cx: &'a Body<'_, '_>,
    operand: ValueId,
) -> Result<(&'a Op, String, ValueId, Option<ValueId>), String> {
    if let Some((load, what)) = cx.load_of(operand) {
        return Ok((load, what, operand, None));
    }
    let trans = cx
        .index_of
        .get(&operand)
        .map(|&i| &cx.body.ops[i])
        .filter(|o| matches!(o.kind, OpKind::Trans { .. }))
        .ok_or("not a load in the loop (stored from registers in each iteration)")?;
    let loaded = trans.operands[0];
    let (load, what) = cx
        .load_of(loaded)
        .ok_or("not a load in the loop (stored from registers in each iteration)")?;
    if cx.defs.uses.get(&operand).copied() != Some(1) {
        return Err(format!("{what}: its transpose has other uses than the dot"));
    }
    let layout = |v: ValueId| match &cx.kernel.value(v).layout {
        crate::ir::LayoutSlot::Inferred(l) => Some(*l),
        _ => None,
    };
    let (Some(src), Some(dst)) = (layout(loaded), layout(operand)) else {
        return Err(format!("{what}: no layouts"));
    };
    if !same_registers_transposed(&src, &dst) {
        return Err(format!(
            "{what}: its transpose moves elements between registers"
        ));
    }
    Ok((load, what, loaded, Some(operand)))
}

/// Whether rank-2 `dst` is `src` with its two dimensions swapped, register for register (each
/// register, lane and warp basis holds the swapped coordinates).
fn same_registers_transposed(
    src: &tessera_layout::LinearLayout,
    dst: &tessera_layout::LinearLayout,
) -> bool {
    use tessera_layout::Label;
    if src.num_out_dims() != 2 || dst.num_out_dims() != 2 {
        return false;
    }
    [Label::Register, Label::Lane, Label::Warp]
        .iter()
        .all(|&label| {
            src.in_bits(label) == dst.in_bits(label)
                && (0..src.in_bits(label) as usize).all(|k| {
                    match (src.basis(label, k), dst.basis(label, k)) {
                        (Some(s), Some(d)) => s[0] == d[1] && s[1] == d[0],
                        _ => false,
                    }
                })
        })
}

/// The loads of operands `a` and `b` of the `wgmma` dot at body op `d` (one of `dots` `wgmma`
/// dots in the loop) copied into its NVMMA layouts: each operand that qualifies gets a ring, the
/// others are stored from registers (the reasons in `p.refusals`). A dot with no ring operand
/// gets no [`WgmmaPipeline`].
fn plan_wgmma_loads(
    cx: &Body<'_, '_>,
    p: &mut LoopPipeline,
    d: usize,
    plan: &tessera_layout::plan::wgmma_dot::WgmmaDotPlan,
    dots: usize,
) {
    let body = cx.body;
    let dot = &body.ops[d];
    let mut rings = [None, None];
    let mut hoisted = [false, false];
    for (k, operand) in [&plan.a, &plan.b].into_iter().enumerate() {
        let name = format!("wgmma operand {} of `{}`", ["a", "b"][k], dot_name(cx, d));
        // A value from before the loop (not an op of the body, not a carried value) is the
        // same in every iteration: stored once before the loop, unless `a` is read from
        // registers anyway.
        let value = dot.operands[k];
        let from_registers = k == 0 && plan.a_registers.is_some();
        if !cx.index_of.contains_key(&value) && !body.args.contains(&value) && !from_registers {
            hoisted[k] = true;
            continue;
        }
        let (load, what, value, transposed) = match operand_load(cx, value) {
            Ok(found) => found,
            Err(why) => {
                p.refusals.push(format!("{name}: {why}"));
                continue;
            }
        };
        match cx.qualify(p, load, value, transposed.is_some(), |access, masked| {
            plan_wgmma_operand_copy(access, operand, plan.alignment, masked)
        }) {
            Ok((copy, issue, carried)) => {
                p.issue_ops = issue;
                p.carried = cx.ahead_carried(carried);
                rings[k] = Some(p.loads.len());
                let tma = match tma_load(cx, load, operand, value, transposed.is_some()) {
                    Ok(tma) => Some(tma),
                    Err(why) => {
                        p.refusals.push(format!("{what}: not by TMA: {why}"));
                        None
                    }
                };
                p.loads.push(PipelinedLoad {
                    pointer: load.operands[0],
                    mask: matches!(load.kind, OpKind::Load { mask: true, .. })
                        .then(|| load.operands[1]),
                    value,
                    transposed,
                    what,
                    copy,
                    tma,
                });
            }
            Err(why) => p.refusals.push(format!("{what} ({name}): {why}")),
        }
    }
    if rings == [None, None] && hoisted == [false, false] {
        return;
    }
    // One group in flight when the loop's one wgmma dot reads both operands from rings and its
    // accumulator is a carried value only the dot reads, whose next value is the dot's result,
    // read by nothing else.
    let acc = dot.operands[2];
    let result = dot.results[0];
    let carried = body.args[1..].iter().position(|&a| a == acc);
    let uses = |v: ValueId| cx.defs.uses.get(&v).copied().unwrap_or(0);
    let synchronous = match carried {
        _ if dots > 1 => Some(format!(
            "the loop has {dots} wgmma dots; each waits for its group"
        )),
        _ if (0..2).any(|k| rings[k].is_none() && !hoisted[k]) => {
            Some("an operand is neither in a ring nor stored before the loop".to_string())
        }
        None => Some("the accumulator is not a value carried by the loop".to_string()),
        Some(j) if body.yields[j] != result => {
            Some("the loop does not carry the dot's result as its accumulator".to_string())
        }
        Some(_) if uses(acc) != 1 || uses(result) != 1 => Some(
            "other ops in the loop read the accumulator, which a wgmma group in flight owns"
                .to_string(),
        ),
        Some(_) => None,
    };
    p.wgmma.push(WgmmaPipeline {
        dot: d,
        rings,
        a_in_registers: rings[0].is_none() && plan.a_registers.is_some(),
        hoisted,
        in_flight: u32::from(synchronous.is_none()),
        accumulator: carried.filter(|_| synchronous.is_none()),
        synchronous,
        instruction: format!(
            "wgmma.m64n{}k{}",
            plan.shape.instr_n,
            plan.shape.input.instr_k()
        ),
        deferred: None,
    });
}

/// Defers the retirement of the loop's last `wgmma` dot `D` into the next iteration
/// ([`DeferredRetire`]) when
/// - its operands come from rings, from before the loop, or (`a`) from its registers;
/// - its result is only yielded, as carried value `j`, which no issue op reads;
/// - an earlier `wgmma` dot `E` of the body (which waits for its group, as every dot of a loop
///   with several does) precedes every use of carried value `j`: `E`'s `wait_group 0` retires
///   `D`'s group of the previous iteration before anything reads its registers.
fn plan_deferred_retire(cx: &Body<'_, '_>, p: &mut LoopPipeline) {
    let body = cx.body;
    let Some((last, earlier)) = p.wgmma.split_last_mut() else {
        return;
    };
    let dot = &body.ops[last.dot];
    let operands_ready = (0..2)
        .all(|k| last.rings[k].is_some() || last.hoisted[k] || (k == 0 && last.a_in_registers));
    let result = dot.results[0];
    let Some(j) = body.yields.iter().position(|&y| y == result) else {
        return;
    };
    let arg = body.args[1 + j];
    let read_by_issue = p.issue_ops.iter().any(|&i| op_reads(&body.ops[i], arg));
    if !operands_ready || cx.defs.uses.get(&result) != Some(&1) || read_by_issue {
        return;
    }
    let first_use = (0..body.ops.len())
        .find(|&i| op_reads(&body.ops[i], arg))
        .unwrap_or(body.ops.len());
    let Some(retired_by) = earlier
        .iter()
        .map(|e| e.dot)
        .filter(|&e| e < last.dot && e < first_use)
        .max()
    else {
        return;
    };
    last.deferred = Some(DeferredRetire {
        carried: j,
        retired_by,
        retired_by_name: dot_name(cx, retired_by),
    });
}

/// Whether `op` (or an op of its regions, or their yields) reads `v`.
fn op_reads(op: &Op, v: ValueId) -> bool {
    op.operands.contains(&v)
        || op
            .regions
            .iter()
            .any(|r| r.yields.contains(&v) || r.ops.iter().any(|o| op_reads(o, v)))
}

/// The dot's result name for explain text (`s`, `acc`), or its value id.
fn dot_name(cx: &Body<'_, '_>, d: usize) -> String {
    let r = cx.body.ops[d].results[0];
    cx.kernel
        .value(r)
        .name
        .clone()
        .unwrap_or_else(|| r.to_string())
}

/// The plan of the loop whose induction variable is `iv`, if it has one.
pub fn find(pipelines: &[LoopPipeline], iv: ValueId) -> Option<&LoopPipeline> {
    pipelines.iter().find(|p| p.iv == iv)
}
