//! `Allocation`: device memory a [`Tensor`](crate::tensor::Tensor) views, with the stream work
//! still pending on it.
//!
//! An allocation is reference counted: tensors and views hold it, and so does every stream (and
//! captured graph) with work using it until that work is known done, so memory is never freed
//! under a running kernel. Each use by a stream is recorded (stream, position, read or write);
//! a host read of memory with a pending write, a host write of memory with any pending use, and
//! stream work not ordered after another stream's pending conflicting use (by an event wait)
//! are errors ([`LaunchError::Unsynchronized`]) on both back ends.

use super::stream::StreamState;
use super::{emulated, Registry};
use super::{Device, LaunchError};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where the bytes live.
pub(crate) enum Memory {
    /// No bytes (address 0).
    Empty,
    /// Host memory owned by the allocation (the emulator's device memory).
    Host(emulated::HostAllocation),
    /// Device memory owned by the allocation.
    #[cfg(feature = "cuda")]
    Gpu(super::gpu::GpuAllocation),
    /// Device memory owned elsewhere (a borrowed `cudarc` slice or raw pointer).
    #[cfg(feature = "cuda")]
    BorrowedGpu(Arc<super::gpu::GpuContext>),
    /// HIP device memory owned by the allocation.
    #[cfg(feature = "hip")]
    Hip(super::hip::HipAllocation),
    /// HIP device memory owned elsewhere (a raw pointer).
    #[cfg(feature = "hip")]
    BorrowedHip(Arc<super::hip::HipContext>),
    /// Host memory owned elsewhere (a raw pointer on the emulator).
    BorrowedHost,
}

impl Memory {
    /// `bytes` bytes of `device`'s memory (none for 0), zeroed if asked, and their address (0
    /// for none).
    pub(crate) fn new(
        device: &Device,
        bytes: usize,
        zeroed: bool,
    ) -> Result<(Memory, u64), LaunchError> {
        let memory = if bytes == 0 {
            Memory::Empty
        } else {
            match &device.backend {
                super::Backend::Emulator => {
                    Memory::Host(emulated::HostAllocation::new(bytes, zeroed)?)
                }
                #[cfg(feature = "cuda")]
                super::Backend::Gpu(context) => {
                    Memory::Gpu(super::gpu::GpuAllocation::new(context, bytes, zeroed)?)
                }
                #[cfg(feature = "hip")]
                super::Backend::Hip(context) => {
                    Memory::Hip(super::hip::HipAllocation::new(context, bytes, zeroed)?)
                }
            }
        };
        let addr = match &memory {
            Memory::Host(host) => host.addr(),
            #[cfg(feature = "cuda")]
            Memory::Gpu(gpu) => gpu.addr(),
            #[cfg(feature = "hip")]
            Memory::Hip(hip) => hip.addr(),
            _ => 0,
        };
        Ok((memory, addr))
    }

    /// Copies between `bytes` and this memory at address `addr` (the range lies in the memory,
    /// checked by the caller); a device copy waits for all prior work.
    pub(crate) fn copy(&self, addr: u64, bytes: HostBytes<'_>) -> Result<(), LaunchError> {
        if bytes.len() == 0 {
            return Ok(());
        }
        match self {
            Memory::Empty => Ok(()),
            Memory::Host(_) | Memory::BorrowedHost => {
                // SAFETY: the range lies in host memory this value owns, or borrows for as long
                // as it lives (the borrowing constructor's contract); no launch runs meanwhile
                // (the emulator runs launches on the calling thread before returning).
                unsafe { bytes.copy_host(addr as usize as *mut u8) };
                Ok(())
            }
            #[cfg(feature = "cuda")]
            Memory::Gpu(gpu) => bytes.copy_device(&**gpu.context(), addr),
            #[cfg(feature = "cuda")]
            Memory::BorrowedGpu(context) => bytes.copy_device(&**context, addr),
            #[cfg(feature = "hip")]
            Memory::Hip(hip) => bytes.copy_device(&**hip.context(), addr),
            #[cfg(feature = "hip")]
            Memory::BorrowedHip(context) => bytes.copy_device(&**context, addr),
        }
    }
}

