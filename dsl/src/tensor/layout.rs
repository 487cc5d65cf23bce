//! `TensorLayout`: the sizes, strides and offset of a tensor view, in elements, and the views
//! made from one without copying (slice, narrow, transpose, reshape).

use crate::launch::LaunchError;
use std::ops::Range;

/// The largest rank a tensor has (sizes and strides live in fixed arrays, so making a view or
/// launching with one allocates nothing).
pub const MAX_RANK: usize = 4;

/// Sizes, strides and the offset of the first element, all in elements of the tensor's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorLayout {
    rank: usize,
    sizes: [usize; MAX_RANK],
    strides: [usize; MAX_RANK],
    offset: usize,
}

fn error(what: &str, reason: String) -> LaunchError {
    LaunchError::Tensor {
        what: what.to_string(),
        reason,
    }
}

impl TensorLayout {
    /// The row-major (C order) layout of `sizes`, offset 0.
    pub fn contiguous(sizes: &[usize]) -> Result<TensorLayout, LaunchError> {
        if sizes.len() > MAX_RANK {
            return Err(error(
                "making a tensor",
                format!(
                    "rank {} is above the largest supported rank {MAX_RANK}",
                    sizes.len()
                ),
            ));
        }
        let mut layout = TensorLayout {
            rank: sizes.len(),
            sizes: [1; MAX_RANK],
            strides: [0; MAX_RANK],
            offset: 0,
        };
        let mut stride = 1usize;
        for d in (0..sizes.len()).rev() {
            layout.sizes[d] = sizes[d];
            layout.strides[d] = stride;
            stride = stride.checked_mul(sizes[d].max(1)).ok_or_else(|| {
                error(
                    "making a tensor",
                    format!("sizes {sizes:?} overflow the address space"),
                )
            })?;
        }
        Ok(layout)
    }

    /// A layout from explicit sizes, strides and offset (elements); [`Self::extent`] says
    /// how much memory it reaches.
    pub fn strided(
        sizes: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<TensorLayout, LaunchError> {
        if sizes.len() != strides.len() {
            return Err(error(
                "making a strided tensor view",
                format!("{} sizes but {} strides", sizes.len(), strides.len()),
            ));
        }
        let mut layout = TensorLayout::contiguous(sizes)?;
        layout.strides[..strides.len()].copy_from_slice(strides);
        layout.offset = offset;
        layout.extent()?;
        Ok(layout)
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The sizes, one per dimension.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes[..self.rank]
    }

    /// The strides in elements, one per dimension.
    pub fn strides(&self) -> &[usize] {
        &self.strides[..self.rank]
    }

    /// The first element's index in the allocation.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.sizes().iter().product()
    }

