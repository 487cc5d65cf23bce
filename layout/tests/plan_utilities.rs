//! Vectorization (§5.1, Table 2), broadcast analysis (Table 3) and ldmatrix/stmatrix
//! applicability (Theorem 5.1).

use tessera_layout::families::ldmatrix::ldmatrix_fragment;
use tessera_layout::families::{blocked::blocked, SwizzledShared};
use tessera_layout::plan::broadcast::{store_instructions, Broadcast};
use tessera_layout::plan::ldmatrix::{matrix_plan, MatrixPlan};
use tessera_layout::plan::vectorize::global_vectorization;
use tessera_layout::plan::{bases, nonzero_bases};
use tessera_layout::{Label, LinearLayout};
use tessera_test_support::plan_gen::*;
use tessera_test_support::random::layout_from_packed;
use tessera_test_support::simulate::RegisterFile;
use tessera_test_support::Rng;

/// Table 2: a thread owning `rows × k` elements of a row-major `[512, k]` tensor holds
/// `rows · k` contiguous elements; legacy Triton only counted the `k` of the last dimension.
#[test]
fn table_2_contiguity_spans_dimensions() {
    for (bits, k, rows, expected_bits) in [
        (8, 1, 16, 128),
        (8, 2, 8, 128), // the paper's [512, 2] × f8: v4.b32 where legacy Triton used v1.b16
        (8, 4, 4, 128),
        (8, 8, 2, 128),
        (8, 16, 1, 128),
        (16, 1, 8, 128),
        (16, 2, 4, 128),
        (16, 8, 1, 128),
        (16, 1, 2, 32),
    ] {
        let layout = blocked(
            &[rows, k],
            &[32, 1],
            &[512 / (32 * rows), 1],
            &[1, 0],
            &[512, k],
        )
        .unwrap();
        let v = global_vectorization(&layout, None, bits).unwrap();
        assert_eq!(
            v.bits, expected_bits,
            "[512, {k}] x {bits}-bit, {rows} rows per thread"
        );
        assert!(v.is_in_register_order());
        let legacy = (k * bits).min(128);
        assert!(v.bits >= legacy);
    }
    // Column-major storage of the same tensor: only the rows are contiguous.
    let layout = blocked(&[8, 2], &[32, 1], &[2, 1], &[1, 0], &[512, 2]).unwrap();
    let v = global_vectorization(&layout, Some(&[0, 1]), 8).unwrap();
    assert_eq!(v.elements, 8);
    // A thread whose registers walk the tile in the other order still vectorizes, with its
    // registers permuted.
    let layout = blocked(&[2, 4], &[16, 2], &[2, 1], &[0, 1], &[64, 8]).unwrap();
    let v = global_vectorization(&layout, None, 16).unwrap();
    assert_eq!(v.elements, 4);
    assert!(!v.is_in_register_order(), "{layout}\n{v:?}");
}

/// Every element has exactly one owner, and owners are what `store_instructions` counts.
#[test]
fn broadcast_owners_store_each_element_once() {
    // A blocked tile of 16 × 8 on an 8 × 8 tensor: lanes and a warp bit repeat elements.
    let layout = blocked(&[1, 2], &[8, 4], &[2, 2], &[1, 0], &[8, 8]).unwrap();
    let b = Broadcast::of(&layout).unwrap();
    // The CTA tile is 16 × 16: both warp bits repeat the 8 × 8 tensor.
    assert_eq!((b.register, b.lane, b.warp), (0, 0, 0b11), "{layout}");
    let count = store_instructions(&layout, 2).unwrap();
    assert_eq!(
        (count.naive, count.deduplicated, count.active_lanes),
        (4, 1, 32)
    );
    // Lanes repeating: a 1 × 32 tile of lanes over a 1 × 8 tensor.
    let layout = blocked(&[1, 1], &[1, 32], &[1, 1], &[1, 0], &[1, 8]).unwrap();
    let b = Broadcast::of(&layout).unwrap();
    assert_eq!(b.lane, 0b11000, "{layout}");
    assert_eq!(store_instructions(&layout, 1).unwrap().active_lanes, 8);
    let mut rng = Rng::new(0xb0ad_0001);
    for _ in 0..1000 {
        let tile_bits = rng.range(5, 10);
        let out_dims = random_tile(&mut rng, tile_bits);
        let shape = random_warp_shape(&mut rng, tile_bits);
        let layout = random_warp_layout(&mut rng, &out_dims, shape);
        let b = Broadcast::of(&layout).unwrap();
        let file = RegisterFile::holding_elements(&layout);
        let mut owners = vec![0u32; 1 << layout.total_out_bits()];
        for (w, warp) in file.values.iter().enumerate() {
            for (l, lane) in warp.iter().enumerate() {
                for (r, value) in lane.iter().enumerate() {
                    if b.is_owner(r as u32, l as u32, w as u32, 0) {
                        owners[value.unwrap() as usize] += 1;
                    }
                }
            }
        }
        assert!(owners.iter().all(|&n| n == 1), "{layout}\n{b:?}");
        assert_eq!(
            b.copies() * (1 << layout.total_out_bits()),
            1 << layout.total_in_bits()
        );
        assert_eq!(b.register, layout.zero_bases_mask(Label::Register));
    }
}

