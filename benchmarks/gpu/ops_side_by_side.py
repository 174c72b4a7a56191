#!/usr/bin/env python3
"""PyTorch's numbers for the cases of bench_ops_gpu (softmax, log_softmax, layer_norm,
rms_norm, cross-entropy, matrix products), measured the same way on the same GPU, next to
Ember's (read from bench_ops_gpu's JSON output), with the ratios, the share of the H200's
4.8 TB/s for the memory-bound cases and TFLOP/s for the products.

    python3 ops_side_by_side.py ember_ops.json [--out result.json]

CUDA events around each call, median of 50 after 5 warm-up calls (products: median of 10
after 2, as bench_ops_gpu); the effective bandwidth counts the input read once and the output
written once (8 bytes per f32 element; cross-entropy reads only: 4); a product of n^3 counts
2 n^3 flops. Products run with TF32 off and without reduced-precision reductions (fp32 sums
throughout), the numerics of Ember's candidates. Convolutions (conv2d 3x3, 256 channels,
14 x 14, batch 128, padding 1; fwd, dgrad = the input gradient, wgrad = the weight gradient)
run through cuDNN with TF32 off (torch.backends.cudnn.allow_tf32 = False: fp32 arithmetic
in the f32 rows) and torch.backends.cudnn.benchmark = True (cuDNN's fastest algorithm, as
PyTorch's training loops commonly set); a convolution counts 2 B C_out 14^2 C_in 9 flops.
Attention (q, k, v [32, 16, S, 64] bf16, S = 512 and 4096, scale 0.125, causal and not):
fwd times torch.nn.functional.scaled_dot_product_attention, whose flash/cuDNN/efficient
backend PyTorch picks itself; bwd runs the forward once with q, k, v requiring gradients and
times torch.autograd.grad(out, (q, k, v), dout, retain_graph=True); median of 10 after 2.
FlashAttention-2's flop counts: fwd 4 B H L S E (halved when causal), bwd 2.5 times the fwd's.
"""
import argparse
import json

import torch

from side_by_side import median_ms

H200_TBPS = 4.8

CASES = {
    "softmax_8192x8192": ((8192, 8192), lambda x, w, b, t: torch.softmax(x, -1)),
    "log_softmax_8192x8192": ((8192, 8192), lambda x, w, b, t: torch.log_softmax(x, -1)),
    "layer_norm_8192x8192": ((8192, 8192),
                             lambda x, w, b, t: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)),
    "rms_norm_8192x8192": ((8192, 8192),
                           lambda x, w, b, t: torch.nn.functional.rms_norm(x, (x.shape[-1],), w, 1e-6)),
    "cross_entropy_8192x8192": ((8192, 8192),
                                lambda x, w, b, t: torch.nn.functional.cross_entropy(x, t)),
    "softmax_262144x512": ((262144, 512), lambda x, w, b, t: torch.softmax(x, -1)),
}
READ_ONLY = {"cross_entropy_8192x8192"}  # 4 bytes per element, else 8 (read + write)

# matmul_<n>_<dtype>: [n, n] x [n, n]
MATMUL_CASES = {f"matmul_{n}_{dt}": (n, getattr(torch, {"f32": "float32", "f16": "float16",
                                                        "bf16": "bfloat16"}[dt]))
                for n in (4096, 8192) for dt in ("f32", "f16", "bf16")}

# conv2d_3x3_256c_14x14_b128_<fn>_<dtype>
CONV_CASES = {f"conv2d_3x3_256c_14x14_b128_{fn}_{dt}": (fn, getattr(torch, {"f32": "float32",
                                                                        "bf16": "bfloat16"}[dt]))
              for dt in ("f32", "bf16") for fn in ("fwd", "dgrad", "wgrad")}
CONV_FLOPS = 2.0 * 128 * 256 * 14 * 14 * 256 * 9

