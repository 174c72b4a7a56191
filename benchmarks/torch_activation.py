#!/usr/bin/env python3
"""PyTorch timings of the cases in benchmarks/bench_activation.cpp (same names).

Prints one JSON object per line: {"name": "BM_<op>/<rows>x<cols>", "seconds": <per iteration>}.
Usage: python3 benchmarks/torch_activation.py [--threads 2]
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F


def bench(fn, x, min_time=0.5):
    for _ in range(3):
        fn(x)
    n, start = 0, time.perf_counter()
    while True:
        fn(x)
        n += 1
        el = time.perf_counter() - start
        if el >= min_time and n >= 10:
            return el / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    cases = []
    for r, c in ((64, 1000), (1024, 1024)):
        cases.append((f"BM_softmax/{r}x{c}", (r, c), lambda x: F.softmax(x, -1)))
        cases.append((f"BM_log_softmax/{r}x{c}", (r, c), lambda x: F.log_softmax(x, -1)))
    cases.append(("BM_softmax_dim0/1024x1024", (1024, 1024), lambda x: F.softmax(x, 0)))
    cases.append(("BM_relu/1024x1024", (1024, 1024), F.relu))
    cases.append(("BM_sigmoid/1024x1024", (1024, 1024), torch.sigmoid))
    cases.append(("BM_gelu/1024x1024", (1024, 1024), F.gelu))
    cases.append(("BM_silu/1024x1024", (1024, 1024), F.silu))
    w, b = torch.ones(1024), torch.zeros(1024)
    cases.append(("BM_layer_norm/1024x1024", (1024, 1024), lambda x: F.layer_norm(x, (1024,), w, b)))
    with torch.inference_mode():
        for name, shape, fn in cases:
            x = torch.randn(*shape)
            print(json.dumps({"name": name, "seconds": bench(fn, x)}))


if __name__ == "__main__":
    main()
