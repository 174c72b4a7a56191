#!/usr/bin/env bash
# Runs the kernel tests, the custom-kernel example, the GPU backends' tests (their own cases,
# the conformance and gradient suites) and the GPU benchmarks (side by side with
# PyTorch) on a GPU machine, from a bundle made by scripts/gpu-bundle.sh. Writes logs and
# results into OUT_DIR and prints a summary last (docs/gpu.md).
# Usage: scripts/gpu-test.sh BUNDLE_DIR OUT_DIR
#   EMBER_GPU_TEST_SKIP_BENCH=1 skips the benchmarks; EMBER_GTEST_FILTER narrows the tests;
#   EMBER_CUBLASLT_LIB picks cuBLASLt (default: PyTorch's pip copy when python3 has one);
#   EMBER_CUDNN_LIB picks cuDNN 9 (default: PyTorch's pip copy, nvidia-cudnn-cu13);
#   EMBER_AUTOTUNE_LOG=1 prints each autotuned choice (e.g. matmul: ember_tiled or cublaslt);
#   EMBER_VENDOR_CANDIDATES (default 1 here, off elsewhere) lets cuBLASLt/cuDNN take part;
#   EMBER_GPU_TEST_SKIP_OPS_BENCH=1 / _SKIP_FUSION_BENCH=1 skip bench_ops_gpu / bench_fusion_gpu;
#   EMBER_GPU_TESTS=0 skips the test programs (e.g. for a training-only run, EMBER_GPU_TRAIN=1);
#   programs missing from the bundle are skipped.
set -uo pipefail
BUNDLE="$(cd "${1:?usage: scripts/gpu-test.sh BUNDLE_DIR OUT_DIR}" && pwd)"
OUT="${2:?usage: scripts/gpu-test.sh BUNDLE_DIR OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export LD_LIBRARY_PATH="$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The test fixtures where the programs were compiled to look for them (gpu-bundle.sh).
if [ -f "$BUNDLE/fixture-dir" ]; then
  fx=$(cat "$BUNDLE/fixture-dir")
  [ -e "$fx" ] || { mkdir -p "$(dirname "$fx")" && ln -sfn "$(cd "$BUNDLE" && pwd)/fixtures" "$fx"; }
fi
export EMBER_CACHE_DIR="${EMBER_CACHE_DIR:-${TMPDIR:-/tmp}/ember-gpu-cache}"

# This run verifies the vendor candidates too, so autotune considers them (tune.hpp).
export EMBER_VENDOR_CANDIDATES="${EMBER_VENDOR_CANDIDATES:-1}"
# pip_nvidia_lib GLOB SUBDIR...: the newest file matching GLOB in PyTorch's pip packages
# (site-packages/nvidia/SUBDIR), the SUBDIRs in order; nothing when python3 has none.
pip_nvidia_lib() {
  command -v python3 >/dev/null || return 0
  python3 - "$@" 2>/dev/null <<'PY'
import glob, os, sys
try:
    import nvidia
except ImportError:
    raise SystemExit
for base in list(nvidia.__path__):
    for sub in sys.argv[2:]:
        hits = sorted(glob.glob(os.path.join(base, sub, sys.argv[1])))
        if hits:
            print(hits[-1])
            raise SystemExit
PY
}
# cuBLASLt and cuDNN 9, the CUDA matmul's and convolutions' autotune candidates (opened at
# run time, src/cuda/blaslt.hpp, dnn.hpp): the copies in PyTorch's pip packages
# (nvidia-cublas, nvidia-cudnn-cu13) when python3 finds them, so Ember and the PyTorch side
# of the benchmarks use the same libraries. cuDNN gets its folder: it opens its sub-libraries
# beside itself.
if [ -z "${EMBER_CUBLASLT_LIB:-}" ]; then
  lt=$(pip_nvidia_lib "libcublasLt.so.*" cu13/lib cublas/lib "*/lib")
  if [ -n "$lt" ]; then export EMBER_CUBLASLT_LIB="$lt"; fi
