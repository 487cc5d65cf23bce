//! Pictures of layouts as SVG (host-side, `std` feature).
//!
//! - [`distributed_svg`]: the logical tile (`dim0` down, the last dimension across; further
//!   dimensions stacked as rows), each element coloured by the warp that owns it and labelled
//!   with its lane (`L5`) and register (`r3`); elements held by several positions (broadcast)
//!   show the owner and the number of copies.
//! - [`memory_svg`]: shared memory as the 32 banks see it — one row per 128-byte line, one
//!   column per bank (sub-word elements share a bank, wide ones span several) — each slot
//!   labelled with the logical coordinates of the element stored there and coloured by the
//!   element's last coordinate, so a logical column can be followed across banks. Optionally the
//!   slots touched by one access of a distributed layout (the first instruction of warp 0) are
//!   ringed, with the number of distinct words per bank below the grid (its wavefronts).

use crate::plan::bank::bank_wavefronts;
use crate::plan::broadcast::Broadcast;
use crate::plan::{bases, check_same_tile, combine, memory_offsets, PlanError};
use crate::{Label, LinearLayout};
use core::fmt::Write;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

/// Most elements drawn (larger tiles are refused).
pub const MAX_SVG_ELEMENTS: u64 = 1 << 14;

const WARP_COLORS: [&str; 8] = [
    "#8ecae6", "#ffb703", "#a7c957", "#f4978e", "#cdb4db", "#ffd6a5", "#90e0ef", "#e9c46a",
];

/// The opening of a picture: the `<svg>` element of `width × height` on white, and `title` in
/// bold at `x = left`.
fn svg_header(width: u64, height: u64, left: impl core::fmt::Display, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        escape(title)
    );
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The rows × columns arrangement of a tile: the last dimension across, the others down.
fn grid_of(layout: &LinearLayout) -> (u64, u64) {
    let n = layout.num_out_dims();
    if n == 0 {
        return (1, 1);
    }
    let cols = 1u64 << layout.out_bits_at(n - 1);
    let rows = 1u64 << (layout.total_out_bits() - layout.out_bits_at(n - 1));
    (rows, cols)
}

/// Row and column of a packed element in [`grid_of`]'s arrangement.
fn cell_of(layout: &LinearLayout, element: u64) -> (u64, u64) {
    let n = layout.num_out_dims();
    let coords = layout.unpack(element);
    let col = coords[n - 1] as u64;
    // Rows: the other dimensions, the first one slowest (row-major).
    let mut row = 0u64;
    for (d, &c) in coords.iter().enumerate().take(n - 1) {
        row = (row << layout.out_bits_at(d)) | c as u64;
    }
    (row, col)
}

fn coords_label(layout: &LinearLayout, element: u64) -> String {
    let coords = layout.unpack(element);
    let parts: Vec<String> = coords[..layout.num_out_dims()]
        .iter()
        .map(|c| format!("{c}"))
        .collect();
    parts.join(",")
}

