#!/usr/bin/env bash
# Prepares gen-tests/tests/probe_kernels.rs for a run on a GPU: its kernels built to PTX, and its
# test binary, both copied to OUT_DIR. On the GPU machine,
#
#   TESSERA_PROBE_PTX=OUT_DIR/probe_kernels.SM.ptx OUT_DIR/probe_kernels
#
# runs the same tests (and CPU references) as on the emulator, launching on GPU 0.
#
# Usage: scripts/probe_kernels_gpu.sh OUT_DIR [SM]   (SM: sm_90a by default; sm_80 for an A100)
#
# The kernels are the file's `#[tile_kernel]` items, copied into a scratch crate
# (target/probe-kernels/kernels); scripts/probe_kernels_builder.rs builds its PTX with
# `tessera::build::PtxBuild`, and ptxas assembles it here as a check when ptxas is found.
set -euo pipefail

. "$(dirname "$0")/common.sh"
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 OUT_DIR [SM]"
out=$(absolute_dir "$1")
sm=${2:-sm_90a}
tests="$root/gen-tests/tests/probe_kernels.rs"
crate="$root/target/probe-kernels"

# The kernels' crate, and a small host program that builds it with `tessera::build::PtxBuild` (the
# build helper of every build script here: the pinned device nightly, the device flags, the check
# of the PTX's target).
mkdir -p "$crate/kernels/src" "$crate/builder/src"
manifest() { # NAME: a package of that name depending on tessera, outside any workspace
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[dependencies]\ntessera = { package = "tessera-gpu", path = "%s" }\n\n[workspace]\n' \
        "$1" "$root/dsl"
}
manifest probe-kernels >"$crate/kernels/Cargo.toml"
manifest probe-kernels-builder >"$crate/builder/Cargo.toml"
cp "$root/scripts/probe_kernels_builder.rs" "$crate/builder/src/main.rs"
# The workspace's lock file, so the scratch crates build the same dependency versions.
cp "$root/Cargo.lock" "$crate/kernels/Cargo.lock"
cp "$root/Cargo.lock" "$crate/builder/Cargo.lock"
python3 - "$tests" "$crate/kernels/src/lib.rs" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
kernels = re.findall(r"(#\[tile_kernel[^\n]*\]\nfn .*?\n\}\n)", text, re.S)
if not kernels:
    sys.exit(f"no #[tile_kernel] items found in {sys.argv[1]}")
header = """#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![allow(unused_imports)]
use tessera::{bf16, f16, tile_kernel, Ptr};

"""
open(sys.argv[2], "w").write(header + "\n".join(k.replace("\nfn ", "\npub fn ") for k in kernels))
print(f"probe kernels: {len(kernels)} kernels from {sys.argv[1]}")
PY

ptx=$(cargo run --quiet --release --manifest-path "$crate/builder/Cargo.toml" \
    --target-dir "$crate/builder/target" -- "$crate/kernels" "$crate/ptx" "$sm")
[ -f "$ptx" ] || die "no PTX was built for $sm (the builder printed: '$ptx')"
cp "$ptx" "$out/probe_kernels.$sm.ptx"
echo "PTX: $out/probe_kernels.$sm.ptx ($(grep -c '^\.visible \.entry' "$ptx") entries)"
ptxas=$(compgen -G "$root/.venv/lib/python3*/site-packages/nvidia/cu*/bin/ptxas" | head -n 1 || true)
if [ -n "$ptxas" ]; then
    "$ptxas" -arch="$sm" "$out/probe_kernels.$sm.ptx" -o /dev/null
    echo "ptxas -arch=$sm: ok"
fi

bin=$(cd "$root" && cargo test --profile ci -p tessera-gen-tests --test probe_kernels --no-run \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "probe_kernels":
        print(msg["executable"])')
[ -x "$bin" ] || die "the probe_kernels test binary was not built"
cp "$bin" "$out/probe_kernels"
echo "test binary: $out/probe_kernels"
echo "on a GPU: TESSERA_PROBE_PTX=$out/probe_kernels.$sm.ptx $out/probe_kernels"
