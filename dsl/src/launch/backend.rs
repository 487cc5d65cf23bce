//! What the CUDA ([`gpu`](super::gpu)) and HIP ([`hip`](super::hip)) back ends share. Each
//! back end's context implements [`DeviceContext`] with its runtime's calls; on those, device
//! memory ([`DeviceAllocation`]), streams ([`DeviceStream`]), events ([`DeviceEvent`]) and the
//! event-timed loop of [`Device::time_launches`](super::Device::time_launches) are written once,
//! as are the device checks of opening a device and the launch of an entry with its parameter
//! pointers (the two runtimes' launch calls take the same arguments in the same order).

use super::args::with_param_pointers;
use super::config::{EntryLaunch, LaunchConfig, TimingOptions};
use super::error::LaunchError;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, Mutex};

/// Checks that device `ordinal` is one of the `count` devices `runtime` sees (its devices named
/// `device`); the error is the reason the device is unavailable.
pub(super) fn check_ordinal(
    ordinal: usize,
    count: i32,
    runtime: &str,
    device: &str,
) -> Result<(), String> {
    if count <= 0 {
        return Err(format!("{runtime} sees no device"));
    }
    if ordinal >= count as usize {
        return Err(format!("{device} {ordinal} requested, {count} present"));
    }
    Ok(())
}

