#!/usr/bin/env bash
# Builds tessera-kernels for AMD GPUs (amdgcn-amd-amdhsa) and checks the ISA of its kernels.
#
#   scripts/check_amdgcn.sh [gfx942 gfx90a ...]     (default: gfx942 gfx90a)
#
# For each target CPU: `cargo rustc --crate-type cdylib` of the kernels crate with the
# repository's nightly (rust-toolchain.toml), `-Zbuild-std=core`, `--emit=asm,link`, in one
# target dir for all CPUs (target/amdgcn/build: the host side, proc macros and build scripts,
# is built once), its outputs copied to target/amdgcn/<cpu>/tessera_kernels.{s,elf}. The link
# output is the HSA code object (ELF, machine AMDGPU) that hipModuleLoadData loads; the asm is
# its ISA. Checks, per kernel: 128-bit global accesses in `copy` and `vec_add`
# (global_load_dwordx4 / global_store_dwordx4), `ds_bpermute_b32` in `row_sum` (its warp
# shuffles), and no scratch memory in any kernel (private segment size 0, no flat scratch);
# in the code object, a kernel descriptor `<name>.kd` per kernel.
# No AMD GPU is needed (nor used): this is what CI can check of the AMD build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CPUS=("$@")
[[ ${#CPUS[@]} -gt 0 ]] || CPUS=(gfx942 gfx90a)
KERNELS=(copy vec_add row_sum)
fail=0

# The asm text of kernel $2 in file $1: from its label to its .size directive.
kernel_asm() { sed -n "/^$2:/,/^\.Lfunc_end[0-9]*:/p" "$1"; }

build="$ROOT/target/amdgcn/build"
for cpu in "${CPUS[@]}"; do
    dir="$ROOT/target/amdgcn/$cpu"
    echo "== amdgcn-amd-amdhsa, -Ctarget-cpu=$cpu (outputs in target/amdgcn/$cpu)"
    built="$build/amdgcn-amd-amdhsa/release/deps"
    (cd kernels && CARGO_TARGET_DIR="$build" cargo rustc --release --crate-type cdylib \
        -Zbuild-std=core --target amdgcn-amd-amdhsa \
        --config "target.amdgcn-amd-amdhsa.rustflags=[\"-Ctarget-cpu=$cpu\"]" \
        -- --emit=asm,link)
    mkdir -p "$dir"
    asm="$dir/tessera_kernels.s"
    elf="$dir/tessera_kernels.elf"
    for f in "$asm" "$elf"; do
        [[ -f $built/$(basename "$f") ]] || { echo "missing build output: $built/$(basename "$f")" >&2; exit 1; }
        cp "$built/$(basename "$f")" "$f"
    done
    # ELF header: class 64-bit, e_machine (bytes 18-19, little endian) 0xe0 = EM_AMDGPU.
    machine="$(od -An -tx1 -j18 -N2 "$elf" | tr -d ' \n')"
    [[ $machine == e000 ]] || { echo "FAIL $cpu: $elf has e_machine $machine, not e000 (AMDGPU)" >&2; fail=1; }
    grep -q "\.amdgcn_target \"amdgcn-amd-amdhsa--$cpu" "$asm" \
        || { echo "FAIL $cpu: the asm is not for $cpu: $(grep -m1 amdgcn_target "$asm")" >&2; fail=1; }
    check() { # kernel, pattern, what
        if kernel_asm "$asm" "$1" | grep -qE "$2"; then
            echo "ok   $cpu $1: $3"
        else
            echo "FAIL $cpu $1: no $3 ($2)" >&2; fail=1
        fi
    }
    for k in "${KERNELS[@]}"; do
        kernel_asm "$asm" "$k" | grep -q . || { echo "FAIL $cpu: no kernel $k in $asm" >&2; fail=1; continue; }
        grep -qE "^\s+\.amdhsa_kernel $k$" "$asm" || { echo "FAIL $cpu: no kernel descriptor for $k" >&2; fail=1; }
        sed -n "/\.amdhsa_kernel $k$/,/\.end_amdhsa_kernel/p" "$asm" \
            | grep -qE "\.amdhsa_private_segment_fixed_size 0$" \
            && echo "ok   $cpu $k: no scratch (private segment 0)" \
            || { echo "FAIL $cpu $k: uses scratch memory" >&2; fail=1; }
        grep -qE "^\s*\.set $k\.uses_flat_scratch, 0$" "$asm" \
            || { echo "FAIL $cpu $k: uses flat scratch" >&2; fail=1; }
    done
    check copy "global_load_dwordx4" "128-bit loads"
    check copy "global_store_dwordx4" "128-bit stores"
    check vec_add "global_load_dwordx4" "128-bit loads"
    check vec_add "global_store_dwordx4" "128-bit stores"
    check row_sum "ds_bpermute_b32" "cross-lane moves (ds_bpermute)"
    # The code object's symbol table has each kernel's descriptor, `<name>.kd`.
    for k in "${KERNELS[@]}"; do
        grep -aq "$k\.kd" "$elf" && echo "ok   $cpu $k: kernel descriptor $k.kd in the code object" \
            || { echo "FAIL $cpu $k: no $k.kd in $elf" >&2; fail=1; }
    done
done
[[ $fail == 0 ]] && echo "amdgcn checks: OK (${CPUS[*]})" || { echo "amdgcn checks: FAILED" >&2; exit 1; }
