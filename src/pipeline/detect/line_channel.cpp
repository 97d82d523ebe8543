// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/line_channel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "pipeline/detect/reference.hpp"

namespace starsift {

namespace {

// rho(dx, dy): the correlation of the point channel's significance between pixels (dx, dy)
// apart over white noise, sum_q K(q) K(q + d) / sum_q K(q)^2; a pixel alone without a filter.
double autocorrelation(const DetectKernel& kernel, int dx, int dy) {
  if (kernel.taps.empty()) return dx == 0 && dy == 0 ? 1.0 : 0.0;
  const int r = kernel.radius, side = 2 * r + 1;
  const auto tap = [&](int x, int y) {
    return static_cast<double>(kernel.taps[static_cast<std::size_t>(y + r) * side + x + r]);
  };
  double sum = 0.0, sum2 = 0.0;
  for (int y = -r; y <= r; ++y) {
    for (int x = -r; x <= r; ++x) {
      sum2 += tap(x, y) * tap(x, y);
      const int x2 = x + dx, y2 = y + dy;
      if (x2 >= -r && x2 <= r && y2 >= -r && y2 <= r) sum += tap(x, y) * tap(x2, y2);
    }
  }
  return sum / sum2;
}

// The digital line of `length` taps at theta through the origin: one tap per column where the
// line is closer to the x axis (one per row otherwise), the other coordinate rounded.
std::vector<LineTap> digital_line(double theta, int radius) {
  const double c = std::cos(theta), s = std::sin(theta);
  std::vector<LineTap> taps;
  for (int t = -radius; t <= radius; ++t) {
    if (std::abs(c) >= std::abs(s)) {
      taps.push_back({t, static_cast<int>(std::lround(t * s / c))});
    } else {
      taps.push_back({static_cast<int>(std::lround(t * c / s)), t});
    }
  }
  return taps;
}

// Columns a pass takes at once: their best sums live on the stack and in the L1 cache.
constexpr int kBlock = 256;

// The capped significance with `radius` zeros around it (rows `pitch` floats apart), so the
// taps read no bounds.
struct Padded {
  const float* data;
  int pitch;
  int radius;
  const std::ptrdiff_t* offsets;  // each orientation's taps in turn: dy * pitch + dx
};

// Columns whose sums stay in registers while a line's taps are added: one vector of the
// compiler's (GCC and Clang vector extensions), which it splits into what the target has (four
// SSE or two AVX2 registers, one AVX-512 register, four NEON ones). Written as loops over the
// columns, the adds were left scalar by GCC 12 in the AVX-512 build (3.7x the time).
constexpr int kLanes = 16;
using Lanes = float __attribute__((vector_size(kLanes * sizeof(float))));

// sum += the kLanes floats at p (unaligned). By reference: a vector passed or returned by
// value would change the calling convention between the targets this file is built for.
inline void add_lanes(Lanes& sum, const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  sum += v;
}

// The line significance of pixels [x0, x0 + n) of row y into best[0..n): for each orientation,
// kLanes columns at a time, its taps added in the bank's order into sums held in registers, then
// the best of the orientations kept. Every column adds in one order, the CUDA kernel's
// (line_kernel): the even taps in one sum, the odd in another, so both backends give the same
// bits. The last vector of a row may reach past its n columns: into the padding's zeros (kLanes
// - 1 columns right of the margin) and best's spare room (kBlock is whole vectors); what it
// computes there is not used.
static_assert(kBlock % kLanes == 0);
inline void line_block(const LineBank& bank, const Padded& p, int y, int x0, int n, float* best) {
  const int vectors = (n + kLanes - 1) / kLanes;
  std::fill(best, best + vectors * kLanes, -HUGE_VALF);
  const float* origin =
      p.data + static_cast<std::ptrdiff_t>(y + p.radius) * p.pitch + p.radius + x0;
  const std::size_t taps = static_cast<std::size_t>(bank.length);
  for (std::size_t oi = 0; oi < bank.orientations.size(); ++oi) {
    const float inv_norm = bank.orientations[oi].inv_norm;
    const std::ptrdiff_t* offset = p.offsets + oi * taps;
    for (int i0 = 0; i0 < vectors * kLanes; i0 += kLanes) {
      // Even and odd taps in two sums: two chains of dependent adds instead of one.
      Lanes even = {}, odd = {};
      std::size_t k = 0;
      for (; k + 1 < taps; k += 2) {
        add_lanes(even, origin + offset[k] + i0);
        add_lanes(odd, origin + offset[k + 1] + i0);
      }
      if (k < taps) add_lanes(even, origin + offset[k] + i0);
      const Lanes v = (even + odd) * inv_norm;
      Lanes b;
      std::memcpy(&b, best + i0, sizeof b);
      b = b < v ? v : b;  // std::max(b, v), lane by lane
      std::memcpy(best + i0, &b, sizeof b);
    }
  }
}

// Rows [y_begin, y_end), block by block, each handed to `done` (y, x0, n, best).
using BlockDone = void (*)(void* context, int y, int x0, int n, const float* best);
struct Band {
  const LineBank* bank;
  Padded padded;
  int width;
  BlockDone done;
  void* context;
};

inline void line_band(const Band& b, int y_begin, int y_end) {
  alignas(64) float best[kBlock];
  for (int y = y_begin; y < y_end; ++y) {
    for (int x0 = 0; x0 < b.width; x0 += kBlock) {
      const int n = std::min(kBlock, b.width - x0);
      line_block(*b.bank, b.padded, y, x0, n, best);
      b.done(b.context, y, x0, n, best);
    }
  }
}

// The band compiled for the baseline and, on x86, for AVX2 and AVX-512 (8 and 16 floats an add
// instead of 4), chosen at run time as the Gaussian's CPU path does.
void band_baseline(const Band& b, int y_begin, int y_end) {
  line_band(b, y_begin, y_end);
}
#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::flatten, gnu::target("avx2")]] void band_avx2(const Band& b, int y_begin, int y_end) {
  line_band(b, y_begin, y_end);
}
[[gnu::flatten, gnu::target("avx512f")]] void band_avx512(const Band& b, int y_begin, int y_end) {
  line_band(b, y_begin, y_end);
}
#endif

void (*band_for_this_cpu())(const Band&, int, int) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx512) return &band_avx512;
  if (avx2) return &band_avx2;
