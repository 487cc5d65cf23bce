//! Kernel arguments: the parameter tuple `A` of a [`Kernel<A>`](crate::Kernel), as the GPU and
//! the emulator receive it.
//!
//! On the GPU every argument becomes one `.param` of the PTX entry (one explicit argument of an
//! AMD code object's kernel), passed by `cuLaunchKernel` (`hipModuleLaunchKernel`) as a pointer
//! to its bytes: `Ptr<T>` and `u64`/`i64` are `.param .u64`/`.b64` (8 bytes),
//! `u32`/`i32`/`f32` are 4 bytes. On the emulator the tuple itself is handed to every thread.

use crate::Ptr;
use std::mem::MaybeUninit;

/// One argument's value as the launcher passes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelParam {
    /// A global-memory pointer (`Ptr<T>`): its 64-bit address.
    Ptr(u64),
    /// A `u32` scalar.
    U32(u32),
    /// An `i32` scalar.
    I32(i32),
    /// A `u64` scalar.
    U64(u64),
    /// An `i64` scalar.
    I64(i64),
    /// An `f32` scalar.
    F32(f32),
}

impl KernelParam {
    /// Size in bytes of the PTX parameter.
    pub fn size(&self) -> usize {
        match self {
            KernelParam::Ptr(_) | KernelParam::U64(_) | KernelParam::I64(_) => 8,
            KernelParam::U32(_) | KernelParam::I32(_) | KernelParam::F32(_) => 4,
        }
    }

    /// The parameter's bytes (little endian, as the GPU reads them); only the first
    /// [`size`](Self::size) bytes are meaningful.
    pub fn bytes(&self) -> [u8; 8] {
        let mut out = [0u8; 8];
        match *self {
            KernelParam::Ptr(v) | KernelParam::U64(v) => out.copy_from_slice(&v.to_le_bytes()),
            KernelParam::I64(v) => out.copy_from_slice(&v.to_le_bytes()),
            KernelParam::U32(v) => out[..4].copy_from_slice(&v.to_le_bytes()),
            KernelParam::I32(v) => out[..4].copy_from_slice(&v.to_le_bytes()),
            KernelParam::F32(v) => out[..4].copy_from_slice(&v.to_le_bytes()),
        }
        out
    }

    /// A short type name for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            KernelParam::Ptr(_) => "Ptr",
            KernelParam::U32(_) => "u32",
            KernelParam::I32(_) => "i32",
            KernelParam::U64(_) => "u64",
            KernelParam::I64(_) => "i64",
            KernelParam::F32(_) => "f32",
        }
    }
}

/// Most parameters one launch passes (a kernel's PTX entry may take no more): the packed
/// parameters live in a fixed array on the stack, so packing a launch does not allocate.
pub const MAX_KERNEL_PARAMS: usize = 64;

/// The parameters of one launch, in order, in a fixed-size array (see [`MAX_KERNEL_PARAMS`]).
/// Dereferences to the slice of the parameters pushed; a push beyond the capacity is recorded
/// and reported by [`overflowed`](Self::overflowed) (the launcher refuses such a launch). Only
/// the slots pushed are written: a launch of three parameters does not fill 64 (every launch
/// packs its parameters, and the host's cost of a launch is measured against a raw
/// `cuLaunchKernel`).
#[derive(Clone, Copy)]
pub struct KernelParams {
    len: usize,
    overflowed: bool,
    /// Slots `..len` are initialised.
    items: [MaybeUninit<KernelParam>; MAX_KERNEL_PARAMS],
}

impl KernelParams {
    /// No parameters.
    pub const fn new() -> KernelParams {
        KernelParams {
            len: 0,
            overflowed: false,
            items: [MaybeUninit::uninit(); MAX_KERNEL_PARAMS],
        }
    }

    /// Appends `param` (recorded as an overflow beyond [`MAX_KERNEL_PARAMS`]).
    pub fn push(&mut self, param: KernelParam) {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                slot.write(param);
                self.len += 1;
            }
            None => self.overflowed = true,
        }
    }

    /// Whether more than [`MAX_KERNEL_PARAMS`] parameters were pushed.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }
}

impl Default for KernelParams {
    fn default() -> Self {
        KernelParams::new()
    }
}

impl std::ops::Deref for KernelParams {
    type Target = [KernelParam];
    fn deref(&self) -> &[KernelParam] {
        // SAFETY: slots `..len` were written by `push` (`len` never exceeds the capacity), and
        // `MaybeUninit<KernelParam>` has `KernelParam`'s layout.
        unsafe { std::slice::from_raw_parts(self.items.as_ptr().cast(), self.len) }
    }
}

impl std::fmt::Debug for KernelParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<Vec<KernelParam>> for KernelParams {
    fn eq(&self, other: &Vec<KernelParam>) -> bool {
        **self == other[..]
    }
}

