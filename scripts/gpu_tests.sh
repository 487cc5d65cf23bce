#!/usr/bin/env bash
# Builds the tessera-kernels test executables (release, each embedding the kernels' PTX) and packs
# them, with a runner, into a folder to carry to a GPU machine that has no Rust:
#
#   DIR/tests.tar.xz   <sm>/<test name> for each SM built (hash-free names), and MANIFEST
#   DIR/run.sh         runs every binary with TESSERA_DEVICE=gpu; exits non-zero on any failure;
#                      --memcheck / --racecheck run them under compute-sanitizer (see run.sh -h)
#
# Usage: scripts/gpu_tests.sh [--out DIR] [--sm "sm_80 sm_90"] [--profile NAME]
#   --out DIR  where to put them (default .carry/tests, which git ignores)
#   --profile  the cargo profile of the build (default release; `ci` reuses scripts/test's build)
#   --tests L  only the test binaries named in L (e.g. "tiled_matmul tiled_atomics"; default all)
#   --sm LIST  the PTX targets to build sets for (default sm_80; sm_90 adds stmatrix and the
#              hardware f8 conversions; each set is one more release build of the crate's tests,
#              about a minute). The default SM is built last, so target/ is left as a plain build.
#
# On the GPU machine:  DIR/run.sh [--memcheck] [--racecheck] [--small]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

OUT_DIR="$ROOT/.carry/tests"
SMS="sm_80"
PROFILE="release"
ONLY_TESTS=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) OUT_DIR="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
        --sm) SMS="$2"; shift 2 ;;
        --profile) PROFILE="$2"; shift 2 ;;
        --tests) ONLY_TESTS=" $2 "; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "gpu_tests.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for sm in $SMS; do
    [[ $sm =~ ^sm_[0-9]+a?$ ]] || { echo "gpu_tests.sh: '$sm' is not an SM name (sm_80, sm_90, ...)" >&2; exit 2; }
done
command -v xz >/dev/null || { echo "gpu_tests.sh: xz is needed to pack the binaries" >&2; exit 2; }

