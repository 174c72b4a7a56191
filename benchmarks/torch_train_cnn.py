#!/usr/bin/env python3
"""PyTorch side of benchmarks/bench_train_cnn.cpp: the default Fashion-MNIST CNN of issue 5.

Prints one JSON object per case ({"name", "seconds"}, the names of the Google Benchmark
cases) and, for the training step, a line with images/s. Same model, optimizer (Adam,
lr 1e-3), batch sizes and random data shapes as the C++ benchmark.

Usage: python3 benchmarks/torch_train_cnn.py [--threads 2] [--min-time 1.0] [--filter REGEX]
                                              [--clock wall|process]
"""
import argparse
import json
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

CLOCK = time.perf_counter


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(3136, 128)
        self.fc2 = nn.Linear(128, 10)
        self.dropout = nn.Dropout(0.25)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        h = F.max_pool2d(F.relu(self.bn2(self.conv2(h))), 2)
        h = F.relu(self.fc1(h.flatten(1)))
        return self.fc2(self.dropout(h))


def batch(n):
    x = torch.rand(n, 1, 28, 28)
    y = (torch.arange(n) * 7 + 3) % 10
    return x, y


def bench(name, fn, min_time, flt, timed=None):
    """Runs fn until min_time has passed; `timed` (if given) returns the seconds to count
    for one call (manual timing of a part), else the whole call is timed."""
    if flt and not re.search(flt, name):
        return None
    for _ in range(2):
        fn() if timed is None else timed()
    n, total, t0 = 0, 0.0, CLOCK()
    while True:
        if timed is None:
            s = CLOCK()
            fn()
            total += CLOCK() - s
        else:
            total += timed()
        n += 1
        if CLOCK() - t0 >= min_time and n >= 3:
            break
    print(json.dumps({"name": name, "seconds": total / n}), flush=True)
    return total / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--filter", default="")
    ap.add_argument("--clock", choices=["wall", "process"], default="wall",
                    help="process: CPU time of all threads (for a loaded machine, 1 thread)")
    a = ap.parse_args()
    global CLOCK
    if a.clock == "process":
        CLOCK = time.process_time
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    mt, flt = a.min_time, a.filter

    for n in (64, 256):
        model = Cnn()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        x, y = batch(n)

        def step():
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            opt.step()

        s = bench(f"BM_train_step/batch:{n}", step, mt, flt)
        if s:
            print(f"# torch train step batch {n}: {n / s:.1f} images/s", file=sys.stderr)

        def fwd_bwd():
            model.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()

        bench(f"BM_fwd_bwd/batch:{n}", fwd_bwd, mt, flt)

    cases = {1: (1, 32, 28), 2: (32, 64, 14)}
    for layer, (cin, cout, hw) in cases.items():
        for n in (64, 256):
            x = torch.rand(n, cin, hw, hw)
            w = torch.rand(cout, cin, 3, 3)
            b = torch.rand(cout)
            with torch.no_grad():
                bench(f"BM_conv_fwd/layer:{layer}/batch:{n}", lambda: F.conv2d(x, w, b, 1, 1), mt,
                      flt)

            def conv_bwd(into_x):
                xx = x.clone().requires_grad_(into_x)
                ww = w.clone().requires_grad_(not into_x)
                bb = b.clone().requires_grad_(not into_x)

                def timed():
                    out = F.conv2d(xx, ww, bb, 1, 1)
                    g = torch.ones_like(out)
                    s = CLOCK()
                    out.backward(g)
                    return CLOCK() - s

                return timed

            if layer == 2:
                bench(f"BM_conv_dx/layer:{layer}/batch:{n}", None, mt, flt, conv_bwd(True))
            bench(f"BM_conv_dw/layer:{layer}/batch:{n}", None, mt, flt, conv_bwd(False))

    for (n, c, hw) in ((256, 32, 28), (256, 64, 14)):
        x = torch.rand(n, c, hw, hw, requires_grad=True)

        def pool_timed():
            out = F.max_pool2d(x, 2)
            g = torch.ones_like(out)
            s = CLOCK()
            out.backward(g)
            return CLOCK() - s

        bench(f"BM_maxpool_bwd/n:{n}/c:{c}/hw:{hw}", None, mt, flt, pool_timed)

        bn = nn.BatchNorm2d(c)
        r = torch.rand(n, c, hw, hw)
        bench(f"BM_bn_fwd_bwd/n:{n}/c:{c}/hw:{hw}", lambda: (bn(x) * r).sum().backward(), mt, flt)

    logits = torch.rand(256, 10, requires_grad=True)
    _, y = batch(256)
    bench("BM_ce_fwd_bwd/batch:256", lambda: F.cross_entropy(logits, y).backward(), mt, flt)

    model = Cnn()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = batch(64)
    F.cross_entropy(model(x), y).backward()
    bench("BM_adam_step", opt.step, mt, flt)


if __name__ == "__main__":
    main()
