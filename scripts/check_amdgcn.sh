#!/usr/bin/env bash
# Builds tessera-kernels for AMD GPUs (amdgcn-amd-amdhsa) and checks the ISA of its kernels.
#
#   scripts/check_amdgcn.sh [gfx942 gfx90a ...]     (default: gfx942 gfx90a)
#
# The build is the build helper's (`tessera::build::CodeObjectBuild`), run by the build script of
# tessera-kernels-ptx: `TESSERA_AMDGPU=<cpus> TESSERA_NO_PTX=1 cargo build --profile
# amdgcn-outer -p tessera-kernels-ptx` (an unoptimised profile: only the build script matters)
# builds, the processors at once in target/tessera-amdgpu/<cpu>, the
# kernels crate as a `cdylib` for amdgcn-amd-amdhsa (`-Ctarget-cpu=<cpu>
# -Zmerge-functions=disabled`, fat LTO, `--emit=link`) and leaves `<cpu>.hsaco` (the HSA code
# object hipModuleLoadData loads) in the build script's OUT_DIR, copied here to
# target/amdgcn/<cpu>/tessera_kernels.elf. The ISA is the code object's disassembly
# (`llvm-objdump -d --mcpu=<cpu>`, from the toolchain's llvm-tools component, in
# target/amdgcn/<cpu>/tessera_kernels.dis): asking rustc for the asm too would run LLVM's code
# generation of the whole crate a second time. The code object holds the hand-written `copy`,
# `vec_add` and `row_sum` and every `#[tile_kernel]` variant without an NVIDIA-only instruction
# (the tile families, dots by `v_mfma`; README, "AMD GPUs"), each distinct amdgpu body once
# (a variant whose body equals another's runs that kernel: `Kernel::amdgpu_entry`).
# `-Zmerge-functions=disabled`: LLVM would otherwise make a kernel whose code equals another's
# an alias of it, without a kernel descriptor of its own, which hipModuleGetFunction could not
# find.
#
# Checks, per CPU, on the code object: its kernels are its kernel descriptors `<name>.kd`
# (scripts/code_object_kernels.py reads them), the same on every CPU, each with a function
# symbol of its own (none an alias of another: `code_object_kernels.py --aliases`); no kernel uses
# scratch memory (private segment 0, no flat scratch, no dynamic stack) but those listed in
# KNOWN_SCRATCH (reported, and in the README); the kernels in REQUIRED are there; the workgroup
# bound in the metadata of two tile kernels is their block size (the build helper's
# `amdgpu-flat-work-group-size`), and `copy`'s (hand-written) LLVM's default, 1024. On the
# disassembly, the ISA of a few: 128-bit global accesses (global_load_dwordx4 /
# global_store_dwordx4) in `copy`, `vec_add`, `tile_vec_add` and the softmax, butterfly shuffles
# by DPP (`quad_perm`) and `ds_swizzle_b32` in `row_sum`, the softmax, the layernorm and a scan,
# `ds_bpermute_b32` (shuffles from computed lanes) in a gather and across the two warps of a
# wave in reductions and a scan of four warps, LDS stores and loads around
# `s_barrier` in `tile_transpose` (and no barrier writing back or invalidating the L2: the
# fences of `sync_threads` at workgroup scope) and in the bodies planned for AMD where NVIDIA reads by
# `ldmatrix` (a warp's f16 transpose, the aligned histogram), `v_mfma` in the matmul and attention
# bodies (f16, bf16, i8 — gfx942's `v_mfma_i32_32x32x16_i8`, gfx90a's `v_mfma_i32_32x32x8i8` —
# and f8 widened to f16; and LDS loads of the matmul's operands), atomic adds and compare-and-swaps in the
# histograms and `tickets`.
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
    tile_matmul_i8__BM_64__BN_64__BK_32__num_stages_1
    tile_matmul_f8__T_f8e4m3__BM_64__BN_64__BK_32__num_stages_1
    tile_matmul_f8_grouped__T_f8e5m2__BM_128__BN_128__BK_128__GROUP_8
    tile_attention_d64__T_f16__BM_128__BN_64__D_64__CAUSAL_1__num_warps_4__num_stages_1
    tile_attention_d128_w8__T_bf16__BM_128__BN_64__D_128__CAUSAL_0__num_stages_1
    convert_probe shuffle_probe geometry_probe mfma_probe)
