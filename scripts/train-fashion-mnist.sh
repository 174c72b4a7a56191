#!/usr/bin/env bash
# The main job: installs what is missing (Debian packages, the dataset-fashion-mnist data),
# builds the `ember` tool (preset "app": release, without tests, benchmarks or examples, in
# build/app), trains the default CNN on Fashion-MNIST on the CPU (the dashboard when this is
# a terminal, plain progress lines otherwise) and evaluates it on the test split.
#
# Usage: scripts/train-fashion-mnist.sh [ember train options...]
#
# The run goes to runs/fashion-mnist-cnn (EMBER_RUN_DIR to change it). When that folder
# already holds a run, training continues it from its newest checkpoint (after `q` in the
# dashboard, Ctrl-C or a crash) or, when it is finished, goes straight to the evaluation.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN="${EMBER_RUN_DIR:-runs/fashion-mnist-cnn}"

scripts/setup.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
cmake --preset app >/dev/null
cmake --build --preset app
EMBER=build/app/ember

echo "== ember train --run-dir $RUN --resume $*"
"$EMBER" train --run-dir "$RUN" --resume "$@"
echo "== ember eval $RUN"
"$EMBER" eval "$RUN"
echo
echo "Next: $EMBER summary $RUN"
echo "      $EMBER infer $RUN IMAGE.png      (a 28x28 gray image, or any PNG/JPEG)"
