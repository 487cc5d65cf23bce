//! A `#[tile_kernel]` generic over its element type (`T = [f16, bf16, f32]`) and its warps
//! (`num_warps = [4, 8]`): the launcher picks the specialisation from the arguments' types and
//! `Consts`, and every one matches the CPU reference on ragged sizes.

mod support;

use support::{device, launch_tile, Axpy, Float, Guarded};
use tessera::{bf16, f16};
use tessera_kernels::tiled::elementwise::tile_axpy;

/// An element type of `tile_axpy`.
trait Element: tile_axpy::Listed_T + Float {}

impl<T: tile_axpy::Listed_T + Float> Element for T {}

/// `out = 2 · x + y` through `tile_axpy` at `num_warps`, against the CPU.
fn axpy_matches_cpu<T: Element>(what: &str) {
    let gpu = device();
    for num_warps in [4u32, 8] {
        let consts = tile_axpy::Consts {
            BLOCK: 1024,
            num_warps,
        };
        for n in [1usize, 5, 1024, 1025, 3000] {
            let case = Axpy::<T>::new(gpu.device(), [1, 2], n);
            let grid = |c: &tile_axpy::Consts| (n.div_ceil(c.BLOCK) as u32,);
            let dout = Guarded::new(gpu, n, T::from_f32(7.5));
            case.launch(dout.ptr(), |x, y, out, alpha, len| {
                launch_tile!(gpu, tile_axpy, consts, grid, x, y, out, alpha, len)
            });
            let out = dout.outputs(&format!("{what} n {n}"));
            for (i, (got, want)) in out.iter().zip(&case.want).enumerate() {
                assert_eq!(got, want, "{what} num_warps {num_warps} n {n} i {i}");
            }
        }
    }
}

#[test]
fn axpy_is_generic_over_element_type_and_warps() {
    axpy_matches_cpu::<f16>("f16");
    axpy_matches_cpu::<bf16>("bf16");
    axpy_matches_cpu::<f32>("f32");
}

/// Each specialisation is its own PTX entry, named after its element type and warps, with the
/// block of its warps.
#[test]
fn axpy_specialisations_are_named_by_type_and_warps() {
    let spec = tile_axpy::T_bf16::specialisation(
        &tile_axpy::Consts {
            BLOCK: 1024,
            num_warps: 8,
        },
        &(
            tessera::Ptr::from_addr(0),
            tessera::Ptr::from_addr(0),
            tessera::Ptr::from_addr(0),
            1.0,
            0,
        ),
    )
    .unwrap();
    assert_eq!(
        spec.kernel.name,
        "tile_axpy__T_bf16__BLOCK_1024__num_warps_8"
    );
    assert_eq!(spec.num_warps, 8);
    let f16_names = tile_axpy::T_f16::SPECIALISATIONS
        .iter()
        .map(|s| s.kernel.name);
    let f32_names = tile_axpy::T_f32::SPECIALISATIONS
        .iter()
        .map(|s| s.kernel.name);
    let names: Vec<&str> = f16_names.chain(f32_names).collect();
    assert!(
        names.contains(&"tile_axpy__T_f16__BLOCK_1024__num_warps_4"),
        "{names:?}"
    );
    assert!(
        names.contains(&"tile_axpy__T_f32__BLOCK_1024__num_warps_8"),
        "{names:?}"
    );
}
