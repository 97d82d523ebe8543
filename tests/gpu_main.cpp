// SPDX-License-Identifier: LGPL-2.1-or-later
// Entry point of the GPU tests: runs them when a CUDA device is usable, otherwise says why
// and exits 77 so ctest reports the test as skipped rather than passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "pipeline/backend.hpp"

int main(int argc, char** argv) {
  const std::string why_not = starsift::cuda_unusable_reason(0);
  if (!why_not.empty()) {
    std::printf("SKIPPED: GPU tests need a CUDA device: %s\n", why_not.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
