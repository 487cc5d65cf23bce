#!/usr/bin/env bash
# What one family of kernels costs to build (the README's table of build costs): the macro's
# expansion inside rustc, rustc for the host (the workspace's `ci` profile) and for the device
# (sm_90a, the build helper's flags), and ptxas on that PTX.
#
#   scripts/kernel_build_cost.sh [--sm SM] FAMILY [FAMILY ...]
#
# FAMILY is a crate of kernels/tiled (e.g. `norm`, the crate tessera-kernels-norm). Its
# dependencies are built first and not timed; then its source is touched and the crate alone
# rebuilt, so each time is that of the family's kernels, one crate compiling. Prints one
# tab-separated row per family: entries (PTX kernels), macro expansion (s, from -Ztime-passes),
# host rustc (s), device rustc (s), ptxas (s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

sm=sm_90a
if [[ "${1:-}" == "--sm" ]]; then
    sm="$2"
    shift 2
fi
[[ $# -gt 0 ]] || die "usage: scripts/kernel_build_cost.sh [--sm SM] FAMILY [FAMILY ...] (crates of kernels/tiled)"
ptxas="$(compgen -G "$root/.venv/lib/python3*/site-packages/nvidia/cu*/bin/ptxas" | head -n 1 || true)"
[[ -x "$ptxas" ]] || die "ptxas not found in $root/.venv (scripts/test installs it)"
toolchain="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml")"

# Target directories of their own, so that the timed builds neither wait on nor disturb the
# workspace's.
work="${TESSERA_BUILD_COST_DIR:-${TMPDIR:-/tmp}/tessera-build-cost}"
mkdir -p "$work"

seconds() { # seconds COMMAND...: runs it quietly, prints its wall time
    local start end
    start=$(date +%s.%N)
    "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; die "failed: $*"; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.1f}')"
}

printf 'family\tentries\tmacro_s\thost_rustc_s\tdevice_rustc_s\tptxas_s\n'
for family in "$@"; do
    dir="$root/kernels/tiled/$family"
    [[ -f "$dir/Cargo.toml" ]] || die "no crate kernels/tiled/$family"
    package="tessera-kernels-${family//_/-}"
    src="$dir/src/lib.rs"
    host=(cargo build --profile ci -p "$package" --target-dir "$work/target")
    # Dependencies first (untimed), then the family alone.
    "${host[@]}" --quiet 2>/dev/null || "${host[@]}"
    touch "$src"
    cargo rustc --profile ci -p "$package" --target-dir "$work/target" --quiet -- -Ztime-passes \
        >"$work/passes.log" 2>&1 || { cat "$work/passes.log" >&2; die "host build of $family failed"; }
    macro_s=$(awk '$NF == "macro_expand_crate" { sub(";", "", $2); print $2 }' "$work/passes.log")
    touch "$src"
    host_s=$(seconds "${host[@]}")
    device=(cargo "+$toolchain" build --release --target nvptx64-nvidia-cuda -Zbuild-std=core
        --manifest-path "$dir/Cargo.toml" --target-dir "$work/target-$sm")
    device_env=(env "CARGO_ENCODED_RUSTFLAGS=$(printf '%s\x1f' -Ctarget-cpu=$sm --emit=asm \
        -Zunstable-options -Cpanic=immediate-abort -Zmir-enable-passes=-GVN | sed 's/\x1f$//')"
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1)
    "${device_env[@]}" "${device[@]}" --quiet 2>/dev/null || "${device_env[@]}" "${device[@]}"
    touch "$src"
    device_s=$(seconds "${device_env[@]}" "${device[@]}")
    ptx=$(ls -t "$work/target-$sm/nvptx64-nvidia-cuda/release/deps/tessera_kernels_${family}"-*.s | head -n 1)
    entries=$(grep -c '^\.visible \.entry' "$ptx" || true)
    ptxas_s=$(seconds "$ptxas" -arch="$sm" "$ptx" -o "$work/$family.cubin")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$family" "$entries" "$macro_s" "$host_s" "$device_s" "$ptxas_s"
done
