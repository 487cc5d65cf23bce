//! Launcher tests on the emulator. The kernels here are plain host functions (what a kernel
//! crate's host build provides as `Kernel::emulate`), so they exercise the launcher's plumbing:
//! every simulated thread runs, arguments arrive intact, and bad launches are refused.

use super::*;
use crate::emulator::EmulatedTarget;
use crate::KernelTargets;
use std::sync::atomic::{AtomicU32, Ordering};

/// A module with the entries the test kernels below claim to be.
const TEST_PTX: &str = r#"
.version 7.8
.target sm_80
.address_size 64
.visible .entry count_threads(
	.param .u64 count_threads_param_0
)
{ ret; }
.visible .entry store_scalars(
	.param .u64 store_scalars_param_0,
	.param .u32 store_scalars_param_1,
	.param .u32 store_scalars_param_2,
	.param .u64 store_scalars_param_3,
	.param .f32 store_scalars_param_4
)
{ ret; }
"#;

/// Every thread adds 1 to `counter[0]`.
fn count_threads((counter,): (Ptr<u32>,)) {
    // SAFETY: the launcher checked that `counter` points into a live buffer of ≥ 1 u32, aligned
    // to 256 bytes.
    let counter = unsafe { AtomicU32::from_ptr(counter.as_raw()) };
    counter.fetch_add(1, Ordering::Relaxed);
}

const COUNT_THREADS: Kernel<(Ptr<u32>,)> = Kernel {
    name: "count_threads",
    emulate: count_threads,
    targets: KernelTargets::Every,
    tensor_maps: &[],
    nvidia_only: &[],
    amdgpu_entry: None,
};

/// Writes its scalar arguments to `out[0..4]` as raw 32-bit words (all threads write the same).
fn store_scalars((out, a, b, c, d): (Ptr<u32>, u32, i32, u64, f32)) {
    let words = [a, b as u32, (c >> 32) as u32, d.to_bits()];
    for (i, word) in words.into_iter().enumerate() {
        // SAFETY: `out` holds ≥ 4 elements (the tests allocate 4).
        unsafe { out.as_raw().add(i).write_volatile(word) };
    }
}

const STORE_SCALARS: Kernel<(Ptr<u32>, u32, i32, u64, f32)> = Kernel {
    name: "store_scalars",
    emulate: store_scalars,
    targets: KernelTargets::Every,
    tensor_maps: &[],
    nvidia_only: &[],
    amdgpu_entry: None,
};

fn emulator_with_module() -> (Device, Module) {
    let device = Device::emulator();
    let module = device.load_ptx(TEST_PTX).expect("test PTX loads");
    (device, module)
}

#[test]
fn every_thread_of_the_grid_runs_once() {
    let (device, module) = emulator_with_module();
    let counter = device.zeros::<u32>(1).unwrap();
    let config = LaunchConfig {
        grid: [3, 2, 1],
        block: [32, 2, 1],
        shared_bytes: 0,
    };
    let report = device
        .launch(&module, COUNT_THREADS, config, (counter.ptr(),))
        .unwrap();
    assert!(report.emulator_report().is_some());
    assert_eq!(counter.download().unwrap(), vec![3 * 2 * 32 * 2]);
}

