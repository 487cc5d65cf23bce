//! `Kernel<A>`: the host-side handle of one kernel.
//!
//! A kernel crate compiles every kernel twice: for `nvptx64-nvidia-cuda` as an
//! `extern "ptx-kernel"` entry point named `name`, and for the host as an ordinary function that
//! the emulator runs once per simulated GPU thread. The handle ties the two together: the launcher
//! looks `name` up in the PTX module on a GPU, and calls `emulate` on the emulator.
//! `A` is the tuple of the kernel's parameters (`Ptr<T>` and scalars), in order.

/// Host-side handle of a kernel whose parameters are the tuple `A`.
pub struct Kernel<A> {
    /// The PTX entry name (`#[no_mangle]` name of the device function).
    pub name: &'static str,
    /// The host build of the same kernel body; the emulator calls it on every simulated thread.
    pub emulate: fn(A),
    /// The PTX targets the kernel is built for.
    pub targets: KernelTargets,
    /// The tensor maps the kernel's sm_90a entry takes after its own parameters, one per
    /// tensor it copies by TMA (`#[tile_kernel]` plans them; empty for every other kernel): the
    /// launcher builds each from the tensor's parameters ([`TensorMapParam`]).
    pub tensor_maps: &'static [TensorMapParam],
    /// The instructions only NVIDIA GPUs have that keep the kernel out of AMD code objects
    /// (`mma.sync`, `wgmma`, `ldmatrix`, `cp.async`, `cp.async.bulk.tensor`, as
    /// `#[tile_kernel]` recorded them); empty for a kernel that is also an amdgpu kernel. A
    /// launch on an AMD code object says so instead of "not an entry".
    pub nvidia_only: &'static [&'static str],
    /// The kernel of an AMD code object that runs this one: `None` when it has its own (named
    /// `name`), else the name of another variant of the same kernel whose amdgpu body is the
    /// same. `#[tile_kernel]` puts each distinct amdgpu body in the code object once: variants
    /// that differ only in `num_stages` (AMD code is not pipelined) share one kernel.
    pub amdgpu_entry: Option<&'static str>,
}

/// A tensor map a kernel's sm_90a entry receives, as a hidden `Ptr<TensorMap>` parameter after
/// its own ones: the map of the tensor of rank `rank` whose pointer is parameter `tensor` (its
/// `rank` sizes, then its `rank` strides, the parameters after it, as `#[tile_kernel]` passes a
/// `Tensor<T, R>`), copied in boxes of `box_shape` over its last two dimensions with `swizzle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapParam {
    /// The index among the kernel's parameters of the tensor's pointer.
    pub tensor: usize,
    /// The tensor's rank (2 to 4).
    pub rank: usize,
    /// The element type.
    pub element: crate::device::TmaElement,
    /// One box: `[rows, cols]` (`cols` along the contiguous dimension).
    pub box_shape: [u32; 2],
    /// The shared-memory swizzle the box is written with.
    pub swizzle: crate::device::TmaSwizzle,
}

#[cfg(not(tessera_device))]
impl TensorMapParam {
    /// The map of the tensor whose parameters are among `params` (a launch's packed
    /// parameters): `Err` says which parameter is missing or why the driver would refuse it.
    pub fn map(
        &self,
        params: &[crate::launch::KernelParam],
    ) -> Result<crate::device::TensorMap, String> {
        use crate::launch::KernelParam;
        let int = |k: usize| match params.get(self.tensor + k) {
            Some(KernelParam::I32(v)) => u64::try_from(*v).ok(),
            Some(KernelParam::U32(v)) => Some(u64::from(*v)),
            Some(KernelParam::I64(v)) => u64::try_from(*v).ok(),
            Some(KernelParam::U64(v)) => Some(*v),
            _ => None,
        };
        let Some(KernelParam::Ptr(base)) = params.get(self.tensor) else {
            return Err(format!(
                "parameter {} is not a tensor's pointer",
                self.tensor
            ));
        };
        let rank = self.rank;
        let sizes: Option<Vec<u64>> = (1..=rank).map(int).collect();
        let strides: Option<Vec<u64>> = (rank + 1..=2 * rank).map(int).collect();
        let (Some(sizes), Some(strides)) = (sizes, strides) else {
            return Err(format!(
                "parameters {} to {} are not a rank-{rank} tensor's sizes and strides (each at \
                 least 0)",
                self.tensor + 1,
                self.tensor + 2 * rank
            ));
        };
        crate::device::TensorMap::tiled(
            self.element,
            crate::Ptr::<u8>::from_addr(*base),
            &sizes,
            &strides,
            self.box_shape,
            self.swizzle,
        )
    }
}

/// The PTX targets a kernel is built for (NVIDIA's; whether AMD code objects have the kernel is
/// [`Kernel::nvidia_only`]'s to say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelTargets {
    /// Every target of its crate's PTX set (code for sm_80 runs on every later GPU).
    Every,
    /// sm_90a only (`#[tile_kernel(targets = [sm_90a])]`): the entry is in the sm_90a PTX alone,
    /// so on NVIDIA GPUs it launches on one of compute capability 9.0 that loaded that PTX, and
    /// on the emulator while it emulates sm_90a; on other NVIDIA targets the launch is a
    /// [`LaunchError::UnsupportedTarget`](crate::launch::LaunchError::UnsupportedTarget). AMD
    /// code objects (and the emulator emulating amdgpu) run its amdgpu kernel, planned from the
    /// same source, when it has one.
    Sm90aOnly,
}

impl KernelTargets {
    /// The PTX target the kernel needs on NVIDIA GPUs, when it is one: `Some("sm_90a")` for
    /// [`KernelTargets::Sm90aOnly`].
    pub fn required(self) -> Option<&'static str> {
        match self {
            KernelTargets::Every => None,
            KernelTargets::Sm90aOnly => Some("sm_90a"),
        }
    }
}

impl<A> Kernel<A> {
    /// The kernel's name in an AMD code object: [`amdgpu_entry`](Self::amdgpu_entry), else
    /// [`name`](Self::name).
    pub const fn amdgpu_name(&self) -> &'static str {
        match self.amdgpu_entry {
            Some(name) => name,
            None => self.name,
        }
    }
}

impl<A> Clone for Kernel<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Kernel<A> {}

impl<A> core::fmt::Debug for Kernel<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}
