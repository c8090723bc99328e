#!/usr/bin/env python3
"""The floor of each GEMM on this GPU: the larger of its memory floor and its compute floor.

Memory floor: the time a device-to-device copy takes to move the GEMM's compulsory bytes (A and
B read once, C read once where beta reads it, D written once, every batch), at that size, with the source rotating through enough
buffers to exceed L2 (reads come from HBM, as in gemmtune's timing); a kernel reading its operands
once cannot beat it by much. Compute floor: the FLOPs at the tensor-core (or, for f32, FFMA) rate
measured here with PyTorch on a large square GEMM of the type (bf16/f16 matmul; fp8 e4m3
_scaled_mm; f32 matmul with TF32 off; xf32: f32 matmul with TF32 on). Prints one line per shape:

    shape  mem-us  compute-us  floor-us  bound

usage: scripts/floors.py SHAPE [SHAPE ...]   SHAPE = MxNxK[xBATCH][:TYPE[>f32]][+c], TYPE bf16
       (default), f16, f32, xf32 (f32 read as tf32), f8 (A and B of TYPE, D bf16 except f32 and
       xf32); >f32: D in f32 whatever A and B; +c: beta reads C (D's type)
                                                                   needs PyTorch and a GPU
"""
import statistics
import sys

import torch

BYTES = {"bf16": 2, "f16": 2, "f32": 4, "xf32": 4, "f8": 1}


def median_us(fn, reps=30):
    for _ in range(5):
        fn(0)
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(i)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def copy_us(nbytes):
    count = max(2, (1 << 30) // max(nbytes, 1))
    bufs = [torch.empty(max(nbytes // 2, 1), dtype=torch.bfloat16, device="cuda") for _ in range(count)]
    dst = torch.empty_like(bufs[0])
    us = median_us(lambda i: dst.copy_(bufs[i % count]))
    del bufs, dst
    torch.cuda.empty_cache()
    return us


def peak_tflops(t):
    n = 8192
    if t == "f8":
        a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device="cuda")
        fn = lambda i: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        dt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "xf32": torch.float32}[t]
        torch.backends.cuda.matmul.allow_tf32 = t == "xf32"
        a = torch.randn(n, n, device="cuda", dtype=dt)
        b = torch.randn(n, n, device="cuda", dtype=dt)
        fn = lambda i: torch.matmul(a, b)
    us = median_us(fn, reps=10)
    return 2 * n**3 / us / 1e6


def main():
    peaks = {}
    print(f"{'shape':>26} {'mem-us':>8} {'compute-us':>10} {'floor-us':>8}  bound")
    for spec in sys.argv[1:]:
        reads_c = spec.endswith("+c")
        dims, _, t = spec.removesuffix("+c").partition(":")
        t, _, out = t.partition(">")
        t = t or "bf16"
        d = [int(x) for x in dims.split("x")]
        m, n, k = d[:3]
        batch = d[3] if len(d) > 3 else 1
        e = BYTES[t]
        ed = 4 if t in ("f32", "xf32") or out == "f32" else 2
        nbytes = batch * (m * k * e + k * n * e + m * n * ed * (2 if reads_c else 1))
        # A copy moves nbytes twice (read and write); the GEMM moves them once.
        mem = copy_us(nbytes) / 2
        if t not in peaks:
            peaks[t] = peak_tflops(t)
        comp = 2 * m * n * k * batch / (peaks[t] * 1e6)
        floor = max(mem, comp)
        print(f"{spec:>26} {mem:8.1f} {comp:10.1f} {floor:8.1f}  {'memory' if mem >= comp else 'compute'}"
              f"  (peak {peaks[t]:.0f} TFLOP/s {t})")


if __name__ == "__main__":
    main()
