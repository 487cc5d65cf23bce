//! What `#[tile_kernel]` expands to: a module named after the kernel holding, per
//! specialisation (and per alignment variant), the nvptx64 entry point (and the amdgpu one) and
//! its host build, plus the typed host launcher.
//!
//! ```text
//! #vis mod softmax {
//!     // per specialisation × variant: PTX entry `softmax__BLOCK_1024` (just `softmax` when the
//!     // kernel has one specialisation and one variant; `…__unaligned` for the variant that
//!     // assumes nothing of the arguments' alignment)
//!     #[cfg(target_arch = "nvptx64")] #[no_mangle]
//!     pub unsafe extern "ptx-kernel" fn softmax__BLOCK_1024(out: Ptr<f32>, …) { … }
//!     // the same body as the kernel of an AMD code object, when it uses no NVIDIA-only
//!     // instruction (`expand::ptx_entries`)
//!     #[cfg(target_arch = "amdgpu")] #[no_mangle]
//!     pub unsafe extern "gpu-kernel" fn softmax__BLOCK_1024(out: Ptr<f32>, …) { … }
//!     #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
//!     pub unsafe fn softmax__BLOCK_1024(out: Ptr<f32>, …) { … }          // the emulator runs it
//!     // host only:
//!     pub type Args = (Ptr<f32>, …);                                   // the parameters
//!     // (beyond 12 parameters: `pub struct Args { pub out: Ptr<f32>, … }` implementing
//!     // `tessera::launch::KernelArgs`, which tuples implement up to 12 elements)
//!     pub struct Consts { pub BLOCK: usize }                           // the const parameters
//!     pub const NUM_WARPS: u32;
//!     pub static SPECIALISATIONS: [tessera::tile::Specialisation<Args>; N];
//!     pub fn specialisation(consts: &Consts, args: &Args) -> Result<&'static Specialisation<Args>, LaunchError>;
//!     pub fn launch(device: &Device, module: &Module, consts: Consts, grid: impl Grid<Consts>, out: Ptr<f32>, …)
//!         -> Result<LaunchReport, LaunchError>;
//!     pub fn emulate(consts: Consts, grid: impl Grid<Consts>, out: Ptr<f32>, …)
//!         -> Result<EmulatorReport, LaunchError>;
//! }
//! ```
//!
//! With `Tensor` parameters (`expand::tensor_params`) the module holds `Sizes`, a `launch` and
//! `launch_sized` on a stream taking the tensors, and `args` (the tensors' `Args`) instead of
//! the `launch` and `emulate` above.
//!
//! A kernel with type parameters (`#[tile_kernel(T = [f16, f32])] fn k<T>(..)`) holds the items
//! above from `Args` on once per assignment of element types, in a submodule `k::T_f16`, and
//! `Consts`, `EXPLAIN`, a trait `Listed_T` per type parameter (implemented by its listed types)
//! and `launch`/`emulate` generic over the type parameters at the top: they call the submodule
//! of the arguments' element types. When the attribute lists several `num_warps`, `Consts` has a
//! field `num_warps` that selects like a const value, and `NUM_WARPS` is omitted; several
//! `num_stages` likewise give `Consts` a field `num_stages`.
//!
//! With `autotune(…)` in the attribute, [`crate::autotune`] adds `TUNER`, `CANDIDATES`,
//! `launch_tuned` and `launch_tuned_with` beside `launch` (and generic ones at the top).
//!
//! `specialisation` picks the specialisation of the const values, then the first of its variants
//! whose alignment assumptions (from the axis analysis) hold for the arguments; when none does,
//! the error names the argument and the assumption. The block is `32 × num_warps` threads, the
//! dynamic shared memory what the lowering allocated. (`consts` is omitted from `launch` and
//! `emulate` when the kernel has no const parameter; `launch`/`emulate` exist only when every
//! parameter type can be passed by the launcher: `Ptr<T>`, `i32`, `u32`, `i64`, `u64`, `f32`.)
//!
//! Names: the launcher's own arguments and locals (`device`, `module`, `consts`, `grid`,
//! `args`, `spec`) are hygienic (`Span::mixed_site`), so kernel parameters of any name neither
//! repeat nor shadow them. The module's items other than its entries are [`MODULE_ITEMS`]; a
//! kernel named like one of them (its single entry would clash), or `Ptr` or `tessera` (the
//! module would clash with the import or the crate), is rejected at its name.

use crate::autotune::{generic_tuned, tuned_items, TunedParams, TunedParts};
use crate::frontend::{analyze_kernel, rejected};
use crate::infer::AssumptionKind;
use crate::ir::{Kernel, Target};
use crate::lower::{elem_type, lower_kernel, Facts};
use crate::parse::{spelled_parameter_types, substitute_types, Autotune};
use crate::tile_fn;
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, ToTokens};

