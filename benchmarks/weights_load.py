#!/usr/bin/env python3
"""Weights loading side by side: torch.load vs Ember's Module::load (issue 19).

Writes a 400 MiB state dict (100 f32 tensors [1024, 1024], keys "w.0" .. "w.99"; w.i[0, j]
= j so the loaded values can be checked) as weights.pt (torch.save) and
weights.safetensors (the safetensors layout, written here without the safetensors package)
into --dir, reads each once to have it in the page cache, then alternates --repeats times:
- torch.load(weights.pt) in a fresh Python process (the time of the call only, after
  `import torch`): a program loading its weights at start, as Ember's side;
- torch.load(weights.pt) again in this process (its allocator may reuse freed memory);
- build/release/benchmarks/bench_weights_load: Module::load of each file into a fresh
  Dispatch model on the cpu, the first load of its process (BM_module_load) and the second
  (BM_module_load_again), and for reference the way Module::load worked before issue 19
  (read_weights, then load_state_dict all at once); each case in its own process.
Prints the best and median time of each case.

Usage: python3 benchmarks/weights_load.py [--dir /tmp/ember-weights-bench] [--repeats 5]
Run it alone on the machine (flock -x /tmp/ember-quiet.lock ... on a shared one).
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_files(d):
    os.makedirs(d, exist_ok=True)
    pt, st = os.path.join(d, "weights.pt"), os.path.join(d, "weights.safetensors")
    if os.path.exists(pt) and os.path.exists(st):
        return pt, st
    g = torch.Generator().manual_seed(19)
    sd = {}
    for i in range(100):
        t = torch.rand(1024, 1024, generator=g)
        t[0] = torch.arange(1024, dtype=torch.float32)
        sd[f"w.{i}"] = t
    torch.save(sd, pt)
    header, off = {}, 0
    for k, t in sd.items():
        n = t.numel() * 4
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for t in sd.values():
            f.write(t.numpy().tobytes())
    return pt, st


FRESH = """
import sys, time, torch
torch.set_num_threads(2)
t0 = time.perf_counter()
sd = torch.load(sys.argv[1], weights_only=True)
dt = time.perf_counter() - t0
assert float(sd["w.99"][0, 7]) == 7.0
print(dt)
"""


def time_torch_fresh(path):
    out = subprocess.run([sys.executable, "-c", FRESH, path], check=True, capture_output=True,
                         text=True).stdout
    return float(out.split()[-1])


def time_torch(path):
    t0 = time.perf_counter()
    sd = torch.load(path, weights_only=True)
    dt = time.perf_counter() - t0
    assert float(sd["w.99"][0, 7]) == 7.0
    return dt


def time_ember(binary, d):
    """Each case in its own process (each load is the first of its process)."""
    env = dict(os.environ, EMBER_WEIGHTS_DIR=d)
    res = {}
    for case in ("BM_module_load/pt/", "BM_module_load/safetensors/",
                 "BM_module_load_again/pt/", "BM_module_load_again/safetensors/",
                 "BM_read_weights_then_load_state_dict/pt/",
                 "BM_read_weights_then_load_state_dict/safetensors/"):
        out = subprocess.run([binary, "--benchmark_format=json", f"--benchmark_filter={case}"],
                             env=env, check=True, capture_output=True, text=True).stdout
        for b in json.loads(out)["benchmarks"]:
            if b.get("error_occurred"):
                raise SystemExit(b["error_message"])
            res[b["name"].replace("/iterations:1/real_time", "")] = b["real_time"] / 1e3  # s
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/ember-weights-bench")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/benchmarks/bench_weights_load"))
    a = ap.parse_args()
    torch.set_num_threads(2)
    pt, st = make_files(a.dir)
    for p in (pt, st):  # into the page cache
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    times = {}
    for _ in range(a.repeats):
        times.setdefault("torch.load(weights.pt), fresh process", []).append(time_torch_fresh(pt))
        times.setdefault("torch.load(weights.pt), again in one process", []).append(time_torch(pt))
        for k, v in time_ember(a.binary, a.dir).items():
            times.setdefault("Ember " + k, []).append(v)
    print(f"{'case':58s} {'best s':>8s} {'median s':>9s}")
    for k, v in times.items():
        print(f"{k:58s} {min(v):8.3f} {statistics.median(v):9.3f}")


if __name__ == "__main__":
    main()
