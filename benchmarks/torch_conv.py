#!/usr/bin/env python3
"""PyTorch timings of the cases in benchmarks/bench_conv.cpp (one JSON object per line)."""
import argparse
import json
import time

import torch
import torch.nn.functional as F


CLOCK = time.perf_counter


def bench(name, fn, min_time=1.0):
    fn()
    fn()
    n, t0 = 0, CLOCK()
    while True:
        fn()
        n += 1
        dt = CLOCK() - t0
        if dt >= min_time and n >= 3:
            break
    print(json.dumps({"name": name, "seconds": dt / n}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--clock", choices=["wall", "process"], default="wall",
                    help="process: CPU time of all threads (use on a loaded machine, 1 thread)")
    a = ap.parse_args()
    global CLOCK
    if a.clock == "process":
        CLOCK = time.process_time
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    r = torch.rand
    with torch.no_grad():
        x, w, b = r(64, 32, 28, 28), r(64, 32, 3, 3), r(64)
        bench("BM_conv2d/n64_c32_k64_28x28_3x3", lambda: F.conv2d(x, w, b, 1, 1), a.min_time)
        x, w, b = r(8, 3, 224, 224), r(64, 3, 7, 7), r(64)
        bench("BM_conv2d/n8_c3_k64_224x224_7x7s2", lambda: F.conv2d(x, w, b, 2, 3), a.min_time)
        x, w = r(32, 64, 28, 28), r(64, 1, 3, 3)
        bench("BM_conv2d/depthwise_n32_c64_28x28_3x3",
              lambda: F.conv2d(x, w, None, 1, 1, 1, 64), a.min_time)
        x, w = r(64, 64, 14, 14), r(64, 32, 4, 4)
        bench("BM_conv_transpose2d/n64_c64_k32_14x14_4x4s2",
              lambda: F.conv_transpose2d(x, w, None, 2, 1), a.min_time)
        x, w = r(4, 16, 16, 16, 16), r(32, 16, 3, 3, 3)
        bench("BM_conv3d/n4_c16_k32_16x16x16_3x3x3", lambda: F.conv3d(x, w, None, 1, 1),
              a.min_time)
        x = r(64, 32, 28, 28)
        bench("BM_unfold4d/n64_c32_28x28_3x3", lambda: F.unfold(x, 3, 1, 1, 1), a.min_time)


if __name__ == "__main__":
    main()
