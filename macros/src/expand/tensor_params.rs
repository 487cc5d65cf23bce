//! Kernel parameters `x: Tensor<T, R>`: a tensor's base pointer, sizes and strides.
//!
//! Before the kernel is read, [`desugar`] replaces each such parameter by the scalars the PTX
//! entry receives — `x: Ptr<T>`, `x__size0: i32`, …, `x__stride0: i32`, … (`R` of each) — and
//! rewrites `x.size(d)` / `x.stride(d)` in the body to those scalars and `x.ptr()` to `x`, so
//! the rest of the pipeline sees an ordinary kernel. The generated `launch` takes the tensor
//! (an output — a parameter the kernel stores through, [`param_accesses`] — by `&mut`, an input
//! by `&`) and passes its pointer, sizes and strides after checking rank and extent
//! ([`tensor_args`]: what every launcher taking tensors, the tuned ones included, is made of).

use super::{consts_param_arg, Own};
use crate::diag::push_error;
use crate::ir::{Kernel, OpKind, Region};
use crate::types::DType;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::visit_mut::VisitMut;

/// One `Tensor<T, R>` parameter of a kernel.
#[derive(Clone)]
pub struct TensorParam {
    pub name: Ident,
    /// The element type as written.
    pub elem: syn::Type,
    pub rank: usize,
    /// The index of its pointer among the desugared parameters (sizes and strides follow).
    pub first: usize,
}

/// Marks each tensor's innermost stride among `kernel`'s (desugared) parameters as the unit
/// stride the aligned variant assumes ([`Param::unit_stride`](crate::ir::Param)).
pub fn mark_unit_strides(kernel: &mut Kernel, tensors: &[TensorParam]) {
    for tensor in tensors {
        if let Some(param) = kernel.params.get_mut(tensor.innermost_stride()) {
            param.unit_stride = true;
        }
    }
}

/// The desugared scalar parameter holding `tensor.size(dim)` (`what = "size"`) or
/// `tensor.stride(dim)` (`"stride"`): `x__size0`.
pub fn scalar_name(tensor: &str, what: &str, dim: usize) -> String {
    format!("{tensor}__{what}{dim}")
}

impl TensorParam {
    pub fn sizes(&self) -> Vec<Ident> {
        self.scalars("size")
    }

    pub fn strides(&self) -> Vec<Ident> {
        self.scalars("stride")
    }

    fn scalars(&self, what: &str) -> Vec<Ident> {
        // `r#type__size0` is no identifier: the raw prefix goes (`type__size0` is not a keyword).
        let name = self.name.unraw().to_string();
        (0..self.rank)
            .map(|d| Ident::new(&scalar_name(&name, what, d), self.name.span()))
            .collect()
    }

    /// The index among the desugared parameters of `stride(rank - 1)`, the innermost stride
    /// (the pointer, then `rank` sizes, then `rank` strides).
    pub fn innermost_stride(&self) -> usize {
        self.first + 2 * self.rank
    }

    /// Whether desugared parameter `index` belongs to this tensor.
    pub fn covers(&self, index: usize) -> bool {
        (self.first..self.first + 1 + 2 * self.rank).contains(&index)
    }
}

/// The element type and rank of `Tensor<T, R>`; `None` for another type; an error for a
/// `Tensor` written without its rank or with a rank that is not `1..=4`.
fn tensor_type(ty: &syn::Type) -> Result<Option<(syn::Type, usize)>, syn::Error> {
    let syn::Type::Path(path) = ty else {
        return Ok(None);
    };
    let Some(last) = path.path.segments.last() else {
        return Ok(None);
    };
    if last.ident != "Tensor" {
        return Ok(None);
    }
    let usage = "a tensor parameter is `Tensor<T, R>` with its element type and rank, e.g. \
                 `x: Tensor<f32, 2>`";
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Err(syn::Error::new_spanned(ty, usage));
    };
    let args: Vec<&syn::GenericArgument> = args.args.iter().collect();
    let [syn::GenericArgument::Type(elem), rank] = args.as_slice() else {
        return Err(syn::Error::new_spanned(ty, usage));
    };
    let rank_lit = match rank {
        syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        })) => Some(i),
        syn::GenericArgument::Type(syn::Type::Verbatim(_)) => None,
        _ => None,
    };
    let rank = rank_lit
        .and_then(|i| i.base10_parse::<usize>().ok())
        .filter(|r| (1..=4).contains(r))
        .ok_or_else(|| {
            syn::Error::new_spanned(
                rank,
                "the rank of a `Tensor` parameter is an integer literal from 1 to 4",
            )
        })?;
    Ok(Some((elem.clone(), rank)))
}

