// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA median against the CPU reference: bit-exact for every schedule, format, size,
// border, odd image shape and fill, with padded strides on both sides.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/median/median.cuh"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/median/reference.hpp"
#include "support/device_copy.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

const PixelFormat kFormats[] = {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                                PixelFormat::Rgba, PixelFormat::Bgrx};
const BorderMode kBorders[] = {BorderMode::Replicate, BorderMode::Reflect101, BorderMode::Constant};
const cuda::MedianSchedule kSchedules[] = {
    cuda::MedianSchedule::Auto, cuda::MedianSchedule::Network,
    cuda::MedianSchedule::NetworkUnpacked, cuda::MedianSchedule::Tracking};

}  // namespace

TEST_CASE("CUDA median is bit-exact with the CPU reference", "[median][cuda]") {
  ThreadPool pool;
  // 1x1, single rows/columns, and sizes that are not multiples of any tile.
  const int shapes[][2] = {{1, 1}, {1, 13}, {13, 1}, {37, 29}, {133, 70}};
  std::uint32_t seed = 100;
  int cases = 0;
  for (cuda::MedianSchedule schedule : kSchedules)
    for (PixelFormat format : kFormats)
      for (int size : {3, 5, 7, 9, 11, 13, 15, 31}) {
        if (!cuda::median_schedule_supports(schedule, size, format)) continue;
        for (BorderMode border : kBorders)
          for (const auto& s : shapes)
            for (Fill how : {Fill::Random, Fill::Impulse, Fill::Sentinels, Fill::Constant}) {
              if (size == 31 && how != Fill::Random) continue;  // keep the run short
              TestImage in(s[0], s[1], format, 8);
              fill(in, how, ++seed);
              MedianParams p;
              p.size = size;
              p.border = border;
              p.border_value = format_info(format).is_float ? 2.25 : 77;
              TestImage expected(s[0], s[1], format);
              median_reference(p, in.cview(), expected.view(), pool);

              DeviceCopy d_in(in, 12);
              DeviceCopy d_out(expected, 20);  // contents overwritten; padding checked
              cuda::check(cudaMemset2D(d_out.ptr, d_out.pitch, 0, d_out.row, d_out.height),
                          "clear");
              cuda::check(
                  cuda::launch_median(p, const_view(d_in.view()), d_out.view(), nullptr, schedule),
                  "launch");
              cuda::check(cudaDeviceSynchronize(), "sync");
              const TestImage got = d_out.download();
              INFO(to_string(schedule)
                   << " " << to_string(format) << " size " << size << " " << to_string(border)
                   << " " << s[0] << "x" << s[1] << " " << to_string(how) << " first diff "
                   << got.first_difference(expected));
              REQUIRE(got.same_pixels(expected));
              REQUIRE(d_out.padding_untouched());
              ++cases;
            }
      }
  INFO("cases " << cases);
  REQUIRE(cases > 1000);
}

TEST_CASE("CUDA median refuses what it cannot do", "[median][cuda]") {
  TestImage img(8, 8, PixelFormat::Gray32F);
  DeviceCopy a(img, 0), b(img, 0);
  MedianParams p;
  REQUIRE(cuda::launch_median(p, const_view(a.view()), b.view(), nullptr,
                              cuda::MedianSchedule::Network) ==
          cudaErrorInvalidValue);  // float keys do not pack into 16 bits
  cudaGetLastError();
  p.size = 11;
  REQUIRE_FALSE(
      cuda::median_schedule_supports(cuda::MedianSchedule::Network, 17, PixelFormat::Gray8));
  REQUIRE_FALSE(
      cuda::median_schedule_supports(cuda::MedianSchedule::Network, 4, PixelFormat::Gray8));
  REQUIRE(cuda::median_schedule_supports(cuda::MedianSchedule::Tracking, 31, PixelFormat::Gray8));
}

TEST_CASE("CUDA median stage: host frames, parameter changes, shape changes",
          "[median][cuda][stage]") {
  ThreadPool pool;
  MedianParams p;
  auto stage = make_median_stage(p, resolve_backend(Backend::Cuda, 0));
  REQUIRE(stage->backend() == Backend::Cuda);
  for (const auto& shape : {FrameShape{1920, 1080, PixelFormat::Gray16, 12},
                            FrameShape{641, 479, PixelFormat::Bgra, 8}}) {
    stage->configure(shape);
    TestImage in(shape.width, shape.height, shape.format, 36);
    fill(in, Fill::Impulse, 3);
    for (int size : {3, 5, 13}) {
      p.size = size;
      stage->set_params(p);  // takes effect on the next frame
      TestImage out(shape.width, shape.height, shape.format, 4);
      stage->process(in.cview(), out.view());
      TestImage expected(shape.width, shape.height, shape.format);
      median_reference(p, in.cview(), expected.view(), pool);
      INFO(to_string(shape.format)
           << " size " << size << " first diff " << out.first_difference(expected));
      REQUIRE(out.same_pixels(expected));
    }
  }
}
