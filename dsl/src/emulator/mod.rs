//! CPU emulator of the device runtime layer (host only).
//!
//! A kernel built for the host is an ordinary Rust function whose [`crate::device`] calls land
//! here. [`run_grid`] runs it the way a GPU would:
//!
//! * **Threads.** Each GPU thread (up to 1024 a block) is a stackful coroutine; a few OS
//!   threads (one per core) each host a few blocks at once, each in its own CTA slot (shared
//!   memory, barriers), up to 32 blocks in flight in all, like CTAs resident on an SM. A worker
//!   resumes its blocks' threads in turn: a thread runs until it waits (a barrier, a warp
//!   collective, an `mbarrier`, `wgmma` or `mfma`) or has made 4,096 global accesses, so a
//!   wait costs a switch of stacks, not of OS threads. Blocks start in linear order (x fastest)
//!   as slots free up; a block only ever waits for its own threads, so this adds no deadlocks.
//! * **Barriers.** `bar.sync` with barrier ids 0..16, either for all threads of the CTA (threads
//!   that have exited count as arrived, as on the GPU) or for an explicit thread count.
//! * **Warps** of 32 consecutive linear thread ids. Warp-collective operations (`shfl.sync`,
//!   `bar.warp.sync`, `ldmatrix`, `stmatrix`, `mma.sync`) wait until every lane of the membermask
//!   has arrived, then compute all lanes' results at once using the per-lane fragment layouts of
//!   the PTX ISA. Misuse (a mask without the executing lane, naming lanes that do not exist,
//!   divergent operations under one mask, a shuffle reading a lane outside the mask) is an error.
//! * **Shared memory.** `dynamic_shared_bytes` per CTA, zero-initialised for every block,
//!   addressed by 32-bit shared-window addresses starting at [`SHARED_WINDOW_BASE`] (the same
//!   0x400 that sm_90 uses after its 1 KiB reserved area). Every access is bounds- and
//!   alignment-checked: an out-of-range access is an [`EmulatorError::SharedOutOfBounds`] naming
//!   the thread and address, never undefined behaviour.
//! * **Global memory** is host memory addressed by [`crate::Ptr`]. Accesses are checked for null
//!   and alignment; with [`run_grid_in`] also against the launch's allocations (an access
//!   outside them is an [`EmulatorError::GlobalOutOfBounds`]; without a map the emulator cannot
//!   know the extent of a host allocation).
//! * **`cp.async`** copies complete when their group is waited for, not when issued, so a
//!   missing `cp.async.wait_group` shows up on the emulator as it would on the GPU.
//! * **Hopper.** `mbarrier` objects keep their arrival count, transaction bytes and phase
//!   beside shared memory; a wait sleeps until its phase completes, a wait on a phase the
//!   thread has already seen (parity not flipped) is an error, and a wait that cannot end is a
//!   deadlock naming the barrier. TMA copies read the tensor map's box (zeros outside the
//!   tensor), apply its swizzle and land when their barrier's phase completes. `wgmma`
//!   computes each thread's accumulator fragment at issue but marks it in flight: reading it
//!   before the `wgmma.wait_group` that retires it, or issuing a `wgmma` on registers touched
//!   since the last `wgmma.fence`, is an [`EmulatorError::AsyncOperation`]. So is writing
//!   (`st.shared`, `stmatrix`, issuing a `cp.async`) a shared word that a `wgmma` in flight
//!   may still read: before its warpgroup retired it, or, from another warpgroup, before a
//!   barrier that follows the retirement. Proxy fences (`fence.proxy.async`) are not modelled.
//! * **Targets.** A launch emulates sm_80 or sm_90a ([`EmulatedTarget`]: [`with_target`] on
//!   the launching thread, else `TESSERA_EMULATE_SM`, else sm_80); a `#[tile_kernel]` with a
//!   `dot` runs its body for that target ([`running_target`]).
//! * **Deadlocks** (every live thread waiting on something that cannot complete) and failures
//!   in any thread (including panics in the kernel body) stop the launch with an error that names
//!   the block and thread; the other threads are released, nothing hangs.
//!
//! # Shared-memory wavefronts
//!
//! The emulator counts shared-memory **wavefronts** per warp-wide access with the bank model of
//! [`report::wavefronts`]: 32 banks × 4 bytes; an access needs as many wavefronts as the largest
//! number of distinct 4-byte words that the active lanes touch in one bank (lanes reading the
//! same word are served by one broadcast). So a conflict-free 32-bit access is 1 wavefront, 32
//! lanes hitting one bank at different addresses are 32, and a 128-bit access by 32 lanes over
//! 512 contiguous bytes is 4. The lanes of a warp that execute the k-th instance of the same call
//! site of the runtime layer (`#[track_caller]` location) form one warp-wide access, so
//! divergent lanes and loops are grouped correctly. `ldmatrix`/`stmatrix` (16 bytes per row
//! address) and the shared side of `cp.async` are counted with the same model. The
//! [`EmulatorReport`] gives totals, the conflict-free ideal and a per-call-site breakdown.
//!
//! On NVIDIA targets the model is the whole-warp one stated above; real hardware splits 64- and
//! 128-bit accesses into half- and quarter-warp phases, so for those it can differ from the
//! GPU's counters. Emulating amdgpu, loads and stores are counted per phase of AMD's LDS
//! (`tessera_layout::plan::bank::phased_wavefronts`): the most distinct words a bank serves in
//! each phase, summed; a phase is half a wave (one 32-lane warp) for 32-bit accesses, 16
//! consecutive lanes for 64-bit ones, 8 for a 128-bit store, and for a 128-bit load the lane
//! groups of `ds_read_b128` ({0–3, 20–23}, {4–7, 16–19}, …), which the AMD plans are
//! swizzled for.
//!
//! # Numerics
//!
//! Conversions are bit-identical to the PTX `cvt` (see [`crate::dtype`]). `mma` with f16/bf16
//! inputs sums the exact products in f64 and rounds once to f32; tensor cores accumulate with
//! their own internal precision, so results can differ from the GPU in the last bits. A NaN
//! result is the GPU's canonical `0x7fffffff`, as for the f32 arithmetic of
//! [`crate::device::add_f32`] & co. and [`crate::tile::Num`]. The s8 `mma` is exact (wrapping,
//! as without `.satfinite`).

mod collective;
mod cp_async_state;
mod cta;
mod error;
mod grid;
mod machine;
pub(crate) mod mbarrier;
pub(crate) mod mfma;
pub(crate) mod ops;
pub mod report;
pub(crate) mod target;
pub(crate) mod tma;
mod warp;
pub(crate) mod wave;
pub(crate) mod wgmma;
mod wgmma_reads;

pub use error::{EmulatorError, Site, ThreadRef};
pub use grid::{run_grid, run_grid_in};
pub use machine::{MAX_DYNAMIC_SHARED_BYTES, MAX_THREADS_PER_BLOCK, SHARED_WINDOW_BASE};
pub use report::{EmulatorReport, SharedAccessKind, SharedSiteReport, WavefrontStats};
pub use target::{launch_target, launch_target_for, running_target, with_target, EmulatedTarget};
pub use tma::tensor_map_in_memory;