# The runner carried beside tests.tar.xz (it needs bash, tar with xz or python3, and for the
# sanitizer passes compute-sanitizer; no Rust).
write_runner() {
    cat >"$1" <<'RUNNER'
#!/usr/bin/env bash
# Runs the tessera-kernels test binaries of tests.tar.xz (beside this script) on the GPU:
# TESSERA_DEVICE=gpu, so a test fails if the GPU cannot be used; each binary prints the device
# it runs on, and every check that only the emulator can make prints a "skipped on the gpu"
# line (listed in the summary, never counted as checked).
#
# Usage: run.sh [--plain] [--memcheck] [--racecheck] [--tool TOOL]... [--small] [--sm SM]
#               [--only NAME] [--timeout SECS] [-- TEST-HARNESS ARGS]
#   --plain        a plain run (the default when no pass is named)
#   --memcheck     under compute-sanitizer --tool memcheck
#   --racecheck    under compute-sanitizer --tool racecheck
#   --tool TOOL    under compute-sanitizer --tool TOOL (initcheck, synccheck)
#   --small        TESSERA_TEST_LARGE=0: only the emulator-sized shapes (quicker sanitizer runs)
#   --sm SM        only the set built for SM (default: every set in the archive)
#   --only NAME    only the binary NAME (e.g. tiled_matmul)
#   --timeout S    kill a binary after S seconds (default 300)
#   after --:      passed to every binary (e.g. a test-name filter, --test-threads=1)
# Full logs go to $OUT (or the extraction directory) as gpu-tests-<pass>.log.
# Exit status: 0 only if every binary of every pass exits 0, runs all its listed tests (unless a
# filter was given) and, under compute-sanitizer, reports no error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
passes=()
small=0
only_sm=""
only_bin=""
timeout_s=300
harness_args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --plain) passes+=(plain); shift ;;
        --memcheck) passes+=(memcheck); shift ;;
        --racecheck) passes+=(racecheck); shift ;;
        --tool) passes+=("$2"); shift 2 ;;
        --small) small=1; shift ;;
        --sm) only_sm="$2"; shift 2 ;;
        --only) only_bin="$2"; shift 2 ;;
        --timeout) timeout_s="$2"; shift 2 ;;
        --) shift; harness_args=("$@"); break ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ ${#passes[@]} -gt 0 ]] || passes=(plain)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/tessera-gpu-tests.XXXXXX")"
if ! tar -xJf "$HERE/tests.tar.xz" -C "$WORK" 2>/dev/null; then
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
        "$HERE/tests.tar.xz" "$WORK" || { echo "run.sh: cannot unpack tests.tar.xz" >&2; exit 2; }
fi
chmod -R u+x "$WORK"
cat "$WORK/MANIFEST"

sanitizer=""
needs_sanitizer=0
for pass in "${passes[@]}"; do [[ $pass == plain ]] || needs_sanitizer=1; done
if [[ $needs_sanitizer == 1 ]]; then
    for candidate in "$(command -v compute-sanitizer 2>/dev/null)" /usr/local/cuda/bin/compute-sanitizer \
        /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer; do
        if [[ -n $candidate && -x $candidate ]]; then sanitizer="$candidate"; break; fi
    done
    [[ -n $sanitizer ]] || { echo "run.sh: compute-sanitizer not found (PATH, /usr/local/cuda*)" >&2; exit 2; }
    echo "compute-sanitizer: $sanitizer ($("$sanitizer" --version 2>/dev/null | grep -i version | head -1))"
fi

export TESSERA_DEVICE=gpu
# The driver's JIT cache keeps the compiled PTX (the same in every binary) between binaries.
export CUDA_CACHE_MAXSIZE="${CUDA_CACHE_MAXSIZE:-4294967296}"
if [[ $small == 1 ]]; then export TESSERA_TEST_LARGE=0; fi
LOG_DIR="${OUT:-$WORK}"
mkdir -p "$LOG_DIR"
command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'

sets=()
for dir in "$WORK"/sm_*; do
    sm="$(basename "$dir")"
    [[ -z $only_sm || $sm == "$only_sm" ]] && sets+=("$sm")
done
[[ ${#sets[@]} -gt 0 ]] || { echo "run.sh: no test set ${only_sm:+for $only_sm }in the archive" >&2; exit 2; }

failures=0
summary=()
totals=()
for pass in "${passes[@]}"; do
    log="$LOG_DIR/gpu-tests-$pass.log"
    : >"$log"
    echo
    if [[ $small == 1 ]]; then echo "==> pass: $pass (--small)"; else echo "==> pass: $pass"; fi
    pass_passed=0
    for sm in "${sets[@]}"; do
        for bin in "$WORK/$sm"/*; do
            name="$(basename "$bin")"
            [[ -z $only_bin || $name == "$only_bin" ]] || continue
            if [[ $pass == plain ]]; then
                cmd=("$bin" "${harness_args[@]}")
            else
                cmd=("$sanitizer" --tool "$pass" --error-exitcode 97 "$bin" "${harness_args[@]}")
            fi
            out="$WORK/$pass-$sm-$name.out"
            start=$(date +%s)
            timeout -k 10 "$timeout_s" "${cmd[@]}" >"$out" 2>&1
            rc=$?
            secs=$(($(date +%s) - start))
            { echo "### $pass $sm/$name (exit $rc, ${secs}s): ${cmd[*]}"; cat "$out"; echo; } >>"$log"
            passed=$(grep -o '^test result: [a-zA-Z]*\. [0-9]* passed' "$out" | grep -o '[0-9]*' | awk '{s+=$1} END {print s+0}')
            failed=$(grep -o '; [0-9]* failed' "$out" | grep -o '[0-9]*' | awk '{s+=$1} END {print s+0}')
            expected=$(awk -v set="set $sm:" -v n="$name" '$0 == set {inset=1; next} /^set / {inset=0} inset && $1 == n {print $2}' "$WORK/MANIFEST")
            sanitizer_line=""
            if [[ $pass != plain ]]; then
                sanitizer_line=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out" | tail -1 | sed 's/^========= //')
            fi
            status=ok
            why=""
            if [[ $rc -ne 0 ]]; then status=FAIL; why="exit $rc$([[ $rc -ge 124 && $rc -le 137 ]] && echo ' (timeout/killed?)')"; fi
            if [[ ${#harness_args[@]} -eq 0 && -n $expected && $passed -ne $expected ]]; then
                status=FAIL; why="${why:+$why; }$passed of $expected tests passed"
            fi
            if [[ $pass != plain && -z $sanitizer_line ]]; then
                status=FAIL; why="${why:+$why; }no compute-sanitizer summary"
            fi
            line=$(printf '%-4s %-10s %-6s %-22s %3s passed %2s failed %4ss  %s' "$status" "$pass" "$sm" "$name" "$passed" "$failed" "$secs" "$sanitizer_line${why:+  [$why]}")
            echo "$line"
            pass_passed=$((pass_passed + passed))
            if [[ $status != ok ]]; then
                summary+=("$line")
                failures=$((failures + 1))
                echo "---- last 40 lines of $sm/$name ($pass):"
                tail -40 "$out"
                echo "----"
            fi
        done
    done
    echo "    $pass: $pass_passed tests passed; log: $log"
    totals+=("$pass: $pass_passed tests passed")
done

echo
echo "==> device line of each binary (first one):"
grep -h '^tessera-kernels tests run on' "$WORK"/*.out 2>/dev/null | sort -u
echo "==> skipped on the GPU (not counted as checked):"
grep -h '^skipped on the' "$WORK"/*.out 2>/dev/null | sort -u | sed 's/^/    /'
echo
echo "==> summary"
printf '    %s\n' "${totals[@]}"
if [[ $failures -ne 0 ]]; then
    printf '%s\n' "${summary[@]}"
    echo "run.sh: FAILED ($failures binary runs failed)"
    exit 1
fi
echo "run.sh: all passed"
RUNNER
    chmod +x "$1"
}

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/tessera-gpu-tests.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT

# sm_80 (the default a plain `cargo test` builds) last, so the release build in target/ ends as it.
ORDERED=""
for sm in $SMS; do [[ $sm == sm_80 ]] || ORDERED="$ORDERED $sm"; done
for sm in $SMS; do [[ $sm != sm_80 ]] || ORDERED="$ORDERED $sm"; done

{
    echo "tessera-kernels GPU test binaries"
    echo "built:  $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- kernels dsl macros layout 2>/dev/null || echo ' (+ uncommitted changes in kernels/dsl/macros/layout)')"
    echo "rustc:  $(rustc --version)"
} >"$STAGE/MANIFEST"

for sm in $ORDERED; do
    echo "==> building the kernels' tests for $sm ($PROFILE)"
    start=$(date +%s)
    json="$STAGE/cargo-$sm.json"
    TESSERA_SM="$sm" cargo test -p tessera-kernels --profile "$PROFILE" --no-run --message-format=json \
        >"$json"
    # The integration tests (target kind "test"); the library's unit-test binary has no tests.
    mapfile -t exes < <(grep '"reason":"compiler-artifact"' "$json" | grep '"kind":\["test"\]' |
        grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
    [[ ${#exes[@]} -gt 0 ]] || { echo "gpu_tests.sh: cargo listed no test executables" >&2; exit 1; }
    mkdir -p "$STAGE/$sm"
    echo "set $sm:" >>"$STAGE/MANIFEST"
    for exe in "${exes[@]}"; do
        name="$(basename "$exe")"
        name="${name%-*}"
        [[ -z $ONLY_TESTS || $ONLY_TESTS == *" $name "* ]] || continue
        cp "$exe" "$STAGE/$sm/$name"
        strip "$STAGE/$sm/$name" 2>/dev/null || true
        # The test count, for the runner to check that every test ran (listing needs no GPU).
        count=$(TESSERA_DEVICE=emulator "$exe" --list 2>/dev/null | grep -c ': test$' || true)
        printf '  %-24s %3s tests\n' "$name" "$count" >>"$STAGE/MANIFEST"
    done
    echo "    ${#exes[@]} binaries in $(($(date +%s) - start)) s"
done

mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR/tests.tar.xz"
(cd "$STAGE" && tar -cf - MANIFEST $ORDERED | xz -T0 >"$OUT_DIR/tests.tar.xz")
write_runner "$OUT_DIR/run.sh"
cat "$STAGE/MANIFEST"
echo "==> $OUT_DIR: $(du -sh "$OUT_DIR/tests.tar.xz" | cut -f1) tests.tar.xz + run.sh"
echo "    on the GPU machine: ${OUT_DIR#"$ROOT"/}/run.sh [--memcheck] [--racecheck] [--small]"
