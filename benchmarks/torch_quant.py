#!/usr/bin/env python3
"""PyTorch side of benchmarks/bench_quant.cpp: the same cases at the same thread count.

  BM_linear_f32/...   torch.nn.Linear (f32)
  BM_linear_int8/...  torch.ao.quantization.quantize_dynamic(Linear, dtype=torch.qint8):
                      int8 per-channel weights (per_channel_dynamic_qconfig, as Ember's),
                      the input quantized on the fly, f32 output (fbgemm)
  BM_linear_int8_layer/...  the same quantize_dynamic module (Ember's nn::Linear layer)
  BM_quantize/...     torch.quantize_per_channel of a weight with PerChannelMinMaxObserver's
                      parameters (observer + quantize, as Ember's x.quantize)

Prints one JSON object per line: {"name": ..., "seconds": <per iteration>}; the best of
--repeats timing rounds (the machine is shared).

  python3 benchmarks/torch_quant.py --threads 2
"""
import argparse
import json
import time

import torch
from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
from torch.ao.quantization.observer import PerChannelMinMaxObserver


def bench(fn, min_time):
    fn()  # warm-up
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= min_time:
            return t / n
        n *= 2


def cases():
    for m in (64, 16, 1):
        out, inp = 4096, 4096
        lin = torch.nn.Linear(inp, out)
        x = torch.randn(m, inp)
        q = quantize_dynamic(torch.nn.Sequential(lin), {torch.nn.Linear: per_channel_dynamic_qconfig},
                             dtype=torch.qint8)
        with torch.no_grad():
            ref, got = lin(x), q(x)
        err = (ref - got).abs().max().item() / ref.abs().max().item()
        assert err < 0.05, err
        yield f"BM_linear_f32/{out}x{inp}/batch:{m}", torch.no_grad()(lambda lin=lin, x=x: lin(x))
        yield f"BM_linear_int8/{out}x{inp}/batch:{m}", torch.no_grad()(lambda q=q, x=x: q(x))
        # Ember's layer case (nn::Linear after quant::quantize) has the same PyTorch side.
        yield f"BM_linear_int8_layer/{out}x{inp}/batch:{m}", torch.no_grad()(lambda q=q, x=x: q(x))
    w = torch.randn(4096, 4096)

    def quantize():
        obs = PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8,
                                       qscheme=torch.per_channel_symmetric)
        obs(w)
        s, z = obs.calculate_qparams()
        return torch.quantize_per_channel(w, s, z, 0, torch.qint8)

    yield "BM_quantize/4096x4096", quantize


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.5)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    for name, fn in cases():
        s = min(bench(fn, args.min_time) for _ in range(args.repeats))
        print(json.dumps({"name": name, "seconds": s}), flush=True)


if __name__ == "__main__":
    main()
