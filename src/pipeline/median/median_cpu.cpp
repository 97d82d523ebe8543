// SPDX-License-Identifier: LGPL-2.1-or-later
// The fast CPU median (median_cpu.hpp): per row, many pixels at a time.
//
// Method (Adams 2021's separable selection, as the CUDA network schedule does it): a row
// band is processed in chunks of up to kChunk samples. First every column of the K source
// rows is sorted once (a K-sample network on vectors of kLanes columns) into K rank arrays,
// then each output vector is the median of its K sorted columns, read back at K offsets and
// put through the pruned selection program of scripts/gen_median_cpu_networks.py (14, 118
// and 368 min/max for 3x3, 5x5, 7x7 instead of sorting 9, 25, 49 samples). A column sort is
// shared by the K windows that contain it. Each chunk's sorted columns stay in L1.
//
// Vectors: GCC/Clang vector extensions (`vector_size`), 32 bytes, with min/max written as
// `a < b ? a : b`, which the compiler lowers to one min/max instruction per register on
// x86-64 (SSE2 pminub/pminsw, AVX2) and aarch64 (NEON umin/smin) alike; no intrinsics, no
// dependency (Highway would add a library for what here is two operations). 16-bit samples
// are kept as signed keys (sample ^ 0x8000, same order) because SSE2 has signed 16-bit
// min/max but unsigned only from SSE4.1. On x86-64 the same code is also compiled for AVX2
// (`target("avx2")`, chosen at run time) since the baseline has 16-byte registers only.
//
// Borders: the K source rows of an output row come from border_index() (a row outside the
// frame under Constant reads a row of border samples); the outputs whose window leaves the
// frame sideways (r per side) read a small padded copy of their columns built with
// border_index(), and run the same networks on single samples. So every pixel takes the
// same comparisons as the reference's definition, and the result is bit-identical.
//
// 4-channel 8-bit pixels are filtered as a byte row whose window columns are 4 bytes apart:
// each byte's median is its channel's; the alpha/padding bytes are then copied back.
#include "pipeline/median/median_cpu.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "pipeline/error.hpp"
#include "pipeline/median/reference.hpp"

namespace starsift {

namespace {

// Every function here that passes vectors by value is internal and inlined, so GCC's note
// that 32-byte vectors change the calling convention without AVX concerns no real call.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define STARSIFT_MEDIAN_INLINE [[gnu::always_inline]] inline

constexpr int kVectorBytes = 32;

template <class V>
STARSIFT_MEDIAN_INLINE V vmin(V a, V b) {
  return a < b ? a : b;
}
template <class V>
STARSIFT_MEDIAN_INLINE V vmax(V a, V b) {
  return a < b ? b : a;
}
template <class V>
STARSIFT_MEDIAN_INLINE void compare_swap(V& a, V& b) {
  const V lo = vmin(a, b);
  b = vmax(a, b);
  a = lo;
}

#include "pipeline/median/median_cpu_networks.inc"

// 8-bit samples compare as they are.
struct Bytes {
  using Sample = std::uint8_t;
  using Key = std::uint8_t;
  typedef std::uint8_t Vec __attribute__((vector_size(kVectorBytes)));
  static Key key(Sample s) { return s; }
  static Sample sample(Key k) { return k; }
  STARSIFT_MEDIAN_INLINE static Vec load_samples(const Sample* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  STARSIFT_MEDIAN_INLINE static void store_samples(Sample* p, Vec v) {
    std::memcpy(p, &v, sizeof v);
  }
};

// 16-bit samples as signed keys, sample ^ 0x8000 (order-preserving; see the top).
struct Words {
  using Sample = std::uint16_t;
  using Key = std::int16_t;
  typedef std::int16_t Vec __attribute__((vector_size(kVectorBytes)));
  typedef std::uint16_t Raw __attribute__((vector_size(kVectorBytes)));
  static Key key(Sample s) { return static_cast<Key>(s ^ 0x8000u); }
  static Sample sample(Key k) {
    return static_cast<Sample>(static_cast<std::uint16_t>(k) ^ 0x8000u);
  }
  STARSIFT_MEDIAN_INLINE static Vec load_samples(const Sample* p) {
    Raw v;
    std::memcpy(&v, p, sizeof v);
    return std::bit_cast<Vec>(v ^ static_cast<std::uint16_t>(0x8000));
  }
  STARSIFT_MEDIAN_INLINE static void store_samples(Sample* p, Vec v) {
    const Raw raw = std::bit_cast<Raw>(v) ^ static_cast<std::uint16_t>(0x8000);
    std::memcpy(p, &raw, sizeof raw);
  }
};

template <class Traits>
struct Frame {
  ConstImageView in;
  ImageView out;
  BorderMode border;
  typename Traits::Sample border_sample;
};

// One thread's filter of K x K windows over rows of samples S apart (S = 1 grey, 4 for
// 4-channel pixels), with its scratch: a few kilobytes, on that thread's stack.
template <class Traits, int K, int S>
class RowFilter {
 public:
  using Sample = typename Traits::Sample;
  using Key = typename Traits::Key;
  using Vec = typename Traits::Vec;
  static constexpr int R = K / 2;
  static constexpr int kLanes = kVectorBytes / sizeof(Key);
  static constexpr int kChunk = 1024;                  // output samples per pass
  static constexpr int kColumns = kChunk + 2 * R * S;  // column samples a pass reads

