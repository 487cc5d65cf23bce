//! Test support: the device every kernel test runs on, with this crate's PTX loaded.
//!
//! [`device`] opens `Device::new()` once per test binary (`TESSERA_DEVICE=gpu|emulator|auto`;
//! auto takes the GPU when one can be used) and loads, of the PTX set that `tessera-kernels-ptx` built and
//! embedded (`tessera::include_ptx!`), the member the device runs best. It says once, on stderr past the test harness's capture, which
//! device runs the tests. So the same tests run on the emulator here and on a GPU.
//!
//! * `#[tile_kernel]` kernels launch with [`launch_tile!`]: the generated `launch` on the device
//!   and the module (`emulate` when the crate was built with `TESSERA_NO_PTX=1`).
//! * Hand-written kernels launch with [`TestDevice::launch`] on [`Buffer`]s: `Device::launch` on
//!   the GPU; on the emulator the launch is checked against the PTX entry in the same way and
//!   then runs with every live [`Buffer`] of the test as its memory map, so that an access outside
//!   the buffers is an emulator error instead of a read or write of the host heap.
//! * Checks only the emulator can make (its shared-memory wavefront counters) go through
//!   [`TestDevice::emulator_only`], which on the GPU returns `None` and prints that the check
//!   was skipped (`skipped on the gpu (not counted as checked): …`), so it is never counted
//!   as checked there.
//!
//! Without the PTX (`TESSERA_NO_PTX=1` at build time) the tests run on the emulator only, and
//! every test that asks for [`device`] fails when the GPU is demanded (`TESSERA_DEVICE=gpu`).
#![allow(dead_code, unused_macros)]

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::Write;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};
use tessera::emulator::{run_grid_in, EmulatorError, EmulatorReport};
use tessera::launch::{
    Device, DeviceBuffer, DeviceKind, KernelArgs, LaunchConfig, LaunchError, LaunchReport, Module,
    PtxSet, DEVICE_ENV,
};
use tessera::{Kernel, Ptr};

use tessera::launch::DeviceElement;

/// This crate's PTX for each target, built by `tessera-kernels-ptx` (empty when built with
/// `TESSERA_NO_PTX`).
pub const PTX: PtxSet = tessera_kernels_ptx::PTX;

/// Why the PTX was not built, when it was not.
const PTX_SKIPPED: Option<&str> = tessera_kernels_ptx::PTX_SKIPPED;

/// Bound of tensor-core float sums on the GPU, relative to the sum of the terms' magnitudes:
/// tensor cores align the products to the largest one and truncate, about one unit in the last
/// place of the largest term per term (the emulator rounds the exact sum once). A wrong element
/// or fragment changes a result by a whole term, thousands of times this bound.
pub const MMA_RELATIVE_BOUND: f64 = 1.0 / (1u64 << 18) as f64;

/// Environment variable: `0` keeps the emulator-sized shapes on the GPU too (for slow runs,
/// e.g. under `compute-sanitizer --tool racecheck`); otherwise the GPU also runs larger ones.
pub const LARGE_ENV: &str = "TESSERA_TEST_LARGE";

/// The device the tests run on and the kernels' PTX module loaded on it.
pub struct TestDevice {
    device: Device,
    /// Whether the tests add their larger shapes (GPU only, unless `TESSERA_TEST_LARGE=0`).
    larger_shapes: bool,
    /// `None` only when the crate was built without its PTX (then the device is the emulator).
    module: Option<Module>,
    /// Emulator-only checks already reported as skipped on the GPU.
    skipped: Mutex<BTreeSet<String>>,
}

static TEST_DEVICE: OnceLock<TestDevice> = OnceLock::new();

/// The device of this test binary (opened, and the PTX loaded, by the first test that asks).
/// Panics (failing the test) when the device cannot be opened or the PTX cannot be loaded.
pub fn device() -> &'static TestDevice {
    TEST_DEVICE.get_or_init(open)
}

/// The test device and the module kernels launch from on a stream: the device's PTX module, or
/// in a build without PTX the emulator's module of the host builds (loaded once).
pub fn device_and_module() -> (&'static Device, &'static Module) {
    static HOST: OnceLock<Module> = OnceLock::new();
    let gpu = device();
    let module = gpu.module().unwrap_or_else(|| {
        HOST.get_or_init(|| {
            gpu.device()
                .host_module()
                .expect("the emulator's host module")
        })
    });
    (gpu.device(), module)
}

