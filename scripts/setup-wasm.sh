#!/usr/bin/env bash
# Installs what the WebAssembly build and its tests need (docs/architecture.md, "WebAssembly"):
# Debian's emscripten (em++, with its clang, lld and binaryen) and chromium for the headless
# browser test. Idempotent: runs apt-get only when something is missing. Run as root (or
# with sudo available). scripts/build-wasm.sh and scripts/test-wasm.sh call it.
set -euo pipefail

PACKAGES=(emscripten chromium)

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
  echo "setup-wasm: emscripten and chromium present"
fi