/// Executes `ldmatrix` as the hardware does: lane `8m + ρ` gives the address of row `ρ` of
/// matrix `m`; thread `t` receives the 32-bit word `t mod 4` of row `t / 4` of each matrix
/// (`.trans`: element `t / 4` of rows `2 (t mod 4)` and `+1`). Checks that every register then
/// holds the element the layout assigns it.
fn check_ldmatrix(memory: &LinearLayout, distributed: &LinearLayout, bits: u32, plan: &MatrixPlan) {
    let inverse = memory_inverse(memory);
    let regs = image_table(distributed, Label::Register);
    let lanes = image_table(distributed, Label::Lane);
    let warps = image_table(distributed, Label::Warp);
    let offset = |r: usize, l: usize, w: usize| inverse[(regs[r] ^ lanes[l] ^ warps[w]) as usize];
    let order = &plan.register_order;
    // Register of the layout for bit pattern `x` in the instruction's order.
    let reg = |x: u32| -> usize {
        order
            .iter()
            .enumerate()
            .filter(|(k, _)| x >> k & 1 == 1)
            .fold(0, |acc, (_, &r)| acc | 1 << r)
    };
    let word = if plan.transposed {
        1
    } else {
        (32 / bits).trailing_zeros()
    };
    let per_word = 1u32 << word;
    let matrix_bits = plan.matrices.trailing_zeros();
    let rest = order.len() as u32 - word - matrix_bits;
    for w in 0..warps.len() {
        for instr in 0..(1u32 << rest) {
            for m in 0..plan.matrices {
                let x_base = (m << word) | (instr << (word + matrix_bits));
                for t in 0..32u32 {
                    for j in 0..per_word {
                        let want = offset(reg(x_base | j), t as usize, w);
                        let got = if plan.transposed {
                            // Row 2 (t mod 4) + j starts where thread t mod 4 finds its element
                            // j (element 0 of the row); thread t takes element t / 4 of it.
                            offset(reg(x_base | j), (t % 4) as usize, w) + (t / 4) as u64
                        } else {
                            // Row t / 4 starts at word 0 of thread 4 (t / 4); thread t takes
                            // word t mod 4 of it.
                            offset(reg(x_base), (4 * (t / 4)) as usize, w)
                                + ((t % 4) * per_word + j) as u64
                        };
                        assert_eq!(got, want, "warp {w} matrix {m} thread {t} element {j}");
                    }
                }
            }
        }
    }
}

fn row_major(rows: u32, cols: u32) -> LinearLayout {
    SwizzledShared::new(1, 1, 1, &[1, 0])
        .to_linear_layout(&[rows, cols])
        .unwrap()
}

#[test]
fn ldmatrix_applies_by_left_division() {
    for bits in [8u32, 16, 32] {
        for matrices in [1u32, 2, 4] {
            let fragment = ldmatrix_fragment(matrices, false, bits).unwrap();
            let (rows, cols) = (8 * matrices, 128 / bits);
            for memory in [
                row_major(rows, cols),
                // Rows at swizzled 16-byte positions: still one row per lane address.
                SwizzledShared::new(128 / bits, 1, 1, &[1, 0])
                    .to_linear_layout(&[rows, cols])
                    .unwrap(),
            ] {
                let plan = matrix_plan(&memory, &fragment, bits, false)
                    .unwrap()
                    .expect("applies");
                assert_eq!(plan.matrices, matrices);
                assert!(!plan.needs_permutation());
                check_ldmatrix(&memory, &fragment, bits, &plan);
            }
            // Registers in another order: applicable after a permutation.
            let mut regs = bases(&fragment, Label::Register);
            regs.reverse();
            let permuted = layout_from_packed(
                &[
                    (Label::Register, regs),
                    (Label::Lane, bases(&fragment, Label::Lane)),
                ],
                &[(Label::Dim(0), rows), (Label::Dim(1), cols)],
            );
            let memory = row_major(rows, cols);
            let plan = matrix_plan(&memory, &permuted, bits, false)
                .unwrap()
                .expect("applies");
            assert_eq!(
                plan.needs_permutation(),
                bits < 32 && nonzero_bases(&permuted, Label::Register).len() > 1
            );
            check_ldmatrix(&memory, &permuted, bits, &plan);
            // Column-major memory: a row of the fragment is not contiguous.
            let column_major = SwizzledShared::new(1, 1, 1, &[0, 1])
                .to_linear_layout(&[rows, cols])
                .unwrap();
            assert!(matrix_plan(&column_major, &fragment, bits, false)
                .unwrap()
                .is_none());
        }
    }
    // .trans: 16-bit fragments read from memory whose rows are the fragment's columns.
    let fragment = ldmatrix_fragment(4, true, 16).unwrap();
    let plan = matrix_plan(&row_major(32, 8), &fragment, 16, true)
        .unwrap()
        .expect("trans applies");
    assert_eq!(plan.matrices, 4);
    check_ldmatrix(&row_major(32, 8), &fragment, 16, &plan);
    assert!(matrix_plan(&row_major(32, 8), &fragment, 16, false)
        .unwrap()
        .is_none());
}
