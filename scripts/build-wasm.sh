#!/usr/bin/env bash
# Builds the WebAssembly module (preset wasm) with Debian's emscripten (scripts/setup-wasm.sh
# installs it): build/wasm/web/ember-web.{js,wasm} plus the wrapper ember.js, and the
# Fashion-MNIST page with them in build/wasm/site/ (serve it: python3 -m http.server -d
# build/wasm/site; put a run's model.safetensors and run.json in build/wasm/site/model/).
# Usage: scripts/build-wasm.sh   (JOBS=n sets the parallel compile jobs; default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-wasm.sh
# Debian's emscripten finds its node modules (acorn, ...) through NODE_PATH.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
cmake --preset wasm >/dev/null
cmake --build --preset wasm -j "${JOBS:-2}"
SITE=build/wasm/site
mkdir -p "$SITE"
cp examples/web-fashion-mnist/{index.html,app.js,style.css} build/wasm/web/{ember-web.js,ember-web.wasm,ember.js} "$SITE/"
for f in ember-web.wasm ember-web.js ember.js; do
  printf '%-16s %8d bytes, %7d gzipped\n' "$f" "$(stat -c %s "build/wasm/web/$f")" \
    "$(gzip -9 -c "build/wasm/web/$f" | wc -c)"
done
echo "site: $SITE"