/// The SVG of a distributed layout (see the module docs).
pub fn distributed_svg(layout: &LinearLayout, title: &str) -> Result<String, PlanError> {
    let broadcast = Broadcast::of(layout)?;
    if layout.total_in_bits() > 24 || (1u64 << layout.total_out_bits()) > MAX_SVG_ELEMENTS {
        return Err(PlanError::new(format!(
            "the tile {} is too large to draw (at most {MAX_SVG_ELEMENTS} elements)",
            crate::plan::tile_name(layout)
        )));
    }
    let (regs, lanes, warps) = (
        bases(layout, Label::Register),
        bases(layout, Label::Lane),
        bases(layout, Label::Warp),
    );
    let elements = 1usize << layout.total_out_bits();
    let mut owner: Vec<Option<(u32, u32, u32)>> = vec![None; elements];
    let mut copies = vec![0u32; elements];
    for w in 0..1u32 << warps.len() {
        for l in 0..1u32 << lanes.len() {
            for r in 0..1u32 << regs.len() {
                let e = (combine(&regs, r as u64)
                    ^ combine(&lanes, l as u64)
                    ^ combine(&warps, w as u64)) as usize;
                copies[e] += 1;
                if broadcast.is_owner(r, l, w, 0) {
                    owner[e] = Some((r, l, w));
                }
            }
        }
    }
    let (rows, cols) = grid_of(layout);
    let (cw, ch) = (40u64, 30u64);
    let (left, top) = (44u64, 64u64);
    let legend_h = 28u64;
    let width = (left + cols * cw + 20).max(640);
    let height = top + rows * ch + legend_h + 24;
    let mut s = svg_header(width, height, left, title);
    let n = layout.num_out_dims();
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="42" font-size="11" fill="#444">rows: {} · columns: {} · colour = warp · L = lane, r = register{}</text>"##,
        match n {
            1 => "-".into(),
            2 => "dim0".into(),
            _ => format!("dim0..dim{} (row-major)", n - 2),
        },
        layout.out_label(n - 1),
        if broadcast.is_trivial() {
            ""
        } else {
            " · ×k = k copies (broadcast)"
        }
    );
    for c in 0..cols {
        if cols <= 64 || c % 4 == 0 {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" font-size="9" fill="#666" text-anchor="middle">{c}</text>"##,
                left + c * cw + cw / 2,
                top - 6
            );
        }
    }
    for r in 0..rows {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="9" fill="#666" text-anchor="end">{r}</text>"##,
            left - 6,
            top + r * ch + ch / 2 + 3
        );
    }
    for (e, o) in owner.iter().enumerate() {
        let Some((r, l, w)) = *o else { continue };
        let (row, col) = cell_of(layout, e as u64);
        let (x, y) = (left + col * cw, top + row * ch);
        let color = WARP_COLORS[w as usize % WARP_COLORS.len()];
        let _ = writeln!(
            s,
            r##"<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{color}" stroke="#555" stroke-width="0.5"><title>({}) ← warp {w}, lane {l}, register {r}; {} cop{}</title></rect>"##,
            coords_label(layout, e as u64),
            copies[e],
            if copies[e] == 1 { "y" } else { "ies" }
        );
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="10" text-anchor="middle" fill="#111">L{l}</text>"##,
            x + cw / 2,
            y + 12
        );
        let extra = if copies[e] > 1 {
            format!(" ×{}", copies[e])
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="9" text-anchor="middle" fill="#333">r{r}{extra}</text>"##,
            x + cw / 2,
            y + 24
        );
    }
    let ly = top + rows * ch + 18;
    let mut x = left;
    for w in 0..(1u64 << warps.len()).min(8) {
        let owns = owner
            .iter()
            .any(|o| o.is_some_and(|(_, _, ow)| ow as u64 == w));
        let label = if owns {
            format!("warp {w}")
        } else {
            format!("warp {w} (copies only)")
        };
        let _ = writeln!(
            s,
            r##"<rect x="{x}" y="{}" width="14" height="14" fill="{}" stroke="#555" stroke-width="0.5"/><text x="{}" y="{}" font-size="11">{label}</text>"##,
            ly - 11,
            WARP_COLORS[w as usize % WARP_COLORS.len()],
            x + 18,
            ly
        );
        x += 30 + 7 * label.len() as u64;
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// The SVG of a memory layout as a bank grid (see the module docs); `access` rings the slots
/// of the first access of a distributed layout.
pub fn memory_svg(
    memory: &LinearLayout,
    element_bits: u32,
    access: Option<&LinearLayout>,
    title: &str,
) -> Result<String, PlanError> {
    crate::plan::check_element_bits(element_bits)?;
    let offsets = memory_offsets(memory)?;
    let slots = 1u64 << offsets.len();
    if slots > MAX_SVG_ELEMENTS {
        return Err(PlanError::new(format!(
            "the memory holds {slots} elements; at most {MAX_SVG_ELEMENTS} are drawn"
        )));
    }
    let per_line = (1024 / element_bits as u64).min(slots);
    let lines = slots / per_line;
    let bank_w = 46.0f64;
    let slot_w = bank_w * element_bits as f64 / 32.0;
    let ch = 26u64;
    let (left, top) = (56.0f64, 70u64);
    let banks_drawn = (per_line as f64 * slot_w / bank_w).ceil() as u64;
    // The ringed access: lanes of warp 0, first instruction (registers 0 and the vector).
    let mut touched: Vec<u32> = vec![0; slots as usize];
    let mut words_per_bank: Option<(Vec<u32>, u32)> = None;
    if let Some(dist) = access {
        check_same_tile(memory, dist)?;
        let acc = bank_wavefronts(memory, dist, element_bits)?;
        let mut inverse = vec![0u64; slots as usize];
        for o in 0..slots {
            inverse[combine(&offsets, o) as usize] = o;
        }
        let regs = bases(dist, Label::Register);
        let lanes = bases(dist, Label::Lane);
        let mut words: Vec<Vec<u64>> = vec![Vec::new(); 32];
        let lanes_in_phase = (1u64 << lanes.len()) / acc.phases as u64;
        for l in 0..lanes_in_phase.max(1) {
            for j in 0..acc.vector.elements {
                let r = acc
                    .vector
                    .registers
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| j >> i & 1 == 1)
                    .fold(0u64, |a, (_, &k)| a | 1 << k);
                let e = combine(&regs, r) ^ combine(&lanes, l);
                let o = inverse[e as usize];
                touched[o as usize] += 1;
                let word = o * element_bits as u64 / 32;
                words[(word % 32) as usize].push(word);
            }
        }
        let counts: Vec<u32> = words
            .iter_mut()
            .map(|w| {
                w.sort_unstable();
                w.dedup();
                w.len() as u32
            })
            .collect();
        words_per_bank = Some((counts, acc.phases));
    }
    let width = ((left + banks_drawn as f64 * bank_w + 20.0) as u64).max(640);
    let footer = if words_per_bank.is_some() { 48 } else { 12 };
    let height = top + lines * ch + footer + 20;
    let mut s = svg_header(width, height, left, title);
    let last = memory.out_label(memory.num_out_dims() - 1);
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="42" font-size="11" fill="#444">rows: 128-byte lines (segments) · columns: banks · label: element coordinates · colour: {last}{}</text>"##,
        if access.is_some() {
            " · ringed: first access of lanes (one phase)"
        } else {
            ""
        }
    );
    for b in 0..banks_drawn {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="9" fill="#666" text-anchor="middle">b{b}</text>"##,
            left + b as f64 * bank_w + bank_w / 2.0,
            top - 6
        );
    }
    let last_bits = memory.out_bits_at(memory.num_out_dims() - 1);
    for o in 0..slots {
        let line = o / per_line;
        let pos = o % per_line;
        let (x, y) = (left + pos as f64 * slot_w, top + line * ch);
        let e = combine(&offsets, o);
        let coords = memory.unpack(e);
        let c = coords[memory.num_out_dims() - 1];
        let hue = if last_bits == 0 {
            0
        } else {
            (c as u64 * 360 / (1u64 << last_bits)) as u32
        };
        let light = if c % 2 == 1 { 72 } else { 84 };
        let _ = writeln!(
            s,
            r##"<rect x="{x:.1}" y="{y}" width="{slot_w:.1}" height="{ch}" fill="hsl({hue},60%,{light}%)" stroke="#777" stroke-width="0.4"><title>offset {o}: ({})</title></rect>"##,
            coords_label(memory, e)
        );
        let font = if slot_w >= 30.0 {
            10
        } else if slot_w >= 20.0 {
            7
        } else {
            0
        };
        if font > 0 {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{}" font-size="{font}" text-anchor="middle" fill="#111">{}</text>"##,
                x + slot_w / 2.0,
                y + 16,
                coords_label(memory, e)
            );
        }
        if touched[o as usize] > 0 {
            let _ = writeln!(
                s,
                r##"<rect x="{:.1}" y="{}" width="{:.1}" height="{}" fill="none" stroke="#c1121f" stroke-width="2.2"/>"##,
                x + 1.5,
                y + 1,
                slot_w - 3.0,
                ch - 2
            );
        }
    }
    // Bank separators.
    for b in 0..=banks_drawn {
        let x = left + b as f64 * bank_w;
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{}" stroke="#222" stroke-width="1"/>"##,
            top + lines * ch
        );
    }
    if let Some((counts, phases)) = words_per_bank {
        let y = top + lines * ch + 18;
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{y}" font-size="9" fill="#444" text-anchor="end">words</text>"##,
            left - 4.0
        );
        for (b, &n) in counts.iter().enumerate().take(banks_drawn as usize) {
            let color = if n > 1 { "#c1121f" } else { "#333" };
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{y}" font-size="10" text-anchor="middle" fill="{color}">{n}</text>"##,
                left + b as f64 * bank_w + bank_w / 2.0
            );
        }
        let worst = counts.iter().copied().max().unwrap_or(1).max(1);
        let _ = writeln!(
            s,
            r##"<text x="{left}" y="{}" font-size="11" fill="#111">distinct words per bank in this phase: at most {worst} → {worst} wavefront{} per phase ({phases} phase{} per access)</text>"##,
            y + 20,
            if worst == 1 { "" } else { "s" },
            if phases == 1 { "" } else { "s" }
        );
    }
    s.push_str("</svg>\n");
    Ok(s)
}