/// Writes a line to the real stderr (the test harness captures only `print!`/`eprint!`), so it
/// shows in the output of a passing run.
pub fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

fn open() -> TestDevice {
    let setting = std::env::var(DEVICE_ENV).unwrap_or_default();
    let missing = match PTX_SKIPPED {
        Some(reason) => Some(format!("the crate was built with {reason}")),
        None if PTX.is_empty() => Some("tessera-kernels-ptx holds an empty PTX set".to_string()),
        None => None,
    };
    let demanded = matches!(setting.trim().to_ascii_lowercase().as_str(), "gpu" | "cuda");
    if let (Some(reason), true) = (&missing, demanded) {
        panic!(
            "{DEVICE_ENV}={setting} asks for the GPU, but this test binary has no PTX \
             ({reason}); rebuild without TESSERA_NO_PTX"
        );
    }
    let device = Device::new().unwrap_or_else(|err| panic!("opening the test device: {err}"));
    let (device, module) = match missing {
        None => {
            let module = device.load_ptx_set(&PTX).unwrap_or_else(|err| {
                panic!("loading the kernels' PTX on {}: {err}", device.name())
            });
            (device, Some(module))
        }
        Some(reason) => {
            if device.kind() == DeviceKind::Gpu {
                say(&format!(
                    "tessera-kernels tests: a GPU is present but there is no PTX ({reason}); \
                     using the emulator"
                ));
                (Device::emulator(), None)
            } else {
                (device, None)
            }
        }
    };
    let ptx = match &module {
        Some(module) => format!(
            "PTX {} ({} entries)",
            module.selection().unwrap_or("?"),
            module.entries().len()
        ),
        None => "no PTX: launches use the host builds directly".to_string(),
    };
    let what = match device.compute_capability() {
        Some((major, minor)) => {
            format!("GPU {} (compute capability {major}.{minor})", device.name())
        }
        None => device.name(),
    };
    let larger_shapes = device.kind() == DeviceKind::Gpu
        && std::env::var(LARGE_ENV).map_or(true, |value| value.trim() != "0");
    let shapes = if larger_shapes {
        "larger shapes too"
    } else {
        "emulator-sized shapes only"
    };
    say(&format!(
        "tessera-kernels tests run on: {what}; {ptx}; {shapes}; {}",
        device.selection_note()
    ));
    TestDevice {
        device,
        larger_shapes,
        module,
        skipped: Mutex::new(BTreeSet::new()),
    }
}

/// The `.target` of the loaded PTX (`sm_80`, …).
pub fn ptx_target() -> Option<&'static str> {
    device().module()?.target_name()
}

impl TestDevice {
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The PTX module (`None` only in a build without PTX, on the emulator).
    pub fn module(&self) -> Option<&Module> {
        self.module.as_ref()
    }

    pub fn is_gpu(&self) -> bool {
        self.device.kind() == DeviceKind::Gpu
    }

    /// Whether to add the larger shapes: on the GPU, unless `TESSERA_TEST_LARGE=0`.
    pub fn larger_shapes(&self) -> bool {
        self.larger_shapes
    }

    /// The cases a test runs on this device: `base`, and `larger` after them where
    /// [`larger_shapes`](Self::larger_shapes) says so.
    pub fn cases<T: Copy>(&self, base: &[T], larger: &[T]) -> Vec<T> {
        let mut cases = base.to_vec();
        if self.larger_shapes {
            cases.extend_from_slice(larger);
        }
        cases
    }

    /// Whether the module has an entry named `name` (`None` without a module).
    pub fn has_entry(&self, name: &str) -> Option<bool> {
        self.module
            .as_ref()
            .map(|module| module.entries().iter().any(|entry| entry.name == name))
    }

