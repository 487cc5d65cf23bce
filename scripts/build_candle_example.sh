#!/usr/bin/env bash
# Builds examples/candle-custom-op (a Tessera kernel as a Candle `CustomOp` on Candle's CUDA
# tensors) in release, outside the workspace and outside CI: Candle's `cuda` feature compiles
# candle-kernels with nvcc and links cudarc against the CUDA libraries, and CI has neither.
#
# Usage: scripts/build_candle_example.sh TOOLKIT_DIR [COPY_TO_DIR]
#
# TOOLKIT_DIR: where a CUDA 13.0 toolkit for the build is (or, when TOOLKIT_DIR/bin/nvcc is missing,
# is assembled from PyPI wheels: `pip download` of nvcc, crt, nvvm, cccl, the runtime, nvrtc, cuRAND
# and cuBLAS; each wheel's nvidia/cu13 tree is copied into TOOLKIT_DIR). COPY_TO_DIR, if given,
# receives a copy of the binary.
#
# Why CUDA 13.0 and not the newest 13.x: Candle's kernels are loaded as PTX, and a driver loads only
# PTX of its own CUDA version or older; the GPU machines' driver is 580 (CUDA 13.0).
#
# The build needs no GPU and no driver: the linker gets a stub libcuda.so (TOOLKIT_DIR/lib/stubs),
# made here from the driver functions cudarc declares. The link names, besides libc, libcuda.so.1
# (the driver), libcudart.so.13, libnvrtc.so.13, libcublas.so.13, libcublasLt.so.13 and
# libcurand.so.10 (Candle's cudarc is built with `dynamic-linking`; candle-kernels' own static
# library uses the CUDA runtime); `ldd` on the binary tells which it keeps.
set -euo pipefail

. "$(dirname "$0")/common.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 TOOLKIT_DIR [COPY_TO_DIR]"
tk=$(absolute_dir "$1")
copy_to=${2:-}

# The wheels of CUDA 13.0 (cuRAND 10.4.0 is 13.0's), in the nvidia/cu13 layout.
wheels=(
    "nvidia-cuda-nvcc==13.0.*"
    "nvidia-cuda-crt==13.0.*"
    "nvidia-nvvm==13.0.*"
    "nvidia-cuda-cccl==13.0.*"
    "nvidia-cuda-runtime==13.0.*"
    "nvidia-cuda-nvrtc==13.0.*"
    "nvidia-curand==10.4.0.*"
    "nvidia-cublas==13.0.*"
)

assemble_toolkit() {
    echo "assembling a CUDA 13.0 toolkit from PyPI wheels in $tk"
    local dl="$tk/.wheels"
    mkdir -p "$dl"
    python3 -m pip download --no-deps --only-binary=:all: -d "$dl" "${wheels[@]}"
    local unpack
    unpack=$(mktemp -d)
    local whl
    for whl in "$dl"/*.whl; do
        rm -rf "$unpack"/*
        python3 -m zipfile -e "$whl" "$unpack"
        [ -d "$unpack/nvidia/cu13" ] || die "$whl has no nvidia/cu13 tree"
        cp -a "$unpack/nvidia/cu13/." "$tk/"
    done
    rm -rf "$unpack"
    # The unversioned names the linker looks for.
    local lib
    for lib in libcudart.so.13 libnvrtc.so.13 libcublas.so.13 libcublasLt.so.13 libcurand.so.10; do
        [ -e "$tk/lib/$lib" ] || die "$tk/lib/$lib is missing after unpacking the wheels"
        ln -sf "$lib" "$tk/lib/${lib%%.so*}.so"
    done
    chmod +x "$tk"/bin/* "$tk"/nvvm/bin/* 2>/dev/null || true
}

[ -x "$tk/bin/nvcc" ] || assemble_toolkit
"$tk/bin/nvcc" --version | grep -q "release 13\.0," ||
    die "$tk/bin/nvcc is not CUDA 13.0 (the driver on the GPU machines loads PTX up to 13.0)"

crate="$root/examples/candle-custom-op"
cd "$crate"
cargo fetch --locked

# A stub libcuda.so (soname libcuda.so.1) with every driver function cudarc declares, for the link
# only; the real driver is loaded at run time.
stub="$tk/lib/stubs/libcuda.so"
if [ ! -e "$stub" ]; then
    cudarc_dir=$(cargo metadata --format-version 1 | python3 -c '
import json, os, sys
meta = json.load(sys.stdin)
dirs = [os.path.dirname(p["manifest_path"]) for p in meta["packages"] if p["name"] == "cudarc"]
if len(dirs) != 1:
    sys.exit("expected one cudarc package, found %d" % len(dirs))
print(dirs[0])')
    mkdir -p "$tk/lib/stubs"
    src=$(mktemp --suffix=.c)
    grep -oE '^pub unsafe fn cu[A-Za-z0-9_]+\(' "$cudarc_dir/src/driver/sys/mod.rs" |
        sed -E 's/^pub unsafe fn (cu[A-Za-z0-9_]+)\(/void \1(void) {}/' | sort -u >"$src"
    [ -s "$src" ] || die "found no driver functions in $cudarc_dir/src/driver/sys/mod.rs"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub" "$src"
    rm -f "$src"
fi

# candle-kernels (cudaforge) finds nvcc through NVCC and needs the target's compute capability
# (9.0: the H100; it builds for sm_90a, so the binary runs on compute capability 9.0 only, and
# Tessera's kernels are built for sm_90a alone too, TESSERA_SM); cudarc finds the libraries under
# CUDA_PATH (lib, lib/stubs). This crate's build.rs builds the PTX of Tessera's kernels it
# embeds (the crate tessera-kernels has no device build of its own).
export PATH="$tk/bin:$PATH"
export NVCC="$tk/bin/nvcc"
export CUDA_PATH="$tk"
export CUDA_COMPUTE_CAP=90
export TESSERA_SM=sm_90a
cargo build --release --locked

target_dir=${CARGO_TARGET_DIR:-$crate/target}
bin="$target_dir/release/tessera-candle-custom-op"
[ -x "$bin" ] || die "the build did not produce $bin"
echo "built $bin"
if [ -n "$copy_to" ]; then
    mkdir -p "$copy_to"
    cp "$bin" "$copy_to/"
    echo "copied to $copy_to/tessera-candle-custom-op"
fi
