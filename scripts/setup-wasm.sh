#!/usr/bin/env bash
# Installs what the WebAssembly build and its tests need (docs/architecture.md, "WebAssembly").
# Idempotent: runs apt-get only when something is missing. Run as root (or with sudo
# available). scripts/build-wasm.sh and scripts/test-wasm.sh call it.
set -euo pipefail

# The build tools and the one header-only library the wasm build shares with the native one
# (scripts/setup.sh installs them too), emscripten (em++ with its clang 14, lld, binaryen;
# nodejs), chromium for tests/wasm/browser_test.js, and the Fashion-MNIST test images.
PACKAGES=(cmake ninja-build ccache nlohmann-json3-dev emscripten chromium dataset-fashion-mnist)

. "$(dirname "$0")/apt-install.sh"
ensure_packages setup-wasm "WebAssembly build and test" "${PACKAGES[@]}"
