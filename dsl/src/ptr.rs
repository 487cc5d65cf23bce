//! `Ptr<T>`: a global-memory pointer as a kernel receives it.
//!
//! The same 64-bit value on both sides: on the GPU it is a device address (a `.param .u64` of the
//! kernel), on the emulator it is a host address into the emulator's global memory.

/// A pointer into global memory, passed to kernels by value.
#[repr(transparent)]
pub struct Ptr<T> {
    raw: *mut T,
}

impl<T> Clone for Ptr<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ptr<T> {}

// SAFETY: a `Ptr` is an address; every dereference goes through an `unsafe` runtime-layer call
// whose caller promises the access is valid, exactly as with a raw pointer in CUDA C++.
unsafe impl<T> Send for Ptr<T> {}
unsafe impl<T> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    /// Wraps a raw pointer (a device address on the GPU, a host address on the emulator).
    #[inline(always)]
    pub const fn from_raw(raw: *mut T) -> Self {
        Self { raw }
    }

    /// Wraps a 64-bit address.
    #[inline(always)]
    pub const fn from_addr(addr: u64) -> Self {
        Self {
            raw: addr as usize as *mut T,
        }
    }

    /// The raw pointer.
    #[inline(always)]
    pub const fn as_raw(self) -> *mut T {
        self.raw
    }

    /// The address as a 64-bit integer.
    #[inline(always)]
    pub fn addr(self) -> u64 {
        self.raw as usize as u64
    }

    /// The pointer `n` elements further on (no bounds check: like `pointer::wrapping_add`).
    #[inline(always)]
    pub fn offset(self, n: isize) -> Self {
        Self {
            raw: self.raw.wrapping_offset(n),
        }
    }

    /// Reinterprets the element type.
    #[inline(always)]
    pub const fn cast<U>(self) -> Ptr<U> {
        Ptr {
            raw: self.raw as *mut U,
        }
    }
}

impl<T> core::fmt::Debug for Ptr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Ptr({:#x})", self.raw as usize)
    }
}