/// A kernel built for sm_90a only launches on the emulator while it emulates sm_90a (its
/// entry is not in the sm_80 test PTX: it runs the host build) and is refused otherwise, naming
/// the target it needs and the one the launch runs.
#[test]
fn sm90a_only_kernels_launch_only_when_emulating_sm90a() {
    let (device, module) = emulator_with_module();
    let kernel = Kernel {
        name: "count_threads_sm90a",
        emulate: count_threads,
        targets: KernelTargets::Sm90aOnly,
        tensor_maps: &[],
        nvidia_only: &[],
        amdgpu_entry: None,
    };
    let counter = device.zeros::<u32>(1).unwrap();
    let config = LaunchConfig {
        grid: [2, 1, 1],
        block: [32, 1, 1],
        shared_bytes: 0,
    };
    let on = |target| {
        crate::emulator::with_target(target, || {
            device.launch(&module, kernel, config, (counter.ptr(),))
        })
    };
    on(EmulatedTarget::Sm90a).unwrap();
    assert_eq!(counter.download().unwrap(), [64]);
    let refused = on(EmulatedTarget::Sm80).unwrap_err();
    assert!(
        matches!(&refused, LaunchError::UnsupportedTarget { needs, running, .. }
            if needs == "sm_90a" && running == "sm_80 on the emulator"),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("built for sm_90a only"),
        "{refused}"
    );
    assert_eq!(counter.download().unwrap(), [64], "the refused launch ran");
    // sm_90a is the PTX target it needs: emulating amdgpu, it runs its amdgpu code, and
    // without any it is refused as NVIDIA-only.
    on(EmulatedTarget::Amdgpu).unwrap();
    assert_eq!(counter.download().unwrap(), [128]);
    let wgmma_only = Kernel {
        nvidia_only: &["wgmma"],
        ..kernel
    };
    let refused = crate::emulator::with_target(EmulatedTarget::Amdgpu, || {
        device.launch(&module, wgmma_only, config, (counter.ptr(),))
    })
    .unwrap_err();
    assert!(
        matches!(&refused, LaunchError::NvidiaOnly { instructions, .. } if instructions == &["wgmma"]),
        "{refused}"
    );
    assert_eq!(counter.download().unwrap(), [128], "the refused launch ran");
    // A kernel for every target must be an entry of the module.
    let missing = Kernel {
        targets: KernelTargets::Every,
        tensor_maps: &[],
        nvidia_only: &[],
        amdgpu_entry: None,
        ..kernel
    };
    assert!(matches!(
        device.launch(&module, missing, config, (counter.ptr(),)),
        Err(LaunchError::KernelNotFound { .. })
    ));
}

/// Emulating amdgpu: a kernel with NVIDIA-only instructions (no amdgpu body) is refused as an
/// AMD code object refuses it, naming them; a kernel without runs; a hand-written kernel that
/// executes an NVIDIA-only instruction stops with an error naming it and its call site.
#[test]
fn emulating_amdgpu_refuses_nvidia_only_kernels_and_instructions() {
    let (device, module) = emulator_with_module();
    let counter = device.zeros::<u32>(1).unwrap();
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        shared_bytes: 256,
    };
    let on_amd = |kernel| {
        crate::emulator::with_target(EmulatedTarget::Amdgpu, || {
            device.launch(&module, kernel, config, (counter.ptr(),))
        })
    };
    on_amd(COUNT_THREADS).unwrap();
    assert_eq!(counter.download().unwrap(), [32]);
    let nvidia = Kernel {
        nvidia_only: &["mma.sync"],
        ..COUNT_THREADS
    };
    let refused = on_amd(nvidia).unwrap_err();
    assert!(
        matches!(&refused, LaunchError::NvidiaOnly { processor, instructions, .. }
            if processor == "amdgpu on the emulator" && instructions == &["mma.sync"]),
        "{refused}"
    );
    assert_eq!(counter.download().unwrap(), [32], "the refused launch ran");
    device
        .launch(&module, nvidia, config, (counter.ptr(),))
        .expect("runs emulating sm_80");
    assert_eq!(counter.download().unwrap(), [64]);
    // Hand-written code executing `ldmatrix`.
    fn reads_by_ldmatrix((_counter,): (Ptr<u32>,)) {
        let row = crate::device::dynamic_shared_base() + 16 * (crate::device::lane_id() % 8);
        // SAFETY: every lane executes it; the rows are 16-byte aligned, inside 256 bytes.
        let _ = unsafe { crate::device::ldmatrix_x1(row) };
    }
    let ldmatrix = Kernel {
        emulate: reads_by_ldmatrix,
        ..COUNT_THREADS
    };
    device
        .launch(&module, ldmatrix, config, (counter.ptr(),))
        .expect("runs emulating sm_80");
    let failed = on_amd(ldmatrix).unwrap_err();
    let message = failed.to_string();
    assert!(
        message.contains("ldmatrix at ") && message.contains("an NVIDIA-only instruction"),
        "{message}"
    );
    // The device `TESSERA_DEVICE=emulator-amd` chooses emulates amdgpu by itself; a launch may
    // still say otherwise.
    let amd = Device::from_setting("emulator-amd").unwrap();
    assert_eq!(
        amd.emulated_target().unwrap().unwrap(),
        EmulatedTarget::Amdgpu
    );
    let amd_module = amd.load_ptx(TEST_PTX).unwrap();
    let amd_counter = amd.zeros::<u32>(1).unwrap();
    let refused = amd
        .launch(&amd_module, nvidia, config, (amd_counter.ptr(),))
        .unwrap_err();
    assert!(
        matches!(refused, LaunchError::NvidiaOnly { .. }),
        "{refused}"
    );
    crate::emulator::with_target(EmulatedTarget::Sm80, || {
        amd.launch(&amd_module, nvidia, config, (amd_counter.ptr(),))
    })
    .expect("runs when the launch emulates sm_80");
    assert_eq!(amd_counter.download().unwrap(), [32]);
    assert_eq!(
        device.emulated_target().unwrap().unwrap(),
        EmulatedTarget::Sm80
    );
}

