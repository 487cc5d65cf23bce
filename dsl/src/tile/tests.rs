use super::fmod_f32;

/// Against the host's IEEE `fmod` (Rust's `%` on x86-64 is exact) on special values and a
/// dense sample of bit patterns, including huge quotients and subnormals.
#[test]
fn fmod_is_exact_ieee_remainder() {
    let mut values: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.28890562,
        1e30,
        -1e30,
        1e38,
        1e-38,
        1e-45,
        -1e-45,
        2.7,
        -2.7,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0,
        0.1,
    ];
    let mut s = 0x9e37_79b9_u32;
    for _ in 0..3000 {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        values.push(f32::from_bits(s));
    }
    for &x in &values {
        for &y in values.iter().step_by(7) {
            let want = x % y;
            let got = fmod_f32(x, y);
            if want.is_nan() {
                assert_eq!(got.to_bits(), 0x7fff_ffff, "{x:e} % {y:e}");
            } else {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{x:e} % {y:e}: {got:e} vs {want:e}"
                );
            }
        }
    }
}

/// A launch asks for the dynamic shared memory of the body its module runs: on the emulator the
/// body of the target it emulates (here with an sm_90a PTX module loaded: the emulator's target
/// decides, as it decides which body runs).
#[test]
fn launches_ask_for_the_shared_memory_of_the_body_they_run() {
    use super::{launch_config, Specialisation, TargetSharedBytes};
    use crate::emulator::{with_target, EmulatedTarget};
    let spec = Specialisation::<()> {
        kernel: crate::Kernel {
            name: "k",
            emulate: |_| {},
            targets: crate::KernelTargets::Every,
            tensor_maps: &[],
            nvidia_only: &[],
            amdgpu_entry: None,
        },
        consts: &[],
        num_warps: 4,
        shared_bytes: 3000,
        target_shared_bytes: TargetSharedBytes {
            sm80: 1000,
            sm90a: 3000,
            amdgpu: 2000,
        },
        entry: crate::launch::EntryCache::new(),
    };
    let device = crate::launch::Device::emulator();
    let module = device
        .load_ptx(".version 7.8\n.target sm_90a\n.visible .entry k()\n{ ret; }\n")
        .unwrap();
    let bytes = |target| with_target(target, || launch_config(&spec, [1, 1, 1], &module));
    assert_eq!(bytes(EmulatedTarget::Sm80).shared_bytes, 1000);
    assert_eq!(bytes(EmulatedTarget::Sm90a).shared_bytes, 3000);
    assert_eq!(bytes(EmulatedTarget::Amdgpu).shared_bytes, 2000);
    assert_eq!(bytes(EmulatedTarget::Amdgpu).block, [128, 1, 1]);
}