#endif
  return &band_baseline;
}

// For each block of each row, `row_done(y, x0, n, best)` with the line significance of pixels
// [x0, x0 + n) of row y in best[0..n).
template <class RowDone>
void for_each_block(const Plane& significance, const LineBank& bank, LinePadding& scratch,
                    ThreadPool& pool, RowDone row_done) {
  const int w = significance.width(), h = significance.height(), r = bank.radius;
  // A margin of r on each side, and kLanes - 1 more columns right for a row's last vector.
  const int pw = w + 2 * r + kLanes - 1;
  // The margins stay 0 from frame to frame of one shape: only the interior is written.
  if (scratch.width != w || scratch.height != h || scratch.radius != r) {
    scratch.data.assign(static_cast<std::size_t>(pw) * (h + 2 * r), 0.0f);
    scratch.offsets.clear();
    for (const LineOrientation& o : bank.orientations) {
      for (const LineTap& t : o.taps) {
        scratch.offsets.push_back(static_cast<std::ptrdiff_t>(t.dy) * pw + t.dx);
      }
    }
    scratch.width = w, scratch.height = h, scratch.radius = r;
  }
  std::vector<float>& padded = scratch.data;
  pool.parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const float* in = significance.row(y);
      float* out = padded.data() + static_cast<std::size_t>(y + r) * pw + r;
      for (int x = 0; x < w; ++x) out[x] = std::min(in[x], LineBank::kCap);
    }
  });
  const Band band{&bank,
                  {padded.data(), pw, r, scratch.offsets.data()},
                  w,
                  [](void* context, int y, int x0, int n, const float* best) {
                    (*static_cast<RowDone*>(context))(y, x0, n, best);
                  },
                  &row_done};
  const auto run = band_for_this_cpu();
  pool.parallel_for(h, [&](int y0, int y1) { run(band, y0, y1); });
}

}  // namespace

LineBank make_line_bank(int length, const DetectKernel& kernel) {
  LineBank bank;
  if (length <= 0) return bank;
  bank.length = length;
  bank.radius = length / 2;
  const int count = length + 1;
  for (int k = 0; k < count; ++k) {
    LineOrientation o;
    o.theta = std::numbers::pi * k / count;
    o.taps = digital_line(o.theta, bank.radius);
    double variance = 0.0;
    for (const LineTap& a : o.taps) {
      for (const LineTap& b : o.taps) variance += autocorrelation(kernel, a.dx - b.dx, a.dy - b.dy);
    }
    o.inv_norm = static_cast<float>(1.0 / std::sqrt(variance));
    bank.orientations.push_back(std::move(o));
  }
  return bank;
}

bool line_bank_changes(const DetectParams& from, const DetectParams& to) noexcept {
  return from.line_length != to.line_length || from.filter != to.filter || from.fwhm != to.fwhm;
}

void line_significance(const Plane& significance, const LineBank& bank, Plane& out,
                       ThreadPool& pool) {
  LinePadding padded;
  for_each_block(significance, bank, padded, pool, [&](int y, int x0, int n, const float* best) {
    std::copy(best, best + n, out.row(y) + x0);
  });
}

void LineChannel::add_detections(const Plane& significance, float threshold, std::uint8_t* mask,
                                 ThreadPool& pool) {
  const int w = significance.width();
  for_each_block(significance, bank_, padded_, pool, [&](int y, int x0, int n, const float* best) {
    std::uint8_t* m = mask + static_cast<std::size_t>(y) * w + x0;
    for (int i = 0; i < n; ++i) m[i] = m[i] | (best[i] > threshold ? 1 : 0);
  });
}

}  // namespace starsift
