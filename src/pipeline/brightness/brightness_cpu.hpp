// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's fast CPU path: reference.hpp's steps, row by row on the shared
// thread pool, with three approximations, each measured against brightness_reference()
// (tests/brightness/test_brightness_cpu.cpp):
//  - B, the blurred luminance, from LuminanceBlur (a downsampled blur from sigma 8 on);
//  - the power 2^(e log2 Y) in float without a library call (fast_math.hpp; log2 Y through a
//    table of the 2^bit_depth values for integer grey frames);
//  - float arithmetic where the reference has double, which moves a value across a rounding
//    boundary now and then (by one count), and can move a percentile's lo or hi by one.
// Mode clahe runs ClaheCpu (on the frame, or on its luma rounded to 8 bits for colour).
// Every buffer is kept for the next frame: after the first frame of a size, none is allocated.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/brightness/clahe.hpp"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

class BrightnessCpu {
 public:
  // Corrects `in` into `out` (both of `shape`) as brightness_reference() does, to the
  // tolerances above. Throws Error as it does.
  void run(const BrightnessParams& params, const FrameShape& shape, ConstImageView in,
           ImageView out, ThreadPool& pool);

 private:
  // log2(v / max) for every sample value v of `shape` (an integer grey format), once per
  // maximum.
  void fill_log_table(const FrameShape& shape);
  // Mode clahe: the mapped plane of the frame, whose row y load_luminance() reads as C.
  ConstImageView equalise(const BrightnessParams& params, const FrameShape& shape,
                          ConstImageView in, ThreadPool& pool);

  LuminanceBlur blur_;
  ClaheCpu clahe_;
  std::vector<float> log_table_;  // log2(v / max) for v in 0..max, integer grey frames
  int log_table_top_ = -1;
  std::vector<std::uint8_t> clahe_in8_, clahe_out8_;  // GRAY8 planes (GRAY8, colour luma)
  std::vector<std::uint16_t> clahe_out16_;            // GRAY16 plane
  std::vector<float> values_;                         // v of every pixel (percentile stretch)
  std::vector<float> rows_;                           // per thread chunk: 4 rows of floats
  std::vector<std::uint32_t> counts_;                 // per thread chunk: a histogram
  std::vector<float> order_;                          // GRAY32F percentile: a copy to select in
};

}  // namespace starsift
