#!/usr/bin/env python3
"""PyTorch timings of the cases in bench_fusion.cpp, one JSON object per line:
{"name": "BM_<case>/<size>", "seconds": <per iteration>}. PyTorch eager for both the fused
and the unfused names (eager PyTorch runs the functions one by one); with --compile also
torch.compile's fused kernel as BM_<case>_torch_compile/<size> (needs a C++ compiler).
Usage: torch_fusion.py --threads 2 [--compile]
"""
import argparse
import json
import math
import time

import torch


def bench(name, fn, min_time=0.5):
    fn()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_time and n >= 3:
            break
    print(json.dumps({"name": name, "seconds": dt / n}), flush=True)


def gelu_custom(x):
    return x * (torch.erf(x / math.sqrt(2.0)) + 1.0) / 2.0


def softplus_scaled(x, y):
    return torch.log1p(torch.exp(x * 0.5)) * 2.0 + y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    t = args.min_time
    for n in (1 << 24, 1 << 16, 1 << 10):
        x = torch.rand(n) * 8 - 4
        for name in ("BM_gelu_custom", "BM_gelu_custom_unfused"):
            bench(f"{name}/{n}", lambda: gelu_custom(x), t)
        if args.compile:
            g = torch.compile(gelu_custom)
            bench(f"BM_gelu_custom_torch_compile/{n}", lambda: g(x), t)
    n = 1 << 24
    x, y = torch.rand(n) * 8 - 4, torch.rand(n) * 8 - 4
    for name in ("BM_softplus_scaled", "BM_softplus_scaled_unfused"):
        bench(f"{name}/{n}", lambda: softplus_scaled(x, y), t)
    if args.compile:
        s = torch.compile(softplus_scaled)
        bench(f"BM_softplus_scaled_torch_compile/{n}", lambda: s(x, y), t)


if __name__ == "__main__":
    main()
