//! Warps of 32 lanes and AMD's waves of 64: the same threads, two ways of naming them.
//!
//! The tile compiler's layouts name a thread by (lane `0..32`, warp): `tessera::device`'s
//! contract, which on CDNA (gfx90a, gfx942) makes a warp half a wave. A wave of 64 lanes is warps
//! `2w` and `2w + 1`: wave lane `l + 32·(warp mod 2)`, wave `warp / 2`. A layout on warps and the
//! same layout on waves differ only in that relabelling of their input bits — warp bit 0 is wave
//! lane bit 5 — so every element stays where it is ([`warps_as_wave`], [`wave_as_warps`]).
//!
//! Planning on the wave view finds what the hardware does within a wave and the warp view hides:
//! a conversion whose elements cross warp bit 0 but no other warp bit is a shuffle of the wave
//! (`ds_bpermute` addresses all 64 lanes) rather than a round trip through LDS; a reduction along
//! warp bit 0 is one more butterfly. [`Lanes`] says which naming a planned [`Movement`] uses.
//!
//! [`Movement`]: super::movement::Movement

use super::bases;
use crate::{Label, LayoutError, LinearLayout};
use std::vec::Vec;

/// Lane bits of a 32-lane warp.
pub const WARP_LANE_BITS: u32 = 5;

/// Which threads a movement's lanes and warps name (how its lane functions are evaluated and its
/// shuffles exchange).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lanes {
    /// Lane `0..32` of a warp and the warp's index: shuffles within a warp (every target).
    #[default]
    Warp,
    /// Lane `0..64` of an AMD wave (warp bit 0 as lane bit 5) and the wave's index (warp / 2):
    /// shuffles within a wave (amdgpu only).
    Wave,
}

impl Lanes {
    /// Lanes a shuffle of this naming reaches.
    pub const fn count(self) -> u32 {
        match self {
            Lanes::Warp => 32,
            Lanes::Wave => 64,
        }
    }
}

/// A layout with `lanes` as its lane bases and `warps` as its warp bases (register and block
/// bases and the output dimensions as `layout`'s).
fn relabelled(
    layout: &LinearLayout,
    lanes: &[u64],
    warps: &[u64],
) -> Result<LinearLayout, LayoutError> {
    let mut out = LinearLayout::empty();
    for o in 0..layout.num_out_dims() {
        out = out.with_out_dim(layout.out_label(o), layout.out_size(layout.out_label(o)))?;
    }
    let push = |out: LinearLayout, label: Label, vectors: &[u64]| {
        let mut out = out.with_in_dim(label)?;
        let i = out.num_in_dims() - 1;
        for &v in vectors {
            out.push_packed_basis(i, v)?;
        }
        Ok::<_, LayoutError>(out)
    };
    out = push(out, Label::Register, &bases(layout, Label::Register))?;
    out = push(out, Label::Lane, lanes)?;
    out = push(out, Label::Warp, warps)?;
    if layout.in_index(Label::Block).is_some() {
        out = push(out, Label::Block, &bases(layout, Label::Block))?;
    }
    Ok(out)
}

/// `layout` (a wave-64 layout: six lane bits) with wave lane bit 5 as warp bit 0 and its warp
/// bits from 1 up: the same map on 32-lane warps, two per wave.
pub fn wave_as_warps(layout: &LinearLayout) -> Result<LinearLayout, LayoutError> {
    let lanes = bases(layout, Label::Lane);
    let mut warps: Vec<u64> = lanes.get(5).copied().into_iter().collect();
    warps.extend(bases(layout, Label::Warp));
    relabelled(layout, &lanes[..lanes.len().min(5)], &warps)
}

/// `layout` (on 32-lane warps) on 64-lane waves: warp bit 0 as lane bit 5, warp bits 1 and up as
/// the wave's bits; `None` when it has no whole wave (fewer than 5 lane bits or no warp bit).
/// The inverse of [`wave_as_warps`].
pub fn warps_as_wave(layout: &LinearLayout) -> Option<LinearLayout> {
    let mut lanes = bases(layout, Label::Lane);
    let warps = bases(layout, Label::Warp);
    if lanes.len() != WARP_LANE_BITS as usize || warps.is_empty() {
        return None;
    }
    lanes.push(warps[0]);
    relabelled(layout, &lanes, &warps[1..]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::AmdMfma;

    fn at(l: &LinearLayout, r: u32, lane: u32, warp: u32) -> [u32; crate::MAX_DIMS] {
        l.apply(&[
            (Label::Register, r),
            (Label::Lane, lane),
            (Label::Warp, warp),
        ])
        .unwrap()
    }

    /// Law: the relabelling is the same map: the wave layout at (register, wave lane, wave)
    /// equals the warp layout at (register, lane mod 32, 2·wave + lane / 32), and the two
    /// relabellings are inverse.
    #[test]
    fn wave_and_warp_views_keep_every_element_in_place() {
        let shape = [32, 32, 8];
        let waves = [2, 2];
        let family = AmdMfma::new(3, &shape, true, &waves);
        for wave_layout in [
            family.to_linear_layout(&[128, 64]).unwrap(),
            family.dot_operand(0, 4, &[128, 32]).unwrap(),
            family.dot_operand(1, 4, &[32, 64]).unwrap(),
        ] {
            let warps = wave_as_warps(&wave_layout).unwrap();
            assert_eq!(warps.in_size(Label::Lane), 32);
            assert_eq!(
                warps.in_size(Label::Warp),
                2 * wave_layout.in_size(Label::Warp)
            );
            for r in 0..wave_layout.in_size(Label::Register) {
                for lane in 0..64 {
                    for wave in 0..wave_layout.in_size(Label::Warp) {
                        assert_eq!(
                            at(&wave_layout, r, lane, wave),
                            at(&warps, r, lane % 32, 2 * wave + lane / 32)
                        );
                    }
                }
            }
            assert_eq!(warps_as_wave(&warps).as_ref(), Some(&wave_layout));
        }
    }

    /// A warp's layout (no warp bit) has no whole wave.
    #[test]
    fn one_warp_has_no_wave_view() {
        let shape = [32, 32, 8];
        let family = AmdMfma::new(3, &shape, true, &[1, 1]);
        let wave = family.to_linear_layout(&[32, 32]).unwrap();
        let warps = wave_as_warps(&wave).unwrap();
        assert_eq!(warps.in_size(Label::Warp), 2);
        let half = relabelled(&warps, &bases(&warps, Label::Lane), &[]).unwrap();
        assert!(warps_as_wave(&half).is_none());
    }
}
