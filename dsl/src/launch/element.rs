//! `DeviceElement`: the element types a [`DeviceBuffer`](super::DeviceBuffer) can hold.

/// A plain-data element type that can be copied between host and device memory byte for byte.
///
/// # Safety
/// The type must be plain data: no padding, no drop glue, no pointers that matter to the host,
/// and every bit pattern of `size_of::<Self>()` bytes (all zeros in particular) a valid value,
/// because buffers are zero-filled and filled by kernels with arbitrary bits.
pub unsafe trait DeviceElement:
    Copy + Send + Sync + PartialEq + core::fmt::Debug + 'static
{
    /// The type's name as torch spells it (`float32`, `float16`, `bfloat16`, `int32`, …).
    const DTYPE_NAME: &'static str;
}

macro_rules! device_elements {
    ($($ty:ty => $name:literal),* $(,)?) => {
        $(
            // SAFETY: a primitive number or a `repr(transparent)` wrapper of one: plain data,
            // every bit pattern valid.
            unsafe impl DeviceElement for $ty {
                const DTYPE_NAME: &'static str = $name;
            }
        )*
    };
}

device_elements!(
    f32 => "float32",
    f64 => "float64",
    i8 => "int8",
    u8 => "uint8",
    i16 => "int16",
    u16 => "uint16",
    i32 => "int32",
    u32 => "uint32",
    i64 => "int64",
    u64 => "uint64",
    crate::dtype::f16 => "float16",
    crate::dtype::bf16 => "bfloat16",
    crate::dtype::f8e4m3 => "float8_e4m3fn",
    crate::dtype::f8e5m2 => "float8_e5m2",
);
