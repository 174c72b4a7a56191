#!/usr/bin/env bash
# Installs the Debian packages Ember's build needs, and Fashion-MNIST (dataset-fashion-mnist,
# the default training data). Idempotent: runs apt-get only when something is missing. Run as
# root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libopenblas-dev libdnnl-dev zlib1g-dev libdeflate-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libncurses-dev libstb-dev libzip-dev libcsv-dev
  dataset-fashion-mnist
  tmux  # the dashboard test drives the training TUI through tmux
)
# ember::vulkan: Vulkan headers and loader, shaderc with glslang and SPIRV-Tools (linked
# statically), Mesa's Vulkan drivers (llvmpipe runs every Vulkan test without a GPU),
# vulkaninfo for diagnostics. ember::cuda needs only a CUDA toolkit, not installed here.
PACKAGES+=(libvulkan-dev mesa-vulkan-drivers libshaderc-dev glslang-dev spirv-tools vulkan-tools)
# ONNX import (ember::onnx): Debian's libonnx-dev (the protobuf classes generated from
# onnx.proto, libonnx_proto) and protobuf's headers.
PACKAGES+=(libonnx-dev libprotobuf-dev)
# Distributed training (ember::dist): Gloo's collectives over TCP; Debian's package also
# pulls in hiredis and ibverbs headers, which Ember does not use.
PACKAGES+=(libgloo-dev)

. "$(dirname "$0")/apt-install.sh"
ensure_packages setup build "${PACKAGES[@]}"
