"""ResNet-18 inference: the ember::onnx interpreter (`ember onnx run`) against onnxruntime on
this machine, same model, same input, same thread count. Prints one row per batch size and
the ratio (onnxruntime time / Ember time: > 1 means Ember is faster).

    python3 benchmarks/onnx_vs_ort.py [--ember build/release/ember] [--threads 2]
        [--batches 1 32] [--repeat 20] [--rounds 3]

The model is the ResNet-18 fixture of tests/fixtures/onnx (torchvision's constructor, weights
from the fixture recipe), run at 224x224. Needs numpy and onnxruntime (pip).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures", "onnx")
sys.path.insert(0, FIX)


def materialize(out_dir):
    """Writes resnet18.onnx and its weights (the fixture recipe) into out_dir."""
    from gen_onnx_models import splitmix
    with open(os.path.join(FIX, "resnet18.json")) as f:
        j = json.load(f)
    buf = np.zeros(j["bytes"] // 4, dtype=np.float32)
    for r in j["initializers"]:
        off = r["offset"] // 4
        u = splitmix(j["seed"], off, r["numel"])
        buf[off:off + r["numel"]] = (r["lo"] + (r["hi"] - r["lo"]) * u).astype(np.float32)
    buf.tofile(os.path.join(out_dir, j["weights"]))
    with open(os.path.join(FIX, "resnet18.onnx"), "rb") as src, \
            open(os.path.join(out_dir, "resnet18.onnx"), "wb") as dst:
        dst.write(src.read())
    return os.path.join(out_dir, "resnet18.onnx")


def time_ort(path, x, threads, repeat):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    sess.run(None, {"input": x})
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        y = sess.run(None, {"input": x})[0]
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3, y


def time_ember(ember, path, xfile, threads, repeat, out_dir):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), EMBER_NUM_THREADS=str(threads))
    r = subprocess.run([ember, "onnx", "run", path, "--input", f"input={xfile}", "--threads",
                        str(threads), "--repeat", str(repeat), "--device", "cpu", "--out-dir",
                        out_dir], capture_output=True, text=True, env=env, check=True)
    last = r.stdout.strip().splitlines()[-1]  # "time M ms per run on cpu (best B ms)"
    ms = float(last.split("(best ")[1].split()[0])
    return ms, np.load(os.path.join(out_dir, "output.npy"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", default=os.path.join(ROOT, "build", "release", "ember"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = materialize(d)
        print(f"ResNet-18 224x224, {a.threads} threads, onnxruntime {ort.__version__}")
        print(f"{'batch':>5} {'onnxruntime ms':>15} {'ember ms':>10} {'ratio':>6} {'max diff':>9}")
        for b in a.batches:
            x = np.random.default_rng(0).standard_normal((b, 3, 224, 224), dtype=np.float32)
            xfile = os.path.join(d, f"x{b}.npy")
            np.save(xfile, x)
            rep = a.repeat if b < 8 else max(3, a.repeat // 4)
            # Alternate the two a few times and keep each one's best run: the machine is
            # shared, and the minimum is the least disturbed measurement.
            t_ort = t_em = float("inf")
            for _ in range(a.rounds):
                t, y_ort = time_ort(path, x, a.threads, rep)
                t_ort = min(t_ort, t)
                t, y_em = time_ember(a.ember, path, xfile, a.threads, rep, d)
                t_em = min(t_em, t)
            print(f"{b:>5} {t_ort:>15.2f} {t_em:>10.2f} {t_ort / t_em:>6.2f} "
                  f"{float(np.abs(y_ort - y_em).max()):>9.2e}")


if __name__ == "__main__":
    main()
