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
//!    [`uniform`]: registers holding equal values (from constancy), computed once per group.
//! 5. [`explain`]: the human-readable result ([`Inference`]'s `Display`), printed at build time
//!    when `TESSERA_EXPLAIN` asks for it ([`explain_requested`]).

pub mod access;
mod anchors;
pub mod axis;
pub(crate) mod dot;
pub(crate) mod explain;
mod graph;
mod layouts;
pub mod pipeline;
mod rewrite;
mod solve;
#[cfg(test)]
mod tests;
pub mod uniform;

pub use access::Access;
pub use axis::{AlignmentPolicy, Assumption, AssumptionKind, AxisInfo};

pub use rewrite::ConversionRecord;

use crate::ir::{Kernel, LayoutSlot, Op, OpKind, Region, Value, ValueId};
use crate::types::Scalar;
use anchors::Origin;
use graph::Graph;
use std::collections::HashMap;
use tessera_layout::plan::gather_code::gather_code_on;
use tessera_layout::plan::mma::MmaKind;
use tessera_layout::{Label, LinearLayout};

/// Notes on reductions for the explain output.
#[derive(Clone, Debug)]
pub(crate) enum Note {
    /// `waves`: counted on AMD's 64-lane waves (`lanes` bits of a wave, `warps` wave bits).
    Reduce {
        lanes: u32,
        warps: u32,
        waves: bool,
        cost: u64,
    },
}