mod generic_launcher;
mod own_names;
pub(crate) mod ptx_entries;
mod requires;
mod spec_entries;
mod tensor_maps;
pub(crate) mod tensor_params;
pub(crate) mod variants;
use generic_launcher::generic_launcher;
pub(crate) use own_names::{consts_param_arg, Own};
use spec_entries::SpecEntry;
use tensor_params::{param_accesses, tensor_args, tensor_launcher, TensorLauncher, TensorParam};
pub use variants::Variant;
pub(crate) use variants::{prepare, BodySet};

pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    tile_fn::expand_with(attr, item, &[], expand_kernel)
}

/// The expansion of a kernel whose helpers are inlined (`crate::tile_fn`), with the bodies of
/// the target `TESSERA_EXPAND_TARGET` names (every target's when unset: [`BodySet::from_env`]).
pub(crate) fn expand_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match BodySet::from_env() {
        Ok(body_set) => expand_kernel_for(attr, item, body_set),
        Err(message) => syn::Error::new(Span::call_site(), message).to_compile_error(),
    }
}

/// [`expand_kernel`] with the bodies of `body_set`.
pub(crate) fn expand_kernel_for(
    attr: TokenStream,
    item: TokenStream,
    body_set: BodySet,
) -> TokenStream {
    let (item, tensors) = match tensor_params::desugar(item.clone()) {
        Ok(desugared) => desugared,
        Err(error) => return rejected(&error, syn::parse2(item).ok().as_ref()),
    };
    let function: Option<syn::ItemFn> = syn::parse2(item.clone()).ok();
    let name_error = function
        .as_ref()
        .and_then(|f| reserved_name_error(&f.sig.ident));
    match (analyze_kernel(attr, item), name_error) {
        (Err(mut errors), Some(name)) => {
            errors.combine(name);
            rejected(&errors, function.as_ref())
        }
        (Err(errors), None) | (Ok(_), Some(errors)) => rejected(&errors, function.as_ref()),
        (Ok((kernels, autotune)), None) => {
            let Some(function) = function else {
                // `analyze` only succeeds on a function.
                return quote!(::core::compile_error!("#[tile_kernel] applies to a function"););
            };
            let prepare_built = |kernel: Kernel| prepare(kernel, body_set);
            match generate_kernel(
                &function,
                kernels,
                &prepare_built,
                body_set,
                autotune,
                tensors,
            ) {
                Ok(tokens) => tokens,
                Err(error) => rejected(&error, Some(&function)),
            }
        }
    }
}

/// The items of a kernel's module other than its entry points (see the module docs): an entry
/// named like one of them would clash with it.
pub(crate) const MODULE_ITEMS: &[&str] = &[
    "Args",
    "Consts",
    "NUM_WARPS",
    "EXPLAIN",
    "SPECIALISATIONS",
    "specialisation",
    "launch",
    "emulate",
    "Sizes",
    "launch_sized",
    "args",
];

/// Names the kernel's module cannot take, with what the module would clash with: the
/// parameter type the kernel's file imports, and the crate the generated code names.
const TAKEN_MODULE_NAMES: &[(&str, &str)] = &[
    ("Ptr", "`tessera::Ptr`"),
    ("tessera", "the crate `tessera`"),
];

/// The error for a kernel whose name clashes with a generated item, at the name.
fn reserved_name_error(name: &Ident) -> Option<syn::Error> {
    let text = name.to_string();
    let clash = if MODULE_ITEMS.contains(&text.as_str()) {
        let items: Vec<String> = MODULE_ITEMS.iter().map(|i| format!("`{i}`")).collect();
        format!(
            "the kernel's module holds a generated item of that name (its items are {})",
            items.join(", ")
        )
    } else {
        let (_, with) = TAKEN_MODULE_NAMES.iter().find(|(n, _)| *n == text)?;
        format!("the kernel becomes a module of that name, which clashes with {with}")
    };
    let message =
        format!("#[tile_kernel]: a kernel cannot be named `{text}`: {clash}; rename the kernel");
    Some(syn::Error::new(name.span(), message))
}

/// Adds the messages of `new` to `errors`, each once: the same mistake found again in another
/// specialisation or variant (same text, same code) is not repeated.
fn add_errors(errors: &mut Option<syn::Error>, new: syn::Error) {
    for e in new {
        let seen = errors.as_ref().is_some_and(|all| {
            all.clone().into_iter().any(|old| {
                old.to_string() == e.to_string()
                    && format!("{:?}", old.span()) == format!("{:?}", e.span())
            })
        });
        match errors {
            _ if seen => {}
            Some(all) => all.combine(e),
            None => *errors = Some(e),
        }
    }
}

/// A specialisation's const values and the indices of its variants in `SPECIALISATIONS`.
type SpecGroup = (Vec<(String, i128)>, Vec<usize>);

