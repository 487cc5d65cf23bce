//! Host side of `#[tile_kernel]` kernels: the specialisations of a kernel, grids, the checks of
//! what the kernel assumes of its arguments, and launching on a [`Device`] or directly on the
//! emulator. Each kernel's generated module (named after the kernel) calls these.

use crate::emulator::{EmulatedTarget, EmulatorReport};
use crate::launch::{Device, KernelArgs, LaunchConfig, LaunchError, LaunchReport, Module};
use crate::Kernel;
use std::fmt::Write as _;

/// One compiled specialisation of a tile kernel.
pub struct Specialisation<A: 'static> {
    /// The PTX entry and the host build.
    pub kernel: Kernel<A>,
    /// The values of the kernel's `const` parameters, in declaration order.
    pub consts: &'static [(&'static str, i128)],
    /// Warps per program: the block is `32 × num_warps` threads along x.
    pub num_warps: u32,
    /// Dynamic shared memory per program (bytes), from the code generator's allocator: the
    /// most any of its bodies uses.
    pub shared_bytes: u32,
    /// Dynamic shared memory of each target's body (bytes): a launch asks for its module's
    /// ([`launch_config`]). A pipelined NVIDIA body's stages need not fit an AMD GPU's 64 KiB of
    /// LDS, which its unpipelined amdgpu body does.
    pub target_shared_bytes: TargetSharedBytes,
    /// The kernel's entry in the module it was last launched from (launches skip the lookup).
    pub entry: crate::launch::EntryCache,
}

/// The dynamic shared memory of each body of a specialisation (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TargetSharedBytes {
    /// The body of sm_80 and every NVIDIA target but sm_90a.
    pub sm80: u32,
    /// The sm_90a body.
    pub sm90a: u32,
    /// The amdgpu body (the LDS it uses).
    pub amdgpu: u32,
}

impl TargetSharedBytes {
    /// The bytes of the body that `target` runs.
    pub fn of(self, target: EmulatedTarget) -> u32 {
        match target {
            EmulatedTarget::Sm90a => self.sm90a,
            EmulatedTarget::Amdgpu => self.amdgpu,
            _ => self.sm80,
        }
    }
}

impl<A> Specialisation<A> {
    /// `BLOCK = 1024, WARPS = 4` (empty without const parameters).
    pub fn describe(&self) -> String {
        describe_consts(self.consts)
    }
}

impl<A> std::fmt::Debug for Specialisation<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} [{}] num_warps={} shared_bytes={}",
            self.kernel.name,
            self.describe(),
            self.num_warps,
            self.shared_bytes
        )
    }
}

fn describe_consts(consts: &[(&str, i128)]) -> String {
    let mut s = String::new();
    for (i, (name, value)) in consts.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{name} = {value}");
    }
    s
}

/// The specialisation of `kernel` whose const values are `wanted`, or an error that lists the
/// compiled ones.
pub fn select<'a, A>(
    kernel: &str,
    specialisations: &'a [Specialisation<A>],
    wanted: &[(&str, i128)],
) -> Result<&'a Specialisation<A>, LaunchError> {
    specialisations
        .iter()
        .find(|s| {
            s.consts.len() == wanted.len()
                && s.consts
                    .iter()
                    .zip(wanted)
                    .all(|(a, b)| a.0 == b.0 && a.1 == b.1)
        })
        .ok_or_else(|| {
            let compiled: Vec<String> = specialisations
                .iter()
                .map(|s| format!("[{}]", s.describe()))
                .collect();
            LaunchError::InvalidConfig {
                kernel: kernel.to_string(),
                reason: format!(
                    "no specialisation with {}; the kernel was compiled for {}",
                    describe_consts(wanted),
                    compiled.join(", ")
                ),
            }
        })
}

/// Grid sizes as values: `n`, `(x,)`, `(x, y)`, `(x, y, z)` or `[x, y, z]` programs.
pub trait GridDims {
    /// The grid as `[x, y, z]`.
    fn dims(self) -> [u32; 3];
}

impl GridDims for u32 {
    fn dims(self) -> [u32; 3] {
        [self, 1, 1]
    }
}
impl GridDims for (u32,) {
    fn dims(self) -> [u32; 3] {
        [self.0, 1, 1]
    }
}
impl GridDims for (u32, u32) {
    fn dims(self) -> [u32; 3] {
        [self.0, self.1, 1]
    }
}
impl GridDims for (u32, u32, u32) {
    fn dims(self) -> [u32; 3] {
        [self.0, self.1, self.2]
    }
}
impl GridDims for [u32; 3] {
    fn dims(self) -> [u32; 3] {
        self
    }
}

/// The grid of a launch: a [`GridDims`] value, or a closure from the kernel's const values
/// (its generated `Consts` struct) to one, as Triton's `grid = lambda meta: (…)`.
pub trait Grid<C> {
    /// The grid as `[x, y, z]` for the chosen const values.
    fn grid(self, consts: &C) -> [u32; 3];
}

macro_rules! grid_value {
    ($($t:ty),*) => {$(
        impl<C> Grid<C> for $t {
            fn grid(self, _: &C) -> [u32; 3] {
                GridDims::dims(self)
            }
        }
    )*};
}
grid_value!(u32, (u32,), (u32, u32), (u32, u32, u32), [u32; 3]);

impl<C, F, G> Grid<C> for F
where
    F: FnOnce(&C) -> G,
    G: GridDims,
{
    fn grid(self, consts: &C) -> [u32; 3] {
        self(consts).dims()
    }
}

