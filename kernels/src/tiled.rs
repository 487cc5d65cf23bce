//! Kernels written in the tile language with `#[tile_kernel]`: layouts inferred, code generated
//! for nvptx64 and (the same expansion, built for the host) the emulator. Each kernel is a module
//! named after it with its PTX entries, host builds and typed launcher (`launch` on a
//! `tessera::launch::Device`, `emulate` directly on the emulator).
//!
//! Each family is a crate of its own (`kernels/tiled/<family>`, `tessera-kernels-<family>`),
//! re-exported here under its family's name: changing a kernel recompiles its family and what
//! depends on it, not every kernel. The PTX of `tessera-kernels` holds every family's entries
//! (`tessera::build::PtxBuild` merges the PTX of the kernel crates it depends on).
//!
//! For amdgpu the families are kernels of one code object (a `dot` is `v_mfma` there; a variant
//! whose amdgpu body is another's runs that one's kernel: `tessera::Kernel::amdgpu_entry`).

pub use tessera_kernels_atomics as atomics;
pub use tessera_kernels_attention as attention;
pub use tessera_kernels_autotuned as autotuned;
pub use tessera_kernels_bench_triton as bench_triton;
pub use tessera_kernels_blocks as blocks;
pub use tessera_kernels_convert_layout as convert_layout;
pub use tessera_kernels_elementwise as elementwise;
pub use tessera_kernels_gather as gather;
pub use tessera_kernels_loops as loops;
pub use tessera_kernels_many_params as many_params;
pub use tessera_kernels_matmul as matmul;
pub use tessera_kernels_norm as norm;
pub use tessera_kernels_ops as ops;
pub use tessera_kernels_random as random;
pub use tessera_kernels_reduce as reduce;
pub use tessera_kernels_scan as scan;
pub use tessera_kernels_tensors as tensors;
pub use tessera_kernels_transpose as transpose;
