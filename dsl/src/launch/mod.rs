//! Host launcher: one typed API over the GPU (CUDA driver API through `cudarc`, behind the `cuda`
//! feature; AMD GPUs through the HIP runtime, behind the `hip` feature and not yet run on AMD
//! hardware) and the CPU [emulator](crate::emulator), chosen at run time.
//!
//! ```no_run
//! use tessera::launch::{Device, LaunchConfig};
//! # fn demo(ptx: &str, kernel: tessera::Kernel<(tessera::Ptr<f32>, u32)>) -> Result<(), tessera::launch::LaunchError> {
//! let device = Device::new()?; // GPU if present (and the `cuda` feature is on), else the emulator
//! let module = device.load_ptx(ptx)?; // or `device.load_ptx_set(&set)?` for a `PtxSet`
//! let data = device.upload(&[1.0f32, 2.0, 3.0])?;
//! let report = device.launch(&module, kernel, LaunchConfig::linear(1, 32), (data.ptr(), 3))?;
//! if let Some(emulated) = report.emulator_report() {
//!     println!("{} shared wavefronts", emulated.shared_wavefronts);
//! }
//! let result: Vec<f32> = data.download()?;
//! # Ok(()) }
//! ```
//!
//! Device choice ([`Device::new`]): `TESSERA_DEVICE=gpu` (or `cuda`) demands the CUDA GPU,
//! `TESSERA_DEVICE=hip` (or `rocm`) an AMD GPU through HIP (an error says why it cannot be
//! used), `TESSERA_DEVICE=emulator` the emulator, `TESSERA_DEVICE=emulator-amd` the emulator
//! running each kernel's amdgpu code (see [`crate::emulator::EmulatedTarget`]: the AMD plans,
//! NVIDIA-only kernels refused); unset or `auto` takes the CUDA GPU when the
//! `cuda` feature is on and a driver (`libcuda`, loaded at run time) and a device are present,
//! else a HIP GPU when the `hip` feature is on and the runtime (`libamdhip64`, loaded at run
//! time) sees a device, else the emulator ([`Device::selection_note`] says why not each GPU).
//!
//! A CUDA GPU loads PTX, a HIP GPU AMD code objects ([`Device::load_code_object`]), the emulator
//! either (for its kernels' names and parameter sizes); [`Device::load_code`] loads what the
//! device runs from a kernel crate's [`DeviceCode`].
//!
//! Every launch is checked before it runs, on every back end: the kernel must be an entry of
//! the module (a PTX `.entry`, or a kernel of the code object's metadata), the argument tuple
//! must match the entry's parameter sizes, every `Ptr` argument
//! must be null or point into a live buffer of this device, and the grid/block/shared-memory
//! configuration must be launchable.

mod args;
pub mod autotune;
#[cfg(any(feature = "cuda", feature = "hip"))]
mod backend;
mod code;
pub mod code_object;
mod config;
mod element;
mod emulated;
pub(crate) use emulated::launch as emulate;
mod error;
#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
mod gpu_stream;
#[cfg(feature = "hip")]
mod hip;
#[cfg(feature = "hip")]
mod hip_sys;
mod kind;
mod memory;
pub mod ptx;
mod resolved;
mod stream;
mod tensor_maps;

pub use args::{KernelArg, KernelArgs, KernelParam, KernelParams, MAX_KERNEL_PARAMS};
pub use autotune::Autotuner;
#[cfg(any(feature = "cuda", feature = "hip"))]
use backend::DeviceContext;
pub use config::{LaunchConfig, LaunchReport, Timing, TimingClock, TimingOptions};
pub use element::DeviceElement;
pub use error::LaunchError;
pub use kind::{DeviceKind, GpuRuntime, DEVICE_ENV};
pub use memory::Allocation;
use memory::{HostBytes, Memory};
pub use resolved::{EntryCache, ResolvedKernel};
pub use stream::{Event, Graph, Stream, TensorUse};

pub use crate::build::{CodeObjectSet, DeviceCode, PtxSet, Sm};

