//! The device entries of one kernel variant and their host twin: one PTX entry per target body
//! (told apart by `cfg(target_feature = "sm_90a")`), the amdgpu entry (the Ampere body, when it
//! uses no NVIDIA-only instruction, else the body planned for AMD when there is one), and the
//! host function the emulator runs. A variant whose amdgpu body equals an earlier variant's runs
//! that one's amdgpu kernel instead of a copy ([`SharedAmdgpuKernel`]). Each is the
//! argument of a `tessera::__tile_kernel_items!` call under its `#[cfg]`, so that a build parses
//! only the bodies of its own target.

use crate::ir::Target;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// One target's lowered body of a variant.
pub(super) struct TargetBody {
    pub target: Target,
    pub body: TokenStream,
    /// Dynamic shared memory the body uses (bytes).
    pub shared_bytes: u32,
    /// The NVIDIA-only instructions the body uses (`crate::lower::LoweredKernel::nvidia_only`).
    pub nvidia_only: Vec<&'static str>,
}

/// The body [`entry_items`] makes the amdgpu entry of, if nothing keeps it out: the one planned
/// for AMD, else the Ampere one (the only one of a kernel without `dot`), else the first.
fn amdgpu_candidate(bodies: &[TargetBody]) -> Option<&TargetBody> {
    let of = |target: Target| bodies.iter().find(|b| b.target == target);
    of(Target::Amdgpu).or(of(Target::Ampere)).or(bodies.first())
}

/// What keeps a variant out of AMD code objects: nothing when [`amdgpu_candidate`] uses no
/// NVIDIA-only instruction, else that body's NVIDIA-only instructions (a variant no plan for
/// AMD exists for: an odd `num_warps` under a `dot`, say).
pub(super) fn amdgpu_blockers(bodies: &[TargetBody]) -> Vec<&'static str> {
    amdgpu_candidate(bodies)
        .map(|b| b.nvidia_only.clone())
        .unwrap_or_default()
}

/// The body of the amdgpu kernel [`entry_items`] makes of `bodies`, when it makes one: the
/// [`amdgpu_candidate`] when it uses no NVIDIA-only instruction.
pub(super) fn amdgpu_body(bodies: &[TargetBody]) -> Option<&TokenStream> {
    amdgpu_candidate(bodies)
        .filter(|b| b.nvidia_only.is_empty())
        .map(|b| &b.body)
}

/// The prefix of the marker static beside each amdgpu kernel: `<prefix><threads>__<kernel>`,
/// the threads of its blocks (`32 · num_warps`). The build helper reads the markers in the
/// module's LLVM IR and bounds each kernel's workgroup size by them
/// (`tessera::build::CodeObjectBuild`, `amdgpu-flat-work-group-size`): without a bound LLVM
/// budgets every kernel's registers for blocks of 1024 threads.
pub(crate) const WORKGROUP_SIZE_MARKER: &str = "__tessera_workgroup_size_";

/// The marker static of the amdgpu kernel `entry`, whose blocks have `threads` threads
/// ([`WORKGROUP_SIZE_MARKER`]); in amdgpu builds only.
fn workgroup_size_marker(entry: &Ident, threads: u32) -> TokenStream {
    let name = quote::format_ident!("{WORKGROUP_SIZE_MARKER}{threads}__{entry}");
    quote! {
        #[cfg(target_arch = "amdgpu")]
        #[no_mangle]
        #[used]
        #[allow(non_upper_case_globals)]
        static #name: u8 = 0;
    }
}

/// The earlier variant of the same kernel whose amdgpu kernel a variant runs, its amdgpu body
/// being the same ([`amdgpu_body`]'s tokens): its entry and how many tensor maps its host
/// function takes after the parameters.
pub(super) struct SharedAmdgpuKernel<'a> {
    pub entry: &'a Ident,
    pub tensor_maps: usize,
}

