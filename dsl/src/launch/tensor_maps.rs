//! The tensor maps of kernels that copy by TMA: a kernel's sm_90a entry takes one hidden
//! `Ptr<TensorMap>` per tensor it copies so ([`Kernel::tensor_maps`](crate::Kernel)), after its
//! own parameters. The launcher builds each map from the tensor's packed parameters (pointer,
//! sizes, strides: [`TensorMapParam::map`]), encodes it with the driver's
//! `cuTensorMapEncodeTiled` and keeps the 128-byte result in device memory, once per distinct
//! map: the TMA unit reads maps from global memory, and a kernel parameter cannot carry one
//! (rustc's PTX kernel ABI refuses parameters aligned above 16 bytes; a map needs 64).
//!
//! The cache holds 128 bytes of device memory per distinct (tensor address, sizes, strides,
//! box, swizzle) for the device's lifetime, so a graph replayed later still finds its maps.
//! A module of another target than sm_90a gets null pointers: its entries take no maps.

use super::{Device, DeviceBuffer, KernelParams, LaunchError, Module};
use crate::device::TensorMap;
use crate::TensorMapParam;
use std::collections::HashMap;
use std::sync::Mutex;

/// Encoded maps in device memory, by the map they encode.
#[derive(Default)]
pub(super) struct TensorMapCache {
    maps: Mutex<HashMap<TensorMap, DeviceBuffer<u64>>>,
}

impl Device {
    /// Appends to `params` the tensor maps `maps` of kernel `name` (module docs): on a GPU
    /// running `module`'s sm_90a code, the device address of each encoded map; else nothing (the
    /// entries of other targets, and the emulator's, take none).
    pub(super) fn push_tensor_maps(
        &self,
        module: &Module,
        name: &str,
        maps: &[TensorMapParam],
        params: &mut KernelParams,
    ) -> Result<(), LaunchError> {
        if maps.is_empty() || module.host_only || module.target != Some((9, 0, true)) {
            return Ok(());
        }
        for m in maps {
            let map = m
                .map(params)
                .map_err(|reason| LaunchError::ArgumentMismatch {
                    kernel: name.to_string(),
                    detail: format!("the tensor map of parameter {}: {reason}", m.tensor),
                })?;
            let addr =
                self.tensor_map_address(&map)
                    .map_err(|reason| LaunchError::ArgumentMismatch {
                        kernel: name.to_string(),
                        detail: format!("the tensor map of parameter {}: {reason}", m.tensor),
                    })?;
            params.push(super::KernelParam::Ptr(addr));
        }
        Ok(())
    }

    /// The device address of `map` encoded, from the cache or encoded and uploaded now.
    fn tensor_map_address(&self, map: &TensorMap) -> Result<u64, String> {
        let mut maps = self
            .tensor_maps
            .maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(buffer) = maps.get(map) {
            return Ok(buffer.addr);
        }
        let encoded = self.encode_tensor_map(map)?;
        let buffer = self.upload(&encoded).map_err(|e| e.to_string())?;
        let addr = buffer.addr;
        maps.insert(*map, buffer);
        Ok(addr)
    }

    #[cfg(feature = "cuda")]
    fn encode_tensor_map(&self, map: &TensorMap) -> Result<[u64; 16], String> {
        map.encode()
    }

    #[cfg(not(feature = "cuda"))]
    fn encode_tensor_map(&self, map: &TensorMap) -> Result<[u64; 16], String> {
        map.check()?;
        Err(
            "tensor maps are encoded by the CUDA driver: build with tessera's `cuda` feature"
                .into(),
        )
    }
}
