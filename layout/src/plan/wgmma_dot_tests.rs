use super::*;
use crate::families::Blocked;
use crate::plan::movement::StoreStep;
use crate::plan::wgmma::MatrixDescriptor;

/// A row-major blocked layout of `shape` with 8 contiguous elements per thread along dim 1
/// (what a 128-bit load gives), `num_warps` warps along dim 0.
fn row_major(shape: [u32; 2], num_warps: u32) -> LinearLayout {
    let lanes_1 = (shape[1] / 8).min(32);
    Blocked::new(&[1, 8], &[32 / lanes_1, lanes_1], &[num_warps, 1], &[1, 0])
        .to_linear_layout(&shape)
        .unwrap()
}

/// The same with 8 contiguous elements along dim 0 (a column-major tile).
fn col_major(shape: [u32; 2], num_warps: u32) -> LinearLayout {
    let lanes_0 = (shape[0] / 8).min(32);
    Blocked::new(&[8, 1], &[lanes_0, 32 / lanes_0], &[1, num_warps], &[0, 1])
        .to_linear_layout(&shape)
        .unwrap()
}

/// The plan of the dot of `shape` with A `[M, K]` and B `[K, N]` in the layouts `operand`
/// ([`row_major`] or [`col_major`]) gives their shapes at `num_warps` warps, accumulator `acc`.
fn plan_operands(
    shape: WgmmaShape,
    operand: fn([u32; 2], u32) -> LinearLayout,
    num_warps: u32,
    acc: &LinearLayout,
) -> Result<WgmmaDotPlan, PlanError> {
    let [m, n, k] = shape.mnk;
    let a = operand([m, k], num_warps);
    let b = operand([k, n], num_warps);
    plan_wgmma_dot(shape, &a, &b, acc)
}

fn planned(input: WgmmaInput, mnk: [u32; 3], num_warps: u32) -> WgmmaDotPlan {
    let shape = wgmma_shape(input, mnk, num_warps).unwrap();
    let acc = shape.accumulator_layout().unwrap();
    plan_operands(shape, row_major, num_warps, &acc).unwrap()
}

#[test]
fn shapes_follow_the_warpgroups() {
    let s = wgmma_shape(WgmmaInput::F16, [128, 128, 64], 8).unwrap();
    assert_eq!((s.instr_n, s.warpgroups), (128, [2, 1]));
    let s = wgmma_shape(WgmmaInput::F16, [128, 256, 64], 4).unwrap();
    assert_eq!((s.instr_n, s.warpgroups), (256, [1, 1]));
    let s = wgmma_shape(WgmmaInput::Bf16, [64, 128, 32], 8).unwrap();
    assert_eq!((s.instr_n, s.warpgroups), (64, [1, 2]));
    let s = wgmma_shape(WgmmaInput::F16, [64, 512, 16], 4).unwrap();
    assert_eq!((s.instr_n, s.warpgroups), (256, [1, 1]));
    assert!(wgmma_shape(WgmmaInput::F16, [128, 128, 64], 2)
        .unwrap_err()
        .contains("multiple of 4"));
    assert!(wgmma_shape(WgmmaInput::F16, [32, 128, 64], 4)
        .unwrap_err()
        .contains("M = 32"));
    assert!(wgmma_shape(WgmmaInput::F16, [64, 32, 64], 4)
        .unwrap_err()
        .contains("N = 32"));
}

/// `[M, N, K]` and warps of the f16 plans the tests below check (one and two warpgroups).
const PLANNED: [([u32; 3], u32); 7] = [
    ([64, 64, 16], 4),
    ([128, 128, 64], 4),
    ([128, 128, 64], 8),
    ([128, 256, 64], 8),
    ([64, 128, 32], 8),
    ([256, 128, 32], 8),
    ([128, 128, 32], 4),
];

