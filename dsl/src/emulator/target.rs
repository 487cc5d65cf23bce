//! Which target a launch on the emulator stands for.
//!
//! A `#[tile_kernel]` with a `dot` has two bodies: the sm_90a one (`wgmma`) and the one for
//! every other target (`mma.sync`); the GPU runs the body of the PTX it loaded. A kernel whose
//! body reads shared memory by `ldmatrix` has a body planned for AMD beside it (vector loads),
//! the one its amdgpu code object runs. On the host every body exists and the emulator runs the
//! one of the launch's target: [`with_target`]'s on the launching thread, else the environment
//! variable `TESSERA_EMULATE_SM` (`sm_80` or `sm_90a`), else `amdgpu` on the device
//! `TESSERA_DEVICE=emulator-amd` chooses (`Device::emulator_amd`), else sm_80 (the oldest PTX
//! of a set, as `Device::load_ptx_set` takes on the emulator). The target is read once per
//! launch, so every thread of a launch runs the same body. A kernel built for sm_90a alone
//! (`targets = [sm_90a]`) has one body, and a launch emulating another target is refused
//! (`LaunchError::UnsupportedTarget`); while emulating amdgpu, a kernel without an amdgpu body
//! is refused (`LaunchError::NvidiaOnly`, as on an AMD code object), and an NVIDIA-only
//! instruction executed by a hand-written kernel is an [`EmulatorError::NvidiaInstruction`].
//!
//! What the amdgpu mode models: the code the amdgpu entries run (the AMD plans, warps of 32
//! lanes as the halves of a 64-lane wave, as `tessera::device` runs them, and the wave's
//! collectives — `mfma`, shuffles of all 64 lanes — in `emulator/wave.rs`), the absence of
//! NVIDIA's instructions, and the phases of AMD's LDS banks in the wavefront counts (see the
//! module docs of [`crate::emulator`]). It does not model AMD's float approximations or NaN
//! encodings (the emulator computes as NVIDIA's GPUs do).

use super::cta::with_thread;
use super::EmulatorError;
use std::cell::Cell;

/// A target whose code the emulator can run (more may come: match with a wildcard arm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EmulatedTarget {
    /// sm_80 (and every target but sm_90a): `dot` as `mma.sync`.
    #[default]
    Sm80,
    /// sm_90a: `dot` as `wgmma.mma_async`.
    Sm90a,
    /// An AMD GPU (`amdgcn-amd-amdhsa`, gfx942/gfx90a): the code of the amdgpu entries.
    Amdgpu,
}

impl EmulatedTarget {
    /// `sm_80`, `sm_90a` or `amdgpu`.
    pub fn name(self) -> &'static str {
        match self {
            EmulatedTarget::Sm80 => "sm_80",
            EmulatedTarget::Sm90a => "sm_90a",
            EmulatedTarget::Amdgpu => "amdgpu",
        }
    }

    /// The target named `sm_80`, `sm_90a` or `amdgpu`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim() {
            "sm_80" => Some(EmulatedTarget::Sm80),
            "sm_90a" => Some(EmulatedTarget::Sm90a),
            "amdgpu" => Some(EmulatedTarget::Amdgpu),
            _ => None,
        }
    }
}

thread_local! {
    static CHOSEN: Cell<Option<EmulatedTarget>> = const { Cell::new(None) };
}

/// Runs `f` with launches from this thread emulating `target` (restored afterwards).
pub fn with_target<R>(target: EmulatedTarget, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<EmulatedTarget>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHOSEN.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CHOSEN.with(|c| c.replace(Some(target))));
    f()
}

/// The target a launch from this thread emulates (module docs) on a plain emulator:
/// [`launch_target_for`]`(None)`.
pub fn launch_target() -> Result<EmulatedTarget, EmulatorError> {
    launch_target_for(None)
}

/// The target a launch from this thread emulates on an emulator device whose own target is
/// `device` (`Some(Amdgpu)` for `Device::emulator_amd`, which `TESSERA_DEVICE=emulator-amd`
/// chooses): [`with_target`]'s, else `TESSERA_EMULATE_SM`, else `device`'s, else sm_80. An
/// unknown `TESSERA_EMULATE_SM`, or one on a device emulating amdgpu, is an
/// [`EmulatorError::InvalidLaunch`].
pub fn launch_target_for(device: Option<EmulatedTarget>) -> Result<EmulatedTarget, EmulatorError> {
    if let Some(t) = CHOSEN.with(Cell::get) {
        return Ok(t);
    }
    let amd = device == Some(EmulatedTarget::Amdgpu);
    match std::env::var("TESSERA_EMULATE_SM") {
        Ok(name) if amd => Err(EmulatorError::InvalidLaunch {
            reason: format!(
                "TESSERA_EMULATE_SM={name:?} names an NVIDIA target, but the device emulates \
                 amdgpu (TESSERA_DEVICE=emulator-amd): unset one of them"
            ),
        }),
        Ok(name) => EmulatedTarget::from_name(&name)
            .filter(|t| *t != EmulatedTarget::Amdgpu)
            .ok_or_else(|| EmulatorError::InvalidLaunch {
                reason: format!(
                    "TESSERA_EMULATE_SM={name:?}: the emulator runs sm_80 or sm_90a \
                     (TESSERA_DEVICE=emulator-amd emulates an AMD GPU)"
                ),
            }),
        Err(_) => Ok(device.unwrap_or(EmulatedTarget::Sm80)),
    }
}

/// Inside a kernel on the emulator: stops the launch with an
/// [`EmulatorError::NvidiaInstruction`] when the launch emulates amdgpu (`op` is an instruction
/// only NVIDIA GPUs have).
#[track_caller]
pub(crate) fn nvidia_instruction(op: &'static str) {
    let site = super::Site(std::panic::Location::caller());
    let thread = with_thread(|t| (t.cta.target == EmulatedTarget::Amdgpu).then(|| t.thread_ref()));
    if let Some(thread) = thread {
        super::cta::raise(EmulatorError::NvidiaInstruction { thread, op, site });
    }
}

/// Inside a kernel on the emulator: stops the launch with an [`EmulatorError::AmdInstruction`]
/// when the launch emulates an NVIDIA target (`op` is an instruction only AMD GPUs have).
#[track_caller]
pub(crate) fn amd_instruction(op: &'static str) {
    let site = super::Site(std::panic::Location::caller());
    let thread = with_thread(|t| (t.cta.target != EmulatedTarget::Amdgpu).then(|| t.thread_ref()));
    if let Some(thread) = thread {
        super::cta::raise(EmulatorError::AmdInstruction { thread, op, site });
    }
}

/// Inside a kernel on the emulator: the target of the running launch.
pub fn running_target() -> EmulatedTarget {
    with_thread(|t| t.cta.target)
}
