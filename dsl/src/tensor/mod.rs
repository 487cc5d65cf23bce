//! `Tensor<T>`: typed device memory with sizes and strides, and views of it without copies.
//!
//! A [`Tensor`] owns its memory (an [`Allocation`] of its device: `cuMemAlloc` on a GPU, host
//! memory the emulator's pointers address). Views borrow it: [`TensorRef`] (shared, like `&`)
//! and [`TensorMut`] (exclusive, like `&mut`), made by [`Tensor::view`] / [`Tensor::view_mut`]
//! and narrowed by `slice`, `narrow`, `transpose` and `reshape` (contiguous views only). A
//! kernel launch takes inputs as [`AsTensorRef`] (`&Tensor`, `TensorRef`) and outputs as
//! [`AsTensorMut`] (`&mut Tensor`, `TensorMut`), so the borrow checker rejects a launch whose
//! output aliases another argument.
//!
//! ```
//! use tessera::launch::Device;
//! use tessera::tensor::Tensor;
//! let device = Device::emulator();
//! let t = Tensor::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
//! let column = t.view().slice(1, 1..2)?; // sizes [2, 1], strides [3, 1]
//! assert_eq!(column.to_vec()?, [2.0, 5.0]);
//! assert_eq!(t.view().transpose(0, 1)?.to_vec()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//! # Ok::<(), tessera::launch::LaunchError>(())
//! ```
//!
//! Host reads and writes (`to_vec`, `copy_from`) are synchronous and refused while stream work
//! that conflicts is pending (see [`crate::launch::Stream`]).

mod layout;
mod views;

pub use layout::{TensorLayout, MAX_RANK};
pub use views::{AsTensorMut, AsTensorRef, KernelParts, Snapshot, TensorMut, TensorRef};

use crate::launch::{Allocation, Device, DeviceElement, LaunchError};
use std::marker::PhantomData;
use std::sync::Arc;

/// Device memory holding a tensor of `T` (row-major). See the [module docs](self).
pub struct Tensor<T: DeviceElement> {
    allocation: Arc<Allocation>,
    layout: TensorLayout,
    _element: PhantomData<T>,
}

impl<T: DeviceElement> std::fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tensor<{}>{:?} at {:#x}",
            T::DTYPE_NAME,
            self.layout.sizes(),
            self.allocation.addr
        )
    }
}

