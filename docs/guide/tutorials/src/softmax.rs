//! Tutorial 2: softmax over ragged rows. The rows of a batch have different lengths and are
//! stored packed, one after the other; one program normalises one row, and a mask keeps every
//! access inside the row.

use std::error::Error;
use tessera::launch::{Device, Module};
use tessera::{tile_kernel, Ptr};

// ANCHOR: kernel
/// Softmax of every row of a packed ragged batch: row `r` has `lens[r]` values starting at
/// element `starts[r]` of `inp`; its softmax goes to the same place in `out`. `BLOCK` must be at
/// least the longest row.
#[tile_kernel(num_warps = 4, BLOCK = [128, 1024])]
pub fn ragged_softmax<const BLOCK: usize>(
    out: Ptr<f32>,
    inp: Ptr<f32>,
    starts: Ptr<i32>,
    lens: Ptr<i32>,
) {
    let row = program_id(0);
    let start = load(starts + row); // a scalar load: one value per program
    let len = load(lens + row);
    let cols = arange(0, BLOCK); // i32[BLOCK]: 0, 1, …, BLOCK - 1
    let mask = cols < len; // bool[BLOCK]: the columns that exist
    let x = load(inp + start + cols, mask, f32::NEG_INFINITY);
    let num = exp(x - x.max(0)); // masked-off columns are exp(-inf) = 0
    store(out + start + cols, num / num.sum(0), mask);
}
// ANCHOR_END: kernel

// ANCHOR: host
/// The softmax of each of `rows` on `device`, packed in the rows' order.
pub fn softmax_rows(
    device: &Device,
    module: &Module,
    rows: &[Vec<f32>],
) -> Result<Vec<f32>, Box<dyn Error>> {
    let (mut starts, mut lens, mut packed) = (Vec::new(), Vec::new(), Vec::new());
    for row in rows {
        starts.push(packed.len() as i32);
        lens.push(row.len() as i32);
        packed.extend_from_slice(row);
    }
    let longest = rows.iter().map(Vec::len).max().unwrap_or(0);
    // The smallest listed BLOCK that holds the longest row.
    let block = match longest {
        0 => return Ok(Vec::new()),
        1..=128 => 128,
        129..=1024 => 1024,
        _ => return Err(format!("a row of {longest} values is longer than BLOCK = 1024").into()),
    };
    let inp = device.upload(&packed)?;
    let (starts, lens) = (device.upload(&starts)?, device.upload(&lens)?);
    let out = device.zeros::<f32>(packed.len())?;
    let consts = ragged_softmax::Consts { BLOCK: block };
    let grid = (rows.len() as u32,); // one program per row
    ragged_softmax::launch(
        device,
        module,
        consts,
        grid,
        out.ptr(),
        inp.ptr(),
        starts.ptr(),
        lens.ptr(),
    )?;
    Ok(out.download()?)
}
// ANCHOR_END: host

#[cfg(test)]
mod tests {
    use super::softmax_rows;
    use tessera::launch::Device;

    // ANCHOR: test
    /// The softmax of one row in f64.
    fn reference(row: &[f32]) -> Vec<f64> {
        let max = row.iter().map(|&x| x as f64).fold(f64::NEG_INFINITY, f64::max);
        let exps: Vec<f64> = row.iter().map(|&x| (x as f64 - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        exps.iter().map(|e| e / sum).collect()
    }

    #[test]
    fn ragged_rows_match_the_cpu() {
        let device = Device::emulator();
        let module = device.host_module().unwrap();
        // Lengths that are not multiples of anything, an empty row, and rows for both BLOCKs.
        for lens in [vec![1, 37, 0, 128, 5], vec![700, 129, 3, 1024]] {
            let rows: Vec<Vec<f32>> = lens
                .iter()
                .enumerate()
                .map(|(r, &len)| crate::values(r as u64 + 7, len, 8.0))
                .collect();
            let got = softmax_rows(&device, &module, &rows).unwrap();
            let want: Vec<f64> = rows.iter().flat_map(|row| reference(row)).collect();
            assert_eq!(got.len(), want.len());
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g as f64 - w).abs() <= 1e-6 + 1e-5 * w,
                    "lens {lens:?}, element {i}: {g} vs {w}"
                );
            }
        }
    }
    // ANCHOR_END: test

    // ANCHOR: explain
    /// A row starts wherever `starts[r]` says, so no alignment can be assumed: every variant's
    /// row load and store are 32-bit accesses.
    #[test]
    fn rows_are_accessed_32_bits_at_a_time() {
        let explain = super::ragged_softmax::EXPLAIN;
        let rows: Vec<&str> = explain
            .lines()
            .filter(|l| l.contains("// x") || l.trim_start().starts_with("store "))
            .collect();
        assert!(!rows.is_empty(), "{explain}");
        for line in rows {
            assert!(line.contains("[vector 1 × 32 bits = 32 bits"), "{line}");
        }
    }
    // ANCHOR_END: explain

    #[test]
    fn a_row_longer_than_the_largest_block_is_an_error() {
        let device = Device::emulator();
        let module = device.host_module().unwrap();
        let err = softmax_rows(&device, &module, &[vec![0.0; 1025]]).unwrap_err();
        assert!(err.to_string().contains("longer than BLOCK = 1024"), "{err}");
    }
}
