// SPDX-License-Identifier: LGPL-2.1-or-later
// CLAHE on the CPU, fast (clahe.hpp): the same numbers as clahe_reference(), in the same
// order, so the same pixels.
//
// 1. Maps, one task per thread over a contiguous run of tiles, each thread with its own
//    histogram buffer: count the tile (its rows read directly; columns and rows past the
//    frame through reflect-101 tables), clip (one vectorisable pass), add the clipped counts
//    back, cumulate, then scale and round every bin (vectorisable) into the tile's map.
//    8-bit tiles count into four histograms in turn, so a run of equal samples (a sky's
//    background) does not wait on one counter; they are summed before the clip. The passes
//    that read the histogram clear it behind them, for the next tile.
// 2. Blend, rows in parallel, cell by cell: a row is cut at the tile centres into spans that
//    read the same four maps, and a band of rows between two tile centres is done one span
//    at a time, so at 16 bits the four maps in use (4 x 128 KiB) stay in the L2 cache. Per
//    block of a span, a scalar loop gathers the four map values of each pixel, two to a word,
//    and a vectorisable one blends them with the per-column weights computed once per frame.
// On x86-64 the map passes and the blend are also compiled for AVX2, chosen at run time.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "pipeline/border.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "pipeline/brightness/clahe_layout.hpp"