#[test]
fn scalar_arguments_arrive_unchanged() {
    let (device, module) = emulator_with_module();
    let out = device.zeros::<u32>(4).unwrap();
    let args = (
        out.ptr(),
        0xdead_beef_u32,
        -7i32,
        0x1234_5678_0000_0000u64,
        1.5f32,
    );
    device
        .launch(&module, STORE_SCALARS, LaunchConfig::linear(1, 1), args)
        .unwrap();
    assert_eq!(
        out.download().unwrap(),
        vec![0xdead_beef, (-7i32) as u32, 0x1234_5678, 1.5f32.to_bits()]
    );
}

#[test]
fn buffers_round_trip_and_check_lengths() {
    let device = Device::emulator();
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 3.0).collect();
    let mut buffer = device.upload(&data).unwrap();
    assert_eq!(buffer.len(), 1000);
    assert_eq!(buffer.size_bytes(), 4000);
    assert_eq!(buffer.ptr().addr() % emulated::ALIGNMENT as u64, 0);
    assert_eq!(buffer.download().unwrap(), data);
    let replacement: Vec<f32> = data.iter().map(|x| -x).collect();
    buffer.copy_from_host(&replacement).unwrap();
    assert_eq!(buffer.download().unwrap(), replacement);
    let err = buffer.copy_from_host(&data[..10]).unwrap_err();
    assert!(
        matches!(
            err,
            LaunchError::LengthMismatch {
                expected: 1000,
                got: 10,
                ..
            }
        ),
        "{err}"
    );
    let mut short = vec![0f32; 3];
    assert!(buffer.copy_to_host(&mut short).is_err());

    let zeros = device.zeros::<i32>(17).unwrap();
    assert_eq!(zeros.download().unwrap(), vec![0; 17]);
    let empty = device.upload::<i32>(&[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.ptr().addr(), 0);
    assert_eq!(empty.download().unwrap(), Vec::<i32>::new());
    assert!(buffer.belongs_to(&device) && !buffer.belongs_to(&Device::emulator()));
    let err = device.zeros::<u64>(usize::MAX / 2).unwrap_err();
    assert!(matches!(err, LaunchError::Allocation { .. }), "{err}");
}

/// A kernel named `name` for every target whose host build does nothing.
fn idle_kernel<A>(name: &'static str) -> Kernel<A> {
    Kernel {
        name,
        emulate: |_| {},
        targets: KernelTargets::Every,
        tensor_maps: &[],
        nvidia_only: &[],
        amdgpu_entry: None,
    }
}

/// The message of the error that refuses a one-thread launch of `kernel` with `args`.
fn refusal<A: KernelArgs>(device: &Device, module: &Module, kernel: Kernel<A>, args: A) -> String {
    device
        .launch(module, kernel, LaunchConfig::linear(1, 1), args)
        .unwrap_err()
        .to_string()
}

#[test]
fn unknown_kernels_and_mismatched_arguments_are_refused() {
    let (device, module) = emulator_with_module();
    assert_eq!(module.entry_names(), ["count_threads", "store_scalars"]);
    assert_eq!(module.target(), Some((8, 0, false)));
    let counter = device.zeros::<u32>(4).unwrap();

    let missing = Kernel {
        name: "not_there",
        ..COUNT_THREADS
    };
    let err = refusal(&device, &module, missing, (counter.ptr(),));
    assert!(err.contains("count_threads, store_scalars"), "{err}");

    let two_args = idle_kernel::<(Ptr<u32>, u32)>("count_threads");
    let err = refusal(&device, &module, two_args, (counter.ptr(), 1));
    assert!(
        err.contains("takes 1 parameters, the Rust handle passes 2"),
        "{err}"
    );

    // The PTX says parameter 1 is a .u32; a u64 argument is 8 bytes.
    let wide = idle_kernel::<(Ptr<u32>, u64, i32, u64, f32)>("store_scalars");
    let err = refusal(&device, &module, wide, (counter.ptr(), 1, 2, 3, 4.0));
    assert!(err.contains("parameter 1 is 4 bytes in the PTX"), "{err}");
    assert_eq!(
        counter.download().unwrap(),
        vec![0; 4],
        "refused launches must not run"
    );
}

