//! `TensorRef` and `TensorMut`: views of a tensor's memory, and what a launch takes.

use super::{Tensor, TensorLayout};
use crate::launch::{Allocation, DeviceElement, LaunchError, TensorUse};
use crate::Ptr;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

/// What a kernel parameter `Tensor<T, R>` receives: the base pointer, the sizes and the
/// strides (elements).
pub type KernelParts<T, const R: usize> = (Ptr<T>, [i32; R], [i32; R]);

/// What both view kinds share: the memory and the layout.
struct View {
    allocation: Arc<Allocation>,
    layout: TensorLayout,
}

impl View {
    fn elements<T>(&self) -> usize {
        self.allocation.bytes / std::mem::size_of::<T>()
    }

    fn to_vec<T: DeviceElement>(&self) -> Result<Vec<T>, LaunchError> {
        self.allocation
            .check_host_access(false, "reading a tensor on the host")?;
        let size = std::mem::size_of::<T>();
        let (start, end) = (self.layout.offset(), self.layout.extent()?);
        let mut span: Vec<T> = Vec::with_capacity(end - start);
        // SAFETY: zeroed bytes are a valid `T` (`DeviceElement`); overwritten right after.
        span.resize(end - start, unsafe { std::mem::zeroed() });
        // SAFETY: `span` is plain data of `(end - start) · size` bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(span.as_mut_ptr().cast::<u8>(), span.len() * size)
        };
        self.allocation.read_at(start * size, bytes)?;
        if self.layout.is_contiguous() {
            return Ok(span);
        }
        Ok(self
            .layout
            .element_indices()
            .map(|at| span[at - start])
            .collect())
    }

    fn copy_from<T: DeviceElement>(&self, data: &[T]) -> Result<(), LaunchError> {
        if data.len() != self.layout.numel() {
            return Err(LaunchError::LengthMismatch {
                what: format!("copying into a tensor of sizes {:?}", self.layout.sizes()),
                expected: self.layout.numel(),
                got: data.len(),
            });
        }
        self.allocation
            .check_host_access(true, "writing a tensor from the host")?;
        let size = std::mem::size_of::<T>();
        let (start, end) = (self.layout.offset(), self.layout.extent()?);
        let as_bytes = |values: &[T]| {
            // SAFETY: plain data (`DeviceElement`).
            unsafe {
                std::slice::from_raw_parts(
                    values.as_ptr().cast::<u8>(),
                    std::mem::size_of_val(values),
                )
            }
            .to_vec()
        };
        if self.layout.is_contiguous() {
            return self.allocation.write_at(start * size, &as_bytes(data));
        }
        // A strided view: read the span it covers, place the elements, write the span back.
        let mut span = self.to_vec_span::<T>(start, end)?;
        for (value, at) in data.iter().zip(self.layout.element_indices()) {
            span[at - start] = *value;
        }
        self.allocation.write_at(start * size, &as_bytes(&span))
    }

    fn to_vec_span<T: DeviceElement>(
        &self,
        start: usize,
        end: usize,
    ) -> Result<Vec<T>, LaunchError> {
        let size = std::mem::size_of::<T>();
        let mut span: Vec<T> = Vec::with_capacity(end - start);
        // SAFETY: as in `to_vec`.
        span.resize(end - start, unsafe { std::mem::zeroed() });
        // SAFETY: as in `to_vec`.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(span.as_mut_ptr().cast::<u8>(), span.len() * size)
        };
        self.allocation.read_at(start * size, bytes)?;
        Ok(span)
    }

    /// The bytes the view reaches, from its first element to its last (a strided view's gaps
    /// included): their byte offset in the allocation and their count.
    fn span_bytes<T>(&self) -> Result<(usize, usize), LaunchError> {
        let size = std::mem::size_of::<T>();
        let (start, end) = (self.layout.offset(), self.layout.extent()?);
        Ok((start * size, (end - start) * size))
    }

    /// The base pointer, sizes and strides a kernel parameter `Tensor<T, R>` receives, after
    /// checking the rank, that the view lies in its allocation, and that sizes and strides fit
    /// the kernel's `i32` scalars.
    fn kernel_parts<T, const R: usize>(
        &self,
        kernel: &str,
        param: &str,
    ) -> Result<KernelParts<T, R>, LaunchError> {
        let what = || format!("argument `{param}` of kernel `{kernel}`");
        if self.layout.rank() != R {
            return Err(LaunchError::Tensor {
                what: what(),
                reason: format!(
                    "the kernel takes a tensor of rank {R}, this one has sizes {:?} (rank {})",
                    self.layout.sizes(),
                    self.layout.rank()
                ),
            });
        }
        let extent = self.layout.extent()?;
        if extent > self.elements::<T>() {
            self.layout.check_within(self.elements::<T>(), &what())?;
        }
        let small = |value: usize, name: &str| {
            i32::try_from(value).map_err(|_| LaunchError::Tensor {
                what: what(),
                reason: format!("{name} {value} does not fit the kernel's i32"),
            })
        };
        let mut sizes = [0i32; R];
        let mut strides = [0i32; R];
        for d in 0..R {
            sizes[d] = small(self.layout.sizes()[d], "size")?;
            strides[d] = small(self.layout.strides()[d], "stride")?;
        }
        // The kernel's offsets (`Σ index · stride`) are `i32`s too: the farthest element the
        // view reaches from its first must be one.
        let reach = extent.saturating_sub(self.layout.offset() + 1);
        if i32::try_from(reach).is_err() {
            return Err(LaunchError::Tensor {
                what: what(),
                reason: format!(
                    "sizes {:?} with strides {:?} reach element {reach} from the view's first, \
                     past the kernel's i32 offsets (at most {})",
                    self.layout.sizes(),
                    self.layout.strides(),
                    i32::MAX
                ),
            });
        }
        let addr = self.allocation.addr + (self.layout.offset() * std::mem::size_of::<T>()) as u64;
        Ok((Ptr::from_addr(addr), sizes, strides))
    }
}