use crate::emulator::EmulatedTarget;
use crate::{Kernel, Ptr};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Live allocations of one device: start address → size in bytes.
#[derive(Debug, Default)]
struct Registry {
    live: Mutex<BTreeMap<u64, u64>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, u64>> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts and
        // removes), so a poisoned lock is still usable.
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn insert(&self, start: u64, bytes: u64) {
        self.lock().insert(start, bytes);
    }

    fn remove(&self, start: u64) {
        self.lock().remove(&start);
    }

    /// Whether `addr` lies in a live allocation ([`memory::within`]).
    fn contains(&self, addr: u64) -> bool {
        let live = self.lock();
        live.range(..=addr)
            .next_back()
            .is_some_and(|(&start, &bytes)| memory::within(start, bytes, addr))
    }
}

static NEXT_DEVICE_ID: AtomicU64 = AtomicU64::new(1);
static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

enum Backend {
    Emulator,
    #[cfg(feature = "cuda")]
    Gpu(Arc<gpu::GpuContext>),
    #[cfg(feature = "hip")]
    Hip(Arc<hip::HipContext>),
}

/// A device kernels run on: a GPU or the CPU emulator. See the [module docs](self).
pub struct Device {
    id: u64,
    backend: Backend,
    /// The target the emulator's launches emulate unless told otherwise (`emulator-amd`:
    /// amdgpu); `None` for the plain emulator and for GPUs.
    emulated: Option<EmulatedTarget>,
    registry: Arc<Registry>,
    selection_note: String,
    tensor_maps: tensor_maps::TensorMapCache,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("kind", &self.kind())
            .field("name", &self.name())
            .field("selection_note", &self.selection_note)
            .finish()
    }
}

impl Device {
    /// The device `TESSERA_DEVICE` asks for: `gpu` (or `cuda`) CUDA GPU 0, `hip` (or `rocm`)
    /// HIP GPU 0, `emulator`, `emulator-amd` (the emulator, its launches emulating an AMD GPU:
    /// [`EmulatedTarget::Amdgpu`]), or `auto`/unset: a
    /// CUDA GPU when one can be used, else a HIP GPU, else the emulator. A GPU asked for by name
    /// that cannot be used is an error saying why.
    pub fn new() -> Result<Device, LaunchError> {
        let setting = std::env::var(DEVICE_ENV).unwrap_or_default();
        Device::from_setting(&setting)
    }

