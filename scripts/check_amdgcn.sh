#!/usr/bin/env bash
# Builds tessera-kernels for AMD GPUs (amdgcn-amd-amdhsa) and checks the ISA of its kernels.
#
#   scripts/check_amdgcn.sh [gfx942 gfx90a ...]     (default: gfx942 gfx90a)
#
# The build is the build helper's (`tessera::build::CodeObjectBuild`), run by the build script of
# tessera-kernels-ptx: `TESSERA_AMDGPU=<cpus> TESSERA_AMDGPU_ASM=<first cpu> TESSERA_NO_PTX=1
# cargo build --release -p tessera-kernels-ptx` builds, the processors at once in
# target/tessera-amdgpu/<cpu>, the kernels crate as a `cdylib` for amdgcn-amd-amdhsa
# (`-Ctarget-cpu=<cpu> -Zmerge-functions=disabled`, fat LTO, `--emit=link`, and
# `--emit=asm,link` for the first CPU: the asm costs a second run of LLVM's code generation) and
# leaves `<cpu>.hsaco` (the HSA code object hipModuleLoadData loads) and the first CPU's
# `<cpu>.s` (its ISA) in the build script's OUT_DIR, copied here to
# target/amdgcn/<cpu>/tessera_kernels.{elf,s}. The code object holds the hand-written `copy`,
# `vec_add` and `row_sum` and every `#[tile_kernel]` variant without an NVIDIA-only instruction
# (the tile families, dots by `v_mfma`; README, "AMD GPUs"), each distinct amdgpu body once
# (a variant whose body equals another's runs that kernel: `Kernel::amdgpu_entry`).
# `-Zmerge-functions=disabled`: LLVM would otherwise make a kernel whose code equals another's
# an alias of it (`.set`), without a kernel descriptor of its own, which hipModuleGetFunction
# could not find.
#
# Checks, per CPU, on the code object: its kernels are its kernel descriptors `<name>.kd`
# (scripts/code_object_kernels.py reads them), the same on every CPU; no kernel uses scratch
# memory (private segment 0, no flat scratch, no dynamic stack) but those listed in
# KNOWN_SCRATCH (reported, and in the README); the kernels in REQUIRED are there. On the asm of
# the first CPU: its kernels are the code object's and none is an alias, and the ISA of a few:
# 128-bit global accesses (global_load_dwordx4 / global_store_dwordx4) in `copy`,
# `vec_add`, `tile_vec_add` and the softmax, `ds_bpermute_b32` (warp shuffles) in `row_sum`,
# the softmax, the layernorm and a scan, LDS stores and loads around `s_barrier` in
# `tile_transpose` and in the bodies planned for AMD where NVIDIA reads by `ldmatrix` (a warp's
# f16 transpose, the aligned histogram), `v_mfma` in the matmul and attention bodies (and LDS
# loads of the matmul's operands), atomic adds and compare-and-swaps in the histograms and
# `tickets`.
# No AMD GPU is needed (nor used): this is what CI can check of the AMD build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CPUS=("$@")
[[ ${#CPUS[@]} -gt 0 ]] || CPUS=(gfx942 gfx90a)
REQUIRED=(copy vec_add row_sum tile_vec_add tile_transpose bench_softmax_w4__T_f32__BLOCK_1024
    bench_layernorm_w4__BLOCK_1024 tile_cumsum_blocks__T_f32__BLOCK_1024__num_warps_4
    histogram__BLOCK_32 histogram_f16__unaligned tickets transpose32
    tile_transpose_warp__T_f16__B_32 histogram__BLOCK_256 histogram_f16 take_numbers__BLOCK_256
    tile_row_sum tile_col_argmax collatz_steps__BLOCK_128__num_warps_4 row_loss
    tile_matmul__T_f16__BM_64__BN_64__BK_32__num_stages_1
    tile_matmul__T_bf16__BM_64__BN_64__BK_32__num_stages_1
    tile_attention_d64__T_f16__BM_128__BN_64__D_64__CAUSAL_1__num_warps_4__num_stages_1
    tile_attention_d128_w8__T_bf16__BM_128__BN_64__D_128__CAUSAL_0__num_stages_1)
# Kernels that use scratch on amdgpu today: the gathers (registers indexed by a runtime value),
# the one-warp scans of 1024 elements (their registers spill), `tile_math`/`tile_random` (a small
# table) and the widest layernorm's unaligned variant. And the dots whose tiles need more than
# 128 registers per lane (the attention kernels, the matmuls of 64×128 tiles and above): rustc
# cannot set `amdgpu-flat-work-group-size` on a kernel, so LLVM budgets every kernel for
# workgroups of 1024 threads, which on gfx90a/gfx942 is 128 VGPRs + AGPRs per lane, and they
# spill (a launch bound would give them 512 at 256 threads).
KNOWN_SCRATCH='^(bench_gather__T_(f16|f32)__N_[0-9]+(__unaligned)?|bench_layernorm_w8__BLOCK_8192__unaligned|tile_(math|random)(__unaligned)?|tile_cumsum_(blocks|cols)__.*__num_warps_1(__unaligned)?|(bench_matmul_(w4|w8|w8_wide|pipelined)|tuned_matmul|tile_attention_d(64|128_w4|128_w8))__.*)$'
fail=0

# The asm text of kernel $2 in file $1: from its label to its .size directive.
kernel_asm() { sed -n "/^$2:/,/^\.Lfunc_end[0-9]*:/p" "$1"; }

# The build helper's code objects, for every CPU in one build; the asm (the ISA) of the first.
messages="$ROOT/target/amdgcn/build-messages.json"
mkdir -p "$ROOT/target/amdgcn"
ASM_CPU="${CPUS[0]}"
echo "== TESSERA_AMDGPU=$(IFS=,; echo "${CPUS[*]}") TESSERA_AMDGPU_ASM=$ASM_CPU TESSERA_NO_PTX=1 cargo build --release -p tessera-kernels-ptx"
TESSERA_AMDGPU="$(IFS=,; echo "${CPUS[*]}")" TESSERA_AMDGPU_ASM="$ASM_CPU" TESSERA_NO_PTX=1 \
    cargo build --release -p tessera-kernels-ptx --message-format=json-render-diagnostics > "$messages"
out_dir="$(python3 scripts/build_script_out_dir.py "$messages" tessera-kernels-ptx)"
first_kernels=""
for cpu in "${CPUS[@]}"; do
    dir="$ROOT/target/amdgcn/$cpu"
    echo "== amdgcn-amd-amdhsa, -Ctarget-cpu=$cpu (outputs in target/amdgcn/$cpu)"
    mkdir -p "$dir"
    asm="$dir/tessera_kernels.s"
    elf="$dir/tessera_kernels.elf"
    rm -f "$asm"
    built="$out_dir/tessera_kernels/$cpu.hsaco"
    [[ -f $built ]] || { echo "missing build output: $built" >&2; exit 1; }
    cp "$built" "$elf"
    if [[ $cpu == "$ASM_CPU" ]]; then
        [[ -f ${built%.hsaco}.s ]] || { echo "missing build output: ${built%.hsaco}.s" >&2; exit 1; }
        cp "${built%.hsaco}.s" "$asm"
    fi
    # ELF header: class 64-bit, e_machine (bytes 18-19, little endian) 0xe0 = EM_AMDGPU.
    machine="$(od -An -tx1 -j18 -N2 "$elf" | tr -d ' \n')"
    [[ $machine == e000 ]] || { echo "FAIL $cpu: $elf has e_machine $machine, not e000 (AMDGPU)" >&2; fail=1; }
    grep -aq "amdgcn-amd-amdhsa--$cpu" "$elf" \
        || { echo "FAIL $cpu: the code object is not for $cpu" >&2; fail=1; }
    # The kernels: the descriptors `<name>.kd` of the code object, each with its scratch use
    # (scripts/code_object_kernels.py: private segment size, then the private-segment,
    # flat-scratch and dynamic-stack flags).
    descriptors="$(python3 scripts/code_object_kernels.py "$elf")"
    kernel_list="$(cut -d' ' -f1 <<<"$descriptors")"
    mapfile -t kernels <<<"$kernel_list"
    echo "     $cpu: ${#kernels[@]} kernels in the code object"
    for k in "${REQUIRED[@]}"; do
        grep -qx "$k" <<<"$kernel_list" || { echo "FAIL $cpu: no kernel $k in $elf" >&2; fail=1; }
    done
    # Every processor has the same kernels (the same source, built for each).
    if [[ -z $first_kernels ]]; then
        first_kernels="$kernel_list"
    elif [[ "$kernel_list" != "$first_kernels" ]]; then
        echo "FAIL $cpu: its kernels differ from ${CPUS[0]}'s:" >&2
        diff <(echo "$first_kernels") <(echo "$kernel_list") | head -n 20 >&2 || true
        fail=1
    fi
    clean=0 known=()
    while read -r k scratch private flat dynamic; do
        if [[ $scratch != 0 || $private != 0 || $flat != 0 || $dynamic != 0 ]]; then
            if [[ $k =~ $KNOWN_SCRATCH ]]; then
                known+=("$k ($scratch B)")
            else
                echo "FAIL $cpu $k: uses scratch memory ($scratch bytes of private segment)" >&2; fail=1
            fi
        else
            clean=$((clean + 1))
        fi
    done <<<"$descriptors"
    echo "ok   $cpu: $clean kernels without scratch memory"
    [[ ${#known[@]} == 0 ]] || echo "note $cpu: ${#known[@]} kernels use scratch (known, README): ${known[*]}"
    [[ -f $asm ]] || { echo "     $cpu: no asm asked for (TESSERA_AMDGPU_ASM=$ASM_CPU): the ISA is checked on $ASM_CPU"; continue; }
    grep -q "\.amdgcn_target \"amdgcn-amd-amdhsa--$cpu" "$asm" \
        || { echo "FAIL $cpu: the asm is not for $cpu: $(grep -m1 amdgcn_target "$asm")" >&2; fail=1; }
    if grep -qE '^\.set [A-Za-z0-9_]+, [A-Za-z0-9_]+$' "$asm"; then
        echo "FAIL $cpu: aliased functions (merged by LLVM): $(grep -cE '^\.set [A-Za-z0-9_]+, [A-Za-z0-9_]+$' "$asm")" >&2; fail=1
    fi
    # The asm's kernels are the code object's, each with its descriptor.
    asm_kernels="$(sed -n 's/^[[:space:]]*\.amdhsa_kernel \([A-Za-z0-9_]*\)$/\1/p' "$asm" | sort)"
    if [[ "$asm_kernels" != "$kernel_list" ]]; then
        echo "FAIL $cpu: the asm's kernels are not the code object's descriptors:" >&2
        diff <(echo "$asm_kernels") <(echo "$kernel_list") | head -n 20 >&2 || true
        fail=1
    else
        echo "ok   $cpu: a kernel descriptor <name>.kd in the code object for each of the asm's ${#kernels[@]} kernels"
    fi
    check() { # kernel, pattern, what
        # `grep` reads to the end (no `-q`): under pipefail an early exit would fail `sed`.
        if kernel_asm "$asm" "$1" | grep -E "$2" >/dev/null; then
            echo "ok   $cpu $1: $3"
        else
            echo "FAIL $cpu $1: no $3 ($2)" >&2; fail=1
        fi
    }
    for k in copy vec_add tile_vec_add bench_softmax_w4__T_f32__BLOCK_1024; do
        check "$k" "global_load_dwordx4" "128-bit loads"
        check "$k" "global_store_dwordx4" "128-bit stores"
    done
    for k in row_sum bench_softmax_w4__T_f32__BLOCK_1024 bench_layernorm_w4__BLOCK_1024 \
        tile_cumsum_blocks__T_f32__BLOCK_1024__num_warps_4; do
        check "$k" "ds_bpermute_b32" "cross-lane moves (ds_bpermute)"
    done
    check tile_transpose "ds_write_b" "LDS stores (the conversion through shared memory)"
    check tile_transpose "ds_read_b" "LDS loads"
    check tile_transpose "s_barrier" "the block barrier"
    for k in tile_transpose_warp__T_f16__B_32 histogram__BLOCK_256; do
        check "$k" "ds_write" "LDS stores (the conversion planned for AMD)"
        check "$k" "ds_read" "LDS loads (ds_read*, where NVIDIA reads by ldmatrix)"
    done
    check tile_matmul__T_f16__BM_64__BN_64__BK_32__num_stages_1 "v_mfma_f32_32x32x8_?f16" \
        "the dot's MFMA (f16)"
    check tile_matmul__T_f16__BM_64__BN_64__BK_32__num_stages_1 "ds_read" \
        "LDS loads of the dot's operands"
    check tile_matmul__T_bf16__BM_64__BN_64__BK_32__num_stages_1 "v_mfma_f32_32x32x8_?bf16" \
        "the dot's MFMA (bf16)"
    check tile_attention_d64__T_f16__BM_128__BN_64__D_64__CAUSAL_1__num_warps_4__num_stages_1 \
        "v_mfma_f32_32x32x8_?f16" "both dots' MFMA"
    check tile_attention_d128_w8__T_bf16__BM_128__BN_64__D_128__CAUSAL_0__num_stages_1 \
        "v_mfma_f32_32x32x8_?bf16" "both dots' MFMA"
    check histogram__BLOCK_32 "(global|flat)_atomic_add " "atomic adds"
    check histogram_f16__unaligned "(global|flat)_atomic_cmpswap " "the f16 add's compare-and-swap loop"
    check tickets "(global|flat)_atomic_(cmpswap|swap)" "compare-and-swap and exchange"
done
[[ $fail == 0 ]] && echo "amdgcn checks: OK (${CPUS[*]})" || { echo "amdgcn checks: FAILED" >&2; exit 1; }
