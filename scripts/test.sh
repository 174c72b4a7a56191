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
# The SIMD kernels are chosen at run time; check the lower variants too (ctest runs the best).
for isa in base avx2; do
  echo "conformance suite with EMBER_CPU_ISA=$isa"
  EMBER_CPU_ISA=$isa "build/$PRESET/tests/ember_conformance" --gtest_brief=1 | tail -n 3
done
ctest --preset "$PRESET"

if [ "$PRESET" = "release" ]; then
  # find_package(ember) from another project, against the installed tree.
  rm -rf build/install build/cmake-consumer
  cmake --install build/release --prefix build/install >/dev/null
  cmake -S examples/cmake-consumer -B build/cmake-consumer -G Ninja \
    -DCMAKE_PREFIX_PATH="$PWD/build/install" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/cmake-consumer >/dev/null
  build/cmake-consumer/consumer
fi
