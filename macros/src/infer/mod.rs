//! Layout inference (§4.4 of the paper) on the tile IR of one specialisation: every tile value
//! gets a distributed [`LinearLayout`] ([`LayoutSlot::Inferred`]), conversions are made explicit
//! ([`OpKind::Convert`]) with their plans, and loads and stores get their access plans
//! ([`access`]).
//!
//! The passes, each in its own module:
//! 1. [`axis`]: contiguity, divisibility and constancy of every integer/pointer/bool value
//!    (Triton's AxisInfo), under documented alignment assumptions that the launcher checks.
//! 2. [`anchors`]: layouts the hardware wants — coalesced, 128-bit blocked layouts for loads
//!    and stores, `mma.sync` accumulator and operand layouts for `dot`, the axis inside a warp for
//!    `gather` and reductions.
//! 3. [`solve`]: propagation of those layouts through elementwise and shape ops (which are
//!    layout-only, `layouts`), and conflict resolution by a documented cost model built on the
//!    conversion planner's costs.
//! 4. [`rewrite`]: conversion insertion and rematerialisation of cheap values.
//! 5. [`explain`]: the human-readable result ([`Inference`]'s `Display`), printed at build time
//!    when `TESSERA_EXPLAIN` asks for it ([`explain_requested`]).

pub mod access;
mod anchors;
pub mod axis;
mod explain;
mod graph;
mod layouts;
mod rewrite;
mod solve;
#[cfg(test)]
mod tests;

pub use access::Access;
pub use axis::{AlignmentPolicy, Assumption, AssumptionKind, AxisInfo};

pub use rewrite::ConversionRecord;

use crate::ir::{Kernel, LayoutSlot, Op, OpKind, ValueId};
use anchors::Origin;
use graph::Graph;
use std::collections::HashMap;
use tessera_layout::{Label, LinearLayout};

/// Notes on reductions, gathers and dots for the explain output.
#[derive(Clone, Debug)]
pub(crate) enum Note {
    Reduce {
        lanes: u32,
        warps: u32,
        cost: u64,
    },
    Gather {
        kind: &'static str,
        cost: u64,
    },
    Dot {
        instruction: &'static str,
        k_width: u32,
    },
}

/// The result of layout inference for one specialisation.
#[derive(Clone, Debug)]
pub struct Inference {
    /// The kernel after inference (the same as the one `infer` rewrote).
    pub kernel: Kernel,
    /// What the launcher must check (see [`axis`]).
    pub assumptions: Vec<Assumption>,
    pub policy: AlignmentPolicy,
    /// Every load and store with its access plan, in program order.
    pub accesses: Vec<Access>,
    /// Every inserted conversion, in the order inserted.
    pub conversions: Vec<ConversionRecord>,
    /// Copies of cheap ops that recompute a value in another layout.
    pub rematerialised: usize,
    /// The solution's cost (see `solve`).
    pub cost: u64,
    pub(crate) notes: HashMap<ValueId, Note>,
    pub(crate) origins: HashMap<LinearLayout, Origin>,
}

impl Inference {
    /// The access of a load or store op of [`Inference::kernel`].
    pub fn access(&self, op: &Op) -> Option<&Access> {
        access::find(&self.accesses, op)
    }
}

