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
//! ```
//!
//! The candidates are the specialisations `expand` compiled (their const values, `num_warps`
//! included when it varies); the choice itself is the runtime's (`Autotuner::choose`).

use crate::expand::own;
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
    pub param_names: Vec<&'a Ident>,
    pub param_types: Vec<TokenStream>,
    /// `(a, b, …)` or `Args { a, b, … }`: the parameters as `Args`.
    pub args_value: TokenStream,
    pub autotune: &'a Autotune,
}

/// `BM = 64, num_warps = 4`: a candidate as the tuner names it (and as
/// `tessera::tile::Specialisation::describe` writes const values).
fn describe(values: &[(String, i128)]) -> String {
    let parts: Vec<String> = values.iter().map(|(c, v)| format!("{c} = {v}")).collect();
    parts.join(", ")
}

/// FNV-1a, 64 bits: a hash that stays the same across compiler runs and versions.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `TUNER`, `CANDIDATES`, `launch_tuned` and `launch_tuned_with` of one assignment of element
/// types (see the module docs).
pub fn tuned_items(parts: &TunedParts) -> TokenStream {
    let (device, module, grid, args, reset, key, choice, index, consts, spec) = (
        own("device"),
        own("module"),
        own("grid"),
        own("args"),
        own("reset"),
        own("key"),
        own("choice"),
        own("index"),
        own("consts"),
        own("spec"),
    );
    let (select, tuner, candidates_item, tuned_with) = (
        own("specialisation"),
        own("TUNER"),
        own("CANDIDATES"),
        own("launch_tuned_with"),
    );
    let descriptions: Vec<String> = parts.candidates.iter().map(|c| describe(c)).collect();
    let function = parts.function;
    let fingerprint = fnv1a(&format!(
        "{}\n{}\n{}",
        quote!(#function),
        descriptions.join("\n"),
        parts.autotune.key.join(",")
    ));
    let fingerprint = Literal::u64_suffixed(fingerprint);
    let kernel = &parts.kernel;
    let key_names = &parts.autotune.key;
    let key_idents: Vec<Ident> = key_names
        .iter()
        .map(|k| Ident::new(k, Span::call_site()))
        .collect();
    let n_key = Literal::usize_unsuffixed(key_names.len());
    let n = Literal::usize_unsuffixed(parts.candidates.len());
    let candidate_values = parts.candidates.iter().map(|values| {
        let fields = values.iter().map(|(c, v)| {
            let c = Ident::new(c, Span::call_site());
            let v = Literal::i128_unsuffixed(*v);
            quote!(#c: #v)
        });
        quote!(Consts { #(#fields),* })
    });
    let (param_names, param_types) = (&parts.param_names, &parts.param_types);
    let args_value = &parts.args_value;
    let doc_tuned = format!(
        "Launches the fastest of the kernel's specialisations for these arguments: the first \
         launch for a value of the key ({}) on a device times every candidate of `CANDIDATES` \
         (`tessera::launch::autotune`), later ones reuse the choice (kept in memory and in the \
         cache file `TESSERA_AUTOTUNE_CACHE`, if set); the emulator takes the first candidate. \
         `grid` gives the grid for a candidate's `Consts`. Tuning runs the kernel several times \
         on these arguments: a kernel that updates a buffer in place needs `launch_tuned_with`.",
        if key_names.is_empty() {
            "none: one choice per device".to_string()
        } else {
            key_names.join(", ")
        }
    );
    quote! {
        /// The autotuner of these specialisations (see `launch_tuned`).
        #[cfg(not(target_arch = "nvptx64"))]
        pub static TUNER: ::tessera::launch::Autotuner = ::tessera::launch::Autotuner::new(
            #kernel, #fingerprint, &[#(#key_names),*], &[#(#descriptions),*],
        );

        /// The const values of every candidate `launch_tuned` times, in the order of `TUNER`'s
        /// candidates (the emulator takes the first).
        #[cfg(not(target_arch = "nvptx64"))]
        pub const CANDIDATES: [Consts; #n] = [#(#candidate_values),*];

        #[cfg(not(target_arch = "nvptx64"))]
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

        #[cfg(not(target_arch = "nvptx64"))]
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
            let #key: [::std::string::String; #n_key] =
                [#(::std::string::ToString::to_string(&#key_idents)),*];
            let #choice = #tuner.choose(#device, #module, &#key, |#index: usize| {
                let #consts = #candidates_item[#index];
                let #spec = #select(&#consts, &#args)?;
                #reset()?;
                let config = ::tessera::tile::launch_config(
                    #spec,
                    ::tessera::tile::Grid::grid(::core::clone::Clone::clone(&#grid), &#consts),
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
    let (device, module, grid, reset) = (own("device"), own("module"), own("grid"), own("reset"));
    let tuned = Ident::new("launch_tuned", Span::call_site());
    let tuned_with = Ident::new("launch_tuned_with", Span::call_site());
    let tuned_arms = arms(&tuned, quote!(#device, #module, #grid,));
    let tuned_with_arms = arms(&tuned_with, quote!(#device, #module, #reset, #grid,));
    let result = quote! {
        ::core::result::Result<::tessera::launch::autotune::TunedLaunch, ::tessera::launch::LaunchError>
    };
    quote! {
        /// The candidates' const values (the same for every assignment of element types).
        #[cfg(not(target_arch = "nvptx64"))]
        pub use #first_module::CANDIDATES;

        #[cfg(not(target_arch = "nvptx64"))]
        /// Autotuned launch of the specialisations of the arguments' element types (see each
        /// submodule's `launch_tuned`).
        #[allow(clippy::too_many_arguments)]
        pub fn launch_tuned<#(#bounds),*>(
            #device: &::tessera::launch::Device,
            #module: &::tessera::launch::Module,
            #grid: impl ::tessera::tile::Grid<Consts> + ::core::clone::Clone,
            #(#param_names: #param_types),*
        ) -> #result {
            #tuned_arms
            #no_types
        }

        #[cfg(not(target_arch = "nvptx64"))]
        /// `launch_tuned` with a reset hook (see each submodule's `launch_tuned_with`).
        #[allow(clippy::too_many_arguments)]
        pub fn launch_tuned_with<#(#bounds),*>(
            #device: &::tessera::launch::Device,
            #module: &::tessera::launch::Module,
            #reset: &mut dyn FnMut() -> ::core::result::Result<(), ::tessera::launch::LaunchError>,
            #grid: impl ::tessera::tile::Grid<Consts> + ::core::clone::Clone,
            #(#param_names: #param_types),*
        ) -> #result {
            #tuned_with_arms
            #no_types
        }
    }
}
