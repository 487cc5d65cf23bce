#!/usr/bin/env bash
# Tests check_sass.sh's spill check on a PTX of two entries: `fits_registers` (two values live)
# and `spills_registers` (40 volatile loads live at once under `.maxnreg 16`, which ptxas must
# spill). check_sass.sh must fail, naming `spills_registers` with its spilled bytes and not
# naming `fits_registers`.
# Usage: scripts/check_sass_spills_test.sh (ptxas and cuobjdump as for check_sass.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

{
    printf '.version 8.0\n.target sm_90a\n.address_size 64\n\n'
    printf '.visible .entry fits_registers(.param .u64 p)\n{\n'
    printf '  .reg .b64 %%rd<2>;\n  .reg .f32 %%f<2>;\n  ld.param.u64 %%rd1, [p];\n'
    printf '  ld.global.f32 %%f1, [%%rd1];\n  st.global.f32 [%%rd1+4], %%f1;\n  ret;\n}\n\n'
    printf '.visible .entry spills_registers(.param .u64 p)\n.maxnreg 16\n{\n'
    printf '  .reg .b64 %%rd<2>;\n  .reg .f32 %%f<40>;\n  ld.param.u64 %%rd1, [p];\n'
    for i in $(seq 0 39); do
        printf '  ld.volatile.global.f32 %%f%d, [%%rd1+%d];\n' "$i" $((4 * i))
    done
    for i in $(seq 39 -1 0); do
        printf '  st.volatile.global.f32 [%%rd1+%d], %%f%d;\n' $((4 * i + 1024)) "$i"
    done
    printf '  ret;\n}\n'
} >"$work/spills.ptx"

status=0
bash "$here/check_sass.sh" "$work/spills.ptx" >"$work/out.log" 2>&1 || status=$?
fail() {
    echo "check_sass_spills_test: FAIL: $*" >&2
    cat "$work/out.log" >&2
    exit 1
}
[[ $status -eq 1 ]] || fail "check_sass.sh exited $status (want 1)"
grep -Eq "FAIL: kernel spills_registers spills [1-9][0-9]* bytes \(stores\) / [1-9][0-9]* bytes \(loads\) on sm_90a" "$work/out.log" \
    || fail "the spilling entry spills_registers is not named"
if grep -q "kernel fits_registers spills" "$work/out.log"; then
    fail "fits_registers is reported as spilling"
fi
echo "check_sass_spills_test: OK (spills_registers named, fits_registers not)"
