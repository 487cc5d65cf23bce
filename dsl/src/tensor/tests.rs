use super::*;
use crate::launch::{LaunchConfig, Stream};
use crate::{Kernel, KernelTargets, Ptr};

/// `out[i] = a[i] · scale + 1` for `i < n`, on one thread (a host-built kernel for the stream
/// tests; the emulator calls it on its single simulated thread).
fn scale_add_one(args: (Ptr<f32>, Ptr<f32>, u32, f32)) {
    let (a, out, n, scale) = args;
    for i in 0..n as isize {
        // SAFETY: the launches below pass tensors of at least `n` elements.
        unsafe { *out.offset(i).as_raw() = *a.offset(i).as_raw() * scale + 1.0 };
    }
}

const KERNEL: Kernel<(Ptr<f32>, Ptr<f32>, u32, f32)> = Kernel {
    name: "scale_add_one",
    emulate: scale_add_one,
    targets: KernelTargets::Every,
    tensor_maps: &[],
    nvidia_only: &[],
    amdgpu_entry: None,
};

fn enqueue(
    stream: &Stream<'_>,
    module: &crate::launch::Module,
    a: &impl AsTensorRef<f32>,
    out: &mut impl AsTensorMut<f32>,
    scale: f32,
) -> Result<(), LaunchError> {
    let (a, out) = (a.tensor_ref(), out.tensor_mut());
    let (pa, [n], _) = a.kernel_parts::<1>("scale_add_one", "a")?;
    let (po, [m], _) = out.kernel_parts::<1>("scale_add_one", "out")?;
    assert_eq!(n, m);
    stream.launch(
        module,
        KERNEL,
        LaunchConfig::linear(1, 1),
        (pa, po, n as u32, scale),
        &[a.use_read(), out.use_write()],
    )
}

#[test]
fn views_read_and_write_without_copies() {
    let device = Device::emulator();
    let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let mut t = Tensor::from_slice(&device, &data, &[3, 4]).unwrap();
    assert_eq!(
        (t.sizes(), t.strides()),
        (&[3usize, 4][..], &[4usize, 1][..])
    );
    assert_eq!(t.to_vec().unwrap(), data);
    let tr = t.view().transpose(0, 1).unwrap();
    assert_eq!(tr.to_vec().unwrap()[..4], [0.0, 4.0, 8.0, 1.0]);
    assert_eq!(
        t.view()
            .narrow(0, 1, 1)
            .unwrap()
            .reshape(&[2, 2])
            .unwrap()
            .to_vec()
            .unwrap(),
        [4.0, 5.0, 6.0, 7.0]
    );
    // Writing a strided view touches only its elements.
    t.view_mut()
        .slice(1, 2..3)
        .unwrap()
        .copy_from(&[-1.0, -2.0, -3.0])
        .unwrap();
    let all = t.to_vec().unwrap();
    assert_eq!((all[2], all[6], all[10], all[3]), (-1.0, -2.0, -3.0, 3.0));
    let err = t.copy_from(&[0.0; 5]).unwrap_err().to_string();
    assert!(err.contains("holds 12 elements, the host data 5"), "{err}");
    let z = Tensor::<i32>::zeros(&device, &[2, 0]).unwrap();
    assert!(z.to_vec().unwrap().is_empty());
    // Explicit strides are checked against the allocation.
    let err = t
        .view()
        .as_strided(&[3, 4], &[5, 1], 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("reach element 13 of an allocation of 12 elements"),
        "{err}"
    );
}

