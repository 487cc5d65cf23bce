//! `--random-dump SEED N OUT`: `randint`, `rand` and `randn` of `SEED` at offsets `0..N` from
//! the tile kernel `tile_random`, written as little-endian binary files `OUT.randint.u32`,
//! `OUT.rand.f32` and `OUT.randn.f32`, to compare with Triton on the same GPU:
//!
//! ```python
//! @triton.jit
//! def k(ints, uni, nor, seed, n, BLOCK: tl.constexpr):
//!     offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
//!     m = offs < n
//!     tl.store(ints + offs, tl.randint(seed, offs), m)
//!     tl.store(uni + offs, tl.rand(seed, offs), m)
//!     tl.store(nor + offs, tl.randn(seed, offs), m)
//! ```
//!
//! All three must agree bit for bit: `randn`'s `log` and `cos` are libdevice's `__nv_logf` and
//! `__nv_cosf` (ported in `tessera::tile::libdevice`) and its `sqrt` is `sqrt.approx.ftz.f32`,
//! as in Triton's PTX.

use std::path::Path;
use tessera::launch::{Device, Module};
use tessera::tensor::Tensor;
use tessera_kernels::tiled::random::tile_random;

pub fn dump(
    device: &Device,
    module: &Module,
    seed: i64,
    n: usize,
    out: &str,
) -> Result<(), String> {
    let fail = |err: tessera::launch::LaunchError| err.to_string();
    let mut ints = Tensor::<u32>::zeros(device, &[n]).map_err(fail)?;
    let mut uniform = Tensor::<f32>::zeros(device, &[n]).map_err(fail)?;
    let mut normal = Tensor::<f32>::zeros(device, &[n]).map_err(fail)?;
    let stream = device.stream().map_err(fail)?;
    tile_random::launch(
        &stream,
        module,
        tile_random::Consts { BLOCK: 1024 },
        |c: &tile_random::Consts| (n.div_ceil(c.BLOCK) as u32,),
        &mut ints,
        &mut uniform,
        &mut normal,
        seed,
    )
    .map_err(fail)?;
    stream.synchronize().map_err(fail)?;
    let write = |suffix: &str, words: Vec<u32>| -> Result<(), String> {
        let path = format!("{out}.{suffix}");
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(Path::new(&path), bytes).map_err(|err| format!("writing {path}: {err}"))?;
        eprintln!("wrote {path} ({n} values)");
        Ok(())
    };
    let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect();
    write("randint.u32", ints.to_vec().map_err(fail)?)?;
    write("rand.f32", bits(uniform.to_vec().map_err(fail)?))?;
    write("randn.f32", bits(normal.to_vec().map_err(fail)?))
}
