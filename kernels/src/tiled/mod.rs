//! Kernels written in the tile language with `#[tile_kernel]`: layouts inferred, code generated
//! for nvptx64 and (the same expansion, built for the host) the emulator. Each kernel is a module
//! named after it with its PTX entries, host builds and typed launcher (`launch` on a
//! `tessera::launch::Device`, `emulate` directly on the emulator).

pub mod atomics;
pub mod attention;
pub mod autotuned;
pub mod bench_triton;
pub mod blocks;
pub mod convert_layout;
pub mod elementwise;
pub mod gather;
pub mod loops;
pub mod many_params;
pub mod matmul;
pub mod norm;
pub mod ops;
pub mod random;
pub mod reduce;
pub mod scan;
pub mod tensors;
pub mod transpose;