# attention_b32_h16_s<S>_d64_bf16[_causal]_<fwd|bwd>: q, k, v [32, 16, S, 64], L = S
ATTENTION_CASES = {f"attention_b32_h16_s{s}_d64_bf16{'_causal' if causal else ''}_{fn}":
                   (s, causal, fn)
                   for s in (512, 4096) for fn in ("fwd", "bwd") for causal in (False, True)}


def attention_flops(s, causal, fn, b=32, h=16, e=64):
    f = 4.0 * b * h * s * s * e * (0.5 if causal else 1.0)
    return f * (2.5 if fn == "bwd" else 1.0)


def attention_numbers(out):
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for name, (s, causal, fn) in ATTENTION_CASES.items():
        def fill(f):  # bench_ops_gpu's fills, in [-1, 1]
            i = torch.arange(32 * 16 * s * 64, device="cuda", dtype=torch.float64)
            v = (-1.0 + 2.0 * ((i % 1000003 + 1) * f % 1.0)).to(torch.bfloat16)
            return v.reshape(32, 16, s, 64)
        q, k, v = fill(0.618034), fill(0.414214), fill(0.302775)
        o = dout = None
        if fn == "fwd":
            call = lambda: sdpa(q, k, v, is_causal=causal, scale=0.125)
        else:
            dout = fill(0.707107)
            q, k, v = (x.requires_grad_() for x in (q, k, v))
            o = sdpa(q, k, v, is_causal=causal, scale=0.125)
            call = lambda: torch.autograd.grad(o, (q, k, v), dout, retain_graph=True)
        ms = median_ms(call, reps=10, warmup=2)
        out[name] = {"median_ms": ms, "TFLOPs": attention_flops(s, causal, fn) / (ms * 1e-3) / 1e12}
        del q, k, v, o, dout, call
        torch.cuda.empty_cache()


def conv_numbers(out):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    conv_bw = torch.ops.aten.convolution_backward
    for name, (fn, dtype) in CONV_CASES.items():
        def fill(n, f):
            i = torch.arange(n, device="cuda", dtype=torch.float64)
            return (-1.0 + 2.0 * ((i % 1000003 + 1) * f % 1.0)).to(dtype)
        x = fill(128 * 256 * 14 * 14, 0.618034).reshape(128, 256, 14, 14)
        w = fill(256 * 256 * 9, 0.414214).reshape(256, 256, 3, 3)
        dy = fill(128 * 256 * 14 * 14, 0.302775).reshape(128, 256, 14, 14)
        args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        if fn == "fwd":
            call = lambda: torch.nn.functional.conv2d(x, w, None, 1, 1)
        elif fn == "dgrad":
            call = lambda: conv_bw(dy, x, w, None, *args, [True, False, False])[0]
        else:
            call = lambda: conv_bw(dy, x, w, None, *args, [False, True, False])[1]
        ms = median_ms(call, reps=10, warmup=2)
        out[name] = {"median_ms": ms, "TFLOPs": CONV_FLOPS / (ms * 1e-3) / 1e12}
        del x, w, dy
        torch.cuda.empty_cache()


def torch_numbers():
    out = {}
    for name, ((rows, cols), fn) in CASES.items():
        n = rows * cols
        x = ((torch.arange(n, device="cuda", dtype=torch.float64) % 1000003 + 1) * 0.618034 % 1.0
             * 15.0 - 6.0).float().reshape(rows, cols)
        w = torch.ones(cols, device="cuda")
        b = torch.zeros(cols, device="cuda")
        t = (torch.arange(rows, device="cuda") * 7 + 3) % cols
        ms = median_ms(lambda: fn(x, w, b, t))
        per = 4.0 if name in READ_ONLY else 8.0
        out[name] = {"median_ms": ms, "TBps": per * n / (ms * 1e-3) / 1e12}
        del x
        torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    for name, (n, dtype) in MATMUL_CASES.items():
        i = torch.arange(n * n, device="cuda", dtype=torch.float64)
        a = (-1.0 + 2.0 * ((i % 1000003 + 1) * 0.618034 % 1.0)).to(dtype).reshape(n, n)
        b = (-1.0 + 2.0 * ((i % 999983 + 1) * 0.414214 % 1.0)).to(dtype).reshape(n, n)
        del i
        ms = median_ms(lambda: torch.matmul(a, b), reps=10, warmup=2)
        out[name] = {"median_ms": ms, "TFLOPs": 2.0 * n ** 3 / (ms * 1e-3) / 1e12}
        del a, b
        torch.cuda.empty_cache()
    conv_numbers(out)
    attention_numbers(out)
    return out


