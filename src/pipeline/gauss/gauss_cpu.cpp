// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU Gaussian blur's direct sums (gauss_cpu.hpp), in the reference's order.
//
// Each thread takes a band of output rows and works down it one strip of columns at a time
// (kRingBytes). A source row's strip, with rx pixels either side, is converted to float into
// a padded line (the samples outside the frame read through the border), blurred along x into
// a ring that keeps the last 2 ry + 1 such rows, and every output row is then the weighted sum
// of the ring's rows along y, converted back as it is written. Both sums are one kernel (convolve):
// out[k] = sum over taps t, in order, of w[t] * src_t[k], where src_t is the padded line
// shifted by t pixels (along x) or the ring's row t (along y). It keeps a block of outputs in
// registers across every tap, so each tap costs one load, one multiply and one add per
// vector; every output still takes the reference's float operations in the reference's
// order (starting from 0, tap -r first), so the results are the reference's, bit for bit.
//
// Vectors: GCC/Clang vector extensions, compiled three times: the target's baseline (16-byte
// registers on x86-64), and on x86-64 also AVX2 (32 bytes) and AVX-512F (64 bytes), chosen at
// run time. None of the three enables FMA, and this file is compiled with -ffp-contract=off,
// so a multiply and the following add are never fused: the sums round as the reference's.
#include "pipeline/gauss/gauss_cpu.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

