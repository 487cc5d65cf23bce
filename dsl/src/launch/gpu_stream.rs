//! The GPU side of [`Stream`](super::Stream), [`Event`](super::Event) and
//! [`Graph`](super::Graph): the back ends' streams and events on the CUDA context, and graph
//! capture, which only CUDA has.

use super::backend::{DeviceContext, DeviceEvent, DeviceStream};
use super::error::LaunchError;
use super::gpu::{check, GpuContext};
use cudarc::driver::sys;
use std::sync::Arc;

/// A CUDA stream (created non-blocking and destroyed on drop, or borrowed from `cudarc`).
pub(super) type GpuStream = DeviceStream<GpuContext>;

/// A CUDA event, destroyed on drop.
pub(super) type GpuEvent = DeviceEvent<GpuContext>;

/// Graph capture, which only the CUDA back end has.
impl DeviceStream<GpuContext> {
    pub(super) fn begin_capture(&self) -> Result<(), LaunchError> {
        self.context.bind()?;
        // SAFETY: live stream.
        check(
            unsafe {
                sys::cuStreamBeginCapture_v2(
                    self.stream.0,
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
            unsafe { sys::cuStreamEndCapture(self.stream.0, &mut graph) },
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
            unsafe { sys::cuGraphLaunch(graph.exec, self.stream.0) },
            || "launching a graph".into(),
        )
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
