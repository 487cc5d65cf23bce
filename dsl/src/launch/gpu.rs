//! The GPU back end of the launcher: CUDA driver API calls through `cudarc`'s raw bindings
//! (`cudarc::driver::sys`), with `libcuda` loaded at run time (cudarc's
//! `fallback-dynamic-loading`), so a binary built without CUDA installed runs on a machine that
//! has only the driver; beside a crate that makes cudarc link it (Candle), it is linked instead.
//!
//! One primary context per device, made current on the calling thread by every entry point;
//! all work goes to the legacy default stream, so copies and launches are ordered.

use super::backend::{self, launch_kernel, DeviceAllocation, DeviceContext};
use super::config::{EntryLaunch, LaunchConfig};
use super::error::LaunchError;
use cudarc::driver::sys;
use std::ffi::{c_void, CStr, CString};
use std::sync::{Arc, Mutex};

/// Every driver entry point this back end calls, checked when a device is opened so that an old
/// driver gives an error instead of a failed symbol lookup later.
const REQUIRED_SYMBOLS: [&str; 30] = [
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemsetD8_v2",
    "cuMemsetD8Async",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuGetErrorName",
    "cuGetErrorString",
];

/// `CUDA_ERROR_…` name and description of a driver result.
fn describe(result: sys::CUresult) -> (String, String) {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: both calls write a pointer to a static string (or leave null on failure).
    unsafe {
        sys::cuGetErrorName(result, &mut name);
        sys::cuGetErrorString(result, &mut text);
    }
    let read = |p: *const std::ffi::c_char| {
        if p.is_null() {
            format!("{result:?}")
        } else {
            // SAFETY: the driver returned a NUL-terminated static string.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    (read(name), read(text))
}

/// `Ok` for `CUDA_SUCCESS`, else a [`LaunchError::Driver`] saying what was being done.
pub(super) fn check(
    result: sys::CUresult,
    action: impl FnOnce() -> String,
) -> Result<(), LaunchError> {
    if result == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let (code, message) = describe(result);
    Err(LaunchError::Driver {
        action: action(),
        code,
        message,
    })
}

/// A GPU's primary context and the properties the launcher needs.
pub(super) struct GpuContext {
    device: sys::CUdevice,
    context: sys::CUcontext,
    pub(super) name: String,
    pub(super) compute_capability: (u32, u32),
    /// Largest shared memory a block may use after opting in (static + dynamic).
    max_shared_optin: u32,
    /// The `cudarc` context this one was made from ([`GpuContext::from_cudarc`]), which owns
    /// the primary context; `None` when `open` retained it.
    cudarc: Option<Arc<cudarc::driver::CudaContext>>,
}

// SAFETY: a primary context may be used from any thread; every entry point makes it current on
// the calling thread first (`bind`).
unsafe impl Send for GpuContext {}
unsafe impl Sync for GpuContext {}

/// The names the driver library is opened by (the development link and the driver's soname, both
/// among the names cudarc's `dynamic-loading` tries).
#[cfg(not(windows))]
const DRIVER_LIBRARY_NAMES: [&str; 2] = ["libcuda.so", "libcuda.so.1"];
#[cfg(windows)]
const DRIVER_LIBRARY_NAMES: [&str; 1] = ["nvcuda.dll"];

/// The CUDA driver library, or `None` when it is not installed. Opened here rather than through
/// cudarc, whose `culib` exists only when cudarc loads the driver at run time: a build beside
/// Candle, which makes cudarc link it, finds it already loaded.
fn driver_library() -> Option<libloading::Library> {
    DRIVER_LIBRARY_NAMES.iter().find_map(|name| {
        // SAFETY: loading the driver library runs no initialisation beyond its constructors,
        // which the driver's own users run too.
        unsafe { libloading::Library::new(*name) }.ok()
    })
}

impl GpuContext {
    /// Loads the driver, initializes it and retains the primary context of GPU `ordinal`.
    pub(super) fn open(ordinal: usize) -> Result<Arc<GpuContext>, LaunchError> {
        let unavailable = |reason: String| LaunchError::GpuUnavailable { reason };
        let Some(library) = driver_library() else {
            return Err(unavailable(
                "the CUDA driver library (libcuda.so) is not installed or not on the loader path"
                    .to_string(),
            ));
        };
        for symbol in REQUIRED_SYMBOLS {
            // SAFETY: a lookup; the symbol is not called here.
            if unsafe { library.get::<unsafe extern "C" fn()>(symbol.as_bytes()) }.is_err() {
                return Err(unavailable(format!(
                    "the installed CUDA driver lacks `{symbol}` (too old a driver)"
                )));
            }
        }
        let driver = |result, action: &str| {
            check(result, || action.to_string()).map_err(|err| unavailable(err.to_string()))
        };
        // SAFETY: plain driver calls with valid out-pointers.
        unsafe {
            driver(sys::cuInit(0), "initializing the driver (cuInit)")?;
            let mut count = 0;
            driver(sys::cuDeviceGetCount(&mut count), "counting devices")?;
            backend::check_ordinal(ordinal, count, "the CUDA driver", "GPU")
                .map_err(unavailable)?;
            let mut device = 0;
            driver(
                sys::cuDeviceGet(&mut device, ordinal as i32),
                "getting the device",
            )?;
            let name = backend::device_name(|buffer, length| {
                driver(
                    sys::cuDeviceGetName(buffer, length, device),
                    "reading the device name",
                )
            })?;
            let attribute = |attribute: sys::CUdevice_attribute, what: &str| {
                let mut value = 0;
                driver(
                    sys::cuDeviceGetAttribute(&mut value, attribute, device),
                    what,
                )
                .map(|_| value.max(0) as u32)
            };
            use sys::CUdevice_attribute as Attr;
            let major = attribute(
                Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                "reading the compute capability",
            )?;
            let minor = attribute(
                Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                "reading the compute capability",
            )?;
            let max_shared_optin = attribute(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                "reading the shared-memory limit",
            )?;
            let mut context = std::ptr::null_mut();
            driver(
                sys::cuDevicePrimaryCtxRetain(&mut context, device),
                "retaining the primary context",
            )?;
            let gpu = GpuContext {
                device,
                context,
                name,
                compute_capability: (major, minor),
                max_shared_optin,
                cudarc: None,
            };
            gpu.bind().map_err(|err| unavailable(err.to_string()))?;
            Ok(Arc::new(gpu))
        }
    }

    /// A user's `cudarc` context (kept alive, and released by `cudarc`, not here).
    pub(super) fn from_cudarc(
        context: &Arc<cudarc::driver::CudaContext>,
    ) -> Result<Arc<GpuContext>, LaunchError> {
        let device = context.cu_device();
        let raw = context.cu_ctx();
        // SAFETY: the cudarc context initialised the driver; valid out-pointers.
        let (name, major, minor, max_shared_optin) = unsafe {
            check(sys::cuCtxSetCurrent(raw), || {
                "making the cudarc context current".into()
            })?;
            let name = backend::device_name(|buffer, length| {
                check(sys::cuDeviceGetName(buffer, length, device), || {
                    "reading the device name".into()
                })
            })?;
            let attribute = |attribute: sys::CUdevice_attribute| {
                let mut value = 0;
                check(
                    sys::cuDeviceGetAttribute(&mut value, attribute, device),
                    || "reading a device attribute".into(),
                )
                .map(|_| value.max(0) as u32)
            };
            use sys::CUdevice_attribute as Attr;
            (
                name,
                attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
                attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            )
        };
        Ok(Arc::new(GpuContext {
            device,
            context: raw,
            name,
            compute_capability: (major, minor),
            max_shared_optin,
            cudarc: Some(Arc::clone(context)),
        }))
    }

    /// The driver's context handle.
    pub(super) fn raw_context(&self) -> sys::CUcontext {
        self.context
    }
}

/// The CUDA driver's calls; all work of the context's own goes to the legacy default stream, so
/// its copies and launches are ordered.
impl DeviceContext for GpuContext {
    type Module = GpuModule;
    type Ptr = sys::CUdeviceptr;
    type Stream = sys::CUstream;
    type Event = sys::CUevent;
    const DEFAULT_STREAM: sys::CUstream = std::ptr::null_mut();

    /// Sets the context only when the thread has another (or none) current: reading the
    /// current context costs a fraction of setting it (about 20 and 140 ns a call on the
    /// H200's host), and every launch binds.
    fn bind(&self) -> Result<(), LaunchError> {
        let mut current = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let read = unsafe { sys::cuCtxGetCurrent(&mut current) };
        if read == sys::CUresult::CUDA_SUCCESS && current == self.context {
            return Ok(());
        }
        // SAFETY: the context is retained until `self` drops.
        check(unsafe { sys::cuCtxSetCurrent(self.context) }, || {
            "making the context current".into()
        })
    }

    fn synchronize(&self, action: impl FnOnce() -> String) -> Result<(), LaunchError> {
        self.bind()?;
        // SAFETY: plain driver call.
        check(unsafe { sys::cuCtxSynchronize() }, || {
            format!(
                "{} (an error here is sticky: the context is unusable afterwards)",
                action()
            )
        })
    }

    /// Checks the block against the compiled kernel, opts in to more than 48 KiB of dynamic
    /// shared memory when asked for, then `cuLaunchKernel`.
    fn launch_on(
        &self,
        launch: EntryLaunch<'_, GpuModule>,
        stream: sys::CUstream,
    ) -> Result<(), LaunchError> {
        self.bind()?;
        backend::launch_entry(
            launch,
            |module, name, index, config| module.function(self, name, index, config),
            |function, config, pointers| {
                // SAFETY: `function` belongs to the current context; `pointers` has one pointer
                // per PTX parameter (checked against the entry), each to at least as many bytes
                // as the parameter.
                let result = unsafe {
                    launch_kernel!(sys::cuLaunchKernel, function, config, stream, pointers)
                };
                check(result, || {
                    format!(
                        "launching kernel `{}` (grid {:?}, block {:?}, {} B dynamic shared memory)",
                        launch.name, config.grid, config.block, config.shared_bytes
                    )
                })
            },
        )
    }

    fn allocate(&self, bytes: usize) -> Result<sys::CUdeviceptr, LaunchError> {
        let mut ptr = 0;
        // SAFETY: valid out-pointer.
        let result = unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) };
        if result != sys::CUresult::CUDA_SUCCESS {
            return Err(backend::allocation_failed(bytes, describe(result)));
        }
        Ok(ptr)
    }

    fn zero(&self, ptr: sys::CUdeviceptr, bytes: usize) -> Result<(), LaunchError> {
        // SAFETY: `bytes` bytes at `ptr` are allocated.
        check(unsafe { sys::cuMemsetD8_v2(ptr, 0, bytes) }, || {
            format!("zeroing {bytes} bytes")
        })?;
        settle_legacy_stream()
    }

    fn flush_l2(&self, ptr: sys::CUdeviceptr, bytes: usize) -> Result<(), LaunchError> {
        // SAFETY: the scratch buffer is `bytes` long and live.
        check(
            unsafe { sys::cuMemsetD8Async(ptr, 0, bytes, std::ptr::null_mut()) },
            || "flushing the L2 cache between timed launches".into(),
        )
    }

    unsafe fn free(&self, ptr: sys::CUdeviceptr) {
        // SAFETY: the caller's contract.
        unsafe { sys::cuMemFree_v2(ptr) };
    }

    fn address(ptr: sys::CUdeviceptr) -> u64 {
        ptr
    }

    /// After the legacy stream's work, and the blocking streams' it synchronises with.
    fn read_device(&self, addr: u64, target: &mut [u8]) -> Result<(), LaunchError> {
        self.bind()?;
        // SAFETY: the caller checked that `addr .. addr + target.len()` lies in live device
        // memory.
        check(
            unsafe { sys::cuMemcpyDtoH_v2(target.as_mut_ptr().cast(), addr, target.len()) },
            || format!("copying {} bytes from the device", target.len()),
        )
    }

    fn write_device(&self, addr: u64, source: &[u8]) -> Result<(), LaunchError> {
        self.bind()?;
        // SAFETY: as in `read_device`.
        check(
            unsafe { sys::cuMemcpyHtoD_v2(addr, source.as_ptr().cast(), source.len()) },
            || format!("copying {} bytes to the device", source.len()),
        )?;
        settle_legacy_stream()
    }

    /// A non-blocking stream: not ordered with the legacy default stream, so a graph captured
    /// on it is not invalidated by another thread's synchronous copies (which go to the legacy
    /// stream and wait there until they land: `settle_legacy_stream`).
    fn create_stream(&self) -> Result<sys::CUstream, LaunchError> {
        let mut stream = std::ptr::null_mut();
        let flags = sys::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: valid out-pointer and flags.
        check(unsafe { sys::cuStreamCreate(&mut stream, flags) }, || {
            "creating a stream".into()
        })?;
        Ok(stream)
    }

    unsafe fn destroy_stream(&self, stream: sys::CUstream) {
        // SAFETY: the caller's contract; the driver defers the release past pending work.
        unsafe { sys::cuStreamDestroy_v2(stream) };
    }

    fn upload_on(
        &self,
        stream: sys::CUstream,
        addr: u64,
        staged: &mut [u8],
    ) -> Result<(), LaunchError> {
        // SAFETY: the caller checked the device range and keeps `staged` until the stream is
        // synchronised.
        check(
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(addr, staged.as_ptr().cast(), staged.len(), stream)
            },
            || format!("enqueuing a copy of {} bytes to the device", staged.len()),
        )
    }

    fn wait_on(&self, stream: sys::CUstream, event: sys::CUevent) -> Result<(), LaunchError> {
        // SAFETY: live stream and event.
        check(unsafe { sys::cuStreamWaitEvent(stream, event, 0) }, || {
            "making a stream wait for an event".into()
        })
    }

    fn synchronize_stream(&self, stream: sys::CUstream) -> Result<(), LaunchError> {
        // SAFETY: live stream.
        check(unsafe { sys::cuStreamSynchronize(stream) }, || {
            "synchronising a stream (an error here may come from any kernel it ran)".into()
        })
    }

    fn create_event(&self) -> Result<sys::CUevent, LaunchError> {
        let mut event = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::cuEventCreate(&mut event, 0) }, || {
            "creating an event".into()
        })?;
        Ok(event)
    }

    unsafe fn destroy_event(&self, event: sys::CUevent) {
        // SAFETY: the caller's contract.
        unsafe { sys::cuEventDestroy_v2(event) };
    }

    fn record_on(&self, event: sys::CUevent, stream: sys::CUstream) -> Result<(), LaunchError> {
        // SAFETY: a live event and stream (or the default stream) of this context.
        check(unsafe { sys::cuEventRecord(event, stream) }, || {
            "recording an event".into()
        })
    }

    fn synchronize_event(&self, event: sys::CUevent) -> Result<(), LaunchError> {
        // SAFETY: live event.
        check(unsafe { sys::cuEventSynchronize(event) }, || {
            "synchronising an event".into()
        })
    }

    fn elapsed_ms(&self, start: sys::CUevent, end: sys::CUevent) -> Result<f64, LaunchError> {
        let mut ms = 0f32;
        // SAFETY: both events completed (synchronised by the caller).
        check(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, start, end) },
            || "reading an event time".into(),
        )?;
        Ok(ms as f64)
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        // SAFETY: retained in `open`; modules and buffers hold an `Arc` to this context, so none
        // is left. An error cannot be reported from drop.
        if self.cudarc.is_none() {
            unsafe {
                sys::cuDevicePrimaryCtxRelease_v2(self.device);
            }
        }
    }
}