macro_rules! view_methods {
    ($view:ident) => {
        impl<'a, T: DeviceElement> $view<'a, T> {
            pub(crate) fn new(allocation: Arc<Allocation>, layout: TensorLayout) -> Self {
                $view {
                    view: View { allocation, layout },
                    _borrow: PhantomData,
                }
            }

            fn with_layout(self, layout: TensorLayout) -> Self {
                $view::new(self.view.allocation, layout)
            }

            /// This view typed as `U` when `U` is `T`, `None` otherwise: how a launcher generic
            /// over the element type hands the view to the specialisation of its type.
            pub fn into_element<U: DeviceElement>(self) -> Option<$view<'a, U>> {
                (core::any::TypeId::of::<T>() == core::any::TypeId::of::<U>()).then(|| $view {
                    view: self.view,
                    _borrow: PhantomData,
                })
            }

            /// The layout (sizes, strides, offset in elements).
            pub fn layout(&self) -> &TensorLayout {
                &self.view.layout
            }

            /// The sizes.
            pub fn sizes(&self) -> &[usize] {
                self.view.layout.sizes()
            }

            /// The strides, in elements.
            pub fn strides(&self) -> &[usize] {
                self.view.layout.strides()
            }

            /// Number of dimensions.
            pub fn rank(&self) -> usize {
                self.view.layout.rank()
            }

            /// The elements `range` of dimension `dim` (no copy).
            pub fn slice(self, dim: usize, range: Range<usize>) -> Result<Self, LaunchError> {
                let layout = self.view.layout.slice(dim, range)?;
                Ok(self.with_layout(layout))
            }

            /// `len` elements of dimension `dim` from `start` (no copy).
            pub fn narrow(self, dim: usize, start: usize, len: usize) -> Result<Self, LaunchError> {
                let layout = self.view.layout.narrow(dim, start, len)?;
                Ok(self.with_layout(layout))
            }

            /// Dimensions `a` and `b` swapped (no copy).
            pub fn transpose(self, a: usize, b: usize) -> Result<Self, LaunchError> {
                let layout = self.view.layout.transpose(a, b)?;
                Ok(self.with_layout(layout))
            }

            /// The same elements under new sizes; the view must be contiguous (no copy).
            pub fn reshape(self, sizes: &[usize]) -> Result<Self, LaunchError> {
                let layout = self.view.layout.reshape(sizes)?;
                Ok(self.with_layout(layout))
            }

            /// Sizes, strides and offset given explicitly (elements); an error when the view
            /// would reach outside the allocation.
            pub fn as_strided(
                self,
                sizes: &[usize],
                strides: &[usize],
                offset: usize,
            ) -> Result<Self, LaunchError> {
                let layout = TensorLayout::strided(sizes, strides, offset)?;
                layout.check_within(self.view.elements::<T>(), "a strided tensor view")?;
                Ok(self.with_layout(layout))
            }

            /// The elements, row-major (synchronous; an error while stream work writing the
            /// memory is pending).
            pub fn to_vec(&self) -> Result<Vec<T>, LaunchError> {
                self.view.to_vec()
            }

            /// For the generated launchers: the pointer, sizes and strides of a kernel
            /// parameter `Tensor<T, R>` (rank, extent and `i32` range checked).
            #[doc(hidden)]
            pub fn kernel_parts<const R: usize>(
                &self,
                kernel: &str,
                param: &str,
            ) -> Result<KernelParts<T, R>, LaunchError> {
                self.view.kernel_parts(kernel, param)
            }
        }

        impl<T: DeviceElement> std::fmt::Debug for $view<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "{}<{}>{:?} strides {:?} at {:#x} + {}",
                    stringify!($view),
                    T::DTYPE_NAME,
                    self.sizes(),
                    self.strides(),
                    self.view.allocation.addr,
                    self.view.layout.offset()
                )
            }
        }
    };
}

