//! Helpers shared by the emulator tests: 16-byte aligned host buffers (the emulator checks the
//! alignment of vector accesses, and `Vec<f32>` is only 4-byte aligned) and a seeded RNG.
#![allow(dead_code)]

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

/// splitmix64: a small deterministic generator for test data.
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
