//! `--bench launch`: the host cost of one launch of a trivial kernel, `x[i] += 1` over 1024
//! `f32` (`tessera_kernels::tiled::tensors::tensor_add_one`, `triton_ref.py`'s
//! `add_one_kernel`), measured as that script measures Triton's and torch's: launches issued
//! back to back after warm-up launches and a synchronisation, no synchronisation inside the
//! timed loop; `ms` is host milliseconds per launch, not GPU time. The launch rows take turns
//! over [`ROUNDS`] rounds and each gives its median round, so that none is favoured by its
//! place in the order.
//!
//! Rows (the script names them `ours` and `ours-IMPL`):
//! - `ours`: the generated `launch` on a [`Stream`] with the tensor by `&mut` (rank, extent and
//!   stream-use checks, the entry resolved through the specialisation's cache);
//! - `ptr`: [`Stream::launch_resolved`] of the same entry with its `Ptr`/`i32` arguments and a
//!   kernel resolved once (no tensor tracking);
//! - `ptr_tracked`: `ptr` with the tensor's use recorded on the stream (what `ours` adds to it
//!   besides building the arguments from the tensor and picking the variant);
//! - `cudarc_raw` (GPU only): `cudarc::driver::result::launch_kernel` of the same PTX entry,
//!   loaded by `cudarc` into the same (primary) context, on a `cudarc` stream;
//! - `graph`: a captured graph of [`GRAPH_KERNELS`] `ours` launches replayed; `ms` per kernel.
//!
//! Every row checks its tensor afterwards: each element must equal the number of launches
//! it made.

use std::time::Instant;
use tessera::launch::{Device, DeviceKind, LaunchError, Module, Stream};
use tessera::tensor::Tensor;
use tessera::tile::launch_config;
use tessera_kernels::tiled::tensors::tensor_add_one;

/// The family name in `triton_ref.py`.
pub const NAME: &str = "launch";
/// Elements of the tensor (`[1024]` in the script).
pub const ELEMENTS: usize = 1024;
/// Launches captured in the graph the `graph` row replays.
pub const GRAPH_KERNELS: usize = 100;

/// Launch counts: untimed warm-up launches, then timed ones.
#[derive(Clone, Copy, Debug)]
pub struct Counts {
    pub warmup: usize,
    pub timed: usize,
}

impl Counts {
    /// The script's counts (200 warm-up, 20000 timed) on a GPU; small ones on the emulator,
    /// where every launch runs the kernel on the host.
    pub fn for_device(device: &Device) -> Counts {
        match device.kind() {
            DeviceKind::Gpu => Counts {
                warmup: 200,
                timed: 20_000,
            },
            DeviceKind::Emulator => Counts {
                warmup: 2,
                timed: 20,
            },
        }
    }
}

/// One row of the benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRow {
    /// `None` for the main row (`ours`), else the extra row's name.
    pub implementation: Option<&'static str>,
    /// Host milliseconds per launch (per kernel for `graph`).
    pub ms: f64,
    pub ok: bool,
    /// Timed launches (kernels for `graph`).
    pub repetitions: usize,
    pub device: String,
    pub checked: String,
}

impl LaunchRow {
    /// The protocol's JSON object (one line): `name`, `shape`, `dtype`, `ms`, `ok`, plus
    /// `impl` for the extra rows, `clock`, `reps`, `device`, `checked`.
    pub fn to_json(&self) -> String {
        let implementation = match self.implementation {
            Some(name) => format!(",\"impl\":\"{name}\""),
            None => String::new(),
        };
        let ms = if self.ms.is_finite() {
            format!("{}", self.ms)
        } else {
            "null".to_string()
        };
        format!(
            "{{\"name\":\"{NAME}\",\"shape\":[{ELEMENTS}],\"dtype\":\"float32\",\"ms\":{ms},\"ok\":{}{implementation},\"clock\":\"host_wall_time\",\"reps\":{},\"device\":{:?},\"checked\":{:?}}}",
            self.ok, self.repetitions, self.device, self.checked
        )
    }

    /// A human-readable line.
    pub fn to_text(&self) -> String {
        format!(
            "{NAME:<9} {:<12} {:>10.2} us per launch  {}  ({}; {} launches; {})",
            self.implementation.unwrap_or("ours"),
            self.ms * 1e3,
            if self.ok { "ok" } else { "WRONG" },
            self.checked,
            self.repetitions,
            self.device
        )
    }
}

