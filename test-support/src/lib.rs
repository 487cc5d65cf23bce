//! Test-only code shared by the workspace's tests and the layout oracle example; used only as a
//! dev-dependency.
//!
//! - [`rng`]: the seeded test RNG (splitmix64), so a failing case names a seed that reproduces it.
//! - [`random`]: random linear layouts (distributed, memory, injective, surjective) and brute-force
//!   evaluation; [`plan_gen`]: random warp layouts, memory layouts and conversion pairs for the
//!   planners, and the brute-force bank-conflict count.
//! - [`simulate`]: a warp-level machine that executes conversion and gather plans on data.
//! - [`oracle`]: the Triton oracle files shipped in `test-support/oracle/` and their checkers.
//! - [`attention`]: softmax attention in f64, per query row (the attention tests' reference).
//! - [`values`]: test data whose arithmetic is exact, and the float comparison with references.

pub mod attention;
pub mod oracle;
pub mod plan_gen;
pub mod random;
pub mod rng;
pub mod simulate;
pub mod values;

pub use rng::Rng;
