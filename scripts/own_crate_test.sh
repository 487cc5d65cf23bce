#!/usr/bin/env bash
# Builds the guide's first tutorial, a user's own crate (docs/guide/my-app: a kernel crate and a
# host program), outside the workspace and runs it on the emulator, with stable Rust as the
# crate's default toolchain (its rust-toolchain.toml).
#
# The files are those of docs/guide/my-app, written as they are, except that `version = "0.1"`
# of the tessera-gpu dependencies becomes `path = "<checkout>/dsl"` (the crates are not
# published). The README's "In your own crate" recipe shows the same files (its code blocks
# whose info string names a path under my-app/, e.g. ```rust my-app/src/main.rs): the script
# first checks that each of them equals the guide's file, so the two cannot drift apart.
# The crate goes to a fresh temporary directory (removed afterwards); its target directory is
# target/own-crate of the checkout (OWN_CRATE_TARGET_DIR overrides), reused between runs, so a
# second run rebuilds only the two small crates; its PTX build shares the workspace's nested
# target directory (below). The workspace's Cargo.lock is copied in, so
# the dependencies resolve to the versions the workspace builds with.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${OWN_CRATE_TARGET_DIR:-$ROOT/target/own-crate}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tessera-own-crate.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

python3 - "$ROOT/README.md" "$ROOT/docs/guide/my-app" "$WORK" "$ROOT/dsl" <<'PY'
import pathlib, re, sys
readme, guide, work, dsl = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), sys.argv[4]
files = ["rust-toolchain.toml", "Cargo.toml", "build.rs", "src/main.rs",
         "my-kernels/Cargo.toml", "my-kernels/src/lib.rs"]
text = open(readme, encoding="utf-8").read()
section = text.split("## In your own crate", 1)[1].split("\n## ", 1)[0]
blocks = dict(re.findall(r"^```\w+ (my-app/\S+)\n(.*?)^```$", section, re.S | re.M))
want = {f"my-app/{name}" for name in files}
if set(blocks) != want:
    sys.exit(f"README.md: the recipe's files are {sorted(blocks)}, the guide's {sorted(want)}")
for name in files:
    body = (guide / name).read_text(encoding="utf-8")
    if blocks[f"my-app/{name}"] != body:
        sys.exit(f"README.md: the block my-app/{name} differs from docs/guide/my-app/{name}")
    published = 'package = "tessera-gpu", version = "0.1"'
    body = body.replace(published, f'package = "tessera-gpu", path = "{dsl}"')
    if "tessera-gpu" in body and dsl not in body:
        sys.exit(f"docs/guide/my-app/{name} names tessera-gpu otherwise than `{published}`")
    out = work / "my-app" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    print(f"  my-app/{name}")
PY
cp "$ROOT/Cargo.lock" "$WORK/my-app/Cargo.lock"

cd "$WORK/my-app"
# The crate's own rust-toolchain.toml decides (stable), not an inherited override.
unset RUSTUP_TOOLCHAIN RUSTC CARGO
echo "host toolchain of my-app: $(rustc --version)"
[[ "$(rustc --version)" != *nightly* ]] || { echo "my-app is not on stable" >&2; exit 1; }
# One PTX target is enough to show the recipe builds its device code (the default is sm_80 and
# sm_90a; each target compiles `core` for nvptx64 once more). The nested device build goes to
# the workspace's (TESSERA_PTX_TARGET_DIR, target/tessera-ptx, which scripts/test's device build
# filled): `core`, the macro and tessera's device side are compiled there already, for the same
# toolchain and flags, and only my-kernels is new.
CARGO_TARGET_DIR="$TARGET_DIR" TESSERA_SM="${TESSERA_SM:-sm_80}" \
    TESSERA_PTX_TARGET_DIR="${TESSERA_PTX_TARGET_DIR:-$ROOT/target/tessera-ptx}" \
    TESSERA_DEVICE=emulator cargo run --release 2>&1 | tee "$WORK/run.log"
grep -q '^add_vectors on .*: 5000 elements, 0 wrong$' "$WORK/run.log" \
    || { echo "own crate: the program did not report 0 wrong sums" >&2; exit 1; }
echo "own crate: ok (the guide's first tutorial; stable host build, PTX from the build helper, run on the emulator)"
