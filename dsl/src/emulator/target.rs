//! Which PTX target a launch on the emulator stands for.
//!
//! A `#[tile_kernel]` with a `dot` has two bodies: the sm_90a one (`wgmma`) and the one for
//! every other target (`mma.sync`); the GPU runs the body of the PTX it loaded. On the host both
//! exist and the emulator runs the one of the launch's target: [`with_target`]'s on the
//! launching thread, else the environment variable `TESSERA_EMULATE_SM` (`sm_80` or `sm_90a`),
//! else sm_80 (the oldest PTX of a set, as `Device::load_ptx_set` takes on the emulator). The
//! target is read once per launch, so every thread of a launch runs the same body. A kernel
//! built for sm_90a alone (`targets = [sm_90a]`) has one body, and a launch emulating sm_80 is
//! refused (`LaunchError::UnsupportedTarget`).

use super::cta::with_thread;
use super::EmulatorError;
use std::cell::Cell;

/// A PTX target whose code the emulator can run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EmulatedTarget {
    /// sm_80 (and every target but sm_90a): `dot` as `mma.sync`.
    #[default]
    Sm80,
    /// sm_90a: `dot` as `wgmma.mma_async`.
    Sm90a,
}

impl EmulatedTarget {
    /// `sm_80` or `sm_90a`.
    pub fn name(self) -> &'static str {
        match self {
            EmulatedTarget::Sm80 => "sm_80",
            EmulatedTarget::Sm90a => "sm_90a",
        }
    }

    /// The target named `sm_80` or `sm_90a`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim() {
            "sm_80" => Some(EmulatedTarget::Sm80),
            "sm_90a" => Some(EmulatedTarget::Sm90a),
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

/// The target a launch from this thread emulates (module docs); an unknown
/// `TESSERA_EMULATE_SM` is an [`EmulatorError::InvalidLaunch`].
pub fn launch_target() -> Result<EmulatedTarget, EmulatorError> {
    if let Some(t) = CHOSEN.with(Cell::get) {
        return Ok(t);
    }
    match std::env::var("TESSERA_EMULATE_SM") {
        Ok(name) => EmulatedTarget::from_name(&name).ok_or_else(|| EmulatorError::InvalidLaunch {
            reason: format!("TESSERA_EMULATE_SM={name:?}: the emulator runs sm_80 or sm_90a"),
        }),
        Err(_) => Ok(EmulatedTarget::Sm80),
    }
}

/// Inside a kernel on the emulator: the target of the running launch.
pub fn running_target() -> EmulatedTarget {
    with_thread(|t| t.cta.target)
}