/// The host side of a copy to or from device memory.
pub(crate) enum HostBytes<'a> {
    /// Bytes copied to the device.
    Source(&'a [u8]),
    /// Bytes the device's bytes are copied into.
    Target(&'a mut [u8]),
}

impl HostBytes<'_> {
    fn len(&self) -> usize {
        match self {
            HostBytes::Source(source) => source.len(),
            HostBytes::Target(target) => target.len(),
        }
    }

    /// Copies between these bytes and the host memory at `addr`.
    ///
    /// # Safety
    /// `addr .. addr + self.len()` must be live host memory, outside these bytes, that nothing
    /// else accesses meanwhile.
    unsafe fn copy_host(self, addr: *mut u8) {
        // SAFETY: the caller's contract.
        unsafe {
            match self {
                HostBytes::Source(source) => {
                    std::ptr::copy_nonoverlapping(source.as_ptr(), addr, source.len())
                }
                HostBytes::Target(target) => {
                    std::ptr::copy_nonoverlapping(addr, target.as_mut_ptr(), target.len())
                }
            }
        }
    }

    /// Copies between these bytes and `device`'s memory at `addr`.
    #[cfg(any(feature = "cuda", feature = "hip"))]
    fn copy_device(
        self,
        device: &impl super::backend::DeviceContext,
        addr: u64,
    ) -> Result<(), LaunchError> {
        match self {
            HostBytes::Source(source) => device.write_device(addr, source),
            HostBytes::Target(target) => device.read_device(addr, target),
        }
    }
}

/// One use of an allocation by stream work not yet known done.
pub(crate) struct PendingUse {
    pub(crate) stream: Arc<StreamState>,
    /// The stream position of the work (done once the stream's known-done position reaches it).
    pub(crate) position: u64,
    pub(crate) write: bool,
}

impl PendingUse {
    fn is_done(&self) -> bool {
        self.stream.known_done() >= self.position
    }
}

/// Device memory of one device: its address, size, and pending stream uses.
pub struct Allocation {
    pub(crate) device_id: u64,
    pub(crate) addr: u64,
    pub(crate) bytes: usize,
    memory: Memory,
    registry: Arc<Registry>,
    uses: Mutex<Vec<PendingUse>>,
}

impl std::fmt::Debug for Allocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Allocation({} bytes at {:#x})", self.bytes, self.addr)
    }
}

/// Whether `addr` lies in `[start, start + bytes]`: one past the end included, as for Rust
/// pointers (the address a kernel's pointer to an allocation may take).
pub(crate) fn within(start: u64, bytes: u64, addr: u64) -> bool {
    (start..=start + bytes).contains(&addr)
}

impl Allocation {
    /// `bytes` bytes of `device`'s memory, zeroed if asked.
    pub(crate) fn new(
        device: &Device,
        bytes: usize,
        zeroed: bool,
    ) -> Result<Arc<Self>, LaunchError> {
        let (memory, addr) = Memory::new(device, bytes, zeroed)?;
        Ok(Allocation::register(device, addr, bytes, memory))
    }

    /// Memory at `addr` of `bytes` bytes that someone else owns and frees.
    ///
    /// # Safety
    /// The memory must be live device memory of `device` (host memory on the emulator) for as
    /// long as the allocation and all work using it exist.
    pub(crate) unsafe fn borrowed(device: &Device, addr: u64, bytes: usize) -> Arc<Self> {
        let memory = match &device.backend {
            super::Backend::Emulator => Memory::BorrowedHost,
            #[cfg(feature = "cuda")]
            super::Backend::Gpu(context) => Memory::BorrowedGpu(Arc::clone(context)),
            #[cfg(feature = "hip")]
            super::Backend::Hip(context) => Memory::BorrowedHip(Arc::clone(context)),
        };
        Allocation::register(device, addr, bytes, memory)
    }