/// A shared view of a tensor's memory (like `&[T]` with sizes and strides).
pub struct TensorRef<'a, T: DeviceElement> {
    view: View,
    _borrow: PhantomData<&'a T>,
}

/// An exclusive view of a tensor's memory (like `&mut [T]` with sizes and strides).
pub struct TensorMut<'a, T: DeviceElement> {
    view: View,
    _borrow: PhantomData<&'a mut T>,
}

view_methods!(TensorRef);
view_methods!(TensorMut);

impl<T: DeviceElement> Clone for TensorRef<'_, T> {
    fn clone(&self) -> Self {
        TensorRef::new(Arc::clone(&self.view.allocation), self.view.layout)
    }
}

impl<'a, T: DeviceElement> TensorRef<'a, T> {
    /// This view as a launch's read of its memory (for [`Stream::launch`](crate::launch::Stream::launch)).
    pub fn use_read(&self) -> TensorUse<'_> {
        TensorUse {
            allocation: &self.view.allocation,
            write: false,
        }
    }
}

impl<'a, T: DeviceElement> TensorMut<'a, T> {
    /// Copies `data` (row-major, exactly as many elements as the view) in (synchronous; an
    /// error while stream work using the memory is pending).
    pub fn copy_from(&mut self, data: &[T]) -> Result<(), LaunchError> {
        self.view.copy_from(data)
    }

