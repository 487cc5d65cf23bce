//! What `autotune(key = […])` adds to a kernel's module: per assignment of element types a
//! `TUNER` (`tessera::launch::Autotuner`), its `CANDIDATES` (one `Consts` per compiled
//! specialisation, in order) and `launch_tuned` / `launch_tuned_with`; for a kernel with type
//! parameters, `launch_tuned` / `launch_tuned_with` generic over them at the top.
//!
//! ```text
//! pub static TUNER: tessera::launch::Autotuner;          // "k[T = f16]", fingerprint, key, candidates
//! pub const CANDIDATES: [Consts; N];
//! pub fn launch_tuned(device, module, grid: impl Grid<Consts> + Clone, a, b, c, m, n, k)
//!     -> Result<tessera::launch::autotune::TunedLaunch, LaunchError>;
//! pub fn launch_tuned_with(device, module, reset: &mut dyn FnMut() -> Result<(), LaunchError>,
//!     grid, a, b, c, m, n, k) -> …;                       // `reset` before each timing and the launch
//! // a kernel with `Tensor` parameters (`key = [a.size(0), b.size(1)]`): on a stream, tensors by
//! // `&`/`&mut` as its `launch_sized` takes them, the grid from `Consts` and `Sizes`
//! pub fn launch_tuned<G: GridDims>(stream, module, grid: impl FnMut(&Consts, &Sizes) -> G,
//!     a: &impl AsTensorRef<f16>, b: &impl AsTensorRef<f16>, c: &mut impl AsTensorMut<f16>)
//!     -> Result<tessera::launch::autotune::Choice, LaunchError>;
//! pub fn launch_tuned_with<G: GridDims>(stream, module, reset, grid, a, b, c) -> …;
//! ```
//!
//! The candidates are the specialisations `expand` compiled (their const values, `num_warps`
//! included when it varies); the choice itself is the runtime's (`Autotuner::choose`).

use crate::expand::tensor_params::TensorArgs;
use crate::expand::Own;
use crate::parse::Autotune;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

/// What the tuned launcher of one assignment of element types is made from.
pub struct TunedParts<'a> {
    pub function: &'a syn::ItemFn,
    /// `k` or `k[T = f16]`: the tuner's kernel identity.
    pub kernel: String,
    /// Per candidate, its const values (the fields of `Consts`).
    pub candidates: Vec<Vec<(String, i128)>>,
    /// `(a, b, …)` or `Args { a, b, … }`: the parameters as `Args`.
    pub args_value: TokenStream,
    pub autotune: &'a Autotune,
    /// What the launcher takes.
    pub params: TunedParams<'a>,
}

/// What a tuned launcher takes besides the device or stream, the module and the grid.
pub enum TunedParams<'a> {
    /// The kernel's parameters as they are (a kernel without `Tensor` parameters): launched on
    /// a device.
    Plain {
        names: Vec<&'a Ident>,
        types: Vec<TokenStream>,
    },
    /// Tensors by `&` / `&mut` and the other parameters (a kernel with `Tensor` parameters):
    /// launched on a stream, as the kernel's `launch_sized`.
    Tensors(&'a TensorArgs),
}

/// `BM = 64, num_warps = 4`: a candidate as the tuner names it (and as
/// `tessera::tile::Specialisation::describe` writes const values).
fn describe(values: &[(String, i128)]) -> String {
    let parts: Vec<String> = values.iter().map(|(c, v)| format!("{c} = {v}")).collect();
    parts.join(", ")
}

