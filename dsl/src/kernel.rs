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
