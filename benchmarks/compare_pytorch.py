#!/usr/bin/env python3
"""Side-by-side benchmark: Ember's Google Benchmark binaries vs the same cases in PyTorch.

For every family F with both build/release/benchmarks/bench_F and benchmarks/torch_F.py,
runs each side (alternating, --repeats times) at the same thread count, keeps each case's
best time, and writes a Markdown table (ratio = PyTorch time / Ember time, > 1 means Ember is
faster) to stdout and, with --write, into docs/benchmarks.md between the markers
<!-- compare:begin --> and <!-- compare:end -->. Training-step cases (bench_train_cnn,
BM_train_step/batch:N) are also given as images per second.

Usage: python3 benchmarks/compare_pytorch.py [--threads 2] [--repeats 3] [--filter REGEX]
       [--family REGEX] [--write]
(--family keeps the families whose name matches, e.g. --family quant; --write replaces the
whole table, so use it without --family.)
Needs torch (PyPI). Not used by the tests.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_ember(binary, threads, flt):
    env = dict(os.environ, EMBER_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        cmd = [binary, "--benchmark_out=" + tmp.name, "--benchmark_out_format=json",
               "--benchmark_min_time=0.3"]
        if flt:
            cmd.append("--benchmark_filter=" + flt)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        text = open(tmp.name).read()
        if not text.strip():  # the filter matched nothing in this binary
            return {}
        if proc.returncode != 0:
            raise RuntimeError(f"{binary} failed: {proc.stderr}")
        report = json.loads(text)
    res = {}
    for b in report["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        name = re.sub(r"(/(real_time|process_time|manual_time))+$", "", b["name"])
        res[name] = b["real_time"] * unit
    return res


def run_torch(script, threads, flt):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, script, "--threads", str(threads)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if flt and not re.search(flt, d["name"]):
            continue
        res[d["name"]] = d["seconds"]
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--filter", default="")
    ap.add_argument("--family", default="")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()

    import torch  # noqa: F401  (fail early with a clear message if missing)

    rows = []
    bench_dir = os.path.join(args.build, "benchmarks")
    for script in sorted(os.listdir(os.path.join(ROOT, "benchmarks"))):
        m = re.fullmatch(r"torch_(\w+)\.py", script)
        if not m:
            continue
        fam = m.group(1)
        if args.family and not re.search(args.family, fam):
            continue
        binary = os.path.join(bench_dir, "bench_" + fam)
        if not os.path.exists(binary):
            print(f"skip {fam}: {binary} not built", file=sys.stderr)
            continue
        best_e, best_t = {}, {}
        for _ in range(args.repeats):
            for k, v in run_ember(binary, args.threads, args.filter).items():
                best_e[k] = min(v, best_e.get(k, float("inf")))
            for k, v in run_torch(os.path.join(ROOT, "benchmarks", script), args.threads,
                                  args.filter).items():
                best_t[k] = min(v, best_t.get(k, float("inf")))
        for name in sorted(set(best_e) & set(best_t)):
            rows.append((fam, name, best_e[name], best_t[name]))

    import torch
    head = (f"Measured {datetime.date.today().isoformat()} on {cpu_model()}, "
            f"{args.threads} threads, PyTorch {torch.__version__}, best of {args.repeats}.\n"
            f"Command: `python3 benchmarks/compare_pytorch.py --threads {args.threads} "
            f"--repeats {args.repeats}{' --filter ' + args.filter if args.filter else ''}"
            f"{' --family ' + args.family if args.family else ''}`\n\n")
    table = "| family | case | Ember | PyTorch | PyTorch/Ember |\n|---|---|---:|---:|---:|\n"
    for fam, name, e, t in rows:
        table += f"| {fam} | {name} | {e * 1e3:.3f} ms | {t * 1e3:.3f} ms | {t / e:.2f} |\n"
    # Training-step cases (bench_train_cnn): the same times as images per second.
    steps = [(name, e, t, int(m.group(1))) for fam, name, e, t in rows
             if (m := re.fullmatch(r"BM_train_step/batch:(\d+)", name))]
    if steps:
        table += ("\n| training step | Ember images/s | PyTorch images/s | Ember/PyTorch |\n"
                  "|---|---:|---:|---:|\n")
        for name, e, t, n in steps:
            table += f"| {name} | {n / e:.0f} | {n / t:.0f} | {t / e:.2f} |\n"
    text = head + table
    print(text)
    if args.write:
        path = os.path.join(ROOT, "docs", "benchmarks.md")
        doc = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
        block = "<!-- compare:begin -->\n" + text + "<!-- compare:end -->"
        if "<!-- compare:begin -->" in doc:
            doc = re.sub(r"<!-- compare:begin -->.*<!-- compare:end -->", lambda _: block, doc,
                         flags=re.S)
        else:
            doc += "\n" + block + "\n"
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(doc)
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