# The hand-written kernels of NVIDIA's instructions (`wgmma` and TMA, `mma.sync`, `ldmatrix`,
# `stmatrix`: kernels/src/hopper.rs, kernels/src/probes/nvidia.rs), which amdgpu builds leave
# out; every other kernel of the PTX must have AMD code.
NVIDIA_ONLY=(hopper_matmul_f16 mma_f16_tile mma_bf16_tile mma_s8_tile ldmatrix_probe stmatrix_probe)
# Kernels that use scratch on amdgpu today: the 128×256 matmul on 8 warps
# (`bench_matmul_w8_wide`: its accumulator alone is 128 registers a lane). The build helper bounds each `#[tile_kernel]` kernel's workgroup to its
# block size (`amdgpu-flat-work-group-size`, set in the LLVM module before `llc`), so LLVM budgets
# registers for it and not for 1024 threads (128 VGPRs + AGPRs a lane on gfx90a/gfx942, at which
# the dots, gathers and wide scans spilled: 74 kernels before the bound, 8 with it).
# `tile_matmul_f8_grouped` too: its tiles are Hopper's (`targets = [sm_90a]`: 128 × 128 × 128 on
# 8 warps, for `wgmma`), and on AMD each wave holds a 64 × 64 accumulator and its operands
# widened to f16 in registers (the unaligned variants, loading byte by byte, spill most).
KNOWN_SCRATCH='^(bench_matmul_w8_wide__.*|tile_matmul_f8_grouped__.*)$'
fail=0

# The disassembler: llvm-objdump of the toolchain's llvm-tools component (rust-toolchain.toml
# lists it; rustup adds it to a toolchain that lacks it).
OBJDUMP="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-objdump"
[[ -x $OBJDUMP ]] || { echo "llvm-objdump not found at $OBJDUMP: rustup component add llvm-tools" >&2; exit 2; }

# Splits the disassembly $1 into one file per function in directory $2 (`<name>.s`: from its
# label to the blank line after its code), in one pass.
split_functions() {
    rm -rf "$2" && mkdir -p "$2"
    awk -v dir="$2" '
        /^[0-9a-f]+ <[A-Za-z0-9_]+>:$/ { name = $2; gsub(/[<>:]/, "", name); out = dir "/" name ".s" }
        out != "" { print > out }
        /^$/ { if (out != "") close(out); out = "" }
    ' "$1"
}

# The build helper's code objects, for every CPU in one build (no asm: TESSERA_AMDGPU_ASM=none).
messages="$ROOT/target/amdgcn/build-messages.json"
mkdir -p "$ROOT/target/amdgcn"
echo "== TESSERA_AMDGPU=$(IFS=,; echo "${CPUS[*]}") TESSERA_AMDGPU_ASM=none TESSERA_NO_PTX=1 cargo build --profile amdgcn-outer -p tessera-kernels-ptx"
TESSERA_AMDGPU="$(IFS=,; echo "${CPUS[*]}")" TESSERA_AMDGPU_ASM=none TESSERA_NO_PTX=1 \
    cargo build --profile amdgcn-outer -p tessera-kernels-ptx \
    --message-format=json-render-diagnostics > "$messages"
out_dir="$(python3 scripts/build_script_out_dir.py "$messages" tessera-kernels-ptx)"
first_kernels=""
for cpu in "${CPUS[@]}"; do
    dir="$ROOT/target/amdgcn/$cpu"
    echo "== amdgcn-amd-amdhsa, -Ctarget-cpu=$cpu (outputs in target/amdgcn/$cpu)"
    mkdir -p "$dir"
    asm="$dir/tessera_kernels.dis"
    elf="$dir/tessera_kernels.elf"
    rm -f "$asm" "$dir/tessera_kernels.s"
    built="$out_dir/tessera_kernels/$cpu.hsaco"
    [[ -f $built ]] || { echo "missing build output: $built" >&2; exit 1; }
    cp "$built" "$elf"
    "$OBJDUMP" -d --mcpu="$cpu" "$elf" > "$asm"
    functions="$dir/functions"
    split_functions "$asm" "$functions"
    # ELF header: class 64-bit, e_machine (bytes 18-19, little endian) 0xe0 = EM_AMDGPU.
    machine="$(od -An -tx1 -j18 -N2 "$elf" | tr -d ' \n')"
    [[ $machine == e000 ]] || { echo "FAIL $cpu: $elf has e_machine $machine, not e000 (AMDGPU)" >&2; fail=1; }
    grep -aq "amdgcn-amd-amdhsa--$cpu" "$elf" \
        || { echo "FAIL $cpu: the code object is not for $cpu" >&2; fail=1; }
    # The kernels: the descriptors `<name>.kd` of the code object, each with its scratch use
    # (scripts/code_object_kernels.py: private segment size, then the private-segment,
    # flat-scratch and dynamic-stack flags).
    descriptors="$(python3 scripts/code_object_kernels.py "$elf")"
    # The workgroup bounds, from the code object's metadata (`.max_flat_workgroup_size` before
    # each kernel's `.name`): a tile kernel's is its block size, a hand-written one keeps 1024.
    bounds="$("${OBJDUMP%objdump}readobj" --notes "$elf" | python3 -c '
