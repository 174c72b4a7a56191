#!/usr/bin/env bash
# Sets up, builds (release preset) and runs the whole test suite, then builds and runs the
# find_package(ember) consumer against an installed tree. Usage: scripts/test.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${1:-release}"

scripts/setup.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
cmake --preset "$PRESET" >/dev/null
cmake --build --preset "$PRESET"
# Each test binary runs in one process (ctest --preset "$PRESET" runs the same cases one
# process per case, ~10x slower). `set -o pipefail` makes a failing binary fail the script.
T="build/$PRESET/tests"
# A passing binary shows its summary; a failing one its whole output (--gtest_brief prints the
# failures as they happen, not in the summary).
run() {
  echo "== $*"
  local log status=0
  log="$(mktemp)"
  "$@" --gtest_brief=1 >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    cat "$log"
    echo "FAILED (exit $status): $*"
  else
    tail -n 4 "$log"
  fi
  rm -f "$log"
  return "$status"
}
run "$T/ember_core_tests"
# The op descriptions (ember::ir): registry, shape/dtype rules, the generated contract.
run "$T/ember_ir_tests"
# The conformance suite over Cpu, Autodiff<Cpu> and Dispatch (on cpu), then Dispatch on
# cpu+autodiff. The SIMD kernels are chosen at run time: the lower variants too.
run "$T/ember_conformance"
EMBER_DEVICE=cpu+autodiff run "$T/ember_conformance" --gtest_filter='*/dispatch.*'
for isa in base avx2; do
  EMBER_CPU_ISA=$isa run "$T/ember_conformance" --gtest_filter='*/cpu.*:*/cpu_composite.*'
done
run "$T/ember_dispatch_tests"
# Quantization: schemes, quantize/dequantize (PyTorch fixtures), the int8 VNNI linear, errors.
run "$T/ember_quant_tests"
EMBER_CPU_AMX=0 run "$T/ember_quant_tests" --gtest_filter='QuantizedLinear.*'  # VNNI, no AMX
EMBER_CPU_ISA=base run "$T/ember_quant_tests" --gtest_filter='QuantizedLinear.*'  # no VNNI
# Gradients: finite differences and PyTorch fixtures, on Autodiff<Cpu> and on Dispatch.
run "$T/ember_autodiff_tests"
run "$T/ember_autodiff_dispatch_tests"  # sets EMBER_DEVICE=cpu+autodiff itself
# Fusion<Cpu>: fused blocks, random programs fused against unfused; the conformance suite on
# Fusion<Cpu> and Autodiff<Fusion<Cpu>>; the gradient suite on Autodiff<Fusion<Cpu>>.
run "$T/ember_fusion_tests"
run "$T/ember_conformance_fusion"
run "$T/ember_autodiff_fusion_tests"
# Modules, layers, losses, optimizers, schedulers and weights I/O against PyTorch fixtures.
run "$T/ember_nn_tests"
# Ember's own GEMM, what the WebAssembly build uses instead of OpenBLAS.
run "$T/ember_gemm_portable_tests"
# Datasets, data loader, IDX/CSV/image-folder sources, transforms (Fashion-MNIST when installed).
run "$T/ember_data_tests"
# Training: metrics, logs, checkpoints, resume, the Evaluator, and the dashboard in tmux.
run "$T/ember_train_tests"
# The ember tool end to end (train/eval/infer/summary, errors) and SIGKILL + --resume; the
# examples for one epoch on a subset.
run "$T/ember_tools_tests"
# Distributed: collectives over 2 and 3 local processes (Gloo), timeouts, a killed and a
# missing rank; data-parallel `ember train --nproc 2` against one process; the launcher.
run "$T/ember_dist_tests"
# The kernel language: every IR feature on the CPU target, through NVRTC (when a CUDA toolkit
# is installed) and on Vulkan (llvmpipe without a GPU); CUDA devices when present. Counts per
# target (printed by the test binary after GoogleTest's summary), then the custom-kernel
# example on every device.
echo "== $T/kernel/ember_kernel_tests"
"$T/kernel/ember_kernel_tests" --gtest_brief=1 | sed -n '/^\[==========\]/,$p'
"build/$PRESET/custom-kernel" | tail -n 4
# The GPU backends (ember::Vulkan, ember::Cuda): their own cases, then the conformance suite
# on them; Vulkan runs on llvmpipe without a GPU, CUDA is skipped (with the reason) there.
# Then the gradient suite on Autodiff<Vulkan>, the conformance suite's Dispatch cases on the
# device vulkan:0 (Dispatch's GPU stacks; ember_dispatch_tests above visits them too), and
# the nn suite with its Dispatch cases on vulkan:0+autodiff.
if [ -x "$T/gpu/ember_gpu_tests" ]; then
  run "$T/gpu/ember_gpu_tests"
  run "$T/gpu/ember_conformance_vulkan"
  run "$T/gpu/ember_conformance_fusion_vulkan"  # the suite on Fusion<Vulkan>
  run "$T/gpu/ember_autodiff_vulkan_tests"
  run "$T/gpu/ember_autodiff_fusion_vulkan_tests"  # the gradient suite on Autodiff<Fusion<Vulkan>>
  EMBER_DEVICE=vulkan:0 run "$T/ember_conformance" --gtest_filter='*/dispatch.*'
  EMBER_DEVICE=vulkan:0 run "$T/ember_nn_tests"
fi
# ONNX import: the ONNX backend node tests (../shared/onnx-tests, skipped when absent), real
# models against onnxruntime, bad models; the code `ember onnx convert` generated at build
# time; a 20-second run of the loader fuzzer.
run "$T/ember_onnx_tests"
run "$T/ember_onnx_codegen_tests"
echo "== ember_onnx_fuzz (20 s)"
"$T/ember_onnx_fuzz" 20 ../shared/onnx-tests/node tests/fixtures/onnx | tail -n 1
EX="build/$PRESET/example-runs"
rm -rf "$EX" && mkdir -p "$EX"
(cd "$EX" && OMP_WAIT_POLICY=passive ../examples/fashion-mnist --epochs 1 --items 1000 \
  --run-dir run >fashion-mnist.log && echo "== examples/fashion-mnist: $(tail -n 1 fashion-mnist.log)")
(cd "$EX" && OMP_WAIT_POLICY=passive ../examples/custom-training-loop --epochs 1 --items 1000 \
  >custom-training-loop.log && echo "== examples/custom-training-loop: $(tail -n 1 custom-training-loop.log)")

if [ "$PRESET" = "release" ]; then
  # WebAssembly: emscripten and chromium from Debian, the module (about 2.5 minutes cold on 2
  # cores), 100 Fashion-MNIST test images in node and through the page in headless Chromium
  # against native Ember, the page's error messages, the size budget.
  scripts/test-wasm.sh
  # find_package(ember) from another project, against the installed tree.
  rm -rf build/install build/cmake-consumer
  cmake --install build/release --prefix build/install >/dev/null
  cmake -S examples/cmake-consumer -B build/cmake-consumer -G Ninja \
    -DCMAKE_PREFIX_PATH="$PWD/build/install" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/cmake-consumer >/dev/null
  build/cmake-consumer/consumer
fi
