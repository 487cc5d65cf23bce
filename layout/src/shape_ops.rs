//! Shape transforms of a tile as maps of its layout (Theorem 9.3: a shape op moves no data, it
//! relabels where each element sits), with Triton's semantics for `tt.trans`, `tt.reshape`,
//! `tt.expand_dims`, `tt.broadcast`, `tt.join`, `tt.split` and the slice layout of a reduction.
//!
//! The layouts are a tile's: output dimensions `dim0 … dim(r-1)` in order, any input
//! dimensions. Every operation is a `const fn` built from the algebra's own (`reshape_outs`,
//! `resize_out_dim`, `remove_zero_bases`, `product`, …) and, for `trans`, `reshape` and the
//! slice, the family helpers that implement Triton's (`permute_out_coords`,
//! `reshape_row_major`, `slice_of`).

use crate::error::incompatible;
use crate::families::shape::{permute_out_coords, reshape_row_major};
use crate::families::slice::slice_of;
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

/// `dim0 … dim(n-1)` with `sizes`, as the `(label, size)` list the algebra takes.
const fn dims(sizes: &[u32]) -> [(Label, u32); MAX_DIMS] {
    let mut out = [(Label::Dim(0), 1); MAX_DIMS];
    let mut d = 0;
    while d < sizes.len() && d < MAX_DIMS {
        out[d] = (Label::Dim(d as u8), sizes[d]);
        d += 1;
    }
    out
}

impl LinearLayout {
    /// The output sizes, `dim0` first (the tile's shape).
    pub const fn out_sizes(&self) -> ([u32; MAX_DIMS], usize) {
        let mut sizes = [1u32; MAX_DIMS];
        let mut o = 0;
        while o < self.num_out_dims() {
            sizes[o] = 1 << self.out_bits_at(o);
            o += 1;
        }
        (sizes, self.num_out_dims())
    }

    /// Ok if the outputs are `dim0 … dim(r-1)` in order (a tile's layout).
    pub const fn check_tile_outs(&self) -> Result<(), LayoutError> {
        let mut o = 0;
        while o < self.num_out_dims() {
            if !self.out_label(o).same(Label::Dim(o as u8)) {
                return Err(incompatible(
                    "a tile's layout has the outputs dim0, dim1, … in order",
                ));
            }
            o += 1;
        }
        Ok(())
    }

