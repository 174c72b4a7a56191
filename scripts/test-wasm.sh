#!/usr/bin/env bash
# The WebAssembly tests: builds the module (scripts/build-wasm.sh) and native Ember's `ember`
# and ember_web_reference (release preset), trains a small CNN and MLP run (1 epoch on 3000
# images), then
#   - tests/wasm/node_test.js, for the single-threaded and the threaded build: 100
#     Fashion-MNIST test images through the module in node against native Ember (class
#     identical, probabilities within 1e-4), a batch on 1 and on all threads, the errors;
#   - tests/wasm/browser_test.js: the same 100 images through the page in headless Chromium,
#     served cross-origin isolated (threaded build) and plainly (single-threaded), the page's
#     error messages, a screenshot (docs/web-fashion-mnist.png with --screenshot);
#   - the size budget: .wasm + .js at most 2 MB gzipped.
# scripts/test.sh (CI) runs it after the release build: about 7 minutes cold on 2 cores (apt
# ~1, the two emscripten builds ~5, the tests ~1). Usage: scripts/test-wasm.sh [--screenshot]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
scripts/build-wasm.sh
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Native Ember: build/release (the preset scripts/test.sh builds), or EMBER_NATIVE_BUILD, an
# already configured build folder.
B="${EMBER_NATIVE_BUILD:-build/release}"
if [ "$B" = build/release ]; then cmake --preset release >/dev/null; fi
cmake --build "$B" -j "${JOBS:-2}" --target ember ember_web_reference
W=build/wasm/test
IDX=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
rm -rf "$W" && mkdir -p "$W"
for m in cnn mlp; do
  "$B/ember" train --model $m --epochs 1 --limit 3000 --valid-size 300 --threads 2 \
    --run-dir "$W/$m" >"$W/train-$m.log"
done
"$B/tests/ember_web_reference" "$W/cnn" "$IDX" 100 "$W/reference.json"
for threads in 0 auto; do
  echo "== EMBER_WEB_THREADS=$threads tests/wasm/node_test.js"
  EMBER_WEB_THREADS=$threads node tests/wasm/node_test.js build/wasm/web "$W/cnn" "$W/mlp" \
    "$IDX" "$W/reference.json"
done
SHOT="$W/screenshot.png"
if [ "${1:-}" = "--screenshot" ]; then SHOT=docs/web-fashion-mnist.png; fi
echo "== tests/wasm/browser_test.js"
node tests/wasm/browser_test.js build/wasm/site "$W/cnn" "$W/mlp" "$IDX" \
  "$W/reference.json" "$SHOT"
# A page downloads one build: its .wasm and .js (and the worker's .js) plus ember.js.
gz() { gzip -9 -c "build/wasm/web/$1" | wc -c; }
single=$(($(gz ember-web.wasm) + $(gz ember-web.js) + $(gz ember.js)))
threaded=$(($(gz ember-web-threads.wasm) + $(gz ember-web-threads.js) + \
  $(gz ember-web-threads.worker.js) + $(gz ember.js)))
echo "== size, each file gzipped: single-threaded build + ember.js $single bytes, threaded" \
  "build + worker + ember.js $threaded bytes (budget 2097152 each)"
[ "$single" -le 2097152 ] && [ "$threaded" -le 2097152 ]
