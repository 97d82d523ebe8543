#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds a CPU-only tree with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ (or $STARSIFT_BUILD_DIR-asan, or $STARSIFT_SANITIZE_BUILD_DIR) and runs every
# test under it: the CPU unit tests, the element tests, and the daemon's and the CLI's tests,
# which run the instrumented programs as processes. Arguments go to ctest. scripts/test.sh
# calls this after the normal tests unless STARSIFT_SANITIZERS=0.
#
# Everything but CUDA and the benchmarks is built, at -O1 with line tables.
# Exits non-zero when the build or any test fails, or a sanitizer reports anything.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${STARSIFT_SANITIZE_BUILD_DIR:-${STARSIFT_BUILD_DIR:-build}-asan}
sanitizers=${STARSIFT_SANITIZE:-address,undefined}

configure=(-S . -B "$build_dir"
  -DCMAKE_BUILD_TYPE=Release
  # -O1 keeps the run fast enough and the stacks readable; asserts stay on.
  -DCMAKE_C_FLAGS_RELEASE="-O1 -g1"
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1"
  -DSTARSIFT_CUDA=OFF
  -DSTARSIFT_BUILD_TESTS=ON
  -DSTARSIFT_BUILD_BENCH=OFF
  -DSTARSIFT_SANITIZE="$sanitizers")

echo "sanitizers: cmake ${configure[*]}"
cmake "${configure[@]}"
echo "sanitizers: cmake --build $build_dir -j$(nproc)"
cmake --build "$build_dir" -j"$(nproc)"

# GLib and GStreamer keep type registrations, the registry and thread pools until exit by
# design, so LeakSanitizer would report them on every run; leaks are not checked here.
# allocator_may_return_null: a malloc too large for the machine returns NULL, as it does
# without ASan, so the code's own out-of-memory path runs (the tests ask for such sizes).
# Every other report stops the test program with a non-zero status.
# Options already in the environment come last, so they override these.
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}
# The element tests spawn gst-inspect-1.0, and GStreamer scans plugins in gst-plugin-scanner;
# neither is built with ASan, and both load the instrumented plugin, which needs the ASan
# runtime loaded first.
if [[ $sanitizers == *address* ]]; then
  asan_runtime=$(${CXX:-c++} -print-file-name=libasan.so)
  if [[ -e $asan_runtime ]]; then
    export LD_PRELOAD=$asan_runtime${LD_PRELOAD:+:$LD_PRELOAD}
  fi
fi

echo "sanitizers: ctest --test-dir $build_dir --output-on-failure $* (ASAN_OPTIONS=$ASAN_OPTIONS)"
status=0
ctest --test-dir "$build_dir" --output-on-failure "$@" || status=$?
if ((status != 0)); then
  echo "sanitizers: FAILED (ctest exit status $status)" >&2
else
  echo "sanitizers: passed ($sanitizers)"
fi
exit "$status"
