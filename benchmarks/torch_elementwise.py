#!/usr/bin/env python3
"""PyTorch timings of the cases in bench_elementwise.cpp, one JSON object per line:
{"name": "BM_<op>/<size>", "seconds": <per iteration>}. Usage: torch_elementwise.py --threads 2
"""
import argparse
import json
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=0.5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    n = 16777216
    x, y, z = (torch.rand(n) * 8 - 4 for _ in range(3))
    xl = torch.rand(n) * 100 + 0.01
    m, b = torch.rand(4096, 4096), torch.rand(1, 4096)
    s1, s2 = torch.rand(2048, 2048), torch.rand(2048, 2048)
    small = torch.rand(1024)
    t = args.min_time
    bench("BM_exp/16777216", lambda: torch.exp(x), t)
    bench("BM_log/16777216", lambda: torch.log(xl), t)
    bench("BM_tanh/16777216", lambda: torch.tanh(x), t)
    bench("BM_erf/16777216", lambda: torch.erf(x), t)
    bench("BM_add/16777216", lambda: x + y, t)
    bench("BM_add_broadcast/4096/4096", lambda: m + b, t)
    bench("BM_mul_add/16777216", lambda: x * y + z, t)
    bench("BM_add_transposed/2048", lambda: s1.t() + s2, t)
    bench("BM_unary_small/1024", lambda: torch.exp(small), t)


if __name__ == "__main__":
    main()