namespace starsift {

namespace {

constexpr int kBlock = 256;  // pixels blended per pass over the gathered values

#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_CLAHE_AVX2 1
bool use_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#else
#define STARSIFT_CLAHE_AVX2 0
#endif

// Counts sample values of one tile row segment into `hist` (`ways` interleaved histograms of
// `bins` each when ways > 1).
template <class T, bool kHold, int kWays>
void count_run(const T* row, int n, std::uint32_t* hist, int bins, int top) {
  int i = 0;
  if constexpr (kWays == 4) {
    for (; i + 4 <= n; i += 4) {
      int v0 = row[i], v1 = row[i + 1], v2 = row[i + 2], v3 = row[i + 3];
      if constexpr (kHold) {
        v0 = std::min(v0, top), v1 = std::min(v1, top), v2 = std::min(v2, top);
        v3 = std::min(v3, top);
      }
      ++hist[v0];
      ++hist[bins + v1];
      ++hist[2 * bins + v2];
      ++hist[3 * bins + v3];
    }
  }
  for (; i < n; ++i) {
    int v = row[i];
    if constexpr (kHold) v = std::min(v, top);
    ++hist[v];
  }
}

struct MapsJob {
  const ClaheLayout& l;
  ConstImageView in;
  const int* pad_columns;  // source column of padding column x - width
};

// Tile (tx, ty)'s map into `map`, with `hist` (ways * bins counters) as scratch: zero on
// entry, left zero on return (the passes that read it clear it, saving a pass of its own).
template <class T, bool kHold, int kWays>
void tile_map(const MapsJob& job, int tx, int ty, std::uint32_t* hist, std::uint16_t* map) {
  const ClaheLayout& l = job.l;
  const int bins = l.bins, top = l.top();
  const int x0 = tx * l.tile_w, x1 = x0 + l.tile_w;
  const int inside_end = std::min(x1, l.width);  // columns from x0 read directly
  for (int y = ty * l.tile_h; y < (ty + 1) * l.tile_h; ++y) {
    const T* row = job.in.row_as<T>(border_index(y, l.height, BorderMode::Reflect101));
    if (inside_end > x0) count_run<T, kHold, kWays>(row + x0, inside_end - x0, hist, bins, top);
    for (int x = std::max(x0, l.width); x < x1; ++x) {
      int v = row[job.pad_columns[x - l.width]];
      if constexpr (kHold) v = std::min(v, top);
      ++hist[v];
    }
  }
  for (int w = 1; w < kWays; ++w)
    for (int i = 0; i < bins; ++i) {
      hist[i] += hist[w * bins + i];
      hist[w * bins + i] = 0;
    }

  if (l.clip > 0) {
    const auto clip = static_cast<std::uint32_t>(l.clip);
    std::uint32_t clipped = 0;
    for (int i = 0; i < bins; ++i) {
      const std::uint32_t count = hist[i];
      clipped += count > clip ? count - clip : 0;
      hist[i] = count > clip ? clip : count;
    }
    const std::uint32_t batch = clipped / static_cast<std::uint32_t>(bins);
    const int residual = static_cast<int>(clipped - batch * static_cast<std::uint32_t>(bins));
    if (residual != 0) {
      const int step = std::max(bins / residual, 1);
      for (int k = 0; k < residual; ++k) ++hist[k * step];
    }
    std::uint32_t sum = 0;
    for (int i = 0; i < bins; ++i) hist[i] = sum += hist[i] + batch;
  } else {
    std::uint32_t sum = 0;
    for (int i = 0; i < bins; ++i) hist[i] = sum += hist[i];
  }
  // Sums are at most the tile's area (< 2^31), so they convert as ints do.
  const float scale = l.lut_scale;
  for (int i = 0; i < bins; ++i) {
    map[i] = static_cast<std::uint16_t>(clahe_map_value(static_cast<int>(hist[i]), scale, top));
    hist[i] = 0;
  }
}

// Tiles [begin, end) with one histogram buffer. Compiled twice: for the target's baseline and,
// on x86-64, for AVX2 (chosen at run time), where the clip and the map passes run on
// 8 lanes instead of 4.
template <class T, bool kHold, int kWays>
[[gnu::flatten]] void tile_maps(const MapsJob& job, int begin, int end, std::uint32_t* hist,
                                std::uint16_t* maps) {
  const auto bins = static_cast<std::size_t>(job.l.bins);
  for (int t = begin; t < end; ++t)
    tile_map<T, kHold, kWays>(job, t % job.l.tiles_x, t / job.l.tiles_x, hist,
                              maps + static_cast<std::size_t>(t) * bins);
}
#if STARSIFT_CLAHE_AVX2
template <class T, bool kHold, int kWays>
[[gnu::flatten, gnu::target("avx2")]] void tile_maps_avx2(const MapsJob& job, int begin, int end,
                                                          std::uint32_t* hist,
                                                          std::uint16_t* maps) {
  const auto bins = static_cast<std::size_t>(job.l.bins);
  for (int t = begin; t < end; ++t)
    tile_map<T, kHold, kWays>(job, t % job.l.tiles_x, t / job.l.tiles_x, hist,
                              maps + static_cast<std::size_t>(t) * bins);
}
#endif

template <class T, bool kHold, int kWays>
void build_maps(const MapsJob& job, std::uint32_t* histograms, std::uint16_t* maps,
                ThreadPool& pool) {
  const ClaheLayout& l = job.l;
  const int threads = static_cast<int>(pool.size());
  const auto bins = static_cast<std::size_t>(l.bins);
  auto run = &tile_maps<T, kHold, kWays>;
#if STARSIFT_CLAHE_AVX2
  if (use_avx2()) run = &tile_maps_avx2<T, kHold, kWays>;
#endif
  pool.parallel_for(threads, [&](int begin, int end) {
    for (int c = begin; c < end; ++c)
      run(job, l.tiles() * c / threads, l.tiles() * (c + 1) / threads,
          histograms + static_cast<std::size_t>(c) * bins * kWays, maps);
  });
}

struct BlendJob {
  const ClaheLayout& l;
  ConstImageView in;
  ImageView out;
  const std::uint16_t* maps;
  const float* w1;  // per column
  const float* w2;
  const ClaheCpu::Span* spans;
  int span_count;
};

// clahe_blend() without its hold to 0..top, which never acts: the maps' values lie in
// 0..top and the weights of each axis sum to 1 within an ulp, so the blend stays below
// top + 0.05. The rounding is clahe_round()'s 1.5 * 2^23 addition, whose sum keeps the
// rounded value in its low mantissa bits: read there, no conversion back is needed.
// `upper` and `lower` hold each pixel's two maps of one tile row, the t1 map's value in the
// low 16 bits.
template <class T>
inline void blend_block(const std::uint32_t* upper_maps, const std::uint32_t* lower_maps,
                        const float* w1, const float* w2, float y1, float y2, T* out, int n) {
  for (int i = 0; i < n; ++i) {
    const auto m11 = static_cast<float>(static_cast<std::int32_t>(upper_maps[i] & 0xffff));
    const auto m12 = static_cast<float>(static_cast<std::int32_t>(upper_maps[i] >> 16));
    const auto m21 = static_cast<float>(static_cast<std::int32_t>(lower_maps[i] & 0xffff));
    const auto m22 = static_cast<float>(static_cast<std::int32_t>(lower_maps[i] >> 16));
    const float upper = m11 * w1[i] + m12 * w2[i];
    const float lower = m21 * w1[i] + m22 * w2[i];
    const float rounded = (upper * y1 + lower * y2) + 12582912.0f;
    out[i] = static_cast<T>(std::bit_cast<std::uint32_t>(rounded));
  }
}

// The four maps' values of n samples, two to a word. Scalar loads: vectorised, lane by lane
// as GCC does it, they take three times as long.
template <class T, bool kHold>
[[gnu::noinline, gnu::optimize("no-tree-vectorize")]] void gather(
    const T* src, int n, int top, const std::uint16_t* p11, const std::uint16_t* p12,
    const std::uint16_t* p21, const std::uint16_t* p22, std::uint32_t* upper,
    std::uint32_t* lower) {
  for (int i = 0; i < n; ++i) {
    int v = src[i];
    if constexpr (kHold) v = std::min(v, top);
    upper[i] = p11[v] | static_cast<std::uint32_t>(p12[v]) << 16;
    lower[i] = p21[v] | static_cast<std::uint32_t>(p22[v]) << 16;
  }
}

// Rows [y_begin, y_end), cell by cell: within a band of rows between two tile centres on y,
// every row's stretch of one span before the next span, so the four maps a span reads
// (4 x 128 KiB at 16 bits) stay in the cache while they are used.
template <class T, bool kHold>
[[gnu::flatten]] void blend_rows(const BlendJob& job, int y_begin, int y_end) {
  const ClaheLayout& l = job.l;
  const int top = l.top();
  const auto bins = static_cast<std::size_t>(l.bins);
  alignas(64) std::uint32_t upper[kBlock], lower[kBlock];
  for (int band_begin = y_begin; band_begin < y_end;) {
    const ClaheAxis first = clahe_axis(band_begin, l.inv_tile_h, l.tiles_y);
    int band_end = band_begin + 1;
    while (band_end < y_end) {
      const ClaheAxis a = clahe_axis(band_end, l.inv_tile_h, l.tiles_y);
      if (a.t1 != first.t1 || a.t2 != first.t2) break;
      ++band_end;
    }
    const std::uint16_t* plane1 = job.maps + static_cast<std::size_t>(first.t1) * l.tiles_x * bins;
    const std::uint16_t* plane2 = job.maps + static_cast<std::size_t>(first.t2) * l.tiles_x * bins;
    for (int s = 0; s < job.span_count; ++s) {
      const ClaheCpu::Span& span = job.spans[s];
      const std::uint16_t* p11 = plane1 + static_cast<std::size_t>(span.t1) * bins;
      const std::uint16_t* p12 = plane1 + static_cast<std::size_t>(span.t2) * bins;
      const std::uint16_t* p21 = plane2 + static_cast<std::size_t>(span.t1) * bins;
      const std::uint16_t* p22 = plane2 + static_cast<std::size_t>(span.t2) * bins;
      for (int y = band_begin; y < band_end; ++y) {
        const ClaheAxis ay = clahe_axis(y, l.inv_tile_h, l.tiles_y);
        const T* src = job.in.row_as<T>(y);
        T* dst = job.out.row_as<T>(y);
        for (int x0 = span.x_begin; x0 < span.x_end; x0 += kBlock) {
          const int n = std::min(kBlock, span.x_end - x0);
          gather<T, kHold>(src + x0, n, top, p11, p12, p21, p22, upper, lower);
          blend_block(upper, lower, job.w1 + x0, job.w2 + x0, ay.w1, ay.w2, dst + x0, n);
        }
      }
    }
    band_begin = band_end;
  }
}

#if STARSIFT_CLAHE_AVX2
// The same rows, the blend on 8 lanes.
template <class T, bool kHold>
[[gnu::flatten, gnu::target("avx2")]] void blend_rows_avx2(const BlendJob& job, int y_begin,
                                                           int y_end) {
  blend_rows<T, kHold>(job, y_begin, y_end);
}
#endif

template <class T, bool kHold, int kWays>
void run_clahe(const ClaheLayout& l, ConstImageView in, ImageView out, ThreadPool& pool,
               std::uint32_t* histograms, std::uint16_t* maps, const int* pad_columns,
               const float* w1, const float* w2, const ClaheCpu::Span* spans, int span_count) {
  build_maps<T, kHold, kWays>(MapsJob{l, in, pad_columns}, histograms, maps, pool);
  const BlendJob job{l, in, out, maps, w1, w2, spans, span_count};
  auto rows = &blend_rows<T, kHold>;
#if STARSIFT_CLAHE_AVX2
  if (use_avx2()) rows = &blend_rows_avx2<T, kHold>;
#endif
  pool.parallel_for(l.height, [&](int begin, int end) { rows(job, begin, end); });
}

}  // namespace

void ClaheCpu::run(const BrightnessParams& params, int bit_depth, ConstImageView in, ImageView out,
                   ThreadPool& pool) {
  const ClaheLayout l = clahe_layout(params, bit_depth, in, out);
  const bool eight = in.format == PixelFormat::Gray8;
  const int ways = eight ? 4 : 1;
  const auto bins = static_cast<std::size_t>(l.bins);
  // Grown, never shrunk: a frame of a size seen before allocates nothing.
  const auto grow = [](auto& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
  };
  // Histograms: zero when grown, and every tile leaves its buffer zero again.
  grow(histograms_, static_cast<std::size_t>(pool.size()) * bins * ways);
  grow(maps_, static_cast<std::size_t>(l.tiles()) * bins);
  grow(column_w1_, static_cast<std::size_t>(l.width));
  grow(column_w2_, static_cast<std::size_t>(l.width));
  grow(pad_columns_, static_cast<std::size_t>(l.padded_width() - l.width));
  if (spans_.capacity() < static_cast<std::size_t>(l.tiles_x) + 1) spans_.reserve(l.tiles_x + 1);

  spans_.clear();
  for (int x = 0; x < l.width; ++x) {
    const ClaheAxis ax = clahe_axis(x, l.inv_tile_w, l.tiles_x);
    column_w1_[static_cast<std::size_t>(x)] = ax.w1;
    column_w2_[static_cast<std::size_t>(x)] = ax.w2;
    if (spans_.empty() || spans_.back().t1 != ax.t1 || spans_.back().t2 != ax.t2)
      spans_.push_back({x, x + 1, ax.t1, ax.t2});
    else
      spans_.back().x_end = x + 1;
  }
  for (int x = l.width; x < l.padded_width(); ++x)
    pad_columns_[static_cast<std::size_t>(x - l.width)] =
        border_index(x, l.width, BorderMode::Reflect101);

  const auto go = [&](auto t, auto hold, auto w) {
    using T = decltype(t);
    run_clahe<T, decltype(hold)::value, decltype(w)::value>(
        l, in, out, pool, histograms_.data(), maps_.data(), pad_columns_.data(), column_w1_.data(),
        column_w2_.data(), spans_.data(), static_cast<int>(spans_.size()));
  };
  using Yes = std::true_type;
  using No = std::false_type;
  using One = std::integral_constant<int, 1>;
  using Four = std::integral_constant<int, 4>;
  if (eight)
    go(std::uint8_t{}, No{}, Four{});
  else if (l.bits == 16)
    go(std::uint16_t{}, No{}, One{});
  else
    go(std::uint16_t{}, Yes{}, One{});
}

}  // namespace starsift
