//! Element types (`Scalar`, `DType`) and tile types (`TileType`: shape + dtype), broadcasting, and
//! the register budget.
//!
//! Every value of the tile language is a tile; a scalar is the rank-0 tile (shape `[]`).

use std::fmt;

/// The element types a tile can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    /// 8-bit float, 4 exponent bits, 3 mantissa bits (FP8 E4M3, as `mma` on sm_89+ takes it).
    F8E4M3,
    /// 8-bit float, 5 exponent bits, 2 mantissa bits (FP8 E5M2).
    F8E5M2,
    F16,
    BF16,
    F32,
    F64,
}

impl Scalar {
    /// Every element type, in the order the docs list them.
    pub const ALL: [Scalar; 15] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::F8E4M3,
        Scalar::F8E5M2,
        Scalar::F16,
        Scalar::BF16,
        Scalar::F32,
        Scalar::F64,
    ];

    /// The name users write (`f32`, `bf16`, `f8e4m3`, …).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F8E4M3 => "f8e4m3",
            Scalar::F8E5M2 => "f8e5m2",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// The element type named `name`, if any.
    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Storage size in bits (`bool` is stored as a byte).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 | Scalar::F8E4M3 | Scalar::F8E5M2 => 8,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 16,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 64,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Scalar::F8E4M3
                | Scalar::F8E5M2
                | Scalar::F16
                | Scalar::BF16
                | Scalar::F32
                | Scalar::F64
        )
    }

    /// Signed or unsigned integer (not `bool`).
    pub fn is_int(self) -> bool {
        self.int_range().is_some()
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// The values an integer type holds, `None` for `bool` and floats.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let bits = self.bits();
        match self {
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 => {
                Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
            }
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => Some((0, (1i128 << bits) - 1)),
            _ => None,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of one element of a tile: a number/bool, or a pointer to one in global memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Scalar(Scalar),
    /// A global-memory address of an element of the given type (`Ptr<T>`), 64 bits.
    Ptr(Scalar),
}

impl DType {
    pub fn bits(self) -> u32 {
        match self {
            DType::Scalar(s) => s.bits(),
            DType::Ptr(_) => 64,
        }
    }

    /// The element type, if this is not a pointer.
    pub fn scalar(self) -> Option<Scalar> {
        match self {
            DType::Scalar(s) => Some(s),
            DType::Ptr(_) => None,
        }
    }

    pub fn is_float(self) -> bool {
        self.scalar().is_some_and(Scalar::is_float)
    }

    pub fn is_int(self) -> bool {
        self.scalar().is_some_and(Scalar::is_int)
    }

    pub fn is_bool(self) -> bool {
        self == DType::Scalar(Scalar::Bool)
    }

    /// Integer or float (arithmetic applies).
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::Scalar(s) => write!(f, "{s}"),
            DType::Ptr(s) => write!(f, "Ptr<{s}>"),
        }
    }
}

/// A tile shape: one size per dimension, outermost first (`[rows, cols]`); `[]` is a scalar.
pub type Shape = Vec<u64>;

/// Writes a shape as `[128, 64]`.
pub fn shape_str(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// Number of elements of a shape (saturating: a huge shape reads as `u128::MAX`, never wraps).
pub fn numel(shape: &[u64]) -> u128 {
    shape
        .iter()
        .fold(1u128, |n, &d| n.saturating_mul(u128::from(d)))
}

/// The type of a value: its shape and element type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileType {
    pub shape: Shape,
    pub dtype: DType,
}

impl TileType {
    pub fn new(shape: Shape, dtype: DType) -> TileType {
        TileType { shape, dtype }
    }

    pub fn scalar(dtype: DType) -> TileType {
        TileType {
            shape: Vec::new(),
            dtype,
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Rank 0: one value per program, uniform across its threads.
    pub fn is_scalar(&self) -> bool {
        self.shape.is_empty()
    }

    pub fn numel(&self) -> u128 {
        numel(&self.shape)
    }
}

impl fmt::Display for TileType {
    /// `f32` for a scalar, `f32[128, 64]` for a tile.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.shape.is_empty() {
            write!(f, "{}", self.dtype)
        } else {
            write!(f, "{}{}", self.dtype, shape_str(&self.shape))
        }
    }
}

/// Why two shapes do not broadcast: at output dimension `dim` (counted in the longer shape),
/// the sizes are `left` and `right`, neither 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BroadcastConflict {
    pub dim: usize,
    pub left: u64,
    pub right: u64,
}

/// NumPy broadcasting: align the shapes at their last dimension (the shorter one is padded with 1s
/// in front); each pair of sizes must be equal or contain a 1, and the result takes the larger.
pub fn broadcast_shapes(left: &[u64], right: &[u64]) -> Result<Shape, BroadcastConflict> {
    let rank = left.len().max(right.len());
    let size_at = |s: &[u64], d: usize| -> u64 {
        let pad = rank - s.len();
        if d < pad {
            1
        } else {
            s[d - pad]
        }
    };
    (0..rank)
        .map(|d| {
            let (l, r) = (size_at(left, d), size_at(right, d));
            if l == r || r == 1 {
                Ok(l)
            } else if l == 1 {
                Ok(r)
            } else {
                Err(BroadcastConflict {
                    dim: d,
                    left: l,
                    right: r,
                })
            }
        })
        .collect()
}