#[test]
fn a_launch_checks_rank_and_extent() {
    let device = Device::emulator();
    let t = Tensor::from_slice(&device, &[1.0f32; 6], &[2, 3]).unwrap();
    let err = t
        .view()
        .kernel_parts::<1>("k", "x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("argument `x` of kernel `k`: the kernel takes a tensor of rank 1, this one has sizes [2, 3] (rank 2)"), "{err}");
    let (ptr, sizes, strides) = t
        .view()
        .slice(1, 1..3)
        .unwrap()
        .kernel_parts::<2>("k", "x")
        .unwrap();
    assert_eq!((sizes, strides), ([2, 2], [3, 1]));
    assert_eq!(
        ptr.addr(),
        t.view().kernel_parts::<2>("k", "x").unwrap().0.addr() + 4
    );
}

/// Each size and stride fits an `i32`, but the offsets the kernel computes from them
/// (`Σ index · stride`, `i32`s too) would not: refused before anything runs.
#[test]
fn a_launch_checks_the_offsets_fit_the_kernels_i32() {
    let device = Device::emulator();
    let len = 3usize << 30;
    // SAFETY: no memory is behind this address, and nothing reads or writes it: the views are
    // only checked (`kernel_parts` reads sizes and strides, never elements).
    let t = unsafe { Tensor::<u8>::from_raw_parts(&device, 1 << 40, len, &[len]) }.unwrap();
    let err = t
        .view()
        .slice(0, 0..(1 << 31))
        .unwrap()
        .kernel_parts::<1>("k", "x")
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("size 2147483648 does not fit the kernel's i32"),
        "{err}"
    );
    let rows = t
        .view()
        .as_strided(&[3, 1 << 30], &[1 << 30, 1], 0)
        .unwrap();
    let err = rows.kernel_parts::<2>("k", "x").unwrap_err().to_string();
    assert_eq!(
        err,
        "argument `x` of kernel `k`: sizes [3, 1073741824] with strides [1073741824, 1] reach \
         element 3221225471 from the view's first, past the kernel's i32 offsets (at most \
         2147483647)"
    );
    let fits = t
        .view()
        .as_strided(&[2, 1 << 30], &[1 << 30, 1], 0)
        .unwrap();
    assert!(fits.kernel_parts::<2>("k", "x").is_ok());
}

#[test]
fn stream_work_must_be_synchronised_before_the_host_reads() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let a = Tensor::from_slice(&device, &[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[3]).unwrap();
    enqueue(&stream, &module, &a, &mut out, 2.0).unwrap();
    // Reading the output (or writing the input) before synchronising is an error.
    let err = out.to_vec().unwrap_err().to_string();
    assert!(
        err.starts_with("reading a tensor on the host without synchronisation"),
        "{err}"
    );
    let mut a = a;
    assert!(a.copy_from(&[0.0; 3]).is_err());
    // Reading an input only read by pending work is fine.
    assert_eq!(a.to_vec().unwrap(), [1.0, 2.0, 3.0]);
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), [3.0, 5.0, 7.0]);
    a.copy_from(&[0.0; 3]).unwrap();
}

/// A dropped stream waits for its work, which is then done: the host reads what it wrote (no
/// one could synchronise the stream any more).
#[test]
fn a_dropped_streams_work_is_done() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let a = Tensor::from_slice(&device, &[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[3]).unwrap();
    {
        let stream = device.stream().unwrap();
        enqueue(&stream, &module, &a, &mut out, 2.0).unwrap();
        assert!(out.to_vec().is_err());
    }
    assert_eq!(out.to_vec().unwrap(), [3.0, 5.0, 7.0]);
}

#[test]
fn two_streams_are_ordered_by_an_event() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let (first, second) = (device.stream().unwrap(), device.stream().unwrap());
    let a = Tensor::from_slice(&device, &[1.0f32, 2.0], &[2]).unwrap();
    let mut mid = Tensor::<f32>::zeros(&device, &[2]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[2]).unwrap();
    let start = first.record_event().unwrap();
    enqueue(&first, &module, &a, &mut mid, 10.0).unwrap();
    // The second stream reads `mid`, which the first writes: refused without an event wait.
    let err = enqueue(&second, &module, &mid, &mut out, 1.0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("has not waited for an event recorded after it"),
        "{err}"
    );
    let done = first.record_event().unwrap();
    second.wait_event(&done).unwrap();
    enqueue(&second, &module, &mid, &mut out, 1.0).unwrap();
    // Waiting for the second stream's work is not enough to read `mid`, written by the first...
    second.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), [12.0, 22.0]);
    assert!(mid.to_vec().is_err());
    // ...until the first's event is synchronised.
    done.synchronize().unwrap();
    assert_eq!(mid.to_vec().unwrap(), [11.0, 21.0]);
    assert!(start.elapsed_ms(&done).unwrap() >= 0.0);
}

