//! [`LinearLayout`]: a linear map over F₂ from labelled input bits to labelled output coordinates.
//!
//! As in Triton, a layout stores, for every input dimension, the image of each of its bits (its
//! *bases*); the image of any input is the XOR of the bases of its set bits (Definition 4.1 of the
//! paper). Output dimensions are ordered and have power-of-two sizes.
//!
//! Storage is fixed-capacity so that construction, checks and the algebra run in `const fn`: each
//! basis is one `u64` with the output coordinates packed side by side, `dim` k at bit offset
//! `sum(log2 size of earlier output dims)`. Unused slots are always zero, so `==` is structural.

use crate::f2::{low_mask, EchelonBasis};
use crate::{Label, LayoutError};
use core::fmt;

/// Most input or output dimensions a layout has.
pub const MAX_DIMS: usize = 6;
/// Most bases (bits) one input dimension has.
pub const MAX_BASES: usize = 32;
/// Most output bits in all (the product of the output sizes is at most 2^64).
pub const MAX_OUT_BITS: u32 = 64;

/// A linear layout over F₂ (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinearLayout {
    in_labels: [Label; MAX_DIMS],
    in_bits: [u8; MAX_DIMS],
    num_in: u8,
    out_labels: [Label; MAX_DIMS],
    out_bits: [u8; MAX_DIMS],
    num_out: u8,
    bases: [[u64; MAX_BASES]; MAX_DIMS],
}

/// Returns log2 of `size` if it is a power of two.
pub const fn log2_exact(size: u32) -> Option<u8> {
    if size == 0 || size & (size - 1) != 0 {
        None
    } else {
        Some(size.trailing_zeros() as u8)
    }
}

impl LinearLayout {
    // ------------------------------------------------------------------ construction

    /// The layout with no dimensions (the identity of [`product`](Self::product)).
    pub const fn empty() -> Self {
        Self {
            in_labels: [Label::Register; MAX_DIMS],
            in_bits: [0; MAX_DIMS],
            num_in: 0,
            out_labels: [Label::Register; MAX_DIMS],
            out_bits: [0; MAX_DIMS],
            num_out: 0,
            bases: [[0; MAX_BASES]; MAX_DIMS],
        }
    }

    /// Appends an input dimension with no bases (size 1); error if present or full.
    pub const fn with_in_dim(mut self, label: Label) -> Result<Self, LayoutError> {
        if self.in_index(label).is_some() {
            return Err(LayoutError::DuplicateDim { dim: label });
        }
        if self.num_in as usize == MAX_DIMS {
            return Err(LayoutError::TooManyDims {
                max: MAX_DIMS as u8,
            });
        }
        self.in_labels[self.num_in as usize] = label;
        self.num_in += 1;
        Ok(self)
    }

    /// Appends an output dimension of `size` (a power of two); error if present, full, or too big.
    pub const fn with_out_dim(mut self, label: Label, size: u32) -> Result<Self, LayoutError> {
        let Some(bits) = log2_exact(size) else {
            return Err(LayoutError::SizeNotPowerOfTwo { dim: label, size });
        };
        if self.out_index(label).is_some() {
            return Err(LayoutError::DuplicateDim { dim: label });
        }
        if self.num_out as usize == MAX_DIMS {
            return Err(LayoutError::TooManyDims {
                max: MAX_DIMS as u8,
            });
        }
        let total = self.total_out_bits() + bits as u32;
        if total > MAX_OUT_BITS {
            return Err(LayoutError::TooManyOutBits {
                bits: total as u8,
                max: MAX_OUT_BITS as u8,
            });
        }
        // The new dimension is the most major one: existing packed bases keep their meaning.
        self.out_labels[self.num_out as usize] = label;
        self.out_bits[self.num_out as usize] = bits;
        self.num_out += 1;
        Ok(self)
    }