fi
if [ -z "${EMBER_CUDNN_LIB:-}" ]; then
  dnn=$(pip_nvidia_lib "libcudnn.so.9" cudnn/lib cu13/lib "*/lib")
  if [ -n "$dnn" ]; then export EMBER_CUDNN_LIB="$(dirname "$dnn")"; fi
fi

# Vulkan: the loader from the bundle's Debian packages, the NVIDIA ICD of the driver.
if ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in "$BUNDLE"/debs/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
  /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ] && [ -z "${VK_DRIVER_FILES:-}" ]; then export VK_DRIVER_FILES="$icd"; fi
done

{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1
  command -v vulkaninfo >/dev/null && vulkaninfo --summary 2>/dev/null | grep -E "deviceName|driverVersion|apiVersion"
  echo "cuBLASLt: ${EMBER_CUBLASLT_LIB:-the loader's path, the toolkit's lib64 (src/cuda/blaslt.hpp)}"
  echo "cuDNN: ${EMBER_CUDNN_LIB:-the loader's path, the toolkit's lib64/lib (src/cuda/dnn.hpp)}"
} | tee "$OUT/summary.txt"

status=0
TESTS=${EMBER_GPU_TESTS:-1}
if [ "$TESTS" != 0 ] && [ -x "$BUNDLE/bin/ember_kernel_tests" ]; then
  echo "== kernel tests"
  "$BUNDLE/bin/ember_kernel_tests" --gtest_brief=1 --gtest_output="json:$OUT/kernel_tests.json" \
    ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/kernel_tests.log" 2>&1 || status=1
  grep -E "^\[ +(cuda|vulkan|cpu|nvrtc) \]|FAILED|Failure" "$OUT/kernel_tests.log" | head -40 | tee -a "$OUT/summary.txt"
fi
if [ "$TESTS" != 0 ] && [ -x "$BUNDLE/bin/custom-kernel" ]; then
  echo "== custom-kernel example"
  "$BUNDLE/bin/custom-kernel" 2>&1 | tee -a "$OUT/summary.txt" || status=1
fi