    /// The emulator's counters of a launch, for a check only the emulator can make (`what`).
    /// On the GPU: `None`, and (once per `what`) a line saying that the check was skipped.
    pub fn emulator_only<'r>(
        &self,
        report: &'r LaunchReport,
        what: &str,
    ) -> Option<&'r EmulatorReport> {
        let emulated = report.emulator_report();
        if emulated.is_none() {
            self.skip(&format!("emulator-only check: {what}"));
        }
        emulated
    }

    /// Reports (once per `what`) that a check was skipped on this device: one line
    /// `skipped on the <device> (not counted as checked): <what>` on stderr.
    pub fn skip(&self, what: &str) {
        let first = self
            .skipped
            .lock()
            .map(|mut seen| seen.insert(what.to_string()))
            .unwrap_or(true);
        if first {
            say(&format!(
                "skipped on the {} (not counted as checked): {what}",
                self.device.kind()
            ));
        }
    }

    /// Extra tolerance of an f16/bf16 tensor-core sum whose terms' magnitudes add up to
    /// `magnitude`: 0 on the emulator (exact sum, one rounding), [`MMA_RELATIVE_BOUND`] of it
    /// on the GPU.
    pub fn mma_slack(&self, magnitude: f64) -> f64 {
        if self.is_gpu() {
            MMA_RELATIVE_BOUND * magnitude
        } else {
            0.0
        }
    }

    /// Launches a hand-written kernel (see the [module docs](self)). On the emulator the
    /// launch is checked against its PTX entry (name, parameter sizes), as `Device::launch`
    /// does, and runs in the memory map of the live [`Buffer`]s of this thread, emulating the
    /// device's target.
    pub fn launch<A: KernelArgs>(
        &self,
        kernel: Kernel<A>,
        config: LaunchConfig,
        args: A,
    ) -> Result<LaunchReport, LaunchError> {
        if self.is_gpu() {
            let module = self
                .module
                .as_ref()
                .expect("a GPU test device has a module");
            return self.device.launch(module, kernel, config, args);
        }
        if let Some(module) = &self.module {
            module.check_args(kernel.name, &args.kernel_params())?;
        }
        // The target the device's launches emulate (amdgpu for `TESSERA_DEVICE=emulator-amd`).
        let target = self
            .device
            .emulated_target()
            .transpose()
            .map_err(|err| LaunchError::Emulator {
                kernel: kernel.name.to_string(),
                message: err.to_string(),
            })?
            .unwrap_or_default();
        tessera::emulator::with_target(target, || run_in_buffers(kernel, config, args))
            .map(LaunchReport::Emulator)
            .map_err(|err| LaunchError::Emulator {
                kernel: kernel.name.to_string(),
                message: err.to_string(),
            })
    }
}

/// `launch_tile!(gpu, kernel_module, [consts,] grid, args…)`: the generated
/// `kernel_module::launch(device, module, …)` on the test device, or `emulate(…)` when the crate
/// was built without PTX. Gives `Result<LaunchReport, LaunchError>`.
macro_rules! launch_tile {
    ($gpu:expr, $kernel:ident, $($arg:expr),+ $(,)?) => {{
        let gpu: &$crate::support::TestDevice = $gpu;
        match gpu.module() {
            Some(module) => $kernel::launch(gpu.device(), module, $($arg),+),
            None => $kernel::emulate($($arg),+).map(::tessera::launch::LaunchReport::Emulator),
        }
    }};
}
#[allow(unused_imports)] // Not every test binary has #[tile_kernel] kernels.
pub(crate) use launch_tile;

/// `launch_over!(gpu, kernel_module, BLOCK = block, n, args…)`: [`launch_tile!`] of a kernel
/// whose one const parameter `BLOCK` is the elements per program, at `BLOCK = block`, over a 1-D
/// grid of `ceil(n / BLOCK)` programs (`@with launch_tensors, …`: through [`launch_tensors!`]).
macro_rules! launch_over {
    (@with $launch:ident, $gpu:expr, $kernel:ident, BLOCK = $block:expr, $n:expr, $($arg:expr),+ $(,)?) => {{
        let n: usize = $n;
        $crate::support::$launch!(
            $gpu,
            $kernel,
            $kernel::Consts { BLOCK: $block },
            |c: &$kernel::Consts| (n.div_ceil(c.BLOCK) as u32,),
            $($arg),+
        )
    }};
    ($($args:tt)*) => {
        $crate::support::launch_over!(@with launch_tile, $($args)*)
    };
}
#[allow(unused_imports)] // Not every test binary has #[tile_kernel] kernels.
pub(crate) use launch_over;

