//! The kernel's attribute (`num_warps`, const values, element types) and signature (parameters,
//! const and type parameters), read from `syn` into plain data. Problems are reported, never fatal: a bad
//! parameter is kept with an unknown type so the body is still checked.
//!
//! - [`attr`]: the attribute's lists (`num_warps`, const values, element types);
//! - [`signature`]: the parameters, const and type parameters, and the per-type copy of a kernel;
//! - [`specialisation`]: the attribute's lists matched with the signature, and their product;
//! - [`autotune`]: `autotune(key = […], configs = […])`, checked against the signature, and the
//!   specialisations its `configs` keep;
//! - [`requires`]: `requires = […]`, conditions on a launch's arguments, checked against the
//!   signature.

mod attr;
mod autotune;
#[cfg(test)]
mod autotune_tests;
mod requires;
#[cfg(test)]
mod requires_tests;
mod signature;
mod specialisation;
#[cfg(test)]
mod tests;

pub use attr::*;
pub use autotune::*;
pub use requires::*;
pub use signature::*;
pub use specialisation::*;