#[test]
fn pointers_must_point_into_live_buffers_of_this_device() {
    let (device, module) = emulator_with_module();
    let config = LaunchConfig::linear(1, 1);
    let err = device
        .launch(&module, COUNT_THREADS, config, (Ptr::from_addr(0x1234),))
        .unwrap_err();
    assert!(
        matches!(
            err,
            LaunchError::ForeignPointer {
                index: 0,
                addr: 0x1234,
                ..
            }
        ),
        "{err}"
    );

    let dropped = device.zeros::<u32>(8).unwrap();
    let stale = dropped.ptr();
    drop(dropped);
    assert!(device
        .launch(&module, COUNT_THREADS, config, (stale,))
        .is_err());

    let other_device = Device::emulator();
    let foreign = other_device.zeros::<u32>(1).unwrap();
    assert!(device
        .launch(&module, COUNT_THREADS, config, (foreign.ptr(),))
        .is_err());
    assert!(matches!(
        other_device.launch(&module, COUNT_THREADS, config, (foreign.ptr(),)),
        Err(LaunchError::WrongDevice { .. })
    ));

    // Interior pointers are fine.
    let counters = device.zeros::<u32>(8).unwrap();
    device
        .launch(&module, COUNT_THREADS, config, (counters.ptr().offset(5),))
        .unwrap();
    assert_eq!(counters.download().unwrap(), vec![0, 0, 0, 0, 0, 1, 0, 0]);
}

#[test]
fn unlaunchable_configurations_are_refused() {
    let (device, module) = emulator_with_module();
    let counter = device.zeros::<u32>(1).unwrap();
    let bad = [
        (LaunchConfig::linear(1, 2048), "at most 1024"),
        (LaunchConfig::linear(0, 32), "no zero dimension"),
        (
            LaunchConfig {
                grid: [1, 1, 1],
                block: [1, 1, 65],
                shared_bytes: 0,
            },
            "block z",
        ),
        (
            LaunchConfig {
                grid: [1, 70000, 1],
                block: [32, 1, 1],
                shared_bytes: 0,
            },
            "exceeds the limits",
        ),
    ];
    for (config, expected) in bad {
        let err = device
            .launch(&module, COUNT_THREADS, config, (counter.ptr(),))
            .unwrap_err();
        assert!(err.to_string().contains(expected), "{config:?}: {err}");
    }
    assert_eq!(counter.download().unwrap(), vec![0]);
}

#[test]
fn emulator_timing_is_wall_time_and_runs_warmup_plus_repetitions() {
    let (device, module) = emulator_with_module();
    let counter = device.zeros::<u32>(1).unwrap();
    let options = TimingOptions {
        warmup: 2,
        repetitions: 5,
        l2_flush_bytes: 1 << 20,
    };
    let timing = device
        .time_launches(
            &module,
            COUNT_THREADS,
            LaunchConfig::linear(2, 32),
            (counter.ptr(),),
            options,
        )
        .unwrap();
    assert_eq!(timing.clock, TimingClock::EmulatorWallTime);
    assert_eq!(timing.samples_ms.len(), 5);
    assert!(timing.min_ms <= timing.median_ms && timing.median_ms <= timing.max_ms);
    assert_eq!(counter.download().unwrap(), vec![7 * 64]);
    let none = TimingOptions {
        repetitions: 0,
        ..options
    };
    assert!(device
        .time_launches(
            &module,
            COUNT_THREADS,
            LaunchConfig::linear(1, 1),
            (counter.ptr(),),
            none
        )
        .is_err());
}

