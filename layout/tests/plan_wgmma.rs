//! `wgmma` matrix descriptors: for every element of every instruction operand of a tile, the
//! address the descriptor names equals the element's place in the NVMMA shared layout.

use tessera_layout::families::NvmmaShared;
use tessera_layout::plan::wgmma::{
    plan_operand, DescriptorSwizzle, Major, MatrixDescriptor, OperandPlan,
};
use tessera_layout::Label;

/// Byte address of element (`row`, `col`) in the layout, the tile at `base`.
fn layout_address(shared: NvmmaShared, shape: [u32; 2], base: u32, row: u32, col: u32) -> u32 {
    let layout = shared.to_linear_layout(&shape).unwrap();
    let bytes = shared.element_bitwidth / 8;
    (0..shape[0] * shape[1])
        .find(|&o| {
            let [r, c, ..] = layout.apply(&[(Label::Offset, o)]).unwrap();
            (r, c) == (row, col)
        })
        .map(|o| base + o * bytes)
        .unwrap()
}

/// Checks every element of every (MN block, K step) operand against the layout.
fn check_every_element(
    shared: NvmmaShared,
    shape: [u32; 2],
    k_dim: usize,
    mn_block: u32,
) -> OperandPlan {
    let plan = plan_operand(shared, shape, k_dim, mn_block).unwrap();
    let layout = shared.to_linear_layout(&shape).unwrap();
    let bytes = shared.element_bitwidth / 8;
    let mut address_of = vec![0u32; (shape[0] * shape[1]) as usize];
    let base = 3 * plan.alignment;
    for o in 0..shape[0] * shape[1] {
        let [r, c, ..] = layout.apply(&[(Label::Offset, o)]).unwrap();
        address_of[(r * shape[1] + c) as usize] = base + o * bytes;
    }
    for (b, _) in plan.mn_block_offsets.iter().enumerate() {
        for (s, _) in plan.k_step_offsets.iter().enumerate() {
            let bits = plan.descriptor_at(base, b, s);
            let desc = MatrixDescriptor::decode(bits).unwrap();
            assert_eq!(desc.encode(), bits);
            for mn in 0..mn_block {
                for k in 0..plan.instr_k {
                    let (gm, gk) = (b as u32 * mn_block + mn, s as u32 * plan.instr_k + k);
                    let (row, col) = if k_dim == 1 { (gm, gk) } else { (gk, gm) };
                    assert_eq!(
                        desc.address(plan.major, bytes, mn, k),
                        address_of[(row * shape[1] + col) as usize],
                        "{shared:?} {shape:?} block {b} step {s} element ({mn}, {k})"
                    );
                }
            }
        }
    }
    plan
}

#[test]
fn k_major_a_operands_match_the_layout() {
    for swizzle in [32, 64, 128] {
        for bits in [8, 16, 32] {
            let shared = NvmmaShared::new(swizzle, bits, false);
            let k = 8 * swizzle / bits; // one swizzle row
            for rows in [64, 128] {
                let plan = check_every_element(shared, [rows, k], 1, 64);
                assert_eq!(plan.major, Major::K);
                check_every_element(shared, [rows, 2 * k], 1, 64);
            }
        }
    }
}

#[test]
fn k_major_b_operands_match_the_layout() {
    // B stored N × K (K contiguous), one instruction reads all N rows.
    for n in [64, 128, 256] {
        let plan = check_every_element(NvmmaShared::new(128, 16, false), [n, 64], 1, n);
        assert_eq!(plan.major, Major::K);
        assert_eq!(plan.descriptor.stride_byte_offset, 1024);
    }
}

#[test]
fn mn_major_b_operands_match_the_layout() {
    // B stored K × N (N contiguous): MN-major, imm-trans-b = 1.
    for swizzle in [32, 64, 128] {
        for n in [64, 128, 256] {
            let shared = NvmmaShared::new(swizzle, 16, false);
            let plan = check_every_element(shared, [64, n], 0, n);
            assert_eq!(plan.major, Major::Mn);
            assert_eq!(plan.descriptor.stride_byte_offset, 8 * swizzle);
        }
    }
    // The 128 × 64 × 64 matmul tile: two 64 × 64 boxes of 8 KiB.
    let plan = check_every_element(NvmmaShared::new(128, 16, false), [64, 128], 0, 128);
    assert_eq!(plan.descriptor.leading_byte_offset, 8192);
    assert_eq!(plan.k_step_offsets, [0, 2048, 4096, 6144]);
}

#[test]
fn transposed_tiles_swap_the_major_dimension() {
    // A stored K × M (M contiguous, `transposed` = false with K as dim 0) and B stored N × K
    // described as a transposed [K, N] tile.
    let plan = check_every_element(NvmmaShared::new(128, 16, false), [64, 64], 0, 64);
    assert_eq!(plan.major, Major::Mn);
    let plan = check_every_element(NvmmaShared::new(128, 16, true), [64, 128], 0, 128);
    assert_eq!(plan.major, Major::K);
}

#[test]
fn descriptor_bits_follow_the_ptx_fields() {
    let desc = MatrixDescriptor {
        start_address: 0x1_2340,
        leading_byte_offset: 8192,
        stride_byte_offset: 1024,
        swizzle: DescriptorSwizzle::B128,
    };
    let bits = desc.encode();
    assert_eq!(bits & 0x3fff, 0x1234);
    assert_eq!(bits >> 16 & 0x3fff, 512);
    assert_eq!(bits >> 32 & 0x3fff, 64);
    assert_eq!(bits >> 62, 1);
    assert_eq!(MatrixDescriptor::decode(bits), Ok(desc));
    assert!(MatrixDescriptor::decode(bits | 1 << 49).is_err());
    // The 128-byte swizzle moves chunk c of row r to chunk c ^ (r mod 8).
    assert_eq!(
        DescriptorSwizzle::B128.apply(3 * 128 + 16),
        3 * 128 + 2 * 16
    );
    assert_eq!(DescriptorSwizzle::B32.apply(4 * 32), 4 * 32 + 16);
}

#[test]
fn unsupported_tiles_are_errors() {
    let e = plan_operand(NvmmaShared::new(0, 16, false), [64, 64], 1, 64).unwrap_err();
    assert!(e.to_string().contains("unswizzled"), "{e}");
    let e = plan_operand(NvmmaShared::new(128, 16, false), [64, 72], 1, 64);
    assert!(e.is_err());
    let e = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 2, 64).unwrap_err();
    assert!(e.to_string().contains("k_dim"), "{e}");
    assert_eq!(
        layout_address(NvmmaShared::new(128, 16, false), [8, 64], 0, 1, 0),
        128 + 16
    );
}