    /// Appends one basis to input dimension `in_dim` (which must exist), given by its coordinates
    /// in every output dimension, in order.
    pub const fn with_basis(mut self, in_dim: Label, coords: &[u32]) -> Result<Self, LayoutError> {
        let i = tri!(self.in_index_or_err(in_dim));
        let k = self.in_bits[i];
        if k as usize == MAX_BASES {
            return Err(LayoutError::TooManyBases {
                dim: in_dim,
                count: MAX_BASES as u8 + 1,
                max: MAX_BASES as u8,
            });
        }
        if coords.len() != self.num_out as usize {
            return Err(LayoutError::BasisWrongArity {
                in_dim,
                basis: k,
                expected: self.num_out,
                got: coords.len() as u8,
            });
        }
        let mut packed = 0u64;
        let mut o = 0;
        while o < coords.len() {
            let size_bits = self.out_bits[o] as u32;
            if (coords[o] as u64) >> size_bits != 0 {
                return Err(LayoutError::BasisOutOfRange {
                    in_dim,
                    basis: k,
                    out_dim: self.out_labels[o],
                    value: coords[o],
                    size: 1 << size_bits,
                });
            }
            packed |= (coords[o] as u64) << self.out_offset(o);
            o += 1;
        }
        self.bases[i][k as usize] = packed;
        self.in_bits[i] = k + 1;
        Ok(self)
    }

    /// Builds a layout from Triton-style bases: for each input dimension, the list of images of its
    /// bits (each a coordinate per output dimension), and the output dimensions with their sizes.
    /// No injectivity or surjectivity is required; see [`distributed`](Self::distributed) and
    /// [`memory`](Self::memory) for the checked constructors.
    pub const fn from_bases(
        bases: &[(Label, &[&[u32]])],
        out_dims: &[(Label, u32)],
    ) -> Result<Self, LayoutError> {
        let mut layout = Self::empty();
        let mut o = 0;
        while o < out_dims.len() {
            layout = tri!(layout.with_out_dim(out_dims[o].0, out_dims[o].1));
            o += 1;
        }
        let mut i = 0;
        while i < bases.len() {
            let (label, list) = bases[i];
            if list.len() > MAX_BASES {
                return Err(LayoutError::TooManyBases {
                    dim: label,
                    count: list.len() as u8,
                    max: MAX_BASES as u8,
                });
            }
            layout = tri!(layout.with_in_dim(label));
            let mut k = 0;
            while k < list.len() {
                layout = tri!(layout.with_basis(label, list[k]));
                k += 1;
            }
            i += 1;
        }
        Ok(layout)
    }

    /// A distributed layout (hardware indices → tile): every element must be owned by some
    /// (register, lane, warp), i.e. the map is surjective.
    pub const fn distributed(
        bases: &[(Label, &[&[u32]])],
        out_dims: &[(Label, u32)],
    ) -> Result<Self, LayoutError> {
        Self::from_bases_checked(bases, out_dims, false)
    }

    /// A memory layout (offset → tile): no two offsets may hold the same element (injective).
    pub const fn memory(
        bases: &[(Label, &[&[u32]])],
        out_dims: &[(Label, u32)],
    ) -> Result<Self, LayoutError> {
        Self::from_bases_checked(bases, out_dims, true)
    }

    /// [`from_bases`](Self::from_bases), then checked injective (`memory`) or surjective.
    const fn from_bases_checked(
        bases: &[(Label, &[&[u32]])],
        out_dims: &[(Label, u32)],
        memory: bool,
    ) -> Result<Self, LayoutError> {
        let layout = tri!(Self::from_bases(bases, out_dims));
        tri!(if memory {
            layout.check_injective()
        } else {
            layout.check_surjective()
        });
        Ok(layout)
    }

    /// `x ↦ x` on `size` elements from `in_dim` to `out_dim`.
    pub const fn identity_1d(
        size: u32,
        in_dim: Label,
        out_dim: Label,
    ) -> Result<Self, LayoutError> {
        Self::strided_1d(size, 1, in_dim, out_dim)
    }