    /// `trans(perm)`: result dimension `i` is dimension `perm[i]` (Triton `tt.trans`,
    /// `transposeLinearLayout`). `L'(x)_i = L(x)_{perm[i]}`: rows permuted by dimension.
    pub const fn trans(&self, perm: &[usize]) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        let rank = self.num_out_dims();
        if perm.len() != rank {
            return Err(incompatible(
                "trans: the permutation has another rank than the tile",
            ));
        }
        let mut order = [0u32; MAX_DIMS];
        let mut seen = [false; MAX_DIMS];
        let mut i = 0;
        while i < rank {
            if perm[i] >= rank || seen[perm[i]] {
                return Err(incompatible(
                    "trans: not a permutation of the tile's dimensions",
                ));
            }
            seen[perm[i]] = true;
            order[i] = perm[i] as u32;
            i += 1;
        }
        permute_out_coords(self, order.split_at(rank).0)
    }

    /// The tile reshaped to `shape`, elements in row-major order (Triton `tt.reshape`,
    /// `reshapeLayout`). L'(x) = unflatten_shape(flatten(L(x))), the last dimension fastest.
    pub const fn reshape(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        reshape_row_major(self, shape)
    }

    /// A dimension of size 1 inserted at `axis` (Triton `tt.expand_dims`).
    /// L'(x) = (L(x)_0, …, 0, …, L(x)_{r-1}): the reshape that inserts a 1.
    pub const fn expand_dims(&self, axis: usize) -> Result<LinearLayout, LayoutError> {
        let (sizes, rank) = self.out_sizes();
        if axis > rank || rank >= MAX_DIMS {
            return Err(incompatible(
                "expand_dims: the axis is past the tile's rank",
            ));
        }
        let mut shape = [1u32; MAX_DIMS];
        let mut d = 0;
        while d < rank {
            shape[if d < axis { d } else { d + 1 }] = sizes[d];
            d += 1;
        }
        self.reshape(shape.split_at(rank + 1).0)
    }

    /// The operand layout of a broadcast to this layout from `shape` (each dimension equal to
    /// the result's, or 1). L'(x) = L(x) with the broadcast coordinates set to 0,
    /// registers that then repeat an element dropped (lanes and warps keep theirs: copies).
    pub const fn unbroadcast(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        if shape.len() != self.num_out_dims() {
            return Err(incompatible("broadcast: the shapes have different ranks"));
        }
        let mut result = *self;
        let mut d = 0;
        while d < shape.len() {
            let size = 1u32 << self.out_bits_at(d);
            if shape[d] != size {
                if shape[d] != 1 {
                    return Err(incompatible(
                        "broadcast: a dimension differs and is not 1 in the operand",
                    ));
                }
                result = tri!(result.resize_out_dim(Label::Dim(d as u8), 1));
            }
            d += 1;
        }
        result.remove_zero_bases(Label::Register)
    }

    /// A result layout of broadcasting this layout's size-1 dimensions to `shape`.
    /// The new coordinate bits (last dimension first, low bits first) go to the zero lane
    /// bases, then the zero warp bases, then to new registers (Triton's choice: copies first).
    pub const fn broadcast(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        let rank = self.num_out_dims();
        if shape.len() != rank {
            return Err(incompatible("broadcast: the shapes have different ranks"));
        }
        let mut result = *self;
        let mut d = 0;
        while d < rank {
            let size = 1u32 << self.out_bits_at(d);
            if size == 1 && shape[d] > 1 {
                result = tri!(result.resize_out_dim(Label::Dim(d as u8), shape[d]));
            } else if size != shape[d] {
                return Err(incompatible(
                    "broadcast: a dimension differs and is not 1 in the operand",
                ));
            }
            d += 1;
        }
        // The bits to place, in order: dimension rank-1 down to 0, each from its low bit.
        let mut needed = [0u64; 64];
        let mut count = 0;
        d = rank;
        while d > 0 {
            d -= 1;
            if self.out_bits_at(d) == 0 {
                let mut k = 0;
                while k < result.out_bits_at(d) {
                    needed[count] = 1u64 << (result.out_offset(d) + k);
                    count += 1;
                    k += 1;
                }
            }
        }
        let mut next = 0;
        let hardware = [Label::Lane, Label::Warp];
        let mut h = 0;
        while h < hardware.len() {
            if let Some(i) = result.in_index(hardware[h]) {
                let mut k = 0;
                while k < result.in_bits_at(i) as usize && next < count {
                    if result.packed_basis(i, k) == 0 {
                        result.set_packed_basis(i, k, needed[next]);
                        next += 1;
                    }
                    k += 1;
                }
            }
            h += 1;
        }
        if next < count {
            let Some(r) = result.in_index(Label::Register) else {
                return Err(incompatible(
                    "broadcast: the layout has no register dimension",
                ));
            };
            while next < count {
                tri!(result.push_packed_basis(r, needed[next]));
                next += 1;
            }
        }
        Ok(result)
    }

    /// Two tiles stacked along a new last dimension of size 2, held in register bit 0 (Triton
    /// `tt.join`). L'(r₀ ⊕ 2r, x) = (L(r, x), r₀): a thread holds both halves side by side.
    pub const fn join(&self) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        let rank = self.num_out_dims();
        if rank >= MAX_DIMS {
            return Err(incompatible(
                "join: the tile has the most dimensions a layout has",
            ));
        }
        let halves = tri!(LinearLayout::identity_1d(
            2,
            Label::Register,
            Label::Dim(rank as u8)
        ));
        let joined = tri!(halves.product(self));
        let mut order = [Label::Dim(0); MAX_DIMS];
        let mut d = 0;
        while d <= rank {
            order[d] = Label::Dim(d as u8);
            d += 1;
        }
        joined.transpose_outs(order.split_at(rank + 1).0)
    }

    /// The inverse of [`LinearLayout::join`] (Triton `tt.split`): possible exactly when the last
    /// dimension has size 2, is one register basis, and no other basis touches it.
    /// L'(x) = L(x) without its last coordinate, that register basis removed.
    pub const fn split(&self) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        let rank = self.num_out_dims();
        if rank < 2 || self.out_bits_at(rank - 1) != 1 {
            return Err(incompatible("split: the last dimension has size 2"));
        }
        let last = 1u64 << self.out_offset(rank - 1);
        let Some(r) = self.in_index(Label::Register) else {
            return Err(incompatible("split: the layout has no register dimension"));
        };
        let mut halves = None;
        let mut k = 0;
        while k < self.in_bits_at(r) as usize && halves.is_none() {
            if self.packed_basis(r, k) == last {
                halves = Some(k);
            }
            k += 1;
        }
        let Some(halves) = halves else {
            return Err(incompatible("split: no register holds the two halves"));
        };
        let without = tri!(self.without_basis(Label::Register, halves));
        let mut i = 0;
        while i < without.num_in_dims() {
            let mut k = 0;
            while k < without.in_bits_at(i) as usize {
                if without.packed_basis(i, k) & last != 0 {
                    return Err(incompatible(
                        "split: another basis than one register touches the last dimension",
                    ));
                }
                k += 1;
            }
            i += 1;
        }
        let narrowed = tri!(without.resize_out_dim(Label::Dim((rank - 1) as u8), 1));
        narrowed.without_out_dim(rank - 1)
    }

    /// The layout of a reduction's result along `axis` (Triton's slice layout, `slice_of`).
    /// L'(x) = L(x) without coordinate `axis`, registers that then repeat an element dropped.
    pub const fn remove_dim(&self, axis: usize) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_tile_outs());
        if axis >= self.num_out_dims() {
            return Err(incompatible("reduce: the axis is past the tile's rank"));
        }
        slice_of(self, axis as u32)
    }

    /// Output `axis` (of size 1) removed and the rest renamed `dim0 … dim(r-2)`.
    /// L'(x) = L(x) minus a coordinate that is always 0: the matrix is unchanged.
    const fn without_out_dim(&self, axis: usize) -> Result<LinearLayout, LayoutError> {
        if self.out_bits_at(axis) != 0 {
            return Err(incompatible("only a dimension of size 1 can be removed"));
        }
        let (sizes, rank) = self.out_sizes();
        let mut kept = [1u32; MAX_DIMS];
        let mut d = 0;
        while d + 1 < rank {
            kept[d] = sizes[if d < axis { d } else { d + 1 }];
            d += 1;
        }
        let all = dims(&kept);
        self.reshape_outs(all.split_at(rank - 1).0)
    }

    /// Input dimension `label` without its basis `k` (the others keep their order).
    /// M' = M with column k of `label`'s block deleted.
    pub const fn without_basis(&self, label: Label, k: usize) -> Result<LinearLayout, LayoutError> {
        let at = tri!(self.in_index_or_err(label));
        let mut result = *self;
        // Shift the later bases down one place, then drop the last by shrinking the dimension.
        let mut j = k;
        while j + 1 < self.in_bits_at(at) as usize {
            result.set_packed_basis(at, j, self.packed_basis(at, j + 1));
            j += 1;
        }
        if k >= self.in_bits_at(at) as usize {
            return Err(incompatible("without_basis: no such basis"));
        }
        result.resize_in_dim(label, 1 << (self.in_bits_at(at) - 1))
    }
}