/// Rounds each row's timed launches are split into, the rows taking turns round by round, so
/// that no row gains or loses by running first or last (the host's clocks and caches warm up
/// over the first launches); a row's figure is its median round.
pub const ROUNDS: usize = 5;

/// Host milliseconds per call of `launch` over `timed` calls, after `warmup` calls and
/// `synchronize`; synchronised again after the timed loop.
fn host_ms(
    warmup: usize,
    timed: usize,
    launch: &mut dyn FnMut() -> Result<(), LaunchError>,
    synchronize: &dyn Fn() -> Result<(), LaunchError>,
) -> Result<f64, LaunchError> {
    for _ in 0..warmup {
        launch()?;
    }
    synchronize()?;
    let start = Instant::now();
    for _ in 0..timed {
        launch()?;
    }
    let elapsed = start.elapsed();
    synchronize()?;
    Ok(elapsed.as_secs_f64() * 1e3 / timed as f64)
}

/// One row's launch and synchronisation, timed in turns with the others ([`timed_in_turns`]).
struct Timed<'a> {
    launch: Box<dyn FnMut() -> Result<(), LaunchError> + 'a>,
    synchronize: Box<dyn Fn() -> Result<(), LaunchError> + 'a>,
}

/// Per row of `rows`: the median over [`ROUNDS`] rounds of host milliseconds per launch, and
/// the launches it made. Round `r` times every row in turn, `counts.timed / ROUNDS` launches
/// each (at least one), after `counts.warmup` untimed launches in the first round.
fn timed_in_turns(
    counts: Counts,
    rows: &mut [Timed<'_>],
) -> Result<Vec<(f64, usize)>, LaunchError> {
    let per_round = (counts.timed / ROUNDS).max(1);
    let mut rounds = vec![Vec::with_capacity(ROUNDS); rows.len()];
    for round in 0..ROUNDS {
        let warmup = if round == 0 { counts.warmup } else { 0 };
        for (row, times) in rows.iter_mut().zip(&mut rounds) {
            times.push(host_ms(
                warmup,
                per_round,
                &mut row.launch,
                &*row.synchronize,
            )?);
        }
    }
    Ok(rounds
        .into_iter()
        .map(|mut times| {
            times.sort_by(f64::total_cmp);
            (times[ROUNDS / 2], per_round * ROUNDS)
        })
        .collect())
}

/// The row of a tensor that `launches` launches each added 1 to.
fn checked_row(
    device: &Device,
    implementation: Option<&'static str>,
    ms: f64,
    repetitions: usize,
    x: &Tensor<f32>,
    launches: usize,
) -> Result<LaunchRow, LaunchError> {
    let values = x.to_vec()?;
    let expected = launches as f32;
    let wrong = values.iter().position(|&v| v != expected);
    let checked = match wrong {
        None => format!("all {ELEMENTS} elements = {launches} launches"),
        Some(i) => format!("element {i} is {} after {launches} launches", values[i]),
    };
    Ok(LaunchRow {
        implementation,
        ms,
        ok: wrong.is_none(),
        repetitions,
        device: device.name(),
        checked,
    })
}

const CONSTS: tensor_add_one::Consts = tensor_add_one::Consts { BLOCK: 1024 };

/// Every row `device` can run (`cudarc_raw` on a GPU only). The launch rows (`ours`, `ptr`,
/// `ptr_tracked`, `cudarc_raw`) take turns ([`ROUNDS`]); the graph row is timed after them.
pub fn run(
    device: &Device,
    module: &Module,
    counts: Counts,
) -> Result<Vec<LaunchRow>, LaunchError> {
    let stream = device.stream()?;
    let sync = || stream.synchronize();

    // ours: the generated tensor launch.
    let mut ours = Tensor::<f32>::zeros(device, &[ELEMENTS])?;
    // ptr: the same entry resolved once, its arguments as the PTX takes them.
    let mut ptr_x = Tensor::<f32>::zeros(device, &[ELEMENTS])?;
    let (ptr, sizes, strides) = ptr_x.view_mut().kernel_parts::<1>("tensor_add_one", "x")?;
    let args: tensor_add_one::Args = (ptr, sizes[0], strides[0]);
    let spec = tensor_add_one::specialisation(&CONSTS, &args)?;
    let resolved = module.resolve(spec.kernel)?;
    let config = launch_config(spec, [1, 1, 1], module);
    // cudarc_raw: the same PTX entry through cudarc's driver calls.
    #[cfg(feature = "cuda")]
    let mut raw_x = Tensor::<f32>::zeros(device, &[ELEMENTS])?;
    #[cfg(feature = "cuda")]
    let raw = if device.kind() == DeviceKind::Gpu {
        let (ptr, sizes, strides) = raw_x.view_mut().kernel_parts::<1>("tensor_add_one", "x")?;
        let kernel = raw::RawKernel::load(device, &crate::PTX, spec.kernel.name)?;
        Some((kernel, (ptr.addr(), sizes[0], strides[0])))
    } else {
        None
    };

    // ptr_tracked: `ptr` with the tensor's use recorded on the stream, as `ours` records it.
    let mut tracked = Tensor::<f32>::zeros(device, &[ELEMENTS])?;
    let (ptr, sizes, strides) = tracked
        .view_mut()
        .kernel_parts::<1>("tensor_add_one", "x")?;
    let tracked_args: tensor_add_one::Args = (ptr, sizes[0], strides[0]);

    let mut names = vec![None, Some("ptr"), Some("ptr_tracked")];
    let figures = {
        let mut timers = vec![
            Timed {
                launch: Box::new(|| tensor_add_one::launch(&stream, module, CONSTS, 1, &mut ours)),
                synchronize: Box::new(sync),
            },
            Timed {
                launch: Box::new(|| stream.launch_resolved(module, &resolved, config, args, &[])),
                synchronize: Box::new(sync),
            },
            Timed {
                launch: Box::new(|| {
                    let view = tracked.view_mut();
                    let uses = [view.use_write()];
                    stream.launch_resolved(module, &resolved, config, tracked_args, &uses)
                }),
                synchronize: Box::new(sync),
            },
        ];
        #[cfg(feature = "cuda")]
        if let Some((kernel, mut values)) = raw.as_ref().map(|(k, v)| (k, *v)) {
            names.push(Some("cudarc_raw"));
            timers.push(Timed {
                launch: Box::new(move || kernel.launch(&config, &mut values)),
                synchronize: Box::new(|| kernel.synchronize()),
            });
        }
        timed_in_turns(counts, &mut timers)?
    };
    let launched = |timed: usize| counts.warmup + timed;
    let mut rows = Vec::new();
    let tensors: Vec<&Tensor<f32>> = {
        let mut t = vec![&ours, &ptr_x, &tracked];
        #[cfg(feature = "cuda")]
        if raw.is_some() {
            t.push(&raw_x);
        }
        t
    };
    for ((name, (ms, timed)), x) in names.into_iter().zip(figures).zip(tensors) {
        rows.push(checked_row(device, name, ms, timed, x, launched(timed))?);
    }

    // graph: GRAPH_KERNELS tensor launches captured once, replayed.
    let mut x = Tensor::<f32>::zeros(device, &[ELEMENTS])?;
    let graph = capture(&stream, module, &mut x)?;
    let warmup = counts.warmup.div_ceil(GRAPH_KERNELS).max(1);
    let replays = counts.timed.div_ceil(GRAPH_KERNELS).max(1);
    let ms = host_ms(warmup, replays, &mut || graph.launch(&stream), &sync)? / GRAPH_KERNELS as f64;
    let kernels = (warmup + replays) * GRAPH_KERNELS;
    drop(graph);
    rows.push(checked_row(
        device,
        Some("graph"),
        ms,
        replays * GRAPH_KERNELS,
        &x,
        kernels,
    )?);
    Ok(rows)
}

/// A graph of [`GRAPH_KERNELS`] tensor launches on `x`.
fn capture(
    stream: &Stream<'_>,
    module: &Module,
    x: &mut Tensor<f32>,
) -> Result<tessera::launch::Graph, LaunchError> {
    stream.begin_capture()?;
    for _ in 0..GRAPH_KERNELS {
        if let Err(err) = tensor_add_one::launch(stream, module, CONSTS, 1, x) {
            let _ = stream.end_capture();
            return Err(err);
        }
    }
    stream.end_capture()
}

#[cfg(feature = "cuda")]
mod raw {
    //! The `cudarc_raw` row: a PTX entry loaded and launched through `cudarc::driver::result`.

    use cudarc::driver::{result, sys, CudaContext, CudaStream};
    use std::ffi::{c_void, CString};
    use std::sync::Arc;
    use tessera::launch::{Device, LaunchConfig, LaunchError, PtxSet};

    fn error(what: &str, err: impl std::fmt::Display) -> LaunchError {
        LaunchError::GpuUnavailable {
            reason: format!("cudarc: {what}: {err}"),
        }
    }

    pub struct RawKernel {
        _context: Arc<CudaContext>,
        stream: Arc<CudaStream>,
        module: sys::CUmodule,
        function: sys::CUfunction,
    }

    impl RawKernel {
        /// Entry `name` of the member of `set` that `device` runs, loaded by cudarc into GPU
        /// 0's primary context (the one `device` uses), with a new cudarc stream.
        pub fn load(device: &Device, set: &PtxSet, name: &str) -> Result<RawKernel, LaunchError> {
            let (_, ptx) = device.select_ptx(set)?;
            let context = CudaContext::new(0).map_err(|e| error("opening GPU 0", e))?;
            let stream = context
                .new_stream()
                .map_err(|e| error("creating a stream", e))?;
            context.bind_to_thread().map_err(|e| error("binding", e))?;
            let image = CString::new(ptx).map_err(|e| error("the PTX", e))?;
            let entry = CString::new(name).map_err(|e| error("the entry name", e))?;
            // SAFETY: NUL-terminated PTX text; the module is unloaded on drop.
            let module = unsafe { result::module::load_data(image.as_ptr().cast()) }
                .map_err(|e| error("loading the PTX", e))?;
            // SAFETY: a live module and a NUL-terminated name.
            let function = unsafe { result::module::get_function(module, entry) }
                .map_err(|e| error("looking up the entry", e))?;
            Ok(RawKernel {
                _context: context,
                stream,
                module,
                function,
            })
        }

        /// `cuLaunchKernel` of the entry with `(pointer, size, stride)`.
        pub fn launch(
            &self,
            config: &LaunchConfig,
            values: &mut (u64, i32, i32),
        ) -> Result<(), LaunchError> {
            let mut params: [*mut c_void; 3] = [
                (&mut values.0 as *mut u64).cast(),
                (&mut values.1 as *mut i32).cast(),
                (&mut values.2 as *mut i32).cast(),
            ];
            let [gx, gy, gz] = config.grid;
            let [bx, by, bz] = config.block;
            // SAFETY: the entry takes (u64, u32, u32) (the tensor kernel's pointer, size and
            // stride), each parameter points at a value of that size, and the pointer is a live
            // device allocation of `ELEMENTS` f32 that the caller keeps.
            unsafe {
                result::launch_kernel(
                    self.function,
                    (gx, gy, gz),
                    (bx, by, bz),
                    config.shared_bytes,
                    self.stream.cu_stream(),
                    &mut params,
                )
            }
            .map_err(|e| error("launching", e))
        }

        pub fn synchronize(&self) -> Result<(), LaunchError> {
            self.stream
                .synchronize()
                .map_err(|e| error("synchronising", e))
        }
    }

    impl Drop for RawKernel {
        fn drop(&mut self) {
            let _ = self.stream.synchronize();
            // SAFETY: loaded in `load`; no launch of it is pending (synchronised above).
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row the emulator runs, verified, with the protocol's keys.
    #[test]
    fn launch_rows_on_the_emulator() {
        let device = Device::emulator();
        let module = device.load_ptx_set(&crate::PTX).expect("PTX");
        let counts = Counts {
            warmup: 2,
            timed: 5,
        };
        let rows = run(&device, &module, counts).expect("runs");
        let names: Vec<Option<&str>> = rows.iter().map(|r| r.implementation).collect();
        assert_eq!(
            names,
            [None, Some("ptr"), Some("ptr_tracked"), Some("graph")]
        );
        for row in &rows {
            assert!(row.ok, "{}", row.to_text());
            assert!(row.ms > 0.0 && row.ms.is_finite());
        }
        assert_eq!(rows[0].checked, "all 1024 elements = 7 launches");
        // Graph: one warm-up and one timed replay of GRAPH_KERNELS launches.
        assert_eq!(rows[3].checked, "all 1024 elements = 200 launches");
        let json = rows[1].to_json();
        for key in [
            "\"name\":\"launch\"",
            "\"shape\":[1024]",
            "\"dtype\":\"float32\"",
            "\"ok\":true",
            "\"impl\":\"ptr\"",
        ] {
            assert!(json.contains(key), "{json}");
        }
        assert!(!rows[0].to_json().contains("\"impl\""));
    }
}
