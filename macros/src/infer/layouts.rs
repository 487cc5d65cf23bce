//! The layouts inference works with, and how each shape op maps them (Theorem 9.3: a shape op
//! changes the layout, not the data).
//!
//! Every tile value gets a *normalised* distributed layout: input dimensions `register`, `lane`
//! (5 bits: 32 lanes) and `warp` (log₂ `num_warps` bits), in that order; outputs `dim0 … dim(r-1)`
//! with exactly the tile's shape. Where the threads cover more than the tile, bases are zero
//! (those lanes or warps hold copies). The hardware families of `tessera_layout::families` give
//! `register, lane, warp, block` with `block` of size 1; [`normalize`] drops `block` and pads
//! lanes and warps with zero bases.
//!
//! The shape ops, on the bases (each basis is the coordinate vector a hardware bit maps to):
//! - `trans(perm)`: result coordinate `i` is operand coordinate `perm[i]` (Triton
//!   `transposeLinearLayout`); exact both ways.
//! - `reshape` and `expand_dims`: each basis' coordinates are flattened row-major (last
//!   dimension fastest) and unflattened in the new shape — linear because every size is a power
//!   of two; exact both ways (an `expand_dims` is the reshape that inserts a 1).
//! - `broadcast` (size-1 dimensions repeated): the operand's layout is the result's with the
//!   broadcast coordinates set to 0 and the register bases that became 0 removed (lanes and
//!   warps keep their zero bases: they hold copies). Forward (operand → result) is not unique;
//!   [`broadcast_forward`] gives the broadcast dimensions to the zero lane bases, then the zero
//!   warp bases, then new registers.
//! - `join`: a new last dimension of size 2 held in register bit 0 (a thread holds both halves
//!   side by side); `split` is its inverse, possible exactly when the last dimension is one
//!   register basis and no other basis touches it.
//! - `reduce(axis)`: the slice layout — the axis coordinate dropped, zero register bases removed
//!   (`tessera_layout::families::slice::slice_of`).

use tessera_layout::{Label, LinearLayout, MAX_DIMS};

/// Lanes per warp.
pub const LANES: u32 = 32;

/// The coordinates of each basis per hardware dimension, with the tile shape: the form the
/// transforms work on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bases {
    pub shape: Vec<u64>,
    pub register: Vec<Vec<u64>>,
    pub lane: Vec<Vec<u64>>,
    pub warp: Vec<Vec<u64>>,
}

fn log2(x: u64) -> u32 {
    x.trailing_zeros()
}

impl Bases {
    /// The bases of a layout (outputs must be `dim0 …` in order; `block` must be all zero).
    pub fn of(layout: &LinearLayout) -> Result<Bases, String> {
        let rank = layout.num_out_dims();
        let mut shape = Vec::with_capacity(rank);
        for o in 0..rank {
            if layout.out_label(o) != Label::Dim(o as u8) {
                return Err(format!(
                    "output {o} of the layout is {}, expected dim{o}",
                    layout.out_label(o)
                ));
            }
            shape.push(1u64 << layout.out_bits_at(o));
        }
        let get = |label: Label| -> Vec<Vec<u64>> {
            match layout.in_index(label) {
                Some(i) => (0..layout.in_bits_at(i) as usize)
                    .map(|k| {
                        let c = layout.unpack(layout.packed_basis(i, k));
                        c[..rank].iter().map(|&x| u64::from(x)).collect()
                    })
                    .collect(),
                None => Vec::new(),
            }
        };
        if get(Label::Block).iter().any(|b| b.iter().any(|&x| x != 0)) {
            return Err("the layout spreads the tile over several CTAs".into());
        }
        for i in 0..layout.num_in_dims() {
            let label = layout.in_label(i);
            if !matches!(
                label,
                Label::Register | Label::Lane | Label::Warp | Label::Block
            ) {
                return Err(format!("the layout has input dimension {label}"));
            }
        }
        Ok(Bases {
            shape,
            register: get(Label::Register),
            lane: get(Label::Lane),
            warp: get(Label::Warp),
        })
    }

