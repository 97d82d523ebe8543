// SPDX-License-Identifier: LGPL-2.1-or-later
// The fast path's power (fast_math.hpp) against double precision, over the ranges it is used
// on: the errors fast_math.hpp states.
#include <catch2/catch.hpp>

#include <cmath>

#include "pipeline/brightness/fast_math.hpp"

using namespace starsift::brightness_math;

TEST_CASE("exp2_approx within 3e-7 relative on -126..126", "[brightness]") {
  double worst = 0.0;
  for (int i = -1260000; i <= 1260000; ++i) {
    const float x = static_cast<float>(i) * 1.0e-4f;
    const double exact = std::exp2(static_cast<double>(x));
    worst = std::max(worst, std::abs(exp2_approx(x) / exact - 1.0));
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 3e-7);
  // Clamped beyond: never 0, never inf.
  CHECK(exp2_approx(-1000.0f) == std::exp2(-126.0f));
  CHECK(exp2_approx(kLog2OfZero) == std::exp2(-126.0f));
  CHECK(exp2_approx(1000.0f) == Approx(std::exp2(126.0)).epsilon(3e-7));
  CHECK(exp2_approx(0.0f) == Approx(1.0).epsilon(1e-7));
}

TEST_CASE("log2_approx within 6e-7 down to 2^-16, within 1e-7 relative below", "[brightness]") {
  double worst = 0.0;
  double worst_relative = 0.0;
  const auto check = [&](float y) {
    const double exact = std::log2(static_cast<double>(y));
    const double error = std::abs(log2_approx(y) - exact);
    if (y >= 1.0f / 65536.0f) {
      worst = std::max(worst, error);
    } else {
      worst_relative = std::max(worst_relative, error / std::abs(exact));
    }
  };
  for (float y = 1.0e-30f; y <= 1.0f; y *= 1.0001f) check(y);
  // Every float of [0.5, 2): the mantissas.
  for (float y = 0.5f; y < 2.0f; y = std::nextafter(y, 2.0f)) check(y);
  INFO("worst absolute error " << worst << ", relative below 2^-16 " << worst_relative);
  CHECK(worst < 6e-7);
  CHECK(worst_relative < 1e-7);
  CHECK(log2_approx(1.0f) == 0.0f);
  CHECK(log2_approx(0.0f) == kLog2OfZero);
  CHECK(log2_approx(-1.0f) == kLog2OfZero);
  CHECK(log2_approx(std::nanf("")) == kLog2OfZero);
}

TEST_CASE("the power through exp2 and log2 lands within 2e-6 of Y^e", "[brightness]") {
  // Y over 16-bit values, e over 2^-4..2^4 (strength up to 4): relative error where Y^e is at
  // least one 16-bit count, and in 16-bit counts everywhere.
  double worst = 0.0;
  double worst_counts = 0.0;
  for (int v = 1; v <= 65535; v += 17) {
    const double y = v / 65535.0;
    for (double e = 1.0 / 16.0; e <= 16.0; e *= 1.07) {
      const double approx = exp2_approx(static_cast<float>(e) * log2_approx(static_cast<float>(y)));
      const double exact = std::pow(y, e);
      if (exact >= 1.0 / 65536.0) worst = std::max(worst, std::abs(approx - exact) / exact);
      worst_counts = std::max(worst_counts, std::abs(approx - exact) * 65535.0);
    }
  }
  INFO("worst relative error " << worst << ", in 16-bit counts " << worst_counts);
  CHECK(worst < 2e-6);
  CHECK(worst_counts < 0.03);
}
