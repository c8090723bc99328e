#!/usr/bin/env python3
"""Streaming floor of the suite's skinny shapes: how fast this GPU moves each shape's operand bytes.

For every shape M x N x K (bf16) it times a device-to-device copy of A and B's bytes
(M + N) * K * 2 at that size, with the source rotating through enough buffers to exceed L2 (so
reads come from HBM, as in gemmtune's timing), median of 30 launches. The copy's rate at that size
(bytes read + written per second) bounds how fast any kernel can read those bytes once: at
35-50 MB a copy does not reach the large-size bandwidth, launch and ramp-up cost too much. The last
columns are the time to read A and B once at that rate and, given a vendor time (--vendor shape=us),
the most a kernel streaming at copy speed could gain over it.

usage: scripts/stream-floor.py [--vendor 4096x128x4096=16.6 ...] [SHAPE ...]   (needs PyTorch + GPU)
"""
import argparse
import statistics

import torch

SKINNY = ("16032x109x16384 16032x113x16384 6144x64x4096 4096x128x4096 28672x32x4096 4096x128x14336 "
          "10240x128x8192 8192x64x8192 57344x16x8192 8192x256x28672 37888x64x3584 3584x64x18944 "
          "128256x32x4096").split()


def median_us(fn, bufs, reps=30):
    for i in range(5):
        fn(bufs[i % len(bufs)])
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(bufs[i % len(bufs)])
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="*", default=SKINNY)
    ap.add_argument("--vendor", action="append", default=[], help="SHAPE=US, a vendor time to compare")
    a = ap.parse_args()
    vendor = dict(v.split("=") for v in a.vendor)
    print(f"{'shape':>18} {'A+B MB':>8} {'copy us':>8} {'copy GB/s':>9} {'read-once us':>12} {'vendor us':>9} {'max gain':>8}")
    for shape in a.shapes:
        m, n, k = (int(x) for x in shape.split("x"))
        nbytes = (m + n) * k * 2
        count = max(2, (1 << 30) // nbytes)
        bufs = [torch.empty(nbytes // 2, dtype=torch.bfloat16, device="cuda") for _ in range(count)]
        dst = torch.empty_like(bufs[0])
        copy = median_us(lambda b: dst.copy_(b), bufs)
        rate = 2 * nbytes / copy / 1e3  # GB/s, read + written
        read_once = nbytes / rate / 1e3
        v = float(vendor[shape]) if shape in vendor else None
        gain = f"{v / read_once:7.2f}x" if v else "-"
        print(f"{shape:>18} {nbytes / 1e6:8.1f} {copy:8.1f} {rate:9.0f} {read_once:12.1f} "
              f"{v if v else '-':>9} {gain:>8}")
        del bufs, dst
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
