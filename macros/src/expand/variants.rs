//! The variants of one specialisation: the targets it gets a body for, and per target the
//! layout inference under the aligned assumptions and, when those assume anything, under none.

use crate::infer::{self, AlignmentPolicy};
use crate::ir::{Kernel, Target};
use crate::lower::Facts;

/// One compiled variant of a specialisation: the kernel after layout inference and the facts of
/// its analysis (including the assumptions the launcher checks).
pub struct Variant {
    pub kernel: Kernel,
    pub facts: Facts,
    /// Appended to the entry name (`""` for the first variant).
    pub suffix: &'static str,
    /// The explain text of its layout inference (`infer::explain`), for the module's `EXPLAIN`.
    pub explain: String,
    /// The alignment policy it was inferred under.
    pub policy: AlignmentPolicy,
}

/// Layout inference of one specialisation, giving its variants: per target (a kernel with a
/// `dot` is inferred for [`Target::Ampere`] and [`Target::Hopper`], any other for Ampere only;
/// `targets = [sm_90a]` for Hopper only, `targets = [sm_80]` for Ampere only),
/// the one inferred under [`AlignmentPolicy::Aligned`] (pointers 16-byte aligned, integers that
/// reach an address or a mask multiples of 16 — Triton's specialisation), and, when one of them
/// assumes anything, a second inferred under [`AlignmentPolicy::Natural`] (entry suffix
/// `unaligned`) that the launcher picks when an argument breaks an assumption. The variants of
/// one suffix share their PTX entry name: each target's body is built for its own PTX.
/// `TESSERA_EXPLAIN` prints each.
pub(crate) fn prepare(kernel: Kernel) -> Result<Vec<Variant>, syn::Error> {
    let targets = body_targets(&kernel);
    let infer_for = |target: Target, policy: AlignmentPolicy| {
        let mut k = kernel.clone();
        k.target = target;
        let inference = infer::infer_with(&mut k, policy)?;
        infer::report_if_requested(&inference);
        Ok::<_, syn::Error>(inference)
    };
    let mut variants = Vec::new();
    let mut needs_fallback = false;
    for &target in targets {
        let inference = infer_for(target, AlignmentPolicy::Aligned)?;
        needs_fallback |= !inference.assumptions.is_empty();
        variants.push(variant(inference, ""));
    }
    if needs_fallback {
        for &target in targets {
            variants.push(variant(
                infer_for(target, AlignmentPolicy::Natural)?,
                "unaligned",
            ));
        }
    }
    Ok(variants)
}

/// The [`Target::Amdgpu`] variant of `ampere` (an Ampere variant whose body uses an
/// NVIDIA-only instruction: `ldmatrix`, which a plan for AMD replaces by vector loads; a dot's
/// `mma.sync` and `cp.async`, replaced by `v_mfma` and plain loads), inferred from `kernel` (the
/// specialisation before inference) under the same policy. An error when no plan for AMD
/// exists (a dot `infer::dot::mfma_choice` refuses, shared memory above the LDS).
pub(crate) fn amdgpu_variant(kernel: &Kernel, ampere: &Variant) -> Result<Variant, syn::Error> {
    let mut k = kernel.clone();
    k.target = Target::Amdgpu;
    let inference = infer::infer_with(&mut k, ampere.policy)?;
    infer::report_if_requested(&inference);
    Ok(variant(inference, ampere.suffix))
}

fn has_dot(kernel: &Kernel) -> bool {
    let mut has_dot = false;
    kernel.walk(&mut |op| has_dot |= matches!(op.kind, crate::ir::OpKind::Dot { .. }));
    has_dot
}

/// The targets `kernel` gets a body for: Hopper alone for `targets = [sm_90a]`; else Ampere,
/// and Hopper too when the kernel has a `dot` and `targets` lists sm_90a (without a `dot` the
/// two bodies would be the same).
pub(crate) fn body_targets(kernel: &Kernel) -> &'static [Target] {
    if kernel.sm90a_only() {
        &[Target::Hopper]
    } else if has_dot(kernel) && kernel.targets.contains(&Target::Hopper) {
        &[Target::Ampere, Target::Hopper]
    } else {
        &[Target::Ampere]
    }
}

/// The lowering's view of an inference: the access plans and the launch checks.
fn variant(inference: infer::Inference, suffix: &'static str) -> Variant {
    let explain = infer::explain(&inference);
    let facts = Facts {
        accesses: inference.accesses.clone(),
        assumptions: inference
            .assumptions
            .iter()
            .map(|a| (a.param, a.kind))
            .collect(),
        param_values: inference.param_values.clone(),
        uniform_registers: inference.uniform_registers.clone(),
        pipelines: inference.pipelines.clone(),
    };
    Variant {
        kernel: inference.kernel,
        facts,
        suffix,
        explain,
        policy: inference.policy,
    }
}
