//! The variants of one specialisation: the targets it gets a body for, and per target the
//! layout inference under the aligned assumptions and, when those assume anything, under none;
//! and which of those bodies a build compiles ([`BodySet`]).

use crate::infer::{self, AlignmentPolicy};
use crate::ir::{Kernel, Target};
use crate::lower::Facts;
use proc_macro2::TokenStream;
use quote::quote;

/// The variable a device build sets to tell the macro its target (`tessera::build`'s nested
/// builds set it; its `EXPAND_TARGET_ENV` names the same variable): `nvptx64`, `nvptx64-sm_90a`
/// or `amdgpu` ([`BodySet`]).
pub(crate) const EXPAND_TARGET_ENV: &str = "TESSERA_EXPAND_TARGET";

/// The bodies a build compiles. The host build compiles every target's (its emulator runs each);
/// a device build compiles its own target's alone, the others being `cfg`-ed out, so the macro
/// infers and lowers only those when [`EXPAND_TARGET_ENV`] names the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodySet {
    /// Every target's (no [`EXPAND_TARGET_ENV`]).
    All,
    /// PTX other than sm_90a (`nvptx64`): the Ampere bodies.
    Nvptx,
    /// The sm_90a PTX (`nvptx64-sm_90a`): the Hopper bodies, and the Ampere body of a kernel
    /// without a Hopper one.
    NvptxSm90a,
    /// AMD code objects (`amdgpu`): the Ampere bodies (the amdgpu entry's when they use no
    /// NVIDIA-only instruction), the Hopper body of a kernel without an Ampere one
    /// (`targets = [sm_90a]`), and the bodies planned for AMD.
    Amdgpu,
}

impl BodySet {
    /// The set [`EXPAND_TARGET_ENV`] names ([`BodySet::parse`]).
    pub(crate) fn from_env() -> Result<BodySet, String> {
        BodySet::parse(std::env::var(EXPAND_TARGET_ENV).ok().as_deref())
    }

    /// The set of a value of [`EXPAND_TARGET_ENV`] (every target's when unset or empty); an
    /// error naming the values for any other.
    pub(crate) fn parse(value: Option<&str>) -> Result<BodySet, String> {
        match value {
            None => Ok(BodySet::All),
            Some(value) => match value {
                "" => Ok(BodySet::All),
                "nvptx64" => Ok(BodySet::Nvptx),
                "nvptx64-sm_90a" => Ok(BodySet::NvptxSm90a),
                "amdgpu" => Ok(BodySet::Amdgpu),
                other => Err(format!(
                    "#[tile_kernel]: {EXPAND_TARGET_ENV}={other:?} is not a target: \
                     `nvptx64`, `nvptx64-sm_90a` or `amdgpu` (the build helper sets it in its \
                     device builds), or unset"
                )),
            },
        }
    }

    /// Of the targets a kernel has bodies for ([`body_targets`]), those this build compiles.
    // Each set keeps what its `cfg` selects in `ptx_entries::entry_items`.
    pub(crate) fn built(self, targets: &[Target]) -> Vec<Target> {
        match self {
            BodySet::All => targets.to_vec(),
            BodySet::Nvptx => targets
                .iter()
                .copied()
                .filter(|&t| t == Target::Ampere)
                .collect(),
            // The NVIDIA body the plan for AMD replaces: the Ampere one, else the Hopper one.
            BodySet::Amdgpu => targets.first().copied().into_iter().collect(),
            BodySet::NvptxSm90a if targets.contains(&Target::Hopper) => vec![Target::Hopper],
            BodySet::NvptxSm90a => targets.to_vec(),
        }
    }

    /// Whether this build compiles the bodies planned for AMD ([`amdgpu_variant`]).
    pub(crate) fn amdgpu(self) -> bool {
        matches!(self, BodySet::All | BodySet::Amdgpu)
    }

