#!/usr/bin/env bash
# What one file of kernels costs to build, in a crate of its own (the README's table of build
# costs): the macro's expansion inside rustc, rustc for the host (the workspace's `ci` profile)
# and for the device (sm_90a, the build helper's flags), and ptxas on that PTX.
#
#   scripts/kernel_build_cost.sh [--sm SM] FILE [FILE ...]
#
# FILE is a module of kernels/src/tiled (e.g. `norm`); each is built alone, beside `blocks` (the
# helpers most kernels use). The dependencies are built first and not timed; then the module is
# touched and rebuilt, so each time is that of the module's kernels alone, one core busy. Prints
# one tab-separated row per module: entries (PTX kernels), macro expansion (s, from
# -Ztime-passes), host rustc (s), device rustc (s), ptxas (s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

sm=sm_90a
if [[ "${1:-}" == "--sm" ]]; then
    sm="$2"
    shift 2
fi
[[ $# -gt 0 ]] || die "usage: scripts/kernel_build_cost.sh [--sm SM] MODULE [MODULE ...] (modules of kernels/src/tiled)"
ptxas="$(compgen -G "$root/.venv/lib/python3*/site-packages/nvidia/cu*/bin/ptxas" | head -n 1 || true)"
[[ -x "$ptxas" ]] || die "ptxas not found in $root/.venv (scripts/test installs it)"
toolchain="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml")"

work="${TESSERA_BUILD_COST_DIR:-${TMPDIR:-/tmp}/tessera-build-cost}"
mkdir -p "$work"
export CARGO_TARGET_DIR="$work/target"

seconds() { # seconds COMMAND...: runs it quietly, prints its wall time
    local start end
    start=$(date +%s.%N)
    "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; die "failed: $*"; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.1f}')"
}

printf 'module\tentries\tmacro_s\thost_rustc_s\tdevice_rustc_s\tptxas_s\n'
for module in "$@"; do
    src="$root/kernels/src/tiled/$module.rs"
    [[ -f "$src" ]] || die "no kernels/src/tiled/$module.rs"
    crate="$work/crate-$module"
    mkdir -p "$crate/src/tiled"
    cp "$root/rust-toolchain.toml" "$crate/"
    cat >"$crate/Cargo.toml" <<EOF
[package]
name = "cost-$module"
version = "0.1.0"
edition = "2021"

[dependencies]
tessera = { package = "tessera-gpu", path = "$root/dsl" }

[profile.ci]
inherits = "release"
codegen-units = 16
lto = "off"
debug-assertions = true
overflow-checks = true

[workspace]
EOF
    cat >"$crate/src/lib.rs" <<EOF
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
pub mod tiled {
    #[allow(unused_imports)]
    pub mod blocks;
    pub mod $module;
}
EOF
    cp "$root/kernels/src/tiled/blocks.rs" "$crate/src/tiled/"
    cp "$src" "$crate/src/tiled/"
    cd "$crate"
    # Dependencies first (untimed), then the module alone.
    cargo build --profile ci --quiet 2>/dev/null || cargo build --profile ci
    touch "src/tiled/$module.rs"
    cargo rustc --profile ci --quiet -- -Ztime-passes >"$work/passes.log" 2>&1 ||
        { cat "$work/passes.log" >&2; die "host build of $module failed"; }
    macro_s=$(awk '$NF == "macro_expand_crate" { sub(";", "", $2); print $2 }' "$work/passes.log")
    touch "src/tiled/$module.rs"
    host_s=$(seconds cargo build --profile ci)
    device=(cargo "+$toolchain" build --release --target nvptx64-nvidia-cuda -Zbuild-std=core
        --target-dir "$work/target-$sm")
    device_env=(env "CARGO_ENCODED_RUSTFLAGS=$(printf '%s\x1f' -Ctarget-cpu=$sm --emit=asm \
        -Zunstable-options -Cpanic=immediate-abort -Zmir-enable-passes=-GVN | sed 's/\x1f$//')"
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1)
    "${device_env[@]}" "${device[@]}" --quiet 2>/dev/null || "${device_env[@]}" "${device[@]}"
    touch "src/tiled/$module.rs"
    device_s=$(seconds "${device_env[@]}" "${device[@]}")
    ptx=$(ls -t "$work/target-$sm/nvptx64-nvidia-cuda/release/deps/cost_${module}"-*.s | head -n 1)
    entries=$(grep -c '^\.visible \.entry' "$ptx" || true)
    ptxas_s=$(seconds "$ptxas" -arch="$sm" "$ptx" -o "$work/$module.cubin")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$module" "$entries" "$macro_s" "$host_s" "$device_s" "$ptxas_s"
done
