#!/usr/bin/env bash
# Sets up, builds and runs the main job. For now: the tensor-basics example
# (the Fashion-MNIST training job takes this command over once it exists).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tensor-basics
build/release/examples/tensor-basics
