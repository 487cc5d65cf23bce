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

use crate::ir::{ConstValue, Kernel, Op, OpKind, Region, ValueId};
use std::collections::{HashMap, HashSet};
use tessera_layout::plan::pipeline::{
    plan_async_copy, ring_bytes, AsyncCopyPlan, SHARED_BYTES_LIMIT,
};

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
    /// Carried values the issue ops read (index `j`: body argument `1 + j`, yield `j`), each
    /// advanced by its yield, which issue ops compute.
    pub carried: Vec<usize>,
}

/// One load turned into asynchronous copies.
#[derive(Clone, Debug)]
pub struct PipelinedLoad {
    pub pointer: ValueId,
    pub mask: Option<ValueId>,
    /// The loaded value.
    pub value: ValueId,
    /// `a_tile f16[128, 32]`, for explain text.
    pub what: String,
    pub copy: AsyncCopyPlan,
}

impl LoopPipeline {
    /// Bytes of shared memory of all rings.
    pub fn ring_bytes(&self) -> u64 {
        let slots: Vec<u32> = self.loads.iter().map(|l| l.copy.slot_bytes).collect();
        ring_bytes(self.stages, &slots)
    }

    /// The explain text, e.g. `loop for kk: 3 stages, cp.async.cg 16 B; a_tile f16[64, 32] into a
    /// shared ring of 3 × 4096 B (2 copies per thread) …`.
    pub fn text(&self) -> String {
        let mut t = format!("loop `for {}`: ", self.label);
        if !self.loads.is_empty() {
            t.push_str(&format!("{} stages", self.stages));
            for l in &self.loads {
                t.push_str(&format!(
                    "; {} by {} into a shared ring of {} × {} B ({} cop{} per thread, then {})",
                    l.what,
                    l.copy.instruction(),
                    self.stages,
                    l.copy.slot_bytes,
                    l.copy.copies_per_thread(),
                    if l.copy.copies_per_thread() == 1 {
                        "y"
                    } else {
                        "ies"
                    },
                    read_text(&l.copy),
                ));
            }
            t.push_str(&format!(
                "; {} B of shared memory; the prologue issues iterations 0 to {}, iteration i \
                 waits (cp.async.wait_group {}, bar.sync) then issues i+{}",
                self.ring_bytes(),
                self.stages - 2,
                self.stages - 2,
                self.stages - 1
            ));
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
/// free of side effects.
fn reissuable(op: &Op) -> bool {
    match &op.kind {
        OpKind::Constant(_)
        | OpKind::ProgramId { .. }
        | OpKind::NumPrograms { .. }
        | OpKind::Arange { .. }
        | OpKind::Splat
        | OpKind::ExpandDims { .. }
        | OpKind::Broadcast
        | OpKind::Reshape
        | OpKind::Trans { .. }
        | OpKind::Join
        | OpKind::Split
        | OpKind::Unary(_)
        | OpKind::Binary(_)
        | OpKind::Compare(_)
        | OpKind::Fma
        | OpKind::Select
        | OpKind::Cast { .. }
        | OpKind::AddPtr => true,
        OpKind::Convert {
            conversion: Some(c),
        } => c.movement.shared_bytes == 0,
        _ => false,
    }
}

/// The pipelining plans of every `for` loop of `kernel` with a `dot` in its body, when
/// `kernel.num_stages > 1`; an error when the rings of a loop exceed the shared memory a block
/// may use.
pub fn plan_pipelines(
    kernel: &Kernel,
    accesses: &[Access],
) -> Result<Vec<LoopPipeline>, syn::Error> {
    let mut out = Vec::new();
    if kernel.num_stages < 2 {
        return Ok(out);
    }
    let defs = Defs::new(kernel);
    let mut loops = Vec::new();
    collect_loops(&kernel.body, &mut loops);
    for op in loops {
        let p = plan_loop(kernel, &defs, accesses, op);
        let bytes = p.ring_bytes();
        if bytes > u64::from(SHARED_BYTES_LIMIT) {
            return Err(op.loc.error(&format!(
                "num_stages = {}: the loop `for {}` needs {bytes} bytes of shared memory for its \
                 rings of asynchronous copies, above the {SHARED_BYTES_LIMIT} bytes (163 KiB) a \
                 block may use on sm_80: use fewer stages or smaller tiles",
                kernel.num_stages, p.label
            )));
        }
        out.push(p);
    }
    Ok(out)
}

fn collect_loops<'k>(region: &'k Region, out: &mut Vec<&'k Op>) {
    for op in &region.ops {
        if let (OpKind::For, Some(body)) = (&op.kind, op.regions.first()) {
            if body
                .ops
                .iter()
                .any(|o| matches!(o.kind, OpKind::Dot { .. }))
            {
                out.push(op);
            }
        }
        for r in &op.regions {
            collect_loops(r, out);
        }
    }
}

fn plan_loop(kernel: &Kernel, defs: &Defs<'_>, accesses: &[Access], op: &Op) -> LoopPipeline {
    let body = &op.regions[0];
    let iv = body.args[0];
    let mut p = LoopPipeline {
        iv,
        label: kernel
            .value(iv)
            .name
            .clone()
            .unwrap_or_else(|| iv.to_string()),
        stages: kernel.num_stages,
        loads: Vec::new(),
        refusals: Vec::new(),
        issue_ops: Vec::new(),
        carried: Vec::new(),
    };
    let index_of: HashMap<ValueId, usize> = body
        .ops
        .iter()
        .enumerate()
        .flat_map(|(i, o)| o.results.iter().map(move |&r| (r, i)))
        .collect();
    let dot_operands: HashSet<ValueId> = body
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Dot { .. }))
        .flat_map(|o| o.operands.iter().take(2).copied())
        .collect();
    let carried_arg = |v: ValueId| body.args[1..].iter().position(|&a| a == v);
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
        let Some(&li) = index_of.get(&value) else {
            continue;
        };
        let load = &body.ops[li];
        let OpKind::Load { mask, other } = load.kind else {
            continue;
        };
        let ty = kernel.ty(value);
        let what = format!(
            "{} {}",
            kernel
                .value(value)
                .name
                .clone()
                .unwrap_or_else(|| value.to_string()),
            ty
        );
        let refuse = |p: &mut LoopPipeline, why: String| p.refusals.push(format!("{what}: {why}"));
        if defs.uses.get(&value).copied() != Some(1) {
            refuse(
                &mut p,
                "the loaded value has other uses than the conversion".into(),
            );
            continue;
        }
        let pointer = load.operands[0];
        let mask_v = mask.then(|| load.operands[1]);
        if other {
            let o = load.operands[1 + usize::from(mask)];
            if !defs.is_zero(o) {
                refuse(
                    &mut p,
                    "masked-off elements read a value other than zero (copies zero-fill)".into(),
                );
                continue;
            }
        }
        let Some(access) = access::find(accesses, load) else {
            refuse(&mut p, "the load has no access plan".into());
            continue;
        };
        let copy = match plan_async_copy(&access.plan, &code.movement, mask) {
            Ok(c) => c,
            Err(why) => {
                refuse(&mut p, why);
                continue;
            }
        };
        // The issue ops: the backward slice of the load's operands inside the body.
        let mut slice: HashSet<usize> = p.issue_ops.iter().copied().collect();
        let mut carried: HashSet<usize> = p.carried.iter().copied().collect();
        let mut work: Vec<ValueId> = load.operands.clone();
        let mut failed = None;
        while let Some(v) = work.pop() {
            if v == iv {
                continue;
            }
            if let Some(j) = carried_arg(v) {
                if carried.insert(j) {
                    work.push(body.yields[j]);
                }
                continue;
            }
            let Some(&i) = index_of.get(&v) else {
                continue; // defined outside the loop
            };
            if !slice.insert(i) {
                continue;
            }
            if !reissuable(&body.ops[i]) {
                failed = Some(format!(
                    "its address, mask or loop-carried pointers depend on a `{}` in the loop, \
                     which cannot be issued ahead of its iteration",
                    body.ops[i].kind.name()
                ));
                break;
            }
            work.extend(body.ops[i].operands.iter().copied());
        }
        if let Some(why) = failed {
            refuse(&mut p, why);
            continue;
        }
        let mut issue: Vec<usize> = slice.into_iter().collect();
        issue.sort_unstable();
        let mut carried: Vec<usize> = carried.into_iter().collect();
        carried.sort_unstable();
        p.issue_ops = issue;
        p.carried = carried;
        p.loads.push(PipelinedLoad {
            pointer,
            mask: mask_v,
            value,
            what,
            copy,
        });
    }
    if p.loads.is_empty() && p.refusals.is_empty() {
        p.refusals
            .push("no load in the loop feeds the `dot` through shared memory".into());
    }
    p
}

/// The plan of the loop whose induction variable is `iv`, if it has one.
pub fn find(pipelines: &[LoopPipeline], iv: ValueId) -> Option<&LoopPipeline> {
    pipelines.iter().find(|p| p.iv == iv)
}
