//! Which code a device loads, and the HIP device.
//!
//! A CUDA GPU loads PTX ([`Device::load_ptx`], [`Device::load_ptx_set`]); a HIP GPU loads AMD
//! code objects, the ELF that `--target amdgcn-amd-amdhsa` links ([`Device::load_code_object`]);
//! the emulator loads either, keeping only the kernels' names and parameter sizes to check
//! launches against, and runs the host builds. [`Device::load_code`] takes a kernel crate's
//! [`DeviceCode`] (both kinds) and loads what the device runs. Code the device cannot run is a
//! [`LaunchError::NoCodeForDevice`] saying what there is and what the device needs.

use super::code_object;
use super::CodeObjectSet;
use super::NEXT_MODULE_ID;
use super::{Backend, Device, DeviceCode, GpuRuntime, LaunchError, Module, ModuleBackend};
use std::sync::atomic::Ordering;

/// The error of a device named by `TESSERA_DEVICE` (`setting`) that cannot be used.
pub(super) fn demanded(setting: &str, what: &str, err: LaunchError) -> LaunchError {
    LaunchError::GpuUnavailable {
        reason: format!(
            "{}={setting} asks for {what}, but {}",
            super::DEVICE_ENV,
            match err {
                LaunchError::GpuUnavailable { reason } => reason,
                other => other.to_string(),
            }
        ),
    }
}

impl Device {
    /// AMD GPU number `ordinal` through the HIP runtime (`libamdhip64`, loaded at run time; HIP
    /// numbering, after `HIP_VISIBLE_DEVICES`). An error says why it cannot be used: built
    /// without the `hip` feature, the library not found, no device. Not yet run on AMD
    /// hardware.
    pub fn hip(ordinal: usize) -> Result<Device, LaunchError> {
        #[cfg(feature = "hip")]
        {
            let context = super::hip::HipContext::open(ordinal)?;
            let selection_note =
                format!("auto or {}=hip: HIP GPU {ordinal} found", super::DEVICE_ENV);
            Ok(Device {
                id: super::NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed),
                backend: Backend::Hip(context),
                registry: std::sync::Arc::default(),
                selection_note,
                tensor_maps: Default::default(),
                emulated: None,
            })
        }
        #[cfg(not(feature = "hip"))]
        {
            let _ = ordinal;
            Err(LaunchError::GpuUnavailable {
                reason: "this program was built without tessera's `hip` feature".to_string(),
            })
        }
    }

    /// The runtime of a GPU device (CUDA or HIP); `None` on the emulator.
    pub fn gpu_runtime(&self) -> Option<GpuRuntime> {
        match self.backend {
            Backend::Emulator => None,
            #[cfg(feature = "cuda")]
            Backend::Gpu(_) => Some(GpuRuntime::Cuda),
            #[cfg(feature = "hip")]
            Backend::Hip(_) => Some(GpuRuntime::Hip),
        }
    }

    /// `Ok` when this device runs the code of `runtime` (PTX for CUDA, code objects for HIP);
    /// the emulator takes both.
    pub(super) fn check_runs(&self, runtime: GpuRuntime) -> Result<(), LaunchError> {
        match self.gpu_runtime() {
            Some(own) if own != runtime => Err(code_mismatch(&self.described(), own)),
            _ => Ok(()),
        }
    }

    /// Loads an AMD code object (HSA code object, an ELF of machine AMDGPU). On a HIP GPU the
    /// runtime loads it (`hipModuleLoadData`; an error when it is not built for this GPU's
    /// processor); on the emulator only its kernels' names and parameter sizes are kept, to
    /// check launches against. Its kernels and their parameter sizes come from the code
    /// object's metadata ([`code_object::parse`]).
    pub fn load_code_object(&self, image: &[u8]) -> Result<Module, LaunchError> {
        self.check_runs(GpuRuntime::Hip)?;
        let info = code_object::parse(image)
            .map_err(|err| LaunchError::CodeObjectMalformed { reason: err.0 })?;
        let entries = info.kernels.iter().map(|kernel| kernel.entry()).collect();
        let target_name = info.processor().map(str::to_string);
        let backend = match &self.backend {
            Backend::Emulator => ModuleBackend::Emulator,
            #[cfg(feature = "hip")]
            Backend::Hip(context) => {
                let what = target_name.as_deref().unwrap_or("of unknown processor");
                ModuleBackend::Hip(super::hip::HipModule::load(
                    context,
                    image,
                    info.kernels,
                    what,
                )?)
            }
            #[cfg(feature = "cuda")]
            Backend::Gpu(_) => return Err(code_mismatch(&self.described(), GpuRuntime::Cuda)),
        };
        Ok(Module {
            id: NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed),
            device_id: self.id,
            entries,
            target: None,
            target_name,
            selection: None,
            host_only: false,
            code_object: true,
            backend,
            emulated: self.emulated,
        })
    }

    /// Loads the member of `code` this device runs: on a CUDA GPU the PTX
    /// ([`load_ptx_set`](Device::load_ptx_set)); on a HIP GPU the first code object of
    /// `code.amdgpu` that the runtime loads (a code object runs only on its processor); on the
    /// emulator the PTX set's, else the first code object's, entries. The module's
    /// [`selection`](Module::selection) says which was loaded and why.
    pub fn load_code(&self, code: &DeviceCode) -> Result<Module, LaunchError> {
        match self.gpu_runtime() {
            Some(GpuRuntime::Cuda) => self.load_ptx_set(&code.ptx),
            None if !code.ptx.is_empty() || code.amdgpu.is_empty() => self.load_ptx_set(&code.ptx),
            None => {
                let (processor, mut module) =
                    first_that_loads(&code.amdgpu, &self.described(), &code.ptx.sms(), |image| {
                        self.load_code_object(image)
                    })?;
                module.selection = Some(format!(
                    "{processor} of [{}] on {}: the emulator reads the first code object's \
                     kernels and runs the host build",
                    code.amdgpu.processors().join(", "),
                    self.described()
                ));
                Ok(module)
            }
            Some(GpuRuntime::Hip) => {
                let (processor, mut module) =
                    first_that_loads(&code.amdgpu, &self.described(), &code.ptx.sms(), |image| {
                        self.load_code_object(image)
                    })?;
                module.selection = Some(format!(
                    "{processor} of [{}] on {}: the first code object the HIP runtime loads",
                    code.amdgpu.processors().join(", "),
                    self.described()
                ));
                Ok(module)
            }
        }
    }
}

