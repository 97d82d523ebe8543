// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/resample.hpp"

#include "pipeline/error.hpp"

namespace starsift {

void resample_shifted(ConstImageView in, ImageView out, const ShiftKernel& kernel,
                      ThreadPool& pool) {
  if (in.format != PixelFormat::Gray32F || out.format != PixelFormat::Gray32F ||
      in.width != out.width || in.height != out.height) {
    throw Error("resample: planes must be GRAY32F of one size", "two GRAY32F planes of one size");
  }
  const int w = in.width;
  const int h = in.height;
  pool.parallel_for(h, [&](int y_begin, int y_end) {
    for (int y = y_begin; y < y_end; ++y) {
      float* dst = out.row_as<float>(y);
      for (int x = 0; x < w; ++x) {
        dst[x] = sample_shifted(kernel, x, y, w, h,
                                [&](int ix, int iy) { return in.row_as<float>(iy)[ix]; });
      }
    }
  });
}

}  // namespace starsift
