//! Generated valid tile kernels, tested end to end: `build.rs` renders a few hundred random
//! kernels of the grammar in [`grammar`] (seeded by `TESSERA_GEN_SEED`, else the clock) into
//! `#[tile_kernel]` functions, rustc expands and compiles them, and `tests/generated.rs` runs
//! each on the CPU emulator against the evaluator in [`eval`] applied to the same tree.

pub mod eval;
pub mod grammar;
