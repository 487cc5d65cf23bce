//! Test helpers: 16-byte aligned host buffers (the kernels use 128-bit accesses, which the
//! emulator checks for alignment), a seeded RNG, and launching a kernel handle on the emulator
//! with every live buffer of the test as its memory map, so that any access outside the
//! buffers is an emulator error instead of a write into the host heap.
#![allow(dead_code)]

use std::cell::RefCell;
use std::ops::Range;
use tessera::emulator::{run_grid_in, EmulatorError, EmulatorReport};
use tessera::{Kernel, Ptr};

thread_local! {
    /// Byte ranges of the buffers alive on this (test) thread.
    static LIVE_BUFFERS: RefCell<Vec<Range<u64>>> = const { RefCell::new(Vec::new()) };
}

#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
struct Chunk([u32; 4]);

/// A 16-byte aligned buffer of 32-bit words standing in for device memory.
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
        let start = chunks.as_ptr() as u64;
        // The valid bytes are the `len` words (not the padding of the last chunk).
        LIVE_BUFFERS.with(|b| b.borrow_mut().push(start..start + 4 * words.len() as u64));
        Buffer {
            chunks,
            len: words.len(),
        }
    }
    pub fn from_f32(v: &[f32]) -> Self {
        Self::from_u32(&v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
    }
    pub fn from_i32(v: &[i32]) -> Self {
        Self::from_u32(&v.iter().map(|&x| x as u32).collect::<Vec<_>>())
    }
    /// `len` words of a sentinel value, so that writes past the end are detectable.
    pub fn filled(len: usize, word: u32) -> Self {
        Self::from_u32(&vec![word; len])
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

impl Drop for Buffer {
    fn drop(&mut self) {
        let start = self.chunks.as_ptr() as u64;
        LIVE_BUFFERS.with(|b| b.borrow_mut().retain(|r| r.start != start));
    }
}

/// Runs `kernel` with `args` on the emulator; global memory = the live buffers of this thread.
pub fn launch<A: Copy + Sync>(
    kernel: Kernel<A>,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: usize,
    args: A,
) -> Result<EmulatorReport, EmulatorError> {
    let memory = LIVE_BUFFERS.with(|b| b.borrow().clone());
    run_grid_in(grid, block, shared_bytes, &memory, &|| {
        (kernel.emulate)(args)
    })
}

/// splitmix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
}