    fn register(device: &Device, addr: u64, bytes: usize, memory: Memory) -> Arc<Self> {
        if bytes > 0 {
            device.registry.insert(addr, bytes as u64);
        }
        Arc::new(Allocation {
            device_id: device.id,
            addr,
            bytes,
            memory,
            registry: Arc::clone(&device.registry),
            uses: Mutex::new(Vec::new()),
        })
    }

    /// Whether `addr` lies in this allocation ([`within`], as the device's registry of live
    /// allocations counts); never for an empty allocation, which the registry does not hold
    /// either.
    pub(crate) fn contains(&self, addr: u64) -> bool {
        self.bytes > 0 && within(self.addr, self.bytes as u64, addr)
    }

    fn uses(&self) -> MutexGuard<'_, Vec<PendingUse>> {
        self.uses
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `Ok` when the host may read (`write == false`) or write the memory now: no pending
    /// stream write (for a read) or use (for a write).
    pub(crate) fn check_host_access(&self, write: bool, what: &str) -> Result<(), LaunchError> {
        let mut uses = self.uses();
        uses.retain(|u| !u.is_done());
        if let Some(pending) = uses.iter().find(|u| write || u.write) {
            return Err(LaunchError::Unsynchronized {
                what: what.to_string(),
                reason: format!(
                    "stream {} has pending work that {} this memory; synchronise the stream (or \
                     an event recorded after that work) first",
                    pending.stream.id(),
                    if pending.write { "writes" } else { "reads" }
                ),
            });
        }
        Ok(())
    }

    /// `Ok` when work on `stream` that reads (or writes) the memory is ordered after every
    /// pending conflicting use by other streams.
    pub(crate) fn check_stream_use(
        &self,
        stream: &StreamState,
        write: bool,
        what: &dyn Fn() -> String,
    ) -> Result<(), LaunchError> {
        let mut uses = self.uses();
        uses.retain(|u| !u.is_done());
        for pending in uses.iter() {
            if pending.stream.id() == stream.id() || !(write || pending.write) {
                continue;
            }
            if stream.waited_for(pending.stream.id()) < pending.position {
                return Err(LaunchError::Unsynchronized {
                    what: what(),
                    reason: format!(
                        "stream {} {} this memory in pending work, and stream {} has not waited \
                         for an event recorded after it",
                        pending.stream.id(),
                        if pending.write { "writes" } else { "reads" },
                        stream.id()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Records a use by `stream` at `position`.
    pub(crate) fn record_use(&self, stream: &Arc<StreamState>, position: u64, write: bool) {
        let mut uses = self.uses();
        // One pending read and one pending write per stream suffice: a stream's work completes
        // in order, so its latest use of a kind is pending while any earlier one is.
        if let Some(same) = uses
            .iter_mut()
            .find(|u| u.stream.id() == stream.id() && u.write == write)
        {
            same.position = same.position.max(position);
            return;
        }
        uses.push(PendingUse {
            stream: Arc::clone(stream),
            position,
            write,
        });
    }

    /// Copies the bytes at `offset` to `target` (the range is checked by the caller).
    pub(crate) fn read_at(&self, offset: usize, target: &mut [u8]) -> Result<(), LaunchError> {
        self.copy_at(offset, HostBytes::Target(target))
    }

    /// Copies `source` to the bytes at `offset` (the range is checked by the caller).
    pub(crate) fn write_at(&self, offset: usize, source: &[u8]) -> Result<(), LaunchError> {
        self.copy_at(offset, HostBytes::Source(source))
    }

    fn copy_at(&self, offset: usize, bytes: HostBytes<'_>) -> Result<(), LaunchError> {
        debug_assert!(offset + bytes.len() <= self.bytes);
        self.memory.copy(self.addr + offset as u64, bytes)
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.registry.remove(self.addr);
        }
    }
}
