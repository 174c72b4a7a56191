#!/usr/bin/env python3
"""PyTorch side of benchmarks/bench_linalg.cpp: the same matmul cases at the same thread count.

Prints one JSON object per line: {"name": "BM_<op>/<size>", "seconds": <per iteration>,
"gflops": <GFLOP/s>}. The best of --repeats timing rounds is reported (the machine is shared).

  python3 benchmarks/torch_linalg.py --threads 2
"""
import argparse
import json
import time

import torch


def bench(fn, min_time):
    fn()  # warm-up
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= min_time:
            return t / n
        n *= 2


def cases():
    for n in (256, 1024, 2048):
        a, b = torch.rand(n, n), torch.rand(n, n)
        yield f"BM_matmul/{n}", (lambda a=a, b=b: torch.matmul(a, b)), 2.0 * n ** 3
    n = 1024
    at, b = torch.rand(n, n), torch.rand(n, n)
    yield f"BM_matmul_transposed/{n}", (lambda: torch.matmul(at.t(), b)), 2.0 * n ** 3
    bs, m, k, n = 64, 64, 64, 128  # b x m x k x n, as in bench_linalg.cpp
    a, b = torch.rand(bs, m, k), torch.rand(bs, k, n)
    yield "BM_matmul_batched/64x64x64x128", (lambda: torch.matmul(a, b)), 2.0 * bs * m * n * k


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.5)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    for name, fn, flops in cases():
        s = min(bench(fn, args.min_time) for _ in range(args.repeats))
        print(json.dumps({"name": name, "seconds": s, "gflops": flops / s / 1e9}), flush=True)


if __name__ == "__main__":
    main()
