//! Loops over a constant number of indices, written out in full: [`each_index`], and the array
//! builders on it, [`from_fn`] and [`map`].
//!
//! Device code runs such loops on every register array: a load packs its vector into words, a
//! shuffle or an `mma` converts its fragments, once per vector of every tile. A kernel inlines
//! thousands of them. Written as `while` loops or with `core::array::{from_fn, map}`, each one
//! reaches LLVM as a loop with a constant trip count, which LLVM unrolls completely — but only
//! after its loop passes (rotation, full unrolling) have run on each loop over the whole
//! kernel, at a cost that grows with the kernel: on the flash-attention kernels (about 3,000
//! such loops each) those passes were nine tenths of the device build. The helpers here give
//! LLVM no loop at all for up to [`UNROLLED`] indices: they call the body once per index under
//! a condition on the constant `N` that folds away before the loop passes run. The code they
//! produce is the one the unrolled loops gave.

use core::mem::MaybeUninit;

/// Indices written out by [`each_index`]; beyond them it loops.
pub const UNROLLED: usize = 64;

/// Calls `f(0)`, `f(1)`, …, `f(N - 1)` in order: straight-line code for `N ≤` [`UNROLLED`], a
/// loop for the indices past it.
#[inline(always)]
pub fn each_index<const N: usize>(mut f: impl FnMut(usize)) {
    macro_rules! steps {
        ($($i:literal)*) => {
            $(if $i < N {
                f($i);
            })*
        };
    }
    steps!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61
        62 63
    );
    let mut i = UNROLLED;
    while i < N {
        f(i);
        i += 1;
    }
}

/// `[f(0), f(1), …, f(N - 1)]`, as `core::array::from_fn`, through [`each_index`].
#[inline(always)]
pub fn from_fn<T: Copy, const N: usize>(mut f: impl FnMut(usize) -> T) -> [T; N] {
    let mut out = [const { MaybeUninit::<T>::uninit() }; N];
    each_index::<N>(|i| out[i] = MaybeUninit::new(f(i)));
    // SAFETY: `each_index` wrote every element of `out`, and `[MaybeUninit<T>; N]` has the
    // layout of `[T; N]`.
    unsafe { core::mem::transmute_copy(&out) }
}

/// `[f(a[0]), …, f(a[N - 1])]`, as `<[T; N]>::map`, through [`each_index`].
#[inline(always)]
pub fn map<T: Copy, U: Copy, const N: usize>(a: [T; N], mut f: impl FnMut(T) -> U) -> [U; N] {
    from_fn(|i| f(a[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_index_visits_every_index_once_in_order() {
        fn visited<const N: usize>() -> Vec<usize> {
            let mut seen = Vec::new();
            each_index::<N>(|i| seen.push(i));
            seen
        }
        assert_eq!(visited::<0>(), Vec::<usize>::new());
        assert_eq!(visited::<1>(), [0]);
        assert_eq!(visited::<7>(), (0..7).collect::<Vec<_>>());
        // Across the written-out indices and into the loop.
        assert_eq!(visited::<64>(), (0..64).collect::<Vec<_>>());
        assert_eq!(visited::<65>(), (0..65).collect::<Vec<_>>());
        assert_eq!(visited::<130>(), (0..130).collect::<Vec<_>>());
    }

    #[test]
    fn from_fn_and_map_agree_with_core() {
        let a: [u32; 70] = from_fn(|i| (i as u32).wrapping_mul(2_654_435_761));
        assert_eq!(
            a,
            core::array::from_fn(|i| (i as u32).wrapping_mul(2_654_435_761))
        );
        let f = |x: u32| (x >> 3) as u16 ^ 0x5a5a;
        assert_eq!(map(a, f), a.map(f));
        let empty: [u8; 0] = from_fn(|_| -> u8 { unreachable!() });
        assert_eq!(empty, [0u8; 0]);
    }
}
