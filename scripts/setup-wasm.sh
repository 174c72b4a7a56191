#!/usr/bin/env bash
# Installs what the WebAssembly build and its tests need (docs/architecture.md, "WebAssembly").
# Idempotent: runs apt-get only when something is missing. Run as root (or with sudo
# available). scripts/build-wasm.sh and scripts/test-wasm.sh call it.
set -euo pipefail

# The build tools and the one header-only library the wasm build shares with the native one
# (scripts/setup.sh installs them too), emscripten (em++ with its clang 14, lld, binaryen;
# nodejs), chromium for tests/wasm/browser_test.js, and the Fashion-MNIST test images.
PACKAGES=(cmake ninja-build ccache nlohmann-json3-dev emscripten chromium dataset-fashion-mnist)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup-wasm: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup-wasm: all WebAssembly build and test dependencies present"
fi