/// The PTX entry and its host twin for the bodies of one variant: with one body (a kernel
/// without `dot`, or `targets = [sm_80]`), one of each; with an Ampere and a Hopper body, the
/// PTX entry once per target (`cfg(target_feature = "sm_90a")` tells them apart) and a host
/// function that runs the body of the emulated target (`tessera::emulator::running_target`);
/// with a Hopper body alone (`targets = [sm_90a]`), the entry in the sm_90a PTX only (and the
/// amdgpu kernel of the body planned for AMD, when there is one). The
/// Ampere body (the only one of a kernel without `dot`) is also the amdgpu entry when it uses no
/// NVIDIA-only instruction: its warps are half-waves there (`tessera::device`'s contract). A
/// body planned for AMD ([`Target::Amdgpu`]) is the amdgpu entry's, and the host function runs
/// it while the emulator emulates amdgpu. A variant with `shared` has no amdgpu kernel of its
/// own: it runs that one's (`tessera::Kernel::amdgpu_entry`), and its host function calls that
/// one's while the emulator emulates amdgpu.
#[allow(clippy::too_many_arguments)]
pub(super) fn entry_items(
    entry: &Ident,
    param_names: &[&Ident],
    param_types: &[TokenStream],
    bodies: &[TargetBody],
    tensor_maps: usize,
    shared: Option<SharedAmdgpuKernel<'_>>,
    threads: u32,
) -> TokenStream {
    let body_of = |target: Target| bodies.iter().find(|b| b.target == target).map(|b| &b.body);
    let host_doc = quote! {
        /// The host build of the PTX entry of the same name (the emulator runs it).
        ///
        /// # Safety
        /// Only on a simulated GPU thread, with pointers valid for what the kernel
        /// accesses; use the module's `launch`/`emulate`.
    };
    let attrs = quote!(#[allow(unused, non_snake_case, clippy::all)]);
    // The hidden tensor-map parameters of the sm_90a body's TMA copies (its PTX entry and the
    // host function take them; the other targets' entries do not).
    let maps: Vec<TokenStream> = (0..tensor_maps)
        .map(|i| {
            let name = crate::lower::TensorMapUse::param(i);
            quote!(#name: ::tessera::Ptr<::tessera::device::TensorMap>)
        })
        .collect();
    // The PTX entry, in the PTX of the targets `cfg` selects.
    let device_entry = |cfg: TokenStream, body: &TokenStream, maps: &[TokenStream]| {
        quote! {
            #[cfg(#cfg)]
            ::tessera::__tile_kernel_items! {
                #[no_mangle]
                #attrs
                pub unsafe extern "ptx-kernel" fn #entry(#(#param_names: #param_types,)* #(#maps),*) {
                    #body
                }
            }
        }
    };
    let host_entry = |body: TokenStream| {
        quote! {
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            ::tessera::__tile_kernel_items! {
                #attrs
                #host_doc
                pub unsafe fn #entry(#(#param_names: #param_types,)* #(#maps),*) {
                    #body
                }
            }
        }
    };
    // The PTX entry and the kernel of the amdgpu code object, the body written once.
    let nvptx_and_amdgpu_entry = |body: &TokenStream| {
        quote! {
            #[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
            ::tessera::__tile_kernel_entry! {
                #[no_mangle]
                #attrs
                fn #entry(#(#param_names: #param_types),*) {
                    #body
                }
            }
        }
    };
    // The kernel of the amdgpu code object alone.
    let amdgpu_entry = |body: &TokenStream| {
        quote! {
            #[cfg(target_arch = "amdgpu")]
            ::tessera::__tile_kernel_items! {
                #[no_mangle]
                #attrs
                // `Ptr<T>` is `#[repr(transparent)]` over `*mut T`, which the lint accepts.
                #[allow(improper_gpu_kernel_arg)]
                pub unsafe extern "gpu-kernel" fn #entry(#(#param_names: #param_types),*) {
                    #body
                }
            }
        }
    };
    let amdgpu = amdgpu_blockers(bodies).is_empty();
    // Whether the amdgpu kernel is an item apart from the PTX entry even when its body is the
    // NVIDIA one: wherever plans for AMD may differ, so that the PTX entry's tokens do not
    // depend on whether this build made them.
    let amdgpu_apart = bodies.first().is_some_and(|b| {
        super::variants::may_plan_otherwise_for_amd(&b.nvidia_only, b.shared_bytes)
    });
    let amdgpu_body = body_of(Target::Amdgpu).filter(|_| amdgpu);
    // The AMD body of the host function: its own, or a call of the variant's that it shares
    // (the tensor maps are the sm_90a body's, which that call does not run).
    let shared_call = shared.as_ref().map(|s| {
        let owner = s.entry;
        let no_maps = (0..s.tensor_maps).map(|_| quote!(::tessera::Ptr::from_addr(0)));
        quote!(unsafe { #owner(#(#param_names,)* #(#no_maps),*) })
    });
    let host_amdgpu_body = amdgpu_body.map(|body| shared_call.clone().unwrap_or(body.clone()));
    // The host function: the NVIDIA body, or the AMD one while the emulator emulates amdgpu.
    let host_of = |nvidia: TokenStream| match &host_amdgpu_body {
        Some(amd) => quote! {
            if ::tessera::emulator::running_target()
                == ::tessera::emulator::EmulatedTarget::Amdgpu
            {
                #amd
            } else {
                #nvidia
            }
        },
        None => nvidia,
    };
    let sm90a = quote!(all(target_arch = "nvptx64", target_feature = "sm_90a"));
    let items = match (body_of(Target::Ampere), body_of(Target::Hopper)) {
        // `targets = [sm_90a]`: in the sm_90a PTX alone (the launcher refuses other NVIDIA
        // targets), and an amdgpu kernel when a plan for AMD exists.
        (None, Some(hopper)) => vec![
            device_entry(sm90a, hopper, &maps),
            host_entry(host_of(hopper.clone())),
        ],
        (Some(ampere), Some(hopper)) => {
            let others = quote!(all(target_arch = "nvptx64", not(target_feature = "sm_90a")));
            let emulated = quote! {
                if ::tessera::emulator::running_target()
                    == ::tessera::emulator::EmulatedTarget::Sm90a
                {
                    #hopper
                } else {
                    #ampere
                }
            };
            vec![
                device_entry(others, ampere, &[]),
                device_entry(sm90a, hopper, &maps),
                host_entry(host_of(emulated)),
            ]
        }
        // One NVIDIA body and one planned for AMD (or a kernel apart, see `amdgpu_apart`): an
        // entry each.
        (Some(ampere), None) if amdgpu_body.is_some() || amdgpu_apart => vec![
            device_entry(quote!(target_arch = "nvptx64"), ampere, &maps),
            host_entry(host_of(ampere.clone())),
        ],
        // One body: for every PTX target, and for amdgpu when it can be (and is not another
        // variant's amdgpu kernel).
        _ => {
            let body = bodies.first().map(|b| b.body.clone()).unwrap_or_default();
            let device = if amdgpu && shared.is_none() {
                let marker = workgroup_size_marker(entry, threads);
                let kernel = nvptx_and_amdgpu_entry(&body);
                quote!(#marker #kernel)
            } else {
                device_entry(quote!(target_arch = "nvptx64"), &body, &maps)
            };
            return [device, host_entry(body)].into_iter().collect();
        }
    };
    // The amdgpu kernel apart: the body planned for AMD, or an Ampere body beside a Hopper one
    // that has no NVIDIA-only instruction (none today: a `dot` is `mma.sync` there).
    let amdgpu = amdgpu_body
        .or(body_of(Target::Ampere).filter(|_| amdgpu))
        .filter(|_| shared.is_none())
        .map(|body| {
            let marker = workgroup_size_marker(entry, threads);
            let kernel = amdgpu_entry(body);
            quote!(#marker #kernel)
        });
    items.into_iter().chain(amdgpu).collect()
}