    /// A `compile_error!` for a crate compiled for another target than the one its expansion
    /// was told (a variable left set in a host build, say), which would otherwise miss bodies.
    pub(crate) fn guard(self) -> TokenStream {
        let (cfg, value) = match self {
            BodySet::All => return TokenStream::new(),
            BodySet::Nvptx => (
                quote!(all(target_arch = "nvptx64", not(target_feature = "sm_90a"))),
                "nvptx64",
            ),
            BodySet::NvptxSm90a => (
                quote!(all(target_arch = "nvptx64", target_feature = "sm_90a")),
                "nvptx64-sm_90a",
            ),
            BodySet::Amdgpu => (quote!(target_arch = "amdgpu"), "amdgpu"),
        };
        let message = format!(
            "#[tile_kernel]: this crate was expanded for {value} alone ({EXPAND_TARGET_ENV}={value}, \
             which tessera::build sets in its device builds) but is compiled for another target: \
             unset {EXPAND_TARGET_ENV}"
        );
        quote! {
            #[cfg(not(#cfg))]
            ::core::compile_error!(#message);
        }
    }
}

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
///
/// Only the targets of `bodies` get variants; whether there are `unaligned` ones (which names
/// every entry) is still decided by every target's aligned inference, as in a build of all.
pub(crate) fn prepare(kernel: Kernel, bodies: BodySet) -> Result<Vec<Variant>, syn::Error> {
    let every = body_targets(&kernel);
    let targets = bodies.built(every);
    let infer_for = |target: Target, policy: AlignmentPolicy| {
        let mut k = kernel.clone();
        k.target = target;
        infer::infer_with(&mut k, policy)
    };
    let mut variants = Vec::new();
    let mut needs_fallback = false;
    for &target in &targets {
        let inference = infer_for(target, AlignmentPolicy::Aligned)?;
        infer::report_if_requested(&inference);
        needs_fallback |= !inference.assumptions.is_empty();
        variants.push(variant(inference, ""));
    }
    for &target in every.iter().filter(|t| !targets.contains(t)) {
        if needs_fallback {
            break;
        }
        needs_fallback |= !infer_for(target, AlignmentPolicy::Aligned)?
            .assumptions
            .is_empty();
    }
    if needs_fallback {
        for &target in &targets {
            let inference = infer_for(target, AlignmentPolicy::Natural)?;
            infer::report_if_requested(&inference);
            variants.push(variant(inference, "unaligned"));
        }
    }
    Ok(variants)
}

/// The [`Target::Amdgpu`] variant of `nvidia` (an NVIDIA variant whose body uses an
/// NVIDIA-only instruction: the Ampere one's `ldmatrix`, which a plan for AMD replaces by vector
/// loads, a dot's `mma.sync` and `cp.async`, replaced by `v_mfma` and plain loads; or, in a
/// kernel with a Hopper body alone, its `wgmma` and TMA), inferred from `kernel` (the
/// specialisation before inference) under the same policy. An error when no plan for AMD
/// exists (a dot `infer::dot::mfma_choice` refuses, shared memory above the LDS).
pub(crate) fn amdgpu_variant(kernel: &Kernel, nvidia: &Variant) -> Result<Variant, syn::Error> {
    let mut k = kernel.clone();
    k.target = Target::Amdgpu;
    let inference = infer::infer_with(&mut k, nvidia.policy)?;
    infer::report_if_requested(&inference);
    Ok(variant(inference, nvidia.suffix))
}

/// Whether a variant whose first NVIDIA body uses the NVIDIA-only instructions `nvidia_only`
/// and `shared_bytes` of shared memory may get another body from plans for AMD: it uses an
/// NVIDIA-only instruction, or shared memory (a conversion, reduction or scan there may be a
/// shuffle of a 64-lane wave on AMD, and its swizzles are planned for AMD's LDS banks). Every
/// body set decides it alike (no plan for AMD is needed), so the form of the NVIDIA entries
/// does not depend on which bodies a build makes.
pub(crate) fn may_plan_otherwise_for_amd(nvidia_only: &[&'static str], shared_bytes: u32) -> bool {
    !nvidia_only.is_empty() || shared_bytes > 0
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
