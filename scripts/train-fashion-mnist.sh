#!/usr/bin/env bash
# The main job: installs what is missing (Debian packages, the dataset-fashion-mnist data),
# builds the `ember` tool (preset "app": release, without tests, benchmarks or examples, in
# build/app), trains the default CNN on Fashion-MNIST on the CPU (the dashboard when this is
# a terminal, plain progress lines otherwise) and evaluates it on the test split.
#
# Usage: scripts/train-fashion-mnist.sh [ember train options...]
#
# The run goes to runs/fashion-mnist-<model> (the --model given, cnn by default), or to the
# --run-dir given, or to EMBER_RUN_DIR. When that folder already holds a run, training
# continues it from its newest checkpoint (after `q` in the dashboard, Ctrl-C or a crash) or,
# when it is finished, goes straight to the evaluation. EMBER_BIN=PATH runs that `ember`
# instead of setting up and building one (the test suite uses it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The model and run directory the options name (--model X / --model=X, likewise --run-dir).
MODEL=cnn
RUN_ARG=
prev=
for arg in "$@"; do
  case "$prev" in
    --model) MODEL="$arg" ;;
    --run-dir) RUN_ARG="$arg" ;;
  esac
  case "$arg" in
    --model=*) MODEL="${arg#--model=}" ;;
    --run-dir=*) RUN_ARG="${arg#--run-dir=}" ;;
  esac
  prev="$arg"
done
RUN="${RUN_ARG:-${EMBER_RUN_DIR:-runs/fashion-mnist-$MODEL}}"
RUN_OPT=()
[ -n "$RUN_ARG" ] || RUN_OPT=(--run-dir "$RUN")

if [ -n "${EMBER_BIN:-}" ]; then
  EMBER="$EMBER_BIN"
else
  scripts/setup.sh
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
  cmake --preset app >/dev/null
  cmake --build --preset app
  EMBER=build/app/ember
fi

echo "== ember train --run-dir $RUN --resume $*"
"$EMBER" train "${RUN_OPT[@]}" --resume "$@"
echo "== ember eval $RUN"
"$EMBER" eval "$RUN"
echo
echo "Next: $EMBER summary $RUN"
echo "      $EMBER infer $RUN IMAGE.png      (a 28x28 gray image, or any PNG/JPEG)"