    /// [`Device::new`] with the setting given instead of read from the environment.
    pub fn from_setting(setting: &str) -> Result<Device, LaunchError> {
        match setting.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Device::auto()),
            "gpu" | "cuda" => {
                Device::gpu(0).map_err(|err| code::demanded(setting, "the CUDA GPU", err))
            }
            "hip" | "rocm" => {
                Device::hip(0).map_err(|err| code::demanded(setting, "a HIP GPU", err))
            }
            "emulator" | "emu" | "cpu" => Ok(Device::emulator_with_note(
                format!("{DEVICE_ENV}={setting}"),
                None,
            )),
            "emulator-amd" | "emulator-amdgpu" => Ok(Device::emulator_with_note(
                format!("{DEVICE_ENV}={setting}: the emulator running each kernel's AMD code"),
                Some(EmulatedTarget::Amdgpu),
            )),
            _ => Err(LaunchError::BadDeviceSetting {
                value: setting.to_string(),
            }),
        }
    }

    /// `auto`: CUDA GPU 0, else HIP GPU 0, else the emulator, whose
    /// [`selection_note`](Device::selection_note) says why each GPU could not be used.
    fn auto() -> Device {
        let cuda = match Device::gpu(0) {
            Ok(device) => return device,
            Err(err) => err,
        };
        let hip = match Device::hip(0) {
            Ok(device) => return device,
            Err(err) => err,
        };
        Device::emulator_with_note(
            format!("auto: CUDA: {cuda}; HIP: {hip}; using the emulator"),
            None,
        )
    }

    /// The CPU emulator.
    pub fn emulator() -> Device {
        Device::emulator_with_note("Device::emulator()".to_string(), None)
    }

    /// The CPU emulator running each kernel's AMD code: its launches emulate
    /// [`EmulatedTarget::Amdgpu`] (unless `emulator::with_target` says otherwise around a
    /// launch). `TESSERA_DEVICE=emulator-amd` chooses it.
    pub fn emulator_amd() -> Device {
        Device::emulator_with_note(
            "Device::emulator_amd()".to_string(),
            Some(EmulatedTarget::Amdgpu),
        )
    }

    /// The emulator, its launches emulating `emulated` by default (`None`: sm_80).
    fn emulator_with_note(selection_note: String, emulated: Option<EmulatedTarget>) -> Device {
        Device {
            id: NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed),
            backend: Backend::Emulator,
            registry: Arc::default(),
            selection_note,
            tensor_maps: Default::default(),
            emulated,
        }
    }

    /// The target a launch from this thread on this device emulates: `None` on a GPU; on the
    /// emulator `emulator::with_target`'s around the launch, else `TESSERA_EMULATE_SM`, else
    /// amdgpu for [`Device::emulator_amd`], else sm_80 (`crate::emulator::EmulatedTarget`).
    pub fn emulated_target(
        &self,
    ) -> Option<Result<EmulatedTarget, crate::emulator::EmulatorError>> {
        (self.kind() == DeviceKind::Emulator)
            .then(|| crate::emulator::launch_target_for(self.emulated))
    }

    /// CUDA GPU number `ordinal` (CUDA numbering, after `CUDA_VISIBLE_DEVICES`); an AMD GPU is
    /// [`Device::hip`].
    pub fn gpu(ordinal: usize) -> Result<Device, LaunchError> {
        #[cfg(feature = "cuda")]
        {
            let context = gpu::GpuContext::open(ordinal)?;
            let selection_note = format!("auto or {DEVICE_ENV}=gpu: GPU {ordinal} found");
            Ok(Device {
                id: NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed),
                backend: Backend::Gpu(context),
                registry: Arc::default(),
                selection_note,
                tensor_maps: Default::default(),
                emulated: None,
            })
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = ordinal;
            Err(LaunchError::GpuUnavailable {
                reason: "this program was built without tessera's `cuda` feature".to_string(),
            })
        }
    }

    /// A user's `cudarc` context as a device: launches, tensors and streams of this device use
    /// that context (which stays owned by `cudarc`).
    #[cfg(feature = "cuda")]
    pub fn from_cudarc(context: &Arc<cudarc::driver::CudaContext>) -> Result<Device, LaunchError> {
        let context = gpu::GpuContext::from_cudarc(context)?;
        Ok(Device {
            id: NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed),
            backend: Backend::Gpu(context),
            registry: Arc::default(),
            selection_note: "Device::from_cudarc".to_string(),
            tensor_maps: Default::default(),
            emulated: None,
        })
    }

    /// The emulator's module of the host builds: launches through it are not checked against
    /// PTX entries (there are none), only run. An error on a GPU, which needs the PTX.
    pub fn host_module(&self) -> Result<Module, LaunchError> {
        match self.backend {
            Backend::Emulator => Ok(Module {
                id: NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed),
                device_id: self.id,
                entries: Vec::new(),
                target: None,
                target_name: None,
                selection: Some("the host builds (no PTX)".to_string()),
                host_only: true,
                code_object: false,
                backend: ModuleBackend::Emulator,
                emulated: self.emulated,
            }),
            #[cfg(feature = "cuda")]
            Backend::Gpu(_) => Err(LaunchError::WrongDevice {
                what: "the host-build module (emulator only; load the PTX)".to_string(),
            }),
            #[cfg(feature = "hip")]
            Backend::Hip(_) => Err(LaunchError::WrongDevice {
                what: "the host-build module (emulator only; load the code object)".to_string(),
            }),
        }
    }

    /// GPU or emulator.
    pub fn kind(&self) -> DeviceKind {
        match self.backend {
            Backend::Emulator => DeviceKind::Emulator,
            #[cfg(feature = "cuda")]
            Backend::Gpu(_) => DeviceKind::Gpu,
            #[cfg(feature = "hip")]
            Backend::Hip(_) => DeviceKind::Gpu,
        }
    }

    /// The device's name: the GPU's marketing name, or `Tessera CPU emulator`.
    pub fn name(&self) -> String {
        match &self.backend {
            Backend::Emulator => "Tessera CPU emulator".to_string(),
            #[cfg(feature = "cuda")]
            Backend::Gpu(context) => context.name.clone(),
            #[cfg(feature = "hip")]
            Backend::Hip(context) => context.name.clone(),
        }
    }

    /// Why this device was chosen (and, for the emulator chosen automatically, why not a GPU).
    pub fn selection_note(&self) -> &str {
        &self.selection_note
    }

    /// The CUDA GPU's compute capability `(major, minor)`; `None` on the emulator and on a HIP
    /// GPU.
    pub fn compute_capability(&self) -> Option<(u32, u32)> {
        match &self.backend {
            #[cfg(feature = "cuda")]
            Backend::Gpu(context) => Some(context.compute_capability),
            _ => None,
        }
    }

    /// Loads a PTX module. On the GPU the driver JIT-compiles it for the device (its error log
    /// is in the error); on the emulator only its entry names and parameter sizes are kept, to
    /// check launches against.
    pub fn load_ptx(&self, ptx: &str) -> Result<Module, LaunchError> {
        let entries =
            ptx::parse_entries(ptx).map_err(|err| LaunchError::PtxMalformed { reason: err.0 })?;
        let target = ptx::target_arch(ptx);
        let backend = match &self.backend {
            Backend::Emulator => ModuleBackend::Emulator,
            #[cfg(feature = "cuda")]
            Backend::Gpu(context) => {
                if let Some((major, minor, specific)) = target {
                    let device = context.compute_capability;
                    let runs = if specific {
                        (major, minor) == device
                    } else {
                        (major, minor) <= device
                    };
                    if !runs {
                        return Err(LaunchError::PtxArchitecture {
                            ptx_target: ptx::target_name(ptx).unwrap_or("?").to_string(),
                            device,
                        });
                    }
                }
                ModuleBackend::Gpu(gpu::GpuModule::load(context, ptx)?)
            }
            #[cfg(feature = "hip")]
            Backend::Hip(_) => return Err(code::code_mismatch(&self.described(), GpuRuntime::Hip)),
        };
        Ok(Module {
            id: NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed),
            device_id: self.id,
            entries,
            target,
            target_name: ptx::target_name(ptx).map(str::to_string),
            selection: None,
            host_only: false,
            code_object: false,
            backend,
            emulated: self.emulated,
        })
    }

    /// The member of `set` this device runs: on a GPU the best for its compute capability
    /// ([`PtxSet::best_for`]), on the emulator the fixed [`PtxSet::for_emulator`]. An error lists
    /// the set's targets when none runs here.
    pub fn select_ptx(&self, set: &PtxSet) -> Result<(Sm, &'static str), LaunchError> {
        self.check_runs(GpuRuntime::Cuda)?;
        let chosen = match self.compute_capability() {
            Some(capability) => set.best_for(capability),
            None => set.for_emulator(),
        };
        chosen.ok_or_else(|| LaunchError::NoPtxForDevice {
            device: self.described(),
            targets: set.sms().iter().map(|sm| sm.to_string()).collect(),
        })
    }

    /// Loads the member of `set` that [`select_ptx`](Device::select_ptx) picks. The module's
    /// [`selection`](Module::selection) (and its `Debug` output) says which target was loaded
    /// and why.
    pub fn load_ptx_set(&self, set: &PtxSet) -> Result<Module, LaunchError> {
        let (sm, ptx) = self.select_ptx(set)?;
        let mut module = self.load_ptx(ptx)?;
        let listed: Vec<String> = set.sms().iter().map(|sm| sm.to_string()).collect();
        let why = match self.compute_capability() {
            Some(_) => "the newest target it runs",
            None => "the oldest target: the emulator runs the host build",
        };
        module.selection = Some(format!(
            "{sm} of [{}] on {}: {why}",
            listed.join(", "),
            self.described()
        ));
        Ok(module)
    }

    /// `GPU <name> (compute capability X.Y)`, `HIP GPU <name>`, or the emulator's name.
    fn described(&self) -> String {
        match (self.compute_capability(), self.gpu_runtime()) {
            (Some((major, minor)), _) => {
                format!("GPU {} (compute capability {major}.{minor})", self.name())
            }
            (None, Some(GpuRuntime::Hip)) => format!("HIP GPU {}", self.name()),
            _ => self.name(),
        }
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: DeviceElement>(&self, data: &[T]) -> Result<DeviceBuffer<T>, LaunchError> {
        let mut buffer = self.alloc::<T>(data.len(), false)?;
        buffer.copy_from_host(data)?;
        Ok(buffer)
    }

    /// A buffer of `len` zeros (all bits zero).
    pub fn zeros<T: DeviceElement>(&self, len: usize) -> Result<DeviceBuffer<T>, LaunchError> {
        self.alloc(len, true)
    }

    fn alloc<T: DeviceElement>(
        &self,
        len: usize,
        zeroed: bool,
    ) -> Result<DeviceBuffer<T>, LaunchError> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(LaunchError::Allocation {
                bytes: usize::MAX,
                reason: format!(
                    "{len} elements of {} overflow the address space",
                    T::DTYPE_NAME
                ),
            })?;
        let (storage, addr) = Memory::new(self, bytes, zeroed)?;
        if bytes > 0 {
            self.registry.insert(addr, bytes as u64);
        }
        Ok(DeviceBuffer {
            device_id: self.id,
            len,
            addr,
            storage,
            registry: Arc::clone(&self.registry),
            _element: PhantomData,
        })
    }

    /// `args` packed as the parameters of a launch of a resolved kernel with `config`, checked
    /// against the module and this device (see the [module docs](self)). A pointer into one of
    /// `tensors` (the launch's tensors, live allocations of this device) is not looked up among
    /// the device's allocations. Allocates nothing unless it fails.
    fn checked_params<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: &ResolvedKernel<A>,
        config: &LaunchConfig,
        args: &A,
        tensors: &[stream::TensorUse<'_>],
    ) -> Result<KernelParams, LaunchError> {
        let mut params = args.kernel_params();
        let name = kernel.kernel.name;
        if module.device_id != self.id {
            return Err(LaunchError::WrongDevice {
                what: format!("the module of kernel `{name}`"),
            });
        }
        if kernel.module_id != module.id {
            return Err(LaunchError::WrongDevice {
                what: format!("kernel `{name}`, resolved in another module,"),
            });
        }
        config.validate(name)?;
        self.push_tensor_maps(module, name, kernel.kernel.tensor_maps, &mut params)?;
        if params.overflowed() {
            return Err(LaunchError::ArgumentMismatch {
                kernel: name.to_string(),
                detail: format!("a launch passes at most {MAX_KERNEL_PARAMS} parameters"),
            });
        }
        if let Some(entry) = module.entries.get(kernel.index as usize) {
            check_entry_args(entry, name, &params)?;
        }
        for (index, param) in params.iter().enumerate() {
            if let KernelParam::Ptr(addr) = *param {
                let in_tensor = tensors
                    .iter()
                    .any(|tensor| tensor.allocation.contains(addr));
                if addr != 0 && !in_tensor && !self.registry.contains(addr) {
                    return Err(LaunchError::ForeignPointer {
                        kernel: name.to_string(),
                        index,
                        addr,
                    });
                }
            }
        }
        Ok(params)
    }

    /// Runs `kernel` over the grid of `config` with `args` and waits for it to finish (so a
    /// failure is reported for this kernel). On the emulator the report holds its counters.
    pub fn launch<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: Kernel<A>,
        config: LaunchConfig,
        args: A,
    ) -> Result<LaunchReport, LaunchError> {
        let resolved = module.resolve(kernel)?;
        let params = self.checked_params(module, &resolved, &config, &args, &[])?;
        #[cfg(not(any(feature = "cuda", feature = "hip")))]
        let _ = params;
        match (&self.backend, &module.backend) {
            (Backend::Emulator, ModuleBackend::Emulator) => {
                emulated::launch(kernel, &config, args, module.emulated).map(LaunchReport::Emulator)
            }
            #[cfg(feature = "cuda")]
            (Backend::Gpu(context), ModuleBackend::Gpu(gpu_module)) => {
                context.launch(resolved.entry_launch(gpu_module, &config, &params))?;
                context.synchronize(|| format!("running kernel `{}`", kernel.name))?;
                Ok(LaunchReport::Gpu)
            }
            #[cfg(feature = "hip")]
            (Backend::Hip(context), ModuleBackend::Hip(hip_module)) => {
                context.launch(resolved.entry_launch(hip_module, &config, &params))?;
                context.synchronize(|| format!("running kernel `{}`", kernel.name))?;
                Ok(LaunchReport::Gpu)
            }
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => Err(LaunchError::WrongDevice {
                what: format!("the module of kernel `{}`", kernel.name),
            }),
        }
    }

    /// Times `kernel`: `options.warmup` untimed launches, then `options.repetitions` launches
    /// each timed on its own (CUDA events on the GPU, after an L2 flush; host wall time on the
    /// emulator, marked [`TimingClock::EmulatorWallTime`]). The median is the figure to report.
    pub fn time_launches<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: Kernel<A>,
        config: LaunchConfig,
        args: A,
        options: TimingOptions,
    ) -> Result<Timing, LaunchError> {
        let resolved = module.resolve(kernel)?;
        let params = self.checked_params(module, &resolved, &config, &args, &[])?;
        self.time_checked(module, &resolved, &config, args, &params, options)
    }

    /// The timing of [`time_launches`](Self::time_launches) and [`Stream::time_launches`] once
    /// the launch is checked (at least one repetition is asked for here).
    fn time_checked<A: KernelArgs>(
        &self,
        module: &Module,
        kernel: &ResolvedKernel<A>,
        config: &LaunchConfig,
        args: A,
        params: &KernelParams,
        options: TimingOptions,
    ) -> Result<Timing, LaunchError> {
        let name = kernel.kernel.name;
        if options.repetitions == 0 {
            return Err(LaunchError::InvalidConfig {
                kernel: name.to_string(),
                reason: "timing needs at least one repetition".to_string(),
            });
        }
        #[cfg(not(feature = "cuda"))]
        let _ = params;
        match (&self.backend, &module.backend) {
            (Backend::Emulator, ModuleBackend::Emulator) => {
                let samples =
                    emulated::time(kernel.kernel, config, args, options, module.emulated)?;
                Ok(Timing::from_samples(samples, TimingClock::EmulatorWallTime))
            }
            #[cfg(feature = "cuda")]
            (Backend::Gpu(context), ModuleBackend::Gpu(gpu_module)) => {
                let launch = kernel.entry_launch(gpu_module, config, params);
                let samples = backend::time_with_events(context, launch, options)?;
                Ok(Timing::from_samples(samples, TimingClock::CudaEvents))
            }
            #[cfg(feature = "hip")]
            (Backend::Hip(context), ModuleBackend::Hip(hip_module)) => {
                let launch = kernel.entry_launch(hip_module, config, params);
                let samples = backend::time_with_events(context, launch, options)?;
                Ok(Timing::from_samples(samples, TimingClock::HipEvents))
            }
            #[cfg(any(feature = "cuda", feature = "hip"))]
            _ => Err(LaunchError::WrongDevice {
                what: format!("the module of kernel `{name}`"),
            }),
        }
    }

    /// Waits until all work on the device has finished.
    pub fn synchronize(&self) -> Result<(), LaunchError> {
        match &self.backend {
            Backend::Emulator => Ok(()),
            #[cfg(feature = "cuda")]
            Backend::Gpu(context) => context.synchronize(|| "synchronizing the device".to_string()),
            #[cfg(feature = "hip")]
            Backend::Hip(context) => context.synchronize(|| "synchronizing the device".to_string()),
        }
    }
}