    /// `x ↦ stride·x` on `size` elements (`stride` a power of two); the output size is `size·stride`.
    pub const fn strided_1d(
        size: u32,
        stride: u32,
        in_dim: Label,
        out_dim: Label,
    ) -> Result<Self, LayoutError> {
        let Some(bits) = log2_exact(size) else {
            return Err(LayoutError::SizeNotPowerOfTwo { dim: in_dim, size });
        };
        let Some(stride_bits) = log2_exact(stride) else {
            return Err(LayoutError::Incompatible {
                what: "a strided layout needs a power-of-two stride",
            });
        };
        let mut layout = tri!(Self::empty().with_out_dim(out_dim, 1 << (bits + stride_bits)));
        layout = tri!(layout.with_in_dim(in_dim));
        let mut k = 0;
        while k < bits {
            layout.bases[0][k as usize] = 1u64 << (k + stride_bits);
            k += 1;
        }
        layout.in_bits[0] = bits;
        Ok(layout)
    }

    /// `x ↦ 0` on `size` elements (every input bit is a broadcast bit); output size 1.
    pub const fn zeros_1d(size: u32, in_dim: Label, out_dim: Label) -> Result<Self, LayoutError> {
        let Some(bits) = log2_exact(size) else {
            return Err(LayoutError::SizeNotPowerOfTwo { dim: in_dim, size });
        };
        let mut layout = tri!(Self::empty().with_out_dim(out_dim, 1));
        layout = tri!(layout.with_in_dim(in_dim));
        layout.in_bits[0] = bits;
        Ok(layout)
    }

    // ------------------------------------------------------------------ shape

    /// Number of input dimensions.
    pub const fn num_in_dims(&self) -> usize {
        self.num_in as usize
    }

    /// Number of output dimensions.
    pub const fn num_out_dims(&self) -> usize {
        self.num_out as usize
    }

    /// The label of input dimension `i`.
    pub const fn in_label(&self, i: usize) -> Label {
        self.in_labels[i]
    }

    /// The label of output dimension `o`.
    pub const fn out_label(&self, o: usize) -> Label {
        self.out_labels[o]
    }

    /// Position of input dimension `label`.
    pub const fn in_index(&self, label: Label) -> Option<usize> {
        position(self.in_labels.split_at(self.num_in as usize).0, label)
    }

    /// Position of output dimension `label`.
    pub const fn out_index(&self, label: Label) -> Option<usize> {
        position(self.out_labels.split_at(self.num_out as usize).0, label)
    }

    /// Position of input dimension `label`, or [`LayoutError::UnknownDim`].
    pub(crate) const fn in_index_or_err(&self, label: Label) -> Result<usize, LayoutError> {
        match self.in_index(label) {
            Some(i) => Ok(i),
            None => Err(LayoutError::UnknownDim { dim: label }),
        }
    }

    /// Position of output dimension `label`, or [`LayoutError::UnknownDim`].
    pub(crate) const fn out_index_or_err(&self, label: Label) -> Result<usize, LayoutError> {
        match self.out_index(label) {
            Some(o) => Ok(o),
            None => Err(LayoutError::UnknownDim { dim: label }),
        }
    }

    /// log2 of the size of input dimension `i` (its number of bases).
    pub const fn in_bits_at(&self, i: usize) -> u32 {
        self.in_bits[i] as u32
    }

    /// log2 of the size of output dimension `o`.
    pub const fn out_bits_at(&self, o: usize) -> u32 {
        self.out_bits[o] as u32
    }

    /// log2 of the size of input dimension `label`; 0 if absent (a size-1 dimension).
    pub const fn in_bits(&self, label: Label) -> u32 {
        match self.in_index(label) {
            Some(i) => self.in_bits[i] as u32,
            None => 0,
        }
    }

    /// log2 of the size of output dimension `label`; 0 if absent.
    pub const fn out_bits(&self, label: Label) -> u32 {
        match self.out_index(label) {
            Some(o) => self.out_bits[o] as u32,
            None => 0,
        }
    }

    /// Size of input dimension `label` (1 if absent).
    pub const fn in_size(&self, label: Label) -> u32 {
        1 << self.in_bits(label)
    }

    /// Size of output dimension `label` (1 if absent).
    pub const fn out_size(&self, label: Label) -> u32 {
        1 << self.out_bits(label)
    }

    /// Total number of input bits.
    pub const fn total_in_bits(&self) -> u32 {
        sum(self.in_bits.split_at(self.num_in as usize).0)
    }

