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
}

/// The PTX targets a kernel is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelTargets {
    /// Every target of its crate's PTX set (code for sm_80 runs on every later GPU).
    Every,
    /// sm_90a only (`#[tile_kernel(targets = [sm_90a])]`): the entry is in the sm_90a PTX alone,
    /// so it launches on a GPU of compute capability 9.0 that loaded that PTX, and on the
    /// emulator while it emulates sm_90a; elsewhere the launch is a
    /// [`LaunchError::UnsupportedTarget`](crate::launch::LaunchError::UnsupportedTarget).
    Sm90aOnly,
}

impl KernelTargets {
    /// The PTX target the kernel needs, when it is one: `Some("sm_90a")` for
    /// [`KernelTargets::Sm90aOnly`].
    pub fn required(self) -> Option<&'static str> {
        match self {
            KernelTargets::Every => None,
            KernelTargets::Sm90aOnly => Some("sm_90a"),
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