enum ModuleBackend {
    Emulator,
    #[cfg(feature = "cuda")]
    Gpu(gpu::GpuModule),
    #[cfg(feature = "hip")]
    Hip(hip::HipModule),
}

/// A loaded module: PTX ([`Device::load_ptx`]) or an AMD code object
/// ([`Device::load_code_object`]).
pub struct Module {
    /// Unique among the modules of this process (kernels resolve against it).
    id: u64,
    device_id: u64,
    entries: Vec<ptx::PtxEntry>,
    target: Option<(u32, u32, bool)>,
    target_name: Option<String>,
    selection: Option<String>,
    /// Made by [`Device::host_module`]: no PTX entries to check launches against.
    host_only: bool,
    /// Loaded from an AMD code object ([`Device::load_code_object`]), not PTX.
    code_object: bool,
    backend: ModuleBackend,
    /// Its device's default emulated target ([`Device::emulator_amd`]).
    emulated: Option<EmulatedTarget>,
}

impl Module {
    /// The names of the module's kernel entries (PTX `.entry`s, or the code object's kernels).
    pub fn entry_names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|entry| entry.name.clone())
            .collect()
    }

    /// The module's entries with their parameter sizes.
    pub fn entries(&self) -> &[ptx::PtxEntry] {
        &self.entries
    }

    /// The PTX `.target` as `(major, minor, arch_specific)`: `sm_90a` → `(9, 0, true)`.
    pub fn target(&self) -> Option<(u32, u32, bool)> {
        self.target
    }

    /// Whether the module is an AMD code object ([`Device::load_code_object`]).
    pub fn is_code_object(&self) -> bool {
        self.code_object
    }

    /// Whose body of a `#[tile_kernel]` a launch from this module runs: a code object's
    /// kernels are amdgpu bodies, PTX for sm_90a has the sm_90a bodies and other PTX the sm_80
    /// ones; on the emulator, the target its launches emulate
    /// ([`emulator::launch_target_for`](crate::emulator::launch_target_for); sm_80 if that is
    /// misconfigured, which the launch itself then reports).
    pub fn body_target(&self) -> crate::emulator::EmulatedTarget {
        use crate::emulator::EmulatedTarget;
        if matches!(self.backend, ModuleBackend::Emulator) {
            crate::emulator::launch_target_for(self.emulated).unwrap_or_default()
        } else if self.code_object {
            EmulatedTarget::Amdgpu
        } else if self.target_name() == Some("sm_90a") {
            EmulatedTarget::Sm90a
        } else {
            EmulatedTarget::Sm80
        }
    }

    /// The PTX `.target` as written (`sm_90a`), or a code object's processor (`gfx942`).
    pub fn target_name(&self) -> Option<&str> {
        self.target_name.as_deref()
    }

    /// For a module loaded from a [`PtxSet`] ([`Device::load_ptx_set`]): which target was loaded,
    /// among which, and why, e.g. `sm_90a of [sm_80, sm_90a] on GPU NVIDIA H100 (compute
    /// capability 9.0): the newest target it runs`.
    pub fn selection(&self) -> Option<&str> {
        self.selection.as_deref()
    }

    /// Checks an argument tuple against the PTX entry `name`: the entry exists, and it takes as
    /// many parameters as `params` with the same sizes. [`Device::launch`] makes this check
    /// before every launch; a test harness that runs a kernel another way can make it too.
    pub fn check_args(&self, name: &str, params: &[KernelParam]) -> Result<(), LaunchError> {
        if self.host_only {
            return Ok(());
        }
        let entry = self
            .entries
            .iter()
            .find(|entry| entry.name == name)
            .ok_or_else(|| LaunchError::KernelNotFound {
                kernel: name.to_string(),
                entries: self.entry_names(),
            })?;
        check_entry_args(entry, name, params)
    }
}

