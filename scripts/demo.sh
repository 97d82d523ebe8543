#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's main command on a fresh Debian 12 machine: installs the dependencies
# (scripts/setup.sh), builds into build/ (scripts/build.sh), then runs
#
#   build/bin/starsiftd --config config/demo.yaml --duration 20
#
# in the foreground: the synthetic sky (no camera needed) through whitening and detection for
# 20 s, then a summary (frames, measured rate, drops, detections, the sky's movers found) and
# where the files are (JSON lines, the preview PNG) under out/starsiftd/. Without a GPU the
# chain runs on the CPU (backend auto). Arguments go to starsiftd and replace --duration 20
# when they hold a --duration of their own (`scripts/demo.sh --duration 60`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${STARSIFT_BUILD_DIR:-build}

scripts/setup.sh
# Kernels for this machine's GPU only (the release default builds five architectures, which
# takes several times as long); without a GPU the one architecture the tests use.
if nvidia-smi -L >/dev/null 2>&1; then
  architectures=native
else
  architectures=90
fi
scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES="${STARSIFT_CUDA_ARCHITECTURES:-$architectures}"

args=("$@")
duration=(--duration 20)
for arg in "${args[@]}"; do
  case $arg in
    --duration | --duration=*) duration=() ;;
  esac
done

echo
echo "demo: $build_dir/bin/starsiftd --config config/demo.yaml ${duration[*]} ${args[*]}"
exec "$build_dir/bin/starsiftd" --config config/demo.yaml "${duration[@]}" "${args[@]}"