import re, sys
size = None
for line in sys.stdin:
    m = re.match(r"\s*\.max_flat_workgroup_size:\s*(\d+)", line)
    if m:
        size = m.group(1)
    m = re.match(r"\s*\.name:\s*(\S+)", line)
    if m and size is not None:
        print(m.group(1), size)
        size = None
')"
    for want in "tile_matmul__T_f16__BM_64__BN_64__BK_32__num_stages_1 128" \
        "tile_attention_d128_w8__T_bf16__BM_128__BN_64__D_128__CAUSAL_0__num_stages_1 256" "copy 1024"; do
        if grep -qx "$want" <<<"$bounds"; then
            echo "ok   $cpu: workgroup bound ${want/ /: }"
        else
            echo "FAIL $cpu: workgroup bound of ${want% *} is not ${want#* } ($(grep "^${want% *} " <<<"$bounds"))" >&2; fail=1
        fi
    done
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
    # Each kernel its own function (LLVM merged none into another).
    aliased="$(python3 scripts/code_object_kernels.py --aliases "$elf")"
    if [[ -n $aliased ]]; then
        echo "FAIL $cpu: kernels without a function of their own:" >&2
        head -n 20 <<<"$aliased" >&2
        fail=1
    else
        echo "ok   $cpu: each of the ${#kernels[@]} kernels has a function of its own (no alias)"
    fi
    # Each kernel's code is in the disassembly (beside the functions kernels call: core's
    # panics, say).
    missing=()
    for k in "${kernels[@]}"; do [[ -s $functions/$k.s ]] || missing+=("$k"); done
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "FAIL $cpu: no code in the disassembly for ${#missing[@]} kernels: ${missing[*]:0:10}" >&2
        fail=1
    else
        echo "ok   $cpu: the disassembly has the code of each of the ${#kernels[@]} kernels"
    fi
    check() { # kernel, pattern, what
        if [[ -f $functions/$1.s ]] && grep -qE "$2" "$functions/$1.s"; then
            echo "ok   $cpu $1: $3"
        else
            echo "FAIL $cpu $1: no $3 ($2)" >&2; fail=1
        fi
    }
    for k in copy vec_add tile_vec_add bench_softmax_w4__T_f32__BLOCK_1024; do
        check "$k" "global_load_dwordx4" "128-bit loads"
        check "$k" "global_store_dwordx4" "128-bit stores"
    done
    # Butterflies (reductions, scans) with constant masks: DPP quad_perm for masks 1 and 2,
    # ds_swizzle for the others (no address register); other shuffles by ds_bpermute.
    for k in row_sum bench_softmax_w4__T_f32__BLOCK_1024 bench_layernorm_w4__BLOCK_1024 \
        tile_cumsum_blocks__T_f32__BLOCK_1024__num_warps_4; do
        check "$k" "v_[a-z0-9_]*_dpp .*quad_perm" "butterflies by DPP (quad_perm)"
        check "$k" "ds_swizzle_b32" "butterflies by ds_swizzle"
    done
    check bench_gather__T_f32__N_32 "ds_bpermute_b32" "the gather's shuffles (ds_bpermute)"
    # Four warps are two 64-lane waves: the reductions' and the scan's step across the two warps
    # of a wave is a butterfly of the wave (ds_bpermute over 64 lanes), not LDS.
    for k in bench_softmax_w4__T_f32__BLOCK_1024 bench_layernorm_w4__BLOCK_1024 \
        tile_cumsum_blocks__T_f32__BLOCK_1024__num_warps_4; do
        check "$k" "ds_bpermute_b32" "the butterfly across a wave's two warps (ds_bpermute)"
    done
    # `sync_threads`' fences are the workgroup's (the build helper's `barrier_scope`): no
    # barrier writes back or invalidates the L2 (or gfx90a's L1) next to its `s_barrier`, as Rust's
    # system-scope fences would (`buffer_wbl2`, `buffer_inv sc1`, `buffer_invl2`, `buffer_wbinvl1`).
    unscoped="$(python3 - "$functions" <<'PY'
import pathlib, re, sys
l2 = re.compile(r"\sbuffer_(wbl2|inv|invl2|wbinvl1\w*)\b")
found, barriers = [], 0
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.s")):
    lines = f.read_text().splitlines()
    for i, line in enumerate(lines):
        if re.search(r"\ss_barrier\b", line):
            barriers += 1
            # The instructions next to the barrier, past its `s_waitcnt`s: a system-scope
            # fence's write-back before, its invalidation after (a kernel's own atomics, further
            # off, keep theirs).
            wait = lambda l: re.search(r"\ss_waitcnt\b", l)
            before = next((l for l in reversed(lines[:i]) if not wait(l)), "")
            after = next((l for l in lines[i + 1:] if not wait(l)), "")
            if (l2.search(before) or l2.search(after)) and f.stem not in found:
                found.append(f.stem)
