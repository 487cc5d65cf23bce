//! Layout errors: which basis, which dimension, and why.
//!
//! Errors are plain `Copy` data so that `const` construction can return them; [`LayoutError::panic`]
//! renders the message into a fixed buffer at compile time, so an invalid `const` layout fails to
//! compile with the same words that `Display` prints at run time.

use crate::Label;
use core::fmt;

/// Why a layout is invalid or an operation does not apply.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LayoutError {
    /// A dimension size is not a power of two.
    SizeNotPowerOfTwo {
        /// The dimension.
        dim: Label,
        /// Its size.
        size: u32,
    },
    /// Basis `basis` of input dimension `in_dim` has coordinate `value` in `out_dim`, whose size is `size`.
    BasisOutOfRange {
        /// The input dimension of the basis.
        in_dim: Label,
        /// The basis's index in `in_dim`.
        basis: u8,
        /// The output dimension whose coordinate is out of range.
        out_dim: Label,
        /// The coordinate.
        value: u32,
        /// The size of `out_dim`.
        size: u32,
    },
    /// Basis `basis` of `in_dim` lists `got` coordinates; the layout has `expected` output dimensions.
    BasisWrongArity {
        /// The input dimension of the basis.
        in_dim: Label,
        /// The basis's index in `in_dim`.
        basis: u8,
        /// The number of output dimensions.
        expected: u8,
        /// The number of coordinates the basis lists.
        got: u8,
    },
    /// Basis `basis` of `in_dim` is zero or a sum of earlier bases, so two inputs share one element
    /// (a memory layout must be injective).
    NotInjective {
        /// The input dimension of the basis.
        in_dim: Label,
        /// The basis's index in `in_dim`.
        basis: u8,
    },
    /// Bit `bit` of output dimension `out_dim` is reached by no basis (a distributed layout must
    /// cover every element of its tile).
    NotSurjective {
        /// The output dimension.
        out_dim: Label,
        /// The bit of its coordinate that no basis reaches.
        bit: u8,
    },
    /// The same label appears twice among the input or among the output dimensions.
    DuplicateDim {
        /// The repeated label.
        dim: Label,
    },
    /// An operation named a dimension the layout does not have.
    UnknownDim {
        /// The label named.
        dim: Label,
    },
    /// More dimensions than the fixed capacity (`max`) allows.
    TooManyDims {
        /// The capacity.
        max: u8,
    },
    /// Input dimension `dim` has `count` bases; at most `max` are stored.
    TooManyBases {
        /// The input dimension.
        dim: Label,
        /// Its number of bases.
        count: u8,
        /// The capacity.
        max: u8,
    },
    /// The output dimensions need `bits` bits in all; at most `max` are stored.
    TooManyOutBits {
        /// The bits needed.
        bits: u8,
        /// The capacity.
        max: u8,
    },
    /// Two layouts were combined whose dimensions do not fit together (`what` says how).
    Incompatible {
        /// How the dimensions do not fit.
        what: &'static str,
    },
    /// A parameter of a hardware layout family is invalid: `family`'s `param` (entry `index` of a
    /// list parameter) has `value`, and `reason` says what is wrong with it.
    InvalidParameter {
        /// The family's name.
        family: &'static str,
        /// The parameter's name.
        param: &'static str,
        /// The entry of a list parameter, if the parameter is a list.
        index: Option<u8>,
        /// The invalid value.
        value: u32,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// A message rendered without allocation (usable in `const` evaluation).
#[derive(Clone, Copy)]
pub struct ErrorMessage {
    buf: [u8; 240],
    len: usize,
}

impl Default for ErrorMessage {
    fn default() -> Self {
        Self::new()
    }
}

impl ErrorMessage {
    /// An empty message.
    pub const fn new() -> Self {
        Self {
            buf: [0; 240],
            len: 0,
        }
    }

    /// Appends `s`, cut short where the buffer is full.
    pub const fn push_str(mut self, s: &str) -> Self {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Appends `v` in decimal.
    pub const fn push_u32(mut self, mut v: u32) -> Self {
        let mut digits = [0u8; 10];
        let mut n = 0;
        loop {
            digits[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while n > 0 && self.len < self.buf.len() {
            n -= 1;
            self.buf[self.len] = digits[n];
            self.len += 1;
        }
        self
    }

    /// Appends `[a, b, …]`.
    pub const fn push_shape(self, dims: &[u32]) -> Self {
        let mut m = self.push_str("[");
        let mut d = 0;
        while d < dims.len() {
            if d > 0 {
                m = m.push_str(", ");
            }
            m = m.push_u32(dims[d]);
            d += 1;
        }
        m.push_str("]")
    }

    const fn push_label(self, label: Label) -> Self {
        let s = self.push_str("`").push_str(label.stem());
        let s = match label {
            Label::Dim(k) => s.push_u32(k as u32),
            _ => s,
        };
        s.push_str("`")
    }

    /// The text (ASCII by construction).
    pub const fn as_str(&self) -> &str {
        let (text, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(s) => s,
            Err(_) => "invalid layout",
        }
    }
}

/// [`LayoutError::Incompatible`]: the operands of an operation do not fit together (`what`
/// says how).
pub(crate) const fn incompatible(what: &'static str) -> LayoutError {
    LayoutError::Incompatible { what }
}

impl LayoutError {
    /// The message, rendered in `const` context.
    pub const fn message(&self) -> ErrorMessage {
        let m = ErrorMessage::new().push_str("invalid linear layout: ");
        match *self {
            LayoutError::SizeNotPowerOfTwo { dim, size } => m
                .push_str("dimension ")
                .push_label(dim)
                .push_str(" has size ")
                .push_u32(size)
                .push_str(", which is not a power of two"),
            LayoutError::BasisOutOfRange { in_dim, basis, out_dim, value, size } => m
                .push_str("basis ")
                .push_u32(basis as u32)
                .push_str(" of ")
                .push_label(in_dim)
                .push_str(" maps ")
                .push_label(out_dim)
                .push_str(" to ")
                .push_u32(value)
                .push_str(", outside its size ")
                .push_u32(size),
            LayoutError::BasisWrongArity { in_dim, basis, expected, got } => m
                .push_str("basis ")
                .push_u32(basis as u32)
                .push_str(" of ")
                .push_label(in_dim)
                .push_str(" has ")
                .push_u32(got as u32)
                .push_str(if got == 1 { " coordinate" } else { " coordinates" })
                .push_str(", but the layout has ")
                .push_u32(expected as u32)
                .push_str(" output dimensions"),
            LayoutError::NotInjective { in_dim, basis } => m
                .push_str("basis ")
                .push_u32(basis as u32)
                .push_str(" of ")
                .push_label(in_dim)
                .push_str(" is zero or the sum of earlier bases, so two offsets hold the same element (a memory layout must be injective)"),
            LayoutError::NotSurjective { out_dim, bit } => m
                .push_str("no basis reaches bit ")
                .push_u32(bit as u32)
                .push_str(" of ")
                .push_label(out_dim)
                .push_str(", so some elements of the tile belong to no thread (a distributed layout must be surjective)"),
            LayoutError::DuplicateDim { dim } => m
                .push_str("dimension ")
                .push_label(dim)
                .push_str(" is listed twice"),
            LayoutError::UnknownDim { dim } => m
                .push_str("the layout has no dimension ")
                .push_label(dim),
            LayoutError::TooManyDims { max } => m
                .push_str("more than ")
                .push_u32(max as u32)
                .push_str(" input or output dimensions"),
            LayoutError::TooManyBases { dim, count, max } => m
                .push_str("dimension ")
                .push_label(dim)
                .push_str(" has ")
                .push_u32(count as u32)
                .push_str(" bases; at most ")
                .push_u32(max as u32)
                .push_str(" are supported"),
            LayoutError::TooManyOutBits { bits, max } => m
                .push_str("the output dimensions span 2^")
                .push_u32(bits as u32)
                .push_str(" elements; at most 2^")
                .push_u32(max as u32)
                .push_str(" are supported"),
            LayoutError::Incompatible { what } => m.push_str(what),
            LayoutError::InvalidParameter { family, param, index, value, reason } => {
                let m = m.push_str(family).push_str(" layout: `").push_str(param);
                let m = match index {
                    Some(i) => m.push_str("[").push_u32(i as u32).push_str("]"),
                    None => m,
                };
                m.push_str("` is ").push_u32(value).push_str(", ").push_str(reason)
            }
        }
    }

    /// Panics with the message: in `const` evaluation this is a compile error that reads
    /// `evaluation panicked: invalid linear layout: …`.
    #[track_caller]
    pub const fn panic(self) -> ! {
        let message = self.message();
        panic!("{}", message.as_str())
    }
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().as_str())
    }
}

impl core::error::Error for LayoutError {}
