// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian blur's weights and its CPU reference: weights sum to 1, sigma 0 is the
// identity, a constant frame stays constant, alpha is untouched, and the separable passes
// equal a direct 2-D convolution computed in double.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "pipeline/error.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/gauss/reference.hpp"
#include "pipeline/thread_pool.hpp"

using namespace starsift;

namespace {

struct Frame {
  int width, height;
  PixelFormat format;
  std::vector<std::byte> bytes;
  Frame(int w, int h, PixelFormat f)
      : width(w),
        height(h),
        format(f),
        bytes(static_cast<std::size_t>(w) * h * bytes_per_pixel(f)) {}
  std::ptrdiff_t stride() const {
    return static_cast<std::ptrdiff_t>(width) * bytes_per_pixel(format);
  }
  ImageView view() { return {bytes.data(), width, height, stride(), format}; }
  ConstImageView cview() const { return {bytes.data(), width, height, stride(), format}; }
  double at(int x, int y, int c) const {
    const std::byte* px =
        bytes.data() + y * stride() + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(format);
    const FormatInfo& info = format_info(format);
    if (info.bytes_per_sample == 1) return std::to_integer<int>(px[c]);
    if (info.bytes_per_sample == 2) {
      std::uint16_t v;
      std::memcpy(&v, px + 2 * c, 2);
      return v;
    }
    float v;
    std::memcpy(&v, px + 4 * c, 4);
    return v;
  }
  void set(int x, int y, int c, double value) {
    std::byte* px =
        bytes.data() + y * stride() + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(format);
    const FormatInfo& info = format_info(format);
    if (info.bytes_per_sample == 1) {
      px[c] = static_cast<std::byte>(static_cast<int>(value));
    } else if (info.bytes_per_sample == 2) {
      const auto v = static_cast<std::uint16_t>(value);
      std::memcpy(px + 2 * c, &v, 2);
    } else {
      const auto v = static_cast<float>(value);
      std::memcpy(px + 4 * c, &v, 4);
    }
  }
};

Frame random_frame(int w, int h, PixelFormat f, unsigned seed) {
  Frame frame(w, h, f);
  std::mt19937 rng(seed);
  const FormatInfo& info = format_info(f);
  const double max = info.is_float ? 1000.0 : (info.bytes_per_sample == 1 ? 255.0 : 65535.0);
  std::uniform_int_distribution<int> value(0, static_cast<int>(max));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < info.channels; ++c) frame.set(x, y, c, value(rng));
  return frame;
}

// The blur as one 2-D sum in double over the product of the two axes' weights.
double direct(const Frame& in, const GaussParams& p, int x, int y, int c) {
  const int rx = p.effective_radius_x(), ry = p.effective_radius_y();
  const auto wx = gauss_weights(p.sigma_x, rx);
  const auto wy = gauss_weights(p.sigma_y, ry);
  double sum = 0.0;
  for (int j = -ry; j <= ry; ++j) {
    for (int i = -rx; i <= rx; ++i) {
      const int sx = border_index(x + i, in.width, p.border);
      const int sy = border_index(y + j, in.height, p.border);
      const double v = (sx < 0 || sy < 0) ? p.border_value : in.at(sx, sy, c);
      sum += static_cast<double>(wx[static_cast<std::size_t>(i + rx)]) *
             static_cast<double>(wy[static_cast<std::size_t>(j + ry)]) * v;
    }
  }
  return sum;
}

}  // namespace

TEST_CASE("gauss weights: symmetric, peaked at the centre, summing to 1", "[gauss]") {
  for (const double sigma : {0.3, 0.5, 1.0, 2.0, 5.0, 25.0, 50.0, 1000.0}) {
    const int radius = static_cast<int>(std::ceil(4 * sigma));
    const auto w = gauss_weights(sigma, radius);
    REQUIRE(w.size() == static_cast<std::size_t>(2 * radius + 1));
    double sum = 0.0;
    for (const float v : w) sum += v;
    CHECK(sum == Approx(1.0).margin(1e-5));
    for (int i = 0; i < radius; ++i) {
      CHECK(w[static_cast<std::size_t>(i)] == w[w.size() - 1 - static_cast<std::size_t>(i)]);
      CHECK(w[static_cast<std::size_t>(i)] <= w[static_cast<std::size_t>(i + 1)]);
    }
  }
  CHECK(gauss_weights(0.0, 0) == std::vector<float>{1.0f});
  CHECK(gauss_weights(2.0, 0) == std::vector<float>{1.0f});
}