impl<T: DeviceElement> Tensor<T> {
    fn allocate(device: &Device, sizes: &[usize], zeroed: bool) -> Result<Self, LaunchError> {
        let layout = TensorLayout::contiguous(sizes)?;
        let bytes = layout
            .numel()
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| LaunchError::Allocation {
                bytes: usize::MAX,
                reason: format!("sizes {sizes:?} of {} overflow", T::DTYPE_NAME),
            })?;
        Ok(Tensor {
            allocation: Allocation::new(device, bytes, zeroed)?,
            layout,
            _element: PhantomData,
        })
    }

    /// A tensor of `sizes` filled with zeros (all bits zero).
    pub fn zeros(device: &Device, sizes: &[usize]) -> Result<Self, LaunchError> {
        Tensor::allocate(device, sizes, true)
    }

    /// A tensor of `sizes` holding a copy of `data` (row-major, exactly as many elements).
    pub fn from_slice(device: &Device, data: &[T], sizes: &[usize]) -> Result<Self, LaunchError> {
        let mut tensor = Tensor::allocate(device, sizes, false)?;
        tensor.copy_from(data)?;
        Ok(tensor)
    }

    /// Device memory at `addr` of `len` elements owned by someone else (a raw device pointer,
    /// or a host pointer on the emulator), as a contiguous tensor of `sizes`, without copying.
    ///
    /// # Safety
    /// `addr .. addr + len · size_of::<T>()` must be live memory of `device` holding `T`s, not
    /// accessed otherwise, and stay so while the tensor and any work using it exist.
    pub unsafe fn from_raw_parts(
        device: &Device,
        addr: u64,
        len: usize,
        sizes: &[usize],
    ) -> Result<Self, LaunchError> {
        let layout = TensorLayout::contiguous(sizes)?;
        layout.check_within(len, "borrowing device memory as a tensor")?;
        let bytes = len * std::mem::size_of::<T>();
        Ok(Tensor {
            // SAFETY: the caller's contract.
            allocation: unsafe { Allocation::borrowed(device, addr, bytes) },
            layout,
            _element: PhantomData,
        })
    }

    /// A `cudarc` slice as a tensor of `sizes` without copying. The slice stays borrowed while
    /// the tensor lives; `cudarc`'s own stream must not use it meanwhile, and work enqueued
    /// through the tensor must be synchronised before the borrow ends (the tensor's drop does
    /// not wait).
    #[cfg(feature = "cuda")]
    pub fn from_cuda_slice<'a>(
        device: &Device,
        slice: &'a mut cudarc::driver::CudaSlice<T>,
        sizes: &[usize],
    ) -> Result<TensorMut<'a, T>, LaunchError>
    where
        T: cudarc::driver::DeviceRepr,
    {
        // SAFETY: the slice is borrowed mutably for 'a, so nothing else accesses it meanwhile.
        let tensor = unsafe { Tensor::borrow_cuda_slice(device, slice, sizes)? };
        Ok(TensorMut::new(tensor.allocation, tensor.layout))
    }

    /// A `cudarc` slice as a read-only tensor of `sizes` without copying, for a launch's inputs
    /// when only a shared reference to the slice is at hand (a Candle `CustomOp`'s input
    /// storage). The slice stays borrowed while the view lives, and work enqueued through the
    /// view must be synchronised before the borrow ends (the view's drop does not wait).
    #[cfg(feature = "cuda")]
    pub fn from_cuda_slice_ref<'a>(
        device: &Device,
        slice: &'a cudarc::driver::CudaSlice<T>,
        sizes: &[usize],
    ) -> Result<TensorRef<'a, T>, LaunchError>
    where
        T: cudarc::driver::DeviceRepr,
    {
        // SAFETY: the slice is borrowed shared for 'a, so nothing writes it meanwhile, and the
        // view only reads it.
        let tensor = unsafe { Tensor::borrow_cuda_slice(device, slice, sizes)? };
        Ok(TensorRef::new(tensor.allocation, tensor.layout))
    }

    /// The slice's memory as a tensor of `sizes` (the unbounded borrow both `from_cuda_slice`
    /// variants narrow to their lifetimes).
    ///
    /// # Safety
    /// The memory must stay live, and be accessed only as the returned tensor's use allows, for
    /// as long as the tensor and any work using it exist.
    #[cfg(feature = "cuda")]
    unsafe fn borrow_cuda_slice(
        device: &Device,
        slice: &cudarc::driver::CudaSlice<T>,
        sizes: &[usize],
    ) -> Result<Tensor<T>, LaunchError>
    where
        T: cudarc::driver::DeviceRepr,
    {
        use cudarc::driver::DevicePtr;
        let len = slice.len();
        let stream = std::sync::Arc::clone(slice.stream());
        let (addr, _sync) = slice.device_ptr(&stream);
        // SAFETY: the slice is live device memory of `len` elements; the caller's contract.
        unsafe { Tensor::<T>::from_raw_parts(device, addr, len, sizes) }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.layout.rank()
    }

    /// The sizes.
    pub fn sizes(&self) -> &[usize] {
        self.layout.sizes()
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[usize] {
        self.layout.strides()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.layout.numel()
    }

    /// A shared view of the whole tensor.
    pub fn view(&self) -> TensorRef<'_, T> {
        TensorRef::new(Arc::clone(&self.allocation), self.layout)
    }

    /// An exclusive view of the whole tensor.
    pub fn view_mut(&mut self) -> TensorMut<'_, T> {
        TensorMut::new(Arc::clone(&self.allocation), self.layout)
    }

    /// The elements, row-major (synchronous; an error while stream work writing it is pending).
    pub fn to_vec(&self) -> Result<Vec<T>, LaunchError> {
        self.view().to_vec()
    }

    /// Copies `data` (row-major, exactly [`numel`](Self::numel) elements) in (synchronous; an
    /// error while stream work using it is pending).
    pub fn copy_from(&mut self, data: &[T]) -> Result<(), LaunchError> {
        self.view_mut().copy_from(data)
    }
}

#[cfg(test)]
mod tests;
