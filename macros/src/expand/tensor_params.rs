//! Kernel parameters `x: Tensor<T, R>`: a tensor's base pointer, sizes and strides.
//!
//! Before the kernel is read, [`desugar`] replaces each such parameter by the scalars the PTX
//! entry receives — `x: Ptr<T>`, `x__size0: i32`, …, `x__stride0: i32`, … (`R` of each) — and
//! rewrites `x.size(d)` / `x.stride(d)` in the body to those scalars and `x.ptr()` to `x`, so
//! the rest of the pipeline sees an ordinary kernel. The generated `launch` takes the tensor
//! (an output — a parameter the kernel stores through, [`stored_params`] — by `&mut`, an input
//! by `&`) and passes its pointer, sizes and strides after checking rank and extent.

use super::{consts_param_arg, Own};
use crate::ir::{Kernel, OpKind, Region};
use crate::types::DType;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
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

impl TensorParam {
    pub fn sizes(&self) -> Vec<Ident> {
        (0..self.rank)
            .map(|d| format_ident!("{}__size{}", self.name, d))
            .collect()
    }

    pub fn strides(&self) -> Vec<Ident> {
        (0..self.rank)
            .map(|d| format_ident!("{}__stride{}", self.name, d))
            .collect()
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
        match &mut self.errors {
            Some(errors) => errors.combine(error),
            None => self.errors = Some(error),
        }
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
        let dim = match call.args.iter().collect::<Vec<_>>().as_slice() {
            [syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })] => i.base10_parse::<usize>().ok(),
            _ => None,
        };
        let Some(dim) = dim else {
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

/// For each parameter, whether the kernel writes memory through it: a `store` whose pointers
/// derive from it (through pointer arithmetic, broadcasts, selects and values carried by loops
/// and `if`s — where several pointers merge, each counts).
pub fn stored_params(kernel: &Kernel) -> Vec<bool> {
    let n = kernel.params.len().min(128);
    let mut from: Vec<u128> = vec![0; kernel.values.len()];
    for (i, param) in kernel.params.iter().take(n).enumerate() {
        from[param.value.0 as usize] |= 1 << i;
    }
    let is_ptr = |v: crate::ir::ValueId| matches!(kernel.ty(v).dtype, DType::Ptr(_));
    let mut stored: u128 = 0;
    loop {
        let mut changed = false;
        propagate(&kernel.body, &mut from, &mut stored, &mut changed, &is_ptr);
        if !changed {
            break;
        }
    }
    (0..kernel.params.len())
        .map(|i| i >= 128 || stored & (1 << i) != 0)
        .collect()
}

fn propagate(
    region: &Region,
    from: &mut [u128],
    stored: &mut u128,
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
        if let OpKind::Store { .. } = op.kind {
            if let Some(ptr) = op.operands.first() {
                *stored |= from[ptr.0 as usize];
            }
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
            propagate(inner, from, stored, changed, is_ptr);
        }
    }
}

/// The `launch` of a kernel with tensor parameters: on a stream, tensors by `&`/`&mut`.
/// `params` are the desugared parameters with their types, `stored` from [`stored_params`].
pub struct TensorLauncher<'a> {
    pub kernel: &'a str,
    pub tensors: &'a [TensorParam],
    pub params: &'a [(&'a Ident, &'a TokenStream)],
    pub stored: &'a [bool],
    pub consts_param: TokenStream,
    pub consts_value: TokenStream,
    pub args_value: TokenStream,
    /// Whether to define `Sizes` here (a kernel with type parameters defines it once, beside
    /// its generic launcher, for every element-type submodule).
    pub define_sizes: bool,
}

/// How a launcher receives one parameter of the desugared signature: a tensor (its pointer's
/// parameter) by `&` or `&mut`, any other parameter as it is. The sizes and strides of a
/// tensor are no parameters of the launcher.
enum Pass<'a> {
    Ref(&'a TensorParam),
    Mut(&'a TensorParam),
    Plain,
}

/// The launcher's side of the desugared parameters, shared by [`tensor_launcher`] and
/// [`generic_tensor_launcher`].
struct TensorSignature<'a> {
    /// The launcher's parameters: `x: &impl AsTensorRef<T>`, `y: &mut impl AsTensorMut<T>`,
    /// `n: i32`.
    params: Vec<TokenStream>,
    /// Their names, to forward to `launch_sized`.
    forward: Vec<TokenStream>,
    /// `let x__view = …tensor_ref(x);` for each tensor.
    views: Vec<TokenStream>,
    /// Each launcher parameter's name and how it is passed on.
    passes: Vec<(&'a Ident, Pass<'a>)>,
}