/// Checks `params` against the parameter sizes of PTX `entry` (of kernel `name`).
fn check_entry_args(
    entry: &ptx::PtxEntry,
    name: &str,
    params: &[KernelParam],
) -> Result<(), LaunchError> {
    let mismatch = |detail: String| LaunchError::ArgumentMismatch {
        kernel: name.to_string(),
        detail,
    };
    if entry.param_sizes.len() != params.len() {
        return Err(mismatch(format!(
            "the PTX entry takes {} parameters, the Rust handle passes {}",
            entry.param_sizes.len(),
            params.len()
        )));
    }
    for (index, (size, param)) in entry.param_sizes.iter().zip(params).enumerate() {
        if let Some(size) = size {
            if *size != param.size() {
                return Err(mismatch(format!(
                    "parameter {index} is {size} bytes in the PTX, but the Rust argument is a \
                     {} ({} bytes)",
                    param.type_name(),
                    param.size()
                )));
            }
        }
    }
    Ok(())
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("entries", &self.entry_names())
            .field("target", &self.target)
            .field("selection", &self.selection)
            .finish()
    }
}

/// `len` elements of `T` in device memory (host memory on the emulator). Freed on drop.
pub struct DeviceBuffer<T: DeviceElement> {
    device_id: u64,
    len: usize,
    addr: u64,
    storage: Memory,
    registry: Arc<Registry>,
    _element: PhantomData<T>,
}

