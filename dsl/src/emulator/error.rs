//! [`EmulatorError`]: why an emulated launch failed.

use std::fmt;
use std::panic::Location;

/// One simulated GPU thread: its block index and thread index (x, y, z).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadRef {
    /// `%ctaid` of the thread's block.
    pub block: [u32; 3],
    /// `%tid` of the thread.
    pub thread: [u32; 3],
}

impl fmt::Display for ThreadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "block ({bx}, {by}, {bz}) thread ({tx}, {ty}, {tz})")
    }
}

/// Source location of the runtime-layer call that failed (from `#[track_caller]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site(pub &'static Location<'static>);

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.0.file(), self.0.line(), self.0.column())
    }
}

/// Why an emulated launch failed. Every variant that comes from a running kernel names the
/// thread (block and thread index) and, for memory errors, the address.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmulatorError {
    /// The launch configuration is invalid (zero or too large dimensions, too much shared memory).
    InvalidLaunch {
        /// What is wrong.
        reason: String,
    },
    /// The operating system refused to start the threads of a CTA.
    ThreadSpawn {
        /// Threads per block requested.
        threads: u32,
        /// The OS error.
        message: String,
    },
    /// A shared-memory access outside `[base, base + dynamic_shared_bytes)`.
    SharedOutOfBounds {
        /// The accessing thread.
        thread: ThreadRef,
        /// The PTX operation, e.g. `ld.shared.v4.b32`.
        op: &'static str,
        /// Shared-window address of the access.
        address: u32,
        /// Bytes accessed.
        bytes: u32,
        /// First valid address ([`crate::emulator::SHARED_WINDOW_BASE`]).
        base: u32,
        /// Dynamic shared memory size of the launch.
        shared_bytes: u32,
        /// Call site.
        site: Site,
    },
    /// An address that is not aligned to the access size (the GPU raises "misaligned address").
    Misaligned {
        /// The accessing thread.
        thread: ThreadRef,
        /// The PTX operation.
        op: &'static str,
        /// The address (global: 64-bit address, shared: shared-window address).
        address: u64,
        /// Required alignment in bytes.
        align: u32,
        /// Call site.
        site: Site,
    },
    /// A global access outside every allocation given to [`crate::emulator::run_grid_in`].
    GlobalOutOfBounds {
        /// The accessing thread.
        thread: ThreadRef,
        /// The PTX operation.
        op: &'static str,
        /// The address.
        address: u64,
        /// Bytes accessed.
        bytes: u32,
        /// Call site.
        site: Site,
    },
    /// A global access through a null (or near-null, below 4096) pointer.
    NullGlobalPointer {
        /// The accessing thread.
        thread: ThreadRef,
        /// The PTX operation.
        op: &'static str,
        /// The address.
        address: u64,
        /// Call site.
        site: Site,
    },
    /// A warp-collective operation (`shfl.sync`, `bar.warp.sync`, `ldmatrix`, `stmatrix`, `mma`)
    /// used incorrectly: a mask without the executing lane, a mask naming lanes that do not
    /// exist, lanes of one mask executing different operations, a source lane outside the mask.
    WarpCollective {
        /// The thread that detected the problem.
        thread: ThreadRef,
        /// The PTX operation.
        op: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A `bar.sync` used incorrectly (bad barrier id or thread count, mixed counts).
    Barrier {
        /// The thread that detected the problem.
        thread: ThreadRef,
        /// What is wrong.
        message: String,
    },
    /// An asynchronous operation (`wgmma`, `mbarrier`, TMA) used incorrectly: an accumulator
    /// read before the `wgmma.wait_group` that covers it, an `mbarrier` wait on a phase the
    /// thread has already seen, an uninitialised `mbarrier`, a tensor map the driver would
    /// reject.
    AsyncOperation {
        /// The thread that detected the problem.
        thread: ThreadRef,
        /// The PTX operation.
        op: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An instruction only NVIDIA GPUs have (`ldmatrix`, `mma`, `wgmma`, `cp.async`, TMA,
    /// `mbarrier`) executed while the emulator emulates an AMD GPU
    /// ([`EmulatedTarget::Amdgpu`](crate::emulator::EmulatedTarget::Amdgpu)).
    NvidiaInstruction {
        /// The thread that executed it.
        thread: ThreadRef,
        /// The PTX operation.
        op: &'static str,
        /// Call site.
        site: Site,
    },
    /// An instruction only AMD GPUs have (`v_mfma`) executed while the emulator emulates an
    /// NVIDIA GPU (sm_80 or sm_90a).
    AmdInstruction {
        /// The thread that executed it.
        thread: ThreadRef,
        /// The ISA instruction.
        op: &'static str,
        /// Call site.
        site: Site,
    },
    /// Every live thread of a CTA waits on a barrier or warp collective that can never complete.
    Deadlock {
        /// `%ctaid` of the block.
        block: [u32; 3],
        /// Who waits on what.
        message: String,
    },
    /// A simulated thread panicked (for example an index out of bounds in the kernel body).
    ThreadPanicked {
        /// The thread.
        thread: ThreadRef,
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for EmulatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmulatorError::InvalidLaunch { reason } => write!(f, "invalid launch: {reason}"),
            EmulatorError::ThreadSpawn { threads, message } => write!(
                f,
                "emulator could not start the {threads} threads of a block: {message}"
            ),
            EmulatorError::SharedOutOfBounds {
                thread,
                op,
                address,
                bytes,
                base,
                shared_bytes,
                site,
            } => write!(
                f,
                "{thread}: {op} of {bytes} bytes at shared address {address:#x} is outside the \
                 dynamic shared memory [{base:#x}, {:#x}) ({shared_bytes} bytes) at {site}",
                *base as u64 + *shared_bytes as u64
            ),
            EmulatorError::Misaligned {
                thread,
                op,
                address,
                align,
                site,
            } => write!(
                f,
                "{thread}: {op} at address {address:#x} is not {align}-byte aligned at {site}"
            ),
            EmulatorError::GlobalOutOfBounds {
                thread,
                op,
                address,
                bytes,
                site,
            } => write!(
                f,
                "{thread}: {op} of {bytes} bytes at global address {address:#x} is outside every \
                 allocation of the launch at {site}"
            ),
            EmulatorError::NullGlobalPointer {
                thread,
                op,
                address,
                site,
            } => write!(
                f,
                "{thread}: {op} through null global pointer (address {address:#x}) at {site}"
            ),
            EmulatorError::WarpCollective {
                thread,
                op,
                message,
            } => write!(f, "{thread}: {op}: {message}"),
            EmulatorError::AsyncOperation {
                thread,
                op,
                message,
            } => write!(f, "{thread}: {op}: {message}"),
            EmulatorError::Barrier { thread, message } => {
                write!(f, "{thread}: bar.sync: {message}")
            }
            EmulatorError::NvidiaInstruction { thread, op, site } => write!(
                f,
                "{thread}: {op} at {site}: an NVIDIA-only instruction, executed while the \
                 emulator emulates amdgpu (AMD GPUs have no such instruction)"
            ),
            EmulatorError::AmdInstruction { thread, op, site } => write!(
                f,
                "{thread}: {op} at {site}: an AMD-only instruction, executed while the emulator \
                 emulates an NVIDIA GPU (TESSERA_DEVICE=emulator-amd emulates amdgpu)"
            ),
            EmulatorError::Deadlock { block, message } => {
                let [x, y, z] = block;
                write!(f, "deadlock in block ({x}, {y}, {z}): {message}")
            }
            EmulatorError::ThreadPanicked { thread, message } => {
                write!(f, "{thread} panicked: {message}")
            }
        }
    }
}

impl std::error::Error for EmulatorError {}
