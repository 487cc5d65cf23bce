//! The hardware layout families: const construction, the seeds' examples, laws on seeded random
//! parameters (slices, Definitions 4.10 and 4.14, the blocked layout's index formula), and the
//! Triton oracle `layouts.json` case by case.

use std::collections::BTreeMap;
use tessera_layout::families::blocked::blocked;
use tessera_layout::families::ldmatrix::{ldmatrix_fragment, ldmatrix_tile};
use tessera_layout::families::{
    AmdMfma, AmdWmma, Blocked, Distributed, DotOperand, MmaParent, NvidiaMma, NvmmaShared, Slice,
    SwizzledShared,
};
use tessera_layout::spec::{parse_json, BlockBases, LayoutSpec};
use tessera_layout::{expect_layout, Label, LinearLayout};
use tessera_test_support::oracle::{case_family, check_layout_case, OracleFile};
use tessera_test_support::Rng;

/// Random parameter sets per law.
const CASES: usize = 2000;

// ---------------------------------------------------------------------- const construction

const FIGURE_1: LinearLayout =
    expect_layout(blocked(&[2, 2], &[4, 8], &[2, 1], &[1, 0], &[16, 16]));
const BLOCKED_PARENT: Distributed =
    Distributed::Blocked(Blocked::new(&[1, 8], &[4, 8], &[4, 1], &[1, 0]));
const SLICED: LinearLayout = expect_layout(Slice::new(0, &BLOCKED_PARENT).to_linear_layout(&[64]));
const AMPERE: NvidiaMma = NvidiaMma::new(2, 0, &[2, 2], &[16, 8]);
const MMA_V2: LinearLayout = expect_layout(AMPERE.to_linear_layout(&[64, 64]));
const MMA_V3: LinearLayout =
    expect_layout(NvidiaMma::new(3, 0, &[4, 1], &[16, 64, 16]).to_linear_layout(&[128, 64]));
const DOT_B: LinearLayout =
    expect_layout(DotOperand::new(1, 4, MmaParent::Nvidia(AMPERE)).to_linear_layout(&[64, 32]));
const MFMA: LinearLayout =
    expect_layout(AmdMfma::new(3, &[32, 32, 8], false, &[2, 2]).to_linear_layout(&[64, 64]));
const MFMA_DOT: LinearLayout = expect_layout(
    DotOperand::new(
        0,
        8,
        MmaParent::Mfma(AmdMfma::new(4, &[16, 16, 32], true, &[1, 4])),
    )
    .to_linear_layout(&[32, 64]),
);
const WMMA: LinearLayout =
    expect_layout(AmdWmma::new(2, false, &[2, 2], &[16, 16, 16]).to_linear_layout(&[64, 32]));
const SWIZZLED: LinearLayout =
    expect_layout(SwizzledShared::new(2, 1, 16, &[1, 0]).to_linear_layout(&[16, 32]));
const NVMMA: LinearLayout =
    expect_layout(NvmmaShared::new(128, 16, false).to_linear_layout(&[64, 128]));
const LDMATRIX_X4: LinearLayout = expect_layout(ldmatrix_fragment(4, false, 16));
const LDMATRIX_TILE: LinearLayout = expect_layout(ldmatrix_tile(16));

fn spec(text: &str) -> LayoutSpec {
    LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap()
}