print(barriers, *found)
PY
)"
    read -r barriers unscoped_kernels <<<"$unscoped"
    if [[ -n $unscoped_kernels ]]; then
        echo "FAIL $cpu: barriers at system scope (L2 written back or invalidated) in: $unscoped_kernels" >&2; fail=1
    else
        echo "ok   $cpu: none of the $barriers barriers writes back or invalidates a cache (workgroup-scope fences)"
    fi
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
    # i8: gfx942's K = 16 instruction; gfx90a's K = 8 one (two per planned instruction).
    i8_mfma="v_mfma_i32_32x32x16_?i8"
    [[ $cpu == gfx90a || $cpu == gfx908 ]] && i8_mfma="v_mfma_i32_32x32x8_?i8"
    check tile_matmul_i8__BM_64__BN_64__BK_32__num_stages_1 "$i8_mfma" "the dot's MFMA (i8)"
    # f8: gfx950's f8 instructions read OCP f8; elsewhere pairs of f16 ones on the widened elements.
    f8_mfma="v_mfma_f32_32x32x8_?f16" f8_what="the dot's MFMA (f8 widened to f16)"
    [[ $cpu == gfx950 ]] && f8_mfma="v_mfma_f32_32x32x16_fp8_fp8" f8_what="the dot's MFMA (OCP f8)"
    check tile_matmul_f8__T_f8e4m3__BM_64__BN_64__BK_32__num_stages_1 "$f8_mfma" "$f8_what"
    bf8_mfma="v_mfma_f32_32x32x8_?f16"
    [[ $cpu == gfx950 ]] && bf8_mfma="v_mfma_f32_32x32x16_bf8_bf8"
    check tile_matmul_f8_grouped__T_f8e5m2__BM_128__BN_128__BK_128__GROUP_8 \
        "$bf8_mfma" "the dot's MFMA (a kernel for sm_90a alone of NVIDIA's targets)"
    check tile_attention_d64__T_f16__BM_128__BN_64__D_64__CAUSAL_1__num_warps_4__num_stages_1 \
        "v_mfma_f32_32x32x8_?f16" "both dots' MFMA"
    check tile_attention_d128_w8__T_bf16__BM_128__BN_64__D_128__CAUSAL_0__num_stages_1 \
        "v_mfma_f32_32x32x8_?bf16" "both dots' MFMA"
    check histogram__BLOCK_32 "(global|flat)_atomic_add " "atomic adds"
    check histogram_f16__unaligned "(global|flat)_atomic_cmpswap " "the f16 add's compare-and-swap loop"
    check tickets "(global|flat)_atomic_(cmpswap|swap)" "compare-and-swap and exchange"
    check mfma_probe "v_mfma_f32_16x16x16_?bf16" "the probe's MFMAs (bf16 16x16x16)"
    check mfma_probe "$i8_mfma" "the probe's MFMAs (i8)"
    check shuffle_probe "ds_bpermute_b32" "the probe's shuffles (ds_bpermute)"
    # Every kernel of the PTX has AMD code (the PTX the device build step wrote to target/ptx),
    # but the hand-written ones of NVIDIA's instructions (NVIDIA_ONLY): a kernel in the code
    # object, its own or, for a variant differing from another only in `num_stages` (AMD code
    # is not pipelined), that one's (`Kernel::amdgpu_entry`).
    ptx_files=("$ROOT"/target/ptx/tessera_kernels.sm_*.ptx)
    if [[ ! -f ${ptx_files[0]} ]]; then
        echo "note $cpu: no PTX in target/ptx (scripts/test's device build writes it): the coverage of the PTX's kernels not checked"
    else
        without_amd="$(cat "${ptx_files[@]}" | python3 -c '
import re, sys
amd = set(sys.argv[1].split())
nvidia_only = set(sys.argv[2].split())
stem = lambda name: re.sub(r"__num_stages_\d+", "", name)
stems = {stem(k) for k in amd}
entries = sorted(set(re.findall(r"^\.(?:visible )?\.?entry (\w+)", sys.stdin.read(), re.M)))
print(" ".join(e for e in entries if e not in amd | nvidia_only and stem(e) not in stems))
' "$kernel_list" "${NVIDIA_ONLY[*]}")"
        if [[ -n $without_amd ]]; then
            echo "FAIL $cpu: PTX kernels without AMD code: $without_amd" >&2; fail=1
        else
            echo "ok   $cpu: every kernel of the PTX has AMD code but NVIDIA's hand-written ${NVIDIA_ONLY[*]}"
        fi
    fi
done
[[ $fail == 0 ]] && echo "amdgcn checks: OK (${CPUS[*]})" || { echo "amdgcn checks: FAILED" >&2; exit 1; }
