//! Linear layouts over F₂ (the Triton paper *Linear Layouts: Robust Code Generation of Efficient
//! Tensor Computation Using F₂*).
//!
//! A layout maps the bits of hardware indices — `register`, `lane`, `warp` (`Reg`, `Thr`, `Wrp`)
//! or a shared-memory `offset` — to the bits of logical tensor coordinates `dim0`, `dim1`, …, by a
//! matrix over F₂. This crate holds
//! - the algebra: [`LinearLayout`] and its operations, each named after the math;
//! - the shape transforms of a tile (`trans`, `reshape`, `expand_dims`, `broadcast`, `join`,
//!   `split`, the slice of a reduction) as operations on its layout;
//! - the hardware layout families (blocked, slice, MMA, dot operands, shared-memory swizzles, …)
//!   as constructors of linear layouts, apart from the algebra;
//! - the planning algorithms of code generation (conversions, swizzling, vectorization, gather);
//! - host-side (`std`): layouts as JSON ([`spec`]; the schema is the repository's
//!   `test-support/oracle/README.md`), SVG pictures and the `tessera-layout` CLI.
//!
//! The core is `no_std` and `const fn`: an invalid `const` layout is a compile error carrying the
//! layout's own message (see [`expect_layout`]).
#![no_std]
#![warn(missing_docs)]

#[cfg(any(test, feature = "std"))]
extern crate std;

/// `?` for `const fn`: unwraps `Ok` or returns the error.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

mod algebra;
mod error;
pub mod f2;
pub mod families;
mod label;
mod linear_layout;
#[cfg(feature = "std")]
pub mod plan;
mod shape_ops;
#[cfg(feature = "spec")]
pub mod spec;
#[cfg(feature = "std")]
pub mod svg;

pub use error::{ErrorMessage, LayoutError};
pub use label::Label;
pub use linear_layout::{
    expect_layout, log2_exact, LinearLayout, MAX_BASES, MAX_DIMS, MAX_OUT_BITS,
};