#[test]
fn const_layouts_equal_their_runtime_builds() {
    let cases: [(LinearLayout, &str, &[u32]); 10] = [
        (
            FIGURE_1,
            r#"{"family": "blocked", "params": {"size_per_thread": [2, 2], "threads_per_warp": [4, 8], "warps_per_cta": [2, 1], "order": [1, 0]}}"#,
            &[16, 16],
        ),
        (
            SLICED,
            r#"{"family": "slice", "params": {"dim": 0, "parent": {"family": "blocked", "params": {"size_per_thread": [1, 8], "threads_per_warp": [4, 8], "warps_per_cta": [4, 1], "order": [1, 0]}}}}"#,
            &[64],
        ),
        (
            MMA_V2,
            r#"{"family": "nvidia_mma", "params": {"version": [2, 0], "warps_per_cta": [2, 2], "instr_shape": [16, 8]}}"#,
            &[64, 64],
        ),
        (
            MMA_V3,
            r#"{"family": "nvidia_mma", "params": {"version": [3, 0], "warps_per_cta": [4, 1], "instr_shape": [16, 64, 16]}}"#,
            &[128, 64],
        ),
        (
            DOT_B,
            r#"{"family": "dot_operand", "params": {"operand_index": 1, "k_width": 4, "parent": {"family": "nvidia_mma", "params": {"version": [2, 0], "warps_per_cta": [2, 2], "instr_shape": [16, 8]}}}}"#,
            &[64, 32],
        ),
        (
            MFMA,
            r#"{"family": "amd_mfma", "params": {"version": 3, "instr_shape": [32, 32, 8], "transposed": false, "warps_per_cta": [2, 2]}}"#,
            &[64, 64],
        ),
        (
            MFMA_DOT,
            r#"{"family": "dot_operand", "params": {"operand_index": 0, "k_width": 8, "parent": {"family": "amd_mfma", "params": {"version": 4, "instr_shape": [16, 16, 32], "transposed": true, "warps_per_cta": [1, 4]}}}}"#,
            &[32, 64],
        ),
        (
            WMMA,
            r#"{"family": "amd_wmma", "params": {"version": 2, "transposed": false, "warps_per_cta": [2, 2], "instr_shape": [16, 16, 16]}}"#,
            &[64, 32],
        ),
        (
            SWIZZLED,
            r#"{"family": "swizzled_shared", "params": {"vec": 2, "per_phase": 1, "max_phase": 16, "order": [1, 0]}}"#,
            &[16, 32],
        ),
        (
            NVMMA,
            r#"{"family": "nvmma_shared", "params": {"swizzle_byte_width": 128, "element_bitwidth": 16, "transposed": false}}"#,
            &[64, 128],
        ),
    ];
    for (constant, text, shape) in cases {
        let built = spec(text).build(shape).unwrap();
        assert_eq!(constant, built, "{text}");
        if spec(text).is_memory() {
            assert!(constant.is_memory_layout(), "{text}");
        } else {
            assert!(constant.is_distributed_layout(), "{text}");
        }
    }
    assert_eq!(LDMATRIX_X4, ldmatrix_fragment(4, false, 16).unwrap());
    assert_eq!(LDMATRIX_TILE, ldmatrix_tile(16).unwrap());
}

// ---------------------------------------------------------------------- the seeds' examples

/// Figure 1 of the paper, layout A: 16×16 over two warps; the matrix of §4.1 column by column.
#[test]
fn figure_1_blocked_layout() {
    let expected = LinearLayout::from_bases(
        &[
            (Label::Register, &[&[0, 1], &[1, 0]]),
            (Label::Lane, &[&[0, 2], &[0, 4], &[0, 8], &[2, 0], &[4, 0]]),
            (Label::Warp, &[&[8, 0]]),
            (Label::Block, &[]),
        ],
        &[(Label::Dim(0), 16), (Label::Dim(1), 16)],
    )
    .unwrap();
    assert_eq!(FIGURE_1, expected);
    // "Register 0 of thread 10 = 0b1010 is located at (2, 4)."
    let at = FIGURE_1.apply(&[(Label::Lane, 10)]).unwrap();
    assert_eq!(&at[..2], &[2, 4]);
    assert!(FIGURE_1.is_distributed_layout() && FIGURE_1.is_invertible());
}

/// The 16×32 fp32 transpose of the seeds: the classic XOR swizzle `n ⊕ m` and the optimal
/// `n ⊕ 2m`, as swizzled shared layouts (offset `o` holds row `o / 32`, column
/// `(o mod 32) ⊕ swizzle(row)`).
#[test]
fn xor_swizzles_of_the_16x32_transpose() {
    for (vec, swizzle) in [(1u32, 1u32), (2, 2)] {
        let layout = SwizzledShared::new(vec, 1, 16, &[1, 0])
            .to_linear_layout(&[16, 32])
            .unwrap();
        assert!(layout.is_memory_layout());
        for offset in 0..512u32 {
            let row = offset / 32;
            let col = (offset % 32) ^ ((swizzle * row) % 32);
            let at = layout.apply(&[(Label::Offset, offset)]).unwrap();
            assert_eq!(&at[..2], &[row, col], "vec {vec}, offset {offset}");
        }
    }
    // The unswizzled layout is row-major.
    let plain = SwizzledShared::new(1, 1, 1, &[1, 0])
        .to_linear_layout(&[16, 32])
        .unwrap();
    for offset in 0..512u32 {
        assert_eq!(
            &plain.apply(&[(Label::Offset, offset)]).unwrap()[..2],
            &[offset / 32, offset % 32]
        );
    }
}

