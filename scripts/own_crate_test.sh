#!/usr/bin/env bash
# Builds the README's "In your own crate" recipe outside the workspace and runs it on the
# emulator, with stable Rust as the crate's default toolchain (its rust-toolchain.toml).
#
# The files are the README's code blocks whose info string names a path under my-app/ (e.g.
# ```rust my-app/src/main.rs), written as they are, except that `version = "0.1"` of the
# tessera-gpu dependencies becomes `path = "<checkout>/dsl"` (the crates are not published).
# The crate goes to a fresh temporary directory (removed afterwards); its target directory is
# target/own-crate of the checkout (OWN_CRATE_TARGET_DIR overrides), reused between runs, so a
# second run rebuilds only the two small crates. The workspace's Cargo.lock is copied in, so
# the dependencies resolve to the versions the workspace builds with.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${OWN_CRATE_TARGET_DIR:-$ROOT/target/own-crate}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tessera-own-crate.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

python3 - "$ROOT/README.md" "$WORK" "$ROOT/dsl" <<'PY'
import pathlib, re, sys
readme, work, dsl = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
text = open(readme, encoding="utf-8").read()
section = text.split("## In your own crate", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"^```\w+ (my-app/\S+)\n(.*?)^```$", section, re.S | re.M)
if not blocks:
    sys.exit("README.md: no my-app/... code blocks under '## In your own crate'")
want = {"my-app/rust-toolchain.toml", "my-app/Cargo.toml", "my-app/build.rs",
        "my-app/src/main.rs", "my-app/my-kernels/Cargo.toml", "my-app/my-kernels/src/lib.rs"}
missing = want - {path for path, _ in blocks}
if missing:
    sys.exit(f"README.md: the recipe lacks {sorted(missing)}")
for path, body in blocks:
    published = 'package = "tessera-gpu", version = "0.1"'
    body = body.replace(published, f'package = "tessera-gpu", path = "{dsl}"')
    if "tessera-gpu" in body and dsl not in body:
        sys.exit(f"README.md: {path} names tessera-gpu otherwise than `{published}`")
    out = work / path
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    print(f"  {path}")
PY
cp "$ROOT/Cargo.lock" "$WORK/my-app/Cargo.lock"

cd "$WORK/my-app"
# The crate's own rust-toolchain.toml decides (stable), not an inherited override.
unset RUSTUP_TOOLCHAIN RUSTC CARGO
echo "host toolchain of my-app: $(rustc --version)"
[[ "$(rustc --version)" != *nightly* ]] || { echo "my-app is not on stable" >&2; exit 1; }
CARGO_TARGET_DIR="$TARGET_DIR" TESSERA_DEVICE=emulator cargo run --release 2>&1 | tee "$WORK/run.log"
grep -q '^add_vectors on .*: 5000 elements, 0 wrong$' "$WORK/run.log" \
    || { echo "own crate: the program did not report 0 wrong sums" >&2; exit 1; }
echo "own crate: ok (stable host build, PTX from the build helper, run on the emulator)"