#[test]
fn timing_median_of_odd_and_even_sample_counts() {
    let odd = Timing::from_samples(vec![3.0, 1.0, 2.0], TimingClock::CudaEvents);
    assert_eq!((odd.median_ms, odd.min_ms, odd.max_ms), (2.0, 1.0, 3.0));
    let even = Timing::from_samples(vec![4.0, 1.0, 2.0, 3.0], TimingClock::CudaEvents);
    assert_eq!(even.median_ms, 2.5);
    assert_eq!(even.samples_ms, vec![4.0, 1.0, 2.0, 3.0]);
}

#[test]
fn device_setting_is_parsed() {
    assert_eq!(
        Device::from_setting("emulator").unwrap().kind(),
        DeviceKind::Emulator
    );
    assert_eq!(
        Device::from_setting(" EMU ").unwrap().kind(),
        DeviceKind::Emulator
    );
    let err = Device::from_setting("tpu").unwrap_err();
    assert!(err.to_string().contains("TESSERA_DEVICE=\"tpu\""), "{err}");
    // `gpu` either gives the CUDA GPU or says why not; `auto` falls back with a note.
    match Device::gpu(0) {
        Ok(_) => assert_eq!(Device::from_setting("gpu").unwrap().kind(), DeviceKind::Gpu),
        Err(reason) => {
            let err = Device::from_setting("gpu").unwrap_err();
            assert!(
                err.to_string()
                    .contains("TESSERA_DEVICE=gpu asks for the CUDA GPU"),
                "{err}"
            );
            // Without a CUDA GPU, `auto` tries HIP next, then takes the emulator.
            let auto = Device::from_setting("auto").unwrap();
            match auto.gpu_runtime() {
                Some(runtime) => assert_eq!(runtime, super::GpuRuntime::Hip),
                None => assert!(
                    auto.selection_note().contains(&reason.to_string()),
                    "{}",
                    auto.selection_note()
                ),
            }
        }
    }
}

#[test]
fn registry_bounds_include_one_past_the_end() {
    let registry = Registry::default();
    registry.insert(1000, 16);
    registry.insert(2000, 8);
    assert!(registry.contains(1000) && registry.contains(1016) && registry.contains(2008));
    assert!(!registry.contains(999) && !registry.contains(1017) && !registry.contains(2009));
    registry.remove(1000);
    assert!(!registry.contains(1004));
}

#[test]
fn the_emulator_loads_the_oldest_ptx_of_a_set_and_says_so() {
    const SM80: &str =
        ".version 7.8\n.target sm_80\n.visible .entry count_threads(.param .u64 p)\n{ ret; }\n";
    const SM90A: &str = ".version 8.0\n.target sm_90a\n.visible .entry count_threads(.param .u64 p)\n{ ret; }\n.visible .entry hopper_only()\n{ ret; }\n";
    static TARGETS: [(Sm, &str); 2] = [(Sm::SM_80, SM80), (Sm::SM_90A, SM90A)];
    let set = PtxSet::new(&TARGETS);
    let device = Device::emulator();
    assert_eq!(device.select_ptx(&set).unwrap(), (Sm::SM_80, SM80));
    let module = device.load_ptx_set(&set).unwrap();
    assert_eq!(module.entry_names(), ["count_threads"]);
    assert_eq!(module.target_name(), Some("sm_80"));
    let selection = module.selection().unwrap();
    assert!(
        selection.starts_with("sm_80 of [sm_80, sm_90a] on Tessera CPU emulator"),
        "{selection}"
    );
    assert!(format!("{module:?}").contains(selection), "{module:?}");
    assert_eq!(device.load_ptx(SM90A).unwrap().selection(), None);
}

#[test]
fn no_fitting_ptx_is_an_error_listing_the_targets() {
    let err = Device::emulator()
        .load_ptx_set(&PtxSet::new(&[]))
        .unwrap_err();
    assert!(err.to_string().contains("the PTX set is empty"), "{err}");
    let err = LaunchError::NoPtxForDevice {
        device: "GPU NVIDIA B200 (compute capability 10.0)".to_string(),
        targets: vec!["sm_90a".to_string()],
    };
    assert_eq!(
        err.to_string(),
        "none of the embedded PTX targets (sm_90a) runs on GPU NVIDIA B200 (compute capability \
         10.0) (sm_XY runs on compute capability X.Y and newer, sm_XYa only on X.Y); add a target \
         the device runs to the build (PtxBuild::sms, or TESSERA_SM=sm_80,... at build time)"
    );
}