/// The entry name of a specialisation's variant: the kernel's name, then (when it has several
/// specialisations) `__T_f16` per type parameter, `__BLOCK_1024` per const parameter,
/// `__num_warps_8` when `num_warps` varies and `__num_stages_3` when `num_stages` varies, then
/// `__unaligned` for the fallback variant.
fn entry_name(kernel: &Kernel, axes: &Axes, suffix: &str) -> Ident {
    let mut name = kernel.name.to_string();
    if axes.several_specs {
        for (t, s) in &kernel.types {
            name.push_str(&format!("__{t}_{}", s.name()));
        }
        for (c, v) in &kernel.consts {
            name.push_str(&format!("__{c}_{}", v.to_string().replace('-', "m")));
        }
        if axes.num_warps_varies {
            name.push_str(&format!("__num_warps_{}", kernel.num_warps));
        }
        if axes.num_stages_varies {
            name.push_str(&format!("__num_stages_{}", kernel.num_stages));
        }
    }
    if !suffix.is_empty() {
        name.push_str("__");
        name.push_str(suffix);
    }
    Ident::new(&name, kernel.name.span())
}

/// Tuples implement `tessera::launch::KernelArgs` up to this many elements; a kernel with more
/// parameters gets a struct `Args`.
const MAX_TUPLE_ARGS: usize = 12;

/// Whether the launcher can pass a parameter of this type (`tessera::launch::KernelArg`).
fn launchable(dtype: DType) -> bool {
    matches!(
        dtype,
        DType::Ptr(_)
            | DType::Scalar(Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::F32)
    )
}

/// What tells a kernel's specialisations apart, and whether they are autotuned.
struct Axes {
    several_specs: bool,
    num_warps_varies: bool,
    num_stages_varies: bool,
    autotune: Option<Autotune>,
    /// The kernel's `Tensor` parameters (desugared).
    tensors: Vec<TensorParam>,
}

/// The const values that select a specialisation: the const parameters' values, then
/// `num_warps` and `num_stages` when they vary (fields of `Consts` then).
fn selecting_values(kernel: &Kernel, axes: &Axes) -> Vec<(String, i128)> {
    let mut values = kernel.consts.clone();
    if axes.num_warps_varies {
        values.push(("num_warps".to_string(), i128::from(kernel.num_warps)));
    }
    if axes.num_stages_varies {
        values.push(("num_stages".to_string(), i128::from(kernel.num_stages)));
    }
    values
}

/// The specialisations of one assignment of element types to the type parameters.
type TypeGroup = (Vec<(String, Scalar)>, Vec<Kernel>);

/// The submodule holding the specialisations of one assignment of element types: `T_f16`,
/// `T_f16__Acc_f32`.
fn types_module(types: &[(String, Scalar)]) -> Ident {
    let parts: Vec<String> = types
        .iter()
        .map(|(t, s)| format!("{t}_{}", s.name()))
        .collect();
    Ident::new(&parts.join("__"), Span::call_site())
}

/// Everything the macro emits for a checked kernel (see the module docs); `prepare` runs layout
/// inference on one specialisation. A kernel with type parameters gets one submodule per
/// assignment of element types ([`types_module`]) holding that assignment's entries and
/// launcher, and a launcher generic over the types that calls the submodule of the arguments'
/// types.
#[cfg_attr(not(test), allow(dead_code))] // the tests' entry; the macro calls `generate_kernel`
pub fn generate(
    function: &syn::ItemFn,
    kernels: Vec<Kernel>,
    prepare: &dyn Fn(Kernel) -> Result<Vec<Variant>, syn::Error>,
) -> Result<TokenStream, syn::Error> {
    generate_kernel(function, kernels, prepare, BodySet::All, None, Vec::new())
}

