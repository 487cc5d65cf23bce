//! The GPU side of [`Stream`](super::Stream), [`Event`](super::Event) and
//! [`Graph`](super::Graph): CUDA streams, events and graphs through the driver API.

use super::backend::StagedUploads;
use super::config::EntryLaunch;
use super::error::LaunchError;
use super::gpu::{check, GpuContext, GpuModule};
use cudarc::driver::sys;
use std::sync::Arc;

/// A CUDA stream (created here and destroyed on drop, or borrowed from `cudarc`).
pub(super) struct GpuStream {
    context: Arc<GpuContext>,
    stream: sys::CUstream,
    owned: bool,
    staged: StagedUploads,
}

// SAFETY: stream handles may be used from any thread with the context current (`bind`).
unsafe impl Send for GpuStream {}
unsafe impl Sync for GpuStream {}

impl GpuStream {
    /// A new non-blocking stream: not ordered with the legacy default stream, so a graph
    /// captured on it is not invalidated by another thread's synchronous copies (which go to the
    /// legacy stream and wait there until they land: `gpu::settle_legacy_stream`).
    pub(super) fn create(context: &Arc<GpuContext>) -> Result<GpuStream, LaunchError> {
        context.bind()?;
        let mut stream = std::ptr::null_mut();
        let flags = sys::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: valid out-pointer and flags.
        check(unsafe { sys::cuStreamCreate(&mut stream, flags) }, || {
            "creating a stream".into()
        })?;
        Ok(GpuStream {
            context: Arc::clone(context),
            stream,
            owned: true,
            staged: StagedUploads::default(),
        })
    }

    /// A stream someone else created and destroys.
    pub(super) fn borrowed(context: &Arc<GpuContext>, stream: sys::CUstream) -> GpuStream {
        GpuStream {
            context: Arc::clone(context),
            stream,
            owned: false,
            staged: StagedUploads::default(),
        }
    }

    pub(super) fn launch(&self, launch: EntryLaunch<'_, GpuModule>) -> Result<(), LaunchError> {
        self.context.launch_on(launch, self.stream)
    }

    /// Enqueues a copy of `source` to device address `addr`.
    pub(super) fn upload(&self, addr: u64, source: &[u8]) -> Result<(), LaunchError> {
        self.context.bind()?;
        self.staged.upload(source, |staged| {
            // SAFETY: the caller checked the device range; `staged` lives until the stream is
            // synchronised.
            check(
                unsafe {
                    sys::cuMemcpyHtoDAsync_v2(
                        addr,
                        staged.as_ptr().cast(),
                        staged.len(),
                        self.stream,
                    )
                },
                || format!("enqueuing a copy of {} bytes to the device", staged.len()),
            )
        })
    }

    pub(super) fn record(&self) -> Result<GpuEvent, LaunchError> {
        self.context.bind()?;
        let mut event = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the event is destroyed by `GpuEvent`'s drop.
        check(unsafe { sys::cuEventCreate(&mut event, 0) }, || {
            "creating an event".into()
        })?;
        let event = GpuEvent {
            context: Arc::clone(&self.context),
            event,
        };
        // SAFETY: live event and stream of this context.
        check(
            unsafe { sys::cuEventRecord(event.event, self.stream) },
            || "recording an event".into(),
        )?;
        Ok(event)
    }

    pub(super) fn wait(&self, event: &GpuEvent) -> Result<(), LaunchError> {
        self.context.bind()?;
        // SAFETY: live stream and event.
        check(
            unsafe { sys::cuStreamWaitEvent(self.stream, event.event, 0) },
            || "making a stream wait for an event".into(),
        )
    }

    pub(super) fn synchronize(&self) -> Result<(), LaunchError> {
        self.context.bind()?;
        // SAFETY: live stream.
        check(unsafe { sys::cuStreamSynchronize(self.stream) }, || {
            "synchronising a stream (an error here may come from any kernel it ran)".into()
        })?;
        self.staged.release();
        Ok(())
    }

    pub(super) fn begin_capture(&self) -> Result<(), LaunchError> {
        self.context.bind()?;
        // SAFETY: live stream.
        check(
            unsafe {
                sys::cuStreamBeginCapture_v2(
                    self.stream,
                    sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                )
            },
            || "beginning a graph capture".into(),
        )
    }

    pub(super) fn end_capture(&self) -> Result<GpuGraph, LaunchError> {
        self.context.bind()?;
        let mut graph = std::ptr::null_mut();
        // SAFETY: the stream is capturing (begun by `begin_capture`).
        check(
            unsafe { sys::cuStreamEndCapture(self.stream, &mut graph) },
            || "ending a graph capture".into(),
        )?;
        let mut exec = std::ptr::null_mut();
        // SAFETY: `graph` was just captured.
        let instantiated = check(
            unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) },
            || "instantiating a captured graph".into(),
        );
        if let Err(err) = instantiated {
            // SAFETY: created above, not used after this.
            unsafe { sys::cuGraphDestroy(graph) };
            return Err(err);
        }
        Ok(GpuGraph {
            context: Arc::clone(&self.context),
            graph,
            exec,
        })
    }

    pub(super) fn launch_graph(&self, graph: &GpuGraph) -> Result<(), LaunchError> {
        self.context.bind()?;
        // SAFETY: live executable graph and stream of this context.
        check(
            unsafe { sys::cuGraphLaunch(graph.exec, self.stream) },
            || "launching a graph".into(),
        )
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        if self.owned && self.context.bind().is_ok() {
            // SAFETY: created in `create`; pending work still completes (the driver defers
            // the release).
            unsafe { sys::cuStreamDestroy_v2(self.stream) };
        }
    }
}

/// A CUDA event, destroyed on drop.
pub(super) struct GpuEvent {
    context: Arc<GpuContext>,
    event: sys::CUevent,
}

// SAFETY: as for `GpuStream`.
unsafe impl Send for GpuEvent {}
unsafe impl Sync for GpuEvent {}

impl GpuEvent {
    pub(super) fn synchronize(&self) -> Result<(), LaunchError> {
        self.context.bind()?;
        // SAFETY: live event.
        check(unsafe { sys::cuEventSynchronize(self.event) }, || {
            "synchronising an event".into()
        })
    }

    pub(super) fn elapsed_ms(&self, later: &GpuEvent) -> Result<f64, LaunchError> {
        let mut ms = 0f32;
        // SAFETY: both events completed (synchronised by the caller).
        check(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, self.event, later.event) },
            || "reading an event time".into(),
        )?;
        Ok(ms as f64)
    }
}

impl Drop for GpuEvent {
    fn drop(&mut self) {
        if self.context.bind().is_ok() {
            // SAFETY: created in `GpuStream::record`.
            unsafe { sys::cuEventDestroy_v2(self.event) };
        }
    }
}

/// A captured CUDA graph and its executable instance.
pub(super) struct GpuGraph {
    context: Arc<GpuContext>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

// SAFETY: as for `GpuStream`.
unsafe impl Send for GpuGraph {}
unsafe impl Sync for GpuGraph {}

impl Drop for GpuGraph {
    fn drop(&mut self) {
        if self.context.bind().is_ok() {
            // SAFETY: created in `end_capture`, not used after this.
            unsafe {
                sys::cuGraphExecDestroy(self.exec);
                sys::cuGraphDestroy(self.graph);
            }
        }
    }
}
