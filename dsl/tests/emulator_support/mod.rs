//! Helpers shared by the emulator tests: 16-byte aligned host buffers (the emulator checks the
//! alignment of vector accesses, and `Vec<f32>` is only 4-byte aligned), launches that write
//! one output buffer, and a seeded RNG.
#![allow(dead_code)]

use tessera::emulator::run_grid;
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

#[allow(unused_imports)] // Not every test binary draws random data.
pub use tessera_test_support::Rng;