/// [`generate`], with the items of `autotune(…)` when it is given (`crate::autotune`), and the
/// tensor launcher when the kernel has `Tensor` parameters (`tensors`, desugared by
/// [`tensor_params::desugar`]); `body_set` says which targets' bodies the build compiles (those
/// `prepare` gives variants for).
pub fn generate_kernel(
    function: &syn::ItemFn,
    kernels: Vec<Kernel>,
    prepare: &dyn Fn(Kernel) -> Result<Vec<Variant>, syn::Error>,
    body_set: BodySet,
    autotune: Option<Autotune>,
    tensors: Vec<TensorParam>,
) -> Result<TokenStream, syn::Error> {
    let Some(first) = kernels.first() else {
        return Err(syn::Error::new(
            function.sig.ident.span(),
            "#[tile_kernel]: the kernel has no specialisation",
        ));
    };
    let name = first.name.clone();
    let num_warps = first.num_warps;
    let axes = Axes {
        several_specs: kernels.len() > 1,
        num_warps_varies: kernels.iter().any(|k| k.num_warps != num_warps),
        num_stages_varies: kernels.iter().any(|k| k.num_stages != first.num_stages),
        autotune,
        tensors,
    };
    let vis = &function.vis;
    let docs: Vec<&syn::Attribute> = function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let const_params = const_params(function);
    let mut const_fields: Vec<TokenStream> = const_params
        .iter()
        .map(|(n, t)| {
            let doc = format!("The value of the const parameter `{n}`.");
            quote!(#[doc = #doc] pub #n: #t)
        })
        .collect();
    if axes.num_warps_varies {
        const_fields.push(quote!(
            /// Warps per program: one of the attribute's `num_warps` values.
            pub num_warps: u32
        ));
    }
    if axes.num_stages_varies {
        const_fields.push(quote!(
            /// Software-pipelining depth: one of the attribute's `num_stages` values.
            pub num_stages: u32
        ));
    }

    let mut explain = String::new();
    let (items, launcher) = if first.types.is_empty() {
        let written = spelled_parameter_types(function, &[], &crate::lower::scalar_type);
        let items = specialisation_items(
            function,
            &written,
            kernels,
            prepare,
            body_set,
            &axes,
            &mut explain,
        )?;
        (items, quote!())
    } else {
        let mut groups: Vec<TypeGroup> = Vec::new();
        for kernel in kernels {
            match groups.iter_mut().find(|(t, _)| *t == kernel.types) {
                Some((_, group)) => group.push(kernel),
                None => groups.push((kernel.types.clone(), vec![kernel])),
            }
        }
        let mut items = TokenStream::new();
        let mut errors: Option<syn::Error> = None;
        for (types, group) in &groups {
            let typed = substitute_types(function, types);
            let written = spelled_parameter_types(function, types, &crate::lower::scalar_type);
            let typed_items = specialisation_items(
                &typed,
                &written,
                group.clone(),
                prepare,
                body_set,
                &axes,
                &mut explain,
            );
            match typed_items {
                Ok(inner) => {
                    let module = types_module(types);
                    let doc = format!(
                        "The specialisations of `{name}` with {}.",
                        describe_types(types)
                    );
                    items.extend(quote! {
                        #[doc = #doc]
                        pub mod #module {
                            #[allow(unused_imports)]
                            use super::*;
                            #inner
                        }
                    });
                }
                Err(e) => add_errors(&mut errors, e),
            }
        }
        if let Some(e) = errors {
            return Err(e);
        }
        let launcher = generic_launcher(function, &name, &groups, &axes, !const_fields.is_empty());
        (items, launcher)
    };

    let num_warps_item = if axes.num_warps_varies {
        quote!()
    } else {
        let nw = Literal::u32_unsuffixed(num_warps);
        quote! {
            /// Warps per program.
            pub const NUM_WARPS: u32 = #nw;
        }
    };
    let explain = Literal::string(&explain);
    let guard = body_set.guard();
    Ok(quote! {
        #(#docs)*
        #[allow(non_snake_case, non_upper_case_globals, non_camel_case_types, dead_code)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            ::tessera::declare_dynamic_shared!();

            #guard

            /// The values of the kernel's `const` parameters (and `num_warps` when the
            /// attribute lists several).
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            #[derive(Clone, Copy, Debug)]
            pub struct Consts { #(#const_fields),* }

            #num_warps_item

            /// The layout inference of every specialisation and variant (what `TESSERA_EXPLAIN`
            /// prints at build time), each after a line
            /// `entry NAME` (its PTX entry).
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            pub const EXPLAIN: &str = #explain;

            #items

            #launcher
        }
    })
}

/// `T = f16, Acc = f32`.
fn describe_types(types: &[(String, Scalar)]) -> String {
    let parts: Vec<String> = types
        .iter()
        .map(|(t, s)| format!("{t} = {}", s.name()))
        .collect();
    parts.join(", ")
}