/// The result of layout inference for one specialisation.
#[derive(Clone, Debug)]
pub struct Inference {
    /// The kernel after inference (the same as the one `infer` rewrote).
    pub kernel: Kernel,
    /// What the launcher must check (see [`axis`]).
    pub assumptions: Vec<Assumption>,
    /// The integer parameters (indices into `Kernel::params`) whose value this variant knows,
    /// with the value: assumed (a tensor's innermost stride, 1, checked before launch) or
    /// pinned by `requires` (refused otherwise). The lowering binds each to its value, so the
    /// compiler folds it (`cols * x.stride(1)` becomes `cols`).
    pub param_values: Vec<(usize, i128)>,
    pub policy: AlignmentPolicy,
    /// Every load and store with its access plan, in program order.
    pub accesses: Vec<Access>,
    /// Every inserted conversion, in the order inserted.
    pub conversions: Vec<ConversionRecord>,
    /// Copies of cheap ops that recompute a value in another layout.
    pub rematerialised: usize,
    /// Elementwise results whose registers come in groups of equal values, with the group
    /// size ([`uniform`]): the lowering computes one register per group.
    pub uniform_registers: HashMap<ValueId, u32>,
    /// The solution's cost (see `solve`).
    pub cost: u64,
    /// The software-pipelining plan of every loop with a `dot` (`num_stages > 1`).
    pub pipelines: Vec<pipeline::LoopPipeline>,
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
            let vendor = original.target.vendor();
            let threads = solve::reduction_threads(&l, vendor);
            let (_, lanes, warps) = layouts::bases_along(&threads, r.axis);
            let result = graph.op(r.op).results[0];
            notes.insert(
                result,
                Note::Reduce {
                    lanes,
                    warps,
                    waves: threads.in_size(tessera_layout::Label::Lane) == 64,
                    cost: solve::reduce_cost(&l, r.axis, r.bits, vendor),
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
    let chosen: Vec<(&solve::GatherVar, &solve::GatherOption)> = (problem.gathers.iter())
        .zip(&problem.gather_choice)
        .map(|(g, &c)| (g, &g.options[c]))
        .collect();
    let (target, num_warps) = (kernel.target, kernel.num_warps);
    let Kernel { body, values, .. } = kernel;
    attach_gather_code(body, values, &chosen)?;
    attach_scan_plans(body, values, target.vendor())?;
    dot::attach_dot_plans(body, values, target, num_warps)?;
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
    let uniform_registers = uniform::uniform_registers(kernel, &facts.info);
    let pipelines = pipeline::plan_pipelines(kernel, &accesses)?;
    let param_values = axis::known_param_values(kernel, &facts);
    Ok(Inference {
        kernel: kernel.clone(),
        assumptions: facts.assumptions,
        param_values,
        policy,
        accesses,
        conversions: report.conversions,
        rematerialised: report.rematerialised,
        uniform_registers,
        cost,
        pipelines,
        notes,
        origins,
    })
}

/// Stores on every gather of `region` the code of the plan chosen for its operands' layouts
/// (`chosen`: each gather of the original kernel and its chosen option; the rewrite put the
/// operands in those layouts).
fn attach_gather_code(
    region: &mut Region,
    values: &[Value],
    chosen: &[(&solve::GatherVar, &solve::GatherOption)],
) -> Result<(), syn::Error> {
    for op in &mut region.ops {
        for r in &mut op.regions {
            attach_gather_code(r, values, chosen)?;
        }
        let OpKind::Gather { axis, code } = &mut op.kind else {
            continue;
        };
        let layout = |v: ValueId| match &values[v.0 as usize].layout {
            LayoutSlot::Inferred(l) => Some(*l),
            _ => None,
        };
        let (src, index) = (layout(op.operands[0]), layout(op.operands[1]));
        let bits = values[op.operands[0].0 as usize].ty.dtype.bits().max(8);
        let (_, option) = chosen
            .iter()
            .find(|(g, o)| {
                g.axis == *axis && g.bits == bits && Some(o.src) == src && Some(o.index) == index
            })
            .ok_or_else(|| {
                op.loc
                    .error("#[tile_kernel] internal error: a gather without its plan")
            })?;
        let (plan, lanes) = (&option.plan, option.lanes);
        let planned = gather_code_on(plan, lanes, &option.src, &option.index, *axis, bits)
            .map_err(|e| {
                op.loc
                    .error(&format!("#[tile_kernel] internal error: gather: {e}"))
            })?;
        *code = Some(Box::new(planned));
    }
    Ok(())
}

/// Stores on every scan of `region` its plan on the operand's layout
/// (`tessera_layout::plan::scan`).
fn attach_scan_plans(
    region: &mut Region,
    values: &[Value],
    vendor: tessera_layout::plan::Vendor,
) -> Result<(), syn::Error> {
    for op in &mut region.ops {
        for r in &mut op.regions {
            attach_scan_plans(r, values, vendor)?;
        }
        let OpKind::Scan { axis, plan, .. } = &mut op.kind else {
            continue;
        };
        let LayoutSlot::Inferred(layout) = &values[op.operands[0].0 as usize].layout else {
            return Err(op.loc.error(
                "#[tile_kernel] internal error: a scan of a tile without an inferred layout",
            ));
        };
        let planned =
            tessera_layout::plan::scan::plan_scan_on(vendor, layout, *axis).map_err(|e| {
                op.loc
                    .error(&format!("#[tile_kernel] internal error: scan: {e}"))
            })?;
        *plan = Some(Box::new(planned));
    }
    Ok(())
}

/// The `mma.sync` for operands of element type `input` and an accumulator of `acc`.
pub(crate) fn mma_kind(input: Scalar, acc: Scalar) -> Option<MmaKind> {
    match (input, acc) {
        (Scalar::F16, Scalar::F32) => Some(MmaKind::F16),
        (Scalar::BF16, Scalar::F32) => Some(MmaKind::Bf16),
        (Scalar::F8E4M3, Scalar::F32) => Some(MmaKind::F8 { e4m3: true }),
        (Scalar::F8E5M2, Scalar::F32) => Some(MmaKind::F8 { e4m3: false }),
        (Scalar::I8, Scalar::I32) => Some(MmaKind::S8),
        _ => None,
    }
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

/// Why a layout is not what [`LayoutSlot::Inferred`] promises for a tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutCheckError {
    /// The inputs are not register, lane, warp.
    Inputs,
    /// `lanes` lanes and `warps` warps instead of 32 and `num_warps`.
    Threads {
        lanes: u32,
        warps: u32,
        num_warps: u32,
    },
    /// `outputs` output dimensions for a tile of rank `rank`.
    Rank { outputs: usize, rank: usize },
    /// Output `dim` is not `dim{dim}` of size `size`.
    Output { dim: usize, size: u64 },
    /// Not a distributed layout (Definition 4.10) onto the tile.
    NotDistributed,
}

impl std::fmt::Display for LayoutCheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutCheckError::Inputs => f.write_str("inputs are not register, lane, warp"),
            LayoutCheckError::Threads {
                lanes,
                warps,
                num_warps,
            } => write!(
                f,
                "{lanes} lanes and {warps} warps, expected 32 and {num_warps}"
            ),
            LayoutCheckError::Rank { outputs, rank } => {
                write!(f, "{outputs} output dimensions for a tile of rank {rank}")
            }
            LayoutCheckError::Output { dim, size } => {
                write!(f, "output {dim} is not dim{dim} of size {size}")
            }
            LayoutCheckError::NotDistributed => {
                f.write_str("not a distributed layout (Definition 4.10) onto the tile")
            }
        }
    }
}

/// A layout is what [`LayoutSlot::Inferred`] promises for a tile of `shape`.
pub fn check_layout(
    l: &LinearLayout,
    shape: &[u64],
    num_warps: u32,
) -> Result<(), LayoutCheckError> {
    let ins = [Label::Register, Label::Lane, Label::Warp];
    if l.num_in_dims() != 3 || (0..3).any(|i| l.in_label(i) != ins[i]) {
        return Err(LayoutCheckError::Inputs);
    }
    if l.in_size(Label::Lane) != 32 || l.in_size(Label::Warp) != num_warps {
        return Err(LayoutCheckError::Threads {
            lanes: l.in_size(Label::Lane),
            warps: l.in_size(Label::Warp),
            num_warps,
        });
    }
    if l.num_out_dims() != shape.len() {
        return Err(LayoutCheckError::Rank {
            outputs: l.num_out_dims(),
            rank: shape.len(),
        });
    }
    for (d, &s) in shape.iter().enumerate() {
        if l.out_label(d) != Label::Dim(d as u8) || u64::from(l.out_size(Label::Dim(d as u8))) != s
        {
            return Err(LayoutCheckError::Output { dim: d, size: s });
        }
    }
    if !l.is_distributed_layout() {
        return Err(LayoutCheckError::NotDistributed);
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