    /// Total number of output bits (log2 of the number of elements of the tile).
    pub const fn total_out_bits(&self) -> u32 {
        sum(self.out_bits.split_at(self.num_out as usize).0)
    }

    /// Bit offset of output dimension `o` inside a packed basis.
    pub const fn out_offset(&self, o: usize) -> u32 {
        let mut t = 0;
        let mut k = 0;
        while k < o {
            t += self.out_bits[k] as u32;
            k += 1;
        }
        t
    }

    // ------------------------------------------------------------------ bases

    /// Basis `k` of input dimension `i`, packed (see the module docs).
    pub const fn packed_basis(&self, i: usize, k: usize) -> u64 {
        self.bases[i][k]
    }

    /// Coordinate in output dimension `o` of a packed vector.
    pub const fn coord(&self, packed: u64, o: usize) -> u32 {
        ((packed >> self.out_offset(o)) & low_mask(self.out_bits[o] as u32)) as u32
    }

    /// Packs per-output-dimension coordinates (in output order; values are truncated to size).
    pub const fn pack(&self, coords: &[u32]) -> u64 {
        let mut packed = 0u64;
        let mut o = 0;
        while o < coords.len() && o < self.num_out as usize {
            packed |=
                ((coords[o] as u64) & low_mask(self.out_bits[o] as u32)) << self.out_offset(o);
            o += 1;
        }
        packed
    }

    /// Unpacks a packed vector into coordinates (in output order; unused slots 0).
    pub const fn unpack(&self, packed: u64) -> [u32; MAX_DIMS] {
        let mut out = [0u32; MAX_DIMS];
        let mut o = 0;
        while o < self.num_out as usize {
            out[o] = self.coord(packed, o);
            o += 1;
        }
        out
    }

    /// Basis `k` of `in_dim` as coordinates per output dimension.
    pub const fn basis(&self, in_dim: Label, k: usize) -> Option<[u32; MAX_DIMS]> {
        match self.in_index(in_dim) {
            Some(i) if k < self.in_bits[i] as usize => Some(self.unpack(self.bases[i][k])),
            _ => None,
        }
    }

    /// Appends a packed basis (in this layout's packing) to input dimension `i`.
    pub const fn push_packed_basis(&mut self, i: usize, packed: u64) -> Result<(), LayoutError> {
        let k = self.in_bits[i] as usize;
        if k == MAX_BASES {
            return Err(LayoutError::TooManyBases {
                dim: self.in_labels[i],
                count: MAX_BASES as u8 + 1,
                max: MAX_BASES as u8,
            });
        }
        if packed & !low_mask(self.total_out_bits()) != 0 {
            return Err(LayoutError::Incompatible {
                what: "a packed basis has bits outside the output dimensions",
            });
        }
        self.bases[i][k] = packed;
        self.in_bits[i] = k as u8 + 1;
        Ok(())
    }

    /// Replaces basis `k` of input dimension `i` (which must exist) by a packed vector.
    pub const fn set_packed_basis(&mut self, i: usize, k: usize, packed: u64) {
        assert!(
            k < self.in_bits[i] as usize,
            "set_packed_basis: no such basis"
        );
        self.bases[i][k] = packed & low_mask(self.total_out_bits());
    }

    /// Bits of input dimension `label` whose basis is zero: the broadcast (free) bits, which hold
    /// duplicates of other inputs' elements (bit `k` set = basis `k` is zero).
    pub const fn zero_bases_mask(&self, label: Label) -> u32 {
        let Some(i) = self.in_index(label) else {
            return 0;
        };
        let mut mask = 0u32;
        let mut k = 0;
        while k < self.in_bits[i] as usize {
            if self.bases[i][k] == 0 {
                mask |= 1 << k;
            }
            k += 1;
        }
        mask
    }

    // ------------------------------------------------------------------ evaluation

    /// The image of one input bit vector per input dimension (in input order), packed.
    pub const fn apply_packed(&self, inputs: &[u32]) -> u64 {
        let mut out = 0u64;
        let mut i = 0;
        while i < inputs.len() && i < self.num_in as usize {
            let mut k = 0;
            while k < self.in_bits[i] as usize {
                if (inputs[i] >> k) & 1 == 1 {
                    out ^= self.bases[i][k];
                }
                k += 1;
            }
            i += 1;
        }
        out
    }