/// Device memory from `cuMemAlloc`.
pub(super) type GpuAllocation = DeviceAllocation<GpuContext>;

/// One compiled kernel of a module, with what the launcher checks against.
#[derive(Clone, Copy)]
struct GpuFunction {
    handle: sys::CUfunction,
    /// Most threads per block the compiled kernel allows (fewer when it uses many registers).
    max_threads: u32,
    /// Static shared memory of the kernel (`.shared` declarations).
    static_shared: u32,
    /// Dynamic shared memory currently allowed (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`,
    /// 48 KiB minus the static shared memory until raised).
    dynamic_limit: u32,
}

/// A module loaded (and JIT-compiled) by the driver, unloaded on drop.
pub(super) struct GpuModule {
    context: Arc<GpuContext>,
    module: sys::CUmodule,
    /// The entries' functions by entry index, each looked up at its first launch.
    functions: Mutex<Vec<Option<GpuFunction>>>,
}

// SAFETY: module and function handles may be used from any thread with the context current.
unsafe impl Send for GpuModule {}
unsafe impl Sync for GpuModule {}

impl GpuModule {
    /// `cuModuleLoadDataEx` with the JIT's error and info logs captured.
    pub(super) fn load(context: &Arc<GpuContext>, ptx: &str) -> Result<GpuModule, LaunchError> {
        context.bind()?;
        let text = CString::new(ptx).map_err(|_| LaunchError::PtxMalformed {
            reason: "the PTX text contains a NUL byte".to_string(),
        })?;
        const LOG_BYTES: usize = 64 * 1024;
        let mut error_log = vec![0u8; LOG_BYTES];
        let mut info_log = vec![0u8; LOG_BYTES];
        use sys::CUjit_option as Opt;
        let mut options = [
            Opt::CU_JIT_ERROR_LOG_BUFFER,
            Opt::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            Opt::CU_JIT_INFO_LOG_BUFFER,
            Opt::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 4] = [
            error_log.as_mut_ptr().cast(),
            LOG_BYTES as *mut c_void,
            info_log.as_mut_ptr().cast(),
            LOG_BYTES as *mut c_void,
        ];
        let mut module = std::ptr::null_mut();
        // SAFETY: NUL-terminated image; option values are the buffers and their sizes, as the
        // driver API documents (sizes passed in the pointer-sized slot).
        let result = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                text.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if result != sys::CUresult::CUDA_SUCCESS {
            let (code, message) = describe(result);
            let log = String::from_utf8_lossy(&error_log)
                .trim_end_matches('\0')
                .to_string();
            return Err(LaunchError::PtxRejected {
                code: format!("{code} ({message})"),
                log,
            });
        }
        Ok(GpuModule {
            context: Arc::clone(context),
            module,
            functions: Mutex::new(Vec::new()),
        })
    }

