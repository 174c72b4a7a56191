#!/usr/bin/env python3
"""PyTorch timings of the cases in benchmarks/bench_autodiff.cpp, one JSON object per line:
{"name": "BM_<case>/<arg>", "seconds": <per iteration>}.
Usage: python3 benchmarks/torch_autodiff.py [--threads 2]
"""
import argparse
import json
import time

import torch


def bench(name, fn, min_time=0.3):
    fn()  # warm-up
    iters, t = 0, 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or iters < 3:
        t0 = time.perf_counter()
        fn()
        t += time.perf_counter() - t0
        iters += 1
    print(json.dumps({"name": name, "seconds": t / iters}), flush=True)


def chain(x0, c, n):
    x = x0.detach().requires_grad_()
    y = x
    for i in range(n):
        k = i % 4
        if k == 0:
            y = y * c
        elif k == 1:
            y = y.tanh()
        elif k == 2:
            y = y + c
        else:
            y = y.sin()
    y.sum().backward()
    return x.grad


def mlp_step(weights, biases, head, x, target):
    for p in weights + biases + [head]:
        p.grad = None
    h = x
    for w, b in zip(weights, biases):
        h = torch.nn.functional.gelu(h @ w + b)
    loss = torch.nn.functional.cross_entropy(h @ head, target)
    loss.backward()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x0 = torch.rand(8, 8)
    c = torch.rand(8, 8)
    bench("BM_autodiff_chain/1000", lambda: chain(x0, c, 1000))
    weights = [(torch.rand(784 if l == 0 else 512, 512) * 0.05).requires_grad_() for l in range(6)]
    biases = [torch.zeros(1, 512, requires_grad=True) for _ in range(6)]
    head = (torch.rand(512, 10) * 0.05).requires_grad_()
    x = torch.rand(512, 784)
    target = torch.full((512,), 3, dtype=torch.long)
    bench("BM_mlp_step/0", lambda: mlp_step(weights, biases, head, x, target))

if __name__ == "__main__":
    main()
