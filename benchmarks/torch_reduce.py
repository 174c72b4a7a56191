#!/usr/bin/env python3
"""PyTorch timings of the cases in benchmarks/bench_reduce.cpp, one JSON object per line:
{"name": "BM_<op>/<size>", "seconds": <per iteration>}.
Usage: python3 benchmarks/torch_reduce.py [--threads 2]
"""
import argparse
import json
import time

import torch


def bench(name, fn, min_time=0.3):
    fn()  # warm-up
    iters, t = 0, 0.0
    best = float("inf")
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or iters < 3:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        t += dt
        iters += 1
    print(json.dumps({"name": name, "seconds": t / iters}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(42)
    x = torch.randn(16777216)
    bench("BM_sum/16777216", lambda: x.sum())
    m = torch.randn(4096, 4096)
    bench("BM_sum_dim_rows/4096x4096", lambda: m.sum(1, keepdim=True))
    bench("BM_sum_dim_cols/4096x4096", lambda: m.sum(0, keepdim=True))
    bench("BM_max_dim/4096x4096", lambda: m.amax(1, keepdim=True))
    bench("BM_argmax/4096x4096", lambda: m.argmax(1, keepdim=True))
    s = torch.randn(1048576)
    bench("BM_sort/1048576", lambda: torch.sort(s, stable=True))


if __name__ == "__main__":
    main()
