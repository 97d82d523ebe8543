// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA CLAHE against the CPU reference: bit-exact at every bit depth, grid, clip limit and odd
// shape, with padded strides, one scratch reused from frame to frame uncleared.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/brightness/clahe.cuh"
#include "cuda/cuda_check.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "support/device_copy.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

// Device scratch that grows to the largest size asked for, filled with garbage when grown
// (the launcher must not rely on any contents).
struct Scratch {
  ~Scratch() { cudaFree(ptr); }
  cuda::ClaheScratch get(std::size_t need) {
    if (need > bytes) {
      cudaFree(ptr);
      cuda::check(cudaMalloc(&ptr, need), "cudaMalloc scratch");
      cuda::check(cudaMemset(ptr, 0x5C, need), "cudaMemset scratch");
      bytes = need;
    }
    return {ptr, bytes};
  }
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

BrightnessParams clahe_params(int tiles_x, int tiles_y, double clip) {
  BrightnessParams p;
  p.mode = BrightnessMode::Clahe;
  p.tiles_x = tiles_x;
  p.tiles_y = tiles_y;
  p.clip_limit = clip;
  return p;
}

enum class Content { Noise, Uniform, Constant };

// Noise: values crowded around the middle of the depth (tall bins for the clip), a few at 0
// and at the format's top (above the depth when it is below 16 bits).
void fill_content(TestImage& img, int bits, Content content, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int top = (1 << bits) - 1;
  const int format_top = img.format == PixelFormat::Gray8 ? 255 : 65535;
  std::normal_distribution<double> noise(top / 2.0, std::max(2.0, top / 30.0));
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      long v = top / 3;
      if (content == Content::Uniform) v = static_cast<long>(rng() % (format_top + 1u));
      if (content == Content::Noise) {
        const unsigned pick = rng() % 50;
        v = pick == 0 ? 0 : pick == 1 ? format_top : std::lround(noise(rng));
      }
      img.set_key(x, y, 0, static_cast<std::uint32_t>(std::clamp<long>(v, 0, format_top)));
    }
}

// Runs launch_clahe on `in` and compares with clahe_reference; returns the first difference
// ("none" when equal).
std::string compare(const TestImage& in, int bits, const BrightnessParams& p, Scratch& scratch,
                    ThreadPool& pool, bool* padding_ok = nullptr) {
  TestImage expected(in.width, in.height, in.format);
  clahe_reference(p, bits, in.cview(), expected.view(), pool);
  DeviceCopy d_in(in, 12);
  DeviceCopy d_out(expected, 20);  // contents overwritten; padding checked
  cuda::check(cudaMemset2D(d_out.ptr, d_out.pitch, 0, d_out.row, d_out.height), "clear");
  const FrameShape shape{in.width, in.height, in.format, bits};
  const std::size_t need = cuda::clahe_scratch_bytes(p, shape);
  REQUIRE(need > 0);
  cuda::check(cuda::launch_clahe(p, bits, const_view(d_in.view()), d_out.view(), scratch.get(need),
                                 nullptr),
              "launch_clahe");
  cuda::check(cudaDeviceSynchronize(), "sync");
  if (padding_ok) *padding_ok = d_out.padding_untouched();
  return d_out.download().first_difference(expected);
}

}  // namespace

TEST_CASE("CUDA CLAHE is bit-exact with the CPU reference", "[clahe][cuda]") {
  ThreadPool pool;
  Scratch scratch;
  struct Depth {
    PixelFormat format;
    int bits;
  };
  // 13 to 16 bits: the cells' quads read from global memory; 12 and below: the maps in shared
  // memory.
  const Depth depths[] = {{PixelFormat::Gray8, 8},   {PixelFormat::Gray16, 16},
                          {PixelFormat::Gray16, 15}, {PixelFormat::Gray16, 14},
                          {PixelFormat::Gray16, 12}, {PixelFormat::Gray16, 10},
                          {PixelFormat::Gray16, 1}};
  // 1x1, smaller than the grid, divisible and not on either axis, odd.
  const int shapes[][2] = {{1, 1}, {5, 3}, {64, 64}, {67, 64}, {64, 45}, {97, 83}, {301, 257}};
  const int grids[][2] = {{1, 1}, {2, 2}, {8, 8}, {3, 7}, {64, 64}};
  std::uint32_t seed = 7;
  int cases = 0;
  for (const Depth& d : depths)
    for (const auto& s : shapes)
      for (const auto& g : grids)
        for (double clip : {0.0, 2.0, 40.0, 1e12})
          for (Content content : {Content::Noise, Content::Uniform}) {
            // The reference's time: 4096 maps of 2^12 bins or more once per depth.
            if (d.bits >= 12 && g[0] * g[1] > 64 && (s[0] != 97 || clip != 2.0)) continue;
            if (d.bits >= 15 && content == Content::Uniform && clip == 40.0) continue;
            TestImage in(s[0], s[1], d.format, 6);
            fill_content(in, d.bits, content, ++seed);
            bool padding_ok = false;
            const std::string diff =
                compare(in, d.bits, clahe_params(g[0], g[1], clip), scratch, pool, &padding_ok);
            INFO(to_string(d.format)
                 << " bits " << d.bits << " " << s[0] << "x" << s[1] << " tiles " << g[0] << "x"
                 << g[1] << " clip " << clip << " content " << static_cast<int>(content)
                 << " first diff " << diff);
            REQUIRE(diff == "none");
            REQUIRE(padding_ok);
            ++cases;
          }
  INFO("cases " << cases);
  REQUIRE(cases > 900);
}

