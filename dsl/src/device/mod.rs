//! The device runtime layer: what generated kernels call, also usable by hand.
//!
//! Every function here has one signature and two bodies. Compiled for `nvptx64-nvidia-cuda`
//! it is `#[inline(always)]` inline PTX (`asm!`, the instruction is named in each doc comment)
//! or a `core::arch::nvptx` intrinsic. Compiled for the host it calls the CPU
//! [`emulator`](crate::emulator), which gives the same results for a kernel run under
//! [`run_grid`](crate::emulator::run_grid). Kernels are written once, against this module, and
//! built twice (see [`device_kernel!`](crate::device_kernel)).
//!
//! A part of the layer also has a third body, for AMD GPUs (`amdgcn-amd-amdhsa`, target arch
//! `amdgpu`): the special registers, `sync_threads`, global loads and stores, shuffles and f32
//! arithmetic, conversions, float math, shared memory (LDS) and atomics, with a warp being half
//! of a 64-lane wave (`device/amdgpu.rs` says how), and AMD's own matrix cores (`v_mfma`, a
//! collective of the two warps of a wave), which do not exist in nvptx64 builds. The NVIDIA-only
//! rest (`mma`, `wgmma`, `cp.async`, TMA, mbarriers, `ldmatrix`/`stmatrix`) does not exist in
//! amdgpu builds, so a kernel that uses it fails to compile there.
//!
//! | area | functions |
//! |---|---|
//! | special registers | [`thread_idx_x`], [`block_idx_x`], [`block_dim_x`], [`grid_dim_x`] (and y, z), [`lane_id`], [`warp_id`], [`linear_thread_id`] |
//! | barriers | [`sync_threads`], [`barrier_sync`], [`barrier_sync_count`], [`sync_warp`] |
//! | shuffles | [`shfl_idx`], [`shfl_bfly`], [`shfl_up`], [`shfl_down`] (32- and 64-bit values), `*_b32` forms |
//! | atomics | [`atom`] (`atom.<sem>.<scope>.global.<op>.<type>`, predicated, returns the old value; [`AtomicElem`] lists the types) |
//! | global memory | [`ld_global_v1`]/`v2`/`v4` (predicated, `other` on masked lanes), [`st_global_v1`]/`v2`/`v4`, sub-word [`ld_global_u8`]/`u16`, [`st_global_u8`]/`u16` |
//! | shared memory | [`dynamic_shared_base`], [`ld_shared_v1`]/`v2`/`v4`, [`st_shared_v1`]/`v2`/`v4`, [`ldmatrix_x1`]/`x2`/`x4` (+`_trans`), `stmatrix_*` (sm_90) |
//! | async copies | [`cp_async_ca`], [`cp_async_ca_zfill`], [`cp_async_cg`], [`cp_async_cg_zfill`], [`cp_async_commit_group`], [`cp_async_wait_group`], [`cp_async_wait_all`] |
//! | conversions | [`f32_to_f16`], [`f16_to_f32`], [`f32_to_bf16`], [`bf16_to_f32`], f8 e4m3/e5m2, i32/u32 |
//! | f32 arithmetic | [`add_f32`], [`sub_f32`], [`mul_f32`], [`div_f32`] (the GPU's canonical NaN results on the host too), [`neg_f32`], [`abs_f32`] |
//! | float math | [`max_f32`], [`min_f32`] (`max.NaN`), [`ex2_approx_ftz_f32`], [`lg2_approx_f32`], [`sqrt_rn_f32`], [`sqrt_approx_ftz_f32`], [`fma_rn_ftz_f32`], [`mul_rn_ftz_f32`], [`rsqrt_approx_f32`], [`fma_rn_f32`], f64 `sqrt`/`rsqrt`/`fma`, [`max_f64`], [`min_f64`], [`sin_approx_f32`], [`cos_approx_f32`], [`tanh_approx_f32`] |
//! | integer | [`mul_hi_u32`] |
//! | tensor cores | [`mma_m16n8k16_f16_f32`], [`mma_m16n8k16_bf16_f32`], [`mma_m16n8k32_s8_s32`] |
//! | AMD wave shuffles (amdgpu, host) | [`wave_shfl_idx_b32`], [`wave_shfl_idx`] (64 lanes: two warps) |
//! | AMD matrix cores (amdgpu, host) | [`mfma_f32_32x32x8_f16`], [`mfma_f32_32x32x8_bf16`], [`mfma_f32_16x16x16_f16`], [`mfma_f32_16x16x16_bf16`], [`mfma_i32_32x32x16_i8`], [`mfma_i32_16x16x32_i8`] |
//! | warpgroup MMA (sm_90a) | [`WgmmaAccumulator`], [`wgmma_m64n128k16_f16`] & co. (N = 64, 128, 256; f16, bf16; `_rs`: A from registers), [`wgmma_pin`], [`wgmma_fence`], [`wgmma_commit_group`], [`wgmma_wait_group`], [`wgmma_descriptor_offset`] |
//! | mbarrier, TMA (sm_90) | [`mbarrier_init`], [`mbarrier_arrive`], [`mbarrier_arrive_expect_tx`], [`mbarrier_try_wait_parity`], [`mbarrier_wait_parity`], [`mbarrier_inval`], [`TensorMap`], [`tma_load_2d`], [`fence_mbarrier_init`], [`fence_proxy_async_shared_cta`] |
//!
//! # Target SM, PTX ISA version and gating
//!
//! The kernel crate is built with `-C target-cpu=sm_80` by default (root `.cargo/config.toml`).
//! LLVM then emits `.version 7.0` (the oldest ISA that knows sm_80); for `target-cpu=sm_89` and
//! `sm_90` it emits `.version 7.8`, the ISA those targets need, so no flag is needed for
//! sm_90-only instructions when building for sm_90. To raise only the ISA version use
//! `-C target-feature=+ptx78` (an unstable target feature: rustc prints a warning). `target-cpu`
//! sets `cfg(target_feature = "sm_NN")` for the chosen SM and every older one, so wrappers are
//! gated with `#[cfg(target_feature = "sm_90")]` (`stmatrix`) or `"sm_89"` (hardware f8 `cvt`;
//! software fallback below sm_89). `ptxNN` features only appear in `cfg` when passed explicitly.
//!
//! # Inline asm on nvptx64
//!
//! `asm!` operands use the register classes `reg16`, `reg32` (u32/i32/f32) and `reg64`; there is
//! no predicate class (`reg_pred` is rejected), so predicated instructions build their predicate
//! inside a scoped block: `{ .reg .pred p; setp.ne.b32 p, %pred, 0; @p ld.global... }`. `const`
//! operands work (immediates such as the `cp.async` size or `wait_group` count). Every function
//! of this crate that device code calls is `#[inline]`/`#[inline(always)]` or generic: a
//! non-inline function of another crate would be an unresolved `.extern .func` in the kernel
//! crate's PTX (each crate's PTX is a separate `--emit=asm` output).
//!
//! # Memory and convergence
//!
//! Loads are `asm!(..., options(readonly))`, stores and barriers are plain `asm!` (treated as
//! reading and writing memory), so the compiler does not move memory accesses across barriers.
//! Warp-collective wrappers (`shfl`, `ldmatrix`, `stmatrix`, `mma`) are not `pure`: they are
//! never removed, merged or speculated. (rustc does not mark inline asm `convergent`; LLVM could
//! in principle duplicate one into divergent paths. None of the kernels here rely on more than
//! what is checked in their SASS.)
//!
//! On nvptx64 this crate provides the `#[panic_handler]` (it executes `trap`), so kernel crates
//! need none; with `-Cpanic=immediate-abort` panics compile to `trap` in place anyway.

