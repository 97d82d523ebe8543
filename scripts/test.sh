#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs dependencies, builds everything (tests and benchmarks included) and runs the
# tests, then builds the CPU and element tests with AddressSanitizer and
# UndefinedBehaviorSanitizer into $STARSIFT_BUILD_DIR-asan and runs them there
# (scripts/test_sanitizers.sh; STARSIFT_SANITIZERS=0 skips that). Arguments go to ctest, e.g.
# `scripts/test.sh -R gpu`. Without a GPU the GPU tests are reported as skipped in ctest's
# summary; without nvcc they are not built at all.
# Exits non-zero when the build or any test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${STARSIFT_BUILD_DIR:-build}

scripts/setup.sh
# One CUDA architecture keeps the kernel build short; set STARSIFT_CUDA_ARCHITECTURES to
# test others.
scripts/build.sh \
  -DSTARSIFT_BUILD_TESTS=ON \
  -DSTARSIFT_BUILD_BENCH=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${STARSIFT_CUDA_ARCHITECTURES:-90}"

echo "test: ctest --test-dir $build_dir --output-on-failure $*"
status=0
ctest --test-dir "$build_dir" --output-on-failure "$@" || status=$?
if ((status != 0)); then
  echo "test: FAILED (ctest exit status $status)" >&2
fi

# The CPU and element tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer
# in a tree of their own; STARSIFT_SANITIZERS=0 skips them for a quick local run.
sanitizer_status=0
if [[ ${STARSIFT_SANITIZERS:-1} != 0 ]]; then
  scripts/test_sanitizers.sh "$@" || sanitizer_status=$?
  if ((sanitizer_status != 0)); then
    echo "test: FAILED under the sanitizers (exit status $sanitizer_status)" >&2
  fi
else
  echo "test: sanitizer run skipped (STARSIFT_SANITIZERS=0)"
fi

if ((status == 0 && sanitizer_status == 0)); then
  echo "test: passed"
  exit 0
fi
exit $((status != 0 ? status : sanitizer_status))
