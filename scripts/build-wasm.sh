#!/usr/bin/env bash
# Builds the WebAssembly module with Debian's emscripten (scripts/setup-wasm.sh installs it):
# presets wasm (single-threaded) and wasm-threads (Web Workers) give
# build/wasm/web/ember-web{,-threads}.{js,wasm} beside the wrapper ember.js, and the
# Fashion-MNIST page with them in build/wasm/site/. Serve it with
# `python3 build/wasm/site/serve.py` (sends the cross-origin isolation headers: threads) or any
# static server (one thread); put a run's model.safetensors and run.json in
# build/wasm/site/model/. Usage: scripts/build-wasm.sh   (JOBS=n: parallel compile jobs, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-wasm.sh
# Debian's emscripten finds its node modules (acorn, ...) through NODE_PATH.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Two builds: single-threaded (preset wasm) and threaded (wasm-threads: Web Workers, for
# cross-origin isolated pages); src/web/ember.js loads the one the page allows. The threaded
# files are copied into build/wasm/web beside the others.
for preset in wasm wasm-threads; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "${JOBS:-2}"
done
cp build/wasm-threads/web/ember-web-threads.{js,wasm,worker.js} build/wasm/web/
SITE=build/wasm/site
mkdir -p "$SITE"
cp examples/web-fashion-mnist/{index.html,app.js,style.css,serve.py} build/wasm/web/{ember-web,ember-web-threads}.{js,wasm} \
  build/wasm/web/{ember-web-threads.worker.js,ember.js} "$SITE/"
for f in ember-web.wasm ember-web.js ember-web-threads.wasm ember-web-threads.js \
         ember-web-threads.worker.js ember.js; do
  printf '%-28s %8d bytes, %7d gzipped\n' "$f" "$(stat -c %s "build/wasm/web/$f")" \
    "$(gzip -9 -c "build/wasm/web/$f" | wc -c)"
done
echo "site: $SITE (python3 $SITE/serve.py: threads; python3 -m http.server -d $SITE: one thread)"