/// §4.3: the inverse of an mma swizzle on a `2^m × 2^n` tile (coordinates → offset) is
/// `[[I_n, C], [0, I_m]]` with column `i` of `C` equal to `vec·((2^i / per_phase) mod
/// max_phase) mod 2^n`.
#[test]
fn mma_swizzle_matrix_is_identity_plus_c() {
    let mut rng = Rng::new(0x5EED_0403);
    for case in 0..CASES {
        let (m, n) = (rng.range(0, 6), rng.range(0, 7));
        let vec = 1 << rng.range(0, 4);
        let per_phase = 1 << rng.range(0, 3);
        let max_phase = 1 << rng.range(0, 4);
        let layout = SwizzledShared::new(vec, per_phase, max_phase, &[1, 0])
            .to_linear_layout(&[1 << m, 1 << n])
            .unwrap();
        assert!(layout.is_memory_layout(), "case {case}");
        let inverse = layout.invert().unwrap();
        // Columns for j (dim1): the identity I_n on the low offset bits.
        for k in 0..n {
            let b = inverse.basis(Label::Dim(1), k as usize).unwrap();
            assert_eq!(b[0], 1 << k, "case {case}: I_n column {k}");
        }
        // Columns for i (dim0): c_i on the low bits, I_m on the high bits.
        for k in 0..m {
            let c = (vec * ((1u32 << k) / per_phase % max_phase)) % (1 << n);
            let b = inverse.basis(Label::Dim(0), k as usize).unwrap();
            assert_eq!(
                b[0],
                (1 << (n + k)) | c,
                "case {case}: column {k} of [C; I_m]"
            );
        }
    }
}

// ---------------------------------------------------------------------- random parameters

fn pow2(rng: &mut Rng, max_log: u32) -> u32 {
    1 << rng.range(0, max_log)
}

/// `total_bits` bits dealt to `rank` dimensions at random: powers of two whose product is
/// `2^total_bits`.
fn split(rng: &mut Rng, rank: usize, total_bits: u32) -> Vec<u32> {
    let mut bits = vec![0u32; rank];
    for _ in 0..total_bits {
        bits[rng.below(rank as u64) as usize] += 1;
    }
    bits.into_iter().map(|b| 1 << b).collect()
}

/// Warps per CTA: 1 to 8 warps dealt to `rank` dimensions.
fn warps(rng: &mut Rng, rank: usize) -> Vec<u32> {
    let bits = rng.range(0, 3);
    split(rng, rank, bits)
}

fn permutation(rng: &mut Rng, rank: usize) -> Vec<u32> {
    let mut order: Vec<u32> = (0..rank as u32).collect();
    rng.shuffle(&mut order);
    order
}

fn shape(rng: &mut Rng, rank: usize, max_log: u32) -> Vec<u32> {
    (0..rank).map(|_| pow2(rng, max_log)).collect()
}

fn random_blocked(rng: &mut Rng, rank: usize) -> LayoutSpec {
    LayoutSpec::Blocked {
        size_per_thread: (0..rank).map(|_| pow2(rng, 3)).collect(),
        threads_per_warp: split(rng, rank, 5),
        warps_per_cta: warps(rng, rank),
        order: permutation(rng, rank),
    }
}

fn random_nvidia_mma(rng: &mut Rng, hopper: bool) -> LayoutSpec {
    if hopper {
        let warps = 4 << rng.range(0, 1);
        LayoutSpec::NvidiaMma {
            version: [3, 0],
            warps_per_cta: if rng.chance(1, 2) {
                vec![warps, 1]
            } else {
                vec![4, warps / 4]
            },
            instr_shape: vec![16, 8 << rng.range(0, 5), 16],
        }
    } else {
        LayoutSpec::NvidiaMma {
            version: [2, 0],
            warps_per_cta: warps(rng, 2),
            instr_shape: vec![16, 8],
        }
    }
}

fn random_mfma(rng: &mut Rng) -> LayoutSpec {
    let instr = rng.pick(&[[32u32, 32, 8], [32, 32, 16], [16, 16, 16], [16, 16, 32]]);
    LayoutSpec::AmdMfma {
        version: rng.range(3, 4),
        instr_shape: instr.to_vec(),
        transposed: rng.chance(1, 2),
        warps_per_cta: warps(rng, 2),
        tiles_per_warp: None,
        element_bitwidth: None,
    }
}

