#!/usr/bin/env python3
"""PyTorch's numbers for the cases of bench_kernel_gpu, measured the same way, next to
Ember's (read from bench_kernel_gpu's JSON output), with the ratios.

    python3 side_by_side.py ember.json [--out result.json]

Copy and tanh over 1 GiB of f32 (EMBER_BENCH_BYTES): CUDA events around each run, median of
50 after warm-up; bandwidth counts bytes read plus written. Tiny op: 10,000 `add_(1)` on 8
floats timed on the host until torch.cuda.synchronize(), median of 7, per op.
"""
import argparse
import json
import os
import statistics
import time

import torch


def median_ms(fn, reps=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def torch_numbers():
    n = int(os.environ.get("EMBER_BENCH_BYTES", 1 << 30)) // 4
    x = (torch.arange(n, device="cuda", dtype=torch.float32) % 1000) * 0.01 - 5.0
    y = torch.empty_like(x)
    copy_ms = median_ms(lambda: y.copy_(x))
    tanh_ms = median_ms(lambda: torch.tanh(x, out=y))
    tiny = torch.zeros(8, device="cuda")
    for _ in range(100):
        tiny.add_(1)
    torch.cuda.synchronize()
    per_op = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(10000):
            tiny.add_(1)
        torch.cuda.synchronize()
        per_op.append((time.perf_counter() - t0) * 1e6 / 10000)
    tb = lambda ms: 2.0 * n * 4 / (ms * 1e-3) / 1e12
    return {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "copy_TBps": tb(copy_ms),
        "tanh_TBps": tb(tanh_ms),
        "tiny_us_per_op": statistics.median(per_op),
    }


def ember_numbers(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        name = b["name"].split("/")
        op, target = name[0], name[1] if len(name) > 1 else ""
        if b.get("error_occurred"):
            out[(op, target)] = {"error": b.get("error_message", "error")}
            continue
        out[(op, target)] = {k: b[k] for k in ("median_TBps", "median_us_per_launch", "label") if k in b}
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ember_json")
    p.add_argument("--out")
    a = p.parse_args()
    t = torch_numbers()
    e = ember_numbers(a.ember_json)
    rows = []
    for target in ("cuda", "vulkan"):
        for op, key, tkey, higher in (("copy_1GiB", "median_TBps", "copy_TBps", True),
                                      ("tanh_1GiB", "median_TBps", "tanh_TBps", True),
                                      ("tanh_fma_1GiB", "median_TBps", "tanh_TBps", True),
                                      ("tiny_launch_x10000", "median_us_per_launch", "tiny_us_per_op", False)):
            r = e.get((op, target))
            if r is None:
                continue
            if "error" in r:
                rows.append({"case": f"{op}/{target}", "error": r["error"]})
                continue
            v = r[key]
            ratio = v / t[tkey] if higher else t[tkey] / v  # >= 1: Ember at least as good
            rows.append({"case": f"{op}/{target}", "ember": v, "torch": t[tkey],
                         "unit": "TB/s" if higher else "us/launch", "ember_vs_torch": ratio,
                         "kernel": r.get("label", "")})
    print(f"PyTorch {t['torch']} on {t['device']}")
    print(f"{'case':32} {'ember':>10} {'torch':>10} {'unit':>10} {'ratio':>7}  kernel")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:32} ERROR {r['error']}")
        else:
            print(f"{r['case']:32} {r['ember']:10.3f} {r['torch']:10.3f} {r['unit']:>10} "
                  f"{r['ember_vs_torch']:7.3f}  {r['kernel']}")
    print("ratio: ember / torch for bandwidth, torch / ember for per-launch time (>= 1 is as good)")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"torch": t, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
