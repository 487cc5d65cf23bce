//! Labels of a layout's input and output dimensions.
//!
//! Triton names dimensions by strings; the names that occur are few and fixed, so a label here is
//! a small `Copy` enum that works in `const` code. Hardware dimensions are the inputs of
//! distributed layouts (`register`, `lane`, `warp`, `block`) and of memory layouts (`offset`);
//! logical tensor dimensions are `dim0`, `dim1`, …. Either kind may stand on either side: the
//! inverse of a layout maps `dim*` to `register`/`lane`/`warp`.

use core::fmt;

/// The name of one input or output dimension of a [`LinearLayout`](crate::LinearLayout).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Label {
    /// Registers of one thread (`Reg` in the paper).
    Register,
    /// Lanes of a warp (`Thr`).
    Lane,
    /// Warps of a CTA (`Wrp`).
    Warp,
    /// CTAs of a cluster.
    Block,
    /// Element offset in a memory (shared-memory) layout.
    Offset,
    /// A logical tensor dimension `dimK`.
    Dim(u8),
}

impl Label {
    /// `dimK`.
    pub const fn dim(k: u8) -> Self {
        Label::Dim(k)
    }

    /// Whether two labels are the same (`==` is not `const`).
    pub const fn same(self, other: Label) -> bool {
        match (self, other) {
            (Label::Register, Label::Register)
            | (Label::Lane, Label::Lane)
            | (Label::Warp, Label::Warp)
            | (Label::Block, Label::Block)
            | (Label::Offset, Label::Offset) => true,
            (Label::Dim(a), Label::Dim(b)) => a == b,
            _ => false,
        }
    }

    /// The name as Triton spells it, without the number of a `dimK`.
    pub const fn stem(self) -> &'static str {
        match self {
            Label::Register => "register",
            Label::Lane => "lane",
            Label::Warp => "warp",
            Label::Block => "block",
            Label::Offset => "offset",
            Label::Dim(_) => "dim",
        }
    }

    /// Parses Triton's spelling (`register`, `lane`, `warp`, `block`, `offset`, `dim0`, …).
    pub fn parse(name: &str) -> Option<Label> {
        Some(match name {
            "register" => Label::Register,
            "lane" => Label::Lane,
            "warp" => Label::Warp,
            "block" => Label::Block,
            "offset" => Label::Offset,
            _ => {
                let k: u8 = name.strip_prefix("dim")?.parse().ok()?;
                Label::Dim(k)
            }
        })
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Dim(k) => write!(f, "dim{k}"),
            other => f.write_str(other.stem()),
        }
    }
}
