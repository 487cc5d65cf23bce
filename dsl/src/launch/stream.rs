//! Streams, events and graphs: launches and copies that enqueue and return at once.
//!
//! The model: every tensor a launch uses is reference counted ([`Allocation`]); the stream
//! (or a captured [`Graph`]) holds it until the work is known done — after
//! [`Stream::synchronize`], or [`Event::synchronize`] of an event recorded after the work — so
//! dropping a tensor while a kernel uses it never frees its memory early. Each use is recorded
//! with the stream's position, and the launcher refuses, on both back ends:
//! - a host read (`to_vec`) of memory that pending work writes, and a host write of memory that
//!   pending work uses ([`LaunchError::Unsynchronized`]);
//! - work on one stream using memory that another stream's pending work writes (or, for a
//!   write, uses), unless the first stream waited for an event recorded after that work.
//!
//! On the GPU a stream is a CUDA stream (blocking: ordered with the legacy default stream, which
//! the synchronous copies use); on the emulator work runs on the calling thread when enqueued,
//! and the positions above still decide what the host may touch, so a missing synchronisation
//! is an error there even though the data is already written. On a HIP GPU a stream is a
//! non-blocking HIP stream, and graphs are not captured (an error).
//!
//! A graph is captured from one stream ([`Stream::begin_capture`] … [`Stream::end_capture`]):
//! the launches in between are recorded, not run; [`Graph::launch`] replays them on a stream
//! (a CUDA graph on the GPU).
//!
//! A kernel with `Tensor` parameters launched on a stream (the example of the README's "Host
//! API" section):
//!
//! ```
//! use tessera::launch::Device;
//! use tessera::tensor::Tensor;
//! use tessera::tile_kernel;
//!
//! #[tile_kernel(num_warps = 4, BLOCK = 1024)]
//! pub fn add<const BLOCK: usize>(a: Tensor<f32, 1>, b: Tensor<f32, 1>, out: Tensor<f32, 1>) {
//!     let offs = program_id(0) * BLOCK + arange(0, BLOCK);
//!     let mask = offs < out.size(0);
//!     let x = load(a + offs * a.stride(0), mask, 0.0) + load(b + offs * b.stride(0), mask, 0.0);
//!     store(out + offs * out.stride(0), x, mask);
//! }
//!
//! fn main() -> Result<(), tessera::launch::LaunchError> {
//!     let device = Device::emulator(); // or Device::new() with the kernel crate's PTX loaded
//!     let module = device.host_module()?; // the emulator's host builds; on a GPU: load_ptx_set
//!     let stream = device.stream()?;
//!     let a = Tensor::from_slice(&device, &[1.0f32, 2.0, 3.0], &[3])?;
//!     let mut out = Tensor::<f32>::zeros(&device, &[3])?;
//!     add::launch(&stream, &module, add::Consts { BLOCK: 1024 }, 1, &a, &a, &mut out)?;
//!     assert!(out.to_vec().is_err()); // pending work writes `out`: synchronise first
//!     stream.synchronize()?;
//!     assert_eq!(out.to_vec()?, [2.0, 4.0, 6.0]);
//!     // The grid from the tensors' sizes: one program per BLOCK elements of `out`.
//!     let mut twice = Tensor::<f32>::zeros(&device, &[3])?;
//!     let grid = |c: &add::Consts, s: &add::Sizes| {
//!         assert_eq!(*s, add::Sizes { a: [3], b: [3], out: [3] });
//!         (s.out[0].div_ceil(c.BLOCK) as u32,)
//!     };
//!     add::launch_sized(&stream, &module, add::Consts { BLOCK: 1024 }, grid, &out, &out, &mut twice)?;
//!     stream.synchronize()?;
//!     assert_eq!(twice.to_vec()?, [4.0, 8.0, 12.0]);
//!     Ok(())
//! }
//! ```