impl<T: DeviceElement> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceBuffer<{}>[{}] at {:#x}",
            T::DTYPE_NAME,
            self.len,
            self.addr
        )
    }
}

impl<T: DeviceElement> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The pointer a kernel receives (null for an empty buffer).
    pub fn ptr(&self) -> Ptr<T> {
        Ptr::from_addr(self.addr)
    }

    /// Whether this buffer was allocated by `device`.
    pub fn belongs_to(&self, device: &Device) -> bool {
        self.device_id == device.id
    }

    /// `Ok` if a host slice of `len` elements fits a copy (`what`) to or from this buffer exactly.
    fn check_len(&self, what: &str, len: usize) -> Result<(), LaunchError> {
        if len == self.len {
            return Ok(());
        }
        Err(LaunchError::LengthMismatch {
            what: what.to_string(),
            expected: self.len,
            got: len,
        })
    }

    /// Copies `data` (exactly [`len`](Self::len) elements) into the buffer.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<(), LaunchError> {
        self.check_len("copy to device", data.len())?;
        let bytes = self.size_bytes();
        // SAFETY: `data` is `bytes` bytes of plain data (`DeviceElement`).
        let source = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), bytes) };
        self.storage.copy(self.addr, HostBytes::Source(source))
    }

    /// Copies the buffer into `out` (exactly [`len`](Self::len) elements), after all launched
    /// work has finished.
    pub fn copy_to_host(&self, out: &mut [T]) -> Result<(), LaunchError> {
        self.check_len("copy to host", out.len())?;
        let bytes = self.size_bytes();
        // SAFETY: `out` is `bytes` bytes of plain data, any bit pattern valid (`DeviceElement`).
        let target =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), bytes) };
        self.storage.copy(self.addr, HostBytes::Target(target))
    }

    /// The buffer's contents.
    pub fn download(&self) -> Result<Vec<T>, LaunchError> {
        let mut out = Vec::with_capacity(self.len);
        // SAFETY: zeroed bytes are a valid `T` (`DeviceElement`); overwritten right after.
        out.resize(self.len, unsafe { std::mem::zeroed() });
        self.copy_to_host(&mut out)?;
        Ok(out)
    }
}

impl<T: DeviceElement> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.addr != 0 {
            self.registry.remove(self.addr);
        }
    }
}

#[cfg(test)]
mod alloc_tests;
#[cfg(test)]
mod tests;