    /// Whether the elements are row-major and dense (what `reshape` needs).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1usize;
        for d in (0..self.rank).rev() {
            if self.sizes[d] != 1 && self.strides[d] != expected {
                return false;
            }
            expected *= self.sizes[d];
        }
        true
    }

    /// One past the largest element index the view reaches (`offset` when it has no element):
    /// `offset + Σ (size − 1) · stride + 1`. An error when that overflows.
    pub fn extent(&self) -> Result<usize, LaunchError> {
        if self.numel() == 0 {
            return Ok(self.offset);
        }
        let mut last = self.offset;
        for d in 0..self.rank {
            last = (self.sizes[d] - 1)
                .checked_mul(self.strides[d])
                .and_then(|reach| last.checked_add(reach))
                .ok_or_else(|| {
                    error(
                        "a tensor view",
                        format!(
                            "sizes {:?} with strides {:?} overflow the address space",
                            self.sizes(),
                            self.strides()
                        ),
                    )
                })?;
        }
        last.checked_add(1).ok_or_else(|| {
            error(
                "a tensor view",
                "its last element is past the address space".to_string(),
            )
        })
    }

    /// `Ok` when every element the view reaches lies in an allocation of `len` elements.
    pub fn check_within(&self, len: usize, what: &str) -> Result<(), LaunchError> {
        let extent = self.extent()?;
        if extent <= len {
            return Ok(());
        }
        Err(error(
            what,
            format!(
                "sizes {:?} with strides {:?} from element {} reach element {} of an \
                 allocation of {len} elements",
                self.sizes(),
                self.strides(),
                self.offset,
                extent - 1
            ),
        ))
    }

    fn check_dim(&self, dim: usize, what: &str) -> Result<(), LaunchError> {
        if dim < self.rank {
            return Ok(());
        }
        Err(error(
            what,
            format!(
                "dimension {dim} does not exist in a tensor of rank {}",
                self.rank
            ),
        ))
    }

    /// The elements `range` of dimension `dim` (same rank).
    pub fn slice(&self, dim: usize, range: Range<usize>) -> Result<TensorLayout, LaunchError> {
        self.check_dim(dim, "slicing a tensor")?;
        if range.start > range.end || range.end > self.sizes[dim] {
            return Err(error(
                "slicing a tensor",
                format!(
                    "range {range:?} of dimension {dim} is outside its size {}",
                    self.sizes[dim]
                ),
            ));
        }
        let mut view = *self;
        view.offset += range.start * self.strides[dim];
        view.sizes[dim] = range.end - range.start;
        Ok(view)
    }

    /// `len` elements of dimension `dim` from `start` (as `slice(dim, start..start + len)`).
    pub fn narrow(
        &self,
        dim: usize,
        start: usize,
        len: usize,
    ) -> Result<TensorLayout, LaunchError> {
        let end = start.checked_add(len).ok_or_else(|| {
            error(
                "narrowing a tensor",
                format!("start {start} + length {len} overflows"),
            )
        })?;
        self.slice(dim, start..end)
    }

    /// Dimensions `a` and `b` swapped.
    pub fn transpose(&self, a: usize, b: usize) -> Result<TensorLayout, LaunchError> {
        self.check_dim(a, "transposing a tensor")?;
        self.check_dim(b, "transposing a tensor")?;
        let mut view = *self;
        view.sizes.swap(a, b);
        view.strides.swap(a, b);
        Ok(view)
    }

    /// The same elements under new sizes; the view must be contiguous and the element count
    /// unchanged.
    pub fn reshape(&self, sizes: &[usize]) -> Result<TensorLayout, LaunchError> {
        if !self.is_contiguous() {
            return Err(error(
                "reshaping a tensor",
                format!(
                    "the view (sizes {:?}, strides {:?}) is not contiguous, so no view has sizes \
                     {sizes:?}; copy it first",
                    self.sizes(),
                    self.strides()
                ),
            ));
        }
        let mut view = TensorLayout::contiguous(sizes)?;
        if view.numel() != self.numel() {
            return Err(error(
                "reshaping a tensor",
                format!(
                    "sizes {sizes:?} hold {} elements, the tensor {:?} holds {}",
                    view.numel(),
                    self.sizes(),
                    self.numel()
                ),
            ));
        }
        view.offset = self.offset;
        Ok(view)
    }

    /// The allocation index of every element, in row-major order of the view.
    pub fn element_indices(&self) -> impl Iterator<Item = usize> + '_ {
        let numel = self.numel();
        let mut index = [0usize; MAX_RANK];
        (0..numel).map(move |_| {
            let at = self.offset
                + (0..self.rank)
                    .map(|d| index[d] * self.strides[d])
                    .sum::<usize>();
            for d in (0..self.rank).rev() {
                index[d] += 1;
                if index[d] < self.sizes[d] {
                    break;
                }
                index[d] = 0;
            }
            at
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_keep_the_extent_and_order() {
        let t = TensorLayout::contiguous(&[3, 4]).unwrap();
        assert_eq!(t.strides(), &[4, 1]);
        assert_eq!(t.extent().unwrap(), 12);
        let s = t.slice(1, 1..3).unwrap();
        assert_eq!((s.sizes(), s.offset()), (&[3usize, 2][..], 1));
        assert_eq!(s.element_indices().collect::<Vec<_>>(), [1, 2, 5, 6, 9, 10]);
        assert!(!s.is_contiguous());
        let tr = t.transpose(0, 1).unwrap();
        assert_eq!(tr.sizes(), &[4, 3]);
        assert_eq!(
            tr.element_indices().take(4).collect::<Vec<_>>(),
            [0, 4, 8, 1]
        );
        assert!(tr.reshape(&[12]).is_err());
        let r = t.narrow(0, 1, 2).unwrap().reshape(&[8]).unwrap();
        assert_eq!((r.offset(), r.extent().unwrap()), (4, 12));
        assert!(t
            .reshape(&[5])
            .unwrap_err()
            .to_string()
            .contains("hold 5 elements"));
        assert!(t
            .slice(2, 0..1)
            .unwrap_err()
            .to_string()
            .contains("dimension 2"));
        assert!(t
            .slice(0, 2..4)
            .unwrap_err()
            .to_string()
            .contains("outside its size 3"));
    }

    #[test]
    fn strided_views_are_checked_against_the_allocation() {
        let v = TensorLayout::strided(&[2, 3], &[10, 2], 1).unwrap();
        assert_eq!(v.extent().unwrap(), 1 + 10 + 4 + 1);
        v.check_within(16, "x").unwrap();
        let err = v.check_within(15, "argument `x`").unwrap_err().to_string();
        assert!(
            err.contains("reach element 15 of an allocation of 15 elements"),
            "{err}"
        );
        let empty = TensorLayout::contiguous(&[0, 5]).unwrap();
        assert_eq!(empty.extent().unwrap(), 0);
        assert!(TensorLayout::contiguous(&[1, 1, 1, 1, 1]).is_err());
        assert!(TensorLayout::strided(&[2], &[usize::MAX], 0).is_err());
    }
}