TEST_CASE("CUDA CLAHE on camera-sized frames: many slices per tile, constant frames",
          "[clahe][cuda]") {
  ThreadPool pool;
  Scratch scratch;
  struct Case {
    int w, h;
    PixelFormat format;
    int bits, tiles_x, tiles_y;
    double clip;
    Content content;
  };
  // 12 bits, 2048x1536 8x8: tiles of 256x192 in three slices of 64 rows; 16 bits, one 300x300
  // tile: two slices whose counts are summed; 2x2 tiles of 500x450 at 8 bits: 15 slices.
  const Case cases[] = {
      {2048, 1536, PixelFormat::Gray16, 12, 8, 8, 2.0, Content::Noise},
      {2048, 1536, PixelFormat::Gray16, 12, 8, 8, 0.0, Content::Uniform},
      {300, 300, PixelFormat::Gray16, 16, 1, 1, 2.0, Content::Noise},
      {300, 300, PixelFormat::Gray16, 16, 1, 1, 0.0, Content::Constant},
      {1000, 900, PixelFormat::Gray8, 8, 2, 2, 3.0, Content::Noise},
      {1000, 900, PixelFormat::Gray8, 8, 2, 2, 2.0, Content::Constant},
      {1920, 1080, PixelFormat::Gray16, 16, 8, 8, 2.0, Content::Uniform},
  };
  std::uint32_t seed = 500;
  for (const Case& c : cases) {
    TestImage in(c.w, c.h, c.format);
    fill_content(in, c.bits, c.content, ++seed);
    const std::string diff =
        compare(in, c.bits, clahe_params(c.tiles_x, c.tiles_y, c.clip), scratch, pool);
    INFO(c.w << "x" << c.h << " bits " << c.bits << " tiles " << c.tiles_x << "x" << c.tiles_y
             << " clip " << c.clip << " first diff " << diff);
    REQUIRE(diff == "none");
  }
}

TEST_CASE("CUDA CLAHE reuses its scratch from frame to frame", "[clahe][cuda]") {
  ThreadPool pool;
  Scratch scratch;
  const BrightnessParams p = clahe_params(4, 3, 2.0);
  for (std::uint32_t frame = 0; frame < 4; ++frame) {
    TestImage in(333, 222, PixelFormat::Gray16);
    fill_content(in, 12, frame % 2 ? Content::Uniform : Content::Noise, 900 + frame);
    const std::string diff = compare(in, 12, p, scratch, pool);
    INFO("frame " << frame << " first diff " << diff);
    REQUIRE(diff == "none");
  }
}

TEST_CASE("CUDA CLAHE refuses what it cannot do", "[clahe][cuda]") {
  TestImage gray16(64, 64, PixelFormat::Gray16), floats(64, 64, PixelFormat::Gray32F);
  DeviceCopy a(gray16, 0), b(gray16, 0), f(floats, 0), g(floats, 0);
  const BrightnessParams p = clahe_params(8, 8, 2.0);
  const FrameShape shape{64, 64, PixelFormat::Gray16, 12};
  const std::size_t need = cuda::clahe_scratch_bytes(p, shape);
  REQUIRE(need > 0);
  Scratch scratch;
  const cuda::ClaheScratch enough = scratch.get(need);
  REQUIRE(cuda::launch_clahe(p, 12, const_view(a.view()), b.view(), {enough.data, need - 2},
                             nullptr) == cudaErrorInvalidValue);
  REQUIRE(cuda::launch_clahe(p, 17, const_view(a.view()), b.view(), enough, nullptr) ==
          cudaErrorInvalidValue);
  REQUIRE(cuda::launch_clahe(p, 32, const_view(f.view()), g.view(), enough, nullptr) ==
          cudaErrorInvalidValue);
  REQUIRE(cuda::launch_clahe(clahe_params(65, 8, 2.0), 12, const_view(a.view()), b.view(), enough,
                             nullptr) == cudaErrorInvalidValue);
  REQUIRE(cuda::clahe_scratch_bytes(p, FrameShape{64, 64, PixelFormat::Gray32F, 32}) == 0);
  REQUIRE(cuda::clahe_scratch_bytes(clahe_params(0, 8, 2.0), shape) == 0);
  // A larger grid or depth needs more.
  REQUIRE(cuda::clahe_scratch_bytes(p, FrameShape{64, 64, PixelFormat::Gray16, 16}) > need);
  REQUIRE(cuda::launch_clahe(p, 12, const_view(a.view()), b.view(), enough, nullptr) ==
          cudaSuccess);
  cuda::check(cudaDeviceSynchronize(), "sync");
}
