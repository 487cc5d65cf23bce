//! The HIP back end of the launcher: AMD GPUs through the HIP runtime, `libamdhip64` loaded at
//! run time ([`hip_sys`](super::hip_sys)), so a binary built with the `hip` feature runs (on
//! another back end) where ROCm is not installed.
//!
//! **Not yet run on AMD hardware**: the calls follow `hip_runtime_api.h`, and the error paths
//! (no library, no device, no code object for the device) are tested; a launch on an AMD GPU
//! has not been.
//!
//! HIP has no contexts to retain: every entry point makes the device current on the calling
//! thread (`hipSetDevice`). Synchronous work goes to the null stream; [`HipStream`]s are
//! non-blocking, as the CUDA back end's streams. Modules are HSA code objects loaded by
//! `hipModuleLoadData`; kernels launch by `hipModuleLaunchKernel` with the same `void**`
//! parameter array as `cuLaunchKernel`
//! ([`with_param_pointers`](super::args::with_param_pointers)).

use super::backend::{
    self, launch_kernel, DeviceAllocation, DeviceContext, DeviceEvent, DeviceStream,
};
use super::code_object::CodeObjectKernel;
use super::config::{EntryLaunch, LaunchConfig};
use super::error::LaunchError;
use super::hip_sys::{self, HipApi, HipError, HIP_STREAM_NON_BLOCKING, HIP_SUCCESS};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

