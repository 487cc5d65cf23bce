//! Vectors over F₂ packed in `u64`, and the one elimination routine everything else uses.
//!
//! A vector is a `u64` whose bit `i` is coordinate `i`. An [`EchelonBasis`] keeps a set of
//! vectors in reduced form (one pivot bit per vector, the highest set bit), so that membership in
//! the span, rank and coordinates with respect to the inserted vectors are all a few XORs.

/// A basis of a subspace of F₂⁶⁴ in echelon form, remembering how each stored vector was made
/// from the inserted ones (`combo`: bit `j` set = inserted vector `j` takes part).
#[derive(Clone, Copy, Debug)]
pub struct EchelonBasis {
    /// `pivot_vector[p]` is the stored vector whose highest set bit is `p`, or 0.
    pivot_vector: [u64; 64],
    /// For each stored vector, the combination of inserted vectors that equals it.
    pivot_combo: [u64; 64],
    rank: u32,
    inserted: u32,
}

impl EchelonBasis {
    /// The basis of the zero subspace.
    pub const fn new() -> Self {
        Self {
            pivot_vector: [0; 64],
            pivot_combo: [0; 64],
            rank: 0,
            inserted: 0,
        }
    }

    /// Reduces `v` by the stored vectors: returns (remainder, combination of inserted vectors used).
    /// The remainder is 0 exactly when `v` is in the span.
    pub const fn reduce(&self, mut v: u64) -> (u64, u64) {
        let mut combo = 0u64;
        while v != 0 {
            let p = 63 - v.leading_zeros() as usize;
            if self.pivot_vector[p] == 0 {
                break;
            }
            v ^= self.pivot_vector[p];
            combo ^= self.pivot_combo[p];
        }
        // Continue below the first free pivot so the remainder is fully reduced.
        let mut rest = v;
        let mut result = 0u64;
        while rest != 0 {
            let p = 63 - rest.leading_zeros() as usize;
            let bit = 1u64 << p;
            if self.pivot_vector[p] != 0 {
                rest ^= self.pivot_vector[p];
                combo ^= self.pivot_combo[p];
            } else {
                rest ^= bit;
                result ^= bit;
            }
        }
        (result, combo)
    }

    /// Inserts `v` (the `self.inserted()`-th inserted vector, at most 64 are tracked); returns
    /// whether it was independent of the earlier ones.
    pub const fn insert(&mut self, v: u64) -> bool {
        let index = self.inserted;
        self.inserted += 1;
        let (rem, combo) = self.reduce(v);
        if rem == 0 {
            return false;
        }
        let own = if index < 64 { 1u64 << index } else { 0 };
        let p = 63 - rem.leading_zeros() as usize;
        self.pivot_vector[p] = rem;
        self.pivot_combo[p] = combo ^ own;
        self.rank += 1;
        true
    }

    /// Whether `v` lies in the span.
    pub const fn contains(&self, v: u64) -> bool {
        self.reduce(v).0 == 0
    }

    /// The dimension of the span.
    pub const fn rank(&self) -> u32 {
        self.rank
    }

    /// How many vectors were inserted (independent or not).
    pub const fn inserted(&self) -> u32 {
        self.inserted
    }

    /// If `v` is in the span, a set of inserted vectors (bit `j` = vector `j`) whose sum is `v`.
    pub const fn express(&self, v: u64) -> Option<u64> {
        let (rem, combo) = self.reduce(v);
        if rem == 0 {
            Some(combo)
        } else {
            None
        }
    }
}

impl Default for EchelonBasis {
    fn default() -> Self {
        Self::new()
    }
}

/// Mask of the low `bits` bits.
pub const fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_express_agree_with_brute_force() {
        // Vectors 0b011, 0b110, 0b101 (= sum of the first two), 0b1000.
        let vs = [0b011u64, 0b110, 0b101, 0b1000];
        let mut e = EchelonBasis::new();
        let independent: [bool; 4] = core::array::from_fn(|i| e.insert(vs[i]));
        assert_eq!(independent, [true, true, false, true]);
        assert_eq!(e.rank(), 3);
        for target in 0u64..16 {
            // Brute force: all subsets of the inserted vectors.
            let reachable = (0u64..16).find(|s| {
                (0..4)
                    .filter(|j| s >> j & 1 == 1)
                    .fold(0, |acc, j| acc ^ vs[j])
                    == target
            });
            match e.express(target) {
                Some(combo) => {
                    let sum = (0..4)
                        .filter(|j| combo >> j & 1 == 1)
                        .fold(0, |acc, j| acc ^ vs[j]);
                    assert_eq!(sum, target);
                }
                None => assert!(reachable.is_none(), "{target:#b} is reachable"),
            }
        }
    }
}