TEST_CASE("gauss radius: ceil(4 sigma) unless given; 0 for sigma 0", "[gauss]") {
  GaussParams p;
  p.sigma_x = 1.0;
  p.sigma_y = 2.5;
  CHECK(p.effective_radius_x() == 4);
  CHECK(p.effective_radius_y() == 10);
  p.sigma_x = 0.1;
  CHECK(p.effective_radius_x() == 1);
  p.sigma_x = 0.0;
  CHECK(p.effective_radius_x() == 0);
  p.sigma_y = 3.0;
  p.radius_y = 2;
  CHECK(p.effective_radius_y() == 2);
}

TEST_CASE("gauss parameters out of range are refused with their ranges", "[gauss]") {
  const auto refused = [](GaussParams p, const std::string& allowed) {
    try {
      p.validate_for(PixelFormat::Gray8);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.allowed().find(allowed) != std::string::npos);
    }
  };
  GaussParams p;
  p.sigma_x = -1.0;
  refused(p, "0..1000 px");
  p = {};
  p.sigma_y = std::nan("");
  refused(p, "0..1000 px");
  p = {};
  p.radius_x = 5000;
  refused(p, "1..4000");
  p = {};
  p.border = BorderMode::Constant;
  p.border_value = 300.0;
  refused(p, "0..255");
}

TEST_CASE("gauss with sigma 0 is the identity, for every format", "[gauss]") {
  ThreadPool pool(2);
  for (const PixelFormat f :
       {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F, PixelFormat::Rgba}) {
    const Frame in = random_frame(23, 11, f, 1);
    Frame out(23, 11, f);
    GaussParams p;
    p.sigma_x = 0.0;
    p.sigma_y = 0.0;
    gauss_reference(p, in.cview(), out.view(), pool);
    CHECK(out.bytes == in.bytes);
  }
}

TEST_CASE("gauss keeps a constant frame constant, whatever the border or sigma", "[gauss]") {
  ThreadPool pool(2);
  for (const BorderMode border : {BorderMode::Replicate, BorderMode::Reflect101}) {
    for (const double sigma : {0.7, 3.0, 40.0}) {  // 40: windows far wider than the frame
      Frame in(17, 9, PixelFormat::Gray16);
      for (int y = 0; y < 9; ++y)
        for (int x = 0; x < 17; ++x) in.set(x, y, 0, 12345);
      Frame out(17, 9, PixelFormat::Gray16);
      GaussParams p;
      p.sigma_x = p.sigma_y = sigma;
      p.border = border;
      gauss_reference(p, in.cview(), out.view(), pool);
      CHECK(out.bytes == in.bytes);
    }
  }
}

TEST_CASE("gauss equals a direct 2-D convolution in double", "[gauss]") {
  ThreadPool pool(2);
  for (const PixelFormat f :
       {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F, PixelFormat::Rgba}) {
    for (const BorderMode border :
         {BorderMode::Replicate, BorderMode::Reflect101, BorderMode::Constant}) {
      INFO(to_string(f) << " " << to_string(border));
      const Frame in = random_frame(31, 19, f, 7);
      Frame out(31, 19, f);
      GaussParams p;
      p.sigma_x = 1.7;
      p.sigma_y = 0.9;
      p.border = border;
      p.border_value = 100.0;
      gauss_reference(p, in.cview(), out.view(), pool);
      const FormatInfo& info = format_info(f);
      double worst = 0.0;
      for (int y = 0; y < in.height; ++y) {
        for (int x = 0; x < in.width; ++x) {
          for (int c = 0; c < info.color_channels; ++c) {
            worst = std::max(worst, std::abs(out.at(x, y, c) - direct(in, p, x, y, c)));
          }
          // Alpha (and padding) pass through untouched.
          for (int c = info.color_channels; c < info.channels; ++c) {
            REQUIRE(out.at(x, y, c) == in.at(x, y, c));
          }
        }
      }
      // Integers: rounded to the nearest, so within half a count and float's error on sums of
      // the range (1e-5 of it: 0.66 counts of 16 bits); float samples up to 1000: 1e-3.
      const double range = info.bytes_per_sample == 1 ? 255.0 : 65535.0;
      CHECK(worst <= (info.is_float ? 1e-3 : 0.5 + 1e-5 * range));
    }
  }
}