    /// A shorter exclusive borrow of the same view.
    pub fn reborrow(&mut self) -> TensorMut<'_, T> {
        TensorMut::new(Arc::clone(&self.view.allocation), self.view.layout)
    }

    /// A shared view of the same memory (while it lives, this one cannot be used).
    pub fn as_ref(&self) -> TensorRef<'_, T> {
        TensorRef::new(Arc::clone(&self.view.allocation), self.view.layout)
    }

    /// This view as a launch's write of its memory (for [`Stream::launch`](crate::launch::Stream::launch)).
    pub fn use_write(&self) -> TensorUse<'_> {
        TensorUse {
            allocation: &self.view.allocation,
            write: true,
        }
    }

    /// A host copy of the memory the view reaches (from its first element to its last, a
    /// strided view's gaps included), for [`restore`](Self::restore). Synchronous: an error
    /// while pending stream work writes the memory.
    pub fn snapshot(&self) -> Result<Snapshot, LaunchError> {
        let view = &self.view;
        view.allocation
            .check_host_access(false, "taking a snapshot of a tensor")?;
        let (offset, len) = view.span_bytes::<T>()?;
        let mut bytes = vec![0u8; len];
        view.allocation.read_at(offset, &mut bytes)?;
        Ok(Snapshot {
            addr: view.allocation.addr + offset as u64,
            bytes,
        })
    }

    /// Writes `snapshot`, taken of this view's memory, back (synchronous: an error while pending
    /// stream work uses the memory, or for a snapshot of other memory). How an autotuned
    /// kernel's `launch_tuned` gives each timed run, and the final launch, the tensors it
    /// updates in place as they were.
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), LaunchError> {
        let view = &self.view;
        let (offset, len) = view.span_bytes::<T>()?;
        if view.allocation.addr + offset as u64 != snapshot.addr || len != snapshot.bytes.len() {
            return Err(LaunchError::Tensor {
                what: "restoring a tensor".to_string(),
                reason: format!(
                    "the snapshot holds {} bytes at {:#x}, the view reaches {len} bytes at {:#x}",
                    snapshot.bytes.len(),
                    snapshot.addr,
                    view.allocation.addr + offset as u64
                ),
            });
        }
        view.allocation
            .check_host_access(true, "restoring a tensor")?;
        view.allocation.write_at(offset, &snapshot.bytes)
    }

    pub(crate) fn allocation(&self) -> &Arc<Allocation> {
        &self.view.allocation
    }

    /// The byte offset and length of a contiguous view of `len` elements (a stream upload's
    /// target), or why it is not one.
    pub(crate) fn contiguous_bytes(
        &self,
        len: usize,
        what: &str,
    ) -> Result<(usize, usize), LaunchError> {
        let layout = &self.view.layout;
        if !layout.is_contiguous() {
            return Err(LaunchError::Tensor {
                what: what.to_string(),
                reason: format!(
                    "the view (sizes {:?}, strides {:?}) is not contiguous",
                    layout.sizes(),
                    layout.strides()
                ),
            });
        }
        if len != layout.numel() {
            return Err(LaunchError::LengthMismatch {
                what: what.to_string(),
                expected: layout.numel(),
                got: len,
            });
        }
        let size = std::mem::size_of::<T>();
        Ok((layout.offset() * size, len * size))
    }
}

/// The memory a [`TensorMut`] reaches, copied to the host by [`TensorMut::snapshot`] and
/// written back by [`TensorMut::restore`].
pub struct Snapshot {
    /// The device address of the first byte.
    addr: u64,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Snapshot({} bytes at {:#x})",
            self.bytes.len(),
            self.addr
        )
    }
}

/// What a launch takes as an input tensor: `&Tensor<T>`, `TensorRef<T>` or `TensorMut<T>`
/// (by reference).
pub trait AsTensorRef<T: DeviceElement> {
    /// The shared view.
    fn tensor_ref(&self) -> TensorRef<'_, T>;
}

/// What a launch takes as an output tensor: `&mut Tensor<T>` or `TensorMut<T>`.
pub trait AsTensorMut<T: DeviceElement> {
    /// The exclusive view.
    fn tensor_mut(&mut self) -> TensorMut<'_, T>;
}

impl<T: DeviceElement> AsTensorRef<T> for Tensor<T> {
    fn tensor_ref(&self) -> TensorRef<'_, T> {
        self.view()
    }
}

impl<T: DeviceElement> AsTensorRef<T> for TensorRef<'_, T> {
    fn tensor_ref(&self) -> TensorRef<'_, T> {
        self.clone()
    }
}

impl<T: DeviceElement> AsTensorRef<T> for TensorMut<'_, T> {
    fn tensor_ref(&self) -> TensorRef<'_, T> {
        self.as_ref()
    }
}

impl<T: DeviceElement> AsTensorMut<T> for Tensor<T> {
    fn tensor_mut(&mut self) -> TensorMut<'_, T> {
        self.view_mut()
    }
}

impl<T: DeviceElement> AsTensorMut<T> for TensorMut<'_, T> {
    fn tensor_mut(&mut self) -> TensorMut<'_, T> {
        self.reborrow()
    }
}
