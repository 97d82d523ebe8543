#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configures and builds starsift (Release) into build/ (or $STARSIFT_BUILD_DIR).
# Extra arguments go to the cmake configure step, e.g.
#   scripts/build.sh -DSTARSIFT_CUDA=OFF
#   scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES="80;90"
# The CUDA backend is built when nvcc is on PATH or at /usr/local/cuda/bin/nvcc.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${STARSIFT_BUILD_DIR:-build}
configure=(-S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release)
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  configure+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi

echo "build: cmake ${configure[*]} $*"
cmake "${configure[@]}" "$@"
echo "build: cmake --build $build_dir -j$(nproc)"
cmake --build "$build_dir" -j"$(nproc)"
