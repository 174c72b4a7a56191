#!/usr/bin/env python3
"""PyTorch's numbers for the cases of bench_fusion_gpu (the custom GELU of plain tensor code,
x * (erf(x / sqrt(2)) + 1) / 2 over x [32, 512, 2048] f32), eager and under torch.compile,
measured the same way on the same GPU, next to Ember's (read from bench_fusion_gpu's JSON
output), with the ratios.

    python3 fusion_side_by_side.py ember_fusion.json [--out result.json]

softmax_8192x8192_f32 times torch.softmax(x, -1) over x [8192, 8192] f32.
gelu_fwd times y = gelu(x); gelu_fwd_bwd times gelu(x).sum().backward() with x requiring a
gradient (the gradient lands in x.grad, which is reset to None each call, as Ember returns a
new gradient). CUDA events around each call, median of 30 after 5 warm-up calls (the
compiled functions are compiled before, by the warm-up). cnn_step_bN: one training step
(forward, cross-entropy, backward, Adam lr 1e-3) of benchmarks/train_fashion_mnist.py's CNN on a
random batch of N, eager, wall time per step over 20 steps after 5, until the GPU is idle.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

from side_by_side import median_ms

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from train_fashion_mnist import Cnn  # noqa: E402  (the same CNN as Ember's)

ROOT2 = math.sqrt(2.0)


def gelu(x):
    return x * (torch.erf(x / ROOT2) + 1.0) / 2.0


def spread(n):  # bench_fusion_gpu's fill, in [-4, 4)
    i = torch.arange(n, device="cuda", dtype=torch.float64)
    return (-4.0 + 8.0 * (((i % 1000003) + 1) * 0.618034 % 1.0)).to(torch.float32)


def cnn_step_ms(n, steps=20):
    torch.manual_seed(1)
    model = Cnn().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(n, 1, 28, 28, device="cuda")
    y = (torch.arange(n, device="cuda") * 7 + 3) % 10

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / steps


def torch_numbers():
    x = spread(32 * 512 * 2048).reshape(32, 512, 2048)
    compiled = torch.compile(gelu)
    out = {}
    out[("gelu_32x512x2048_f32_fwd", "eager")] = median_ms(lambda: gelu(x), reps=30)
    out[("gelu_32x512x2048_f32_fwd", "compile")] = median_ms(lambda: compiled(x), reps=30)
    s = spread(8192 * 8192).reshape(8192, 8192)
    soft = lambda t: torch.softmax(t, -1)
    soft_c = torch.compile(soft)
    out[("softmax_8192x8192_f32", "eager")] = median_ms(lambda: soft(s), reps=30)
    out[("softmax_8192x8192_f32", "compile")] = median_ms(lambda: soft_c(s), reps=30)
    del s
    for n in (64, 256):
        out[(f"cnn_step_b{n}", "eager")] = cnn_step_ms(n)
    xg = x.clone().requires_grad_(True)

    def step(fn):
        def call():
            xg.grad = None
            fn(xg).sum().backward()
        return call
    out[("gelu_32x512x2048_f32_fwd_bwd", "eager")] = median_ms(step(gelu), reps=30)
    out[("gelu_32x512x2048_f32_fwd_bwd", "compile")] = median_ms(step(compiled), reps=30)
    # A check of the compiled gradient against the formula.
    xg.grad = None
    compiled(xg).sum().backward()
    v = xg.detach().double()
    want = 0.5 * (1 + torch.erf(v / ROOT2)) + v * torch.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
    assert torch.allclose(xg.grad.double(), want, atol=1e-5), "torch.compile's gradient is off"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ember_json")
    ap.add_argument("--out")
    args = ap.parse_args()
    ember = json.load(open(args.ember_json))["results"]
    torch_ms = torch_numbers()
    rows = []
    print(f"{'case':30} {'target':7} {'stack':40} {'ms':>9} {'eager ms':>9} {'compile ms':>10}"
          f" {'/eager':>7} {'/compile':>8}")
    for r in ember:
        eager = torch_ms.get((r["case"], "eager"))
        comp = torch_ms.get((r["case"], "compile"))
        ms = r["median_ms"]
        row = dict(r, torch_eager_ms=eager, torch_compile_ms=comp,
                   ratio_eager=ms / eager if eager and ms else None,
                   ratio_compile=ms / comp if comp and ms else None)
        rows.append(row)
        print(f"{r['case']:30} {r['target']:7} {r['stack']:40} {ms:9.4f} {eager or 0:9.4f}"
              f" {comp or 0:10.4f} {row['ratio_eager'] or 0:7.2f} {row['ratio_compile'] or 0:8.2f}"
              f" {r['error']}")
    if args.out:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "rows": rows}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
