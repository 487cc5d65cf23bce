//! The PTX set `tessera-kernels-ptx` embeds (`tessera::include_ptx!`): one PTX per target,
//! oldest first, each assembled for its own target; only the `sm_90a` build has the Hopper
//! matmul (it is compiled for `target_feature = "sm_90a"` only).

use tessera::build::{PtxSet, Sm};
use tessera::launch::ptx::target_name;

const PTX: PtxSet = tessera_kernels_ptx::PTX;

/// The `.entry` line of the Hopper matmul in PTX.
const HOPPER_ENTRY: &str = ".entry hopper_matmul_f16(";

#[test]
fn every_target_has_its_ptx_and_only_sm_90a_has_the_hopper_matmul() {
    if let Some(reason) = tessera_kernels_ptx::PTX_SKIPPED {
        assert!(PTX.is_empty(), "built with {reason}, yet the set holds PTX");
        return;
    }
    if option_env!("TESSERA_SM").is_none() {
        assert_eq!(PTX.sms(), Sm::DEFAULT_TARGETS);
    }
    assert!(!PTX.is_empty());
    let mut previous: Option<Sm> = None;
    for (sm, ptx) in PTX.targets() {
        assert_eq!(target_name(ptx), Some(sm.name()), "the {sm} PTX's .target");
        assert!(
            ptx.contains(".entry vec_add("),
            "the {sm} PTX has no vec_add"
        );
        assert_eq!(
            ptx.contains(HOPPER_ENTRY),
            *sm == Sm::SM_90A,
            "hopper_matmul_f16 in the {sm} PTX"
        );
        if let Some(previous) = previous {
            assert!(
                previous.compute_capability() <= sm.compute_capability(),
                "{previous} listed before {sm}"
            );
        }
        previous = Some(*sm);
    }
}
