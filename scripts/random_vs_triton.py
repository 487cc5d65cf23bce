# Compares Tessera's randint/rand/randn with Triton's tl.randint/tl.rand/tl.randn on one GPU,
# bit for bit, for several seeds over offsets 0..N:
#
#   python3 scripts/random_vs_triton.py path/to/tessera-examples [N]
#
# The binary's `--random-dump SEED N OUT` writes OUT.randint.u32, OUT.rand.f32 and OUT.randn.f32
# (the tile kernel `tile_random`); the same numbers come from the Triton kernel below. Exits
# non-zero if any value differs.
import subprocess, sys, tempfile, os
import numpy as np
import torch, triton, triton.language as tl


@triton.jit
def triton_random(ints, uni, nor, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(ints + offs, tl.randint(seed, offs), m)
    tl.store(uni + offs, tl.rand(seed, offs), m)
    tl.store(nor + offs, tl.randn(seed, offs), m)


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
    bad_total = 0
    for seed in [0, 1, 42, 123456789, 2147483647]:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r")
            subprocess.run([binary, "--random-dump", str(seed), str(n), out], check=True)
            ours = {
                "randint": np.fromfile(out + ".randint.u32", dtype=np.uint32),
                "rand": np.fromfile(out + ".rand.f32", dtype=np.uint32),
                "randn": np.fromfile(out + ".randn.f32", dtype=np.uint32),
            }
        ints = torch.empty(n, dtype=torch.int32, device="cuda")
        uni = torch.empty(n, dtype=torch.float32, device="cuda")
        nor = torch.empty(n, dtype=torch.float32, device="cuda")
        triton_random[(triton.cdiv(n, 1024),)](ints, uni, nor, seed, n, BLOCK=1024)
        torch.cuda.synchronize()
        theirs = {
            "randint": ints.cpu().numpy().view(np.uint32),
            "rand": uni.cpu().numpy().view(np.uint32),
            "randn": nor.cpu().numpy().view(np.uint32),
        }
        parts = []
        for name in ["randint", "rand", "randn"]:
            differ = int((ours[name] != theirs[name]).sum())
            bad_total += differ
            parts.append(f"{name} differ {differ}")
            if differ and name == "randn":
                a = ours[name].view(np.float32).astype(np.float64)
                b = theirs[name].view(np.float32).astype(np.float64)
                parts.append(f"(max |diff|/(1+|z|) = {np.max(np.abs(a - b) / (1 + np.abs(b))):.3g})")
        print(f"seed {seed}: {n} offsets: " + ", ".join(parts))
    print("random numbers: " + ("BIT-EXACT (randint, rand, randn)" if bad_total == 0 else f"{bad_total} values differ"))
    sys.exit(0 if bad_total == 0 else 1)


if __name__ == "__main__":
    main()
