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
//! The shape ops are `LinearLayout`'s own (`tessera_layout`'s `shape_ops`), each followed by
//! the normalisation, in both directions where inference propagates both ways:
//! - `trans(perm)` ([`LinearLayout::trans`]); backwards it is the inverse permutation.
//! - `reshape` and `expand_dims` ([`LinearLayout::reshape`]: row-major, exact both ways; an
//!   `expand_dims` is the reshape that inserts a 1).
//! - `broadcast`: backwards [`LinearLayout::unbroadcast`] (the broadcast coordinates set to 0,
//!   registers that became 0 removed; lanes and warps keep their zero bases: copies); forwards
//!   (not unique) [`LinearLayout::broadcast`] gives the new bits to the zero lane bases, then the
//!   zero warp bases, then new registers.
//! - `join` ([`LinearLayout::join`]: a new last dimension of size 2 in register bit 0) and its
//!   inverse `split` ([`LinearLayout::split`]: when the last dimension is one register basis
//!   that no other basis touches).
//! - `reduce(axis)`: the slice layout ([`LinearLayout::remove_dim`]).

use tessera_layout::{Label, LayoutError, LinearLayout, MAX_DIMS};

/// Lanes per warp.
pub const LANES: u32 = 32;

/// The tile shape a layout covers (its output sizes).
fn covered_shape(layout: &LinearLayout) -> Vec<u64> {
    (0..layout.num_out_dims())
        .map(|o| 1u64 << layout.out_bits_at(o))
        .collect()
}