    /// The kernel `name` (PTX entry number `index`), looked up at its first launch, with its
    /// dynamic shared-memory limit raised to what `config` asks when that is above 48 KiB
    /// (static + dynamic must fit the device's opt-in limit), and the block checked against the
    /// kernel's thread limit.
    fn function(
        &self,
        context: &GpuContext,
        name: &str,
        index: u32,
        config: &LaunchConfig,
    ) -> Result<sys::CUfunction, LaunchError> {
        let mut functions = self
            .functions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let index = index as usize;
        if functions.len() <= index {
            functions.resize_with(index + 1, || None);
        }
        if functions[index].is_none() {
            let c_name = CString::new(name).map_err(|_| LaunchError::KernelNotFound {
                kernel: name.to_string(),
                entries: Vec::new(),
            })?;
            let mut handle = std::ptr::null_mut();
            // SAFETY: valid module and NUL-terminated name.
            check(
                unsafe { sys::cuModuleGetFunction(&mut handle, self.module, c_name.as_ptr()) },
                || format!("looking up kernel `{name}` in the module"),
            )?;
            let attribute = |attribute: sys::CUfunction_attribute, what: &str| {
                let mut value = 0;
                // SAFETY: valid function handle and out-pointer.
                check(
                    unsafe { sys::cuFuncGetAttribute(&mut value, attribute, handle) },
                    || format!("reading the {what} of kernel `{name}`"),
                )
                .map(|_| value.max(0) as u32)
            };
            use sys::CUfunction_attribute as Attr;
            let function = GpuFunction {
                handle,
                max_threads: attribute(
                    Attr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                    "thread limit",
                )?,
                static_shared: attribute(
                    Attr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                    "static shared memory",
                )?,
                dynamic_limit: attribute(
                    Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    "dynamic shared-memory limit",
                )?,
            };
            functions[index] = Some(function);
        }
        let Some(function) = functions[index].as_mut() else {
            return Err(LaunchError::KernelNotFound {
                kernel: name.to_string(),
                entries: Vec::new(),
            });
        };
        let invalid = |reason: String| LaunchError::InvalidConfig {
            kernel: name.to_string(),
            reason,
        };
        let threads = config.threads_per_block();
        if threads > function.max_threads as u64 {
            return Err(invalid(format!(
                "block {:?} has {threads} threads, but the compiled kernel allows at most {} \
                 (register use)",
                config.block, function.max_threads
            )));
        }
        let total_shared = function.static_shared as u64 + config.shared_bytes as u64;
        if total_shared > context.max_shared_optin as u64 {
            return Err(invalid(format!(
                "{} B static + {} B dynamic shared memory exceeds the device's {} B per block",
                function.static_shared, config.shared_bytes, context.max_shared_optin
            )));
        }
        if config.shared_bytes > function.dynamic_limit {
            // SAFETY: valid function handle; the value fits (checked above).
            check(
                unsafe {
                    sys::cuFuncSetAttribute(
                        function.handle,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        config.shared_bytes as i32,
                    )
                },
                || {
                    format!(
                        "raising the dynamic shared-memory limit of `{name}` to {} B",
                        config.shared_bytes
                    )
                },
            )?;
            function.dynamic_limit = config.shared_bytes;
        }
        Ok(function.handle)
    }
}

impl Drop for GpuModule {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`; no launch can be using it (launches take `&Module`).
        unsafe {
            if self.context.bind().is_ok() {
                sys::cuModuleUnload(self.module);
            }
        }
    }
}

/// Waits until the synchronous memsets and host-to-device copies on the legacy default stream
/// have landed (a pageable copy may return before its DMA ends), so that work on the
/// non-blocking streams ([`DeviceContext::create_stream`]), which is not ordered after the legacy
/// stream, sees them.
fn settle_legacy_stream() -> Result<(), LaunchError> {
    // SAFETY: plain driver call on the legacy stream of the current context.
    check(
        unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) },
        || "waiting for a copy to the device to land".into(),
    )
}