fn random_wmma(rng: &mut Rng) -> LayoutSpec {
    LayoutSpec::AmdWmma {
        version: rng.range(1, 3),
        transposed: rng.chance(1, 2),
        warps_per_cta: warps(rng, 2),
        instr_shape: vec![16, 16, 16],
    }
}

fn random_dot(rng: &mut Rng) -> LayoutSpec {
    let parent = match rng.below(5) {
        4 => random_blocked(rng, 2),
        0 => random_nvidia_mma(rng, false),
        1 => random_nvidia_mma(rng, true),
        2 => random_mfma(rng),
        _ => random_wmma(rng),
    };
    let hopper = matches!(
        parent,
        LayoutSpec::NvidiaMma {
            version: [3, 0],
            ..
        }
    );
    let operand_index = if hopper { 0 } else { rng.range(0, 1) };
    let k_width = match parent {
        LayoutSpec::AmdMfma { .. } => pow2(rng, 3).max(4),
        LayoutSpec::AmdWmma { .. } => pow2(rng, 3),
        _ => pow2(rng, 3),
    };
    LayoutSpec::DotOperand {
        operand_index,
        k_width,
        parent: Box::new(parent),
    }
}

/// A random distributed spec of rank 2 (blocked of rank 1 to 3), and a shape it accepts.
fn random_distributed(rng: &mut Rng) -> (LayoutSpec, Vec<u32>) {
    match rng.below(6) {
        0 | 1 => {
            let rank = rng.range(1, 3) as usize;
            (random_blocked(rng, rank), shape(rng, rank, 7))
        }
        2 => {
            let hopper = rng.chance(1, 3);
            (random_nvidia_mma(rng, hopper), shape(rng, 2, 8))
        }
        3 => (random_mfma(rng), shape(rng, 2, 8)),
        4 => {
            let s = (0..2)
                .map(|_| {
                    if rng.chance(1, 5) {
                        1
                    } else {
                        16 << rng.range(0, 3)
                    }
                })
                .collect();
            (random_wmma(rng), s)
        }
        _ => (random_dot(rng), shape(rng, 2, 8)),
    }
}

fn out_bits(layout: &LinearLayout) -> u32 {
    (0..layout.num_out_dims())
        .map(|o| layout.out_bits_at(o))
        .sum()
}

// ---------------------------------------------------------------------- laws

/// `spec` built on `shape`, checked to be a memory (`memory`) or a distributed layout; a panic
/// names the case when either fails.
fn build_family_case(case: usize, spec: &LayoutSpec, shape: &[u32], memory: bool) -> LinearLayout {
    let layout = spec
        .build(shape)
        .unwrap_or_else(|e| panic!("case {case}: {spec:?} on {shape:?}: {e}"));
    let is_kind = if memory {
        layout.is_memory_layout()
    } else {
        layout.is_distributed_layout()
    };
    assert!(is_kind, "case {case}: {spec:?} on {shape:?}:\n{layout}");
    layout
}

/// Definition 4.10 for every distributed family, and the sizes of the tensor as outputs.
#[test]
fn distributed_families_are_distributed_layouts() {
    let mut rng = Rng::new(0x5EED_0410);
    let mut per_family: BTreeMap<&str, usize> = BTreeMap::new();
    for case in 0..CASES {
        let (spec, shape) = random_distributed(&mut rng);
        let layout = build_family_case(case, &spec, &shape, false);
        for (d, &size) in shape.iter().enumerate() {
            assert_eq!(layout.out_size(Label::Dim(d as u8)), size, "case {case}");
        }
        let ins: Vec<Label> = (0..layout.num_in_dims())
            .map(|i| layout.in_label(i))
            .collect();
        assert_eq!(
            ins,
            [Label::Register, Label::Lane, Label::Warp, Label::Block],
            "case {case}"
        );
        *per_family.entry(spec.family()).or_default() += 1;
    }
    assert_eq!(per_family.len(), 5, "{per_family:?}");
}

