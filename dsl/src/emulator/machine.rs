//! The emulated machine's constants: where its shared-memory window starts and how large a
//! block may be.

/// First shared-window address of dynamic shared memory on the emulator
/// (what [`crate::device::dynamic_shared_base`] returns).
pub const SHARED_WINDOW_BASE: u32 = 0x400;

/// Most threads one block may have.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// Most dynamic shared memory one block may have (sm_90: 227 KiB).
pub const MAX_DYNAMIC_SHARED_BYTES: usize = 227 * 1024;
