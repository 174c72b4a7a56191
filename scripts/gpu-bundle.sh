#!/usr/bin/env bash
# Builds the GPU test and benchmark programs here and gathers everything a GPU machine without
# a package registry needs to run them into one folder (docs/gpu.md):
#   bin/   ember_kernel_tests, custom-kernel, bench_kernel_gpu, ember_gpu_tests,
#          ember_conformance_vulkan, ember_conformance_cuda, ember_autodiff_vulkan_tests,
#          ember_autodiff_cuda_tests; ember_conformance, ember_dispatch_tests,
#          ember_autodiff_dispatch_tests, ember_nn_tests (Dispatch on cuda:N / vulkan:N);
#          ember_conformance_fusion_vulkan, ember_conformance_fusion_cuda,
#          ember_autodiff_fusion_vulkan_tests, ember_autodiff_fusion_cuda_tests; bench_ops_gpu,
#          bench_fusion_gpu; the ember tool (stripped)
#   data/fashion-mnist/  the dataset, when installed here (EMBER_BUNDLE_DATA=0: left out)
#   lib/   the shared libraries they need but glibc's (oneDNN, OpenBLAS, libgomp, ...)
#   debs/  the Vulkan loader and what it needs (Debian packages, unpacked there)
#   scripts/gpu-test.sh, benchmarks/gpu/side_by_side.py, ops_side_by_side.py,
#   fusion_side_by_side.py,
#   benchmarks/train_fashion_mnist.py
# A machine's 64 MiB carry limit may need a smaller bundle: gpu-test.sh skips the programs
# that are missing, so delete what a run does not need.
# Usage: scripts/gpu-bundle.sh OUT_DIR [PRESET]   (EMBER_BUILD_DIR=DIR: use that build folder)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:?usage: scripts/gpu-bundle.sh OUT_DIR [PRESET]}"
PRESET="${2:-release}"

# EMBER_BUILD_DIR: an already configured build folder to use instead of the preset's.
B="${EMBER_BUILD_DIR:-build/$PRESET}"
if [ -z "${EMBER_BUILD_DIR:-}" ]; then cmake --preset "$PRESET" >/dev/null; fi
cmake --build "$B" -j"${EMBER_JOBS:-2}" --target ember_kernel_tests custom-kernel bench_kernel_gpu \
  ember_gpu_tests ember_conformance_vulkan ember_conformance_cuda ember_autodiff_vulkan_tests \
  ember_autodiff_cuda_tests ember_conformance ember_dispatch_tests ember_autodiff_dispatch_tests \
  ember_nn_tests ember bench_ops_gpu bench_fusion_gpu ember_conformance_fusion_vulkan \
  ember_conformance_fusion_cuda ember_autodiff_fusion_vulkan_tests ember_autodiff_fusion_cuda_tests

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/debs" "$OUT/scripts" "$OUT/benchmarks/gpu"
cp "$B/tests/kernel/ember_kernel_tests" "$B/custom-kernel" "$B/benchmarks/gpu/bench_kernel_gpu" \
  "$B/tests/gpu/ember_gpu_tests" "$B/tests/gpu/ember_conformance_vulkan" \
  "$B/tests/gpu/ember_conformance_cuda" "$B/tests/gpu/ember_autodiff_vulkan_tests" \
  "$B/tests/gpu/ember_autodiff_cuda_tests" "$B/tests/ember_conformance" \
  "$B/tests/ember_dispatch_tests" "$B/tests/ember_autodiff_dispatch_tests" "$B/tests/ember_nn_tests" \
  "$B/ember" "$B/bench_ops_gpu" "$B/bench_fusion_gpu" "$B/tests/gpu/ember_conformance_fusion_vulkan" \
  "$B/tests/gpu/ember_conformance_fusion_cuda" "$B/tests/gpu/ember_autodiff_fusion_vulkan_tests" \
  "$B/tests/gpu/ember_autodiff_fusion_cuda_tests" "$OUT/bin/"
strip "$OUT"/bin/*
# Every shared library the programs load except glibc's own (the machine's glibc runs them):
# oneDNN, OpenBLAS, libgomp, Google Benchmark, ... that a GPU machine may lack.
for b in "$OUT"/bin/*; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$OUT/lib/"; done
cp scripts/gpu-test.sh "$OUT/scripts/"
# The conformance and gradient programs read tests/fixtures at the path compiled in (this
# checkout's): the bundle carries them and records that path for gpu-test.sh to link.
cp -r tests/fixtures "$OUT/fixtures"
echo "$PWD/tests/fixtures" >"$OUT/fixture-dir"
cp benchmarks/gpu/side_by_side.py benchmarks/gpu/ops_side_by_side.py \
  benchmarks/gpu/fusion_side_by_side.py "$OUT/benchmarks/gpu/"
cp benchmarks/train_fashion_mnist.py "$OUT/benchmarks/"
FMNIST=/usr/share/datasets/fashion-mnist
if [ "${EMBER_BUNDLE_DATA:-1}" != 0 ] && [ -d "$FMNIST" ]; then
  mkdir -p "$OUT/data" && cp -r "$FMNIST" "$OUT/data/fashion-mnist"
fi

# The Vulkan loader with GLVND (the NVIDIA ICD needs libGLX) for amd64, from Debian.
lists=$(mktemp -d)
mkdir -p "$lists/partial"
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
apt-get "${o[@]}" update -qq
(cd "$OUT/debs" && apt-get "${o[@]}" download -qq libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 \
  libglx0 libgles2 vulkan-tools libwayland-client0 libx11-6 libxcb1 libxau6 libxdmcp6 libbsd0 \
  libmd0 libffi8 2>/dev/null)
rm -rf "$lists"
du -sh "$OUT"
