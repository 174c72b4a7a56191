#!/usr/bin/env bash
# Runs the kernel tests, the custom-kernel example, the GPU backends' tests (their own cases,
# the conformance and gradient suites) and the GPU benchmarks (side by side with
# PyTorch) on a GPU machine, from a bundle made by scripts/gpu-bundle.sh. Writes logs and
# results into OUT_DIR and prints a summary last (docs/gpu.md).
# Usage: scripts/gpu-test.sh BUNDLE_DIR OUT_DIR
#   EMBER_GPU_TEST_SKIP_BENCH=1 skips the benchmarks; EMBER_GTEST_FILTER narrows the tests.
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
} | tee "$OUT/summary.txt"

status=0
echo "== kernel tests"
"$BUNDLE/bin/ember_kernel_tests" --gtest_brief=1 --gtest_output="json:$OUT/kernel_tests.json" \
  ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/kernel_tests.log" 2>&1 || status=1
grep -E "^\[ +(cuda|vulkan|cpu|nvrtc) \]|FAILED|Failure" "$OUT/kernel_tests.log" | head -40 | tee -a "$OUT/summary.txt"

echo "== custom-kernel example"
"$BUNDLE/bin/custom-kernel" 2>&1 | tee -a "$OUT/summary.txt" || status=1

# The GPU backends: their own cases and the conformance suite, per backend (cuda, vulkan).
for t in ember_gpu_tests ember_conformance_vulkan ember_conformance_cuda; do
  [ -x "$BUNDLE/bin/$t" ] || continue
  echo "== $t"
  "$BUNDLE/bin/$t" --gtest_output="json:$OUT/$t.json" \
    ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/$t.log" 2>&1 || status=1
  for b in cuda vulkan; do
    echo "$t $b: $(grep -c "^\[       OK \] .*/$b\." "$OUT/$t.log" 2>/dev/null || true) passed," \
      "$(grep -c "^\[  FAILED  \] .*/$b\..*(" "$OUT/$t.log" 2>/dev/null || true) failed," \
      "$(grep -c "^\[  SKIPPED \] .*/$b\..*(" "$OUT/$t.log" 2>/dev/null || true) skipped"
  done | tee -a "$OUT/summary.txt"
  grep -E "^\[  FAILED  \]" "$OUT/$t.log" | head -40 | tee -a "$OUT/summary.txt"
done

# The gradient suite on Autodiff<Vulkan> and Autodiff<Cuda>: one backend per program, so the
# counts are the program's (a program whose runtime has no device here skips every case).
for t in ember_autodiff_vulkan_tests ember_autodiff_cuda_tests; do
  [ -x "$BUNDLE/bin/$t" ] || continue
  echo "== $t"
  "$BUNDLE/bin/$t" --gtest_output="json:$OUT/$t.json" \
    ${EMBER_GTEST_FILTER:+--gtest_filter=$EMBER_GTEST_FILTER} >"$OUT/$t.log" 2>&1 || status=1
  echo "$t: $(grep -c "^\[       OK \] " "$OUT/$t.log" 2>/dev/null || true) passed," \
    "$(grep -c "^\[  FAILED  \] .*(" "$OUT/$t.log" 2>/dev/null || true) failed," \
    "$(grep -c "^\[  SKIPPED \] .*(" "$OUT/$t.log" 2>/dev/null || true) skipped" | tee -a "$OUT/summary.txt"
  grep -E "^\[  (FAILED|SKIPPED) \]|no .* device" "$OUT/$t.log" | head -40 | tee -a "$OUT/summary.txt"
done

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

echo "== summary"
# The tests' counts per target, which the test binary prints after GoogleTest's summary.
sed -n '/^target  /,$p' "$OUT/kernel_tests.log" | tee -a "$OUT/summary.txt"
[ -f "$EMBER_CACHE_DIR/autotune.json" ] && cp "$EMBER_CACHE_DIR/autotune.json" "$OUT/"
exit $status
