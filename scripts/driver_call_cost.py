#!/usr/bin/env python3
# Usage (on a GPU machine): python3 scripts/driver_call_cost.py
# Host cost of driver calls a launch path may make: cuCtxGetCurrent, cuCtxSetCurrent (same
# context), and a no-op call, each timed over many calls through ctypes (the ctypes overhead is
# the no-op's figure).
import ctypes, time
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
cur = ctypes.c_void_p()
ver = ctypes.c_int()
N = 1_000_000
def t(f):
    best = 1e9
    for _ in range(3):
        s = time.perf_counter()
        for _ in range(N):
            f()
        best = min(best, (time.perf_counter() - s) / N * 1e9)
    return best
get_ver = cu.cuDriverGetVersion
get_cur = cu.cuCtxGetCurrent
set_cur = cu.cuCtxSetCurrent
p_ver, p_cur = ctypes.byref(ver), ctypes.byref(cur)
print("cuDriverGetVersion %.0f ns" % t(lambda: get_ver(p_ver)))
print("cuCtxGetCurrent    %.0f ns" % t(lambda: get_cur(p_cur)))
print("cuCtxSetCurrent    %.0f ns" % t(lambda: set_cur(ctx)))