fn random_memory(rng: &mut Rng) -> (LayoutSpec, Vec<u32>) {
    if rng.chance(1, 2) {
        let rank = rng.range(1, 3) as usize;
        let spec = LayoutSpec::SwizzledShared {
            vec: pow2(rng, 4),
            per_phase: pow2(rng, 3),
            max_phase: pow2(rng, 4),
            order: permutation(rng, rank),
        };
        (spec, shape(rng, rank, 7))
    } else {
        let rank = rng.range(2, 3) as usize;
        let swizzle = rng.pick(&[0u32, 32, 64, 128]);
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let transposed = rng.chance(1, 2);
        // Triton's constraints: the contiguous dimension holds a swizzle row, and the TMA box
        // (each dimension at most 256), collapsed to rows × last dimension (swapped when
        // transposed), holds an 8-row core matrix.
        let contig = if transposed { 0 } else { rank - 1 };
        let width = 8 * swizzle / bits;
        let s = loop {
            let s = shape(rng, rank, 8);
            if swizzle == 0 {
                break s;
            }
            if s[contig] < width {
                continue;
            }
            let mut tma: Vec<u32> = s.iter().map(|&x| x.min(256)).collect();
            tma[contig] = width;
            let mut collapsed = [tma[..rank - 1].iter().product::<u32>(), tma[rank - 1]];
            if transposed {
                collapsed.swap(0, 1);
            }
            let tile_cols = 8 * swizzle.max(16) / bits;
            if collapsed[0] >= 8 && collapsed[1] >= tile_cols {
                break s;
            }
        };
        let spec = LayoutSpec::NvmmaShared {
            swizzle_byte_width: swizzle,
            element_bitwidth: bits,
            transposed,
        };
        (spec, s)
    }
}

/// Definition 4.14 for every memory family: invertible, every column with one or two bits.
#[test]
fn memory_families_are_memory_layouts() {
    let mut rng = Rng::new(0x5EED_0414);
    for case in 0..CASES {
        let (spec, shape) = random_memory(&mut rng);
        let layout = build_family_case(case, &spec, &shape, true);
        assert_eq!(
            out_bits(&layout),
            layout.in_bits(Label::Offset),
            "case {case}"
        );
    }
}

/// `layout` with output `dim` removed (coordinates dropped) and the register bases that became
/// zero deleted — slicing written out directly, independent of the family code.
fn project(layout: &LinearLayout, dim: usize) -> LinearLayout {
    let rank = layout.num_out_dims();
    let mut out = LinearLayout::empty();
    for o in (0..rank).filter(|&o| o != dim) {
        let target = Label::Dim(if o < dim { o } else { o - 1 } as u8);
        out = out
            .with_out_dim(target, 1 << layout.out_bits_at(o))
            .unwrap();
    }
    for i in 0..layout.num_in_dims() {
        let label = layout.in_label(i);
        out = out.with_in_dim(label).unwrap();
        for k in 0..layout.in_bits_at(i) as usize {
            let c = layout.basis(label, k).unwrap();
            let kept: Vec<u32> = (0..rank).filter(|&o| o != dim).map(|o| c[o]).collect();
            if label == Label::Register && kept.iter().all(|&x| x == 0) {
                continue;
            }
            out = out.with_basis(label, &kept).unwrap();
        }
    }
    out
}

/// The slice of a family equals the family's layout with the sliced dimension projected away,
/// whatever the size of that dimension: a thread holds in the slice exactly the projections of
/// what it holds in the parent (the reduction along `dim`).
#[test]
fn slice_of_a_family_is_the_projection_of_the_family() {
    let mut rng = Rng::new(0x5EED_511C);
    for case in 0..CASES {
        let (parent, full_shape) = loop {
            let (spec, shape) = random_distributed(&mut rng);
            if shape.len() >= 2 {
                break (spec, shape);
            }
        };
        let dim = rng.below(full_shape.len() as u64) as usize;
        let parent_layout = parent.build(&full_shape).unwrap();
        let mut sliced_shape = full_shape.clone();
        sliced_shape.remove(dim);
        let slice = LayoutSpec::Slice {
            dim: dim as u32,
            parent: Box::new(parent.clone()),
        };
        let sliced = slice
            .build(&sliced_shape)
            .unwrap_or_else(|e| panic!("case {case}: {parent:?} on {full_shape:?}: {e}"));
        assert_eq!(
            sliced,
            project(&parent_layout, dim),
            "case {case}: slice {dim} of {parent:?} on {full_shape:?}"
        );
        assert!(sliced.is_distributed_layout(), "case {case}");
    }
}