    /// The image of the named inputs (absent dimensions are 0), as coordinates in output order.
    /// Error if an input names a dimension the layout lacks or does not fit its size.
    pub const fn apply(&self, inputs: &[(Label, u32)]) -> Result<[u32; MAX_DIMS], LayoutError> {
        let mut values = [0u32; MAX_DIMS];
        let mut n = 0;
        while n < inputs.len() {
            let (label, value) = inputs[n];
            let i = tri!(self.in_index_or_err(label));
            if (value as u64) >> self.in_bits[i] != 0 {
                return Err(LayoutError::Incompatible {
                    what: "an input value is outside its dimension",
                });
            }
            values[i] = value;
            n += 1;
        }
        Ok(self.unpack(self.apply_packed(&values)))
    }

    /// All input bits in input order as one list of packed images (length `total_in_bits`).
    /// Column `j` of the layout's matrix.
    pub const fn columns(&self) -> ([u64; 64], usize) {
        let mut cols = [0u64; 64];
        let mut n = 0;
        let mut i = 0;
        while i < self.num_in as usize {
            let mut k = 0;
            while k < self.in_bits[i] as usize {
                if n < 64 {
                    cols[n] = self.bases[i][k];
                }
                n += 1;
                k += 1;
            }
            i += 1;
        }
        (cols, n)
    }

    // ------------------------------------------------------------------ properties

    /// The rank of the layout's matrix.
    pub const fn rank(&self) -> u32 {
        self.span().rank()
    }

    /// Ok if no two inputs map to the same output; else the first dependent basis.
    pub const fn check_injective(&self) -> Result<(), LayoutError> {
        match self.span_and_first_dependent().1 {
            Some((i, k)) => Err(LayoutError::NotInjective {
                in_dim: self.in_labels[i],
                basis: k as u8,
            }),
            None => Ok(()),
        }
    }

    /// The span of all bases (the column space of the matrix), in echelon form.
    const fn span(&self) -> EchelonBasis {
        self.span_and_first_dependent().0
    }

    /// The span of all bases, and the first basis `(input, index)` (in input order) that lies
    /// in the span of the ones before it.
    const fn span_and_first_dependent(&self) -> (EchelonBasis, Option<(usize, usize)>) {
        let mut e = EchelonBasis::new();
        let mut first = None;
        let mut i = 0;
        while i < self.num_in as usize {
            let mut k = 0;
            while k < self.in_bits[i] as usize {
                if !e.insert(self.bases[i][k]) && first.is_none() {
                    first = Some((i, k));
                }
                k += 1;
            }
            i += 1;
        }
        (e, first)
    }

    /// Ok if every output is reached; else the first output bit (in output order) that is not.
    pub const fn check_surjective(&self) -> Result<(), LayoutError> {
        let e = self.span();
        if e.rank() == self.total_out_bits() {
            return Ok(());
        }
        // Some unit vector is outside the span: name the lowest.
        let mut o = 0;
        while o < self.num_out as usize {
            let mut b = 0;
            while b < self.out_bits[o] as u32 {
                if !e.contains(1u64 << (self.out_offset(o) + b)) {
                    return Err(LayoutError::NotSurjective {
                        out_dim: self.out_labels[o],
                        bit: b as u8,
                    });
                }
                b += 1;
            }
            o += 1;
        }
        Ok(())
    }

    /// Whether distinct inputs have distinct images.
    pub const fn is_injective(&self) -> bool {
        self.check_injective().is_ok()
    }

    /// Whether every output is an image.
    pub const fn is_surjective(&self) -> bool {
        self.check_surjective().is_ok()
    }

    /// Whether the layout is a bijection (injective, surjective, equal sizes).
    pub const fn is_invertible(&self) -> bool {
        self.total_in_bits() == self.total_out_bits() && self.is_injective()
    }
}