/// Every accumulator register of every thread is, in exactly one block, the fragment element
/// the instruction writes: checked by the planner, here also from the outside by counting.
#[test]
fn accumulator_blocks_cover_the_tile_once() {
    for (mnk, nw) in PLANNED {
        let plan = planned(WgmmaInput::F16, mnk, nw);
        let acc = plan.shape.accumulator_layout().unwrap();
        let [m, n, _] = mnk;
        let mut seen = vec![0u32; (m * n) as usize];
        for w in 0..nw {
            for l in 0..32 {
                for block in &plan.acc_registers {
                    for &r in block {
                        let (row, col) = at(&acc, r, l, w).unwrap();
                        seen[(row * n + col) as usize] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{mnk:?} num_warps {nw}");
        let blocks = (m / 64 / plan.shape.warpgroups[0])
            * (n / plan.shape.instr_n / plan.shape.warpgroups[1]);
        assert_eq!(plan.acc_registers.len() as u32, blocks, "{mnk:?}");
    }
}

/// The law of the operands: the descriptor of block `b`, warpgroup `g`, K step `s` addresses
/// element (mn, kk) of its operand exactly where the stores put it (the NVMMA layout).
fn check_descriptors(plan: &WgmmaDotPlan) {
    let [m, n, k] = plan.shape.mnk;
    let (instr_k, bytes) = (plan.shape.input.instr_k(), plan.shape.input.bits() / 8);
    let groups = (plan.shape.warpgroups[0] * plan.shape.warpgroups[1]) as usize;
    let acc = plan.shape.accumulator_layout().unwrap();
    for (operand, shape, k_dim, rows) in [
        (&plan.a, [m, k], 1usize, WGMMA_M),
        (&plan.b, [k, n], 0usize, plan.shape.instr_n),
    ] {
        let memory = operand.shared.to_linear_layout(&shape).unwrap();
        // offset of each element in the NVMMA layout
        let mut offset_of = vec![0u32; (shape[0] * shape[1]) as usize];
        for off in 0..shape[0] * shape[1] {
            let c = memory.apply(&[(Label::Offset, off)]).unwrap();
            offset_of[(c[0] * shape[1] + c[1]) as usize] = off;
        }
        let major = operand.descriptors.major;
        for (b, per_group) in operand.block_offsets.iter().enumerate() {
            assert_eq!(per_group.len(), groups);
            for (g, &block_offset) in per_group.iter().enumerate() {
                // the block's first M/N index, from the accumulator layout
                let r0 = plan.acc_registers[b][0];
                let (row, col) = at(&acc, r0, 0, 4 * g as u32).unwrap();
                let first = if k_dim == 1 { row } else { col };
                for s in 0..k / instr_k {
                    let start = block_offset + operand.descriptors.k_step_offsets[s as usize];
                    let desc = MatrixDescriptor {
                        start_address: start,
                        ..operand.descriptors.descriptor
                    };
                    for mn in 0..rows {
                        for kk in 0..instr_k {
                            let at_desc = desc.address(major, bytes, mn, kk);
                            let (r, c) = if k_dim == 1 {
                                (first + mn, s * instr_k + kk)
                            } else {
                                (s * instr_k + kk, first + mn)
                            };
                            let want = bytes * offset_of[(r * shape[1] + c) as usize];
                            assert_eq!(
                                at_desc, want,
                                "{:?} block {b} group {g} step {s}",
                                plan.shape
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn descriptors_address_the_nvmma_layout() {
    for (mnk, nw) in PLANNED {
        check_descriptors(&planned(WgmmaInput::F16, mnk, nw));
    }
}

/// 8-bit operands (f8 and s8, `k32`) are K-major whatever their registers' order (the
/// instruction has no `imm-trans` for them), half the bytes of f16, never read from registers;
/// the descriptors address the NVMMA layout as for 16-bit elements.
#[test]
fn eight_bit_operands_are_k_major() {
    for input in [WgmmaInput::E4m3, WgmmaInput::E5m2, WgmmaInput::S8] {
        assert!(wgmma_shape(input, [128, 128, 48], 4)
            .unwrap_err()
            .contains("multiple of 32"));
        for (mnk, nw) in [([128, 128, 64], 4), ([128, 256, 128], 8), ([64, 64, 32], 4)] {
            let [m, n, k] = mnk;
            let shape = wgmma_shape(input, mnk, nw).unwrap();
            let text = format!("{shape}");
            let types = format!("{}→{}", input.name(), input.accumulator());
            assert!(
                text.starts_with(&format!("wgmma.m64n{}k32 {types},", shape.instr_n)),
                "{text}"
            );
            let acc = shape.accumulator_layout().unwrap();
            // `b` K-contiguous (a transposed row-major `[n, k]`) and `b` N-contiguous.
            for b in [col_major([k, n], nw), row_major([k, n], nw)] {
                let plan = plan_wgmma_dot(shape, &row_major([m, k], nw), &b, &acc).unwrap();
                assert_eq!((plan.a.trans(), plan.b.trans()), (0, 0), "{mnk:?}");
                assert_eq!(plan.k_steps(), k / 32);
                assert_eq!(plan.a.bytes, m * k);
                assert_eq!(plan.a.shared.swizzle_byte_width, k.min(128));
                assert!(plan.a_registers.is_none());
                assert_eq!(
                    (plan.a.store.access.stride, plan.b.store.access.stride),
                    (1, 1)
                );
                check_descriptors(&plan);
                if nw == 4 {
                    let memory = plan.b.shared.to_linear_layout(&[k, n]).unwrap();
                    check_stores(&plan.b.store, &b, &memory, 1);
                }
                // Whole words or single elements.
                for store in [&plan.a.store, &plan.b.store] {
                    let v = store.access.elements.len();
                    assert!(v == 1 || v >= 4, "{mnk:?}: {v}-byte vector");
                }
            }
        }
    }
}

#[test]
fn column_major_operands_are_stored_mn_or_k_major() {
    let shape = wgmma_shape(WgmmaInput::Bf16, [128, 128, 64], 4).unwrap();
    let acc = shape.accumulator_layout().unwrap();
    // A column-major (M contiguous), B column-major (K contiguous).
    let plan = plan_operands(shape, col_major, 4, &acc).unwrap();
    assert_eq!(plan.a.trans(), 1);
    assert_eq!(plan.b.trans(), 0);
    assert_eq!(plan.a.store.access.elements.len(), 8);
    check_descriptors(&plan);
    let plan = planned(WgmmaInput::F16, [128, 128, 64], 4);
    assert_eq!((plan.a.trans(), plan.b.trans()), (0, 1));
    assert_eq!(plan.a.shared.swizzle_byte_width, 128);
    assert_eq!(plan.a.store.access.elements.len(), 8);
}

/// The stores of `store` (from `src`, 4 warps, elements of `bytes`) put each element at its
/// offset in `memory`: the thread's offset XOR the chunk's, plus the element's position in the
/// vector; together they write every element.
fn check_stores(store: &StoreStep, src: &LinearLayout, memory: &LinearLayout, bytes: u32) {
    let store = &store.access;
    let mut written = vec![false; memory.in_size(Label::Offset) as usize];
    for w in 0..4 {
        for l in 0..32 {
            let thread = store.thread_offset.eval(l, w);
            for &(first, off) in &store.chunks {
                for (j, &e) in store.elements.iter().enumerate() {
                    let byte = (off ^ thread) + j as u32 * store.stride;
                    let (row, col) = at(src, first ^ e, l, w).unwrap();
                    let c = memory.apply(&[(Label::Offset, byte / bytes)]).unwrap();
                    assert_eq!((c[0], c[1]), (row, col));
                    written[(byte / bytes) as usize] = true;
                }
            }
        }
    }
    assert!(written.iter().all(|&x| x));
}

#[test]
fn stores_follow_the_nvmma_layout() {
    let plan = planned(WgmmaInput::F16, [128, 128, 32], 4);
    let memory = plan.a.shared.to_linear_layout(&[128, 32]).unwrap();
    check_stores(&plan.a.store, &row_major([128, 32], 4), &memory, 2);
}

#[test]
fn an_accumulator_in_another_layout_is_refused() {
    let shape = wgmma_shape(WgmmaInput::F16, [128, 128, 64], 4).unwrap();
    let wrong = row_major([128, 128], 4);
    let err = plan_operands(shape, row_major, 4, &wrong).unwrap_err();
    assert!(format!("{err}").contains("wgmma"), "{err}");
}

/// A chained dot's `a` in the accumulator layout of an earlier `wgmma` (attention's `p`, `[M,
/// K]` with `K` the first dot's N) is read from registers: each fragment element of every thread
/// is the planned register; a blocked `a` is not.
#[test]
fn a_in_an_accumulator_layout_is_read_from_registers() {
    for (m, k, n, nw) in [
        (64, 64, 64, 4),
        (128, 64, 128, 8),
        (128, 128, 64, 8),
        (64, 64, 128, 4),
    ] {
        let first = wgmma_shape(WgmmaInput::F16, [m, k, 16], nw).unwrap();
        let a = first.accumulator_layout().unwrap();
        let shape = wgmma_shape(WgmmaInput::F16, [m, n, k], nw).unwrap();
        let acc = shape.accumulator_layout().unwrap();
        let plan = plan_wgmma_dot(shape, &a, &row_major([k, n], nw), &acc).unwrap();
        let fragments = plan.a_registers.as_ref().expect("a from registers");
        assert_eq!(fragments.len(), plan.acc_registers.len());
        for (b, steps) in fragments.iter().enumerate() {
            assert_eq!(steps.len() as u32, k / 16);
            // The block's rows: those of its accumulator fragment register 0 at lane 0, warp 0.
            let (row0, _) = at(&acc, plan.acc_registers[b][0], 0, 0).unwrap();
            for (s, fragment) in steps.iter().enumerate() {
                for warp in 0..nw {
                    for lane in 0..32 {
                        for (j, &r) in fragment.iter().enumerate() {
                            let (fr, fc) = fragment_element(j as u32, lane, warp % 4);
                            let (gr, _) = at(&acc, 0, 0, warp / 4 * 4).unwrap();
                            assert_eq!(
                                at(&a, r, lane, warp).unwrap(),
                                (row0 + gr + fr, 16 * s as u32 + fc),
                                "[{m}, {k}] × [{k}, {n}] at {nw} warps: block {b} step {s} \
                                 warp {warp} lane {lane} element {j}"
                            );
                        }
                    }
                }
            }
        }
    }
    // A loaded (blocked) `a` is stored to shared memory.
    assert!(planned(WgmmaInput::F16, [64, 64, 64], 4)
        .a_registers
        .is_none());
}