use super::args::KernelArgs;
use super::config::LaunchConfig;
use super::memory::Allocation;
use super::resolved::ResolvedKernel;
use super::{Backend, Device, LaunchError, Module, ModuleBackend};
use crate::Kernel;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

static NEXT_STREAM_ID: AtomicU64 = AtomicU64::new(1);

/// What the launcher knows of a stream: how much work was enqueued, how much is known done,
/// and which positions of other streams its later work is ordered after.
pub(crate) struct StreamState {
    id: u64,
    enqueued: AtomicU64,
    done: AtomicU64,
    waited: Mutex<HashMap<u64, u64>>,
}

impl StreamState {
    fn new() -> Arc<Self> {
        Arc::new(StreamState {
            id: NEXT_STREAM_ID.fetch_add(1, Ordering::Relaxed),
            enqueued: AtomicU64::new(0),
            done: AtomicU64::new(0),
            waited: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The position up to which the host knows the work is done.
    pub(crate) fn known_done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    fn waited_map(&self) -> std::sync::MutexGuard<'_, HashMap<u64, u64>> {
        self.waited.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The position of stream `other` that this stream's new work is ordered after (0: none).
    pub(crate) fn waited_for(&self, other: u64) -> u64 {
        self.waited_map().get(&other).copied().unwrap_or(0)
    }
}

/// A tensor argument of a launch as the stream tracks it: its memory and whether the kernel
/// writes it. Made by [`TensorRef::use_read`](crate::tensor::TensorRef::use_read) and
/// [`TensorMut::use_write`](crate::tensor::TensorMut::use_write).
#[derive(Clone, Copy, Debug)]
pub struct TensorUse<'a> {
    pub(crate) allocation: &'a Arc<Allocation>,
    pub(crate) write: bool,
}

enum StreamBackend {
    Emulator,
    #[cfg(feature = "cuda")]
    Gpu(super::gpu_stream::GpuStream),
    #[cfg(feature = "hip")]
    Hip(super::hip::HipStream),
}

/// Launches recorded while capturing (emulator) and the memory they use (both back ends).
struct Capture {
    #[allow(clippy::type_complexity)]
    launches: Vec<Box<dyn Fn() -> Result<(), LaunchError> + Send + Sync>>,
    uses: Vec<(Arc<Allocation>, bool)>,
}

/// A queue of work on a device: launches and copies enqueue and return at once. The stream
/// holds every tensor its pending work uses until the work is known done ([`Stream::synchronize`],
/// [`Event::synchronize`] of an event recorded after it, or the stream's drop, which waits for
/// it), and the launcher refuses a host
/// access or another stream's work that is not ordered after pending work using the same memory
/// ([`LaunchError::Unsynchronized`]).
pub struct Stream<'d> {
    device: &'d Device,
    state: Arc<StreamState>,
    backend: StreamBackend,
    /// Memory used by enqueued work, held until the work is known done.
    held: Mutex<Vec<Arc<Allocation>>>,
    capture: Mutex<Option<Capture>>,
    /// Whether `capture` holds a capture: a launch reads this before taking the lock.
    capturing: AtomicBool,
    /// The emulator's counters of the launches run since the last
    /// [`take_emulator_report`](Self::take_emulator_report) (emulator streams only).
    emulated: Mutex<crate::emulator::EmulatorReport>,
}

impl std::fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({} on {})", self.state.id, self.device.name())
    }
}

impl Device {
    /// A new stream on this device.
    pub fn stream(&self) -> Result<Stream<'_>, LaunchError> {
        let backend = match &self.backend {
            Backend::Emulator => StreamBackend::Emulator,
            #[cfg(feature = "cuda")]
            Backend::Gpu(context) => {
                StreamBackend::Gpu(super::gpu_stream::GpuStream::create(context)?)
            }
            #[cfg(feature = "hip")]
            Backend::Hip(context) => StreamBackend::Hip(super::hip::HipStream::create(context)?),
        };
        Ok(Stream::with_backend(self, backend))
    }
}