/// The device name the runtime writes by `read(buffer, buffer length)` (`cuDeviceGetName`,
/// `hipDeviceGetName`).
pub(super) fn device_name(
    read: impl FnOnce(*mut c_char, i32) -> Result<(), LaunchError>,
) -> Result<String, LaunchError> {
    let mut bytes = [0 as c_char; 256];
    read(bytes.as_mut_ptr(), bytes.len() as i32)?;
    // SAFETY: the runtime wrote a NUL-terminated name into the buffer.
    Ok(unsafe { CStr::from_ptr(bytes.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// The error of a failed device allocation of `bytes`, the runtime's `code` and `message` saying
/// why.
pub(super) fn allocation_failed(bytes: usize, (code, message): (String, String)) -> LaunchError {
    LaunchError::Allocation {
        bytes,
        reason: format!("{code} ({message})"),
    }
}

/// Calls a runtime's kernel launch (`cuLaunchKernel`, `hipModuleLaunchKernel`: function, grid,
/// block, dynamic shared bytes, stream, parameter pointers, no extra options) with the grid,
/// block and shared memory of a [`LaunchConfig`].
macro_rules! launch_kernel {
    ($entry:expr, $function:expr, $config:expr, $stream:expr, $pointers:expr) => {{
        let config: &$crate::launch::LaunchConfig = $config;
        $entry(
            $function,
            config.grid[0],
            config.grid[1],
            config.grid[2],
            config.block[0],
            config.block[1],
            config.block[2],
            config.shared_bytes,
            $stream,
            $pointers,
            std::ptr::null_mut(),
        )
    }};
}
pub(super) use launch_kernel;

/// Launches `launch`: `function` looks the entry up in its module (checking the launch
/// configuration against it), then `raw` launches it with one pointer per parameter ([`with_param_pointers`]).
pub(super) fn launch_entry<M, F>(
    launch: EntryLaunch<'_, M>,
    function: impl FnOnce(&M, &str, u32, &LaunchConfig) -> Result<F, LaunchError>,
    raw: impl FnOnce(F, &LaunchConfig, *mut *mut c_void) -> Result<(), LaunchError>,
) -> Result<(), LaunchError> {
    let EntryLaunch {
        module,
        name,
        index,
        config,
        params,
    } = launch;
    let function = function(module, name, index, config)?;
    with_param_pointers(name, params, |pointers| raw(function, config, pointers))
}

/// A GPU back end's context: the runtime calls the shared launcher types are built on.
/// [`bind`](Self::bind), [`synchronize`](Self::synchronize), the launches and the synchronous
/// copies make the device current on the calling thread themselves; the other calls expect it
/// current (the shared types bind first). Null stream handles are the default stream.
pub(super) trait DeviceContext: Send + Sync + Sized {
    /// A loaded module.
    type Module;
    /// A device memory address.
    type Ptr: Copy;
    /// A stream handle.
    type Stream: Copy;
    /// An event handle.
    type Event: Copy;
    /// The default stream: the legacy stream (CUDA), the null stream (HIP).
    const DEFAULT_STREAM: Self::Stream;

    /// Makes the device current on the calling thread.
    fn bind(&self) -> Result<(), LaunchError>;

    /// Waits for all work of the device; a failure is attributed by `action`.
    fn synchronize(&self, action: impl FnOnce() -> String) -> Result<(), LaunchError>;

    /// Launches on `stream` without waiting.
    fn launch_on(
        &self,
        launch: EntryLaunch<'_, Self::Module>,
        stream: Self::Stream,
    ) -> Result<(), LaunchError>;

    /// Launches on the default stream without waiting.
    fn launch(&self, launch: EntryLaunch<'_, Self::Module>) -> Result<(), LaunchError> {
        self.launch_on(launch, Self::DEFAULT_STREAM)
    }

    /// `bytes` (> 0) bytes of device memory.
    fn allocate(&self, bytes: usize) -> Result<Self::Ptr, LaunchError>;

    /// Zeroes `bytes` bytes at `ptr` and waits until that has landed.
    fn zero(&self, ptr: Self::Ptr, bytes: usize) -> Result<(), LaunchError>;

    /// Enqueues on the default stream a memset of `bytes` bytes at `ptr`, to flush the L2 cache
    /// between timed launches.
    fn flush_l2(&self, ptr: Self::Ptr, bytes: usize) -> Result<(), LaunchError>;

    /// Frees memory from [`allocate`](Self::allocate) (device current).
    ///
    /// # Safety
    /// `ptr` is live and not used after this.
    unsafe fn free(&self, ptr: Self::Ptr);

    /// The address of `ptr` as the launcher keeps it.
    fn address(ptr: Self::Ptr) -> u64;

    /// Copies `target.len()` bytes from device address `addr` to the host, after all prior work
    /// of the default stream.
    fn read_device(&self, addr: u64, target: &mut [u8]) -> Result<(), LaunchError>;

    /// Copies `source` to device address `addr`; returns once the copy has landed.
    fn write_device(&self, addr: u64, source: &[u8]) -> Result<(), LaunchError>;

    /// A new stream not ordered with the default stream (the synchronous copies wait there until
    /// they land, so that work on it sees them).
    fn create_stream(&self) -> Result<Self::Stream, LaunchError>;

    /// Destroys a stream from [`create_stream`](Self::create_stream) (device current); its
    /// pending work still completes.
    ///
    /// # Safety
    /// `stream` is not used after this.
    unsafe fn destroy_stream(&self, stream: Self::Stream);

    /// Enqueues on `stream` a copy of `staged` (kept alive by the caller until the stream is
    /// synchronised) to device address `addr`.
    fn upload_on(
        &self,
        stream: Self::Stream,
        addr: u64,
        staged: &mut [u8],
    ) -> Result<(), LaunchError>;

    /// Orders `stream`'s later work after `event`.
    fn wait_on(&self, stream: Self::Stream, event: Self::Event) -> Result<(), LaunchError>;

    /// Waits until all work of `stream` is done.
    fn synchronize_stream(&self, stream: Self::Stream) -> Result<(), LaunchError>;

    fn create_event(&self) -> Result<Self::Event, LaunchError>;

    /// Destroys an event from [`create_event`](Self::create_event) (device current).
    ///
    /// # Safety
    /// `event` is not used after this.
    unsafe fn destroy_event(&self, event: Self::Event);

    /// Records `event` on `stream`.
    fn record_on(&self, event: Self::Event, stream: Self::Stream) -> Result<(), LaunchError>;

    fn synchronize_event(&self, event: Self::Event) -> Result<(), LaunchError>;

    /// Milliseconds between two completed events.
    fn elapsed_ms(&self, start: Self::Event, end: Self::Event) -> Result<f64, LaunchError>;
}

/// A [`DeviceContext`]'s handle (a device address, a stream, an event; only those), which may be
/// used from any thread: the context's calls make the device current on the calling thread
/// first.
#[derive(Clone, Copy)]
pub(super) struct Handle<H: Copy>(pub(super) H);

// SAFETY: see above; the runtimes' calls are thread-safe.
unsafe impl<H: Copy> Send for Handle<H> {}
unsafe impl<H: Copy> Sync for Handle<H> {}

/// Device memory of context `C`, freed on drop (the allocation holds its context).
pub(super) struct DeviceAllocation<C: DeviceContext> {
    context: Arc<C>,
    ptr: Handle<C::Ptr>,
}

impl<C: DeviceContext> DeviceAllocation<C> {
    /// `bytes` (> 0) bytes of device memory, zeroed if asked.
    pub(super) fn new(context: &Arc<C>, bytes: usize, zeroed: bool) -> Result<Self, LaunchError> {
        context.bind()?;
        let allocation = DeviceAllocation {
            context: Arc::clone(context),
            ptr: Handle(context.allocate(bytes)?),
        };
        if zeroed {
            context.zero(allocation.ptr.0, bytes)?;
        }
        Ok(allocation)
    }

    pub(super) fn addr(&self) -> u64 {
        C::address(self.ptr.0)
    }

    /// The context that owns the memory.
    pub(super) fn context(&self) -> &Arc<C> {
        &self.context
    }
}

impl<C: DeviceContext> Drop for DeviceAllocation<C> {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, not used after this. An error cannot be reported from drop.
        if self.context.bind().is_ok() {
            unsafe { self.context.free(self.ptr.0) };
        }
    }
}

/// Host copies of data uploaded asynchronously on a stream, kept until the stream is
/// synchronised (the runtime reads them when the copy runs).
#[derive(Default)]
struct StagedUploads(Mutex<Vec<Vec<u8>>>);

impl StagedUploads {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A stream of context `C` (created here and destroyed on drop, or borrowed).
pub(super) struct DeviceStream<C: DeviceContext> {
    pub(super) context: Arc<C>,
    pub(super) stream: Handle<C::Stream>,
    owned: bool,
    staged: StagedUploads,
}

impl<C: DeviceContext> DeviceStream<C> {
    /// A new stream ([`DeviceContext::create_stream`]).
    pub(super) fn create(context: &Arc<C>) -> Result<Self, LaunchError> {
        context.bind()?;
        let mut stream = DeviceStream::borrowed(context, context.create_stream()?);
        stream.owned = true;
        Ok(stream)
    }

    /// A stream someone else created and destroys.
    pub(super) fn borrowed(context: &Arc<C>, stream: C::Stream) -> Self {
        DeviceStream {
            context: Arc::clone(context),
            stream: Handle(stream),
            owned: false,
            staged: StagedUploads::default(),
        }
    }

    pub(super) fn launch(&self, launch: EntryLaunch<'_, C::Module>) -> Result<(), LaunchError> {
        self.context.launch_on(launch, self.stream.0)
    }

    /// Enqueues a copy of `source` to device address `addr` (the caller checked the range); the
    /// data is copied aside and kept until the stream is synchronised (moving the `Vec` does not
    /// move its heap buffer).
    pub(super) fn upload(&self, addr: u64, source: &[u8]) -> Result<(), LaunchError> {
        self.context.bind()?;
        let mut staged = source.to_vec();
        self.context.upload_on(self.stream.0, addr, &mut staged)?;
        self.staged.lock().push(staged);
        Ok(())
    }

    /// An event recorded after the work enqueued so far.
    pub(super) fn record(&self) -> Result<DeviceEvent<C>, LaunchError> {
        let event = DeviceEvent::create(&self.context)?;
        event.record(self.stream.0)?;
        Ok(event)
    }

    pub(super) fn wait(&self, event: &DeviceEvent<C>) -> Result<(), LaunchError> {
        self.context.bind()?;
        self.context.wait_on(self.stream.0, event.event.0)
    }

    pub(super) fn synchronize(&self) -> Result<(), LaunchError> {
        self.context.bind()?;
        self.context.synchronize_stream(self.stream.0)?;
        self.staged.lock().clear();
        Ok(())
    }
}

impl<C: DeviceContext> Drop for DeviceStream<C> {
    fn drop(&mut self) {
        if self.owned && self.context.bind().is_ok() {
            // SAFETY: created in `create`; pending work still completes.
            unsafe { self.context.destroy_stream(self.stream.0) };
        }
    }
}

/// An event of context `C`, destroyed on drop.
pub(super) struct DeviceEvent<C: DeviceContext> {
    context: Arc<C>,
    event: Handle<C::Event>,
}

impl<C: DeviceContext> DeviceEvent<C> {
    fn create(context: &Arc<C>) -> Result<Self, LaunchError> {
        context.bind()?;
        Ok(DeviceEvent {
            context: Arc::clone(context),
            event: Handle(context.create_event()?),
        })
    }

    fn record(&self, stream: C::Stream) -> Result<(), LaunchError> {
        self.context.bind()?;
        self.context.record_on(self.event.0, stream)
    }

    pub(super) fn synchronize(&self) -> Result<(), LaunchError> {
        self.context.bind()?;
        self.context.synchronize_event(self.event.0)
    }

    /// Milliseconds from this event to `later` (both completed: synchronised by the caller).
    pub(super) fn elapsed_ms(&self, later: &Self) -> Result<f64, LaunchError> {
        self.context.elapsed_ms(self.event.0, later.event.0)
    }
}

impl<C: DeviceContext> Drop for DeviceEvent<C> {
    fn drop(&mut self) {
        if self.context.bind().is_ok() {
            // SAFETY: created in `create`, not used after this.
            unsafe { self.context.destroy_event(self.event.0) };
        }
    }
}

/// Per-launch GPU times (ms) of `launch` by events: `warmup` launches, then `repetitions`
/// launches, each preceded by an L2 flush (a memset of `l2_flush_bytes`) outside its events; all
/// on the default stream.
pub(super) fn time_with_events<C: DeviceContext>(
    context: &Arc<C>,
    launch: EntryLaunch<'_, C::Module>,
    options: TimingOptions,
) -> Result<Vec<f64>, LaunchError> {
    let name = launch.name;
    for _ in 0..options.warmup {
        context.launch(launch)?;
    }
    context.synchronize(|| format!("running the warm-up launches of kernel `{name}`"))?;
    let flush = if options.l2_flush_bytes > 0 {
        Some(DeviceAllocation::new(
            context,
            options.l2_flush_bytes,
            false,
        )?)
    } else {
        None
    };
    let mut events = Vec::with_capacity(options.repetitions as usize);
    for _ in 0..options.repetitions {
        events.push((DeviceEvent::create(context)?, DeviceEvent::create(context)?));
    }
    for (start, end) in &events {
        if let Some(flush) = &flush {
            context.flush_l2(flush.ptr.0, options.l2_flush_bytes)?;
        }
        // The device is current (bound by the event creation and each launch): nothing but the
        // launch between the two events.
        context.record_on(start.event.0, C::DEFAULT_STREAM)?;
        context.launch(launch)?;
        context.record_on(end.event.0, C::DEFAULT_STREAM)?;
    }
    context.synchronize(|| format!("running the timed launches of kernel `{name}`"))?;
    events
        .iter()
        .map(|(start, end)| start.elapsed_ms(end))
        .collect()
}
