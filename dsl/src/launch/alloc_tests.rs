//! The launcher's per-launch host work allocates nothing after the first launch: a counting
//! global allocator (per thread, so other tests running at the same time do not count) around
//! everything a stream launch does before the back end's call — resolving the entry through an
//! [`EntryCache`], packing the arguments, checking device, entry, pointers and tensor uses, and
//! recording the uses on the stream; and a graph replay's checks and recorded uses. (On the
//! emulator the back end then runs the kernel on the host, which allocates; on the GPU it is
//! `cuLaunchKernel` with the packed parameters in stack arrays, or `cuGraphLaunch`.)

use super::*;
use crate::tensor::{Tensor, TensorMut, TensorRef};
use crate::KernelTargets;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a const-initialised thread local
// without a destructor, so counting never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

const SCALE_PTX: &str = r#"
.version 7.8
.target sm_80
.address_size 64
.visible .entry other_entry(
	.param .u64 other_entry_param_0
)
{ ret; }
.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u32 scale_param_1,
	.param .u64 scale_param_2,
	.param .f32 scale_param_3
)
{ ret; }
"#;

type ScaleArgs = (Ptr<f32>, u32, Ptr<f32>, f32);

fn scale(_: ScaleArgs) {}

const SCALE: Kernel<ScaleArgs> = Kernel {
    name: "scale",
    emulate: scale,
    targets: KernelTargets::Every,
    tensor_maps: &[],
    nvidia_only: &[],
    amdgpu_entry: None,
};

/// Runs `test` on the emulator with `SCALE_PTX` loaded, a stream, an input of 64 ones and a
/// zeroed output of 64.
fn with_scale(test: impl FnOnce(&Device, &Module, &Stream<'_>, Tensor<f32>, Tensor<f32>)) {
    let device = Device::emulator();
    let module = device.load_ptx(SCALE_PTX).expect("test PTX loads");
    let stream = device.stream().expect("emulator stream");
    let input = Tensor::from_slice(&device, &[1.0f32; 64], &[64]).expect("input");
    let output = Tensor::<f32>::zeros(&device, &[64]).expect("output");
    test(&device, &module, &stream, input, output);
}

/// `scale`'s arguments for `write = 2 · read`.
fn scale_args(read: &TensorRef<'_, f32>, write: &TensorMut<'_, f32>) -> ScaleArgs {
    let (out, [n], _) = write.kernel_parts::<1>("scale", "out").expect("rank 1");
    let (x, _, _) = read.kernel_parts::<1>("scale", "x").expect("rank 1");
    (out, n as u32, x, 2.0)
}

#[test]
fn launch_checks_and_packing_allocate_nothing_after_the_first_launch() {
    with_scale(|device, module, stream, input, mut output| {
        static CACHE: EntryCache = EntryCache::new();
        let config = LaunchConfig::linear(1, 64);
        let what = || "launching `scale`".to_string();
        let enqueue = |input: &Tensor<f32>, output: &mut Tensor<f32>| {
            let resolved = CACHE.resolve(module, SCALE).expect("resolves");
            let read = input.view();
            let write = output.view_mut();
            let args = scale_args(&read, &write);
            device
                .checked_params(module, &resolved, &config, &args, &[])
                .expect("checks pass");
            stream
                .enqueue_uses(&[read.use_read(), write.use_write()], &what)
                .expect("uses recorded");
            resolved.index
        };
        assert_eq!(enqueue(&input, &mut output), 1, "`scale` is entry 1");
        let before = allocations();
        for _ in 0..1000 {
            enqueue(&input, &mut output);
        }
        assert_eq!(allocations() - before, 0, "allocations in 1000 launches");
        // The counter counts: a launch through the name lookup of a kernel that is not an entry
        // allocates its error message.
        let missing = Kernel::<ScaleArgs> {
            name: "missing",
            emulate: scale,
            targets: KernelTargets::Every,
            tensor_maps: &[],
            nvidia_only: &[],
            amdgpu_entry: None,
        };
        let before = allocations();
        assert!(module.resolve(missing).is_err());
        assert!(allocations() > before);
        stream.synchronize().expect("synchronize");
        assert_eq!(output.to_vec().expect("synchronised"), vec![0.0f32; 64]);
    });
}

#[test]
fn graph_replay_checks_allocate_nothing_after_the_first_replay() {
    with_scale(|_, module, stream, input, mut output| {
        stream.begin_capture().expect("capture begins");
        {
            let read = input.view();
            let write = output.view_mut();
            let args = scale_args(&read, &write);
            let uses = [read.use_read(), write.use_write()];
            stream
                .launch(module, SCALE, LaunchConfig::linear(1, 64), args, &uses)
                .expect("captured");
        }
        let graph = stream.end_capture().expect("capture ends");
        graph.enqueue_uses_on(stream).expect("first replay's uses");
        let before = allocations();
        for _ in 0..1000 {
            graph.enqueue_uses_on(stream).expect("uses recorded");
        }
        assert_eq!(allocations() - before, 0, "allocations in 1000 replays");
        graph.launch(stream).expect("replays");
        stream.synchronize().expect("synchronize");
    });
}

#[test]
fn a_kernel_resolved_in_one_module_is_refused_in_another() {
    let device = Device::emulator();
    let first = device.load_ptx(SCALE_PTX).expect("test PTX loads");
    let second = device.load_ptx(SCALE_PTX).expect("test PTX loads");
    let resolved = first.resolve(SCALE).expect("resolves");
    let stream = device.stream().expect("emulator stream");
    let data = device.zeros::<f32>(4).expect("buffer");
    let args: ScaleArgs = (data.ptr(), 4, data.ptr(), 1.0);
    let config = LaunchConfig::linear(1, 32);
    let err = stream
        .launch_resolved(&second, &resolved, config, args, &[])
        .expect_err("another module");
    assert!(
        err.to_string().contains("resolved in another module"),
        "{err}"
    );
    stream
        .launch_resolved(&first, &resolved, config, args, &[])
        .expect("its own module");
    // The cache follows the module it is used with.
    static CACHE: EntryCache = EntryCache::new();
    for module in [&first, &second, &first] {
        let cached = CACHE.resolve(module, SCALE).expect("resolves");
        assert_eq!(cached.module_id, module.id);
        assert_eq!(cached.index, 1);
    }
}
