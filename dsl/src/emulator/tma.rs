//! TMA tensor copies: the box of a [`TensorMap`] read from global memory (zeros outside the
//! tensor), swizzled into shared memory and counted on an `mbarrier`, where it lands when the
//! barrier's phase completes (see [`crate::device::tma_load_2d`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use tessera_layout::plan::wgmma::DescriptorSwizzle;

use super::cta::{raise, with_thread};
use super::error::{EmulatorError, Site};
use super::mbarrier::{async_error, complete_tx};
use super::SHARED_WINDOW_BASE;
use crate::device::TensorMap;

const OP: &str = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes";

/// Addresses below this are null pointers.
const NULL_PAGE: u64 = 4096;

/// The emulator's tensor maps of `#[tile_kernel]` launches, each kept at one address for the
/// process's lifetime (the emulated kernel reads them as the GPU reads encoded maps from
/// device memory).
static TENSOR_MAPS: Mutex<Option<HashMap<TensorMap, &'static TensorMap>>> = Mutex::new(None);

/// The address of a copy of `map` that stays valid (one per distinct map), for a kernel's
/// hidden tensor-map parameter on the emulator.
pub fn tensor_map_in_memory(map: TensorMap) -> crate::Ptr<TensorMap> {
    let mut maps = TENSOR_MAPS.lock().unwrap_or_else(|p| p.into_inner());
    let kept = *maps
        .get_or_insert_with(HashMap::new)
        .entry(map)
        .or_insert_with(|| Box::leak(Box::new(map)));
    crate::Ptr::from_addr(kept as *const TensorMap as u64)
}

/// Whether `address` is one of [`tensor_map_in_memory`]'s maps.
fn kept_tensor_map(address: u64) -> bool {
    let maps = TENSOR_MAPS.lock().unwrap_or_else(|p| p.into_inner());
    maps.as_ref().is_some_and(|m| {
        m.values()
            .any(|&kept| kept as *const TensorMap as u64 == address)
    })
}

/// Issues the copy of the box at element `coords` (the contiguous dimension first; those past
/// the map's rank 0) of the map at `map_address` to `dst`.
///
/// # Safety
/// `map_address` must point to a `TensorMap` whose tensor is valid host memory.
#[track_caller]
pub(crate) unsafe fn load(dst: u32, map_address: u64, coords: [i32; 4], mbarrier: u32) {
    super::target::nvidia_instruction("cp.async.bulk.tensor");
    let site = Site(std::panic::Location::caller());
    with_thread(|t| {
        let map_bytes = size_of::<TensorMap>() as u32;
        if map_address < NULL_PAGE
            || !map_address.is_multiple_of(64)
            || !(t.cta.global_access_allowed(map_address, map_bytes)
                || kept_tensor_map(map_address))
        {
            raise(EmulatorError::GlobalOutOfBounds {
                thread: t.thread_ref(),
                op: OP,
                address: map_address,
                bytes: map_bytes,
                site,
            });
        }
        // SAFETY: checked above to lie inside the launch's memory; the caller guarantees a map.
        let map = unsafe { std::ptr::read(map_address as *const TensorMap) };
        if let Err(why) = map.check() {
            async_error(t, OP, why);
        }
        let bytes = map.element.bytes();
        let [box_cols, box_rows, ..] = map.box_dim;
        let box_bytes = map.box_bytes();
        let end = SHARED_WINDOW_BASE as u64 + t.cta.shared_bytes as u64;
        if !dst.is_multiple_of(128)
            || dst < SHARED_WINDOW_BASE
            || dst as u64 + box_bytes as u64 > end
        {
            async_error(
                t,
                OP,
                format!(
                    "destination {dst:#x} must be 128-byte aligned with the box's {box_bytes} \
                     bytes inside the {} bytes of dynamic shared memory",
                    t.cta.shared_bytes
                ),
            );
        }
        // The box, row after row, zeros outside the tensor (the box spans dimensions 0 and 1;
        // the others are at their coordinate).
        let mut data = vec![0u8; box_bytes as usize];
        let row_bytes = (box_cols * bytes) as usize;
        let inside = |d: usize, at: i64| at >= 0 && at < map.global_dim[d] as i64;
        let outer_inside = (2..map.rank as usize).all(|d| inside(d, coords[d] as i64));
        let outer_offset: u64 = (2..map.rank as usize)
            .map(|d| coords[d].max(0) as u64 * map.global_stride_bytes[d - 1])
            .sum();
        for r in 0..box_rows {
            let gy = coords[1] as i64 + r as i64;
            if !outer_inside || !inside(1, gy) {
                continue;
            }
            for c in 0..box_cols {
                let gx = coords[0] as i64 + c as i64;
                if !inside(0, gx) {
                    continue;
                }
                let src = map.global_address
                    + outer_offset
                    + gy as u64 * map.global_stride_bytes[0]
                    + gx as u64 * bytes as u64;
                if !t.cta.global_access_allowed(src, bytes) {
                    raise(EmulatorError::GlobalOutOfBounds {
                        thread: t.thread_ref(),
                        op: OP,
                        address: src,
                        bytes,
                        site,
                    });
                }
                for b in 0..bytes as usize {
                    // SAFETY: inside the tensor the map describes (checked against the launch's
                    // allocations when it has a memory map).
                    data[r as usize * row_bytes + c as usize * bytes as usize + b] =
                        unsafe { AtomicU8::from_ptr((src as usize as *mut u8).add(b)) }
                            .load(Ordering::Relaxed);
                }
            }
        }
        // 16-byte chunks to their swizzled shared addresses.
        let swizzle = DescriptorSwizzle::from_width(map.swizzle.width())
            .expect("a tensor-map swizzle is a descriptor swizzle width");
        let mut words = Vec::with_capacity(data.len() / 4);
        for (chunk, bytes16) in data.chunks_exact(16).enumerate() {
            let address = swizzle.apply(dst + 16 * chunk as u32);
            if address as u64 + 16 > end {
                async_error(
                    t,
                    OP,
                    format!(
                        "the swizzle moves chunk {chunk} of the box to {address:#x}, outside \
                         shared memory"
                    ),
                );
            }
            for (w, word) in bytes16.chunks_exact(4).enumerate() {
                let index = ((address - SHARED_WINDOW_BASE) / 4) as usize + w;
                words.push((
                    index,
                    u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
                ));
            }
        }
        t.local.borrow_mut().log_shared(
            std::panic::Location::caller(),
            crate::emulator::SharedAccessKind::Tma,
            dst,
            box_bytes,
        );
        complete_tx(t, mbarrier, box_bytes, words, OP);
    })
}