/// `launch_tensors!(gpu, kernel_module, consts, grid, tensors…)` (or `grid = grid` for a kernel
/// without const parameters): the generated `kernel_module::launch` of a kernel with `Tensor`
/// parameters on a new stream of the test device, synchronised. Gives `Result<LaunchReport,
/// LaunchError>`: on the emulator the stream's counters of the launch
/// ([`Stream::take_emulator_report`]).
///
/// [`Stream::take_emulator_report`]: tessera::launch::Stream::take_emulator_report
macro_rules! launch_tensors {
    (@on $gpu:expr, $kernel:ident, ($($launch:expr),+)) => {{
        let _: &$crate::support::TestDevice = $gpu;
        let (device, module) = $crate::support::device_and_module();
        (|| -> ::core::result::Result<::tessera::launch::LaunchReport, ::tessera::launch::LaunchError> {
            let stream = device.stream()?;
            $kernel::launch(&stream, module, $($launch),+)?;
            stream.synchronize()?;
            Ok(stream
                .take_emulator_report()
                .map_or(::tessera::launch::LaunchReport::Gpu, ::tessera::launch::LaunchReport::Emulator))
        })()
    }};
    // A kernel without const parameters: its `launch` takes no `Consts`.
    ($gpu:expr, $kernel:ident, grid = $grid:expr, $($arg:expr),+ $(,)?) => {
        $crate::support::launch_tensors!(@on $gpu, $kernel, ($grid, $($arg),+))
    };
    ($gpu:expr, $kernel:ident, $consts:expr, $grid:expr, $($arg:expr),+ $(,)?) => {
        $crate::support::launch_tensors!(@on $gpu, $kernel, ($consts, $grid, $($arg),+))
    };
}
#[allow(unused_imports)] // Not every test binary has kernels with tensor parameters.
pub(crate) use launch_tensors;

/// `launch_tensors_over!(gpu, kernel_module, BLOCK = block, n, tensors…)`: [`launch_over!`]
/// through [`launch_tensors!`].
macro_rules! launch_tensors_over {
    ($($args:tt)*) => {
        $crate::support::launch_over!(@with launch_tensors, $($args)*)
    };
}
#[allow(unused_imports)] // Not every test binary has kernels with tensor parameters.
pub(crate) use launch_tensors_over;