/// Infers the layouts of `kernel`: on success every tile value's slot is
/// [`LayoutSlot::Inferred`] (or stays `Fixed` for a `convert_layout` result) and every use of a
/// value in another layout goes through an [`OpKind::Convert`]. Errors are on the user's code.
pub fn infer_with(kernel: &mut Kernel, policy: AlignmentPolicy) -> Result<Inference, syn::Error> {
    let nw = kernel.num_warps;
    if nw == 0 || !nw.is_power_of_two() || nw > 32 {
        return Err(syn::Error::new(
            kernel.name.span(),
            format!("num_warps = {nw}: layout inference needs a power of two from 1 to 32"),
        ));
    }
    for v in &kernel.values {
        if v.ty.rank() > tessera_layout::MAX_DIMS {
            return Err(v.loc.error(&format!(
                "a tile of rank {}: layouts have at most {} dimensions",
                v.ty.rank(),
                tessera_layout::MAX_DIMS
            )));
        }
    }
    let original = kernel.clone();
    let graph = Graph::new(&original);
    let candidates = axis::assumed_params(&original, &graph, policy);
    let analysis = axis::analyze_assuming(&original, &graph, &candidates);
    let mut problem = solve::Problem::new(&original, &graph, &analysis)?;
    problem.solve();
    let cost = problem.total();
    let mut notes = HashMap::new();
    for r in &problem.reduces {
        if let Some(l) = r.fixed.or_else(|| problem.layout_of(r.operand).copied()) {
            let (_, lanes, warps) = layouts::bases_along(&l, r.axis);
            let result = graph.op(r.op).results[0];
            notes.insert(
                result,
                Note::Reduce {
                    lanes,
                    warps,
                    cost: solve::reduce_cost(&l, r.axis, r.bits),
                },
            );
        }
    }
    for (gi, g) in problem.gathers.iter().enumerate() {
        let o = &g.options[problem.gather_choice[gi]];
        notes.insert(
            g.result,
            Note::Gather {
                kind: o.kind,
                cost: o.cost,
            },
        );
    }
    for node in &graph.ops {
        if let OpKind::Dot = node.kind {
            let bits = original.ty(node.operands[0]).dtype.bits();
            notes.insert(
                node.results[0],
                Note::Dot {
                    instruction: if bits == 8 {
                        "mma.sync m16n8k32"
                    } else {
                        "mma.sync m16n8k16"
                    },
                    k_width: 32 / bits,
                },
            );
        }
    }
    let report = rewrite::apply(&mut problem, kernel)?;
    // Notes follow an op's result to the value it now writes.
    for (original, fresh) in &report.made_in {
        if let Some(note) = notes.remove(original) {
            notes.insert(*fresh, note);
        }
    }
    let origins = std::mem::take(&mut problem.origins);
    validate(kernel)?;
    // The facts of the final kernel, under the fewest assumptions that give every access the
    // plan (width, mask predicate) the candidates gave it: the launcher checks only what matters.
    let final_graph = Graph::new(kernel);
    let plans = |info: &[AxisInfo]| -> Vec<Access> {
        let mut out = Vec::new();
        kernel.walk(&mut |op| out.extend(access::access_of(kernel, info, op)));
        out
    };
    let mut assumed = candidates.clone();
    let mut facts = axis::analyze_assuming(kernel, &final_graph, &assumed);
    let accesses = plans(&facts.info);
    for &p in &candidates {
        let mut fewer = assumed.clone();
        fewer.remove(&p);
        let trial = axis::analyze_assuming(kernel, &final_graph, &fewer);
        let same = plans(&trial.info).iter().zip(&accesses).all(|(a, b)| {
            (a.plan.elements, a.plan.mask_uniform) == (b.plan.elements, b.plan.mask_uniform)
        });
        if same {
            assumed = fewer;
            facts = trial;
        }
    }
    let accesses = plans(&facts.info);
    Ok(Inference {
        kernel: kernel.clone(),
        assumptions: facts.assumptions,
        policy,
        accesses,
        conversions: report.conversions,
        rematerialised: report.rematerialised,
        cost,
        notes,
        origins,
    })
}

/// Every tile value has a valid layout of its shape; every op's operands are in the layouts
/// the lowering expects (checked for elementwise ops and conversions).
fn validate(kernel: &Kernel) -> Result<(), syn::Error> {
    for (i, v) in kernel.values.iter().enumerate() {
        if v.ty.is_scalar() {
            continue;
        }
        match &v.layout {
            LayoutSlot::Inferred(l) => {
                if let Err(e) = check_layout(l, &v.ty.shape, kernel.num_warps) {
                    return Err(v.loc.error(&format!(
                        "#[tile_kernel] internal error in layout inference: %{i}: {e}"
                    )));
                }
            }
            LayoutSlot::Fixed(_) => {}
            _ => {
                return Err(v.loc.error(&format!(
                    "#[tile_kernel] internal error in layout inference: %{i} has no layout"
                )))
            }
        }
    }
    Ok(())
}

/// A layout is what [`LayoutSlot::Inferred`] promises for a tile of `shape`.
pub fn check_layout(l: &LinearLayout, shape: &[u64], num_warps: u32) -> Result<(), String> {
    let ins = [Label::Register, Label::Lane, Label::Warp];
    if l.num_in_dims() != 3 || (0..3).any(|i| l.in_label(i) != ins[i]) {
        return Err("inputs are not register, lane, warp".into());
    }
    if l.in_size(Label::Lane) != 32 || l.in_size(Label::Warp) != num_warps {
        return Err(format!(
            "{} lanes and {} warps, expected 32 and {num_warps}",
            l.in_size(Label::Lane),
            l.in_size(Label::Warp)
        ));
    }
    if l.num_out_dims() != shape.len() {
        return Err(format!(
            "{} output dimensions for a tile of rank {}",
            l.num_out_dims(),
            shape.len()
        ));
    }
    for (d, &s) in shape.iter().enumerate() {
        if l.out_label(d) != Label::Dim(d as u8) || u64::from(l.out_size(Label::Dim(d as u8))) != s
        {
            return Err(format!("output {d} is not dim{d} of size {s}"));
        }
    }
    if !l.is_distributed_layout() {
        return Err("not a distributed layout (Definition 4.10) onto the tile".into());
    }
    Ok(())
}

/// The explain text of an inference (what `TESSERA_EXPLAIN` prints).
pub fn explain(inference: &Inference) -> String {
    inference.to_string()
}

/// Whether the build asked to see the explain text of kernel `name`: the environment variable
/// `TESSERA_EXPLAIN` is `1` (every kernel) or a comma-separated list of kernel names.
pub fn explain_requested(name: &str) -> bool {
    match std::env::var("TESSERA_EXPLAIN") {
        Ok(v) => explain_matches(&v, name),
        Err(_) => false,
    }
}

fn explain_matches(setting: &str, name: &str) -> bool {
    let setting = setting.trim();
    setting == "1" || setting.split(',').any(|s| s.trim() == name)
}

/// Prints the explain text to stderr when [`explain_requested`] says so (for the macro to call
/// during expansion).
pub fn report_if_requested(inference: &Inference) {
    if explain_requested(&inference.kernel.name.to_string()) {
        eprintln!("{}", explain(inference));
    }
}
