//! The names the generated launchers give their own locals and parameters (`module`, `grid`,
//! `consts`, …): hygienic, so a kernel parameter of the same name neither repeats nor shadows
//! them.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// A name of the launcher's own, hygienic (`Span::mixed_site`): a parameter of the kernel
/// of the same name neither repeats nor shadows it.
fn own(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The launchers' own local names ([`own`]).
pub(crate) struct Own {
    pub device: Ident,
    pub module: Ident,
    pub stream: Ident,
    pub consts: Ident,
    pub grid: Ident,
    pub args: Ident,
    pub spec: Ident,
    pub sizes: Ident,
    /// `specialisation`, the function picking a launch's specialisation.
    pub select: Ident,
    /// The autotuned launchers' locals and items (`crate::autotune`).
    pub reset: Ident,
    pub key: Ident,
    pub choice: Ident,
    pub index: Ident,
    /// `TUNER`, `CANDIDATES` and `launch_tuned_with`.
    pub tuner: Ident,
    pub candidates: Ident,
    pub tuned_with: Ident,
}

/// The const values as a launcher's parameter (`consts: Consts,`) and as the argument it
/// passes on (`consts,`); both empty for a kernel without const values.
pub(crate) fn consts_param_arg(has_consts: bool) -> (TokenStream, TokenStream) {
    let consts = Own::names().consts;
    if has_consts {
        (quote!(#consts: Consts,), quote!(#consts,))
    } else {
        (quote!(), quote!())
    }
}

impl Own {
    pub(crate) fn names() -> Own {
        Own {
            device: own("device"),
            module: own("module"),
            stream: own("stream"),
            consts: own("consts"),
            grid: own("grid"),
            args: own("args"),
            spec: own("spec"),
            sizes: own("sizes"),
            select: own("specialisation"),
            reset: own("reset"),
            key: own("key"),
            choice: own("choice"),
            index: own("index"),
            tuner: own("TUNER"),
            candidates: own("CANDIDATES"),
            tuned_with: own("launch_tuned_with"),
        }
    }
}