def print_matmul(ember, t, rows, cases=MATMUL_CASES, width=18):
    print(f"{'case':{width}} {'target':7} {'ember ms':>9} {'torch ms':>9} {'ember TFLOP/s':>13} "
          f"{'torch TFLOP/s':>13} {'ratio':>6}  chosen (each candidate's ms)")
    for e in ember:
        r = t.get(e["case"])
        if r is None or e["case"] not in cases:
            continue
        each = ", ".join(f"{c} {ms:.3f}" for c, ms in e.get("candidates_ms", {}).items())
        if e["error"]:
            print(f"{e['case']:{width}} {e['target']:7} ERROR {e['error']} ({each})")
            rows.append({**e, "torch_ms": r["median_ms"]})
            continue
        ratio = e["median_ms"] / r["median_ms"]
        rows.append({**e, "torch_ms": r["median_ms"], "torch_TFLOPs": r["TFLOPs"],
                     "ember_over_torch_time": ratio})
        print(f"{e['case']:{width}} {e['target']:7} {e['median_ms']:9.3f} {r['median_ms']:9.3f} "
              f"{e['TFLOPs']:13.1f} {r['TFLOPs']:13.1f} {ratio:6.3f}  {e['candidate']} ({each})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ember_json")
    p.add_argument("--out")
    a = p.parse_args()
    with open(a.ember_json) as f:
        ember = json.load(f)["results"]
    t = torch_numbers()
    rows = []
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    print(f"{'case':26} {'target':7} {'ember ms':>9} {'torch ms':>9} {'ember TB/s':>10} "
          f"{'torch TB/s':>10} {'ratio':>6} {'of 4.8':>6}")
    for e in ember:
        r = t.get(e["case"])
        if r is None or e["case"] in MATMUL_CASES or e["case"] in CONV_CASES \
                or e["case"] in ATTENTION_CASES:
            continue
        if e["error"]:
            print(f"{e['case']:26} {e['target']:7} ERROR {e['error']}")
            rows.append({**e, "torch_ms": r["median_ms"]})
            continue
        ratio = e["median_ms"] / r["median_ms"]  # <= 1: Ember at least as fast
        rows.append({**e, "torch_ms": r["median_ms"], "torch_TBps": r["TBps"],
                     "ember_over_torch_time": ratio})
        print(f"{e['case']:26} {e['target']:7} {e['median_ms']:9.4f} {r['median_ms']:9.4f} "
              f"{e['TBps']:10.3f} {r['TBps']:10.3f} {ratio:6.3f} {e['TBps'] / H200_TBPS:6.1%}")
    print("ratio: Ember's time / PyTorch's (<= 1 is as fast); 'of 4.8': Ember's share of the "
          "H200's bandwidth")
    print_matmul(ember, t, rows)
    print("matmul: TF32 and reduced-precision reductions off on both sides; 'chosen': "
          "Ember's autotuned candidate, then each candidate forced")
    print_matmul(ember, t, rows, CONV_CASES, 38)
    print("conv2d: TF32 off on both sides (fp32 arithmetic in the f32 rows), PyTorch with "
          "cudnn.benchmark; 'chosen': Ember's autotuned candidate, then each candidate forced")
    print_matmul(ember, t, rows, ATTENTION_CASES, 44)
    print("attention: bf16, scale 0.125; PyTorch's scaled_dot_product_attention picks its "
          "flash/cuDNN backend itself; bwd = dq, dk, dv; 'chosen': Ember's fused kernels or "
          "the composite")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"torch": torch.__version__, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