/// The entry points of `kernels` (specialisations sharing their element types) and their host
/// side: `Args`, `SPECIALISATIONS`, `specialisation`, `launch`, `emulate` (see the module docs);
/// appends their explain texts to `explain`.
fn specialisation_items(
    function: &syn::ItemFn,
    written: &[TokenStream],
    kernels: Vec<Kernel>,
    prepare: &dyn Fn(Kernel) -> Result<Vec<Variant>, syn::Error>,
    body_set: BodySet,
    axes: &Axes,
    explain: &mut String,
) -> Result<TokenStream, syn::Error> {
    let Some(first) = kernels.first() else {
        return Ok(TokenStream::new());
    };
    let name = first.name.clone();
    let types = first.types.clone();
    let first_requires = first.requires.clone();
    let targets = if first.sm90a_only() {
        quote!(::tessera::KernelTargets::Sm90aOnly)
    } else {
        quote!(::tessera::KernelTargets::Every)
    };
    let params: Vec<(Ident, DType)> = first
        .params
        .iter()
        .map(|p| {
            (
                Ident::new(&p.name, Span::call_site()),
                first.ty(p.value).dtype,
            )
        })
        .collect();
    let param_names: Vec<&Ident> = params.iter().map(|(n, _)| n).collect();
    let accesses = param_accesses(first);
    // The parameter types as the user wrote them (so the user's imports are used), the type
    // parameters spelled by the macro (the user's scope need not import element types);
    // else ours.
    let param_types: Vec<TokenStream> = if written.len() == params.len() {
        written.to_vec()
    } else {
        params.iter().map(|(_, d)| elem_type(*d)).collect()
    };
    let const_params = const_params(function);

    let mut entries = TokenStream::new();
    // One of each module item (user-layout checks) across specialisations and variants.
    let mut module_items: Vec<(String, TokenStream)> = Vec::new();
    let mut specs: Vec<SpecEntry> = Vec::new();
    // The amdgpu bodies made into kernels so far (their tokens as text), with the entry and
    // tensor-map count of the variant that has each: a later variant with the same body runs
    // that kernel (AMD code is not pipelined, so variants differing in `num_stages` alone
    // have the same).
    let mut amdgpu_kernels: Vec<(String, Ident, usize)> = Vec::new();
    // Per specialisation: (const values, indices into `specs` of its variants, in order).
    let mut groups: Vec<SpecGroup> = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for mut kernel in kernels {
        tensor_params::mark_unit_strides(&mut kernel, &axes.tensors);
        let consts = selecting_values(&kernel, axes);
        let num_warps = kernel.num_warps;
        // The specialisation before inference, for an amdgpu body of its own.
        let source = kernel.clone();
        let variants = match prepare(kernel) {
            Ok(v) => v,
            Err(e) => {
                add_errors(&mut errors, e);
                continue;
            }
        };
        let mut indices = Vec::new();
        let mut suffixes: Vec<&'static str> = Vec::new();
        for v in &variants {
            if !suffixes.contains(&v.suffix) {
                suffixes.push(v.suffix);
            }
        }
        let one_variant = suffixes.len() == 1;
        for &suffix in &suffixes {
            // The targets' bodies of this variant (Ampere first), lowered.
            let mut bodies: Vec<ptx_entries::TargetBody> = Vec::new();
            let mut facts: Option<Facts> = None;
            let mut entry = None;
            // The tensor maps of the variant's TMA copies (its sm_90a body's).
            let mut maps: Vec<crate::lower::TensorMapUse> = Vec::new();
            // The variants of this suffix, lowered; then, when the first NVIDIA body (Ampere's,
            // else a Hopper-only kernel's) uses an NVIDIA-only instruction a plan for AMD
            // avoids, the `Target::Amdgpu` variant (the amdgpu entry's own body).
            let amdgpu: Option<Variant>;
            let mut lowered_variants = Vec::new();
            for variant in variants.iter().filter(|v| v.suffix == suffix) {
                match lower_kernel(&variant.kernel, &variant.facts) {
                    Ok(l) => lowered_variants.push((variant, l)),
                    Err(e) => add_errors(&mut errors, e),
                }
            }
            // A plan for AMD that cannot be made or rendered (its shared memory above the
            // 64 KiB of LDS, say) leaves a variant with an NVIDIA-only instruction without an
            // amdgpu kernel: its launch on AMD is refused (`LaunchError::NvidiaOnly`), the
            // NVIDIA build unaffected; any other variant runs its NVIDIA body there.
            let amdgpu_lowered = lowered_variants
                .first()
                .filter(|_| body_set.amdgpu())
                .filter(|(_, l)| {
                    variants::may_plan_otherwise_for_amd(&l.nvidia_only, l.shared_bytes)
                })
                .and_then(|(v, nvidia)| {
                    let amd = variants::amdgpu_variant(&source, v).ok()?;
                    let lowered = lower_kernel(&amd.kernel, &amd.facts).ok()?;
                    // Without an NVIDIA-only instruction, an own body only where the plans
                    // for AMD differ (its waves, its LDS banks).
                    let differs = !nvidia.nvidia_only.is_empty()
                        || lowered.body.to_string() != nvidia.body.to_string();
                    differs.then_some((amd, lowered))
                });
            let amd_lowered;
            (amdgpu, amd_lowered) = match amdgpu_lowered {
                Some((v, l)) => (Some(v), Some(l)),
                None => (None, None),
            };
            if let (Some(v), Some(l)) = (&amdgpu, amd_lowered) {
                lowered_variants.push((v, l));
            }
            for (variant, lowered) in lowered_variants {
                for item in &lowered.module_items {
                    let text = item.to_string();
                    if !module_items.iter().any(|(t, _)| *t == text) {
                        module_items.push((text, item.clone()));
                    }
                }
                let name = entry_name(&variant.kernel, axes, if one_variant { "" } else { suffix });
                if variant.kernel.target == Target::Amdgpu {
                    explain.push_str(&format!("entry {name} (amdgpu)\n{}", variant.explain));
                } else {
                    explain.push_str(&format!("entry {name}\n{}", variant.explain));
                }
                entry = Some(name);
                for m in lowered.tensor_maps {
                    if !maps.contains(&m) {
                        maps.push(m);
                    }
                }
                bodies.push(ptx_entries::TargetBody {
                    target: variant.kernel.target,
                    body: lowered.body,
                    shared_bytes: lowered.shared_bytes,
                    nvidia_only: lowered.nvidia_only,
                });
                // The launcher checks every target's assumptions (it does not know which PTX
                // the device runs).
                match &mut facts {
                    None => facts = Some(variant.facts.clone()),
                    Some(f) => {
                        for a in &variant.facts.assumptions {
                            if !f.assumptions.contains(a) {
                                f.assumptions.push(*a);
                            }
                        }
                    }
                }
            }
            let (Some(entry), Some(facts)) = (entry, facts) else {
                continue;
            };
            // An amdgpu kernel's key: its body and block size (its workgroup bound).
            let amdgpu_text =
                ptx_entries::amdgpu_body(&bodies).map(|b| format!("{num_warps} warps: {b}"));
            let shared_kernel = amdgpu_text
                .as_ref()
                .and_then(|text| amdgpu_kernels.iter().find(|(t, _, _)| t == text));
            entries.extend(ptx_entries::entry_items(
                &entry,
                &param_names,
                &param_types,
                &bodies,
                maps.len(),
                shared_kernel.map(|(_, owner, maps)| ptx_entries::SharedAmdgpuKernel {
                    entry: owner,
                    tensor_maps: *maps,
                }),
                32 * num_warps,
            ));
            let amdgpu_entry = shared_kernel.map(|(_, owner, _)| owner.clone());
            if let Some(owner) = &amdgpu_entry {
                explain.push_str(&format!(
                    "amdgpu: runs the code object's kernel {owner} (the same amdgpu body)\n"
                ));
            }
            if let (Some(text), None) = (amdgpu_text, &amdgpu_entry) {
                amdgpu_kernels.push((text, entry.clone(), maps.len()));
            }
            let shared_of = |target: Target| {
                bodies
                    .iter()
                    .find(|b| b.target == target)
                    .map(|b| b.shared_bytes)
            };
            let nvidia = shared_of(Target::Ampere).or(shared_of(Target::Hopper));
            let shared = [
                nvidia.unwrap_or(0),
                shared_of(Target::Hopper).or(nvidia).unwrap_or(0),
                shared_of(Target::Amdgpu).or(nvidia).unwrap_or(0),
            ];
            let nvidia_only = ptx_entries::amdgpu_blockers(&bodies);
            indices.push(specs.len());
            specs.push(SpecEntry {
                entry,
                consts: consts.clone(),
                shared,
                facts,
                num_warps,
                maps,
                nvidia_only,
                amdgpu_entry,
            });
        }
        groups.push((consts, indices));
    }
    if let Some(e) = errors {
        return Err(e);
    }

    let module_checks: Vec<&TokenStream> = module_items.iter().map(|(_, t)| t).collect();

    // Host side.
    let Own {
        device,
        module,
        consts,
        grid,
        args,
        spec,
        select,
        ..
    } = Own::names();
    // Tuples implement `KernelArgs` up to `MAX_TUPLE_ARGS` elements; beyond, `Args` is a struct
    // with one field per parameter.
    let as_struct = params.len() > MAX_TUPLE_ARGS;
    let arg_fields: Vec<TokenStream> = param_names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            if as_struct {
                quote!(#name)
            } else {
                let i = syn::Index::from(i);
                quote!(#i)
            }
        })
        .collect();
    let args_value = if as_struct {
        quote!(Args { #(#param_names),* })
    } else {
        quote!((#(#param_names,)*))
    };
    let n_specs = specs.len();
    let spec_items = specs
        .iter()
        .map(|spec| spec_entries::specialisation_item(spec, &targets, &args, &arg_fields));
    let kernel_str = name.to_string();
    let mut selecting: Vec<Ident> = const_params.iter().map(|(n, _)| n.clone()).collect();
    if axes.num_warps_varies {
        selecting.push(Ident::new("num_warps", Span::call_site()));
    }
    if axes.num_stages_varies {
        selecting.push(Ident::new("num_stages", Span::call_site()));
    }
    let wanted = selecting.iter().map(|n| {
        let s = n.to_string();
        quote!((#s, #consts.#n as i128))
    });
    // The assumption checks of each variant.
    let checks = specs.iter().map(|SpecEntry { facts, maps, .. }| {
        let mut list = Vec::new();
        list.extend(tensor_maps::map_check(&kernel_str, &args, maps));
        for &(param, kind) in &facts.assumptions {
            let Some((pname, _)) = params.get(param) else {
                continue;
            };
            let pstr = pname.to_string();
            let field = &arg_fields[param];
            list.push(match kind {
                AssumptionKind::PointerAligned { bytes } => {
                    let d = Literal::u64_unsuffixed(bytes);
                    quote!(::tessera::tile::check_aligned(#kernel_str, #pstr, #args.#field.addr(), #d))
                }
                AssumptionKind::IntDivisible { by } => {
                    let d = Literal::u64_unsuffixed(by);
                    quote!(::tessera::tile::check_divisible(#kernel_str, #pstr, #args.#field as i128, #d))
                }
                AssumptionKind::IntEquals { value } => {
                    let v = Literal::i128_unsuffixed(value);
                    quote!(::tessera::tile::check_equal(#kernel_str, #pstr, #args.#field as i128, #v))
                }
            });
        }
        quote!(|#args: &Args| -> ::core::result::Result<(), ::tessera::launch::LaunchError> {
            #(#list?;)*
            Ok(())
        })
    });
    let group_arms = groups.iter().map(|(values, indices)| {
        let conds = values.iter().map(|(c, v)| {
            let ident = Ident::new(c, Span::call_site());
            let v = Literal::i128_unsuffixed(*v);
            quote!(#consts.#ident as i128 == #v)
        });
        let idx = indices.iter().map(|&i| Literal::usize_unsuffixed(i));
        quote!(if true #(&& #conds)* { return pick(&[#(#idx),*]); })
    });
    let has_consts = !selecting.is_empty();
    let (consts_param, _) = consts_param_arg(has_consts);
    let consts_value = if has_consts {
        quote!()
    } else {
        quote!(let #consts = Consts {};)
    };
    let launchable_params = params.iter().all(|(_, d)| launchable(*d));
    let args_type = if as_struct {
        // A struct of the parameters: `KernelArgs` for it when the launcher can pass them.
        let kernel_args = if launchable_params {
            quote! {
                #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
                impl ::tessera::launch::KernelArgs for Args {
                    fn kernel_params(&self) -> ::tessera::launch::KernelParams {
                        let mut params = ::tessera::launch::KernelParams::new();
                        #(params.push(::tessera::launch::KernelArg::kernel_param(&self.#param_names));)*
                        params
                    }
                }
            }
        } else {
            quote!()
        };
        quote! {
            /// The kernel's parameters, in order (a struct: tuples implement
            /// `tessera::launch::KernelArgs` up to 12 elements).
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            #[derive(Clone, Copy, Debug)]
            pub struct Args { #(pub #param_names: #param_types),* }

            #kernel_args
        }
    } else {
        quote! {
            /// The kernel's parameters, in order.
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            pub type Args = (#(#param_types,)*);
        }
    };
    let tensor_launch_args = (!axes.tensors.is_empty()).then(|| {
        let typed: Vec<(&Ident, &TokenStream)> = param_names
            .iter()
            .copied()
            .zip(param_types.iter())
            .collect();
        // In an element-type submodule a tensor of `T` is a tensor of the submodule's type.
        let tensors: Vec<TensorParam> = axes
            .tensors
            .iter()
            .map(|t| {
                let mut t = t.clone();
                let written = t.elem.to_token_stream().to_string();
                if let Some((_, s)) = types.iter().find(|(name, _)| *name == written) {
                    let spelled = elem_type(DType::Scalar(*s));
                    t.elem = syn::parse_quote!(#spelled);
                }
                t
            })
            .collect();
        let args = tensor_args(&kernel_str, &tensors, &typed, &accesses);
        (tensors, args)
    });
    let launcher = if let Some((tensors, args)) = &tensor_launch_args {
        tensor_launcher(&TensorLauncher {
            args,
            consts_param: consts_param.clone(),
            consts_value: consts_value.clone(),
            args_value: args_value.clone(),
            define_sizes: types.is_empty().then_some(tensors.as_slice()),
        })
    } else if launchable_params {
        launch_and_emulate(
            [
                "Launches the kernel on `device` (GPU or emulator) from `module` (the PTX of the \
                 kernel crate): picks the specialisation (and alignment variant), block \
                 `32 × NUM_WARPS` threads, the kernel's dynamic shared memory.",
                "Runs the kernel on the CPU emulator directly (no PTX module needed); pointers \
                 must be host addresses of live memory (e.g. emulator `DeviceBuffer`s).",
            ],
            &[],
            &consts_param,
            &quote!(#(#param_names: #param_types),*),
            [
                quote! {
                    #consts_value
                    let #args: Args = #args_value;
                    let #spec = #select(&#consts, &#args)?;
                    ::tessera::tile::launch_on(#device, #module, #spec, #grid.grid(&#consts), #args)
                },
                quote! {
                    #consts_value
                    let #args: Args = #args_value;
                    let #spec = #select(&#consts, &#args)?;
                    ::tessera::tile::emulate(#spec, #grid.grid(&#consts), #args)
                },
            ],
        )
    } else {
        quote!()
    };
    let tuned_params = match &tensor_launch_args {
        Some((_, args)) => Some(TunedParams::Tensors(args)),
        None if launchable_params => Some(TunedParams::Plain {
            names: param_names.clone(),
            types: param_types.clone(),
        }),
        None => None,
    };
    let tuned = match (&axes.autotune, tuned_params) {
        (Some(autotune), Some(params)) => {
            let mut kernel = kernel_str.clone();
            if !types.is_empty() {
                kernel.push_str(&format!("[{}]", describe_types(&types)));
            }
            tuned_items(&TunedParts {
                function,
                kernel,
                candidates: groups.iter().map(|(values, _)| values.clone()).collect(),
                args_value: args_value.clone(),
                autotune,
                params,
            })
        }
        _ => quote!(),
    };
    let fields: Vec<(&Ident, TokenStream)> = param_names
        .iter()
        .copied()
        .zip(arg_fields.iter().cloned())
        .collect();
    let requirement_checks = requires::requirement_checks(
        &kernel_str,
        &first_requires,
        &requires::Values {
            args: &args,
            consts: &consts,
            fields: &fields,
        },
    );
    let n_lit = Literal::usize_unsuffixed(n_specs);
    Ok(quote! {
        #(#module_checks)*

        #entries

        #args_type

        /// Every compiled specialisation and alignment variant.
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        pub static SPECIALISATIONS: [::tessera::tile::Specialisation<Args>; #n_lit] = [#(#spec_items),*];

        /// The specialisation of `consts` and the first of its variants whose alignment
        /// assumptions hold for `args` (else the error of the last variant's check).
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        pub fn specialisation(
            #consts: &Consts,
            #args: &Args,
        ) -> ::core::result::Result<&'static ::tessera::tile::Specialisation<Args>, ::tessera::launch::LaunchError> {
            #requirement_checks
            let checks: [fn(&Args) -> ::core::result::Result<(), ::tessera::launch::LaunchError>; #n_lit] = [#(#checks),*];
            let pick = |indices: &[usize]| {
                let mut last = ::core::option::Option::None;
                for &i in indices {
                    match checks[i](#args) {
                        Ok(()) => return Ok(&SPECIALISATIONS[i]),
                        Err(e) => last = ::core::option::Option::Some(e),
                    }
                }
                Err(last.unwrap_or_else(|| ::tessera::launch::LaunchError::InvalidConfig {
                    kernel: #kernel_str.to_string(),
                    reason: "no variant".to_string(),
                }))
            };
            #(#group_arms)*
            let wanted: &[(&str, i128)] = &[#(#wanted),*];
            ::tessera::tile::select(#kernel_str, &SPECIALISATIONS, wanted)
        }

        #launcher

        #tuned
    })
}

/// The host's `launch` (on a `Device`, from a `Module`) and `emulate` (on the CPU emulator) of
/// a kernel without tensor parameters: generic over `bounds`, taking the const values
/// (`consts_param`, empty for a kernel without them), the grid and `params`; `docs` and
/// `bodies` are `launch`'s and `emulate`'s.
fn launch_and_emulate(
    docs: [&str; 2],
    bounds: &[TokenStream],
    consts_param: &TokenStream,
    params: &TokenStream,
    bodies: [TokenStream; 2],
) -> TokenStream {
    let Own {
        device,
        module,
        grid,
        ..
    } = Own::names();
    let [launch_doc, emulate_doc] = docs;
    let [launch_body, emulate_body] = bodies;
    quote! {
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = #launch_doc]
        #[allow(clippy::too_many_arguments)]
        pub fn launch<#(#bounds),*>(
            #device: &::tessera::launch::Device,
            #module: &::tessera::launch::Module,
            #consts_param
            #grid: impl ::tessera::tile::Grid<Consts>,
            #params
        ) -> ::core::result::Result<::tessera::launch::LaunchReport, ::tessera::launch::LaunchError> {
            #launch_body
        }

        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = #emulate_doc]
        #[allow(clippy::too_many_arguments)]
        pub fn emulate<#(#bounds),*>(
            #consts_param
            #grid: impl ::tessera::tile::Grid<Consts>,
            #params
        ) -> ::core::result::Result<::tessera::emulator::EmulatorReport, ::tessera::launch::LaunchError> {
            #emulate_body
        }
    }
}

/// The kernel's const parameters (`const BLOCK: usize`), as written.
fn const_params(function: &syn::ItemFn) -> Vec<(Ident, syn::Type)> {
    function
        .sig
        .generics
        .params
        .iter()
        .filter_map(|g| match g {
            syn::GenericParam::Const(c) => Some((c.ident.clone(), c.ty.clone())),
            _ => None,
        })
        .collect()
}