  explicit RowFilter(const Frame<Traits>& f) : f_(f) {
    std::fill(std::begin(constant_), std::end(constant_), f.border_sample);
  }

  void rows(int y_begin, int y_end) {
    const int w = f_.in.width;
    for (int y = y_begin; y < y_end; ++y) {
      const Sample* src[K];  // pixel 0 of each source row; nullptr: a row of border samples
      for (int k = 0; k < K; ++k) {
        const int sy = border_index(y + k - R, f_.in.height, f_.border);
        src[k] = sy < 0 ? nullptr : f_.in.template row_as<Sample>(sy);
      }
      Sample* dst = f_.out.template row_as<Sample>(y);
      if (w > 2 * R) span(src, dst + R * S, (w - 2 * R) * S);  // windows inside the row
      const int left_end = std::min(R, w);
      padded_span(src, dst, 0, left_end);
      padded_span(src, dst, std::max(left_end, w - R), w);
      if constexpr (S == 4) {  // alpha/padding: the input's
        const Sample* row = f_.in.template row_as<Sample>(y);
        for (int x = 0; x < w; ++x) dst[x * 4 + 3] = row[x * 4 + 3];
      }
    }
  }

 private:
  // Outputs [xa, xb) of a row, whose windows leave the frame sideways: their columns are
  // copied with border_index() into edge_ (at most R outputs, so 3R pixels of columns).
  void padded_span(const Sample* const* src, Sample* dst, int xa, int xb) {
    if (xa >= xb) return;
    const int pixels = xb - xa + 2 * R;
    const Sample* rows[K];
    for (int k = 0; k < K; ++k) {
      for (int j = 0; j < pixels; ++j) {
        const int sx = border_index(xa - R + j, f_.in.width, f_.border);
        for (int s = 0; s < S; ++s)
          edge_[k][j * S + s] =
              (src[k] == nullptr || sx < 0) ? f_.border_sample : src[k][sx * S + s];
      }
      rows[k] = edge_[k];
    }
    span(rows, dst + xa * S, (xb - xa) * S);
  }

  // n output samples; rows[k] holds the first column of output 0's window (nullptr: border
  // samples), and output i's window columns are i + j * S, j < K.
  void span(const Sample* const* rows, Sample* out, int n) {
    for (int e0 = 0; e0 < n; e0 += kChunk) {
      const int outputs = std::min(kChunk, n - e0);
      const int columns = outputs + 2 * R * S;
      const Sample* src[K];
      for (int k = 0; k < K; ++k) src[k] = rows[k] ? rows[k] + e0 : constant_;
      sort_columns(src, columns);
      select(out + e0, outputs);
    }
  }

  // cols_[i][c]: rank i of column c. Vectors of kLanes columns; the last vector is moved
  // back to end at `columns` (it recomputes a few columns rather than read past the row).
  void sort_columns(const Sample* const* src, int columns) {
    if (columns >= kLanes) {
      for (int c = 0; c < columns; c += kLanes) {
        const int at = std::min(c, columns - kLanes);
        Vec v[K];
        for (int k = 0; k < K; ++k) v[k] = Traits::load_samples(src[k] + at);
        sort_column(std::integral_constant<int, K>{}, v);
        for (int k = 0; k < K; ++k) std::memcpy(&cols_[k][at], &v[k], sizeof(Vec));
      }
      return;
    }
    for (int c = 0; c < columns; ++c) {
      Key v[K];
      for (int k = 0; k < K; ++k) v[k] = Traits::key(src[k][c]);
      sort_column(std::integral_constant<int, K>{}, v);
      for (int k = 0; k < K; ++k) cols_[k][c] = v[k];
    }
  }