#[test]
fn a_captured_graph_replays_its_launches() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let a = Tensor::from_slice(&device, &[1.0f32, -1.0], &[2]).unwrap();
    let mut mid = Tensor::<f32>::zeros(&device, &[2]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[2]).unwrap();
    stream.begin_capture().unwrap();
    enqueue(&stream, &module, &a, &mut mid, 3.0).unwrap();
    enqueue(&stream, &module, &mid, &mut out, 2.0).unwrap();
    assert!(
        stream.synchronize().is_err(),
        "synchronising while capturing"
    );
    let graph = stream.end_capture().unwrap();
    // Capturing ran nothing.
    assert_eq!(out.to_vec().unwrap(), [0.0, 0.0]);
    for round in 0..3 {
        graph.launch(&stream).unwrap();
        assert!(
            out.to_vec().is_err(),
            "round {round}: read before synchronising"
        );
        stream.synchronize().unwrap();
        assert_eq!(out.to_vec().unwrap(), [9.0, -3.0]);
    }
    assert!(stream
        .end_capture()
        .unwrap_err()
        .to_string()
        .contains("is not capturing"));
}

#[test]
fn a_stream_holds_memory_and_uploads() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let mut a = Tensor::<f32>::zeros(&device, &[4]).unwrap();
    stream
        .upload(&mut a.view_mut(), &[1.0, 2.0, 3.0, 4.0])
        .unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[4]).unwrap();
    enqueue(&stream, &module, &a, &mut out, 1.0).unwrap();
    drop(a); // the stream keeps its memory until synchronised
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), [2.0, 3.0, 4.0, 5.0]);
    let other = Device::emulator();
    let foreign = Tensor::<f32>::zeros(&other, &[4]).unwrap();
    let err = enqueue(&stream, &module, &foreign, &mut out, 1.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("another device"), "{err}");
}

#[test]
fn a_snapshot_restores_the_memory_a_view_reaches() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let mut t = Tensor::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6]).unwrap();
    let a = Tensor::from_slice(&device, &[10.0f32; 3], &[3]).unwrap();
    {
        // Every other element: the snapshot spans elements 0..=4, gaps included.
        let mut odd = t.view_mut().as_strided(&[3], &[2], 0).unwrap();
        let saved = odd.snapshot().unwrap();
        enqueue(&stream, &module, &a, &mut odd, 2.0).unwrap();
        // Pending work writes the view: restoring is refused until the stream is synchronised.
        let err = odd.restore(&saved).unwrap_err().to_string();
        assert!(err.contains("without synchronisation"), "{err}");
        stream.synchronize().unwrap();
        // (The test kernel ignores strides: it wrote elements 0, 1 and 2, a gap included.)
        assert_eq!(odd.to_vec().unwrap(), [21.0, 21.0, 5.0]);
        odd.restore(&saved).unwrap();
        // A snapshot of other memory is refused.
        let mut other = Tensor::<f32>::zeros(&device, &[3]).unwrap();
        let err = other.view_mut().restore(&saved).unwrap_err().to_string();
        assert!(
            err.starts_with("restoring a tensor: the snapshot holds 20 bytes"),
            "{err}"
        );
    }
    assert_eq!(t.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn timing_on_a_stream_checks_and_records_the_tensors() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let (stream, other) = (device.stream().unwrap(), device.stream().unwrap());
    let a = Tensor::from_slice(&device, &[1.0f32; 4], &[4]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[4]).unwrap();
    let kernel = module.resolve(KERNEL).unwrap();
    let options = crate::launch::TimingOptions {
        warmup: 1,
        repetitions: 2,
        l2_flush_bytes: 0,
    };
    let time = |stream: &Stream<'_>, out: &mut Tensor<f32>| {
        let (a, out) = (a.view(), out.view_mut());
        let (pa, _, _) = a.kernel_parts::<1>("scale_add_one", "a")?;
        let (po, _, _) = out.kernel_parts::<1>("scale_add_one", "out")?;
        stream.time_launches(
            &module,
            &kernel,
            LaunchConfig::linear(1, 1),
            (pa, po, 4u32, 3.0f32),
            &[a.use_read(), out.use_write()],
            options,
        )
    };
    // Another stream's pending write of `out` is refused, as for a launch.
    enqueue(&other, &module, &a, &mut out, 1.0).unwrap();
    let err = time(&stream, &mut out).unwrap_err().to_string();
    assert!(err.contains("without synchronisation"), "{err}");
    other.synchronize().unwrap();
    let timing = time(&stream, &mut out).unwrap();
    assert_eq!(timing.samples_ms.len(), 2);
    // The timed launches are done when it returns: the host may read at once.
    assert_eq!(out.to_vec().unwrap(), [4.0; 4]);
}