thread_local! {
    /// Byte ranges of the [`Buffer`]s alive on this (test) thread.
    static LIVE_BUFFERS: RefCell<Vec<Range<u64>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `kernel` on the emulator with the live [`Buffer`]s of this thread as global memory
/// (the raw emulator result, for tests of the emulator's own diagnostics).
pub fn run_in_buffers<A: KernelArgs>(
    kernel: Kernel<A>,
    config: LaunchConfig,
    args: A,
) -> Result<EmulatorReport, EmulatorError> {
    let memory = LIVE_BUFFERS.with(|b| b.borrow().clone());
    run_grid_in(
        config.grid,
        config.block,
        config.shared_bytes as usize,
        &memory,
        &|| (kernel.emulate)(args),
    )
}

/// A device buffer of 32-bit words (256-byte aligned, as `cuMemAlloc` gives), registered in the
/// emulator memory map of its thread while it lives.
pub struct Buffer {
    words: DeviceBuffer<u32>,
}

impl Buffer {
    pub fn from_u32(device: &Device, words: &[u32]) -> Self {
        let words = device
            .upload(words)
            .unwrap_or_else(|err| panic!("uploading {} words: {err}", words.len()));
        let start = words.ptr().addr();
        if start != 0 {
            LIVE_BUFFERS.with(|b| {
                b.borrow_mut()
                    .push(start..start + words.size_bytes() as u64)
            });
        }
        Buffer { words }
    }
    pub fn from_f32(device: &Device, v: &[f32]) -> Self {
        Self::from_u32(device, &v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
    }
    pub fn from_i32(device: &Device, v: &[i32]) -> Self {
        Self::from_u32(device, &v.iter().map(|&x| x as u32).collect::<Vec<_>>())
    }
    /// `len` words of a sentinel value, so that writes past the end are detectable.
    pub fn filled(device: &Device, len: usize, word: u32) -> Self {
        Self::from_u32(device, &vec![word; len])
    }
    pub fn ptr<T>(&self) -> Ptr<T> {
        self.words.ptr().cast()
    }
    pub fn to_u32(&self) -> Vec<u32> {
        self.words
            .download()
            .unwrap_or_else(|err| panic!("downloading {} words: {err}", self.words.len()))
    }
    pub fn to_f32(&self) -> Vec<f32> {
        self.to_u32().into_iter().map(f32::from_bits).collect()
    }
    pub fn to_i32(&self) -> Vec<i32> {
        self.to_u32().into_iter().map(|w| w as i32).collect()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let start = self.words.ptr().addr();
        LIVE_BUFFERS.with(|b| b.borrow_mut().retain(|r| r.start != start));
    }
}

/// The contents of a device buffer (panics, failing the test, naming its length when the
/// download fails).
pub fn download<T: DeviceElement>(buffer: &DeviceBuffer<T>) -> Vec<T> {
    buffer
        .download()
        .unwrap_or_else(|err| panic!("downloading {} elements: {err}", buffer.len()))
}

/// Guard elements past a [`Guarded`] output.
pub const GUARD: usize = 8;

/// An output of `len` elements with [`GUARD`] elements past it, all filled with `fill`: a kernel
/// writes the first `len`, and the guard elements must still hold `fill` afterwards.
pub struct Guarded<T: DeviceElement> {
    buffer: DeviceBuffer<T>,
    len: usize,
    fill: T,
}

impl<T: DeviceElement> Guarded<T> {
    pub fn new(gpu: &TestDevice, len: usize, fill: T) -> Self {
        let buffer = gpu
            .device()
            .upload(&vec![fill; len + GUARD])
            .unwrap_or_else(|err| panic!("uploading {} elements: {err}", len + GUARD));
        Guarded { buffer, len, fill }
    }

    pub fn ptr(&self) -> Ptr<T> {
        self.buffer.ptr()
    }

    /// The `len` outputs, after asserting that the guard elements still hold `fill`
    /// (`"{what}: wrote past the end"` otherwise).
    pub fn outputs(&self, what: &str) -> Vec<T> {
        let all = self.buffer.download();
        without_guards(all, self.len, self.fill, what)
    }
}

/// The first `len` of `all` (a download), after asserting that the elements past them still
/// hold `fill`.
fn without_guards<T: DeviceElement, E: std::fmt::Display>(
    all: Result<Vec<T>, E>,
    len: usize,
    fill: T,
    what: &str,
) -> Vec<T> {
    let mut all = all.unwrap_or_else(|err| panic!("{what}: downloading the output: {err}"));
    assert!(
        all[len..].iter().all(|&v| v == fill),
        "{what}: wrote past the end"
    );
    all.truncate(len);
    all
}

/// [`Guarded`] as a tensor: an output tensor of `sizes` (row-major, [`view`](Self::view)) with
/// [`GUARD`] elements past it, all filled with `fill`.
#[allow(dead_code)] // Not every test binary has kernels with tensor parameters.
pub struct GuardedTensor<T: DeviceElement> {
    stored: tessera::tensor::Tensor<T>,
    sizes: Vec<usize>,
    fill: T,
}

#[allow(dead_code)] // Not every test binary has kernels with tensor parameters.
impl<T: DeviceElement> GuardedTensor<T> {
    pub fn new(gpu: &TestDevice, sizes: &[usize], fill: T) -> Self {
        let len = sizes.iter().product::<usize>() + GUARD;
        let stored = tessera::tensor::Tensor::from_slice(gpu.device(), &vec![fill; len], &[len])
            .unwrap_or_else(|err| panic!("uploading {len} elements: {err}"));
        let sizes = sizes.to_vec();
        GuardedTensor {
            stored,
            sizes,
            fill,
        }
    }

    /// The output tensor (the elements before the guards).
    pub fn view(&mut self) -> tessera::tensor::TensorMut<'_, T> {
        leading_view(&mut self.stored, &self.sizes)
    }

    /// The outputs (row-major), after asserting that the guard elements still hold `fill`.
    pub fn outputs(&self, what: &str) -> Vec<T> {
        let len = self.sizes.iter().product();
        without_guards(self.stored.to_vec(), len, self.fill, what)
    }
}

#[allow(unused_imports)] // Not every test binary draws random data.
pub use tessera_test_support::Rng;

/// `out = 2 · x + y` over `n` elements of `T`, the case of the axpy kernels (`tile_axpy`,
/// `tuned_axpy`): `x` and `y` uniform in [-1, 1) from the seeded test RNG, rounded to `T` and
/// uploaded, and `want` computed on the CPU (exact: the product by two is exact, so a kernel and
/// the reference round the same sum to `T`).
pub struct Axpy<T: Float> {
    pub n: usize,
    pub want: Vec<T>,
    x: DeviceBuffer<T>,
    y: DeviceBuffer<T>,
}

impl<T: Float> Axpy<T> {
    /// The factor of `x`.
    pub const ALPHA: f32 = 2.0;

    /// The case of `n` elements, `x` drawn from `x_seed` and `y` from `y_seed`.
    pub fn new(device: &Device, [x_seed, y_seed]: [u64; 2], n: usize) -> Self {
        let x = draws(x_seed, n, |rng| T::from_f32(rng.next_f32()));
        let y = draws(y_seed, n, |rng| T::from_f32(rng.next_f32()));
        let want = x
            .iter()
            .zip(&y)
            .map(|(x, y)| T::from_f32(Self::ALPHA * x.to_f32() + y.to_f32()))
            .collect();
        let upload = |v: &[T]| {
            device
                .upload(v)
                .unwrap_or_else(|err| panic!("uploading {n} elements: {err}"))
        };
        Axpy {
            n,
            want,
            x: upload(&x),
            y: upload(&y),
        }
    }

    /// `launch(x, y, out, alpha, n)`: a launch of an axpy kernel with this case's arguments and
    /// `out` as its output (panics, failing the test, when the launch fails).
    pub fn launch<R>(
        &self,
        out: Ptr<T>,
        launch: impl FnOnce(Ptr<T>, Ptr<T>, Ptr<T>, f32, i32) -> Result<R, LaunchError>,
    ) -> R {
        launch(self.x.ptr(), self.y.ptr(), out, Self::ALPHA, self.n as i32)
            .unwrap_or_else(|err| panic!("launching axpy over {} elements: {err}", self.n))
    }
}

/// The first `shape.iter().product()` elements of the 1-D tensor `stored` as a tensor of
/// `shape` (an output view whose elements past it are guards that must stay untouched).
#[allow(dead_code)] // Not every test binary has kernels with tensor parameters.
pub fn leading_view<'a, T: DeviceElement>(
    stored: &'a mut tessera::tensor::Tensor<T>,
    shape: &[usize],
) -> tessera::tensor::TensorMut<'a, T> {
    let len = shape.iter().product();
    stored
        .view_mut()
        .slice(0, 0..len)
        .and_then(|v| v.reshape(shape))
        .unwrap_or_else(|err| panic!("a {shape:?} view of the first {len} elements: {err}"))
}