  void select(Sample* out, int outputs) {
    if (outputs >= kLanes) {
      for (int i = 0; i < outputs; i += kLanes) {
        const int at = std::min(i, outputs - kLanes);
        const Vec m = select_median<Vec>(std::integral_constant<int, K>{}, [&](int c, int rank) {
          Vec v;
          std::memcpy(&v, &cols_[rank][at + c * S], sizeof v);
          return v;
        });
        Traits::store_samples(out + at, m);
      }
      return;
    }
    for (int i = 0; i < outputs; ++i) {
      out[i] =
          Traits::sample(select_median<Key>(std::integral_constant<int, K>{}, [&](int c, int rank) {
            return cols_[rank][i + c * S];
          }));
    }
  }

  const Frame<Traits>& f_;
  alignas(64) Key cols_[K][kColumns];
  Sample constant_[kColumns];
  Sample edge_[K][3 * R * S];
};

template <class Traits, int K, int S>
[[gnu::flatten]] void filter_rows(const Frame<Traits>& f, int y_begin, int y_end) {
  RowFilter<Traits, K, S>(f).rows(y_begin, y_end);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_MEDIAN_AVX2 1
template <class Traits, int K, int S>
[[gnu::flatten, gnu::target("avx2")]] void filter_rows_avx2(const Frame<Traits>& f, int y_begin,
                                                            int y_end) {
  RowFilter<Traits, K, S>(f).rows(y_begin, y_end);
}
#else
#define STARSIFT_MEDIAN_AVX2 0
#endif

bool use_avx2(MedianCpuIsa isa) noexcept {
#if STARSIFT_MEDIAN_AVX2
  static const bool has = __builtin_cpu_supports("avx2");
  return isa == MedianCpuIsa::Best && has;
#else
  (void)isa;
  return false;
#endif
}

template <class Traits, int K, int S>
void run(const Frame<Traits>& f, ThreadPool& pool, MedianCpuIsa isa) {
  void (*rows)(const Frame<Traits>&, int, int) = &filter_rows<Traits, K, S>;
#if STARSIFT_MEDIAN_AVX2
  if (use_avx2(isa)) rows = &filter_rows_avx2<Traits, K, S>;
#endif
  pool.parallel_for(f.in.height, [&](int y_begin, int y_end) { rows(f, y_begin, y_end); });
}

template <class Traits, int S>
void run_size(const Frame<Traits>& f, int size, ThreadPool& pool, MedianCpuIsa isa) {
  switch (size) {
    case 3:
      return run<Traits, 3, S>(f, pool, isa);
    case 5:
      return run<Traits, 5, S>(f, pool, isa);
    default:
      return run<Traits, 7, S>(f, pool, isa);
  }
}

}  // namespace

bool median_cpu_vectorised(const MedianParams& params, PixelFormat format) noexcept {
  if (params.size != 3 && params.size != 5 && params.size != 7) return false;
  const FormatInfo& info = format_info(format);
  return !info.is_float && (info.channels == 1 || info.bytes_per_sample == 1);
}

std::string_view median_cpu_isa_name(MedianCpuIsa isa) noexcept {
  return use_avx2(isa) ? "avx2" : "baseline";
}

void median_cpu(const MedianParams& params, ConstImageView in, ImageView out, ThreadPool& pool,
                MedianCpuIsa isa) {
  if (!median_cpu_vectorised(params, in.format)) {
    median_reference(params, in, out, pool);
    return;
  }
  params.validate_for(in.format);
  if (in.width != out.width || in.height != out.height || in.format != out.format) {
    throw Error("median: output frame differs from input frame in size or format",
                "identical size and format");
  }
  const unsigned border = median_border_sample(params, in.format);
  const FormatInfo& info = format_info(in.format);
  if (info.bytes_per_sample == 2) {
    const Frame<Words> f{in, out, params.border, static_cast<std::uint16_t>(border)};
    run_size<Words, 1>(f, params.size, pool, isa);
  } else if (info.channels == 1) {
    const Frame<Bytes> f{in, out, params.border, static_cast<std::uint8_t>(border)};
    run_size<Bytes, 1>(f, params.size, pool, isa);
  } else {
    const Frame<Bytes> f{in, out, params.border, static_cast<std::uint8_t>(border)};
    run_size<Bytes, 4>(f, params.size, pool, isa);
  }
}

}  // namespace starsift