/// Defines `pub fn $name(args) -> $t`: on nvptx64 the one register-only instruction `$ptx`
/// (operands `{d}` and the arguments by name, registers of class `$reg`), on the host the
/// expression `$host` of the same arguments, on amdgpu the expression `$amd` (a function without
/// an `amdgpu` expression does not exist there).
macro_rules! register_op {
    ($(#[$doc:meta])* $name:ident($($arg:ident),+): $t:ty, $reg:ident, $ptx:literal, host $host:expr) => {
        register_op!(@define [cfg(not(target_arch = "amdgpu"))] $(#[$doc])*
            $name($($arg),+): $t, $reg, $ptx, host $host, amdgpu unreachable!());
    };
    (
        $(#[$doc:meta])* $name:ident($($arg:ident),+): $t:ty, $reg:ident, $ptx:literal,
        host $host:expr, amdgpu $amd:expr
    ) => {
        register_op!(@define [cfg(all())] $(#[$doc])*
            $name($($arg),+): $t, $reg, $ptx, host $host, amdgpu $amd);
    };
    (
        @define [$gate:meta] $(#[$doc:meta])* $name:ident($($arg:ident),+): $t:ty, $reg:ident,
        $ptx:literal, host $host:expr, amdgpu $amd:expr
    ) => {
        $(#[$doc])*
        #[$gate]
        #[inline(always)]
        pub fn $name($($arg: $t),+) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                let d: $t;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!(
                        $ptx,
                        d = out($reg) d,
                        $($arg = in($reg) $arg,)+
                        options(pure, nomem, nostack)
                    );
                }
                d
            }
            #[cfg(target_arch = "amdgpu")]
            {
                $amd
            }
            #[cfg(not(tessera_device))]
            {
                $host
            }
        }
    };
}

/// Defines `pub fn $name()`: on nvptx64 the operand-free instruction `$ptx` (a barrier, fence
/// or group operation of this thread; a plain `asm!`, so the compiler keeps memory accesses on
/// their side of it), on the host the block `$host` (the emulator's model of it), on amdgpu the
/// block `$amd` (a function without an `amdgpu` block does not exist there).
macro_rules! operandless_op {
    ($(#[$doc:meta])* $name:ident, $ptx:literal, host $host:block) => {
        operandless_op!(@define [cfg(not(target_arch = "amdgpu"))] $(#[$doc])*
            $name, $ptx, host $host, amdgpu {});
    };
    ($(#[$doc:meta])* $name:ident, $ptx:literal, host $host:block, amdgpu $amd:block) => {
        operandless_op!(@define [cfg(all())] $(#[$doc])* $name, $ptx, host $host, amdgpu $amd);
    };
    (@define [$gate:meta] $(#[$doc:meta])* $name:ident, $ptx:literal, host $host:block, amdgpu $amd:block) => {
        $(#[$doc])*
        #[$gate]
        #[inline(always)]
        pub fn $name() {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: an instruction without operands that orders or waits for this thread's
            // own work: no memory-safety preconditions.
            unsafe {
                asm!($ptx, options(nostack));
            }
            #[cfg(target_arch = "amdgpu")]
            $amd
            #[cfg(not(tessera_device))]
            $host
        }
    };
}

#[cfg(target_arch = "amdgpu")]
mod amdgpu;
mod atomic;
#[cfg(not(target_arch = "amdgpu"))]
mod cp_async;
mod cvt;
pub(crate) mod float;
mod global;
mod math;
#[cfg(not(target_arch = "amdgpu"))]
mod mbarrier;
#[cfg(not(target_arch = "nvptx64"))]
mod mfma;
#[cfg(not(target_arch = "amdgpu"))]
mod mma;
mod shared;
pub(crate) mod shfl;
mod special;
mod sreg;
mod sync;
#[cfg(not(target_arch = "amdgpu"))]
mod tma;
#[cfg(not(target_arch = "nvptx64"))]
mod wave;
#[cfg(not(target_arch = "amdgpu"))]
mod wgmma;
mod word;

pub use atomic::*;
#[cfg(not(target_arch = "amdgpu"))]
pub use cp_async::*;
pub use cvt::*;
pub use float::*;
pub use global::*;
pub use math::*;
#[cfg(not(target_arch = "amdgpu"))]
pub use mbarrier::*;
#[cfg(not(target_arch = "nvptx64"))]
pub use mfma::*;
#[cfg(not(target_arch = "amdgpu"))]
pub use mma::*;
pub use shared::*;
pub use shfl::*;
pub use special::*;
pub use sreg::*;
pub use sync::*;
#[cfg(not(target_arch = "amdgpu"))]
pub use tma::*;
#[cfg(not(target_arch = "nvptx64"))]
pub use wave::*;
#[cfg(not(target_arch = "amdgpu"))]
pub use wgmma::*;
pub use word::{ShflValue, B32};

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}

#[cfg(target_arch = "amdgpu")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // `llvm.trap`: `s_trap 2`, the wave stops and the dispatch reports an error.
    core::intrinsics::abort()
}

/// Defines a kernel once and compiles it twice.
///
/// ```
/// use tessera::device::*;
/// use tessera::Ptr;
///
/// tessera::device_kernel! {
///     /// out[i] = 2 * x[i]
///     pub fn double(x: Ptr<f32>, out: Ptr<f32>, n: u32) => DOUBLE {
///         let i = block_idx_x() * block_dim_x() + thread_idx_x();
///         let v = ld_global_v1(x.offset(i as isize), i < n, 0.0);
///         st_global_v1(out.offset(i as isize), i < n, 2.0 * v);
///     }
/// }
///
/// // On the host the handle runs on the emulator (the launcher does this for you).
/// let x = [1.0f32, 2.0, 3.0];
/// let mut out = [0.0f32; 3];
/// let (xp, op) = (Ptr::from_raw(x.as_ptr() as *mut f32), Ptr::from_raw(out.as_mut_ptr()));
/// tessera::emulator::run_grid([1, 1, 1], [4, 1, 1], 0, &|| (DOUBLE.emulate)((xp, op, 3)))
///     .unwrap();
/// assert_eq!(out, [2.0, 4.0, 6.0]);
/// assert_eq!(DOUBLE.name, "double");
/// ```
///
/// expands to
/// * on nvptx64: `#[no_mangle] pub unsafe extern "ptx-kernel" fn double(...)` (the PTX entry
///   `double`; the kernel crate needs `#![feature(abi_ptx)]`), plus the module-scope declaration
///   of dynamic shared memory ([`declare_dynamic_shared!`](crate::declare_dynamic_shared));
/// * on amdgpu: `#[no_mangle] pub unsafe extern "gpu-kernel" fn double(...)` (the code object's
///   kernel `double`; the kernel crate needs `#![feature(abi_gpu_kernel)]`);
/// * on the host: `pub unsafe fn double(...)` with the same body (its [`crate::device`] calls go
///   to the emulator) and `pub const DOUBLE: tessera::Kernel<(Ptr<f32>, Ptr<f32>, u32)>`, the
///   handle the launcher uses (`name` = `"double"`, `emulate` = the host function).
///
/// The body is an `unsafe` context (it is the body of an `unsafe fn`).
#[macro_export]
macro_rules! device_kernel {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) => $handle:ident $body:block
    ) => {
        #[cfg(target_arch = "nvptx64")]
        $crate::declare_dynamic_shared!();

        $(#[$attr])*
        ///
        /// # Safety
        /// A kernel entry point: launch it through its handle with pointers valid for what the
        /// kernel reads and writes.
        #[cfg(target_arch = "nvptx64")]
        #[no_mangle]
        $vis unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$attr])*
        ///
        /// # Safety
        /// A kernel entry point: launch it through its handle with pointers valid for what the
        /// kernel reads and writes.
        #[cfg(target_arch = "amdgpu")]
        #[no_mangle]
        // `Ptr<T>` is `#[repr(transparent)]` over `*mut T`, which the lint accepts.
        #[allow(improper_gpu_kernel_arg)]
        $vis unsafe extern "gpu-kernel" fn $name($($arg: $ty),*) $body

        $(#[$attr])*
        ///
        /// # Safety
        /// The host build of a kernel: call it only on a simulated GPU thread (inside
        /// `tessera::emulator::run_grid`, which the launcher does through the handle), with
        /// pointers valid for what the kernel reads and writes.
        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        $vis unsafe fn $name($($arg: $ty),*) $body

        #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
        #[doc = concat!(
            "Host handle of the kernel [`", stringify!($name), "`] (PTX entry `",
            stringify!($name), "`; the emulator runs the host build)."
        )]
        $vis const $handle: $crate::Kernel<($($ty,)*)> = $crate::Kernel {
            name: stringify!($name),
            emulate: |($($arg,)*): ($($ty,)*)| unsafe { $name($($arg),*) },
            targets: $crate::KernelTargets::Every,
            tensor_maps: &[],
            nvidia_only: &[],
            amdgpu_entry: None,
        };
    };
}