    /// The normalised layout (see the module docs) for `num_warps` warps.
    pub fn to_layout(&self, num_warps: u32) -> Result<LinearLayout, String> {
        let rank = self.shape.len();
        if rank == 0 || rank > MAX_DIMS {
            return Err(format!(
                "a tile of rank {rank}: layout inference handles ranks 1 to {MAX_DIMS}"
            ));
        }
        let warp_bits = log2(u64::from(num_warps)) as usize;
        if self.lane.len() > LANES.trailing_zeros() as usize || self.warp.len() > warp_bits {
            return Err(format!(
                "the layout uses {} lanes and {} warps, more than 32 and {num_warps}",
                1u64 << self.lane.len(),
                1u64 << self.warp.len()
            ));
        }
        let err = |e: tessera_layout::LayoutError| e.to_string();
        let mut l = LinearLayout::empty();
        for (d, &size) in self.shape.iter().enumerate() {
            let size = u32::try_from(size).map_err(|_| format!("dimension {d} is too large"))?;
            l = l.with_out_dim(Label::Dim(d as u8), size).map_err(err)?;
        }
        let pad = |list: &[Vec<u64>], n: usize| -> Vec<Vec<u64>> {
            let mut v = list.to_vec();
            v.resize(n, vec![0; rank]);
            v
        };
        for (label, list) in [
            (Label::Register, self.register.clone()),
            (Label::Lane, pad(&self.lane, 5)),
            (Label::Warp, pad(&self.warp, warp_bits)),
        ] {
            l = l.with_in_dim(label).map_err(err)?;
            for b in list {
                let coords: Vec<u32> = b.iter().map(|&x| x as u32).collect();
                if b.len() != rank || b.iter().zip(&self.shape).any(|(&c, &s)| c >= s) {
                    return Err(format!("a {label} basis {b:?} is outside the tile"));
                }
                l = l.with_basis(label, &coords).map_err(err)?;
            }
        }
        Ok(l)
    }

    /// Applies `f` to every basis (all hardware dimensions), with a new shape.
    fn map(&self, shape: Vec<u64>, f: impl Fn(&[u64]) -> Vec<u64>) -> Bases {
        Bases {
            shape,
            register: self.register.iter().map(|b| f(b)).collect(),
            lane: self.lane.iter().map(|b| f(b)).collect(),
            warp: self.warp.iter().map(|b| f(b)).collect(),
        }
    }

    /// Drops register bases that are zero (registers that repeat an element).
    fn without_zero_registers(mut self) -> Bases {
        self.register.retain(|b| b.iter().any(|&x| x != 0));
        self
    }
}

/// Normalises a layout for a tile of `shape` (see the module docs); an error if it is not a
/// distributed layout of that tile for `num_warps` warps.
pub fn normalize(
    layout: &LinearLayout,
    shape: &[u64],
    num_warps: u32,
) -> Result<LinearLayout, String> {
    let bases = Bases::of(layout)?;
    if bases.shape != shape {
        return Err(format!(
            "the layout covers {:?}, the tile is {shape:?}",
            bases.shape
        ));
    }
    let l = bases.to_layout(num_warps)?;
    l.check_surjective().map_err(|e| e.to_string())?;
    Ok(l)
}

/// Runs a transform on the bases of a normalised layout.
fn transform(
    layout: &LinearLayout,
    num_warps: u32,
    f: impl FnOnce(Bases) -> Option<Bases>,
) -> Option<LinearLayout> {
    let bases = Bases::of(layout).ok()?;
    let out = f(bases)?;
    let l = out.to_layout(num_warps).ok()?;
    l.is_surjective().then_some(l)
}