impl<'d> Stream<'d> {
    fn with_backend(device: &'d Device, backend: StreamBackend) -> Stream<'d> {
        Stream {
            device,
            state: StreamState::new(),
            backend,
            held: Mutex::new(Vec::new()),
            capture: Mutex::new(None),
            capturing: AtomicBool::new(false),
            emulated: Mutex::new(crate::emulator::EmulatorReport::default()),
        }
    }

    /// On the emulator, the counters (shared-memory wavefronts per site, asynchronous copies,
    /// …) of the launches this stream ran since the last call, merged, and the count restarts;
    /// `None` on a GPU. Only the launches the stream ran itself count, not those of a captured
    /// graph or its replays.
    pub fn take_emulator_report(&self) -> Option<crate::emulator::EmulatorReport> {
        match self.backend {
            StreamBackend::Emulator => {
                let mut report = self.emulated.lock().unwrap_or_else(|p| p.into_inner());
                Some(std::mem::take(&mut *report))
            }
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => None,
        }
    }

    /// A user's `cudarc` stream as a Tessera stream of `device` (which must have been made from
    /// the stream's context, [`Device::from_cudarc`]); the stream is not destroyed on drop.
    #[cfg(feature = "cuda")]
    pub fn from_cudarc(
        device: &'d Device,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    ) -> Result<Stream<'d>, LaunchError> {
        let Backend::Gpu(context) = &device.backend else {
            return Err(LaunchError::WrongDevice {
                what: "a cudarc stream".to_string(),
            });
        };
        if stream.context().cu_ctx() != context.raw_context() {
            return Err(LaunchError::WrongDevice {
                what: "the cudarc stream's context".to_string(),
            });
        }
        let gpu = super::gpu_stream::GpuStream::borrowed(context, stream.cu_stream());
        Ok(Stream::with_backend(device, StreamBackend::Gpu(gpu)))
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &'d Device {
        self.device
    }

    /// This stream's number (in error messages).
    pub fn id(&self) -> u64 {
        self.state.id
    }

    fn capture(&self) -> std::sync::MutexGuard<'_, Option<Capture>> {
        self.capture.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Allocation>>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn not_capturing(&self, what: &str) -> Result<(), LaunchError> {
        if self.capture().is_some() {
            return Err(LaunchError::Stream {
                what: what.to_string(),
                reason: format!("stream {} is capturing a graph", self.state.id),
            });
        }
        Ok(())
    }

    /// Checks `tensors` against this stream's device and pending work, then takes the next
    /// position and records the uses at it.
    pub(super) fn enqueue_uses(
        &self,
        tensors: &[TensorUse<'_>],
        what: &dyn Fn() -> String,
    ) -> Result<u64, LaunchError> {
        self.enqueue_use_list(tensors.iter().copied(), what)
    }

    /// [`enqueue_uses`](Self::enqueue_uses) of the uses `tensors` yields (walked twice: checks,
    /// then records), so that a caller holding them otherwise need not collect them.
    fn enqueue_use_list<'a>(
        &self,
        tensors: impl Iterator<Item = TensorUse<'a>> + Clone,
        what: &dyn Fn() -> String,
    ) -> Result<u64, LaunchError> {
        for tensor in tensors.clone() {
            if tensor.allocation.device_id != self.device.id {
                return Err(LaunchError::WrongDevice {
                    what: format!("a tensor of {}", what()),
                });
            }
            tensor
                .allocation
                .check_stream_use(&self.state, tensor.write, what)?;
        }
        let position = self.state.enqueued.fetch_add(1, Ordering::AcqRel) + 1;
        // Locked at the first tensor (a launch of raw pointers takes no lock here).
        let mut held_lock = None;
        for tensor in tensors {
            tensor
                .allocation
                .record_use(&self.state, position, tensor.write);
            let held = held_lock.get_or_insert_with(|| self.held());
            // Held once until the stream is synchronised, however often it is used.
            if !held
                .iter()
                .any(|allocation| Arc::ptr_eq(allocation, tensor.allocation))
            {
                held.push(Arc::clone(tensor.allocation));
            }
        }
        Ok(position)
    }

    /// Enqueues `kernel` over the grid of `config` with `args` and returns at once; `tensors`
    /// are the tensors the arguments point into (checked and held as [`Stream`] says). While
    /// capturing, the launch is recorded in the graph instead. Looks the kernel up in `module`
    /// by name; [`launch_resolved`](Self::launch_resolved) skips that.
    pub fn launch<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: Kernel<A>,
        config: LaunchConfig,
        args: A,
        tensors: &[TensorUse<'_>],
    ) -> Result<(), LaunchError> {
        let resolved = module.resolve(kernel)?;
        self.launch_resolved(module, &resolved, config, args, tensors)
    }

    /// [`launch`](Self::launch) of a kernel resolved in `module` ([`Module::resolve`] or an
    /// [`EntryCache`](super::EntryCache)): the checks (device, entry parameter sizes, pointers,
    /// tensor uses) and the packing allocate nothing once the stream holds the tensors.
    pub fn launch_resolved<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: &ResolvedKernel<A>,
        config: LaunchConfig,
        args: A,
        tensors: &[TensorUse<'_>],
    ) -> Result<(), LaunchError> {
        let name = kernel.kernel.name;
        let what = || format!("launching kernel `{name}` on stream {}", self.state.id);
        if tensors
            .iter()
            .any(|tensor| tensor.allocation.device_id != self.device.id)
        {
            return Err(LaunchError::WrongDevice {
                what: format!("a tensor argument of {}", what()),
            });
        }
        let params = self
            .device
            .checked_params(module, kernel, &config, &args, tensors)?;
        // Most launches are not captured: they take the capture's lock only while one is begun.
        let mut capture = self
            .capturing
            .load(Ordering::Acquire)
            .then(|| self.capture());
        if let Some(capture) = capture.as_mut().and_then(|guard| guard.as_mut()) {
            for tensor in tensors {
                capture
                    .uses
                    .push((Arc::clone(tensor.allocation), tensor.write));
            }
            match (&self.backend, &module.backend) {
                (StreamBackend::Emulator, ModuleBackend::Emulator) => {
                    let (emulated, target) = (kernel.kernel, module.emulated);
                    capture.launches.push(Box::new(move || {
                        super::emulated::launch(emulated, &config, args, target).map(|_| ())
                    }));
                    return Ok(());
                }
                #[cfg(feature = "cuda")]
                (StreamBackend::Gpu(stream), ModuleBackend::Gpu(gpu_module)) => {
                    return stream.launch(kernel.entry_launch(gpu_module, &config, &params));
                }
                #[cfg(any(feature = "cuda", feature = "hip"))]
                _ => return Err(LaunchError::WrongDevice { what: what() }),
            }
        }
        drop(capture);
        self.enqueue_uses(tensors, &what)?;
        self.run_enqueued(module, kernel, &config, args, &params, &what)
    }

    /// Times `kernel` as [`Device::time_launches`] does, on arguments that point into `tensors`
    /// (checked and recorded as a launch's, [`launch_resolved`](Self::launch_resolved)): waits
    /// for the stream's pending work, then runs the warm-up and timed launches and returns when
    /// they are done (what an autotuned kernel's `launch_tuned` times its candidates with).
    pub fn time_launches<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: &ResolvedKernel<A>,
        config: LaunchConfig,
        args: A,
        tensors: &[TensorUse<'_>],
        options: super::TimingOptions,
    ) -> Result<super::Timing, LaunchError> {
        let name = kernel.kernel.name;
        self.not_capturing("timing launches")?;
        let params = self
            .device
            .checked_params(module, kernel, &config, &args, tensors)?;
        let what = || format!("timing kernel `{name}` on stream {}", self.state.id);
        self.enqueue_uses(tensors, &what)?;
        self.synchronize()?;
        self.device
            .time_checked(module, kernel, &config, args, &params, options)
    }

    /// The back end's launch of work whose checks and uses [`launch_resolved`] has made.
    ///
    /// [`launch_resolved`]: Self::launch_resolved
    fn run_enqueued<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: &ResolvedKernel<A>,
        config: &LaunchConfig,
        args: A,
        params: &[super::KernelParam],
        what: &dyn Fn() -> String,
    ) -> Result<(), LaunchError> {
        #[cfg(not(any(feature = "cuda", feature = "hip")))]
        let _ = (params, what);
        match (&self.backend, &module.backend) {
            (StreamBackend::Emulator, ModuleBackend::Emulator) => {
                let report = super::emulated::launch(kernel.kernel, config, args, module.emulated)?;
                self.emulated
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .merge(&report);
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (StreamBackend::Gpu(stream), ModuleBackend::Gpu(gpu_module)) => {
                stream.launch(kernel.entry_launch(gpu_module, config, params))
            }
            #[cfg(feature = "hip")]
            (StreamBackend::Hip(stream), ModuleBackend::Hip(hip_module)) => {
                stream.launch(kernel.entry_launch(hip_module, config, params))
            }
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => Err(LaunchError::WrongDevice { what: what() }),
        }
    }

    /// Enqueues a copy of `data` into the contiguous tensor view `target` and returns at once
    /// (the data is copied aside first, so `data` may be reused at once).
    pub fn upload<T: super::DeviceElement>(
        &self,
        target: &mut crate::tensor::TensorMut<'_, T>,
        data: &[T],
    ) -> Result<(), LaunchError> {
        self.not_capturing("uploading on a stream")?;
        let (offset, bytes) = target.contiguous_bytes(data.len(), "uploading to a tensor")?;
        // SAFETY: `data` is plain data (`DeviceElement`) of `bytes` bytes (checked above).
        let source = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), bytes) };
        let what = || format!("uploading on stream {}", self.state.id);
        let allocation = target.allocation();
        self.enqueue_uses(
            &[TensorUse {
                allocation,
                write: true,
            }],
            &what,
        )?;
        match &self.backend {
            StreamBackend::Emulator => allocation.write_at(offset, source),
            #[cfg(feature = "cuda")]
            StreamBackend::Gpu(stream) => stream.upload(allocation.addr + offset as u64, source),
            #[cfg(feature = "hip")]
            StreamBackend::Hip(stream) => stream.upload(allocation.addr + offset as u64, source),
        }
    }

    /// Records an event after the work enqueued so far.
    pub fn record_event(&self) -> Result<Event, LaunchError> {
        self.not_capturing("recording an event")?;
        let position = self.state.enqueued.load(Ordering::Acquire);
        let mut waited = self.state.waited_map().clone();
        waited.insert(self.state.id, position);
        let backend = match &self.backend {
            StreamBackend::Emulator => EventBackend::Emulator(Instant::now()),
            #[cfg(feature = "cuda")]
            StreamBackend::Gpu(stream) => EventBackend::Gpu(stream.record()?),
            #[cfg(feature = "hip")]
            StreamBackend::Hip(stream) => EventBackend::Hip(stream.record()?),
        };
        Ok(Event {
            stream: Arc::clone(&self.state),
            position,
            waited,
            backend,
        })
    }

    /// Orders this stream's later work after the work `event` follows (on its stream, and
    /// whatever that stream had waited for).
    pub fn wait_event(&self, event: &Event) -> Result<(), LaunchError> {
        self.not_capturing("waiting for an event")?;
        match (&self.backend, &event.backend) {
            (StreamBackend::Emulator, EventBackend::Emulator(_)) => {}
            #[cfg(feature = "cuda")]
            (StreamBackend::Gpu(stream), EventBackend::Gpu(gpu_event)) => stream.wait(gpu_event)?,
            #[cfg(feature = "hip")]
            (StreamBackend::Hip(stream), EventBackend::Hip(hip_event)) => stream.wait(hip_event)?,
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => {
                return Err(LaunchError::WrongDevice {
                    what: "an event".to_string(),
                })
            }
        }
        let mut waited = self.state.waited_map();
        for (&stream, &position) in &event.waited {
            let entry = waited.entry(stream).or_insert(0);
            *entry = (*entry).max(position);
        }
        Ok(())
    }

    /// Waits until all work enqueued on the stream is done; the memory it used is released.
    pub fn synchronize(&self) -> Result<(), LaunchError> {
        self.not_capturing("synchronising a stream")?;
        let position = self.state.enqueued.load(Ordering::Acquire);
        match &self.backend {
            StreamBackend::Emulator => {}
            #[cfg(feature = "cuda")]
            StreamBackend::Gpu(stream) => stream.synchronize()?,
            #[cfg(feature = "hip")]
            StreamBackend::Hip(stream) => stream.synchronize()?,
        }
        self.state.done.fetch_max(position, Ordering::AcqRel);
        self.held().clear();
        Ok(())
    }

    /// Starts capturing: launches until [`end_capture`](Self::end_capture) are recorded into a
    /// graph instead of run.
    pub fn begin_capture(&self) -> Result<(), LaunchError> {
        self.not_capturing("beginning a capture")?;
        #[cfg(feature = "cuda")]
        if let StreamBackend::Gpu(stream) = &self.backend {
            stream.begin_capture()?;
        }
        #[cfg(feature = "hip")]
        if let StreamBackend::Hip(_) = &self.backend {
            return Err(graphs_unsupported("beginning a capture"));
        }
        *self.capture() = Some(Capture {
            launches: Vec::new(),
            uses: Vec::new(),
        });
        self.capturing.store(true, Ordering::Release);
        Ok(())
    }

    /// Ends the capture begun by [`begin_capture`](Self::begin_capture): the graph of the
    /// launches recorded since.
    pub fn end_capture(&self) -> Result<Graph, LaunchError> {
        let taken = self.capture().take();
        self.capturing.store(false, Ordering::Release);
        let Some(capture) = taken else {
            return Err(LaunchError::Stream {
                what: "ending a capture".to_string(),
                reason: format!("stream {} is not capturing", self.state.id),
            });
        };
        let backend = match &self.backend {
            StreamBackend::Emulator => GraphBackend::Emulator(capture.launches),
            #[cfg(feature = "cuda")]
            StreamBackend::Gpu(stream) => GraphBackend::Gpu(stream.end_capture()?),
            #[cfg(feature = "hip")]
            StreamBackend::Hip(_) => return Err(graphs_unsupported("ending a capture")),
        };
        Ok(Graph {
            device_id: self.device.id,
            backend,
            uses: capture.uses,
        })
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        // Work still running keeps its memory alive until it ends, and a dropped stream's work
        // is done: the host may then read what it wrote (nobody can synchronise it any more).
        if self.synchronize().is_err() && !self.held().is_empty() {
            // Capturing, or the work failed: still wait for the device before the memory goes.
            let _: Result<(), LaunchError> = match &self.backend {
                StreamBackend::Emulator => Ok(()),
                #[cfg(feature = "cuda")]
                StreamBackend::Gpu(stream) => stream.synchronize(),
                #[cfg(feature = "hip")]
                StreamBackend::Hip(stream) => stream.synchronize(),
            };
        }
    }
}

