//! `wgmma` shared-memory operands: the 64-bit matrix descriptor and how an NVMMA shared tile
//! (the layout TMA writes, [`NvmmaShared`]) is described by one.
//!
//! A descriptor names the operand of one `wgmma.mma_async` (A: `64 × K`, B: `N × K`, with
//! `K × element bits = 256`) in one of the canonical layouts of the PTX ISA. In units of
//! `T = 16 / element bytes` elements, with `W` the swizzle width in bytes (32, 64 or 128):
//!
//! ```text
//! K-major  ((8, m), (T, W/16))    : ((W, SBO), (1 element, 16))
//!          rows of W bytes, 8-row groups SBO apart
//! MN-major ((T, W/16, m), (8, k)) : ((1 element, 16, LBO), (W, SBO))
//!          MN atoms of W bytes LBO apart, 8-row K groups SBO apart
//! ```
//!
//! then the swizzle on the absolute shared address: bits `[4, 4 + log2(W/16))` XOR bits
//! `[7, 7 + log2(W/16))` (the 16-byte chunk of a `W`-byte row XOR the row within 8). This is
//! Triton's NVMMA layout when the tile starts on a `8·W`-byte boundary, which
//! [`plan_operand`] derives and the tests check element by element.

use super::PlanError;
use crate::families::NvmmaShared;
use crate::{Label, LinearLayout};
use std::format;
use std::vec::Vec;

/// The swizzle mode field (bits 62–63) of a matrix descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptorSwizzle {
    /// Interleaved 8 × 16-byte core matrices.
    None = 0,
    /// 128-byte rows, 16-byte chunks XOR row mod 8.
    B128 = 1,
    /// 64-byte rows, 16-byte chunks XOR (row / 2) mod 4.
    B64 = 2,
    /// 32-byte rows, 16-byte chunks XOR (row / 4) mod 2.
    B32 = 3,
}

impl DescriptorSwizzle {
    /// The mode of a `width`-byte swizzle (0 = none).
    pub const fn from_width(width: u32) -> Option<Self> {
        match width {
            0 => Some(DescriptorSwizzle::None),
            32 => Some(DescriptorSwizzle::B32),
            64 => Some(DescriptorSwizzle::B64),
            128 => Some(DescriptorSwizzle::B128),
            _ => None,
        }
    }

    /// Row width in bytes of the swizzle pattern (16 without swizzling).
    pub const fn width(self) -> u32 {
        match self {
            DescriptorSwizzle::None => 16,
            DescriptorSwizzle::B128 => 128,
            DescriptorSwizzle::B64 => 64,
            DescriptorSwizzle::B32 => 32,
        }
    }

    /// The swizzle applied to a shared address:
    /// chunk bits `[4, 4 + b)` ^= bits `[7, 7 + b)`, `b = log2(width / 16)`.
    pub const fn apply(self, address: u32) -> u32 {
        let chunk_mask = self.width() / 16 - 1;
        address ^ (((address >> 7) & chunk_mask) << 4)
    }
}

/// Which dimension of the operand is contiguous in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Major {
    /// K contiguous (A row-major `M × K`, B stored `N × K`): `imm-trans = 0`.
    K,
    /// M or N contiguous (B stored `K × N`): `imm-trans = 1`.
    Mn,
}

/// The 64-bit `wgmma` shared-memory matrix descriptor.
///
/// Bits: 0–13 start address >> 4, 16–29 leading byte offset >> 4, 32–45 stride byte offset
/// >> 4, 49–51 base offset, 62–63 swizzle mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDescriptor {
    /// Shared-window byte address of the operand (16-byte aligned).
    pub start_address: u32,
    /// LBO: MN-major, bytes between MN atoms of `W` bytes; K-major swizzled: unused (16).
    pub leading_byte_offset: u32,
    /// SBO: bytes between 8-row groups (of M/N rows for K-major, of K rows for MN-major).
    pub stride_byte_offset: u32,
    /// The swizzle mode.
    pub swizzle: DescriptorSwizzle,
}