/// Register budget of one tile value: at most this many 32-bit registers per thread.
///
/// A tile of `n` elements of `b` bits spread over the `32 × num_warps` threads of a program holds
/// `ceil(n / threads)` elements per thread, i.e. `ceil(ceil(n / threads) × b / 32)` registers.
/// The hardware gives a thread at most 255 registers; one tile may take half of them, leaving the
/// rest for the other live tiles, addresses and indices. At `num_warps = 4` that is 16384 `f32`
/// elements (a 128×128 `f32` accumulator) or 32768 `f16` elements; at `num_warps = 8` a
/// 128×256 `f32` accumulator.
pub const MAX_TILE_REGISTERS_PER_THREAD: u128 = 128;

/// Threads in one program (one CUDA block): 32 per warp.
pub fn threads(num_warps: u32) -> u128 {
    32 * u128::from(num_warps)
}

/// Bits one element of `dtype` counts in the register budget: its width, except a pointer,
/// which counts 32. A pointer tile is a uniform base (a scalar pointer) plus per-element
/// offsets, and the compiled code derives each address from the base at its use rather than
/// keeping 64-bit addresses live: ptxas gives `bench_matmul_w8` at 4 stages (8 warps, an f32
/// `128 × 128` accumulator of 64 registers and pointer tiles of 128 registers at 64 bits an
/// element) 119 registers in all.
pub fn budget_bits(dtype: DType) -> u32 {
    match dtype {
        DType::Scalar(s) => s.bits(),
        DType::Ptr(_) => 32,
    }
}

/// 32-bit registers each thread needs to hold `ty` (see [`MAX_TILE_REGISTERS_PER_THREAD`] and
/// [`budget_bits`]).
pub fn registers_per_thread(ty: &TileType, num_warps: u32) -> u128 {
    let per_thread = ty.numel().div_ceil(threads(num_warps));
    per_thread
        .saturating_mul(u128::from(budget_bits(ty.dtype)))
        .div_ceil(32)
}

/// The largest element count of a tile of `dtype` within the budget.
pub fn max_elements(dtype: DType, num_warps: u32) -> u128 {
    MAX_TILE_REGISTERS_PER_THREAD * 32 / u128::from(budget_bits(dtype)) * threads(num_warps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in Scalar::ALL {
            assert_eq!(Scalar::from_name(s.name()), Some(s));
        }
        assert_eq!(Scalar::from_name("float"), None);
    }

    #[test]
    fn int_ranges() {
        assert_eq!(Scalar::I8.int_range(), Some((-128, 127)));
        assert_eq!(Scalar::U32.int_range(), Some((0, u32::MAX as i128)));
        assert_eq!(Scalar::F16.int_range(), None);
        assert!(!Scalar::Bool.is_int());
    }

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes(&[128, 1], &[1, 64]), Ok(vec![128, 64]));
        assert_eq!(broadcast_shapes(&[64], &[128, 64]), Ok(vec![128, 64]));
        assert_eq!(broadcast_shapes(&[], &[8]), Ok(vec![8]));
        assert_eq!(
            broadcast_shapes(&[128], &[64]),
            Err(BroadcastConflict {
                dim: 0,
                left: 128,
                right: 64
            })
        );
        assert_eq!(
            broadcast_shapes(&[4, 128], &[64]),
            Err(BroadcastConflict {
                dim: 1,
                left: 128,
                right: 64
            })
        );
    }

    #[test]
    fn register_budget() {
        // (shape, element type, warps, registers per thread). The store's pointer tile of a
        // 128 × 256 matmul at 8 warps fits, as its accumulator.
        let cases = [
            ([128, 128], DType::Scalar(Scalar::F32), 4, 128),
            ([256, 128], DType::Scalar(Scalar::F32), 4, 256),
            ([256, 128], DType::Scalar(Scalar::F16), 4, 128),
            ([128, 64], DType::Ptr(Scalar::F16), 4, 64),
            ([128, 256], DType::Ptr(Scalar::F16), 8, 128),
            ([128, 64], DType::Scalar(Scalar::I64), 4, 128),
        ];
        for (shape, dtype, warps, registers) in cases {
            let tile = TileType::new(shape.to_vec(), dtype);
            assert_eq!(registers_per_thread(&tile, warps), registers, "{tile}");
        }
        assert_eq!(max_elements(DType::Scalar(Scalar::F32), 4), 16384);
        assert_eq!(max_elements(DType::Scalar(Scalar::F16), 8), 65536);
        assert_eq!(max_elements(DType::Ptr(Scalar::F16), 4), 16384);
        let huge = TileType::new(vec![u64::MAX, u64::MAX, u64::MAX], DType::Ptr(Scalar::F32));
        assert!(registers_per_thread(&huge, 1) > MAX_TILE_REGISTERS_PER_THREAD);
    }

    #[test]
    fn display() {
        let t = TileType::new(vec![128, 64], DType::Ptr(Scalar::BF16));
        assert_eq!(t.to_string(), "Ptr<bf16>[128, 64]");
        assert_eq!(
            TileType::scalar(DType::Scalar(Scalar::I32)).to_string(),
            "i32"
        );
    }
}