enum EventBackend {
    Emulator(Instant),
    #[cfg(feature = "cuda")]
    Gpu(super::gpu_stream::GpuEvent),
    #[cfg(feature = "hip")]
    Hip(super::hip::HipEvent),
}

/// A point in a stream's work ([`Stream::record_event`]).
pub struct Event {
    stream: Arc<StreamState>,
    position: u64,
    /// The positions of every stream the event's work is ordered after (its own included).
    waited: HashMap<u64, u64>,
    backend: EventBackend,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event(stream {} at {})", self.stream.id, self.position)
    }
}

impl Event {
    /// Waits until the work before the event is done (on its stream and those it waited for).
    pub fn synchronize(&self) -> Result<(), LaunchError> {
        match &self.backend {
            EventBackend::Emulator(_) => {}
            #[cfg(feature = "cuda")]
            EventBackend::Gpu(event) => event.synchronize()?,
            #[cfg(feature = "hip")]
            EventBackend::Hip(event) => event.synchronize()?,
        }
        self.stream.done.fetch_max(self.position, Ordering::AcqRel);
        Ok(())
    }

    /// Milliseconds from this event to `later` (both synchronised first): GPU time by CUDA
    /// events, host wall time on the emulator (where work runs when enqueued).
    pub fn elapsed_ms(&self, later: &Event) -> Result<f64, LaunchError> {
        self.synchronize()?;
        later.synchronize()?;
        match (&self.backend, &later.backend) {
            (EventBackend::Emulator(start), EventBackend::Emulator(end)) => {
                Ok(end.saturating_duration_since(*start).as_secs_f64() * 1e3)
            }
            #[cfg(feature = "cuda")]
            (EventBackend::Gpu(start), EventBackend::Gpu(end)) => start.elapsed_ms(end),
            #[cfg(feature = "hip")]
            (EventBackend::Hip(start), EventBackend::Hip(end)) => start.elapsed_ms(end),
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => Err(LaunchError::WrongDevice {
                what: "an event".to_string(),
            }),
        }
    }
}

