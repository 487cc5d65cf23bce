//! The HIP runtime (`libamdhip64.so`) loaded at run time: the entry points the HIP back end
//! calls, declared as `hip_runtime_api.h` (ROCm 6) declares them, looked up once by `dlopen`.
//!
//! Types as the header defines them: `hipError_t` is a C enum (`int`, `hipSuccess = 0`),
//! `hipDevice_t` is `int`, `hipDeviceptr_t` is `void*`, and streams, events, modules and
//! functions are opaque pointers. No HIP header or library is needed to build this file.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// `hipError_t`.
pub(super) type HipError = c_int;
/// `hipSuccess`.
pub(super) const HIP_SUCCESS: HipError = 0;
/// `hipStreamNonBlocking`: the stream does not synchronise with the null stream.
pub(super) const HIP_STREAM_NON_BLOCKING: c_uint = 0x01;
/// `hipDeviceptr_t`.
pub(super) type DevicePtr = *mut c_void;
/// `hipStream_t`.
pub(super) type Stream = *mut c_void;
/// `hipEvent_t`.
pub(super) type Event = *mut c_void;
/// `hipModule_t`.
pub(super) type Module = *mut c_void;
/// `hipFunction_t`.
pub(super) type Function = *mut c_void;

/// The library names tried, in order: the development link name, then the sonames of the ROCm
/// releases whose runtime API this file declares.
pub(super) const LIBRARY_NAMES: [&str; 3] =
    ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"];

/// Declares the table of entry points: one field per function, filled by [`HipApi::load_from`].
macro_rules! hip_api {
    ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The HIP runtime's entry points, and the library that holds them (kept loaded).
        #[allow(non_snake_case)]
        pub(super) struct HipApi {
            $(pub(super) $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
            _library: libloading::Library,
        }

        impl HipApi {
            /// Loads the first of `names` that `dlopen` finds and looks every entry point up.
            /// The error says which names were tried and why each failed, or which symbol is
            /// missing.
            pub(super) fn load_from(names: &[&str]) -> Result<HipApi, String> {
                let mut failures = Vec::new();
                for name in names {
                    // SAFETY: loading a shared library runs its initialisers; the HIP runtime's
                    // are sound to run in any process.
                    let library = match unsafe { libloading::Library::new(*name) } {
                        Ok(library) => library,
                        Err(err) => {
                            failures.push(format!("{name}: {err}"));
                            continue;
                        }
                    };
                    // SAFETY: each symbol is declared with the prototype of
                    // `hip_runtime_api.h`; the pointers stay valid while `_library` is held.
                    unsafe {
                        return Ok(HipApi {
                            $($name: *library
                                .get::<unsafe extern "C" fn($($arg),*) -> $ret>(stringify!($name))
                                .map_err(|_| format!(
                                    "{name} was loaded but lacks `{}` (not a HIP runtime of \
                                     ROCm 6 or newer)",
                                    stringify!($name)
                                ))?,)*
                            _library: library,
                        });
                    }
                }
                Err(format!(
                    "the HIP runtime library could not be loaded ({}); install ROCm's HIP \
                     runtime or put libamdhip64.so on the loader path (LD_LIBRARY_PATH)",
                    failures.join("; ")
                ))
            }
        }
    };
}

hip_api! {
    hipInit: fn(c_uint) -> HipError;
    hipGetDeviceCount: fn(*mut c_int) -> HipError;
    hipSetDevice: fn(c_int) -> HipError;
    hipDeviceGet: fn(*mut c_int, c_int) -> HipError;
    hipDeviceGetName: fn(*mut c_char, c_int, c_int) -> HipError;
    hipDeviceSynchronize: fn() -> HipError;
    hipModuleLoadData: fn(*mut Module, *const c_void) -> HipError;
    hipModuleUnload: fn(Module) -> HipError;
    hipModuleGetFunction: fn(*mut Function, Module, *const c_char) -> HipError;
    hipModuleLaunchKernel: fn(
        Function, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream,
        *mut *mut c_void, *mut *mut c_void
    ) -> HipError;
    hipMalloc: fn(*mut *mut c_void, usize) -> HipError;
    hipFree: fn(*mut c_void) -> HipError;
    hipMemcpyHtoD: fn(DevicePtr, *mut c_void, usize) -> HipError;
    hipMemcpyDtoH: fn(*mut c_void, DevicePtr, usize) -> HipError;
    hipMemcpyHtoDAsync: fn(DevicePtr, *mut c_void, usize, Stream) -> HipError;
    hipMemsetD8: fn(DevicePtr, u8, usize) -> HipError;
    hipMemsetD8Async: fn(DevicePtr, u8, usize, Stream) -> HipError;
    hipStreamCreateWithFlags: fn(*mut Stream, c_uint) -> HipError;
    hipStreamDestroy: fn(Stream) -> HipError;
    hipStreamSynchronize: fn(Stream) -> HipError;
    hipStreamWaitEvent: fn(Stream, Event, c_uint) -> HipError;
    hipEventCreate: fn(*mut Event) -> HipError;
    hipEventDestroy: fn(Event) -> HipError;
    hipEventRecord: fn(Event, Stream) -> HipError;
    hipEventSynchronize: fn(Event) -> HipError;
    hipEventElapsedTime: fn(*mut f32, Event, Event) -> HipError;
    hipGetErrorName: fn(HipError) -> *const c_char;
    hipGetErrorString: fn(HipError) -> *const c_char;
}

// SAFETY: the table holds function pointers into a library that stays loaded; the HIP runtime's
// entry points are thread-safe.
unsafe impl Send for HipApi {}
unsafe impl Sync for HipApi {}

/// The HIP runtime of this process, loaded at the first call from [`LIBRARY_NAMES`]; the error
/// (kept, so later calls give the same one) says why it could not be.
pub(super) fn api() -> Result<&'static HipApi, String> {
    static API: OnceLock<Result<HipApi, String>> = OnceLock::new();
    API.get_or_init(|| HipApi::load_from(&LIBRARY_NAMES))
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_every_candidate_tried() {
        let names = ["libtessera-no-such-hip-a.so", "libtessera-no-such-hip-b.so"];
        let err = HipApi::load_from(&names).err().expect("no such library");
        for name in names {
            assert!(err.contains(name), "{err}");
        }
        assert!(err.contains("LD_LIBRARY_PATH"), "{err}");
    }

    #[test]
    fn a_library_without_the_hip_entry_points_is_refused() {
        // The C library loads everywhere this test runs and exports none of HIP's functions.
        let err = HipApi::load_from(&["libc.so.6"]).err().expect("not HIP");
        assert!(
            err.contains("libc.so.6 was loaded but lacks `hipInit`"),
            "{err}"
        );
    }
}
