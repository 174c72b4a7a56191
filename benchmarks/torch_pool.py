#!/usr/bin/env python3
"""PyTorch timings of the cases in benchmarks/bench_pool.cpp, one JSON object per line."""
import argparse
import json
import time

import torch
import torch.nn.functional as F


def bench(name, fn, min_time=0.5):
    fn()
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        el = time.perf_counter() - start
        if el >= min_time:
            break
    print(json.dumps({"name": name, "seconds": el / n}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x = torch.rand(8, 64, 56, 56)
    bench("BM_max_pool2d/56", lambda: F.max_pool2d(x, 3, 2, 1))
    bench("BM_max_pool2d_with_indices/56", lambda: F.max_pool2d(x, 3, 2, 1, return_indices=True))
    bench("BM_avg_pool2d/56", lambda: F.avg_pool2d(x, 3, 2, 1))
    xa = torch.rand(8, 512, 7, 7)
    bench("BM_adaptive_avg_pool2d/7", lambda: F.adaptive_avg_pool2d(xa, 1))
    bench("BM_interpolate_bilinear/56",
          lambda: F.interpolate(x, size=(112, 112), mode="bilinear", align_corners=False))
    bench("BM_interpolate_bicubic/56",
          lambda: F.interpolate(x, size=(112, 112), mode="bicubic", align_corners=False))
    grid = torch.rand(8, 56, 56, 2) * 2 - 1
    bench("BM_grid_sample_2d/56", lambda: F.grid_sample(x, grid, align_corners=False))


if __name__ == "__main__":
    main()