enum GraphBackend {
    #[allow(clippy::type_complexity)]
    Emulator(Vec<Box<dyn Fn() -> Result<(), LaunchError> + Send + Sync>>),
    #[cfg(feature = "cuda")]
    Gpu(super::gpu_stream::GpuGraph),
}

/// A captured sequence of launches ([`Stream::end_capture`]), replayed by [`Graph::launch`].
/// It holds the memory its launches use.
pub struct Graph {
    device_id: u64,
    backend: GraphBackend,
    uses: Vec<(Arc<Allocation>, bool)>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Graph({} tensor uses)", self.uses.len())
    }
}

impl Graph {
    /// Checks and records the graph's tensor uses on `stream` (no allocation once the stream
    /// holds the tensors): what a replay does on the host before the back end's call.
    pub(super) fn enqueue_uses_on(&self, stream: &Stream<'_>) -> Result<u64, LaunchError> {
        let uses = self.uses.iter().map(|(allocation, write)| TensorUse {
            allocation,
            write: *write,
        });
        let what = || format!("launching a graph on stream {}", stream.state.id);
        stream.enqueue_use_list(uses, &what)
    }

    /// Enqueues the captured launches on `stream`, in order, and returns at once.
    pub fn launch(&self, stream: &Stream<'_>) -> Result<(), LaunchError> {
        stream.not_capturing("launching a graph")?;
        if self.device_id != stream.device.id {
            return Err(LaunchError::WrongDevice {
                what: "a graph".to_string(),
            });
        }
        self.enqueue_uses_on(stream)?;
        match (&self.backend, &stream.backend) {
            (GraphBackend::Emulator(launches), StreamBackend::Emulator) => {
                launches.iter().try_for_each(|launch| launch())
            }
            #[cfg(feature = "cuda")]
            (GraphBackend::Gpu(graph), StreamBackend::Gpu(gpu_stream)) => {
                gpu_stream.launch_graph(graph)
            }
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => Err(LaunchError::WrongDevice {
                what: "a graph".to_string(),
            }),
        }
    }
}

/// The error of a graph operation on a HIP stream: the HIP back end does not capture graphs.
#[cfg(feature = "hip")]
fn graphs_unsupported(what: &str) -> LaunchError {
    LaunchError::Stream {
        what: what.to_string(),
        reason: "the HIP back end does not capture graphs (launch on the stream instead)"
            .to_string(),
    }
}