/// Blocked layouts against Triton's legacy index formula: register `r` of lane `l` of warp `w`
/// holds, in each dimension `d`, `(rep_d·tile_d + (w_d·tpw_d + l_d)·spt_d + r_d) mod shape_d`,
/// where `r` splits into an in-thread part (mixed radix `spt` in `order`) and repetitions
/// (radix `shape / tile` in `order`), `l` and `w` in `order` over `tpw` and `wpc`.
#[test]
fn blocked_matches_the_legacy_index_formula() {
    let mut rng = Rng::new(0x5EED_B10C);
    // Every input of every layout is checked, so fewer layouts than the other laws.
    for case in 0..CASES / 8 {
        let rank = rng.range(1, 3) as usize;
        let spec = random_blocked(&mut rng, rank);
        let LayoutSpec::Blocked {
            size_per_thread: spt,
            threads_per_warp: tpw,
            warps_per_cta: wpc,
            order,
        } = &spec
        else {
            unreachable!()
        };
        let shape = shape(&mut rng, rank, 5);
        let layout = spec.build(&shape).unwrap();
        let tile: Vec<u32> = (0..rank).map(|d| spt[d] * tpw[d] * wpc[d]).collect();
        let reps: Vec<u32> = (0..rank).map(|d| (shape[d] / tile[d]).max(1)).collect();
        let split = |mut x: u32, radix: &[u32]| {
            let mut digits = vec![0u32; rank];
            for &d in order {
                digits[d as usize] = x % radix[d as usize];
                x /= radix[d as usize];
            }
            digits
        };
        let per_thread: u32 = spt.iter().product();
        let registers = per_thread * reps.iter().product::<u32>();
        assert_eq!(layout.in_size(Label::Register), registers, "case {case}");
        for w in 0..wpc.iter().product::<u32>() {
            for l in 0..32 {
                for r in 0..registers {
                    let (rd, repd) = (split(r % per_thread, spt), split(r / per_thread, &reps));
                    let (ld, wd) = (split(l, tpw), split(w, wpc));
                    let expected: Vec<u32> = (0..rank)
                        .map(|d| {
                            (repd[d] * tile[d] + (wd[d] * tpw[d] + ld[d]) * spt[d] + rd[d])
                                % shape[d]
                        })
                        .collect();
                    let got = layout
                        .apply(&[(Label::Register, r), (Label::Lane, l), (Label::Warp, w)])
                        .unwrap();
                    assert_eq!(
                        &got[..rank],
                        &expected[..],
                        "case {case}: {spec:?} {shape:?}"
                    );
                }
            }
        }
    }
}

/// Bad parameters are errors naming the parameter, never panics.
#[test]
fn bad_parameters_name_the_parameter() {
    let cases: [(Result<LinearLayout, tessera_layout::LayoutError>, &str); 7] = [
        (
            blocked(&[1, 1], &[4, 8], &[1, 1], &[0, 0], &[8, 8]),
            "blocked layout: `order[1]` is 0, which is listed twice",
        ),
        (
            blocked(&[1, 1], &[4, 8], &[1], &[1, 0], &[8, 8]),
            "blocked layout: `warps_per_cta` is 1, entries long, which is not the rank of the tensor shape",
        ),
        (
            blocked(&[1, 1], &[4, 8], &[1, 1], &[1, 0], &[8, 12]),
            "tensor layout: `shape[1]` is 12, which is not a power of two",
        ),
        (
            NvidiaMma::new(2, 0, &[2, 2], &[16, 16]).to_linear_layout(&[32, 32]),
            "nvidia_mma layout: `instr_shape[1]` is 16, but mma.sync (v2) tiles have 8 columns",
        ),
        (
            AmdMfma::new(3, &[8, 8, 4], false, &[1, 1]).to_linear_layout(&[32, 32]),
            "amd_mfma layout: `instr_shape[0]` is 8",
        ),
        (
            NvmmaShared::new(128, 16, false).to_linear_layout(&[64, 32]),
            "nvmma_shared layout: `shape[1]` is 32, which is narrower than the swizzle width",
        ),
        (
            ldmatrix_fragment(2, true, 8),
            "ldmatrix layout: `element_bits` is 8, but ldmatrix.trans transposes 16-bit elements only",
        ),
    ];
    for (result, message) in cases {
        let e = result.unwrap_err().to_string();
        assert!(e.contains(message), "got {e}, wanted {message}");
    }
}

// ---------------------------------------------------------------------- ldmatrix