impl MatrixDescriptor {
    /// The descriptor's bits.
    pub const fn encode(&self) -> u64 {
        encode_field(self.start_address)
            | encode_field(self.leading_byte_offset) << 16
            | encode_field(self.stride_byte_offset) << 32
            | (self.swizzle as u64) << 62
    }

    /// The descriptor of `bits` (the base-offset field must be 0).
    pub const fn decode(bits: u64) -> Result<Self, &'static str> {
        if (bits >> 49) & 0x7 != 0 {
            return Err("the matrix base offset (bits 49-51) is not 0");
        }
        let swizzle = match bits >> 62 {
            0 => DescriptorSwizzle::None,
            1 => DescriptorSwizzle::B128,
            2 => DescriptorSwizzle::B64,
            _ => DescriptorSwizzle::B32,
        };
        Ok(MatrixDescriptor {
            start_address: decode_field(bits, 0),
            leading_byte_offset: decode_field(bits, 16),
            stride_byte_offset: decode_field(bits, 32),
            swizzle,
        })
    }

    /// The shared address of element (`mn`, `k`) of the operand, elements of `element_bytes`:
    /// the canonical layout of `major` (module docs), then the swizzle.
    pub const fn address(&self, major: Major, element_bytes: u32, mn: u32, k: u32) -> u32 {
        let t = 16 / element_bytes;
        let w = self.swizzle.width();
        let (lbo, sbo) = (self.leading_byte_offset, self.stride_byte_offset);
        let linear = match (major, self.swizzle) {
            // ((8, m), (T, 2)) : ((16, SBO), (1, LBO))
            (Major::K, DescriptorSwizzle::None) => {
                (mn % 8) * 16 + (mn / 8) * sbo + (k % t) * element_bytes + (k / t) * lbo
            }
            // ((T, 1, m), (8, k)) : ((1, 16, SBO), (16, LBO))
            (Major::Mn, DescriptorSwizzle::None) => {
                (mn % t) * element_bytes + (mn / t) * sbo + (k % 8) * 16 + (k / 8) * lbo
            }
            (Major::K, _) => (mn % 8) * w + (mn / 8) * sbo + k * element_bytes,
            (Major::Mn, _) => {
                let atom = w / element_bytes;
                (mn % atom) * element_bytes + (mn / atom) * lbo + (k % 8) * w + (k / 8) * sbo
            }
        };
        self.swizzle.apply(self.start_address + linear)
    }
}

/// A 14-bit field holding `bytes >> 4`.
const fn encode_field(bytes: u32) -> u64 {
    (bytes as u64 >> 4) & 0x3fff
}

/// The bytes of the 14-bit field at bit `shift`.
const fn decode_field(bits: u64, shift: u32) -> u32 {
    (((bits >> shift) & 0x3fff) << 4) as u32
}

/// How `wgmma` reads one operand tile stored in an NVMMA shared layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandPlan {
    /// The descriptor of the instruction at tile offset 0 (`start_address` = 0: add the tile's
    /// shared address).
    pub descriptor: MatrixDescriptor,
    /// `imm-trans`: K-major (0) or MN-major (1).
    pub major: Major,
    /// Element width in bytes.
    pub element_bytes: u32,
    /// K of one instruction: `32 / element_bytes`.
    pub instr_k: u32,
    /// Byte offset of the `i`-th K step of the tile (`K / instr_k` of them).
    pub k_step_offsets: Vec<u32>,
    /// Byte offset of the `i`-th block of `mn_block` M/N rows (`MN / mn_block` of them).
    pub mn_block_offsets: Vec<u32>,
    /// Bytes the tile's shared address must be aligned to: `8 · W` (one swizzle period).
    pub alignment: u32,
}

