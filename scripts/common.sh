# Sourced by the scripts that take an output directory (build_candle_example.sh,
# probe_kernels_gpu.sh): `die`, the checkout's root, and `absolute_dir`.

die() { echo "error: $*" >&2; exit 1; }

# The checkout's root (the parent of scripts/).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# absolute_dir DIR: makes DIR (and its parents) where missing and prints its absolute path.
absolute_dir() { mkdir -p "$1" && (cd "$1" && pwd); }