/// Rewrites `x.size(d)`, `x.stride(d)` and `x.ptr()` of the tensor parameters in a body.
struct Rewrite<'a> {
    tensors: &'a [TensorParam],
    errors: Option<syn::Error>,
}

impl Rewrite<'_> {
    fn error(&mut self, error: syn::Error) {
        push_error(&mut self.errors, error);
    }

    fn replacement(&mut self, call: &syn::ExprMethodCall) -> Option<syn::Expr> {
        let syn::Expr::Path(receiver) = &*call.receiver else {
            return None;
        };
        let name = receiver.path.get_ident()?;
        let tensor = self.tensors.iter().find(|t| t.name == *name)?.clone();
        let method = call.method.to_string();
        let span = call.method.span();
        if method == "ptr" && call.args.is_empty() {
            return Some(syn::Expr::Path(receiver.clone()));
        }
        if method != "size" && method != "stride" {
            self.error(syn::Error::new(
                span,
                format!(
                    "a tensor parameter has `{name}.size(d)`, `{name}.stride(d)` and \
                     `{name}.ptr()` (or `{name}` itself as its base pointer)"
                ),
            ));
            return None;
        }
        let Some(dim) = crate::parse::literal_dim(&call.args) else {
            self.error(syn::Error::new_spanned(
                call,
                format!("`{name}.{method}(d)` takes the dimension as an integer literal"),
            ));
            return None;
        };
        if dim >= tensor.rank {
            self.error(syn::Error::new_spanned(
                &call.args,
                format!(
                    "`{name}` is a tensor of rank {}: it has no dimension {dim}",
                    tensor.rank
                ),
            ));
            return None;
        }
        let ident = if method == "size" {
            &tensor.sizes()[dim]
        } else {
            &tensor.strides()[dim]
        };
        let ident = Ident::new(&ident.to_string(), span);
        Some(syn::parse_quote!(#ident))
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if let syn::Expr::MethodCall(call) = expr {
            if let Some(replacement) = self.replacement(call) {
                *expr = replacement;
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// The kernel with its `Tensor<T, R>` parameters desugared (see the module docs), and those
/// parameters; the item unchanged when it is no function (the frontend reports that).
pub fn desugar(item: TokenStream) -> Result<(TokenStream, Vec<TensorParam>), syn::Error> {
    let Ok(mut function) = syn::parse2::<syn::ItemFn>(item.clone()) else {
        return Ok((item, Vec::new()));
    };
    let mut tensors = Vec::new();
    let mut inputs = syn::punctuated::Punctuated::<syn::FnArg, syn::Token![,]>::new();
    let mut errors: Option<syn::Error> = None;
    for input in std::mem::take(&mut function.sig.inputs) {
        let syn::FnArg::Typed(typed) = &input else {
            inputs.push(input);
            continue;
        };
        match tensor_type(&typed.ty) {
            Ok(None) => inputs.push(input),
            Ok(Some((elem, rank))) => {
                let syn::Pat::Ident(pat) = &*typed.pat else {
                    inputs.push(input);
                    continue;
                };
                let tensor = TensorParam {
                    name: pat.ident.clone(),
                    elem: elem.clone(),
                    rank,
                    first: inputs.len(),
                };
                let name = &tensor.name;
                let span = syn::spanned::Spanned::span(&*typed.ty);
                let ptr = quote::quote_spanned!(span=> ::tessera::Ptr<#elem>);
                inputs.push(syn::parse_quote!(#name: #ptr));
                for scalar in tensor.sizes().into_iter().chain(tensor.strides()) {
                    inputs.push(syn::parse_quote!(#scalar: i32));
                }
                tensors.push(tensor);
            }
            Err(e) => match &mut errors {
                Some(errors) => errors.combine(e),
                None => errors = Some(e),
            },
        }
    }
    function.sig.inputs = inputs;
    if let Some(errors) = errors {
        return Err(errors);
    }
    if tensors.is_empty() {
        return Ok((item, tensors));
    }
    let mut rewrite = Rewrite {
        tensors: &tensors,
        errors: None,
    };
    rewrite.visit_block_mut(&mut function.block);
    if let Some(errors) = rewrite.errors {
        return Err(errors);
    }
    Ok((quote!(#function), tensors))
}

/// How a kernel accesses the memory a parameter points to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamAccess {
    /// It writes through it (`store`, an atomic): the launcher takes the tensor by `&mut`.
    pub stored: bool,
    /// It reads through it (`load`, an atomic).
    pub loaded: bool,
}

impl ParamAccess {
    /// Read and written: the kernel updates the memory in place, so a second run does not
    /// give the first one's result (a tuned launch restores it between runs).
    pub fn updated(self) -> bool {
        self.stored && self.loaded
    }
}

/// For each parameter, how the kernel accesses memory through it: the loads, stores and atomics
/// whose pointers derive from it (through pointer arithmetic, broadcasts, selects and values
/// carried by loops and `if`s — where several pointers merge, each counts). Beyond 128
/// parameters, every parameter counts as read and written.
pub fn param_accesses(kernel: &Kernel) -> Vec<ParamAccess> {
    let n = kernel.params.len().min(128);
    let mut from: Vec<u128> = vec![0; kernel.values.len()];
    for (i, param) in kernel.params.iter().take(n).enumerate() {
        from[param.value.0 as usize] |= 1 << i;
    }
    let is_ptr = |v: crate::ir::ValueId| matches!(kernel.ty(v).dtype, DType::Ptr(_));
    let mut accessed = Accessed::default();
    loop {
        let mut changed = false;
        propagate(
            &kernel.body,
            &mut from,
            &mut accessed,
            &mut changed,
            &is_ptr,
        );
        if !changed {
            break;
        }
    }
    (0..kernel.params.len())
        .map(|i| ParamAccess {
            stored: i >= 128 || accessed.stored & (1 << i) != 0,
            loaded: i >= 128 || accessed.loaded & (1 << i) != 0,
        })
        .collect()
}

/// The parameters (bit `i`: parameter `i`) some store or atomic writes through, and some load or
/// atomic reads through.
#[derive(Default)]
struct Accessed {
    stored: u128,
    loaded: u128,
}

fn propagate(
    region: &Region,
    from: &mut [u128],
    accessed: &mut Accessed,
    changed: &mut bool,
    is_ptr: &dyn Fn(crate::ir::ValueId) -> bool,
) {
    for op in &region.ops {
        let mut mask: u128 = op
            .operands
            .iter()
            .filter(|v| is_ptr(**v))
            .fold(0, |m, v| m | from[v.0 as usize]);
        for inner in &op.regions {
            mask |= inner
                .yields
                .iter()
                .filter(|v| is_ptr(**v))
                .fold(0, |m, v| m | from[v.0 as usize]);
        }
        // The pointer is the first operand of each.
        let through = op.operands.first().map_or(0, |ptr| from[ptr.0 as usize]);
        match op.kind {
            OpKind::Store { .. } => accessed.stored |= through,
            OpKind::Load { .. } => accessed.loaded |= through,
            OpKind::Atomic { .. } => {
                accessed.stored |= through;
                accessed.loaded |= through;
            }
            _ => {}
        }
        let targets = op
            .results
            .iter()
            .chain(op.regions.iter().flat_map(|r| r.args.iter()));
        for v in targets {
            if is_ptr(*v) && from[v.0 as usize] | mask != from[v.0 as usize] {
                from[v.0 as usize] |= mask;
                *changed = true;
            }
        }
        for inner in &op.regions {
            propagate(inner, from, accessed, changed, is_ptr);
        }
    }
}

/// What a launcher taking tensors is made of, per parameter of the desugared signature (see
/// [`tensor_args`]).
pub struct TensorArgs {
    /// The launcher's parameters: `x: &impl AsTensorRef<T>` (`&mut impl AsTensorMut<T>` for a
    /// tensor the kernel stores to), the other parameters as they are.
    pub signature: Vec<TokenStream>,
    /// Statements binding each tensor's view (`x__view`).
    pub views: Vec<TokenStream>,
    /// Statements binding, checked, each tensor's pointer, sizes and strides (`x`, `x__size0`,
    /// …, `x__stride0`, …: the kernel's desugared parameters) from its view.
    pub parts: Vec<TokenStream>,
    /// Per launcher parameter, what a launcher generic over the element types passes to the
    /// submodule of the tensors' types: each view retyped (`into_element`, an error if the
    /// type differs), the other arguments as they are (`transmute_copy` of a `Ptr<T>` to the
    /// submodule's `Ptr<f16>` when `T` is `f16`: the type parameters are the submodule's
    /// element types there).
    pub retyped: Vec<TokenStream>,
    /// Each tensor's use for the stream (`x__view.use_read()` / `use_write()`).
    pub uses: Vec<TokenStream>,
    /// The launcher's parameter names, to pass them on.
    pub forward: Vec<TokenStream>,
    /// The fields of `Sizes`: `x: [x__size0 as usize, …]`.
    pub size_values: Vec<TokenStream>,
    /// The views of the tensors the kernel updates in place ([`ParamAccess::updated`]).
    pub updated: Vec<Ident>,
}

/// The view of tensor parameter `name` in a launcher (`x__view`).
pub fn view_ident(name: &Ident) -> Ident {
    format_ident!("{}__view", name, span = Span::mixed_site())
}

/// The pieces of a launcher taking the tensors of `kernel` (named in errors): `params` are the
/// desugared parameters with their types, `accesses` from [`param_accesses`]. Every check of a
/// tensor argument (rank, extent, sizes and strides fitting `i32`) is `kernel_parts`'s.
pub fn tensor_args(
    kernel: &str,
    tensors: &[TensorParam],
    params: &[(&Ident, &TokenStream)],
    accesses: &[ParamAccess],
) -> TensorArgs {
    let mismatch = quote! {
        ::tessera::launch::LaunchError::InvalidConfig {
            kernel: #kernel.to_string(),
            reason: "a tensor's element type is not the specialisation's".to_string(),
        }
    };
    let mut out = TensorArgs {
        signature: Vec::new(),
        views: Vec::new(),
        parts: Vec::new(),
        retyped: Vec::new(),
        uses: Vec::new(),
        forward: Vec::new(),
        size_values: Vec::new(),
        updated: Vec::new(),
    };
    for (index, (name, ty)) in params.iter().enumerate() {
        match tensors.iter().find(|t| t.covers(index)) {
            Some(tensor) if tensor.first == index => {
                let elem = &tensor.elem;
                let view = view_ident(name);
                let (sizes, strides) = (tensor.sizes(), tensor.strides());
                let rank = tensor.rank;
                let pstr = name.to_string();
                if accesses[index].stored {
                    out.signature
                        .push(quote!(#name: &mut impl ::tessera::tensor::AsTensorMut<#elem>));
                    out.views.push(quote! {
                        let #view = ::tessera::tensor::AsTensorMut::tensor_mut(#name);
                    });
                    out.uses.push(quote!(#view.use_write()));
                    out.retyped
                        .push(quote!(&mut #view.into_element().ok_or_else(|| #mismatch)?));
                } else {
                    out.signature
                        .push(quote!(#name: &impl ::tessera::tensor::AsTensorRef<#elem>));
                    out.views.push(quote! {
                        let #view = ::tessera::tensor::AsTensorRef::tensor_ref(#name);
                    });
                    out.uses.push(quote!(#view.use_read()));
                    out.retyped
                        .push(quote!(&#view.clone().into_element().ok_or_else(|| #mismatch)?));
                }
                if accesses[index].updated() {
                    out.updated.push(view.clone());
                }
                out.parts.push(quote! {
                    let (#name, [#(#sizes),*], [#(#strides),*]) =
                        #view.kernel_parts::<#rank>(#kernel, #pstr)?;
                });
                out.forward.push(quote!(#name));
                // The sizes are non-negative `i32`s (`kernel_parts` checked them).
                out.size_values.push(quote!(#name: [#(#sizes as usize),*]));
            }
            Some(_) => {}
            None => {
                out.signature.push(quote!(#name: #ty));
                out.forward.push(quote!(#name));
                // SAFETY (at the call): see `retyped`.
                out.retyped
                    .push(quote!(unsafe { ::core::mem::transmute_copy(&#name) }));
            }
        }
    }
    out
}

/// The `launch` of a kernel with tensor parameters: on a stream, tensors by `&`/`&mut`.
pub struct TensorLauncher<'a> {
    pub args: &'a TensorArgs,
    pub consts_param: TokenStream,
    pub consts_value: TokenStream,
    pub args_value: TokenStream,
    /// The tensor parameters, when `Sizes` is defined here (a kernel with type parameters
    /// defines it once, beside its generic launcher, for every element-type submodule).
    pub define_sizes: Option<&'a [TensorParam]>,
}

pub fn tensor_launcher(l: &TensorLauncher<'_>) -> TokenStream {
    let Own {
        stream,
        module,
        consts,
        grid,
        args,
        spec,
        sizes,
        ..
    } = Own::names();
    let TensorArgs {
        signature,
        views,
        parts,
        uses,
        forward,
        size_values,
        ..
    } = l.args;
    let (consts_param, consts_value, args_value) =
        (&l.consts_param, &l.consts_value, &l.args_value);
    let sizes_struct = l.define_sizes.map(sizes_struct);
    let launch = launch_via_sized(
        "Enqueues the kernel on `stream` from `module` (the PTX of the kernel crate, or the \
         emulator's `Device::host_module`) and returns at once: tensors the kernel stores to are \
         taken by `&mut`, the others by `&`; each tensor's rank and extent are checked, and its \
         pointer, sizes and strides passed. Picks the specialisation (and alignment variant), \
         block `32 × NUM_WARPS` threads, the kernel's dynamic shared memory. The grid is a value \
         or a closure of the const values; `launch_sized` derives it from the tensors' sizes too.",
        &[],
        signature,
        forward,
        l.consts_param.is_empty(),
    );
    let launch_sized = launch_sized_item(
        "`launch` with the grid computed by `grid` from the const values and the sizes of the \
         tensor arguments (`Sizes`, one field per tensor parameter), e.g. \
         `|c: &Consts, s: &Sizes| (s.out[0].div_ceil(c.BLOCK) as u32,)`.",
        &[],
        consts_param,
        signature,
        quote! {
            #consts_value
            #(#views)*
            #(#parts)*
            let #sizes = Sizes { #(#size_values),* };
            let #args: Args = #args_value;
            let #spec = specialisation(&#consts, &#args)?;
            let #grid = ::tessera::tile::GridDims::dims(#grid(&#consts, &#sizes));
            #stream.launch_resolved(
                #module,
                &#spec.entry.resolve(#module, #spec.kernel)?,
                ::tessera::tile::launch_config(#spec, #grid, #module),
                #args,
                &[#(#uses),*],
            )
        },
    );
    quote! {
        #sizes_struct

        #launch

        #launch_sized

        /// The kernel's `Args` from its tensors (rank, extent and `i32` range checked as
        /// `launch` checks them) and its other arguments, for what takes `Args`
        /// (`specialisation`, `Device::launch`, `Device::time_launches`). Those do not hold the
        /// tensors for a stream: the tensors must stay alive and untouched by other work until
        /// such a launch is done.
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[allow(clippy::too_many_arguments)]
        pub fn args(
            #(#signature),*
        ) -> ::core::result::Result<Args, ::tessera::launch::LaunchError> {
            #(#views)*
            #(#parts)*
            Ok(#args_value)
        }
    }
}

/// `launch_sized`: `launch` with the grid computed from the const values and the tensors'
/// `Sizes` (documented by `doc`), generic over `bounds` and the grid's type, taking the consts
/// parameter, the tensors of `signature` and running `body`.
fn launch_sized_item(
    doc: &str,
    bounds: &[TokenStream],
    consts_param: &TokenStream,
    signature: &[TokenStream],
    body: TokenStream,
) -> TokenStream {
    let names = Own::names();
    let (stream, module, grid) = (&names.stream, &names.module, &names.grid);
    quote! {
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = #doc]
        #[allow(clippy::too_many_arguments)]
        pub fn launch_sized<#(#bounds,)* G: ::tessera::tile::GridDims>(
            #stream: &::tessera::launch::Stream<'_>,
            #module: &::tessera::launch::Module,
            #consts_param
            #grid: impl ::core::ops::FnOnce(&Consts, &Sizes) -> G,
            #(#signature),*
        ) -> ::core::result::Result<(), ::tessera::launch::LaunchError> {
            #body
        }
    }
}

/// `Sizes`: the sizes of a launch's tensor arguments, one field per tensor parameter.
fn sizes_struct(tensors: &[TensorParam]) -> TokenStream {
    let fields = tensors.iter().map(|t| {
        let (name, rank) = (&t.name, t.rank);
        let doc = format!("The sizes of the tensor argument `{name}`.");
        quote!(#[doc = #doc] pub #name: [usize; #rank])
    });
    quote! {
        /// The sizes of a launch's tensor arguments, one field per tensor parameter (what the
        /// grid of `launch_sized` is computed from).
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Sizes { #(#fields),* }
    }
}

/// The launcher of a kernel with type parameters and tensor parameters: `Sizes`, and `launch` /
/// `launch_sized` generic over the type parameters (`bounds`), which call the submodule of the
/// tensors' element types (`groups`: per submodule, `TypeId` conditions on the type parameters)
/// with the arguments retyped ([`TensorArgs::retyped`]); with `tuned` (the first submodule),
/// `launch_tuned` / `launch_tuned_with` likewise ([`crate::autotune::generic_tuned_tensor`]).
pub fn generic_tensor_launcher(
    kernel: &str,
    tensors: &[TensorParam],
    args: &TensorArgs,
    bounds: &[TokenStream],
    groups: &[(Ident, Vec<TokenStream>)],
    has_consts: bool,
    tuned: Option<&Ident>,
) -> TokenStream {
    let Own {
        stream,
        module,
        grid,
        ..
    } = Own::names();
    let (consts_param, consts_arg) = consts_param_arg(has_consts);
    let retyped = &args.retyped;
    // `if <the types are the submodule's> { return sub::function(leading…, retyped…); }`.
    let arms = |function: &Ident, leading: TokenStream| -> TokenStream {
        let arms = groups.iter().map(|(sub, same)| {
            quote! {
                if true #(&& #same)* {
                    return #sub::#function(#leading #(#retyped),*);
                }
            }
        });
        quote!(#(#arms)*)
    };
    let no_types = quote! {
        ::core::result::Result::Err(::tessera::launch::LaunchError::InvalidConfig {
            kernel: #kernel.to_string(),
            reason: "no specialisation for these element types".to_string(),
        })
    };
    let sized_arms = arms(
        &Ident::new("launch_sized", Span::call_site()),
        quote!(#stream, #module, #consts_arg #grid,),
    );
    let tuned_items = tuned.map(|first_module| {
        crate::autotune::generic_tuned_tensor(first_module, bounds, args, &arms, &no_types)
    });
    let sizes = sizes_struct(tensors);
    let (signature, views) = (&args.signature, &args.views);
    let launch_sized = launch_sized_item(
        "`launch` with the grid computed by `grid` from the const values and the sizes of the \
         tensor arguments (`Sizes`).",
        bounds,
        &consts_param,
        signature,
        quote! {
            #(#views)*
            #sized_arms
            #no_types
        },
    );
    let launch = launch_via_sized(
        "Enqueues the specialisation of the tensors' element types (see each submodule's \
         `launch`) on `stream`: a type parameter is given by the arguments' types, e.g. a \
         `Tensor<f16>`.",
        bounds,
        signature,
        &args.forward,
        !has_consts,
    );
    quote! {
        #sizes

        #launch

        #launch_sized

        #tuned_items
    }
}

/// `launch`: `launch_sized` with a grid closure that ignores the sizes (`bounds`: the generic
/// parameters, `signature`/`forward`: the tensor and other parameters and their names).
fn launch_via_sized(
    doc: &str,
    bounds: &[TokenStream],
    signature: &[TokenStream],
    forward: &[TokenStream],
    no_consts: bool,
) -> TokenStream {
    let Own {
        stream,
        module,
        consts,
        grid,
        ..
    } = Own::names();
    let (consts_param, consts_arg) = consts_param_arg(!no_consts);
    quote! {
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = #doc]
        #[allow(clippy::too_many_arguments)]
        pub fn launch<#(#bounds),*>(
            #stream: &::tessera::launch::Stream<'_>,
            #module: &::tessera::launch::Module,
            #consts_param
            #grid: impl ::tessera::tile::Grid<Consts>,
            #(#signature),*
        ) -> ::core::result::Result<(), ::tessera::launch::LaunchError> {
            launch_sized(
                #stream,
                #module,
                #consts_arg
                move |#consts: &Consts, _: &Sizes| ::tessera::tile::Grid::grid(#grid, #consts),
                #(#forward),*
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// The accesses of each parameter of `item` (desugared, one specialisation).
    fn accesses(item: TokenStream) -> Vec<(String, ParamAccess)> {
        let (item, _) = desugar(item).unwrap();
        let (kernels, _) =
            crate::frontend::analyze_kernel(quote!(num_warps = 4, B = 64), item).unwrap();
        let kernel = &kernels[0];
        let names = kernel.params.iter().map(|p| p.name.clone());
        names.zip(param_accesses(kernel)).collect()
    }

    #[test]
    fn loads_stores_and_atomics_decide_each_parameters_access() {
        let got = accesses(quote! {
            fn k<const B: usize>(x: Tensor<f32, 1>, out: Tensor<f32, 1>, acc: Tensor<f32, 1>,
                                 inc: Ptr<i32>, n: i32) {
                let offs = arange(0, B);
                let mask = offs < n;
                let at = x + offs * x.stride(0);
                store(at, load(at, mask, 0.0) + 1.0, mask);
                store(out + offs, load(x + offs, mask, 0.0), mask);
                atomic_add(acc + offs, full::<f32>([B], 1.0), mask);
                let mut p = inc;
                for _ in 0..2 {
                    p = p + 1;
                }
                store(p + offs, full::<i32>([B], 0), mask);
            }
        });
        let of = |name: &str| got.iter().find(|(n, _)| n == name).unwrap().1;
        let access = |stored, loaded| ParamAccess { stored, loaded };
        // `x` is read and written (in place), `out` only written, `acc` by an atomic (both).
        assert_eq!(of("x"), access(true, true));
        assert!(of("x").updated());
        assert_eq!(of("out"), access(true, false));
        assert!(!of("out").updated());
        assert_eq!(of("acc"), access(true, true));
        // A pointer carried by a loop still counts as written through.
        assert_eq!(of("inc"), access(true, false));
        // Sizes and strides, and scalars, are neither.
        assert_eq!(of("x__size0"), access(false, false));
        assert_eq!(of("n"), access(false, false));
    }

    /// The text of the expansion's `EXPLAIN` for one variant: from its `entry` line to the next.
    fn explained_entry(tokens: &str, entry: &str) -> String {
        let start = tokens
            .find(&format!("entry {entry}\\n"))
            .unwrap_or_else(|| panic!("no entry {entry} in the expansion"));
        let rest = &tokens[start + 6..];
        rest[..rest.find("entry ").unwrap_or(rest.len())].to_string()
    }

    /// A tensor parameter with a raw name (`r#type`) gets the language's error for raw
    /// parameter names. Before, desugaring it panicked first (`"r#type__size0" is not a valid
    /// Ident`, found by the malformed-kernel generator with seed 1795790359084525575).
    #[test]
    fn raw_tensor_names_get_the_raw_name_error() {
        let tokens = crate::expand::tile_kernel(
            quote!(B = 256),
            quote! {
                fn k<const B: usize>(r#type: Tensor<f32, 1>) {
                    let offs = arange(0, B);
                    let mask = offs < r#type.size(0);
                    store(r#type + offs * r#type.stride(0), zeros::<f32>([B]), mask);
                }
            },
        )
        .to_string();
        assert!(
            tokens.contains("raw identifiers are not supported as a parameter's name")
                && tokens.contains("rename `r#type`"),
            "{tokens}"
        );
    }

    #[test]
    fn the_aligned_variant_assumes_unit_innermost_strides() {
        let tokens = crate::expand::tile_kernel(
            quote!(B = 512, num_warps = 4),
            quote! {
                fn scale<const B: usize>(x: Tensor<f32, 2>, out: Tensor<f32, 2>) {
                    let row = program_id(0);
                    let cols = arange(0, B);
                    let mask = cols < x.size(1);
                    let v = load(x + row * x.stride(0) + cols * x.stride(1), mask, 0.0);
                    store(out + row * out.stride(0) + cols * out.stride(1), v * 2.0, mask);
                }
            },
        )
        .to_string();
        assert!(!tokens.contains("compile_error"), "{tokens}");
        let aligned = explained_entry(&tokens, "scale");
        // Rows contiguous (`stride(1) == 1`) and starting 16-byte aligned: 128-bit accesses.
        for assumed in [
            "x__stride1 == 1",
            "out__stride1 == 1",
            "x__stride0 % 16 == 0",
        ] {
            assert!(
                aligned.contains(assumed),
                "{assumed} not assumed:\n{aligned}"
            );
        }
        assert_eq!(
            aligned.matches("[vector 4 × 32 bits").count(),
            2,
            "{aligned}"
        );
        // The launcher checks each stride before picking the variant, else takes the other,
        // which assumes nothing and accesses one element at a time.
        assert!(tokens.contains("check_equal"));
        let natural = explained_entry(&tokens, "scale__unaligned");
        assert!(!natural.contains("== 1"), "{natural}");
        assert_eq!(
            natural.matches("[vector 1 × 32 bits").count(),
            2,
            "{natural}"
        );
    }
    /// `requires = [x.stride(1) == 1, …]` pins the innermost strides for every variant: the
    /// unaligned one (any size or alignment) still knows which dimension is contiguous, so a
    /// transpose loads along `x`'s rows and stores along `out`'s, converting through shared
    /// memory; without it that variant keeps one layout for both (no conversion).
    #[test]
    fn required_unit_strides_are_facts_of_every_variant() {
        let transpose = |requires: TokenStream| {
            let tokens = crate::expand::tile_kernel(
                quote!(B = 32, num_warps = 4 #requires),
                quote! {
                    fn t<const B: usize>(x: Tensor<f32, 2>, out: Tensor<f32, 2>) {
                        let rm = program_id(0) * B + arange(0, B);
                        let rn = program_id(1) * B + arange(0, B);
                        let mask = (rm.expand_dims(1) < x.size(0)) & (rn.expand_dims(0) < x.size(1));
                        let v = load(
                            x + rm.expand_dims(1) * x.stride(0) + rn.expand_dims(0) * x.stride(1),
                            mask,
                            0.0,
                        );
                        let out_mask = (rn.expand_dims(1) < out.size(0)) & (rm.expand_dims(0) < out.size(1));
                        store(
                            out + rn.expand_dims(1) * out.stride(0) + rm.expand_dims(0) * out.stride(1),
                            v.trans(),
                            out_mask,
                        );
                    }
                },
            )
            .to_string();
            assert!(!tokens.contains("compile_error"), "{tokens}");
            explained_entry(&tokens, "t__unaligned")
        };
        let pinned = transpose(quote!(, requires = [x.stride(1) == 1, out.stride(1) == 1]));
        assert!(pinned.contains("shared memory"), "{pinned}");
        assert!(
            !pinned.contains("== 1"),
            "a fact, not an assumption: {pinned}"
        );
        let free = transpose(quote!());
        assert!(!free.contains("shared memory"), "{free}");
    }

    /// A stride the variant knows is bound to its value in the generated code (so `cols *
    /// x.stride(1)` folds to `cols`): the aligned variant's assumed unit stride, and a value
    /// pinned by `requires` in every variant; a stride nobody knows stays the argument.
    #[test]
    fn known_strides_are_bound_to_their_values() {
        let expand = |requires: TokenStream| {
            crate::expand::tile_kernel(
                quote!(B = 1024 #requires),
                quote! {
                    fn k<const B: usize>(x: Tensor<f32, 1>, out: Tensor<f32, 1>) {
                        let offs = program_id(0) * B + arange(0, B);
                        let mask = offs < x.size(0);
                        let v = load(x + offs * x.stride(0), mask, 0.0);
                        store(out + offs * out.stride(0), v, mask);
                    }
                },
            )
            .to_string()
        };
        let (known, argument) = (
            ": i32 = { let _ = x__stride0 ; 1 } ;",
            ": i32 = x__stride0 ;",
        );
        // Assumed 1 by the aligned variant only.
        let free = expand(quote!());
        assert!(!free.contains("compile_error"), "{free}");
        assert!(free.contains(known), "{free}");
        assert!(free.contains(argument), "{free}");
        // Pinned by `requires`: every variant's local is the value.
        let pinned = expand(quote!(, requires = [x.stride(0) == 1]));
        assert!(pinned.contains(known), "{pinned}");
        assert!(!pinned.contains(argument), "{pinned}");
    }
}