/// `hipError_t` name and description of a runtime result.
fn describe(api: &HipApi, result: HipError) -> (String, String) {
    let read = |p: *const c_char| {
        if p.is_null() {
            format!("hipError_t {result}")
        } else {
            // SAFETY: the runtime returns NUL-terminated static strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: both calls take any value and return a static string.
    unsafe {
        (
            read((api.hipGetErrorName)(result)),
            read((api.hipGetErrorString)(result)),
        )
    }
}

/// `Ok` for `hipSuccess`, else a [`LaunchError::HipRuntime`] saying what was being done.
fn check(
    api: &HipApi,
    result: HipError,
    action: impl FnOnce() -> String,
) -> Result<(), LaunchError> {
    if result == HIP_SUCCESS {
        return Ok(());
    }
    let (code, message) = describe(api, result);
    Err(LaunchError::HipRuntime {
        action: action(),
        code,
        message,
    })
}

/// Checks `config`'s block against what the code object says of the kernel: at most its
/// `.max_flat_workgroup_size` work-items.
pub(super) fn check_block(
    kernel: &CodeObjectKernel,
    config: &LaunchConfig,
) -> Result<(), LaunchError> {
    let threads = config.threads_per_block();
    match kernel.max_flat_workgroup_size {
        Some(limit) if threads > limit as u64 => Err(LaunchError::InvalidConfig {
            kernel: kernel.name.clone(),
            reason: format!(
                "block {:?} has {threads} work-items, but the code object allows at most {limit} \
                 (.max_flat_workgroup_size)",
                config.block
            ),
        }),
        _ => Ok(()),
    }
}

/// One AMD GPU as the HIP runtime numbers it.
pub(super) struct HipContext {
    api: &'static HipApi,
    ordinal: i32,
    /// The device's name as `hipDeviceGetName` gives it.
    pub(super) name: String,
}

impl HipContext {
    /// Loads the runtime, initialises it and checks that device `ordinal` exists. Every failure
    /// is a [`LaunchError::GpuUnavailable`] saying why.
    pub(super) fn open(ordinal: usize) -> Result<Arc<HipContext>, LaunchError> {
        let unavailable = |reason: String| LaunchError::GpuUnavailable { reason };
        let api = hip_sys::api().map_err(unavailable)?;
        let runtime = |result, action: &str| {
            check(api, result, || action.to_string()).map_err(|err| unavailable(err.to_string()))
        };
        // SAFETY: plain runtime calls with valid out-pointers.
        unsafe {
            runtime((api.hipInit)(0), "initialising the HIP runtime (hipInit)")?;
            let mut count = 0;
            runtime(
                (api.hipGetDeviceCount)(&mut count),
                "counting devices (hipGetDeviceCount)",
            )?;
            backend::check_ordinal(ordinal, count, "the HIP runtime", "HIP device")
                .map_err(unavailable)?;
            let ordinal = ordinal as i32;
            let mut device = 0;
            runtime(
                (api.hipDeviceGet)(&mut device, ordinal),
                "getting the device",
            )?;
            let name = backend::device_name(|buffer, length| {
                runtime(
                    (api.hipDeviceGetName)(buffer, length, device),
                    "reading the device name",
                )
            })?;
            let context = HipContext { api, ordinal, name };
            context.bind().map_err(|err| unavailable(err.to_string()))?;
            Ok(Arc::new(context))
        }
    }

    fn check(&self, result: HipError, action: impl FnOnce() -> String) -> Result<(), LaunchError> {
        check(self.api, result, action)
    }

    /// Waits until the synchronous copies and memsets on the null stream have landed, so that
    /// work on the non-blocking [`HipStream`]s sees them.
    fn settle_null_stream(&self) -> Result<(), LaunchError> {
        // SAFETY: plain runtime call on the null stream.
        self.check(
            unsafe { (self.api.hipStreamSynchronize)(std::ptr::null_mut()) },
            || "waiting for a copy to the device to land".into(),
        )
    }
}

/// The HIP runtime's calls; the context's own work goes to the null stream.
impl DeviceContext for HipContext {
    type Module = HipModule;
    type Ptr = hip_sys::DevicePtr;
    type Stream = hip_sys::Stream;
    type Event = hip_sys::Event;
    const DEFAULT_STREAM: hip_sys::Stream = std::ptr::null_mut();

    fn bind(&self) -> Result<(), LaunchError> {
        let ordinal = self.ordinal;
        // SAFETY: plain runtime call.
        self.check(unsafe { (self.api.hipSetDevice)(ordinal) }, || {
            format!("making HIP device {ordinal} current")
        })
    }

    fn synchronize(&self, action: impl FnOnce() -> String) -> Result<(), LaunchError> {
        self.bind()?;
        // SAFETY: plain runtime call.
        self.check(unsafe { (self.api.hipDeviceSynchronize)() }, action)
    }

    fn launch_on(
        &self,
        launch: EntryLaunch<'_, HipModule>,
        stream: hip_sys::Stream,
    ) -> Result<(), LaunchError> {
        self.bind()?;
        backend::launch_entry(
            launch,
            |module, name, index, config| module.function(name, index, config),
            |function, config, pointers| {
                // SAFETY: `function` belongs to a loaded module of this device; `pointers` has
                // one pointer per explicit kernel argument (checked against the code object's
                // metadata), each to at least as many bytes as the argument.
                let result = unsafe {
                    launch_kernel!(
                        self.api.hipModuleLaunchKernel,
                        function,
                        config,
                        stream,
                        pointers
                    )
                };
                self.check(result, || {
                    format!(
                        "launching kernel `{}` (grid {:?}, block {:?}, {} B dynamic LDS)",
                        launch.name, config.grid, config.block, config.shared_bytes
                    )
                })
            },
        )
    }

    fn allocate(&self, bytes: usize) -> Result<hip_sys::DevicePtr, LaunchError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let result = unsafe { (self.api.hipMalloc)(&mut ptr, bytes) };
        if result != HIP_SUCCESS {
            return Err(backend::allocation_failed(
                bytes,
                describe(self.api, result),
            ));
        }
        Ok(ptr)
    }

    fn zero(&self, ptr: hip_sys::DevicePtr, bytes: usize) -> Result<(), LaunchError> {
        // SAFETY: `bytes` bytes at `ptr` are allocated.
        self.check(unsafe { (self.api.hipMemsetD8)(ptr, 0, bytes) }, || {
            format!("zeroing {bytes} bytes")
        })?;
        self.settle_null_stream()
    }

    fn flush_l2(&self, ptr: hip_sys::DevicePtr, bytes: usize) -> Result<(), LaunchError> {
        let null = std::ptr::null_mut();
        // SAFETY: the scratch buffer is `bytes` long and live.
        self.check(
            unsafe { (self.api.hipMemsetD8Async)(ptr, 0, bytes, null) },
            || "flushing the L2 cache between timed launches".into(),
        )
    }

    unsafe fn free(&self, ptr: hip_sys::DevicePtr) {
        // SAFETY: the caller's contract.
        unsafe { (self.api.hipFree)(ptr) };
    }

    fn address(ptr: hip_sys::DevicePtr) -> u64 {
        ptr as u64
    }

    fn read_device(&self, addr: u64, target: &mut [u8]) -> Result<(), LaunchError> {
        self.bind()?;
        // SAFETY: the caller checked that `addr .. addr + target.len()` lies in live device
        // memory.
        self.check(
            unsafe {
                (self.api.hipMemcpyDtoH)(
                    target.as_mut_ptr().cast(),
                    addr as usize as hip_sys::DevicePtr,
                    target.len(),
                )
            },
            || format!("copying {} bytes from the device", target.len()),
        )
    }

    fn write_device(&self, addr: u64, source: &[u8]) -> Result<(), LaunchError> {
        self.bind()?;
        // SAFETY: as in `read_device`; the runtime only reads `source` (its prototype takes a
        // non-const pointer).
        self.check(
            unsafe {
                (self.api.hipMemcpyHtoD)(
                    addr as usize as hip_sys::DevicePtr,
                    source.as_ptr() as *mut c_void,
                    source.len(),
                )
            },
            || format!("copying {} bytes to the device", source.len()),
        )?;
        self.settle_null_stream()
    }

    /// A stream not ordered with the null stream (the synchronous copies wait there until they
    /// land, `settle_null_stream`).
    fn create_stream(&self) -> Result<hip_sys::Stream, LaunchError> {
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer and flags.
        self.check(
            unsafe { (self.api.hipStreamCreateWithFlags)(&mut stream, HIP_STREAM_NON_BLOCKING) },
            || "creating a stream".into(),
        )?;
        Ok(stream)
    }

    unsafe fn destroy_stream(&self, stream: hip_sys::Stream) {
        // SAFETY: the caller's contract.
        unsafe { (self.api.hipStreamDestroy)(stream) };
    }

    fn upload_on(
        &self,
        stream: hip_sys::Stream,
        addr: u64,
        staged: &mut [u8],
    ) -> Result<(), LaunchError> {
        // SAFETY: the caller checked the device range and keeps `staged` until the stream is
        // synchronised.
        self.check(
            unsafe {
                (self.api.hipMemcpyHtoDAsync)(
                    addr as usize as hip_sys::DevicePtr,
                    staged.as_mut_ptr().cast(),
                    staged.len(),
                    stream,
                )
            },
            || format!("enqueuing a copy of {} bytes to the device", staged.len()),
        )
    }

    fn wait_on(&self, stream: hip_sys::Stream, event: hip_sys::Event) -> Result<(), LaunchError> {
        // SAFETY: live stream and event.
        self.check(
            unsafe { (self.api.hipStreamWaitEvent)(stream, event, 0) },
            || "making a stream wait for an event".into(),
        )
    }

    fn synchronize_stream(&self, stream: hip_sys::Stream) -> Result<(), LaunchError> {
        // SAFETY: live stream.
        self.check(unsafe { (self.api.hipStreamSynchronize)(stream) }, || {
            "synchronising a stream (an error here may come from any kernel it ran)".into()
        })
    }

    fn create_event(&self) -> Result<hip_sys::Event, LaunchError> {
        let mut event = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.check(unsafe { (self.api.hipEventCreate)(&mut event) }, || {
            "creating an event".into()
        })?;
        Ok(event)
    }

    unsafe fn destroy_event(&self, event: hip_sys::Event) {
        // SAFETY: the caller's contract.
        unsafe { (self.api.hipEventDestroy)(event) };
    }

    fn record_on(&self, event: hip_sys::Event, stream: hip_sys::Stream) -> Result<(), LaunchError> {
        // SAFETY: live event; `stream` is live or null.
        self.check(unsafe { (self.api.hipEventRecord)(event, stream) }, || {
            "recording an event".into()
        })
    }

    fn synchronize_event(&self, event: hip_sys::Event) -> Result<(), LaunchError> {
        // SAFETY: live event.
        self.check(unsafe { (self.api.hipEventSynchronize)(event) }, || {
            "synchronising an event".into()
        })
    }

    fn elapsed_ms(&self, start: hip_sys::Event, end: hip_sys::Event) -> Result<f64, LaunchError> {
        let mut ms = 0f32;
        // SAFETY: both events completed (synchronised by the caller).
        self.check(
            unsafe { (self.api.hipEventElapsedTime)(&mut ms, start, end) },
            || "reading an event time".into(),
        )?;
        Ok(ms as f64)
    }
}

/// Device memory from `hipMalloc`.
pub(super) type HipAllocation = DeviceAllocation<HipContext>;

/// A code object loaded by `hipModuleLoadData`, unloaded on drop.
pub(super) struct HipModule {
    context: Arc<HipContext>,
    module: hip_sys::Module,
    /// The code object's kernels by module entry index (its metadata order).
    kernels: Vec<CodeObjectKernel>,
    /// The entries' functions by entry index, each looked up at its first launch.
    functions: Mutex<Vec<Option<hip_sys::Function>>>,
}

// SAFETY: module and function handles may be used from any thread with the device current.
unsafe impl Send for HipModule {}
unsafe impl Sync for HipModule {}

impl HipModule {
    /// Loads the code object `image`, whose metadata listed `kernels`; `what` names it in an
    /// error (its target).
    pub(super) fn load(
        context: &Arc<HipContext>,
        image: &[u8],
        kernels: Vec<CodeObjectKernel>,
        what: &str,
    ) -> Result<HipModule, LaunchError> {
        context.bind()?;
        let mut module = std::ptr::null_mut();
        // SAFETY: `image` is a whole code object (an ELF whose metadata was read), alive for the
        // call; the runtime copies what it keeps.
        context.check(
            unsafe { (context.api.hipModuleLoadData)(&mut module, image.as_ptr().cast()) },
            || format!("loading the code object {what} (hipModuleLoadData)"),
        )?;
        Ok(HipModule {
            context: Arc::clone(context),
            module,
            kernels,
            functions: Mutex::new(Vec::new()),
        })
    }

    /// The kernel `name` (entry `index`), looked up at its first launch, with the block checked
    /// against the code object's workgroup limit.
    fn function(
        &self,
        name: &str,
        index: u32,
        config: &LaunchConfig,
    ) -> Result<hip_sys::Function, LaunchError> {
        let not_found = || LaunchError::KernelNotFound {
            kernel: name.to_string(),
            entries: self.kernels.iter().map(|k| k.name.clone()).collect(),
        };
        let index = index as usize;
        let kernel = self.kernels.get(index).ok_or_else(not_found)?;
        check_block(kernel, config)?;
        let mut functions = self
            .functions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if functions.len() <= index {
            functions.resize(index + 1, None);
        }
        if let Some(function) = functions[index] {
            return Ok(function);
        }
        // The code object's name of entry `index` (a variant sharing another's amdgpu body
        // resolved to that one's entry, `Kernel::amdgpu_name`).
        let entry = &kernel.name;
        let c_name = CString::new(entry.as_str()).map_err(|_| not_found())?;
        let mut function = std::ptr::null_mut();
        // SAFETY: valid module and NUL-terminated name.
        self.context.check(
            unsafe {
                (self.context.api.hipModuleGetFunction)(&mut function, self.module, c_name.as_ptr())
            },
            || match entry == name {
                true => format!("looking up kernel `{name}` in the code object"),
                false => {
                    format!("looking up kernel `{entry}` (which runs `{name}`) in the code object")
                }
            },
        )?;
        functions[index] = Some(function);
        Ok(function)
    }
}

impl Drop for HipModule {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`; no launch can be using it (launches take `&Module`).
        if self.context.bind().is_ok() {
            unsafe { (self.context.api.hipModuleUnload)(self.module) };
        }
    }
}

/// A non-blocking HIP stream, destroyed on drop.
pub(super) type HipStream = DeviceStream<HipContext>;

/// A HIP event, destroyed on drop.
pub(super) type HipEvent = DeviceEvent<HipContext>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_checked_against_the_code_objects_workgroup_limit() {
        let mut kernel = CodeObjectKernel {
            name: "k".to_string(),
            param_sizes: vec![8],
            max_flat_workgroup_size: Some(256),
            group_segment_fixed_size: Some(0),
        };
        assert!(check_block(&kernel, &LaunchConfig::linear(4, 256)).is_ok());
        let err = check_block(&kernel, &LaunchConfig::linear(1, 512)).unwrap_err();
        assert!(
            err.to_string()
                .contains("512 work-items, but the code object allows at most 256"),
            "{err}"
        );
        kernel.max_flat_workgroup_size = None;
        assert!(check_block(&kernel, &LaunchConfig::linear(1, 1024)).is_ok());
    }
}