/// Normalises a layout for a tile of `shape` (see the module docs); an error if it is not a
/// distributed layout of that tile for `num_warps` warps.
pub fn normalize(
    layout: &LinearLayout,
    shape: &[u64],
    num_warps: u32,
) -> Result<LinearLayout, String> {
    let rank = layout.num_out_dims();
    for o in 0..rank {
        if layout.out_label(o) != Label::Dim(o as u8) {
            return Err(format!(
                "output {o} of the layout is {}, expected dim{o}",
                layout.out_label(o)
            ));
        }
    }
    if let Some(b) = layout.in_index(Label::Block) {
        if (0..layout.in_bits_at(b) as usize).any(|k| layout.packed_basis(b, k) != 0) {
            return Err("the layout spreads the tile over several CTAs".into());
        }
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
    let covered = covered_shape(layout);
    if covered != shape {
        return Err(format!(
            "the layout covers {covered:?}, the tile is {shape:?}"
        ));
    }
    if rank == 0 || rank > MAX_DIMS {
        return Err(format!(
            "a tile of rank {rank}: layout inference handles ranks 1 to {MAX_DIMS}"
        ));
    }
    let (lane_bits, warp_bits) = (LANES.trailing_zeros(), num_warps.trailing_zeros());
    if layout.in_bits(Label::Lane) > lane_bits || layout.in_bits(Label::Warp) > warp_bits {
        return Err(format!(
            "the layout uses {} lanes and {} warps, more than 32 and {num_warps}",
            layout.in_size(Label::Lane),
            layout.in_size(Label::Warp)
        ));
    }
    let err = |e: LayoutError| e.to_string();
    // Register, lane and warp in that order, lanes and warps padded with zero bases.
    let mut l = LinearLayout::empty();
    for (d, &size) in covered.iter().enumerate() {
        l = l
            .with_out_dim(Label::Dim(d as u8), size as u32)
            .map_err(err)?;
    }
    for (i, (label, bits)) in [
        (Label::Register, layout.in_bits(Label::Register)),
        (Label::Lane, lane_bits),
        (Label::Warp, warp_bits),
    ]
    .into_iter()
    .enumerate()
    {
        l = l.with_in_dim(label).map_err(err)?;
        let from = layout.in_index(label);
        for k in 0..bits as usize {
            let basis = match from {
                Some(f) if k < layout.in_bits_at(f) as usize => layout.packed_basis(f, k),
                _ => 0,
            };
            l.push_packed_basis(i, basis).map_err(err)?;
        }
    }
    l.check_surjective().map_err(|e| e.to_string())?;
    Ok(l)
}

/// A shape op's result, normalised for `num_warps` warps (`None` if the op does not apply or
/// its result is no distributed layout of its tile).
fn normalized(result: Result<LinearLayout, LayoutError>, num_warps: u32) -> Option<LinearLayout> {
    let l = result.ok()?;
    normalize(&l, &covered_shape(&l), num_warps).ok()
}

/// Tile sizes as the layout crate takes them (`None` if one does not fit).
fn sizes(shape: &[u64]) -> Option<Vec<u32>> {
    shape.iter().map(|&s| u32::try_from(s).ok()).collect()
}

/// `trans(perm)`: result dimension `i` is operand dimension `perm[i]`.
pub fn trans(layout: &LinearLayout, perm: &[usize], num_warps: u32) -> Option<LinearLayout> {
    normalized(layout.trans(perm), num_warps)
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
    normalized(layout.reshape(&sizes(shape)?), num_warps)
}

/// The operand layout of a `broadcast` whose result has `layout` (see the module docs).
pub fn broadcast_backward(
    layout: &LinearLayout,
    operand_shape: &[u64],
    num_warps: u32,
) -> Option<LinearLayout> {
    normalized(layout.unbroadcast(&sizes(operand_shape)?), num_warps)
}

/// A result layout for a `broadcast` of an operand in `layout` (see the module docs).
pub fn broadcast_forward(
    layout: &LinearLayout,
    result_shape: &[u64],
    num_warps: u32,
) -> Option<LinearLayout> {
    // The zero lane and warp bases of the normalised layout take the new bits first.
    let padded = normalize(layout, &covered_shape(layout), num_warps).ok()?;
    normalized(padded.broadcast(&sizes(result_shape)?), num_warps)
}

/// `join`: the result layout for operands in `layout` (a new last dimension in register 0).
pub fn join_forward(layout: &LinearLayout, num_warps: u32) -> Option<LinearLayout> {
    normalized(layout.join(), num_warps)
}

/// `join` backwards (= `split` forwards): the operand layout, if the last dimension is one
/// register basis that no other basis touches.
pub fn join_backward(layout: &LinearLayout, num_warps: u32) -> Option<LinearLayout> {
    normalized(layout.split(), num_warps)
}

/// `reduce(axis)`: the slice layout of the result (`None` for a scalar result).
pub fn reduce_forward(layout: &LinearLayout, axis: usize, num_warps: u32) -> Option<LinearLayout> {
    if layout.num_out_dims() < 2 {
        return None;
    }
    normalized(layout.remove_dim(axis), num_warps)
}

/// The coordinates of every basis of input dimension `label`.
fn coordinates(layout: &LinearLayout, label: Label) -> Vec<Vec<u32>> {
    let rank = layout.num_out_dims();
    match layout.in_index(label) {
        Some(i) => (0..layout.in_bits_at(i) as usize)
            .map(|k| layout.unpack(layout.packed_basis(i, k))[..rank].to_vec())
            .collect(),
        None => Vec::new(),
    }
}

/// `(register, lane, warp)` bases with a nonzero coordinate along `dim`.
pub fn bases_along(layout: &LinearLayout, dim: usize) -> (u32, u32, u32) {
    let count = |label: Label| {
        coordinates(layout, label)
            .iter()
            .filter(|c| c.get(dim).is_some_and(|&x| x != 0))
            .count() as u32
    };
    (
        count(Label::Register),
        count(Label::Lane),
        count(Label::Warp),
    )
}

/// Compact text of a layout's bases: `register=[1, 2] lane=[4, 8, …] warp=[…]` for rank 1,
/// coordinate tuples `(0, 1)` otherwise.
pub fn bases_text(layout: &LinearLayout) -> String {
    let one = |c: &Vec<u32>| {
        if c.len() == 1 {
            c[0].to_string()
        } else {
            let parts: Vec<String> = c.iter().map(u32::to_string).collect();
            format!("({})", parts.join(","))
        }
    };
    let list = |label: Label| {
        let parts: Vec<String> = coordinates(layout, label).iter().map(one).collect();
        format!("[{}]", parts.join(", "))
    };
    format!(
        "register={} lane={} warp={}",
        list(Label::Register),
        list(Label::Lane),
        list(Label::Warp)
    )
}
