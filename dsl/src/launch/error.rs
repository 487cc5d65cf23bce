//! Why a launcher call failed.

use super::kind::DEVICE_ENV;
use std::fmt;

/// Why a launcher call failed. Every variant names what was being done.
#[derive(Debug)]
pub enum LaunchError {
    /// `TESSERA_DEVICE` holds something other than `gpu`, `cuda`, `hip`, `emulator`,
    /// `emulator-amd` or `auto`.
    BadDeviceSetting {
        /// The value found.
        value: String,
    },
    /// A GPU was asked for but cannot be used.
    GpuUnavailable {
        /// Why.
        reason: String,
    },
    /// A CUDA driver call failed.
    Driver {
        /// What was being done.
        action: String,
        /// The `CUresult` name.
        code: String,
        /// The driver's description of it.
        message: String,
    },
    /// A HIP runtime call failed.
    HipRuntime {
        /// What was being done.
        action: String,
        /// The `hipError_t` name.
        code: String,
        /// The runtime's description of it.
        message: String,
    },
    /// The device cannot run the code given, or none of the code built for it: PTX on a HIP
    /// device, an AMD code object on a CUDA device, a kernel set without code for the device.
    NoCodeForDevice {
        /// The device.
        device: String,
        /// What code there is and why none of it runs.
        reason: String,
    },
    /// An AMD code object could not be read (see [`code_object`](super::code_object)).
    CodeObjectMalformed {
        /// What is wrong with it.
        reason: String,
    },
    /// The driver rejected the PTX (JIT compilation failed); `log` is the JIT's error log.
    PtxRejected {
        /// The `CUresult` name.
        code: String,
        /// The JIT's error log.
        log: String,
    },
    /// The PTX text could not be read.
    PtxMalformed {
        /// What is wrong with it.
        reason: String,
    },
    /// The PTX targets an architecture the device cannot run.
    PtxArchitecture {
        /// The PTX's `.target`.
        ptx_target: String,
        /// The device's compute capability (major, minor).
        device: (u32, u32),
    },
    /// No PTX of a set runs on the device (or the set is empty).
    NoPtxForDevice {
        /// The device.
        device: String,
        /// The set's targets.
        targets: Vec<String>,
    },
    /// The kernel is not an `.entry` of the module.
    KernelNotFound {
        /// The entry asked for.
        kernel: String,
        /// The module's entries.
        entries: Vec<String>,
    },
    /// The kernel has no kernel in the module, an AMD code object (or no amdgpu body on the
    /// emulator emulating amdgpu), because it uses instructions only NVIDIA GPUs have.
    NvidiaOnly {
        /// The kernel.
        kernel: String,
        /// The module's processor (`gfx942`), or `amdgpu on the emulator`.
        processor: String,
        /// The NVIDIA-only instructions it uses.
        instructions: Vec<String>,
    },
    /// The kernel is built for a PTX target other than the one the launch runs (an sm_90a-only
    /// kernel on a module of another target, or on the emulator emulating another target).
    UnsupportedTarget {
        /// The kernel.
        kernel: String,
        /// The target it is built for.
        needs: String,
        /// The target the launch runs.
        running: String,
    },
    /// The argument tuple does not match the PTX entry's parameters.
    ArgumentMismatch {
        /// The kernel.
        kernel: String,
        /// How they differ.
        detail: String,
    },
    /// A `Ptr` argument is neither null nor inside a live buffer of this device.
    ForeignPointer {
        /// The kernel.
        kernel: String,
        /// The argument's index.
        index: usize,
        /// The pointer's address.
        addr: u64,
    },
    /// The grid, block or shared-memory size cannot be launched.
    InvalidConfig {
        /// The kernel.
        kernel: String,
        /// What cannot be launched.
        reason: String,
    },
    /// The arguments break a condition of the kernel's `requires = […]`.
    Requirement {
        /// The kernel.
        kernel: String,
        /// The condition, as written in the attribute.
        condition: String,
        /// The arguments and const values it reads: `n_cols = 5000, BLOCK = 4096`.
        values: String,
        /// False when it could not be evaluated (a division by zero or an overflow).
        evaluated: bool,
    },
    /// A module or buffer of another device was passed.
    WrongDevice {
        /// What was passed.
        what: String,
    },
    /// Host data and device buffer lengths differ.
    LengthMismatch {
        /// The operation.
        what: String,
        /// The buffer's length.
        expected: usize,
        /// The host data's length.
        got: usize,
    },
    /// A buffer of this many bytes cannot be allocated.
    Allocation {
        /// The size asked for.
        bytes: usize,
        /// Why it failed.
        reason: String,
    },
    /// The emulator could not run the kernel.
    Emulator {
        /// The kernel.
        kernel: String,
        /// The emulator's error (naming the block and thread).
        message: String,
    },
    /// A tensor argument does not fit what the kernel or the operation expects (rank, shape,
    /// extent, device).
    Tensor {
        /// The tensor or operation.
        what: String,
        /// What does not fit.
        reason: String,
    },
    /// Host access to a tensor, or work on a stream, that is not ordered after pending stream
    /// work using the same memory (a missing `synchronize` or event wait).
    Unsynchronized {
        /// The access or the work.
        what: String,
        /// The pending work it is not ordered after.
        reason: String,
    },
    /// A stream operation used in the wrong state (capturing, not capturing, …).
    Stream {
        /// The operation.
        what: String,
        /// The state that forbids it.
        reason: String,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::BadDeviceSetting { value } => write!(
                f,
                "{DEVICE_ENV}={value:?} is not a device choice; use `gpu` (or `cuda`), `hip`, \
                 `emulator`, `emulator-amd` or `auto`"
            ),
            LaunchError::GpuUnavailable { reason } => write!(f, "no usable GPU: {reason}"),
            LaunchError::Driver {
                action,
                code,
                message,
            } => {
                write!(f, "CUDA driver error while {action}: {code} ({message})")
            }
            LaunchError::HipRuntime {
                action,
                code,
                message,
            } => write!(f, "HIP runtime error while {action}: {code} ({message})"),
            LaunchError::NoCodeForDevice { device, reason } => {
                write!(f, "no code to load on {device}: {reason}")
            }
            LaunchError::CodeObjectMalformed { reason } => {
                write!(f, "malformed AMD code object: {reason}")
            }
            LaunchError::PtxRejected { code, log } => {
                write!(f, "the CUDA driver rejected the PTX module: {code}")?;
                if !log.trim().is_empty() {
                    write!(f, "\nJIT log:\n{}", log.trim_end())?;
                }
                Ok(())
            }
            LaunchError::PtxMalformed { reason } => write!(f, "malformed PTX module: {reason}"),
            LaunchError::PtxArchitecture { ptx_target, device } => write!(
                f,
                "the PTX targets {ptx_target} but the device is sm_{}{}; rebuild the kernels for \
                 it (TESSERA_SM=sm_{}{})",
                device.0, device.1, device.0, device.1
            ),
            LaunchError::NoPtxForDevice { device, targets } if targets.is_empty() => write!(
                f,
                "no PTX to load on {device}: the PTX set is empty (the kernels were built without \
                 their PTX)"
            ),
            LaunchError::NoPtxForDevice { device, targets } => write!(
                f,
                "none of the embedded PTX targets ({}) runs on {device} (sm_XY runs on compute \
                 capability X.Y and newer, sm_XYa only on X.Y); add a target the device runs to \
                 the build (PtxBuild::sms, or TESSERA_SM=sm_80,... at build time)",
                targets.join(", ")
            ),
            LaunchError::KernelNotFound { kernel, entries } => write!(
                f,
                "kernel `{kernel}` is not an entry of the PTX module (entries: {})",
                if entries.is_empty() {
                    "none".to_string()
                } else {
                    entries.join(", ")
                }
            ),
            LaunchError::NvidiaOnly {
                kernel,
                processor,
                instructions,
            } => write!(
                f,
                "kernel `{kernel}` has no AMD kernel ({processor}): it uses {}, which only \
                 NVIDIA GPUs have (Tessera does not generate AMD code for `dot` or async copies \
                 yet); launch it on a CUDA GPU or the emulator emulating an NVIDIA target",
                instructions.join(", ")
            ),
            LaunchError::UnsupportedTarget {
                kernel,
                needs,
                running,
            } => write!(
                f,
                "kernel `{kernel}` is built for {needs} only, and this launch runs {running}: \
                 launch it on a device whose loaded PTX is {needs} (Device::load_ptx_set picks \
                 it on compute capability 9.0), or on the emulator under \
                 tessera::emulator::with_target(EmulatedTarget::Sm90a, …) or \
                 TESSERA_EMULATE_SM=sm_90a"
            ),
            LaunchError::ArgumentMismatch { kernel, detail } => {
                write!(
                    f,
                    "arguments of kernel `{kernel}` do not match its PTX entry: {detail}"
                )
            }
            LaunchError::ForeignPointer {
                kernel,
                index,
                addr,
            } => write!(
                f,
                "argument {index} of kernel `{kernel}` is a Ptr ({addr:#x}) that is neither null \
                 nor inside a live buffer of this device"
            ),
            LaunchError::InvalidConfig { kernel, reason } => {
                write!(f, "cannot launch kernel `{kernel}`: {reason}")
            }
            LaunchError::Requirement {
                kernel,
                condition,
                values,
                evaluated: true,
            } => write!(
                f,
                "cannot launch kernel `{kernel}`: the arguments break its requirement \
                 `{condition}` ({values})"
            ),
            LaunchError::Requirement {
                kernel,
                condition,
                values,
                evaluated: false,
            } => write!(
                f,
                "cannot launch kernel `{kernel}`: its requirement `{condition}` cannot be \
                 evaluated on the arguments ({values}): a division by zero or an overflow"
            ),
            LaunchError::WrongDevice { what } => {
                write!(
                    f,
                    "{what} belongs to another device than the one it was used with"
                )
            }
            LaunchError::LengthMismatch {
                what,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{what}: the buffer holds {expected} elements, the host data {got}"
                )
            }
            LaunchError::Allocation { bytes, reason } => {
                write!(f, "cannot allocate a buffer of {bytes} bytes: {reason}")
            }
            LaunchError::Emulator { kernel, message } => {
                write!(f, "the emulator failed to run kernel `{kernel}`: {message}")
            }
            LaunchError::Tensor { what, reason } => write!(f, "{what}: {reason}"),
            LaunchError::Unsynchronized { what, reason } => {
                write!(f, "{what} without synchronisation: {reason}")
            }
            LaunchError::Stream { what, reason } => write!(f, "{what}: {reason}"),
        }
    }
}

impl std::error::Error for LaunchError {}