/// `trans(perm)`: result dimension `i` is operand dimension `perm[i]`.
pub fn trans(layout: &LinearLayout, perm: &[usize], num_warps: u32) -> Option<LinearLayout> {
    transform(layout, num_warps, |b| {
        if perm.len() != b.shape.len() || perm.iter().any(|&p| p >= b.shape.len()) {
            return None;
        }
        let shape = perm.iter().map(|&p| b.shape[p]).collect();
        Some(b.map(shape, |c| perm.iter().map(|&p| c[p]).collect()))
    })
}

/// The inverse permutation.
pub fn inverse_perm(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        if p < inv.len() {
            inv[p] = i;
        }
    }
    inv
}

/// Row-major reshape of the outputs to `shape` (also `expand_dims`).
pub fn reshape(layout: &LinearLayout, shape: &[u64], num_warps: u32) -> Option<LinearLayout> {
    transform(layout, num_warps, |b| {
        let old = b.shape.clone();
        if old.iter().product::<u64>() != shape.iter().product::<u64>() {
            return None;
        }
        let strides = |s: &[u64]| -> Vec<u64> {
            let mut st = vec![1u64; s.len()];
            for d in (0..s.len().saturating_sub(1)).rev() {
                st[d] = st[d + 1] * s[d + 1];
            }
            st
        };
        let (old_st, new_st) = (strides(&old), strides(shape));
        let new_shape = shape.to_vec();
        Some(b.map(new_shape, |c| {
            let flat: u64 = c.iter().zip(&old_st).map(|(&x, &s)| x * s).sum();
            new_st
                .iter()
                .zip(shape)
                .map(|(&s, &n)| flat / s % n)
                .collect()
        }))
    })
}

/// The operand layout of a `broadcast` whose result has `layout` (see the module docs).
pub fn broadcast_backward(
    layout: &LinearLayout,
    operand_shape: &[u64],
    num_warps: u32,
) -> Option<LinearLayout> {
    transform(layout, num_warps, |b| {
        if operand_shape.len() != b.shape.len() {
            return None;
        }
        let keep: Vec<bool> = operand_shape
            .iter()
            .zip(&b.shape)
            .map(|(&o, &r)| o == r)
            .collect();
        if operand_shape.iter().zip(&keep).any(|(&o, &k)| !k && o != 1) {
            return None;
        }
        let projected = b.map(operand_shape.to_vec(), |c| {
            c.iter()
                .zip(&keep)
                .map(|(&x, &k)| if k { x } else { 0 })
                .collect()
        });
        // Registers that held other broadcast positions now repeat an element: drop them.
        Some(projected.without_zero_registers())
    })
}

/// A result layout for a `broadcast` of an operand in `layout` (see the module docs).
pub fn broadcast_forward(
    layout: &LinearLayout,
    result_shape: &[u64],
    num_warps: u32,
) -> Option<LinearLayout> {
    transform(layout, num_warps, |mut b| {
        if result_shape.len() != b.shape.len() {
            return None;
        }
        let rank = b.shape.len();
        // Fill the broadcast dimensions, last dimension first.
        let mut needed: Vec<Vec<u64>> = Vec::new();
        for d in (0..rank).rev() {
            if b.shape[d] == 1 && result_shape[d] > 1 {
                for k in 0..log2(result_shape[d]) {
                    let mut v = vec![0; rank];
                    v[d] = 1 << k;
                    needed.push(v);
                }
            } else if b.shape[d] != result_shape[d] {
                return None;
            }
        }
        b.shape = result_shape.to_vec();
        let mut next = needed.into_iter();
        for list in [&mut b.lane, &mut b.warp] {
            for basis in list.iter_mut() {
                if basis.iter().all(|&x| x == 0) {
                    match next.next() {
                        Some(v) => *basis = v,
                        None => break,
                    }
                }
            }
        }
        // Lanes and warps a normalised layout pads with zeros count too.
        let warp_bits = log2(u64::from(num_warps)) as usize;
        while b.lane.len() < 5 {
            b.lane.push(next.next().unwrap_or_else(|| vec![0; rank]));
        }
        while b.warp.len() < warp_bits {
            b.warp.push(next.next().unwrap_or_else(|| vec![0; rank]));
        }
        b.register.extend(next);
        Some(b)
    })
}