/// The launch configuration of a specialisation from `module`: `grid`, block
/// `[32 × num_warps, 1, 1]`, the dynamic shared memory of the body the module runs
/// ([`Module::body_target`]).
pub fn launch_config<A>(spec: &Specialisation<A>, grid: [u32; 3], module: &Module) -> LaunchConfig {
    config_for(spec, grid, module.body_target())
}

/// [`launch_config`] for a launch running `target`'s body.
fn config_for<A>(spec: &Specialisation<A>, grid: [u32; 3], target: EmulatedTarget) -> LaunchConfig {
    LaunchConfig {
        grid,
        block: [32 * spec.num_warps, 1, 1],
        shared_bytes: spec.target_shared_bytes.of(target),
    }
}

/// The launcher's check of condition `condition` (as written) of `kernel`'s `requires = […]`:
/// `holds` is its value on the arguments (`None`: a division by zero or an overflow), `values`
/// the arguments and const values it reads, by name.
pub fn check_requirement(
    kernel: &str,
    condition: &str,
    holds: Option<bool>,
    values: &[(&str, &dyn core::fmt::Display)],
) -> Result<(), LaunchError> {
    if holds == Some(true) {
        return Ok(());
    }
    let values: Vec<String> = values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    Err(LaunchError::Requirement {
        kernel: kernel.to_string(),
        condition: condition.to_string(),
        values: values.join(", "),
        evaluated: holds.is_some(),
    })
}

/// Checks that pointer argument `param` is `align`-byte aligned, as the kernel's vectorized
/// accesses assume (axis analysis); null passes (the kernel may never touch it).
pub fn check_aligned(kernel: &str, param: &str, addr: u64, align: u64) -> Result<(), LaunchError> {
    if align <= 1 || addr.is_multiple_of(align) {
        return Ok(());
    }
    Err(LaunchError::InvalidConfig {
        kernel: kernel.to_string(),
        reason: format!(
            "argument `{param}` is the address {addr:#x}, but the kernel was compiled assuming it \
             is {align}-byte aligned (its loads and stores are vectorized on that assumption); \
             pass an aligned pointer"
        ),
    })
}

/// Checks that integer argument `param` is a multiple of `divisor`, as the kernel assumes.
pub fn check_divisible(
    kernel: &str,
    param: &str,
    value: i128,
    divisor: u64,
) -> Result<(), LaunchError> {
    if divisor <= 1 || value % divisor as i128 == 0 {
        return Ok(());
    }
    Err(LaunchError::InvalidConfig {
        kernel: kernel.to_string(),
        reason: format!(
            "argument `{param}` is {value}, but the kernel was compiled assuming it is a multiple \
             of {divisor} (its loads and stores are vectorized on that assumption)"
        ),
    })
}

/// The check before a launch that integer argument `param` of `kernel` is `expected` (a
/// `Tensor` argument's innermost stride, which the kernel's aligned variant assumes is 1).
pub fn check_equal(
    kernel: &str,
    param: &str,
    value: i128,
    expected: i128,
) -> Result<(), LaunchError> {
    if value == expected {
        return Ok(());
    }
    Err(LaunchError::InvalidConfig {
        kernel: kernel.to_string(),
        reason: format!(
            "argument `{param}` is {value}, but the kernel was compiled assuming it is {expected} \
             (its loads and stores are vectorized on that assumption)"
        ),
    })
}

/// Launches a specialisation on `device` (GPU or emulator) with the module holding its PTX.
pub fn launch_on<A: KernelArgs>(
    device: &Device,
    module: &Module,
    spec: &Specialisation<A>,
    grid: [u32; 3],
    args: A,
) -> Result<LaunchReport, LaunchError> {
    device.launch(module, spec.kernel, launch_config(spec, grid, module), args)
}

/// Runs a specialisation on the CPU emulator directly (no PTX module needed): the host build of
/// the kernel on every simulated thread, emulating the target `emulator::launch_target` gives.
/// Pointers must be host addresses of live memory.
pub fn emulate<A: KernelArgs>(
    spec: &Specialisation<A>,
    grid: [u32; 3],
    args: A,
) -> Result<EmulatorReport, LaunchError> {
    let target = crate::emulator::launch_target().unwrap_or_default();
    crate::launch::emulate(spec.kernel, &config_for(spec, grid, target), args, None)
}

/// Ok when every one of `maps` (a variant's TMA tensor maps) can be built from `args`: the
/// variant's check, so that tensors the driver would refuse a map for (a zero size, rows that
/// overlap) run the next variant instead.
pub fn check_tensor_maps<A: KernelArgs>(
    kernel: &str,
    maps: &[crate::TensorMapParam],
    args: &A,
) -> Result<(), LaunchError> {
    let params = args.kernel_params();
    for m in maps {
        m.map(&params)
            .map_err(|reason| LaunchError::InvalidConfig {
                kernel: kernel.to_string(),
                reason: format!("the TMA tensor map of parameter {}: {reason}", m.tensor),
            })?;
    }
    Ok(())
}

/// The emulator's hidden tensor-map parameters of a launch with `args`: each of `maps` built
/// from the tensor's parameters and kept at a stable address
/// ([`tensor_map_in_memory`](crate::emulator::tensor_map_in_memory)). The generated host entry
/// of a kernel copying by TMA calls this on every simulated thread. Panics (a failed kernel on
/// the emulator) when a map is invalid, which the launch's alignment checks rule out.
pub fn emulated_tensor_maps<A: KernelArgs, const N: usize>(
    maps: &[crate::TensorMapParam; N],
    args: &A,
) -> [crate::Ptr<crate::device::TensorMap>; N] {
    let params = args.kernel_params();
    maps.map(|m| match m.map(&params) {
        Ok(map) => crate::emulator::tensor_map_in_memory(map),
        Err(why) => panic!("the tensor map of parameter {}: {why}", m.tensor),
    })
}