/// Calls `launch` with the parameters as the GPU runtimes take them (`cuLaunchKernel` and
/// `hipModuleLaunchKernel` alike): an array with one pointer per parameter, each to the
/// parameter's bytes ([`KernelParam::bytes`]). Both arrays live on the stack for the call; more
/// than [`MAX_KERNEL_PARAMS`] parameters are an error naming `kernel`.
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(super) fn with_param_pointers<R>(
    kernel: &str,
    params: &[KernelParam],
    launch: impl FnOnce(*mut *mut std::ffi::c_void) -> Result<R, super::LaunchError>,
) -> Result<R, super::LaunchError> {
    use std::ffi::c_void;
    if params.len() > MAX_KERNEL_PARAMS {
        return Err(super::LaunchError::ArgumentMismatch {
            kernel: kernel.to_string(),
            detail: format!("a launch passes at most {MAX_KERNEL_PARAMS} parameters"),
        });
    }
    // Only the slots of the parameters are written (see `KernelParams`).
    let mut values = [MaybeUninit::<u64>::uninit(); MAX_KERNEL_PARAMS];
    let mut pointers = [MaybeUninit::<*mut c_void>::uninit(); MAX_KERNEL_PARAMS];
    for ((value, pointer), param) in values.iter_mut().zip(&mut pointers).zip(params) {
        let value: *mut u64 = value.write(u64::from_le_bytes(param.bytes()));
        pointer.write(value.cast());
    }
    // The runtime reads `params.len()` pointers (the entry's parameter count, checked against
    // them before), each written above.
    launch(pointers.as_mut_ptr().cast())
}

/// A type that can be one kernel argument.
pub trait KernelArg: Copy + Send + Sync + 'static {
    /// The value as the launcher passes it.
    fn kernel_param(&self) -> KernelParam;
}

impl<T: 'static> KernelArg for Ptr<T> {
    fn kernel_param(&self) -> KernelParam {
        KernelParam::Ptr(self.addr())
    }
}

macro_rules! scalar_args {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(impl KernelArg for $ty {
            fn kernel_param(&self) -> KernelParam {
                KernelParam::$variant(*self)
            }
        })*
    };
}
scalar_args!(u32 => U32, i32 => I32, u64 => U64, i64 => I64, f32 => F32);

/// The whole parameter tuple of a kernel: `()`, `(A,)`, `(A, B)`, … up to 12 elements.
pub trait KernelArgs: Copy + Send + Sync + 'static {
    /// The arguments in order.
    fn kernel_params(&self) -> KernelParams;
}

impl KernelArgs for () {
    fn kernel_params(&self) -> KernelParams {
        KernelParams::new()
    }
}

macro_rules! tuple_args {
    ($($name:ident),+) => {
        impl<$($name: KernelArg),+> KernelArgs for ($($name,)+) {
            #[allow(non_snake_case)]
            fn kernel_params(&self) -> KernelParams {
                let ($($name,)+) = *self;
                let mut params = KernelParams::new();
                $(params.push($name.kernel_param());)+
                params
            }
        }
    };
}
tuple_args!(A);
tuple_args!(A, B);
tuple_args!(A, B, C);
tuple_args!(A, B, C, D);
tuple_args!(A, B, C, D, E);
tuple_args!(A, B, C, D, E, F);
tuple_args!(A, B, C, D, E, F, G);
tuple_args!(A, B, C, D, E, F, G, H);
tuple_args!(A, B, C, D, E, F, G, H, I);
tuple_args!(A, B, C, D, E, F, G, H, I, J);
tuple_args!(A, B, C, D, E, F, G, H, I, J, K);
tuple_args!(A, B, C, D, E, F, G, H, I, J, K, L);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_flatten_in_order_with_ptx_sizes() {
        let x = Ptr::<f32>::from_addr(0x1000);
        let params = (x, 7u32, -3i32, 1u64 << 40, 2.5f32).kernel_params();
        assert_eq!(
            params,
            vec![
                KernelParam::Ptr(0x1000),
                KernelParam::U32(7),
                KernelParam::I32(-3),
                KernelParam::U64(1 << 40),
                KernelParam::F32(2.5)
            ]
        );
        let sizes: Vec<usize> = params.iter().map(KernelParam::size).collect();
        assert_eq!(sizes, [8, 4, 4, 8, 4]);
        assert_eq!(
            KernelParam::I32(-1).bytes(),
            [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]
        );
        assert_eq!(KernelParam::F32(1.0).bytes()[..4], 1.0f32.to_le_bytes());
        assert!(().kernel_params().is_empty());
        let twelve = (
            1u32, 2u32, 3u32, 4u32, 5u32, 6u32, 7u32, 8u32, 9u32, 10u32, 11u32, 12u32,
        );
        assert_eq!(twelve.kernel_params().len(), 12);
        let mut full = KernelParams::new();
        for i in 0..MAX_KERNEL_PARAMS as u32 {
            full.push(KernelParam::U32(i));
        }
        assert!(!full.overflowed());
        full.push(KernelParam::U32(0));
        assert!(full.overflowed());
        assert_eq!(full.len(), MAX_KERNEL_PARAMS);
    }

    #[cfg(any(feature = "cuda", feature = "hip"))]
    #[test]
    fn param_pointers_point_at_each_parameters_bytes() {
        let params = (Ptr::<f32>::from_addr(0xdead_beef_0000), -2i32, 0.5f32, 7u64).kernel_params();
        let seen = with_param_pointers("k", &params, |pointers| {
            let mut seen = Vec::new();
            for (index, param) in params.iter().enumerate() {
                // SAFETY: one pointer per parameter, each to 8 readable bytes.
                let bytes = unsafe {
                    std::slice::from_raw_parts(*pointers.add(index) as *const u8, param.size())
                };
                seen.push(bytes.to_vec());
            }
            Ok(seen)
        })
        .unwrap();
        assert_eq!(seen[0], 0xdead_beef_0000u64.to_le_bytes());
        assert_eq!(seen[1], (-2i32).to_le_bytes());
        assert_eq!(seen[2], 0.5f32.to_le_bytes());
        assert_eq!(seen[3], 7u64.to_le_bytes());
        let too_many = [KernelParam::U32(0); MAX_KERNEL_PARAMS + 1];
        let err = with_param_pointers("k", &too_many, |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("at most 64 parameters"), "{err}");
    }
}