/// `TUNER`, `CANDIDATES`, `launch_tuned` and `launch_tuned_with` of one assignment of element
/// types (see the module docs).
pub fn tuned_items(parts: &TunedParts) -> TokenStream {
    let tuner = tuner_items(parts);
    let launchers = match &parts.params {
        TunedParams::Plain { names, types } => plain_launchers(parts, names, types),
        TunedParams::Tensors(args) => tensor_launchers(parts, args),
    };
    quote!(#tuner #launchers)
}

/// `TUNER` and `CANDIDATES`.
fn tuner_items(parts: &TunedParts) -> TokenStream {
    let descriptions: Vec<String> = parts.candidates.iter().map(|c| describe(c)).collect();
    let function = parts.function;
    let key_names: Vec<&str> = parts.autotune.key.iter().map(|k| k.name.as_str()).collect();
    let fingerprint = crate::fnv1a(
        format!(
            "{}\n{}\n{}",
            quote!(#function),
            descriptions.join("\n"),
            key_names.join(",")
        )
        .as_bytes(),
    );
    let fingerprint = Literal::u64_suffixed(fingerprint);
    let kernel = &parts.kernel;
    let n = Literal::usize_unsuffixed(parts.candidates.len());
    let candidate_values = parts.candidates.iter().map(|values| {
        let fields = values.iter().map(|(c, v)| {
            let c = Ident::new(c, Span::call_site());
            let v = Literal::i128_unsuffixed(*v);
            quote!(#c: #v)
        });
        quote!(Consts { #(#fields),* })
    });
    quote! {
        /// The autotuner of these specialisations (see `launch_tuned`).
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        pub static TUNER: ::tessera::launch::Autotuner = ::tessera::launch::Autotuner::new(
            #kernel, #fingerprint, &[#(#key_names),*], &[#(#descriptions),*],
        );

        /// The const values of every candidate `launch_tuned` times, in the order of `TUNER`'s
        /// candidates (the emulator takes the first).
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        pub const CANDIDATES: [Consts; #n] = [#(#candidate_values),*];
    }
}

/// `let key: [String; N] = [ToString::to_string(&m), …]`: the key's values, from the parameters
/// (and, with tensors, the sizes and strides `kernel_parts` bound) that hold them.
fn key_value(parts: &TunedParts) -> TokenStream {
    let key = Own::names().key;
    let n_key = Literal::usize_unsuffixed(parts.autotune.key.len());
    let key_idents = parts
        .autotune
        .key
        .iter()
        .map(|k| Ident::new(&k.param, Span::call_site()));
    quote! {
        let #key: [::std::string::String; #n_key] =
            [#(::std::string::ToString::to_string(&#key_idents)),*];
    }
}

/// `the key (m, n)` or `no key: one choice per device`, for the docs.
fn key_text(parts: &TunedParts) -> String {
    let names: Vec<&str> = parts.autotune.key.iter().map(|k| k.name.as_str()).collect();
    if names.is_empty() {
        "none: one choice per device".to_string()
    } else {
        names.join(", ")
    }
}

/// `launch_tuned` / `launch_tuned_with` on a device, taking the parameters as they are.
fn plain_launchers(
    parts: &TunedParts,
    param_names: &[&Ident],
    param_types: &[TokenStream],
) -> TokenStream {
    let Own {
        device,
        module,
        grid,
        args,
        reset,
        key,
        choice,
        index,
        consts,
        spec,
        select,
        tuner,
        candidates: candidates_item,
        tuned_with,
        ..
    } = Own::names();
    let args_value = &parts.args_value;
    let key_value = key_value(parts);
    let doc_tuned = format!(
        "Launches the fastest of the kernel's specialisations for these arguments: the first \
         launch for a value of the key ({}) on a device times every candidate of `CANDIDATES` \
         (`tessera::launch::autotune`), later ones reuse the choice (kept in memory and in the \
         cache file `TESSERA_AUTOTUNE_CACHE`, if set); the emulator takes the first candidate. \
         `grid` gives the grid for a candidate's `Consts`. Tuning runs the kernel several times \
         on these arguments: a kernel that updates a buffer in place needs `launch_tuned_with`.",
        key_text(parts)
    );
    quote! {
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = #doc_tuned]
        #[allow(clippy::too_many_arguments)]
        pub fn launch_tuned(
            #device: &::tessera::launch::Device,
            #module: &::tessera::launch::Module,
            #grid: impl ::tessera::tile::Grid<Consts> + ::core::clone::Clone,
            #(#param_names: #param_types),*
        ) -> ::core::result::Result<::tessera::launch::autotune::TunedLaunch, ::tessera::launch::LaunchError> {
            #tuned_with(#device, #module, &mut || Ok(()), #grid, #(#param_names),*)
        }

        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        /// `launch_tuned` with `reset` run before each candidate's timing and before the final
        /// launch of the chosen candidate (restore the buffers a kernel updates in place, as
        /// Triton's `reset_to_zero` / `restore_value`).
        #[allow(clippy::too_many_arguments)]
        pub fn launch_tuned_with(
            #device: &::tessera::launch::Device,
            #module: &::tessera::launch::Module,
            #reset: &mut dyn FnMut() -> ::core::result::Result<(), ::tessera::launch::LaunchError>,
            #grid: impl ::tessera::tile::Grid<Consts> + ::core::clone::Clone,
            #(#param_names: #param_types),*
        ) -> ::core::result::Result<::tessera::launch::autotune::TunedLaunch, ::tessera::launch::LaunchError> {
            let #args: Args = #args_value;
            #key_value
            let #choice = #tuner.choose(#device, #module, &#key, |#index: usize| {
                let #consts = #candidates_item[#index];
                let #spec = #select(&#consts, &#args)?;
                #reset()?;
                let config = ::tessera::tile::launch_config(
                    #spec,
                    ::tessera::tile::Grid::grid(::core::clone::Clone::clone(&#grid), &#consts),
                    #module,
                );
                #device
                    .time_launches(#module, #spec.kernel, config, #args,
                        ::tessera::launch::autotune::TUNING_TIMING)
                    .map(|timing| timing.median_ms)
            })?;
            let #consts = #candidates_item[#choice.index];
            let #spec = #select(&#consts, &#args)?;
            #reset()?;
            let report = ::tessera::tile::launch_on(
                #device, #module, #spec, ::tessera::tile::Grid::grid(#grid, &#consts), #args,
            )?;
            Ok(::tessera::launch::autotune::TunedLaunch { report, choice: #choice })
        }
    }
}

/// `launch_tuned` / `launch_tuned_with` on a stream, taking tensors as the kernel's
/// `launch_sized` does (the same [`TensorArgs`]: the same checks). Timing a candidate waits for
/// the stream and times on it (`Stream::time_launches`, which checks and records the tensors'
/// uses); the tensors the kernel updates in place are saved before the first timing and restored
/// before each later one and before the final launch (`TensorMut::snapshot` / `restore`).
fn tensor_launchers(parts: &TunedParts, tensor_args: &TensorArgs) -> TokenStream {
    let Own {
        stream,
        module,
        grid,
        args,
        reset,
        key,
        choice,
        index,
        consts,
        spec,
        sizes,
        select,
        tuner,
        candidates: candidates_item,
        tuned_with,
        ..
    } = Own::names();
    let TensorArgs {
        signature,
        views,
        parts: tensor_parts,
        uses,
        forward,
        size_values,
        updated,
        ..
    } = tensor_args;
    let saved: Vec<Ident> = updated
        .iter()
        .map(|view| Ident::new(&format!("{view}__saved"), Span::mixed_site()))
        .collect();
    let args_value = &parts.args_value;
    let key_value = key_value(parts);
    let doc_tuned = format!(
        "Enqueues the fastest of the kernel's specialisations for these arguments on `stream` \
         and returns the choice. The tensors are taken and checked as by `launch_sized` (those \
         the kernel stores to by `&mut`, the others by `&`; rank and extent checked); `grid` \
         gives the grid from a candidate's `Consts` and the tensors' `Sizes`. The first launch \
         for a value of the key ({}) on a device times every candidate of `CANDIDATES` \
         (`tessera::launch::autotune`), waiting for the stream and for the timed launches; the \
         tensors the kernel updates in place (reads and writes) are restored before each timing \
         and before the final launch, so they hold one launch's result. Later launches reuse the \
         choice (kept in memory and in the cache file `TESSERA_AUTOTUNE_CACHE`, if set) and \
         return at once; the emulator takes the first candidate.",
        key_text(parts)
    );
    quote! {
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = #doc_tuned]
        #[allow(clippy::too_many_arguments)]
        pub fn launch_tuned<G: ::tessera::tile::GridDims>(
            #stream: &::tessera::launch::Stream<'_>,
            #module: &::tessera::launch::Module,
            #grid: impl ::core::ops::FnMut(&Consts, &Sizes) -> G,
            #(#signature),*
        ) -> ::core::result::Result<::tessera::launch::autotune::Choice, ::tessera::launch::LaunchError> {
            #tuned_with(#stream, #module, &mut || Ok(()), #grid, #(#forward),*)
        }

        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        /// `launch_tuned` with `reset` also run before each candidate's timing and before the
        /// final launch (for memory the kernel updates in place through a `Ptr` parameter).
        #[allow(clippy::too_many_arguments)]
        pub fn launch_tuned_with<G: ::tessera::tile::GridDims>(
            #stream: &::tessera::launch::Stream<'_>,
            #module: &::tessera::launch::Module,
            #reset: &mut dyn FnMut() -> ::core::result::Result<(), ::tessera::launch::LaunchError>,
            mut #grid: impl ::core::ops::FnMut(&Consts, &Sizes) -> G,
            #(#signature),*
        ) -> ::core::result::Result<::tessera::launch::autotune::Choice, ::tessera::launch::LaunchError> {
            #(#views)*
            #(#tensor_parts)*
            #(let mut #updated = #updated;)*
            let #sizes = Sizes { #(#size_values),* };
            let #args: Args = #args_value;
            #key_value
            #(let mut #saved: ::core::option::Option<::tessera::tensor::Snapshot> = None;)*
            let #choice = #tuner.choose(#stream.device(), #module, &#key, |#index: usize| {
                let #consts = #candidates_item[#index];
                let #spec = #select(&#consts, &#args)?;
                #stream.synchronize()?;
                #(
                    match &#saved {
                        Some(snapshot) => #updated.restore(snapshot)?,
                        None => #saved = Some(#updated.snapshot()?),
                    }
                )*
                #reset()?;
                let config = ::tessera::tile::launch_config(
                    #spec,
                    ::tessera::tile::GridDims::dims(#grid(&#consts, &#sizes)),
                    #module,
                );
                #stream
                    .time_launches(
                        #module,
                        &#spec.entry.resolve(#module, #spec.kernel)?,
                        config,
                        #args,
                        &[#(#uses),*],
                        ::tessera::launch::autotune::TUNING_TIMING,
                    )
                    .map(|timing| timing.median_ms)
            })?;
            let #consts = #candidates_item[#choice.index];
            let #spec = #select(&#consts, &#args)?;
            #(
                if let Some(snapshot) = &#saved {
                    #updated.restore(snapshot)?;
                }
            )*
            #reset()?;
            let config = ::tessera::tile::launch_config(
                #spec,
                ::tessera::tile::GridDims::dims(#grid(&#consts, &#sizes)),
                #module,
            );
            #stream.launch_resolved(
                #module,
                &#spec.entry.resolve(#module, #spec.kernel)?,
                config,
                #args,
                &[#(#uses),*],
            )?;
            Ok(#choice)
        }
    }
}

/// The generic `launch_tuned` / `launch_tuned_with` of a kernel with type parameters: call the
/// submodule of the arguments' element types. `arms` gives, for the submodule function's name
/// and its leading arguments, the `if <types match> { return sub::f(…) }` chain;
/// `no_types` is the error when none matches.
pub fn generic_tuned(
    first_module: &Ident,
    bounds: &[TokenStream],
    param_names: &[Ident],
    param_types: &[&syn::Type],
    arms: &dyn Fn(&Ident, TokenStream) -> TokenStream,
    no_types: &TokenStream,
) -> TokenStream {
    let Own {
        device,
        module,
        grid,
        reset,
        ..
    } = Own::names();
    let launchers = GenericTuned {
        doc: "Autotuned launch of the specialisations of the arguments' element types (see each \
              submodule's `launch_tuned`).",
        generics: quote!(#(#bounds),*),
        target: quote!(#device: &::tessera::launch::Device),
        grid: quote!(#grid: impl ::tessera::tile::Grid<Consts> + ::core::clone::Clone),
        params: quote!(#(#param_names: #param_types),*),
        prelude: TokenStream::new(),
        launched: quote!(::tessera::launch::autotune::TunedLaunch),
        tuned_arms: arms(
            &Ident::new("launch_tuned", Span::call_site()),
            quote!(#device, #module, #grid,),
        ),
        tuned_with_arms: arms(
            &Ident::new("launch_tuned_with", Span::call_site()),
            quote!(#device, #module, #reset, #grid,),
        ),
    };
    launchers.render(first_module, no_types)
}

/// The generic `launch_tuned` / `launch_tuned_with` of a kernel with type parameters and
/// `Tensor` parameters: bind the views (`args`), then call the submodule of their element types
/// (`arms`, as for the generic `launch_sized`); `no_types` is the error when none matches.
pub fn generic_tuned_tensor(
    first_module: &Ident,
    bounds: &[TokenStream],
    args: &TensorArgs,
    arms: &dyn Fn(&Ident, TokenStream) -> TokenStream,
    no_types: &TokenStream,
) -> TokenStream {
    let Own {
        stream,
        module,
        grid,
        reset,
        ..
    } = Own::names();
    let (signature, views) = (&args.signature, &args.views);
    let launchers = GenericTuned {
        doc: "Autotuned launch on `stream` of the specialisations of the tensors' element types \
              (see each submodule's `launch_tuned`).",
        generics: quote!(#(#bounds,)* G: ::tessera::tile::GridDims),
        target: quote!(#stream: &::tessera::launch::Stream<'_>),
        grid: quote!(mut #grid: impl ::core::ops::FnMut(&Consts, &Sizes) -> G),
        params: quote!(#(#signature),*),
        prelude: quote!(#(#views)*),
        launched: quote!(::tessera::launch::autotune::Choice),
        tuned_arms: arms(
            &Ident::new("launch_tuned", Span::call_site()),
            quote!(#stream, #module, &mut #grid,),
        ),
        tuned_with_arms: arms(
            &Ident::new("launch_tuned_with", Span::call_site()),
            quote!(#stream, #module, #reset, &mut #grid,),
        ),
    };
    launchers.render(first_module, no_types)
}

/// The generic `launch_tuned` / `launch_tuned_with` pair of a kernel with type parameters, by
/// what differs between kernels with pointer and with `Tensor` parameters.
struct GenericTuned<'a> {
    /// The doc of `launch_tuned`.
    doc: &'a str,
    /// The generic parameters of both functions.
    generics: TokenStream,
    /// The first parameter: the device or stream launched on, with its type.
    target: TokenStream,
    /// The `grid` parameter with its type.
    grid: TokenStream,
    /// The kernel's parameters.
    params: TokenStream,
    /// Statements before the arms.
    prelude: TokenStream,
    /// What a successful call returns.
    launched: TokenStream,
    /// The `launch_tuned` arms (see [`generic_tuned`]).
    tuned_arms: TokenStream,
    /// The `launch_tuned_with` arms.
    tuned_with_arms: TokenStream,
}

impl GenericTuned<'_> {
    fn render(self, first_module: &Ident, no_types: &TokenStream) -> TokenStream {
        let Own { module, reset, .. } = Own::names();
        let GenericTuned {
            doc,
            generics,
            target,
            grid,
            params,
            prelude,
            launched,
            tuned_arms,
            tuned_with_arms,
        } = self;
        let result = quote! {
            ::core::result::Result<#launched, ::tessera::launch::LaunchError>
        };
        quote! {
            /// The candidates' const values (the same for every assignment of element types).
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            pub use #first_module::CANDIDATES;

            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            #[doc = #doc]
            #[allow(clippy::too_many_arguments)]
            pub fn launch_tuned<#generics>(
                #target,
                #module: &::tessera::launch::Module,
                #grid,
                #params
            ) -> #result {
                #prelude
                #tuned_arms
                #no_types
            }

            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            /// `launch_tuned` with a reset hook (see each submodule's `launch_tuned_with`).
            #[allow(clippy::too_many_arguments)]
            pub fn launch_tuned_with<#generics>(
                #target,
                #module: &::tessera::launch::Module,
                #reset: &mut dyn FnMut() -> ::core::result::Result<(), ::tessera::launch::LaunchError>,
                #grid,
                #params
            ) -> #result {
                #prelude
                #tuned_with_arms
                #no_types
            }
        }
    }
}
