// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/resample.hpp"

#include <algorithm>

#include "pipeline/error.hpp"

namespace starsift {

InnerColumns shift_inner_columns(const ShiftKernel& k, int w) {
  const int begin = std::clamp(1 - k.ox, 0, w);
  return {begin, std::clamp(w - 2 - k.ox, begin, w)};
}

void shift_row_inner(const ShiftKernel& k, const float* const rows[4], InnerColumns c, float* out) {
  // Everything the loop reads in locals: `out` could alias the kernel's weights, the row
  // pointers and the bounds, which would then be reloaded every pixel and keep the loop scalar.
  const float wx0 = k.wx[0], wx1 = k.wx[1], wx2 = k.wx[2], wx3 = k.wx[3];
  const float wy0 = k.wy[0], wy1 = k.wy[1], wy2 = k.wy[2], wy3 = k.wy[3];
  const int first_tap = k.ox - 1;
  const float* r0 = rows[0] + first_tap;
  const float* r1 = rows[1] + first_tap;
  const float* r2 = rows[2] + first_tap;
  const float* r3 = rows[3] + first_tap;
  auto tap_row = [wx0, wx1, wx2, wx3](const float* s) {
    float r = 0.0f;
    r += wx0 * s[0];
    r += wx1 * s[1];
    r += wx2 * s[2];
    r += wx3 * s[3];
    return r;
  };
  const int begin = c.begin, end = c.end;
  for (int x = begin; x < end; ++x) {
    float sum = 0.0f;
    sum += wy0 * tap_row(r0 + x);
    sum += wy1 * tap_row(r1 + x);
    sum += wy2 * tap_row(r2 + x);
    sum += wy3 * tap_row(r3 + x);
    out[x] = sum;
  }
}

void resample_shifted(ConstImageView in, ImageView out, const ShiftKernel& kernel,
                      ThreadPool& pool) {
  if (in.format != PixelFormat::Gray32F || out.format != PixelFormat::Gray32F ||
      in.width != out.width || in.height != out.height) {
    throw Error("resample: planes must be GRAY32F of one size", "two GRAY32F planes of one size");
  }
  const int w = in.width;
  const int h = in.height;
  pool.parallel_for(h, [&](int y_begin, int y_end) {
    const InnerColumns inner = shift_inner_columns(kernel, w);
    auto read = [&](int ix, int iy) { return in.row_as<float>(iy)[ix]; };
    for (int y = y_begin; y < y_end; ++y) {
      float* dst = out.row_as<float>(y);
      for (int x = 0; x < inner.begin; ++x) dst[x] = sample_shifted(kernel, x, y, w, h, read);
      const float* rows[4];
      for (int j = 0; j < 4; ++j) rows[j] = in.row_as<float>(clamp_index(y + kernel.oy - 1 + j, h));
      shift_row_inner(kernel, rows, inner, dst);
      for (int x = inner.end; x < w; ++x) dst[x] = sample_shifted(kernel, x, y, w, h, read);
    }
  });
}

}  // namespace starsift