/// The view of the tensor argument `name` in a launcher's body.
fn view_ident(name: &Ident) -> Ident {
    format_ident!("{}__view", name, span = Span::mixed_site())
}

fn tensor_signature<'a, T: ToTokens>(
    tensors: &'a [TensorParam],
    params: &[(&'a Ident, &T)],
    stored: &[bool],
) -> TensorSignature<'a> {
    let mut sig = TensorSignature {
        params: Vec::new(),
        forward: Vec::new(),
        views: Vec::new(),
        passes: Vec::new(),
    };
    for (index, &(name, ty)) in params.iter().enumerate() {
        let pass = match tensors.iter().find(|t| t.covers(index)) {
            Some(tensor) if tensor.first == index => {
                let elem = &tensor.elem;
                let view = view_ident(name);
                if stored[index] {
                    sig.params
                        .push(quote!(#name: &mut impl ::tessera::tensor::AsTensorMut<#elem>));
                    sig.views.push(quote! {
                        let #view = ::tessera::tensor::AsTensorMut::tensor_mut(#name);
                    });
                    Pass::Mut(tensor)
                } else {
                    sig.params
                        .push(quote!(#name: &impl ::tessera::tensor::AsTensorRef<#elem>));
                    sig.views.push(quote! {
                        let #view = ::tessera::tensor::AsTensorRef::tensor_ref(#name);
                    });
                    Pass::Ref(tensor)
                }
            }
            Some(_) => continue,
            None => {
                sig.params.push(quote!(#name: #ty));
                Pass::Plain
            }
        };
        sig.forward.push(quote!(#name));
        sig.passes.push((name, pass));
    }
    sig
}

pub fn tensor_launcher(l: &TensorLauncher<'_>) -> TokenStream {
    let Own {
        consts,
        grid,
        args,
        spec,
        stream,
        module,
        sizes,
        ..
    } = Own::names();
    let sig = tensor_signature(l.tensors, l.params, l.stored);
    let mut unpack = Vec::new();
    let mut uses = Vec::new();
    let mut size_values = Vec::new();
    for (name, pass) in &sig.passes {
        let (tensor, used) = match pass {
            Pass::Ref(tensor) => (tensor, quote!(use_read)),
            Pass::Mut(tensor) => (tensor, quote!(use_write)),
            Pass::Plain => continue,
        };
        let view = view_ident(name);
        let (dims, strides, rank) = (tensor.sizes(), tensor.strides(), tensor.rank);
        let (kernel, pstr) = (l.kernel, name.to_string());
        unpack.push(quote! {
            let (#name, [#(#dims),*], [#(#strides),*]) =
                #view.kernel_parts::<#rank>(#kernel, #pstr)?;
        });
        uses.push(quote!(#view.#used()));
        // The sizes are non-negative `i32`s (`kernel_parts` checked them).
        size_values.push(quote!(#name: [#(#dims as usize),*]));
    }
    let (views, consts_value, args_value) = (&sig.views, &l.consts_value, &l.args_value);
    let sizes_struct = if l.define_sizes {
        sizes_struct(l.tensors)
    } else {
        quote!()
    };
    let launch = launch_via_sized(
        "Enqueues the kernel on `stream` from `module` (the PTX of the kernel crate, or the \
         emulator's `Device::host_module`) and returns at once: tensors the kernel stores to are \
         taken by `&mut`, the others by `&`; each tensor's rank and extent are checked, and its \
         pointer, sizes and strides passed. Picks the specialisation (and alignment variant), \
         block `32 × NUM_WARPS` threads, the kernel's dynamic shared memory. The grid is a value \
         or a closure of the const values; `launch_sized` derives it from the tensors' sizes too.",
        &[],
        &sig,
        l.consts_param.is_empty(),
    );
    let launch_sized = launch_sized(
        &[],
        &sig,
        &l.consts_param,
        quote! {
            #consts_value
            #(#views)*
            #(#unpack)*
            let #sizes = Sizes { #(#size_values),* };
            let #args: Args = #args_value;
            let #spec = specialisation(&#consts, &#args)?;
            let #grid = ::tessera::tile::GridDims::dims(#grid(&#consts, &#sizes));
            #stream.launch_resolved(
                #module,
                &#spec.entry.resolve(#module, #spec.kernel)?,
                ::tessera::tile::launch_config(#spec, #grid),
                #args,
                &[#(#uses),*],
            )
        },
    );
    quote! {
        #sizes_struct

        #launch

        #launch_sized
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
        #[cfg(not(target_arch = "nvptx64"))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Sizes { #(#fields),* }
    }
}

/// The launcher of a kernel with type parameters and tensor parameters: `Sizes`, and `launch` /
/// `launch_sized` generic over the type parameters (`bounds`), which call the submodule of the
/// tensors' element types (`groups`: per submodule, `TypeId` conditions on the type parameters)
/// with the views retyped ([`TensorRef::into_element`]) and the other arguments as they are
/// (`transmute_copy` of a `Ptr<T>` to the submodule's `Ptr<f16>` when `T` is `f16`).
///
/// [`TensorRef::into_element`]: ../../tessera/tensor/struct.TensorRef.html#method.into_element
pub fn generic_tensor_launcher(
    kernel: &str,
    tensors: &[TensorParam],
    params: &[(&Ident, &syn::Type)],
    stored: &[bool],
    bounds: &[TokenStream],
    groups: &[(Ident, Vec<TokenStream>)],
    has_consts: bool,
) -> TokenStream {
    let Own {
        stream,
        module,
        grid,
        ..
    } = Own::names();
    let sig = tensor_signature(tensors, params, stored);
    let (consts_param, consts_arg) = consts_param_arg(has_consts);
    let mismatch = quote! {
        ::tessera::launch::LaunchError::InvalidConfig {
            kernel: #kernel.to_string(),
            reason: "a tensor's element type is not the specialisation's".to_string(),
        }
    };
    let arms = groups.iter().map(|(sub, same)| {
        let args = sig.passes.iter().map(|(name, pass)| {
            let view = view_ident(name);
            match pass {
                Pass::Ref(_) => quote!(&#view.clone().into_element().ok_or_else(|| #mismatch)?),
                Pass::Mut(_) => quote!(&mut #view.into_element().ok_or_else(|| #mismatch)?),
                // SAFETY (at the call): the type parameters are the submodule's element types,
                // so the argument already has the type of the submodule's parameter.
                Pass::Plain => quote!(unsafe { ::core::mem::transmute_copy(&#name) }),
            }
        });
        quote! {
            if true #(&& #same)* {
                return #sub::launch_sized(#stream, #module, #consts_arg #grid, #(#args),*);
            }
        }
    });
    let sizes = sizes_struct(tensors);
    let launch = launch_via_sized(
        "Enqueues the specialisation of the tensors' element types (see each submodule's \
         `launch`) on `stream`: a type parameter is given by the arguments' types, e.g. a \
         `Tensor<f16>`.",
        bounds,
        &sig,
        !has_consts,
    );
    let views = &sig.views;
    let launch_sized = launch_sized(
        bounds,
        &sig,
        &consts_param,
        quote! {
            #(#views)*
            #(#arms)*
            ::core::result::Result::Err(::tessera::launch::LaunchError::InvalidConfig {
                kernel: #kernel.to_string(),
                reason: "no specialisation for these element types".to_string(),
            })
        },
    );
    quote! {
        #sizes

        #launch

        #launch_sized
    }
}

/// `launch_sized`: generic over `bounds` (the type parameters, if any), taking the stream, the
/// module, the const values (`consts_param`, empty for a kernel without them), the grid closure
/// and the launcher's parameters; `body` computes the launch.
fn launch_sized(
    bounds: &[TokenStream],
    sig: &TensorSignature<'_>,
    consts_param: &TokenStream,
    body: TokenStream,
) -> TokenStream {
    let Own {
        stream,
        module,
        grid,
        ..
    } = Own::names();
    let signature = &sig.params;
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        /// `launch` with the grid computed by `grid` from the const values and the sizes of the
        /// tensor arguments (`Sizes`, one field per tensor parameter), e.g.
        /// `|c: &Consts, s: &Sizes| (s.out[0].div_ceil(c.BLOCK) as u32,)`.
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

/// `launch`: `launch_sized` with a grid closure that ignores the sizes (`bounds`: the generic
/// parameters, `sig`: the tensor and other parameters).
fn launch_via_sized(
    doc: &str,
    bounds: &[TokenStream],
    sig: &TensorSignature<'_>,
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
    let (signature, forward) = (&sig.params, &sig.forward);
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
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