/// `const` helper: the layout, or a compile error with the layout's own message.
pub const fn expect_layout(result: Result<LinearLayout, LayoutError>) -> LinearLayout {
    match result {
        Ok(layout) => layout,
        Err(e) => e.panic(),
    }
}

impl fmt::Display for LinearLayout {
    /// Triton's `LinearLayout::toString`: one line per basis, then the output dimensions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in 0..self.num_in_dims() {
            let label = self.in_labels[i];
            let bits = self.in_bits[i] as usize;
            if bits == 0 {
                writeln!(f, " - {label} is a size 1 dimension")?;
                continue;
            }
            for k in 0..bits {
                let lead = if k == 0 { " - " } else { "   " };
                write!(f, "{lead}{label}={} -> (", 1u64 << k)?;
                for o in 0..self.num_out_dims() {
                    if o > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", self.coord(self.bases[i][k], o))?;
                }
                writeln!(f, ")")?;
            }
        }
        f.write_str("where out dims are: [")?;
        for o in 0..self.num_out_dims() {
            if o > 0 {
                f.write_str(", ")?;
            }
            write!(
                f,
                "{} (size {})",
                self.out_labels[o],
                1u64 << self.out_bits[o]
            )?;
        }
        f.write_str("]")
    }
}

impl fmt::Debug for LinearLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "LinearLayout {{")?;
        fmt::Display::fmt(self, f)?;
        write!(f, "\n}}")
    }
}

/// Position of `label` in `labels`.
const fn position(labels: &[Label], label: Label) -> Option<usize> {
    let mut i = 0;
    while i < labels.len() {
        if labels[i].same(label) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The sum of `bits` (dimension sizes as log2).
const fn sum(bits: &[u8]) -> u32 {
    let mut total = 0;
    let mut i = 0;
    while i < bits.len() {
        total += bits[i] as u32;
        i += 1;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;
    use Label::*;

    const BLOCKED: LinearLayout = expect_layout(LinearLayout::distributed(
        &[
            (Register, &[&[0, 1], &[0, 2]]),
            (Lane, &[&[0, 4], &[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
            (Warp, &[&[16, 0]]),
        ],
        &[(Dim(0), 32), (Dim(1), 8)],
    ));

    #[test]
    fn apply_is_xor_of_bases() {
        // register 3 = bases 0 and 1 → (0, 3); lane 2 → (1, 0); warp 1 → (16, 0).
        let out = BLOCKED
            .apply(&[(Register, 3), (Lane, 2), (Warp, 1)])
            .unwrap();
        assert_eq!(&out[..2], &[17, 3]);
        assert!(BLOCKED.is_invertible());
    }

    #[test]
    fn checks_name_dimension_and_basis() {
        let err =
            LinearLayout::distributed(&[(Lane, &[&[1, 0], &[1, 0]])], &[(Dim(0), 2), (Dim(1), 2)])
                .unwrap_err();
        assert_eq!(
            err,
            LayoutError::NotSurjective {
                out_dim: Dim(1),
                bit: 0
            }
        );
        let err =
            LinearLayout::memory(&[(Offset, &[&[1], &[2], &[3]])], &[(Dim(0), 4)]).unwrap_err();
        assert_eq!(
            err,
            LayoutError::NotInjective {
                in_dim: Offset,
                basis: 2
            }
        );
        let err = LinearLayout::from_bases(&[(Lane, &[&[4]])], &[(Dim(0), 4)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid linear layout: basis 0 of `lane` maps `dim0` to 4, outside its size 4"
        );
        let err = LinearLayout::from_bases(&[], &[(Dim(0), 6)]).unwrap_err();
        assert_eq!(
            err,
            LayoutError::SizeNotPowerOfTwo {
                dim: Dim(0),
                size: 6
            }
        );
    }

    #[test]
    fn display_is_tritons() {
        let l = LinearLayout::from_bases(
            &[(Register, &[&[0, 1]]), (Lane, &[])],
            &[(Dim(0), 1), (Dim(1), 2)],
        )
        .unwrap();
        assert_eq!(
            l.to_string(),
            " - register=1 -> (0, 1)\n - lane is a size 1 dimension\nwhere out dims are: [dim0 (size 1), dim1 (size 2)]"
        );
    }
}