namespace starsift {

namespace {

// Every function here that passes vectors by value is internal and inlined (flatten), so
// GCC's note that wide vectors change the calling convention concerns no real call.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define STARSIFT_GAUSS_INLINE [[gnu::always_inline]] inline

template <int kBytes>
struct Vec {
  typedef float type __attribute__((vector_size(kBytes)));
};

// Outputs kept in registers per block: 8 vectors (8 independent chains of adds, enough to
// hide the add's latency) plus a weight and a loaded vector fit the 16 registers of SSE2 and
// AVX2 and a quarter of AVX-512's 32.
constexpr int kBlockVectors = 8;

template <class V>
STARSIFT_GAUSS_INLINE V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class V>
STARSIFT_GAUSS_INLINE void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// out[k] = sum over t < taps, in order, of w[t] * src[t][k], for k < n, each sum started at 0:
// per output, the reference's sequence of float operations.
template <int kBytes>
STARSIFT_GAUSS_INLINE void convolve(const float* const* src, const float* w, int taps,
                                    std::size_t n, float* out) {
  using V = typename Vec<kBytes>::type;
  constexpr std::size_t kLanes = kBytes / sizeof(float);
  constexpr std::size_t kBlock = kBlockVectors * kLanes;
  std::size_t k = 0;
  for (; k + kBlock <= n; k += kBlock) {
    V acc[kBlockVectors] = {};
    for (int t = 0; t < taps; ++t) {
      const V wt = V{} + w[t];
      const float* s = src[t] + k;
#pragma GCC unroll 8
      for (int j = 0; j < kBlockVectors; ++j) acc[j] += wt * load<V>(s + j * kLanes);
    }
#pragma GCC unroll 8
    for (int j = 0; j < kBlockVectors; ++j) store(out + k + j * kLanes, acc[j]);
  }
  for (; k + kLanes <= n; k += kLanes) {
    V acc = {};
    for (int t = 0; t < taps; ++t) acc += (V{} + w[t]) * load<V>(src[t] + k);
    store(out + k, acc);
  }
  for (; k < n; ++k) {
    float acc = 0.0f;
    for (int t = 0; t < taps; ++t) acc += w[t] * src[t][k];
    out[k] = acc;
  }
}

// The samples of one format: type T, kStep samples per pixel of which the first kChannels
// are blurred (the others, alpha or padding, copied).
template <class T, int kStep, int kChannels>
struct Layout {
  using Sample = T;
  static constexpr int step = kStep;
  static constexpr int channels = kChannels;
};

// Row `row`'s colour samples as floats into out[0, width * channels). (A plain loop: GCC
// vectorises it well, where its vector extensions convert narrow integers lane by lane.)
template <class L>
STARSIFT_GAUSS_INLINE void load_row(const std::byte* __restrict row, int width,
                                    float* __restrict out) {
  using T = typename L::Sample;
  for (int x = 0; x < width; ++x) {
    for (int c = 0; c < L::channels; ++c) {
      T v;
      std::memcpy(&v, row + sizeof(T) * (static_cast<std::size_t>(x) * L::step + c), sizeof v);
      out[static_cast<std::size_t>(x) * L::channels + c] = static_cast<float>(v);
    }
  }
}

// gauss_round() in a form the compiler vectorises: the same result for every float (NaN and
// anything not above 0 give 0, anything from max up gives max, the rest is rounded half up).
template <class T>
STARSIFT_GAUSS_INLINE T round_sample(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    constexpr float kMax = std::is_same_v<T, std::uint8_t> ? 255.0f : 65535.0f;
    float c = v > 0.0f ? v : 0.0f;
    c = c < kMax ? c : kMax;
    return static_cast<T>(static_cast<int>(c + 0.5f));
  }
}

// One output row from its float sums (integers through round_sample), alpha/padding copied
// from the input row `src`; grey rows a vector of samples at a time, rounded as round_sample.
template <int kBytes, class L>
STARSIFT_GAUSS_INLINE void store_row(const float* sums, const std::byte* src, std::byte* dst,
                                     int width) {
  using T = typename L::Sample;
  int x = 0;
  if constexpr (L::step == 1 && !std::is_same_v<T, float>) {
    using V = typename Vec<kBytes>::type;
    constexpr int kLanes = kBytes / sizeof(float);
    typedef std::int32_t VI __attribute__((vector_size(kBytes)));
    typedef T VT __attribute__((vector_size(kLanes * sizeof(T))));
    constexpr float kMax = std::is_same_v<T, std::uint8_t> ? 255.0f : 65535.0f;
    const V zero = {}, max = zero + kMax, half = zero + 0.5f;
    for (; x + kLanes <= width; x += kLanes) {
      const V v = load<V>(sums + x);
      V c = v > zero ? v : zero;  // NaN too
      c = c < max ? c : max;
      const VT sample = __builtin_convertvector(__builtin_convertvector(c + half, VI), VT);
      std::memcpy(dst + sizeof(T) * static_cast<std::size_t>(x), &sample, sizeof sample);
    }
  }
  for (; x < width; ++x) {
    for (int c = 0; c < L::step; ++c) {
      const std::size_t at = sizeof(T) * (static_cast<std::size_t>(x) * L::step + c);
      if (c >= L::channels) {
        std::memcpy(dst + at, src + at, sizeof(T));
      } else {
        const T sample = round_sample<T>(sums[static_cast<std::size_t>(x) * L::channels + c]);
        std::memcpy(dst + at, &sample, sizeof sample);
      }
    }
  }
}

// What every band of one call shares.
struct Frame {
  const GaussParams& params;
  ConstImageView in;
  ImageView out;
  int rx, ry;
  const float* wx;
  const float* wy;
  int strip;  // pixels per strip (strip_pixels())
};

// The frame is blurred in strips of columns sized so that the ring of 2 ry + 1 strip rows
// holds at most this many bytes (the strip between 256 and 1024 samples): for small radii the
// ring then stays in L1 beside the padded line, for large ones well within L2. On 2048-wide
// GRAY8 frames with one thread, strips took 5-10 % less time than whole rows at sigma 0.5 to 5
// and about 5 % more at sigma 10 (where the 256-sample strips pad 80 samples each).
constexpr std::size_t kRingBytes = 24 * 1024;

int strip_pixels(int width, int channels, int ry) {
  const std::size_t per_sample = (2 * static_cast<std::size_t>(ry) + 1) * sizeof(float);
  std::size_t samples = kRingBytes / per_sample / 128 * 128;  // whole blocks of AVX-512 sums
  samples = std::clamp<std::size_t>(samples, 256, 1024);
  const auto pixels = static_cast<int>(samples / static_cast<std::size_t>(channels));
  return std::min(width, std::max(1, pixels));
}

// One sample of row `row`, pixel x, channel c, as float.
template <class L>
STARSIFT_GAUSS_INLINE float load_sample(const std::byte* row, int x, int c) {
  typename L::Sample v;
  std::memcpy(&v, row + sizeof v * (static_cast<std::size_t>(x) * L::step + c), sizeof v);
  return static_cast<float>(v);
}

// The output pixels [x0, x1) of the rows [y_begin, y_end), as the header says.
template <int kBytes, class L>
STARSIFT_GAUSS_INLINE void blur_strip(const Frame& f, int y_begin, int y_end, int x0, int x1) {
  constexpr int ch = L::channels;
  const int width = f.in.width, height = f.in.height, rx = f.rx, ry = f.ry;
  const BorderMode mode = f.params.border;
  const auto border = static_cast<float>(f.params.border_value);
  const std::size_t samples = static_cast<std::size_t>(x1 - x0) * ch;
  const int slots = 2 * ry + 1;
  const int taps_x = 2 * rx + 1;
  const std::size_t pixel_bytes = static_cast<std::size_t>(bytes_per_pixel(f.in.format));

  // Grow to the widest strip and largest radius, then stay: no allocation per frame.
  thread_local std::vector<float> padded, ring, sums, constant_row;
  thread_local std::vector<int> ring_rows;
  thread_local std::vector<const float*> x_taps, y_taps;
  padded.resize(samples + 2 * static_cast<std::size_t>(rx) * ch);
  ring.resize(static_cast<std::size_t>(slots) * samples);
  sums.resize(samples);
  constant_row.assign(samples, border);
  ring_rows.assign(static_cast<std::size_t>(slots), std::numeric_limits<int>::min());
  x_taps.resize(static_cast<std::size_t>(taps_x));
  y_taps.resize(static_cast<std::size_t>(slots));
  for (int t = 0; t < taps_x; ++t) x_taps[t] = padded.data() + static_cast<std::size_t>(t) * ch;

  // Virtual row v (any y, through the border) blurred along x into ring slot v mod slots,
  // unless it is there already (a band's first ry rows are also its neighbour's); outside the
  // frame under Constant the border value's row instead. The padded line holds pixels
  // x0 - rx .. x1 + rx - 1: those inside the frame converted in one run, those outside read
  // through the border.
  const int in_begin = std::max(x0 - rx, 0), in_end = std::min(x1 + rx, width);
  const auto slot_of = [&](int v) { return ((v % slots) + slots) % slots; };
  const auto outside = [&](int v) { return border_index(v, height, mode) < 0; };
  const auto blur_row = [&](int v) {
    const int sy = border_index(v, height, mode);
    const int slot = slot_of(v);
    if (sy < 0 || ring_rows[static_cast<std::size_t>(slot)] == v) return;
    const std::byte* row = f.in.row(sy);
    // Pixel xx of the frame is padded[(xx - (x0 - rx)) * ch].
    float* at_x0 = padded.data() + static_cast<std::size_t>(rx) * ch;
    load_row<L>(row + static_cast<std::size_t>(in_begin) * pixel_bytes, in_end - in_begin,
                at_x0 + static_cast<std::ptrdiff_t>(in_begin - x0) * ch);
    for (int side = 0; side < 2; ++side) {  // the pixels beyond each end of the frame
      const int x_begin = side == 0 ? x0 - rx : width;
      const int x_end = side == 0 ? std::min(0, x1 + rx) : x1 + rx;
      for (int xx = x_begin; xx < x_end; ++xx) {
        const int sx = border_index(xx, width, mode);
        float* p = at_x0 + static_cast<std::ptrdiff_t>(xx - x0) * ch;
        for (int c = 0; c < ch; ++c) p[c] = sx < 0 ? border : load_sample<L>(row, sx, c);
      }
    }
    convolve<kBytes>(x_taps.data(), f.wx, taps_x, samples,
                     ring.data() + static_cast<std::size_t>(slot) * samples);
    ring_rows[static_cast<std::size_t>(slot)] = v;
  };

  // A packed float grey output row takes the sums directly; the others through `sums`.
  constexpr bool kDirect = std::is_same_v<typename L::Sample, float> && L::step == ch;
  const std::size_t out_at = static_cast<std::size_t>(x0) * pixel_bytes;
  for (int y = y_begin; y < y_end; ++y) {
    // Rows y - ry .. y + ry: all new for the first output row, then only y + ry (it takes the
    // slot of y - ry - 1, which has left the window).
    for (int v = y == y_begin ? y - ry : y + ry; v <= y + ry; ++v) blur_row(v);
    for (int j = 0, slot = slot_of(y - ry); j < slots;
         ++j, slot = slot + 1 == slots ? 0 : slot + 1) {
      y_taps[static_cast<std::size_t>(j)] =
          outside(y - ry + j) ? constant_row.data()
                              : ring.data() + static_cast<std::size_t>(slot) * samples;
    }
    if constexpr (kDirect) {
      convolve<kBytes>(y_taps.data(), f.wy, slots, samples,
                       reinterpret_cast<float*>(f.out.row(y) + out_at));
    } else {
      convolve<kBytes>(y_taps.data(), f.wy, slots, samples, sums.data());
      store_row<kBytes, L>(sums.data(), f.in.row(y) + out_at, f.out.row(y) + out_at, x1 - x0);
    }
  }
}

// The rows [y_begin, y_end) of the output, strip after strip.
template <int kBytes, class L>
STARSIFT_GAUSS_INLINE void blur_band(const Frame& f, int y_begin, int y_end) {
  for (int x0 = 0; x0 < f.in.width; x0 += f.strip) {
    blur_strip<kBytes, L>(f, y_begin, y_end, x0, std::min(x0 + f.strip, f.in.width));
  }
}

template <class L>
[[gnu::flatten]] void band_baseline(const Frame& f, int y_begin, int y_end) {
  blur_band<16, L>(f, y_begin, y_end);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_GAUSS_X86 1
template <class L>
[[gnu::flatten, gnu::target("avx2")]] void band_avx2(const Frame& f, int y_begin, int y_end) {
  blur_band<32, L>(f, y_begin, y_end);
}
template <class L>
[[gnu::flatten, gnu::target("avx512f")]] void band_avx512(const Frame& f, int y_begin, int y_end) {
  blur_band<64, L>(f, y_begin, y_end);
}
#else
#define STARSIFT_GAUSS_X86 0
#endif

enum class Vectors { Baseline, Avx2, Avx512 };

Vectors resolve(GaussCpuIsa isa) noexcept {
#if STARSIFT_GAUSS_X86
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (isa == GaussCpuIsa::Best && avx512) return Vectors::Avx512;
  if (isa != GaussCpuIsa::Baseline && avx2) return Vectors::Avx2;
#else
  (void)isa;
#endif
  return Vectors::Baseline;
}

template <class L>
void run_layout(const Frame& f, ThreadPool& pool, Vectors vectors) {
  void (*band)(const Frame&, int, int) = &band_baseline<L>;
#if STARSIFT_GAUSS_X86
  if (vectors == Vectors::Avx512) band = &band_avx512<L>;
  if (vectors == Vectors::Avx2) band = &band_avx2<L>;
#else
  (void)vectors;
#endif
  pool.parallel_for(f.in.height, [&](int y_begin, int y_end) { band(f, y_begin, y_end); });
}

}  // namespace

std::string_view gauss_cpu_isa_name(GaussCpuIsa isa) noexcept {
  switch (resolve(isa)) {
    case Vectors::Avx512:
      return "avx512f";
    case Vectors::Avx2:
      return "avx2";
    case Vectors::Baseline:
      break;
  }
  return "baseline";
}

void GaussCpu::run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool,
                   GaussCpuIsa isa) {
  params.validate_frames(in, out);
  const int rx = params.effective_radius_x();
  const int ry = params.effective_radius_y();
  if (weights_for_.sigma_x != params.sigma_x || weights_for_.sigma_y != params.sigma_y ||
      weights_for_.effective_radius_x() != rx || weights_for_.effective_radius_y() != ry ||
      wx_.empty()) {
    wx_ = gauss_weights(params.sigma_x, rx);  // only when the parameters change
    wy_ = gauss_weights(params.sigma_y, ry);
    weights_for_ = params;
  }
  const int channels = format_info(in.format).color_channels;
  const Frame f{params, in,         out,        rx,
                ry,     wx_.data(), wy_.data(), strip_pixels(in.width, channels, ry)};
  const Vectors vectors = resolve(isa);
  const FormatInfo& info = format_info(in.format);
  switch (info.bytes_per_sample) {
    case 1:
      if (info.channels == 1) return run_layout<Layout<std::uint8_t, 1, 1>>(f, pool, vectors);
      return run_layout<Layout<std::uint8_t, 4, 3>>(f, pool, vectors);
    case 2:
      return run_layout<Layout<std::uint16_t, 1, 1>>(f, pool, vectors);
    default:
      return run_layout<Layout<float, 1, 1>>(f, pool, vectors);
  }
}

}  // namespace starsift