/// The ldmatrix fragments follow the PTX description; the non-transposed fragment of 16-bit
/// elements is mma's A-operand tile (`k_width = 2`), and Theorem 5.1's tile divides the
/// offset layout of a row-major tile read by that fragment.
#[test]
fn ldmatrix_fragments_follow_ptx() {
    for bits in [8u32, 16, 32] {
        for x in [1u32, 2, 4] {
            let f = ldmatrix_fragment(x, false, bits).unwrap();
            assert!(f.is_invertible());
            let per_word = 32 / bits;
            for lane in 0..32 {
                for r in 0..per_word * x {
                    let at = f
                        .apply(&[(Label::Register, r), (Label::Lane, lane)])
                        .unwrap();
                    let (matrix, j) = (r / per_word, r % per_word);
                    assert_eq!(
                        &at[..2],
                        &[8 * matrix + lane / 4, (lane % 4) * per_word + j],
                        "x{x} b{bits} lane {lane} reg {r}"
                    );
                }
            }
        }
    }
    for x in [1u32, 2, 4] {
        let f = ldmatrix_fragment(x, true, 16).unwrap();
        for lane in 0..32 {
            for r in 0..2 * x {
                let at = f
                    .apply(&[(Label::Register, r), (Label::Lane, lane)])
                    .unwrap();
                assert_eq!(
                    &at[..2],
                    &[8 * (r / 2) + 2 * (lane % 4) + r % 2, lane / 4],
                    "x{x}.trans lane {lane} reg {r}"
                );
            }
        }
    }
    // x4 over 16-bit elements: matrices 0..3 are rows 0-7 / 8-15 of columns 0-7 / 8-15 of the
    // 16×16 A tile of mma.m16n8k16 when matrix i sits at (8·(i mod 2), 8·(i / 2)).
    let a = DotOperand::new(0, 2, MmaParent::Nvidia(AMPERE))
        .to_linear_layout(&[16, 16])
        .unwrap();
    let f = ldmatrix_fragment(4, false, 16).unwrap();
    for lane in 0..32 {
        for r in 0..8 {
            let at = f
                .apply(&[(Label::Register, r), (Label::Lane, lane)])
                .unwrap();
            let (row, col) = (at[0] % 8 + 8 * ((at[0] / 8) % 2), at[1] + 8 * (at[0] / 16));
            let want = a
                .apply(&[(Label::Register, r), (Label::Lane, lane)])
                .unwrap();
            assert_eq!([row, col], [want[0], want[1]], "lane {lane} reg {r}");
        }
    }
    // Theorem 5.1 tile: identity on the 2 register bits and 2 lane bits of a 16-byte row.
    let tile = LDMATRIX_TILE;
    assert_eq!(tile.in_bits(Label::Register), 1);
    assert_eq!(tile.in_bits(Label::Lane), 2);
    assert_eq!(tile.out_size(Label::Offset), 8);
    // A row-major 8×8 read by the x1 fragment: (register, lane) → offset divides by the tile.
    let row_major = SwizzledShared::new(1, 1, 1, &[1, 0])
        .to_linear_layout(&[8, 8])
        .unwrap();
    let x1 = ldmatrix_fragment(1, false, 16).unwrap();
    let to_offsets = x1.invert_and_compose(&row_major).unwrap();
    let to_offsets = to_offsets.reshape_outs(&[(Label::Offset, 64)]).unwrap();
    assert!(to_offsets.divide_left(&tile).is_some());
}

// ---------------------------------------------------------------------- the Triton oracle

