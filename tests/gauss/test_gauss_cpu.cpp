// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU backend's Gaussian blur (gauss_cpu.hpp) against the reference: the same sums in the
// same order, so the same results bit for bit, in every format, border and sigma, on padded
// rows, on frames narrower than the window, on rows wider than the vector blocks and on rows
// cut into strips.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "pipeline/gauss/gauss_cpu.hpp"
#include "pipeline/gauss/reference.hpp"
#include "pipeline/thread_pool.hpp"

using namespace starsift;

namespace {

// A frame of random bytes with `pad` spare bytes at the end of each row.
struct Padded {
  int width, height, pad;
  PixelFormat format;
  std::vector<std::byte> bytes;
  Padded(int w, int h, PixelFormat f, int p)
      : width(w),
        height(h),
        pad(p),
        format(f),
        bytes(static_cast<std::size_t>(stride_of(w, f, p)) * h) {}
  static std::ptrdiff_t stride_of(int w, PixelFormat f, int p) {
    return static_cast<std::ptrdiff_t>(w) * bytes_per_pixel(f) + p;
  }
  std::ptrdiff_t stride() const { return stride_of(width, format, pad); }
  ImageView view() { return {bytes.data(), width, height, stride(), format}; }
  ConstImageView cview() const { return {bytes.data(), width, height, stride(), format}; }
};

Padded random_frame(int w, int h, PixelFormat f, unsigned seed) {
  Padded frame(w, h, f, 12);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : frame.bytes) b = static_cast<std::byte>(byte(rng));
  if (f == PixelFormat::Gray32F) {  // finite floats: values 0..1000
    std::uniform_real_distribution<float> value(0.0f, 1000.0f);
    for (int y = 0; y < h; ++y) {
      auto* row = frame.view().row_as<float>(y);
      for (int x = 0; x < w; ++x) row[x] = value(rng);
    }
  }
  return frame;
}

// The rows' pixels (padding left out) are the same bytes.
bool same_pixels(const Padded& a, const Padded& b) {
  const std::size_t bytes = static_cast<std::size_t>(a.width) * bytes_per_pixel(a.format);
  for (int y = 0; y < a.height; ++y) {
    if (std::memcmp(a.cview().row(y), b.cview().row(y), bytes) != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the CPU Gaussian blur is the reference's, bit for bit", "[gauss]") {
  ThreadPool pool(2);
  GaussCpu cpu;
  // 301 wide: whole blocks of 8 vectors (128 floats with AVX-512), then single vectors, then
  // single samples, in the sums and the conversions; at sigma 6, two strips. 1100 wide: rows
  // cut into 2 to 4 strips (of 256 to 1024 samples) at every sigma.
  const struct {
    int w, h;
  } shapes[] = {{1, 1}, {37, 1}, {1, 23}, {5, 4}, {64, 33}, {301, 19}, {1100, 6}};
  for (const PixelFormat f : {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                              PixelFormat::Rgba, PixelFormat::Bgrx}) {
    for (const BorderMode border :
         {BorderMode::Replicate, BorderMode::Reflect101, BorderMode::Constant}) {
      for (const double sigma : {0.0, 0.5, 1.7, 6.0}) {
        for (const auto& shape : shapes) {
          INFO(to_string(f) << " " << to_string(border) << " sigma " << sigma << " " << shape.w
                            << "x" << shape.h);
          const Padded in = random_frame(shape.w, shape.h, f, 3);
          Padded expected(shape.w, shape.h, f, 12), actual(shape.w, shape.h, f, 12);
          GaussParams p;
          p.sigma_x = sigma;
          p.sigma_y = sigma * 0.7;
          p.border = border;
          p.border_value = 17.0;
          gauss_reference(p, in.cview(), expected.view(), pool);
          for (const GaussCpuIsa isa :
               {GaussCpuIsa::Best, GaussCpuIsa::Avx2, GaussCpuIsa::Baseline}) {
            INFO("vectors " << gauss_cpu_isa_name(isa));
            std::fill(actual.bytes.begin(), actual.bytes.end(), std::byte{0});
            cpu.run(p, in.cview(), actual.view(), pool, isa);
            REQUIRE(same_pixels(actual, expected));
          }
        }
      }
    }
  }
}

TEST_CASE("the CPU Gaussian blur leaves the rows' padding alone", "[gauss]") {
  ThreadPool pool(2);
  GaussCpu cpu;
  const Padded in = random_frame(40, 10, PixelFormat::Gray16, 9);
  Padded out(40, 10, PixelFormat::Gray16, 12);
  for (auto& b : out.bytes) b = std::byte{0xA5};
  GaussParams p;
  p.sigma_x = p.sigma_y = 2.0;
  cpu.run(p, in.cview(), out.view(), pool);
  for (int y = 0; y < 10; ++y) {
    const std::byte* pad = out.cview().row(y) + 40 * 2;
    for (int i = 0; i < 12; ++i) REQUIRE(pad[i] == std::byte{0xA5});
  }
}