# The GPU backends: their own cases and the conformance suite, per backend (cuda, vulkan).
for t in ember_gpu_tests ember_conformance_vulkan ember_conformance_cuda; do
  [ "$TESTS" != 0 ] && [ -x "$BUNDLE/bin/$t" ] || continue
  echo "== $t"
  "$BUNDLE/bin/$t" --gtest_output="json:$OUT/$t.json" \
    ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/$t.log" 2>&1 || status=1
  for b in cuda vulkan; do
    echo "$t $b: $(grep -c "^\[       OK \] .*/$b\." "$OUT/$t.log" 2>/dev/null || true) passed," \
      "$(grep -c "^\[  FAILED  \] .*/$b\..*(" "$OUT/$t.log" 2>/dev/null || true) failed," \
      "$(grep -c "^\[  SKIPPED \] .*/$b\..*(" "$OUT/$t.log" 2>/dev/null || true) skipped"
  done | tee -a "$OUT/summary.txt"
  # Plain (not typed) cases, e.g. CudaMatmul.* of test_gpu_matmul.cpp: no backend in the name.
  if grep -qE "^\[ RUN      \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+$" "$OUT/$t.log"; then
    echo "$t plain cases: $(grep -cE "^\[       OK \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(" "$OUT/$t.log") passed," \
      "$(grep -cE "^\[  FAILED  \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(" "$OUT/$t.log") failed," \
      "$(grep -cE "^\[  SKIPPED \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(" "$OUT/$t.log") skipped" | tee -a "$OUT/summary.txt"
    grep -E "^\[  SKIPPED \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(" -B2 "$OUT/$t.log" | grep -vE "^\[ RUN|^--" | head -8 | tee -a "$OUT/summary.txt"
    # What the matmul and conv cases print: the libraries loaded, cuDNN's refusals, autotune's
    # choices.
    grep -E "^\[ember gpu\] (cuBLASLt|cuDNN|\[ember autotune\])" "$OUT/$t.log" | head -16 | tee -a "$OUT/summary.txt"
  fi
  grep -E "^\[  FAILED  \]" "$OUT/$t.log" | head -40 | tee -a "$OUT/summary.txt"
done

counts() {  # LOG: "N passed, N failed, N skipped" of a GoogleTest log
  echo "$(grep -c "^\[       OK \] " "$1" 2>/dev/null || true) passed," \
    "$(grep -c "^\[  FAILED  \] .*(" "$1" 2>/dev/null || true) failed," \
    "$(grep -c "^\[  SKIPPED \] .*(" "$1" 2>/dev/null || true) skipped"
}
# The gradient suite on Autodiff<Vulkan>, Autodiff<Cuda> and both under Fusion, and the
# conformance suite on Fusion<Vulkan> and Fusion<Cuda>: one backend per program, so the counts
# are the program's (a program whose runtime has no device here skips every case).
for t in ember_autodiff_vulkan_tests ember_autodiff_cuda_tests ember_autodiff_fusion_vulkan_tests \
  ember_autodiff_fusion_cuda_tests ember_conformance_fusion_vulkan ember_conformance_fusion_cuda; do
  [ "$TESTS" != 0 ] && [ -x "$BUNDLE/bin/$t" ] || continue
  echo "== $t"
  "$BUNDLE/bin/$t" --gtest_output="json:$OUT/$t.json" \
    ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/$t.log" 2>&1 || status=1
  echo "$t: $(counts "$OUT/$t.log")" | tee -a "$OUT/summary.txt"
  grep -E "^\[  (FAILED|SKIPPED) \]|no .* device" "$OUT/$t.log" | head -40 | tee -a "$OUT/summary.txt"
done

# Dispatch on the GPU devices: the conformance suite's Dispatch cases and the gradient suite
# over Dispatch with EMBER_DEVICE set to each device, and Dispatch's own tests (which visit
# every available device).
for dev in ${EMBER_GPU_DEVICES:-cuda:0 cuda:0+autodiff vulkan:0 vulkan:0+autodiff}; do
  [ "$TESTS" != 0 ] || break
  name=${dev//[:+]/_}
  if [ -x "$BUNDLE/bin/ember_conformance" ]; then
    echo "== ember_conformance on Dispatch $dev"
    EMBER_DEVICE=$dev "$BUNDLE/bin/ember_conformance" --gtest_filter="${EMBER_GTEST_FILTER:-*/dispatch.*}" \
      >"$OUT/conformance_$name.log" 2>&1 || status=1
    echo "ember_conformance dispatch $dev: $(counts "$OUT/conformance_$name.log")" | tee -a "$OUT/summary.txt"
    grep -E "^\[  (FAILED|SKIPPED) \] .*\(" "$OUT/conformance_$name.log" | head -40 | tee -a "$OUT/summary.txt"
  fi
  if [ -x "$BUNDLE/bin/ember_autodiff_dispatch_tests" ] && [ "${dev%+autodiff}" = "$dev" ]; then
    echo "== ember_autodiff_dispatch_tests on $dev+autodiff"
    EMBER_DEVICE=$dev "$BUNDLE/bin/ember_autodiff_dispatch_tests" \
      ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/autodiff_$name.log" 2>&1 || status=1
    echo "ember_autodiff_dispatch_tests $dev+autodiff: $(counts "$OUT/autodiff_$name.log")" | tee -a "$OUT/summary.txt"
    grep -E "^\[  (FAILED|SKIPPED) \] .*\(" "$OUT/autodiff_$name.log" | head -40 | tee -a "$OUT/summary.txt"
  fi
  if [ -x "$BUNDLE/bin/ember_nn_tests" ] && [ "${dev%+autodiff}" != "$dev" ]; then
    echo "== ember_nn_tests with EMBER_DEVICE=$dev"
    EMBER_DEVICE=$dev "$BUNDLE/bin/ember_nn_tests" \
      ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/nn_$name.log" 2>&1 || status=1
    echo "ember_nn_tests $dev: $(counts "$OUT/nn_$name.log")" | tee -a "$OUT/summary.txt"
    grep -E "^\[  FAILED  \] .*\(" "$OUT/nn_$name.log" | head -40 | tee -a "$OUT/summary.txt"
  fi
done
if [ "$TESTS" != 0 ] && [ -x "$BUNDLE/bin/ember_dispatch_tests" ]; then
  echo "== ember_dispatch_tests"
  "$BUNDLE/bin/ember_dispatch_tests" >"$OUT/dispatch_tests.log" 2>&1 || status=1
  echo "ember_dispatch_tests: $(counts "$OUT/dispatch_tests.log")" | tee -a "$OUT/summary.txt"
  grep -E "^\[  (FAILED|SKIPPED) \] .*\(" "$OUT/dispatch_tests.log" | head -20 | tee -a "$OUT/summary.txt"
fi

# Training on the GPU (EMBER_GPU_TRAIN=1, with bin/ember and data/fashion-mnist in the
# bundle): `ember train --device D` for the default 5 epochs, its evaluation on the test
# split, and PyTorch's time per epoch on the same GPU (benchmarks/train_fashion_mnist.py).
# EMBER_GPU_TRAIN_DEVICES (default cuda) lists the devices; EMBER_GPU_TRAIN_MIXED (e.g.
# "bf16 f16") adds runs with --mixed-precision on the first of them, and PyTorch's with --amp;
# EMBER_GPU_TRAIN_UNFUSED=1 adds one with EMBER_FUSION=0 on the first of them.
if [ -n "${EMBER_GPU_TRAIN:-}" ] && [ -x "$BUNDLE/bin/ember" ]; then
  devices=(${EMBER_GPU_TRAIN_DEVICES:-cuda})
  runs=("${devices[@]}")
  for mp in ${EMBER_GPU_TRAIN_MIXED:-}; do runs+=("${devices[0]}/$mp"); done
  [ -n "${EMBER_GPU_TRAIN_UNFUSED:-}" ] && runs+=("${devices[0]}/unfused")
  for run in "${runs[@]}"; do
    dev=${run%%/*}
    mp=none
    [ "$run" != "$dev" ] && mp=${run#*/}
    [ "$mp" != none ] && dev_tag="$dev-$mp" || dev_tag=$dev
    fusion=${EMBER_FUSION:-1}
    [ "$mp" = unfused ] && { fusion=0; mp=none; }
    echo "== ember train --device $dev --mixed-precision $mp (EMBER_FUSION=$fusion)"
    rm -rf "$OUT/run-$dev_tag"
    EMBER_FUSION=$fusion "$BUNDLE/bin/ember" train --device "$dev" --no-tui \
      --run-dir "$OUT/run-$dev_tag" --mixed-precision "$mp" --dataset fashion-mnist \
      "$BUNDLE/data/fashion-mnist" ${EMBER_GPU_TRAIN_ARGS:-} >"$OUT/train_$dev_tag.log" 2>&1 ||
      status=1
    grep -E "^ember train|epoch|Throughput|Accuracy|test|error|Loss scaling" "$OUT/train_$dev_tag.log" | tail -30 | tee -a "$OUT/summary.txt"
    "$BUNDLE/bin/ember" eval "$OUT/run-$dev_tag" --device "$dev" >"$OUT/eval_$dev_tag.log" 2>&1 || status=1
    tail -n 5 "$OUT/eval_$dev_tag.log" | tee -a "$OUT/summary.txt"
    [ "$dev_tag" != "$dev" ] && continue
    cp "$OUT/run-$dev/confusion_matrix.csv" "$OUT/confusion_$dev.csv" 2>/dev/null
    # The model trained on the GPU, evaluated on the CPU: the same predictions.
    "$BUNDLE/bin/ember" eval "$OUT/run-$dev" --device cpu >"$OUT/eval_${dev}_on_cpu.log" 2>&1 || status=1
    tail -n 3 "$OUT/eval_${dev}_on_cpu.log" | tee -a "$OUT/summary.txt"
    if cmp -s "$OUT/confusion_$dev.csv" "$OUT/run-$dev/confusion_matrix.csv"; then
      echo "confusion matrix on $dev and on cpu: identical" | tee -a "$OUT/summary.txt"
    else
      echo "confusion matrix on $dev and on cpu: DIFFERENT" | tee -a "$OUT/summary.txt"
      diff "$OUT/confusion_$dev.csv" "$OUT/run-$dev/confusion_matrix.csv" | head | tee -a "$OUT/summary.txt"
    fi
  done
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    for mp in none ${EMBER_GPU_TRAIN_MIXED:-}; do
      echo "== PyTorch: benchmarks/train_fashion_mnist.py --device cuda --amp $mp"
      python3 "$BUNDLE/benchmarks/train_fashion_mnist.py" --device cuda --repeat 3 --amp "$mp" \
        --dir "$BUNDLE/data/fashion-mnist" 2>&1 | tee -a "$OUT/summary.txt" || status=1
    done
  fi
fi

if [ -z "${EMBER_GPU_TEST_SKIP_BENCH:-}" ]; then
  echo "== benchmarks"
  "$BUNDLE/bin/bench_kernel_gpu" --benchmark_out="$OUT/ember_bench.json" --benchmark_out_format=json \
    >"$OUT/bench.log" 2>&1 || status=1
  tail -n 8 "$OUT/bench.log"
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    PYTHONUNBUFFERED=1 python3 "$BUNDLE/benchmarks/gpu/side_by_side.py" "$OUT/ember_bench.json" \
      --out "$OUT/side_by_side.json" 2>&1 | tee -a "$OUT/summary.txt" || status=1
  else
    echo "no PyTorch with CUDA here: side-by-side skipped"
  fi
fi
if [ -z "${EMBER_GPU_TEST_SKIP_OPS_BENCH:-}" ] && [ -x "$BUNDLE/bin/bench_ops_gpu" ]; then
  echo "== backend function benchmarks (bench_ops_gpu)"
  "$BUNDLE/bin/bench_ops_gpu" "$OUT/ember_ops.json" 2>&1 | tee "$OUT/bench_ops.log" || status=1
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    (cd "$BUNDLE/benchmarks/gpu" && PYTHONUNBUFFERED=1 python3 ops_side_by_side.py "$OUT/ember_ops.json" \
      --out "$OUT/ops_side_by_side.json") 2>&1 | tee -a "$OUT/summary.txt" || status=1
  fi
fi

if [ -z "${EMBER_GPU_TEST_SKIP_FUSION_BENCH:-}" ] && [ -x "$BUNDLE/bin/bench_fusion_gpu" ]; then
  echo "== fusion benchmarks (bench_fusion_gpu)"
  "$BUNDLE/bin/bench_fusion_gpu" "$OUT/ember_fusion.json" 2>&1 | tee "$OUT/bench_fusion.log" || status=1
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    (cd "$BUNDLE/benchmarks/gpu" && PYTHONUNBUFFERED=1 python3 fusion_side_by_side.py \
      "$OUT/ember_fusion.json" --out "$OUT/fusion_side_by_side.json") 2>&1 | tee -a "$OUT/summary.txt" || status=1
  fi
fi

echo "== summary"
# The tests' counts per target, which the test binary prints after GoogleTest's summary.
[ -f "$OUT/kernel_tests.log" ] && sed -n '/^target  /,$p' "$OUT/kernel_tests.log" | tee -a "$OUT/summary.txt"
[ -f "$EMBER_CACHE_DIR/autotune.json" ] && cp "$EMBER_CACHE_DIR/autotune.json" "$OUT/"
exit $status