impl OperandPlan {
    /// The descriptor of K step `k_step` and M/N block `mn_block` for a tile at `tile_address`.
    pub fn descriptor_at(&self, tile_address: u32, mn_block: usize, k_step: usize) -> u64 {
        MatrixDescriptor {
            start_address: tile_address
                + self.mn_block_offsets[mn_block]
                + self.k_step_offsets[k_step],
            ..self.descriptor
        }
        .encode()
    }
}

/// The descriptor plan of an operand tile of `shape` (`[rows, cols]`) stored as `shared`, whose
/// K dimension is `k_dim` (0 or 1), read in blocks of `mn_block` M/N rows (64 for A, N for B).
///
/// The contiguous dimension is K-major or MN-major; LBO, SBO and the step offsets are read off
/// the layout at elements the swizzle leaves in place (row 0 of each 8-row group).
pub fn plan_operand(
    shared: NvmmaShared,
    shape: [u32; 2],
    k_dim: usize,
    mn_block: u32,
) -> Result<OperandPlan, PlanError> {
    let layout = shared.to_linear_layout(&shape)?;
    let Some(swizzle) = DescriptorSwizzle::from_width(shared.swizzle_byte_width) else {
        return Err(PlanError::new(format!(
            "swizzle width {} is not a wgmma swizzle mode",
            shared.swizzle_byte_width
        )));
    };
    if swizzle == DescriptorSwizzle::None {
        return Err(PlanError::new(
            "an unswizzled NVMMA tile is row-major over its box, not wgmma's interleaved core \
             matrices: use a 32, 64 or 128-byte swizzle",
        ));
    }
    if k_dim > 1 {
        return Err(PlanError::new(format!("k_dim {k_dim} must be 0 or 1")));
    }
    let element_bytes = shared.element_bitwidth / 8;
    let instr_k = 32 / element_bytes;
    let (mn_size, k_size) = (shape[1 - k_dim], shape[k_dim]);
    if !k_size.is_multiple_of(instr_k)
        || !mn_size.is_multiple_of(mn_block)
        || !mn_block.is_multiple_of(8)
    {
        return Err(PlanError::new(format!(
            "a {mn_size} × {k_size} (MN × K) tile is not made of {mn_block} × {instr_k} operands"
        )));
    }
    let offsets = element_offsets(&layout, shape)?;
    let byte_offset = |mn: u32, k: u32| {
        let (row, col) = if k_dim == 1 { (mn, k) } else { (k, mn) };
        offsets[(row * shape[1] + col) as usize] * element_bytes
    };
    let contiguous = if shared.transposed { 0 } else { 1 };
    let major = if contiguous == k_dim {
        Major::K
    } else {
        Major::Mn
    };
    let w = swizzle.width();
    let (leading_byte_offset, stride_byte_offset) = match major {
        Major::K => (16, if mn_size > 8 { byte_offset(8, 0) } else { 0 }),
        Major::Mn => {
            let atom = w / element_bytes;
            let lbo = if mn_size > atom {
                byte_offset(atom, 0)
            } else {
                0
            };
            (lbo, byte_offset(0, 8))
        }
    };
    Ok(OperandPlan {
        descriptor: MatrixDescriptor {
            start_address: 0,
            leading_byte_offset,
            stride_byte_offset,
            swizzle,
        },
        major,
        element_bytes,
        instr_k,
        k_step_offsets: (0..k_size / instr_k)
            .map(|s| byte_offset(0, s * instr_k))
            .collect(),
        mn_block_offsets: (0..mn_size / mn_block)
            .map(|b| byte_offset(b * mn_block, 0))
            .collect(),
        alignment: 8 * w,
    })
}

/// `offsets[row * cols + col]`: the element offset of each element of a memory layout.
fn element_offsets(layout: &LinearLayout, shape: [u32; 2]) -> Result<Vec<u32>, PlanError> {
    let size = shape[0] * shape[1];
    let mut offsets = std::vec![0u32; size as usize];
    for offset in 0..size {
        let [row, col, ..] = layout.apply(&[(Label::Offset, offset)])?;
        offsets[(row * shape[1] + col) as usize] = offset;
    }
    Ok(offsets)
}
