//! Helpers shared by the emulator tests: 16-byte aligned host buffers (the emulator checks the
//! alignment of vector accesses, and `Vec<f32>` is only 4-byte aligned), launches that write
//! one output buffer, one-block runs, the messages of the errors they end with and what they mention, and a seeded
//! RNG.
#![allow(dead_code)]

use tessera::device::thread_idx_x;
use tessera::emulator::{run_grid, EmulatorError};
use tessera::Ptr;

#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
struct Chunk([u32; 4]);

/// A 16-byte aligned buffer of 32-bit words standing in for global memory.
pub struct Buffer {
    chunks: Vec<Chunk>,
    len: usize,
}

impl Buffer {
    pub fn from_u32(words: &[u32]) -> Self {
        let mut chunks = vec![Chunk::default(); words.len().div_ceil(4).max(1)];
        for (i, w) in words.iter().enumerate() {
            chunks[i / 4].0[i % 4] = *w;
        }
        Buffer {
            chunks,
            len: words.len(),
        }
    }

    pub fn from_f32(values: &[f32]) -> Self {
        Self::from_u32(&values.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
    }

    pub fn zeros(len: usize) -> Self {
        Self::from_u32(&vec![0; len])
    }

    pub fn ptr<T>(&mut self) -> Ptr<T> {
        Ptr::from_raw(self.chunks.as_mut_ptr().cast::<T>())
    }

    pub fn to_u32(&self) -> Vec<u32> {
        (0..self.len).map(|i| self.chunks[i / 4].0[i % 4]).collect()
    }

    pub fn to_f32(&self) -> Vec<f32> {
        self.to_u32().into_iter().map(f32::from_bits).collect()
    }

    pub fn to_i32(&self) -> Vec<i32> {
        self.to_u32().into_iter().map(|w| w as i32).collect()
    }
}

/// Runs `grid × block` threads (`shared` bytes of dynamic shared memory), each calling
/// `body(out)` on one zeroed buffer of `out_words` words; gives that buffer afterwards.
pub fn run_with_output<T>(
    grid: [u32; 3],
    block: [u32; 3],
    shared: usize,
    out_words: usize,
    body: impl Fn(Ptr<T>) + Sync,
) -> Buffer {
    let mut out = Buffer::zeros(out_words);
    let out_ptr: Ptr<T> = out.ptr();
    run_grid(grid, block, shared, &|| body(out_ptr))
        .unwrap_or_else(|err| panic!("the emulator run failed: {err}"));
    out
}

/// [`run_with_output`] for one block of `threads` threads.
pub fn run_block_with_output<T>(
    threads: u32,
    shared: usize,
    out_words: usize,
    body: impl Fn(Ptr<T>) + Sync,
) -> Buffer {
    run_with_output([1, 1, 1], [threads, 1, 1], shared, out_words, body)
}

/// [`run_with_output`] for one warp: one block of 32 threads.
pub fn run_warp_with_output<T>(
    shared: usize,
    out_words: usize,
    body: impl Fn(Ptr<T>) + Sync,
) -> Buffer {
    run_block_with_output(32, shared, out_words, body)
}

/// Runs one block of `threads` threads (`shared` bytes of dynamic shared memory), each calling
/// `body(thread index)`.
pub fn run_block(
    threads: u32,
    shared: usize,
    body: impl Fn(u32) + Sync,
) -> Result<(), EmulatorError> {
    run_grid([1, 1, 1], [threads, 1, 1], shared, &|| body(thread_idx_x())).map(|_| ())
}

/// The message of the `AsyncOperation` error a run ended with (panics on any other outcome).
pub fn async_message(result: Result<(), EmulatorError>) -> String {
    match result {
        Err(EmulatorError::AsyncOperation { message, .. }) => message,
        other => panic!("expected an AsyncOperation error, got {other:?}"),
    }
}

/// The message of the deadlock a run ended with (panics on any other outcome).
pub fn deadlock_message(result: Result<(), EmulatorError>) -> String {
    match result {
        Err(EmulatorError::Deadlock { message, .. }) => message,
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

/// Asserts that `message` mentions each of `parts`.
#[track_caller]
pub fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "{part:?} is missing from: {message}"
        );
    }
}

#[allow(unused_imports)] // Not every test binary draws random data.
pub use tessera_test_support::Rng;