/// `join`: the result layout for operands in `layout` (a new last dimension in register 0).
pub fn join_forward(layout: &LinearLayout, num_warps: u32) -> Option<LinearLayout> {
    transform(layout, num_warps, |b| {
        let mut shape = b.shape.clone();
        shape.push(2);
        let mut out = b.map(shape, |c| {
            let mut v = c.to_vec();
            v.push(0);
            v
        });
        let mut unit = vec![0; out.shape.len()];
        *unit.last_mut()? = 1;
        out.register.insert(0, unit);
        Some(out)
    })
}

/// `join` backwards (= `split` forwards): the operand layout, if the last dimension is one
/// register basis that no other basis touches.
pub fn join_backward(layout: &LinearLayout, num_warps: u32) -> Option<LinearLayout> {
    transform(layout, num_warps, |mut b| {
        let rank = b.shape.len();
        if rank < 2 || b.shape[rank - 1] != 2 {
            return None;
        }
        let is_unit = |c: &Vec<u64>| c[rank - 1] == 1 && c[..rank - 1].iter().all(|&x| x == 0);
        let position = b.register.iter().position(is_unit)?;
        b.register.remove(position);
        let touches = |list: &[Vec<u64>]| list.iter().any(|c| c[rank - 1] != 0);
        if touches(&b.register) || touches(&b.lane) || touches(&b.warp) {
            return None;
        }
        let mut shape = b.shape.clone();
        shape.pop();
        Some(b.map(shape, |c| c[..rank - 1].to_vec()))
    })
}

/// `reduce(axis)`: the slice layout of the result (`None` for a scalar result).
pub fn reduce_forward(layout: &LinearLayout, axis: usize, num_warps: u32) -> Option<LinearLayout> {
    transform(layout, num_warps, |b| {
        let rank = b.shape.len();
        if rank < 2 || axis >= rank {
            return None;
        }
        let mut shape = b.shape.clone();
        shape.remove(axis);
        let out = b.map(shape, |c| {
            let mut v = c.to_vec();
            v.remove(axis);
            v
        });
        Some(out.without_zero_registers())
    })
}

/// `(register, lane, warp)` bases with a nonzero coordinate along `dim`.
pub fn bases_along(layout: &LinearLayout, dim: usize) -> (u32, u32, u32) {
    let Ok(b) = Bases::of(layout) else {
        return (0, 0, 0);
    };
    let count = |list: &[Vec<u64>]| {
        list.iter()
            .filter(|c| c.get(dim).is_some_and(|&x| x != 0))
            .count() as u32
    };
    (count(&b.register), count(&b.lane), count(&b.warp))
}

/// Compact text of a layout's bases: `register=[1, 2] lane=[4, 8, …] warp=[…]` for rank 1,
/// coordinate tuples `(0, 1)` otherwise.
pub fn bases_text(layout: &LinearLayout) -> String {
    let Ok(b) = Bases::of(layout) else {
        return format!("{layout}");
    };
    let one = |c: &Vec<u64>| {
        if c.len() == 1 {
            c[0].to_string()
        } else {
            let parts: Vec<String> = c.iter().map(u64::to_string).collect();
            format!("({})", parts.join(","))
        }
    };
    let list = |l: &[Vec<u64>]| {
        let parts: Vec<String> = l.iter().map(one).collect();
        format!("[{}]", parts.join(", "))
    };
    format!(
        "register={} lane={} warp={}",
        list(&b.register),
        list(&b.lane),
        list(&b.warp)
    )
}