/// The error for code of the other runtime than `own`, the runtime of `device`.
pub(super) fn code_mismatch(device: &str, own: GpuRuntime) -> LaunchError {
    let reason = match own {
        GpuRuntime::Cuda => {
            "a CUDA GPU runs PTX, not AMD code objects; load the kernels' PTX \
             (Device::load_ptx_set, or Device::load_code with the PTX in the DeviceCode)"
        }
        GpuRuntime::Hip => {
            "a HIP GPU runs AMD code objects (built for amdgcn-amd-amdhsa), not PTX; load one \
             (Device::load_code_object, or Device::load_code with code objects in the DeviceCode)"
        }
    };
    LaunchError::NoCodeForDevice {
        device: device.to_string(),
        reason: reason.to_string(),
    }
}

/// The first code object of `set`, in order, that `load` loads, with its processor; an error
/// when the set is empty (naming the PTX targets `ptx` the kernel crate has instead) or when
/// every code object fails (each processor with its error).
fn first_that_loads<T>(
    set: &CodeObjectSet,
    device: &str,
    ptx: &[super::Sm],
    mut load: impl FnMut(&'static [u8]) -> Result<T, LaunchError>,
) -> Result<(&'static str, T), LaunchError> {
    let no_code = |reason: String| LaunchError::NoCodeForDevice {
        device: device.to_string(),
        reason,
    };
    if set.is_empty() {
        let ptx: Vec<String> = ptx.iter().map(|sm| sm.to_string()).collect();
        return Err(no_code(format!(
            "the kernels have no AMD code object (amdgcn-amd-amdhsa){}",
            if ptx.is_empty() {
                String::new()
            } else {
                format!("; their PTX ({}) runs only on CUDA GPUs", ptx.join(", "))
            }
        )));
    }
    let mut failures = Vec::new();
    for &(processor, image) in set.targets() {
        match load(image) {
            Ok(loaded) => return Ok((processor, loaded)),
            Err(err) => failures.push(format!("{processor}: {err}")),
        }
    }
    Err(no_code(format!(
        "none of the code objects loads ({})",
        failures.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{DeviceKind, KernelArgs, PtxSet, Sm};

    /// Linked by rustc for gfx942 from `testdata/scale_fill.amdgcn.rs`: kernels
    /// `scale(*const f32, *mut f32, u32, f32)` and `fill(*mut u64, u64)`.
    const SCALE_FILL: &[u8] = include_bytes!("testdata/scale_fill.gfx942.hsaco");

    #[test]
    fn the_first_code_object_that_loads_is_taken_in_order() {
        static SET: CodeObjectSet =
            CodeObjectSet::new(&[("gfx90a", b"a"), ("gfx942", b"b"), ("gfx950", b"c")]);
        let mut tried = Vec::new();
        let (processor, loaded) = first_that_loads(&SET, "dev", &[], |image| {
            tried.push(image[0]);
            match image {
                b"b" | b"c" => Ok(image[0]),
                _ => Err(LaunchError::CodeObjectMalformed {
                    reason: "no".into(),
                }),
            }
        })
        .unwrap();
        assert_eq!((processor, loaded), ("gfx942", b'b'));
        assert_eq!(tried, b"ab");
        let err = first_that_loads(&SET, "HIP GPU X", &[], |_| -> Result<(), _> {
            Err(LaunchError::CodeObjectMalformed {
                reason: "wrong ISA".into(),
            })
        })
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("no code to load on HIP GPU X: none of the code objects loads"));
        for processor in ["gfx90a", "gfx942", "gfx950"] {
            assert!(err.contains(&format!(
                "{processor}: malformed AMD code object: wrong ISA"
            )));
        }
    }

    #[test]
    fn a_kernel_set_without_code_objects_is_a_clear_error() {
        let err = first_that_loads(
            &CodeObjectSet::empty(),
            "HIP GPU X",
            &[Sm::SM_80, Sm::SM_90A],
            |_| -> Result<(), _> { unreachable!("nothing to load") },
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "no code to load on HIP GPU X: the kernels have no AMD code object \
             (amdgcn-amd-amdhsa); their PTX (sm_80, sm_90a) runs only on CUDA GPUs"
        );
        // The emulator has no code of either kind to read the kernels from.
        let device = Device::emulator();
        let empty = DeviceCode::ptx(PtxSet::new(&[]));
        let err = device.load_code(&empty).unwrap_err().to_string();
        assert!(err.contains("the PTX set is empty"), "{err}");
    }

    /// The gfx942 code object of `scale` and `fill`, loaded on `device` as a kernel set's only
    /// code.
    fn scale_fill_module(device: &Device) -> crate::launch::Module {
        static CODE: DeviceCode = DeviceCode {
            ptx: PtxSet::new(&[]),
            amdgpu: CodeObjectSet::new(&[("gfx942", SCALE_FILL)]),
        };
        device.load_code(&CODE).unwrap()
    }

    #[test]
    fn launches_are_checked_against_a_code_objects_kernels_on_the_emulator() {
        let device = Device::emulator();
        let module = scale_fill_module(&device);
        assert_eq!(module.target_name(), Some("gfx942"));
        assert!(module
            .selection()
            .unwrap()
            .starts_with("gfx942 of [gfx942] on "));
        let mut names = module.entry_names();
        names.sort();
        assert_eq!(names, ["fill", "scale"]);
        let x = device.upload(&[2.0f32]).unwrap();
        let out = device.zeros::<f32>(1).unwrap();
        // `scale` takes (ptr, ptr, u32, f32): a u64 third argument is 8 bytes, not 4.
        let params = (x.ptr(), out.ptr(), 1u64, 3.0f32).kernel_params();
        let err = module.check_args("scale", &params).unwrap_err().to_string();
        assert!(err.contains("parameter 2 is 4 bytes"), "{err}");
        let params = (x.ptr(), out.ptr(), 1u32, 3.0f32).kernel_params();
        module.check_args("scale", &params).unwrap();
        let err = module.check_args("scal", &params).unwrap_err().to_string();
        assert!(err.contains("kernel `scal` is not an entry"), "{err}");
        assert!(module.is_code_object());
    }

    #[test]
    fn a_kernel_with_nvidia_only_instructions_is_named_as_such_on_a_code_object() {
        let device = Device::emulator();
        let module = scale_fill_module(&device);
        let kernel = |name: &'static str, nvidia_only: &'static [&'static str]| crate::Kernel {
            name,
            emulate: |_: ()| {},
            targets: crate::KernelTargets::Every,
            tensor_maps: &[],
            nvidia_only,
            amdgpu_entry: None,
        };
        // A `#[tile_kernel]` variant with a `dot`: no AMD kernel, and the error says why.
        let err = module
            .resolve(kernel("tile_matmul", &["ldmatrix", "mma.sync"]))
            .unwrap_err();
        assert!(matches!(err, LaunchError::NvidiaOnly { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with(
                "kernel `tile_matmul` has no AMD kernel (gfx942): it uses ldmatrix, mma.sync, \
                 which only NVIDIA GPUs have"
            ),
            "{text}"
        );
        // A kernel that could be an AMD kernel but is not in this code object: not an entry.
        let err = module.resolve(kernel("scal", &[])).unwrap_err().to_string();
        assert!(err.contains("kernel `scal` is not an entry"), "{err}");
        // The same kernel resolves when the code object has it.
        module.resolve(kernel("scale", &[])).unwrap();
        // A variant that shares another's amdgpu kernel resolves to that one's entry in a code
        // object, and to its own name in PTX.
        let shared = crate::Kernel {
            amdgpu_entry: Some("scale"),
            ..kernel("scale__num_stages_2", &[])
        };
        let resolved = module.resolve(shared).unwrap();
        let index = module
            .entry_names()
            .iter()
            .position(|n| n == "scale")
            .unwrap();
        assert_eq!(resolved.index as usize, index);
        // A kernel for sm_90a alone among NVIDIA's targets (`targets = [sm_90a]`) is a code
        // object's kernel when it has AMD code, and refused as NVIDIA-only when it has none.
        let sm90a = |name, nvidia_only| crate::Kernel {
            targets: crate::KernelTargets::Sm90aOnly,
            ..kernel(name, nvidia_only)
        };
        module.resolve(sm90a("scale", &[])).unwrap();
        let err = module
            .resolve(sm90a("hopper_scale", &["wgmma"]))
            .unwrap_err();
        assert!(matches!(err, LaunchError::NvidiaOnly { .. }), "{err:?}");
        // PTX modules never say so: their kernels are NVIDIA's.
        let ptx = device
            .load_ptx(
                ".version 7.8\n.target sm_80\n.visible .entry scale(.param .u64 p)\n{ ret; }\n",
            )
            .unwrap();
        assert!(!ptx.is_code_object());
        let err = ptx
            .resolve(kernel("tile_matmul", &["mma.sync"]))
            .unwrap_err();
        assert!(matches!(err, LaunchError::KernelNotFound { .. }), "{err:?}");
    }

    #[test]
    fn a_malformed_code_object_is_refused() {
        let err = Device::emulator()
            .load_code_object(b"\x7fELF not really")
            .unwrap_err();
        assert!(
            matches!(err, LaunchError::CodeObjectMalformed { .. }),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("malformed AMD code object: "));
    }

    #[test]
    fn the_hip_setting_says_why_it_cannot_be_used() {
        match Device::from_setting("hip") {
            Ok(device) => assert_eq!(device.gpu_runtime(), Some(GpuRuntime::Hip)),
            Err(err) => {
                let err = err.to_string();
                assert!(
                    err.starts_with("no usable GPU: TESSERA_DEVICE=hip asks for a HIP GPU, but "),
                    "{err}"
                );
                #[cfg(not(feature = "hip"))]
                assert!(
                    err.ends_with("built without tessera's `hip` feature"),
                    "{err}"
                );
                // Where the runtime library is missing, the error is the loader's.
                #[cfg(feature = "hip")]
                if let Err(missing) = crate::launch::hip_sys::api() {
                    assert!(err.ends_with(&missing), "{err}");
                    assert!(missing.contains("libamdhip64.so"), "{missing}");
                }
            }
        }
        let auto = Device::from_setting("auto").unwrap();
        if auto.kind() == DeviceKind::Emulator {
            let note = auto.selection_note();
            assert!(note.starts_with("auto: CUDA: "), "{note}");
            assert!(note.contains("; HIP: no usable GPU: "), "{note}");
            assert!(note.ends_with("; using the emulator"), "{note}");
        }
        let bad = Device::from_setting("amd").unwrap_err().to_string();
        assert!(bad.contains("`hip`"), "{bad}");
    }
}