/// Every case of `layouts.json` (Triton 3.6's `toLinearLayout`) is reproduced exactly, and every
/// family of the file is present.
#[test]
fn oracle_layouts_match_triton_exactly() {
    let file = OracleFile::load("layouts.json");
    let cases = &file.cases;
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for case in cases {
        if let Err(lines) = check_layout_case(case) {
            mismatches.extend(lines);
        }
        *groups.entry(case_family(case)).or_default() += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
    assert_eq!(cases.len(), 1695);
    for family in [
        "blocked",
        "slice/blocked",
        "slice/nvidia_mma",
        "nvidia_mma",
        "dot_operand/nvidia_mma",
        "amd_mfma",
        "dot_operand/amd_mfma",
        "amd_wmma",
    ] {
        assert!(
            groups.get(family).is_some_and(|&n| n > 0),
            "{family} missing: {groups:?}"
        );
    }
}

// ---------------------------------------------------------------------- robustness

fn nasty(rng: &mut Rng) -> u32 {
    rng.pick(&[
        0,
        1,
        2,
        3,
        4,
        5,
        8,
        16,
        32,
        64,
        128,
        256,
        1 << 20,
        1 << 31,
        u32::MAX,
    ])
}

fn nasty_list(rng: &mut Rng, rank: usize) -> Vec<u32> {
    let len = if rng.chance(1, 8) {
        rng.range(0, 7) as usize
    } else {
        rank
    };
    (0..len).map(|_| nasty(rng)).collect()
}

/// Any numbers in any family's parameters and shape: an `Ok` layout of the right shape or an
/// error, never a panic (arithmetic overflow included: tests run with overflow checks).
#[test]
fn arbitrary_parameters_never_panic() {
    let mut rng = Rng::new(0x5EED_BAD0);
    let (mut built, mut rejected) = (0, 0);
    for _ in 0..CASES * 2 {
        let rank = rng.range(0, 7) as usize;
        let shape: Vec<u32> = (0..rank)
            .map(|_| {
                if rng.chance(3, 4) {
                    pow2(&mut rng, 9)
                } else {
                    nasty(&mut rng)
                }
            })
            .collect();
        let mut spec = match rng.below(8) {
            0 => LayoutSpec::Blocked {
                size_per_thread: nasty_list(&mut rng, rank),
                threads_per_warp: nasty_list(&mut rng, rank),
                warps_per_cta: nasty_list(&mut rng, rank),
                order: (0..rank as u32)
                    .map(|d| if rng.chance(1, 6) { nasty(&mut rng) } else { d })
                    .collect(),
            },
            1 => LayoutSpec::NvidiaMma {
                version: [rng.range(1, 4), 0],
                warps_per_cta: nasty_list(&mut rng, rank),
                instr_shape: {
                    let len = rng.range(2, 3) as usize;
                    nasty_list(&mut rng, len)
                },
            },
            2 => LayoutSpec::AmdMfma {
                version: nasty(&mut rng),
                instr_shape: nasty_list(&mut rng, 3),
                transposed: rng.chance(1, 2),
                warps_per_cta: nasty_list(&mut rng, rank),
                tiles_per_warp: rng.chance(1, 2).then(|| nasty_list(&mut rng, rank)),
                element_bitwidth: rng.chance(1, 2).then(|| nasty(&mut rng)),
            },
            3 => LayoutSpec::AmdWmma {
                version: nasty(&mut rng),
                transposed: rng.chance(1, 2),
                warps_per_cta: nasty_list(&mut rng, rank),
                instr_shape: nasty_list(&mut rng, 3),
            },
            4 => LayoutSpec::SwizzledShared {
                vec: nasty(&mut rng),
                per_phase: nasty(&mut rng),
                max_phase: nasty(&mut rng),
                order: permutation(&mut rng, rank),
            },
            5 => LayoutSpec::NvmmaShared {
                swizzle_byte_width: nasty(&mut rng),
                element_bitwidth: nasty(&mut rng),
                transposed: rng.chance(1, 2),
            },
            6 => LayoutSpec::Linear {
                register: vec![nasty_list(&mut rng, rank)],
                lane: vec![nasty_list(&mut rng, rank)],
                warp: vec![],
                block: BlockBases::default(),
                shape: nasty_list(&mut rng, rank),
            },
            _ => random_distributed(&mut rng).0,
        };
        if rng.chance(1, 4) {
            spec = LayoutSpec::Slice {
                dim: nasty(&mut rng) % 8,
                parent: Box::new(spec),
            };
        } else if rng.chance(1, 4) && !spec.is_memory() {
            spec = LayoutSpec::DotOperand {
                operand_index: rng.range(0, 2),
                k_width: nasty(&mut rng),
                parent: Box::new(spec),
            };
        }
        match spec.build(&shape) {
            Ok(layout) => {
                built += 1;
                for (d, &size) in shape.iter().enumerate() {
                    assert_eq!(
                        layout.out_size(Label::Dim(d as u8)),
                        size,
                        "{spec:?} {shape:?}"
                    );
                }
            }
            Err(e) => {
                rejected += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    // Both outcomes are exercised.
    assert!(
        built > 100 && rejected > 1000,
        "built {built}, rejected {rejected}"
    );
}
