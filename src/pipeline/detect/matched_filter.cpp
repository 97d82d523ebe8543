// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/matched_filter.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "pipeline/error.hpp"

namespace starsift {

void correlate(const Plane& in, const std::vector<float>& taps, int radius, Plane& out,
               ThreadPool& pool) {
  const int w = in.width();
  const int h = in.height();
  const int side = 2 * radius + 1;
  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      float* acc = out.row(y);
      std::fill(acc, acc + w, 0.0f);
      for (int dy = -radius; dy <= radius; ++dy) {
        if (y + dy < 0 || y + dy >= h) continue;
        const float* src = in.row(y + dy);
        for (int dx = -radius; dx <= radius; ++dx) {
          const float k = taps[static_cast<std::size_t>(dy + radius) * side + dx + radius];
          // x + dx must stay inside the row: a tight loop the compiler vectorises.
          const int x_begin = std::max(0, -dx);
          const int x_end = std::min(w, w - dx);
          const float* s = src + dx;
          for (int x = x_begin; x < x_end; ++x) acc[x] += k * s[x];
        }
      }
    }
  });
}

MatchedFilter::MatchedFilter(const PsfKernel& kernel, int width, int height)
    : kernel_(kernel), variance_sum_(width, height) {
  squared_.reserve(kernel_.taps.size());
  for (const float t : kernel_.taps) squared_.push_back(t * t);
}

void MatchedFilter::snr_with_variance(const Plane& residual, const Plane& variance, Plane& snr,
                                      ThreadPool& pool) {
  correlate(residual, kernel_.taps, kernel_.radius, snr, pool);
  correlate(variance, squared_, kernel_.radius, variance_sum_, pool);
  const std::size_t n = snr.size();
  float* s = snr.data();
  const float* v = variance_sum_.data();
  for (std::size_t i = 0; i < n; ++i) s[i] = v[i] > 0.0f ? s[i] / std::sqrt(v[i]) : 0.0f;
}

void MatchedFilter::snr_with_sigma(const Plane& residual, double sigma, Plane& snr,
                                   ThreadPool& pool) {
  if (!(sigma > 0.0)) throw Error("matched filter: the noise sigma must be > 0");
  correlate(residual, kernel_.taps, kernel_.radius, snr, pool);
  const auto scale = static_cast<float>(1.0 / (sigma * std::sqrt(kernel_.norm2)));
  for (float& s : std::span<float>(snr.data(), snr.size())) s *= scale;
}

}  // namespace starsift