/// Each launch failed with a message containing its `wanted` text (a requirement the arguments
/// break, typically).
#[allow(dead_code)] // Not every test binary checks refusals.
pub fn assert_refused<const N: usize>(
    launches: [Result<LaunchReport, LaunchError>; N],
    wanted: [&str; N],
) {
    for (launch, want) in launches.into_iter().zip(wanted) {
        let message = launch.expect_err(want).to_string();
        assert!(message.contains(want), "{message}");
    }
}

/// `n` values `draw(rng)` of the seeded test RNG started at `seed`.
pub fn draws<T>(seed: u64, n: usize, mut draw: impl FnMut(&mut Rng) -> T) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| draw(&mut rng)).collect()
}

/// A float element type of the kernels (f16, bf16 or f32): its conversions from and to f32 on
/// the CPU, and its unit roundoff (the relative error bound of one rounding to it).
pub trait Float: DeviceElement + Copy + PartialEq + std::fmt::Debug {
    const UNIT_ROUNDOFF: f64;
    fn from_f32(v: f32) -> Self;
    fn to_f32(self) -> f32;
    fn to_f64(self) -> f64 {
        self.to_f32() as f64
    }
}

/// `impl Float` for a narrow float type of `tessera` (its inherent conversions) with its unit
/// roundoff.
macro_rules! narrow_float {
    ($($t:ident: $unit_roundoff:expr),*) => {$(
        impl Float for tessera::$t {
            const UNIT_ROUNDOFF: f64 = $unit_roundoff;
            fn from_f32(v: f32) -> Self {
                tessera::$t::from_f32(v)
            }
            fn to_f32(self) -> f32 {
                tessera::$t::to_f32(self)
            }
        }
    )*};
}

narrow_float!(f16: 1.0 / 2048.0, bf16: 1.0 / 256.0, f8e4m3: 1.0 / 16.0, f8e5m2: 1.0 / 8.0);

impl Float for f32 {
    const UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;
    fn from_f32(v: f32) -> Self {
        v
    }
    fn to_f32(self) -> f32 {
        self
    }
}
