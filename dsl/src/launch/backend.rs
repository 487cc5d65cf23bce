//! What the CUDA ([`gpu`](super::gpu)) and HIP ([`hip`](super::hip)) back ends share: the
//! device checks of opening one, launching an entry with its parameter pointers, the host copies
//! an asynchronous upload keeps, and the event-timed loop of
//! [`Device::time_launches`](super::Device::time_launches). The two runtimes' entry points take
//! the same arguments in the same order; each back end supplies its calls.

use super::args::with_param_pointers;
use super::config::{EntryLaunch, LaunchConfig, TimingOptions};
use super::error::LaunchError;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

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

/// Launches `launch`: `function` looks the entry up in its module (checking the grid against
/// it), then `raw` launches it with one pointer per parameter ([`with_param_pointers`]).
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

/// Host copies of data uploaded asynchronously on a stream, kept until the stream is
/// synchronised (the runtime reads them when the copy runs).
#[derive(Default)]
pub(super) struct StagedUploads(Mutex<Vec<Vec<u8>>>);

impl StagedUploads {
    /// Copies `source` aside and enqueues the copy of that by `enqueue`, which is given the
    /// staged bytes (they stay where they are until [`release`](Self::release): moving the
    /// `Vec` does not move its heap buffer).
    pub(super) fn upload(
        &self,
        source: &[u8],
        enqueue: impl FnOnce(&mut [u8]) -> Result<(), LaunchError>,
    ) -> Result<(), LaunchError> {
        let mut staged = source.to_vec();
        enqueue(&mut staged)?;
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(staged);
        Ok(())
    }

    /// Frees the copies, once the stream has been synchronised.
    pub(super) fn release(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Synchronous copies between the host and a device's memory.
pub(super) trait DeviceCopy {
    /// Copies `target.len()` bytes from device address `addr` to the host, after all prior work
    /// of the default stream.
    fn read_device(&self, addr: u64, target: &mut [u8]) -> Result<(), LaunchError>;

    /// Copies `source` to device address `addr`; returns once the copy has landed.
    fn write_device(&self, addr: u64, source: &[u8]) -> Result<(), LaunchError>;
}

/// What [`time_with_events`] needs of a back end: events on its default stream, a wait for all
/// work, and scratch memory to flush the L2 cache with.
pub(super) trait EventTimer {
    /// Device memory freed on drop.
    type Scratch;
    /// An event, destroyed on drop.
    type Event;

    /// Waits for all work of the device; a failure is attributed by `action`.
    fn wait_all(&self, action: &dyn Fn() -> String) -> Result<(), LaunchError>;

    /// `bytes` bytes of device memory, not zeroed.
    fn scratch(&self, bytes: usize) -> Result<Self::Scratch, LaunchError>;

    /// Enqueues on the default stream a memset of the `bytes` bytes of `scratch`.
    fn flush_l2(&self, scratch: &Self::Scratch, bytes: usize) -> Result<(), LaunchError>;

    fn create_event(&self) -> Result<Self::Event, LaunchError>;

    /// Records `event` on the default stream.
    fn record_default(&self, event: &Self::Event) -> Result<(), LaunchError>;

    /// Milliseconds between two completed events.
    fn elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> Result<f64, LaunchError>;
}

/// Per-launch GPU times (ms) by events of kernel `name`, which `launch` launches on the default
/// stream without waiting: `warmup` launches, then `repetitions` launches, each preceded by an L2
/// flush (a memset of `l2_flush_bytes`) outside its events.
pub(super) fn time_with_events<T: EventTimer>(
    timer: &T,
    name: &str,
    launch: impl Fn() -> Result<(), LaunchError>,
    options: TimingOptions,
) -> Result<Vec<f64>, LaunchError> {
    for _ in 0..options.warmup {
        launch()?;
    }
    timer.wait_all(&|| format!("running the warm-up launches of kernel `{name}`"))?;
    let flush = if options.l2_flush_bytes > 0 {
        Some(timer.scratch(options.l2_flush_bytes)?)
    } else {
        None
    };
    let mut events = Vec::with_capacity(options.repetitions as usize);
    for _ in 0..options.repetitions {
        events.push((timer.create_event()?, timer.create_event()?));
    }
    for (start, end) in &events {
        if let Some(flush) = &flush {
            timer.flush_l2(flush, options.l2_flush_bytes)?;
        }
        timer.record_default(start)?;
        launch()?;
        timer.record_default(end)?;
    }
    timer.wait_all(&|| format!("running the timed launches of kernel `{name}`"))?;
    events
        .iter()
        .map(|(start, end)| timer.elapsed_ms(start, end))
        .collect()
}
