// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's kernels and launcher (brightness.cuh). Each thread takes a group
// of kGroup consecutive pixels of a row: one vector load and store per group where the frame's
// alignment allows (a colour group is one 16-byte word), and always for the float planes,
// whose rows are whole 128-byte lines.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/brightness/brightness.cuh"
#include "cuda/brightness/brightness_pixel.hpp"
#include "cuda/brightness/clahe.cuh"
#include "cuda/common/dependent_launch.cuh"
#include "cuda/common/launch_limits.cuh"
#include "cuda/device_query.hpp"
#include "pipeline/border.hpp"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/brightness/tent_axis.hpp"

namespace starsift::cuda {

namespace {

using brightness_pixel::Correction;

constexpr int kGroup = 4;    // pixels per thread, consecutive in a row
constexpr int kBlockX = 32;  // threads along a row: 128 pixels
constexpr int kBlockY = 8;
// The histogram: few, full blocks (two of 1024 threads fill a multiprocessor), so that the
// block histograms merged into the global one are few.
constexpr int kHistogramThreads = 1024;
constexpr int kHistogramBlocksPerSm = 2;
constexpr int kSharedBins = 4096;    // a block's own histogram: 16 KiB of shared memory
constexpr int kFloatBins = 1 << 16;  // GRAY32F: 16 bits of v's float bits per round
// The histograms in the scratch: GRAY32F's round of high bits and two of low bits.
constexpr int kHistogramWords = 3 * kFloatBins;
constexpr int kSelectThreads = 1024;
static_assert(kHistogramThreads == kSelectThreads, "a histogram block selects (SelectTail)");
constexpr std::size_t kAlign = 256;
constexpr unsigned kFullWarp = 0xffffffffu;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// ---- Frames --------------------------------------------------------------------------------

struct Frame {
  const std::byte* in;
  std::byte* out;
  std::ptrdiff_t in_stride;
  std::ptrdiff_t out_stride;
  int width;
  int height;
  bool vector;  // groups load and store as one aligned word
};

// A float plane of the scratch (Y or B): rows of row_floats (a multiple of 32).
struct Plane {
  float* data;
  std::size_t row_floats;
  __device__ float* at(int x, int y) const {
    return data + static_cast<std::size_t>(y) * row_floats + x;
  }
};

// The small plane's two halves side by side (reduce_rows_kernel): sample (x, y) as x its run
// before's sum towards it, y its own run's, so that a sample is one 8-byte load.
struct Halves {
  float2* data;
  std::size_t row_pairs;
  __device__ float2* at(int x, int y) const {
    return data + static_cast<std::size_t>(y) * row_pairs + x;
  }
};

// kGroup integer samples from p as floats, `n` (1..kGroup) of them in the frame (the rest 0):
// one 32- or 64-bit load where `vector` (p aligned to the group) and the group is whole.
template <class T>
__device__ void load_integers(const T* p, int n, bool vector, float (&out)[kGroup]) {
  if (vector && n == kGroup) {
    if constexpr (sizeof(T) == 1) {
      const std::uint32_t w = __ldg(reinterpret_cast<const unsigned int*>(p));
#pragma unroll
      for (int i = 0; i < kGroup; ++i) out[i] = byte_float(w, i);
    } else {
      const uint2 w = __ldg(reinterpret_cast<const uint2*>(p));
      out[0] = half_float(w.x, 0);
      out[1] = half_float(w.x, 1);
      out[2] = half_float(w.y, 0);
      out[3] = half_float(w.y, 1);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kGroup; ++i) out[i] = i < n ? static_cast<float>(__ldg(p + i)) : 0.0f;
}

// How a kernel reads and writes each format's pixels, kGroup at a time; `n` (1..kGroup) of the
// group lie in the frame (load: 0..kGroup, 0 reading nothing). Raw is what a pixel's luminance and
// output are made from.
template <class T>
struct GreyInt {
  using Raw = float;  // the sample
  static constexpr bool kFloat = false;
  static constexpr bool kColour = false;
  static constexpr int kMaxBins = 1 << (8 * sizeof(T));  // the percentile's histogram
  __device__ static void load(const std::byte* row, int x0, int n, bool vector,
                              Raw (&raw)[kGroup]) {
    load_integers(reinterpret_cast<const T*>(row) + x0, n, vector, raw);
  }
  __device__ static float luminance(Raw raw, float max) {
    return brightness_pixel::grey_luminance(raw, max);
  }
  __device__ static void store(std::byte* row, int x0, int n, bool vector, const Raw (&)[kGroup],
                               const float (&)[kGroup], const float (&stretched)[kGroup],
                               const Correction& k) {
    std::uint32_t o[kGroup];
#pragma unroll
    for (int i = 0; i < kGroup; ++i) o[i] = brightness_pixel::round_sample(stretched[i], k.max);
    T* p = reinterpret_cast<T*>(row) + x0;
    if (vector && n == kGroup) {
      if constexpr (sizeof(T) == 1) {
        *reinterpret_cast<unsigned int*>(p) = o[0] | o[1] << 8 | o[2] << 16 | o[3] << 24;
      } else {
        *reinterpret_cast<uint2*>(p) = make_uint2(o[0] | o[1] << 16, o[2] | o[3] << 16);
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      if (i < n) p[i] = static_cast<T>(o[i]);
    }
  }
};

struct GreyFloat {
  using Raw = float;
  static constexpr bool kFloat = true;  // no sensor values: no kMaxBins, no mode clahe
  __device__ static void load(const std::byte* row, int x0, int n, bool vector,
                              Raw (&raw)[kGroup]) {
    const float* p = reinterpret_cast<const float*>(row) + x0;
    if (vector && n == kGroup) {
      const float4 w = __ldg(reinterpret_cast<const float4*>(p));
      raw[0] = w.x;
      raw[1] = w.y;
      raw[2] = w.z;
      raw[3] = w.w;
      return;
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) raw[i] = i < n ? __ldg(p + i) : 0.0f;
  }
  __device__ static float luminance(Raw raw, float) {
    return brightness_pixel::grey_luminance(raw, 1.0f);
  }
  __device__ static void store(std::byte* row, int x0, int n, bool vector, const Raw (&)[kGroup],
                               const float (&)[kGroup], const float (&stretched)[kGroup],
                               const Correction& k) {
    float o[kGroup];
#pragma unroll
    for (int i = 0; i < kGroup; ++i) o[i] = brightness_pixel::grey_out(stretched[i], k.max, true);
    float* p = reinterpret_cast<float*>(row) + x0;
    if (vector && n == kGroup) {
      *reinterpret_cast<float4*>(p) = make_float4(o[0], o[1], o[2], o[3]);
      return;
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      if (i < n) p[i] = o[i];
    }
  }
};

// RGBA/RGBx (Bgr false: R in byte 0) and BGRA/BGRx (R in byte 2); byte 3 copied.
template <bool Bgr>
struct Colour {
  using Raw = std::uint32_t;  // the pixel
  static constexpr bool kFloat = false;
  static constexpr bool kColour = true;
  static constexpr int kMaxBins = 256;
  __device__ static void load(const std::byte* row, int x0, int n, bool vector,
                              Raw (&raw)[kGroup]) {
    const unsigned int* p = reinterpret_cast<const unsigned int*>(row) + x0;
    if (vector && n == kGroup) {
      const uint4 w = __ldg(reinterpret_cast<const uint4*>(p));
      raw[0] = w.x;
      raw[1] = w.y;
      raw[2] = w.z;
      raw[3] = w.w;
      return;
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) raw[i] = i < n ? __ldg(p + i) : 0u;
  }
  __device__ static float luminance(Raw px, float) {
    return brightness_pixel::pixel_luminance<Bgr>(px);
  }
  __device__ static void store(std::byte* row, int x0, int n, bool vector, const Raw (&raw)[kGroup],
                               const float (&lum)[kGroup], const float (&stretched)[kGroup],
                               const Correction& k) {
    std::uint32_t o[kGroup];
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      o[i] = brightness_pixel::colour_out(raw[i], lum[i], stretched[i], k);
    }
    unsigned int* p = reinterpret_cast<unsigned int*>(row) + x0;
    if (vector && n == kGroup) {
      *reinterpret_cast<uint4*>(p) = make_uint4(o[0], o[1], o[2], o[3]);
      return;
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      if (i < n) p[i] = o[i];
    }
  }
};

// Calls f(F{}) with the traits of `format` (one brightness_supports()).
template <class Fn>
void with_format(PixelFormat format, Fn&& f) {
  switch (format) {
    case PixelFormat::Gray8:
      f(GreyInt<std::uint8_t>{});
      break;
    case PixelFormat::Gray16:
      f(GreyInt<std::uint16_t>{});
      break;
    case PixelFormat::Gray32F:
      f(GreyFloat{});
      break;
    case PixelFormat::Bgra:
    case PixelFormat::Bgrx:
      f(Colour<true>{});
      break;
    default:
      f(Colour<false>{});
  }
}

// ---- Where C comes from -------------------------------------------------------------------

// Mode local: B, the blurred luminance, from its float plane, one float4 a group (the plane's
// rows hold whole groups); at the right edge only the frame's samples, the blur having written
// no others.
struct LocalSource {
  Plane blurred;
  __device__ void load(int x0, int y, int n, float (&b)[kGroup]) const {
    const float* row = blurred.at(x0, y);
    if (n == kGroup) {
      const float4 b4 = __ldg(reinterpret_cast<const float4*>(row));
      b[0] = b4.x;
      b[1] = b4.y;
      b[2] = b4.z;
      b[3] = b4.w;
      return;
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) b[i] = i < n ? __ldg(row + i) : 0.0f;
  }
  __device__ float value(float lum, float b, const Correction& k) const {
    return brightness_pixel::local_value(lum, b, k);
  }
};

// One axis of the small plane in the scratch, LuminanceBlur::Axis's floats (tent_axis.hpp),
// an array each so that consecutive pixels load as one vector: per pixel the sample on its
// left, its fraction of the spacing past it, and its weights towards that sample and the next;
// per sample where its run (the pixels whose left is that sample) begins, samples + 1 of
// them: run r is run_begin[r] .. run_begin[r + 1], the runs of the last sample and beyond
// empty.
struct TentAxis {
  int* left;
  float* fraction;
  float* to_left;
  float* to_right;
  int* run_begin;
  int pixels;
  int samples;
  double spacing;
};

// a + t (b - a), each operation rounded on its own as the CPU's interpolation rounds it.
__device__ float lerp_rounded(float a, float b, float t) {
  return __fadd_rn(a, __fmul_rn(t, __fsub_rn(b, a)));
}

// Mode local from sigma 2 LuminanceBlur::kMinSmallSigma: B as LuminanceBlur::row() makes it,
// between the two rows about y of the blurred small plane interpolated across to the frame's
// width (small_blur_kernel or upsample_rows_kernel), one float4 a group from each (the rows hold
// whole groups, 0 past the width); a few MiB at 4K, read from L2.
struct SmallSource {
  Plane upsampled;
  const int* top;     // y's small row above, per frame row
  const float* down;  // its fraction of the spacing down to the next
  int small_height;
  __device__ void load(int x0, int row, int, float (&b)[kGroup]) const {
    const int j = __ldg(top + row);
    const float t = __ldg(down + row);
    const float4 a = __ldg(reinterpret_cast<const float4*>(upsampled.at(x0, j)));
    const float4 c = __ldg(reinterpret_cast<const float4*>(
        upsampled.at(x0, min(j + 1, small_height - 1))));  // one row: fraction 0
    b[0] = lerp_rounded(a.x, c.x, t);
    b[1] = lerp_rounded(a.y, c.y, t);
    b[2] = lerp_rounded(a.z, c.z, t);
    b[3] = lerp_rounded(a.w, c.w, t);
  }
  __device__ float value(float lum, float b, const Correction& k) const {
    return brightness_pixel::local_value(lum, b, k);
  }
};

// Mode clahe: launch_clahe's mapped values (T: 8 or 16 bits), rows of whole 256-byte lines,
// one word a group.
template <class T>
struct ClaheSource {
  const std::byte* mapped;
  std::size_t pitch;  // bytes
  float plane_max;
  __device__ void load(int x0, int y, int n, float (&m)[kGroup]) const {
    const T* row = reinterpret_cast<const T*>(mapped + static_cast<std::size_t>(y) * pitch) + x0;
    load_integers(row, n, true, m);  // rows of whole 256-byte lines: every group aligned
  }
  __device__ float value(float lum, float m, const Correction& k) const {
    return brightness_pixel::clahe_value(lum, m, plane_max, k);
  }
};

// Y and v of the group of pixels (x0.., y) whose raw pixels are `raw`.
template <class F, class S>
__device__ void values_of(const S& source, const Correction& k, int x0, int y, int n,
                          const typename F::Raw (&raw)[kGroup], float (&lum)[kGroup],
                          float (&value)[kGroup]) {
  float c[kGroup];
  source.load(x0, y, n, c);
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    lum[i] = F::luminance(raw[i], k.max);
    value[i] = source.value(lum[i], c[i], k);
  }
}

// The group of pixels (x0.., y): its raw pixels, Y and v.
template <class F, class S>
__device__ void group_values(const Frame& f, const S& source, const Correction& k, int x0, int y,
                             int n, typename F::Raw (&raw)[kGroup], float (&lum)[kGroup],
                             float (&value)[kGroup]) {
  F::load(f.in + static_cast<std::ptrdiff_t>(y) * f.in_stride, x0, n, f.vector, raw);
  values_of<F>(source, k, x0, y, n, raw, lum, value);
}

// ---- Step 1: Y -----------------------------------------------------------------------------

template <class F>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    luminance_kernel(Frame f, Plane luma, float max) {
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * kGroup;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x0 >= f.width || y >= f.height) return;
  const int n = min(kGroup, f.width - x0);
  typename F::Raw raw[kGroup];
  F::load(f.in + static_cast<std::ptrdiff_t>(y) * f.in_stride, x0, n, f.vector, raw);
  // Past the width the group's raw pixels are 0, and so is their Y.
  *reinterpret_cast<float4*>(luma.at(x0, y)) =
      make_float4(F::luminance(raw[0], max), F::luminance(raw[1], max), F::luminance(raw[2], max),
                  F::luminance(raw[3], max));
}

// ---- Steps 1-2 on the small plane (LuminanceBlur) -----------------------------------------

// Sample j's total (tent_axis::total()), by a warp: each lane takes the shares of every 32nd
// pixel under the tent (a double division each, in parallel), then every lane adds them in
// total()'s order, from the last pixel down, fetching each from its lane.
__device__ double warp_total(const TentAxis& a, int j, int lane) {
  int first = 0;
  int last = 0;
  tent_axis::tent_pixels(j, a.pixels, a.spacing, first, last);
  double sum = 0.0;
  for (int k0 = 0; k0 <= first - last; k0 += 32) {
    const int p = first - k0 - lane;
    const double share =
        p >= last ? tent_axis::tent_share(j, p, a.pixels, a.samples, a.spacing) : 0.0;
    const int n = min(32, first - last + 1 - k0);
    for (int k = 0; k < n; ++k) sum += __shfl_sync(kFullWarp, share, k);
  }
  return sum;
}

// Pixel p's floats, tent_axis::entry()'s (LuminanceBlur::Axis::build's), and where its run
// begins; the whole warp calls it, lane 0 writes.
__device__ void fill_tent(const TentAxis& a, int p, int lane) {
  tent_axis::Entry e{0, 0.0f, 1.0f, 0.0f};  // one sample: that pixel
  if (a.samples > 1) {
    const tent_axis::Spot s = tent_axis::spot(p, a.pixels, a.samples, a.spacing);
    const double to_left = warp_total(a, s.left, lane);
    const double to_right = warp_total(a, s.left + 1, lane);
    e = {s.left, static_cast<float>(s.fraction), static_cast<float>(s.to_left / to_left),
         static_cast<float>(s.to_right / to_right)};
  }
  if (lane != 0) return;
  a.left[p] = e.left;
  a.fraction[p] = e.fraction;
  a.to_left[p] = e.to_left;
  a.to_right[p] = e.to_right;
  if (tent_axis::run_starts(p, a.pixels, a.samples, a.spacing)) a.run_begin[e.left] = p;
  if (p == a.pixels - 1) {
    // The run of the last sample (none for more than one) and the end.
    a.run_begin[a.samples] = a.pixels;
    if (a.samples > 1) a.run_begin[a.samples - 1] = a.pixels;
  }
}

// Both axes' tables, a warp per pixel of either: the two totals a pixel divides by are sums
// of up to 2 kMaxFactor + 3 shares, each a double division, which a thread per pixel
// computed one after another (some 80 dependent divisions, on too few threads to hide them).
__global__ void tent_tables_kernel(TentAxis x, TentAxis y) {
  const int g = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (g < x.pixels) {
    fill_tent(x, g, lane);
  } else if (g - x.pixels < y.pixels) {
    fill_tent(y, g - x.pixels, lane);
  }
}

// reduce_rows_kernel: a warp takes the runs of kSamplesPerWarp + 1 samples of a row, each run
// at most kMaxFactor + 1 pixels (the spacing is at most the factor, the last run holds the
// last pixel too), one more for a quotient p / spacing rounded across a run's edge.
constexpr int kSamplesPerWarp = 31;
constexpr int kSpanPixels = (kSamplesPerWarp + 1) * (LuminanceBlur::kMaxFactor + 2);
constexpr int kSpanSlots = kSpanPixels + kSpanPixels / 32 + 1;
// The loads a lane issues at once: half the most a span needs (9 at kMaxFactor 16), so the
// span of factor 8 (sigma 40: some 257 pixels, 9 a lane) takes one round and that of factor 16
// two, and the registers they hold stay few enough for the blocks the shared spans allow.
constexpr int kSpanChunk = (kSpanPixels + 63) / 64;
// A lane's chunks start below the span's end, so a chunk's last slot lies below the span's
// pixels rounded up to whole chunks of the warp: kSpanPixels itself, which the shared spans
// hold.
static_assert(kSpanPixels % (32 * kSpanChunk) == 0, "unconditional stores stay in the span");

// A span's pixel q in shared memory: a slot left empty after every 32, so that lanes reading
// runs f pixels apart (f a power of two) fall in different banks.
__device__ int span_slot(int q) {
  return q + q / 32;
}

// A chunk of a row's span: pixel chunk + 32 i of the row into raw[i] (i < kSpanChunk), those
// past the span's end reading nothing and giving 0.
template <class F>
__device__ void load_chunk(const std::byte* row, int chunk, int end,
                           typename F::Raw (&raw)[kSpanChunk][kGroup]) {
#pragma unroll
  for (int i = 0; i < kSpanChunk; ++i) {
    const int p = chunk + 32 * i;
    F::load(row, p, p < end ? 1 : 0, false, raw[i]);
  }
}

// Each pixel's Y into the warp's span. Pixel chunk + 32 i is slot span_slot(chunk - begin) +
// 33 i (each 32 pixels on, one empty slot more). The stores are unconditional, past the span's
// end into slots no run reads (see kSpanPixels), so the chunk is straight-line code: with a
// branch per pixel the compiler worked out the shared addresses again in each.
template <class F>
__device__ void stage_chunk(const typename F::Raw (&raw)[kSpanChunk][kGroup], float max, int slot,
                            float* lum_span) {
#pragma unroll
  for (int i = 0; i < kSpanChunk; ++i) lum_span[slot + 33 * i] = F::luminance(raw[i][0], max);
}

// Rows a warp reduces: both rows' pixels are loaded before either is used, so that a warp
// keeps twice the bytes in flight (a warp a row waited on DRAM with 32 % of its bandwidth in
// use).
constexpr int kRowsPerWarp = 2;
constexpr int kPassRows = kBlockY * kRowsPerWarp;  // the rows a block's warps reduce at once
// The rows a block keeps reduced across: its runs of rows (reduce_runs()) hold at most this.
constexpr int kBlockRows = kPassRows + kPassRows / 2;

// The runs of rows a block of reduce_rows_kernel takes: about a pass of rows, and at most
// kBlockRows of them. A run holds at most ceil(spacing) + 2 rows: one for a quotient p / spacing
// rounded across a run's edge, one for the last row, which the last run holds too.
int reduce_runs(double spacing) {
  const int run_rows = static_cast<int>(std::ceil(spacing));
  int runs = std::max(1, kPassRows / run_rows);
  while (runs > 1 && runs * (run_rows + 2) > kBlockRows) --runs;
  return runs;
}

// The frame reduced onto the small plane by the tents, in the small plane's two halves
// (Halves): sample (i, r)'s y holds run r's rows times their to_left (towards sample r), its x
// run r - 1's rows times their to_right (towards r; row 0: 0), each summed from 0 in the rows'
// order, so that the sample is x + y (small_sample(); LuminanceBlur's order).
// A block takes `runs` consecutive runs of rows (reduce_runs()) and the same 31 samples
// across. Across: the block keeps the tents' weights of the pixels of runs r0 - 1 .. r0 + 30
// (r0 its first sample) in shared memory, the same for every row; a warp reads a row's pixels
// a pixel a lane, coalesced, and keeps their Y in shared memory; lane l then adds up run
// r0 - 1 + l's products Y to_left (towards the sample of its run) and Y to_right (towards the
// next), and sample r0 - 1 + l (lane 1 on) adds the run before's to_right sum, from the lane
// before, to its own run's to_left sum: LuminanceBlur's products and order, each operation
// rounded on its own. Each pixel is read and its Y computed once (a run in 32 twice). Down: the
// rows reduced across stay in shared memory, and a thread a run, sample and side adds them up.
// The rows never go through global memory, and no second kernel waits for them.
template <class F>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    reduce_rows_kernel(Frame f, float max, TentAxis x, TentAxis y, int runs, Halves halves) {
  static_assert(kBlockX == 32, "a warp its rows");
  allow_dependent_grid();
  __shared__ float lum_spans[kBlockY][kSpanSlots];
  __shared__ float weights_left[kSpanSlots];
  __shared__ float weights_right[kSpanSlots];
  __shared__ float reduced[kBlockRows][kBlockX];  // a row's sample first_run + l at [row][l]
  const int lane = static_cast<int>(threadIdx.x);
  const int warp = static_cast<int>(threadIdx.y);
  const int first_run = static_cast<int>(blockIdx.x) * kSamplesPerWarp - 1;  // lane 0's
  const int run = first_run + lane;
  const int begin = x.run_begin[first_run > 0 ? first_run : 0];
  const int last_run = first_run + 32;
  const int end = x.run_begin[last_run < x.samples ? last_run : x.samples];
  for (int q = warp * kBlockX + lane; q < end - begin; q += kBlockX * kBlockY) {
    weights_left[span_slot(q)] = __ldg(x.to_left + begin + q);
    weights_right[span_slot(q)] = __ldg(x.to_right + begin + q);
  }
  const int run_down = static_cast<int>(blockIdx.y) * runs;  // the block's first run down
  const int runs_here = min(runs, y.samples - run_down);
  const int row_begin = __ldg(y.run_begin + run_down);
  const int row_end = __ldg(y.run_begin + run_down + runs_here);
  __syncthreads();
  float* const lum_span = lum_spans[warp];
  const bool has_run = run >= 0 && run < x.samples;
  const int run_pixels = has_run ? x.run_begin[run + 1] - x.run_begin[run] : 0;
  const int run_first = has_run ? x.run_begin[run] - begin : 0;  // in the span
  const auto row_of = [&](int row) {
    return f.in + static_cast<std::ptrdiff_t>(row) * f.in_stride;
  };
  // The span staged: this lane's run summed, the sample kept.
  const auto finish_row = [&](int row) {
    __syncwarp();
    float own = 0.0f;   // this run's to_left sum: towards its sample
    float next = 0.0f;  // its to_right sum: towards the next sample
    int slot = span_slot(run_first);
    for (int k = 0, q = run_first; k < run_pixels; ++k, ++q) {
      const float lum = lum_span[slot];
      own = __fadd_rn(own, __fmul_rn(lum, weights_left[slot]));
      next = __fadd_rn(next, __fmul_rn(lum, weights_right[slot]));
      slot += (q + 1) % 32 == 0 ? 2 : 1;  // past the empty slot after every 32
    }
    // Sample 0's run before is lane 0's of the first warp, run -1: 0, as the CPU starts it.
    const float before = __shfl_up_sync(kFullWarp, next, 1);
    // Within kBlockRows by reduce_runs(); the test keeps shared memory safe regardless.
    if (row - row_begin < kBlockRows) reduced[row - row_begin][lane] = __fadd_rn(before, own);
    __syncwarp();  // the sums have read the span before the next row stages
  };
  // A warp's rows: warp w takes rows w kRowsPerWarp.. of each pass of kPassRows (the loop's
  // bounds are the warp's: its lanes stay together for the shuffles).
  for (int y0 = row_begin + warp * kRowsPerWarp; y0 < row_end; y0 += kPassRows) {
    const int rows_here = min(kRowsPerWarp, row_end - y0);
    if (end - begin <= 32 * kSpanChunk) {
      // The span in one chunk (factors up to 8): every row's loads first.
      const int chunk = begin + lane;
      typename F::Raw raw[kRowsPerWarp][kSpanChunk][kGroup];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        load_chunk<F>(row_of(y0 + r), chunk, r < rows_here ? end : 0, raw[r]);
      }
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        if (r >= rows_here) break;
        stage_chunk<F>(raw[r], max, span_slot(lane), lum_span);
        finish_row(y0 + r);
      }
      continue;
    }
    // Larger spans: row by row, chunk by chunk, each chunk's loads issued before the first is
    // used.
    for (int r = 0; r < rows_here; ++r) {
      for (int chunk = begin + lane; chunk < end; chunk += 32 * kSpanChunk) {
        typename F::Raw raw[kSpanChunk][kGroup];
        load_chunk<F>(row_of(y0 + r), chunk, end, raw);
        stage_chunk<F>(raw, max, span_slot(chunk - begin), lum_span);
      }
      finish_row(y0 + r);
    }
  }
  __syncthreads();
  // Down: thread t adds up run run_down + t / 64's rows, towards its own sample (left) or the
  // next (right), for sample first_run + t % 32, in the rows' order from 0.
  const int threads = kBlockX * kBlockY;
  for (int t = warp * kBlockX + lane; t < runs_here * 2 * kBlockX; t += threads) {
    const int l = t % kBlockX;
    const int sample = first_run + l;
    if (l == 0 || sample >= x.samples) continue;
    const int j = run_down + t / (2 * kBlockX);
    const bool towards_next = (t / kBlockX) % 2 != 0;
    const float* weight = towards_next ? y.to_right : y.to_left;
    const int stop = min(__ldg(y.run_begin + j + 1), row_begin + kBlockRows);  // as above
    float sum = 0.0f;
    for (int row = __ldg(y.run_begin + j); row < stop; ++row) {
      sum = __fadd_rn(sum, __fmul_rn(__ldg(weight + row), reduced[row - row_begin][l]));
    }
    if (!towards_next) {
      halves.at(sample, j)->y = sum;
    } else if (j + 1 < y.samples) {
      halves.at(sample, j + 1)->x = sum;
    }
    if (j == 0 && towards_next) halves.at(sample, 0)->x = 0.0f;  // no run before sample 0
  }
}

// Sample i of a row of the small plane from its two halves (reduce_rows_kernel), as
// LuminanceBlur adds them.
__device__ __forceinline__ float small_sample(const float2* row, int i) {
  const float2 v = __ldg(row + i);
  return __fadd_rn(v.x, v.y);
}

// The small plane whole, from its halves, where launch_gauss blurs it (sigmas beyond
// small_blur_kernel's radii).
__global__ void __launch_bounds__(kBlockX* kBlockY)
    add_halves_kernel(Halves halves, int small_width, int small_height, Plane small) {
  wait_for_prior_grid();  // the halves
  allow_dependent_grid();
  const int i = static_cast<int>(blockIdx.x * kBlockX + threadIdx.x);
  const int r = static_cast<int>(blockIdx.y * kBlockY + threadIdx.y);
  if (i >= small_width || r >= small_height) return;
  *small.at(i, r) = small_sample(halves.at(0, r), i);
}

// The small plane's blur in one kernel where both radii are at most kSmallBlurRadius (sigma
// 40: radius 20): launch_gauss's separable sums (w0 x0 + sum_i w_i (x_-i + x_i), fused
// multiply-adds, reflect-101) over a kSmallTile x kSmallTile tile and its apron in shared
// memory, the row pass into a second buffer and the column pass from it, as its fused path
// does for radii up to kMaxFusedRadius. The weights are gauss_half_weights()'s, the CPU's,
// passed by value: one launch where the separable path took four (two for the weights), each
// a few microseconds of latency on a plane of some 130 k floats. Tiles of 16 x 16 with their
// 256 threads: at sigma 40 on a 4K frame some 560 blocks, about 4 on each SM at once, where
// tiles of 32 x 32 gave 144 (one an SM, each thread 13 sums of 2 r + 1 terms one after another
// where it now takes 5), latency bound. Every output is the same sums in the same order. The
// kernel is built for radius buckets 16, 24 and 32 (kBucket): its apron's loads, and the rows its
// threads sum across, are those of the bucket (at sigma 40, radius 20: four rows a thread of
// which 3.5 are the apron's, where sized for radius 32 it summed five).
//
// The same launch interpolates the blurred rows across to the frame's width, as
// upsample_rows_kernel does (its own launch where launch_gauss blurs): a frame pixel needs the
// samples left of it and right of it, so tiles step by kSmallStep = kSmallTile - 1 samples,
// each blurring one more column than it owns, and write the frame's pixels whose left sample
// they own (the x axis's runs), from the tile's blurred values in shared memory. The blurred
// small plane itself is then never written.
constexpr int kSmallBlurRadius = 32;
constexpr int kSmallTile = 16;
constexpr int kSmallThreads = kSmallTile * kSmallTile;
constexpr int kSmallStep = kSmallTile - 1;  // the samples a tile owns across

// The tile's rows in shared memory: a pitch of 16 floats past a multiple of 32 (the smallest
// such pitch, so growing with in_w), so that the two rows a warp's row pass reads fall in
// different banks.
__host__ __device__ constexpr int small_pitch(int in_w) {
  return in_w + (48 - in_w % 32) % 32;
}

// The radius bucket of a small blur: both radii at most kBucket. (The small plane's sigma is at
// least LuminanceBlur::kMinSmallSigma less a little, ~3.96: radius 16 or more.)
constexpr int small_bucket(int rx, int ry) {
  const int r = rx > ry ? rx : ry;
  return r <= 16 ? 16 : r <= 24 ? 24 : kSmallBlurRadius;
}

struct SmallWeights {
  float w[kSmallBlurRadius + 1];  // w[0] the centre, w[i] at distance i
  int radius;
};

SmallWeights small_weights(double sigma, int radius) {
  SmallWeights h{};
  h.radius = gauss_half_weights(sigma, radius, h.w);
  return h;
}

// At least 5 blocks a multiprocessor, so that a 4K frame's tiles (561 at sigma 40) run in one
// wave.
template <int kBucket>
__global__ void __launch_bounds__(kSmallThreads, blocks_per_sm(5, kSmallThreads))
    small_blur_kernel(Halves halves, int width, int height, SmallWeights wx, SmallWeights wy,
                      TentAxis x, Plane upsampled) {
  static_assert(kBucket % 8 == 0 && kBucket <= kSmallBlurRadius);
  constexpr int kApron = kSmallTile + 2 * kBucket;      // the widest apron: 64 at bucket 24
  __shared__ float tile[kApron * small_pitch(kApron)];  // the input and apron, in_h x pitch
  __shared__ float across[kApron * kSmallTile];         // summed along x, in_h x kSmallTile
  __shared__ float blurred[kSmallTile * kSmallTile];    // the tile's output
  wait_for_prior_grid();                                // the small plane's halves
  allow_dependent_grid();
  const int rx = wx.radius;
  const int ry = wy.radius;
  const int in_w = kSmallTile + 2 * rx;
  const int in_h = kSmallTile + 2 * ry;
  const int pitch = small_pitch(in_w);
  const int x0 = static_cast<int>(blockIdx.x) * kSmallStep;
  const int y0 = static_cast<int>(blockIdx.y) * kSmallTile;
  const int tid = static_cast<int>(threadIdx.x);
  // Half a warp a row: lx a column of the tile, first the row the thread starts at. The apron
  // by rows and columns, each row's reflection once (a pixel number divided by the apron's
  // width and two reflections a sample cost more than the row pass's sums), every load issued
  // before the first store: one L2 round trip a block, where a load then its store each time
  // left the block waiting on L2 a dozen times.
  const int lx = tid % kSmallTile;
  const int first = tid / kSmallTile;
  constexpr int kSteps = (kApron + kSmallTile - 1) / kSmallTile;  // a thread's rows, columns
  float staged[kSteps][kSteps];
#pragma unroll
  for (int a = 0; a < kSteps; ++a) {
    const int ly = first + a * kSmallTile;
    const int sy = border_index(y0 - ry + min(ly, in_h - 1), height, BorderMode::Reflect101);
    const float2* source = halves.at(0, sy);
#pragma unroll
    for (int b = 0; b < kSteps; ++b) {
      const int ax = lx + b * kSmallTile;
      staged[a][b] =
          ly < in_h && ax < in_w
              ? small_sample(source, border_index(x0 - rx + ax, width, BorderMode::Reflect101))
              : 0.0f;
    }
  }
#pragma unroll
  for (int a = 0; a < kSteps; ++a) {
#pragma unroll
    for (int b = 0; b < kSteps; ++b) {
      const int ly = first + a * kSmallTile;
      const int ax = lx + b * kSmallTile;
      if (ly < in_h && ax < in_w) tile[ly * pitch + ax] = staged[a][b];
    }
  }
  __syncthreads();
  // The row pass: a thread's rows (first, first + 16, ...) summed side by side, each in its
  // own order, so that their chains of dependent multiply-adds overlap; rows past the apron
  // repeat its last (in the tile, their sums never stored).
  {
    const float* t[kSteps];
#pragma unroll
    for (int a = 0; a < kSteps; ++a) {
      t[a] = tile + min(first + a * kSmallTile, in_h - 1) * pitch + lx + rx;
    }
    float sum[kSteps];
#pragma unroll
    for (int a = 0; a < kSteps; ++a) sum[a] = wx.w[0] * t[a][0];
    for (int i = 1; i <= rx; ++i) {
#pragma unroll
      for (int a = 0; a < kSteps; ++a) sum[a] = fmaf(wx.w[i], t[a][-i] + t[a][i], sum[a]);
    }
#pragma unroll
    for (int a = 0; a < kSteps; ++a) {
      const int ly = first + a * kSmallTile;
      if (ly < in_h) across[ly * kSmallTile + lx] = sum[a];
    }
  }
  __syncthreads();
  {
    const float* t = across + (first + ry) * kSmallTile + lx;
    float s = wy.w[0] * t[0];
#pragma unroll 4
    for (int j = 1; j <= ry; ++j) s = fmaf(wy.w[j], t[-j * kSmallTile] + t[j * kSmallTile], s);
    blurred[first * kSmallTile + lx] = s;  // past the plane: never read
  }
  __syncthreads();
  // The frame's pixels whose left sample the tile owns, a run each (the last sample's empty),
  // on the tile's rows; past the frame's width to the end of its last group of four, 0, so
  // that the correction reads whole groups (by the tile whose pixels reach the width).
  const int owned_end = min(x0 + kSmallStep, x.samples);
  const int begin = __ldg(x.run_begin + x0);
  const int end = __ldg(x.run_begin + owned_end);
  const int rows = min(kSmallTile, height - y0);
  const int pad = end == x.pixels && end > begin ? (kGroup - x.pixels % kGroup) % kGroup : 0;
  const int columns = end - begin + pad;
  // Half the block a row, a pixel a thread: each pixel's left sample and fraction loaded once
  // for the tile's rows.
  constexpr int kColumnsAtOnce = kSmallThreads / 2;
  for (int c = tid % kColumnsAtOnce; c < columns; c += kColumnsAtOnce) {
    const int p = begin + c;
    const bool owned = p < end;
    const int left = owned ? __ldg(x.left + p) : 0;
    const int right = min(left + 1, x.samples - 1);  // one column: fraction 0
    const float fraction = owned ? __ldg(x.fraction + p) : 0.0f;
    for (int r = tid / kColumnsAtOnce; r < rows; r += 2) {
      const int at = r * kSmallTile - x0;  // the tile's row r, by sample
      *upsampled.at(p, y0 + r) =
          owned ? lerp_rounded(blurred[at + left], blurred[at + right], fraction) : 0.0f;
    }
  }
}

// Each row of the blurred small plane interpolated across to the frame's width, once, as
// LuminanceBlur does before it blends two rows per frame row: a group of four pixels a thread,
// their lefts and fractions one vector load each; 0 past the width, so that the correction
// reads whole groups.
__global__ void __launch_bounds__(kBlockX* kBlockY)
    upsample_rows_kernel(Plane blurred, TentAxis x, int small_height, Plane upsampled) {
  const int x0 = static_cast<int>(blockIdx.x * kBlockX + threadIdx.x) * kGroup;
  const int j = static_cast<int>(blockIdx.y * kBlockY + threadIdx.y);
  if (x0 >= x.pixels || j >= small_height) return;
  const int n = min(kGroup, x.pixels - x0);
  int left[kGroup];
  float across[kGroup];
  if (n == kGroup) {  // x0 is a multiple of kGroup, and the tables 256-byte aligned
    const int4 l4 = __ldg(reinterpret_cast<const int4*>(x.left + x0));
    const float4 f4 = __ldg(reinterpret_cast<const float4*>(x.fraction + x0));
    left[0] = l4.x;
    left[1] = l4.y;
    left[2] = l4.z;
    left[3] = l4.w;
    across[0] = f4.x;
    across[1] = f4.y;
    across[2] = f4.z;
    across[3] = f4.w;
  } else {
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      left[i] = i < n ? __ldg(x.left + x0 + i) : 0;
      across[i] = i < n ? __ldg(x.fraction + x0 + i) : 0.0f;
    }
  }
  const float* src = blurred.at(0, j);
  float out[kGroup];
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    const int right = min(left[i] + 1, x.samples - 1);  // one column: fraction 0
    out[i] = i < n ? lerp_rounded(__ldg(src + left[i]), __ldg(src + right), across[i]) : 0.0f;
  }
  *reinterpret_cast<float4*>(upsampled.at(x0, j)) = make_float4(out[0], out[1], out[2], out[3]);
}

// B read as the correction reads it, into a GRAY32F frame (launch_brightness_blur).
template <class S>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    write_blur_kernel(S source, std::byte* out, std::ptrdiff_t stride, int width, int height) {
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * kGroup;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x0 >= width || y >= height) return;
  const int n = min(kGroup, width - x0);
  float b[kGroup];
  source.load(x0, y, n, b);
  float* row = reinterpret_cast<float*>(out + static_cast<std::ptrdiff_t>(y) * stride);
  for (int i = 0; i < n; ++i) row[x0 + i] = b[i];
}

// Mode clahe, colour frames: Y rounded to 8 bits, the GRAY8 plane CLAHE equalises.
template <class F>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    luma_byte_kernel(Frame f, std::byte* plane, std::size_t pitch) {
  const int x0 = (blockIdx.x * kBlockX + threadIdx.x) * kGroup;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x0 >= f.width || y >= f.height) return;
  const int n = min(kGroup, f.width - x0);
  typename F::Raw raw[kGroup];
  F::load(f.in + static_cast<std::ptrdiff_t>(y) * f.in_stride, x0, n, f.vector, raw);
  std::uint32_t word = 0;
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    word |= brightness_pixel::luma_byte(F::luminance(raw[i], 255.0f)) << (8 * i);
  }
  // Rows of whole 256-byte lines: a group's 4 bytes are one aligned word, past the width too.
  *reinterpret_cast<unsigned int*>(plane + static_cast<std::size_t>(y) * pitch + x0) = word;
}

// ---- Steps 2-5: the correction ----------------------------------------------------------

// v -> (v - lo) scale: by value (none, fixed), or from the percentile's selection.
struct Stretch {
  float lo = 0.0f;
  float scale = 1.0f;
  const BrightnessStretchRange* range = nullptr;
};

// Groups a thread of correct_kernel takes, kBlockX groups apart in a row (the warp's loads of
// each stay consecutive): what a group costs besides its pixels (its place, the rows and
// fraction of B, the stretch) is shared by them.
constexpr int kCorrectGroups = 2;

// Bottom rows first: the histogram's pass has just read them, and some are still in L2.
template <class F, class S>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    correct_kernel(Frame f, S source, Correction k, Stretch stretch) {
  const int first = (blockIdx.x * kBlockX * kCorrectGroups + threadIdx.x) * kGroup;
  const int y = (gridDim.y - 1 - blockIdx.y) * kBlockY + threadIdx.y;
  if (first >= f.width || y >= f.height) return;
  // The frame's pixels are no kernel's output: loaded while the kernel before drains.
  const std::byte* in_row = f.in + static_cast<std::ptrdiff_t>(y) * f.in_stride;
  typename F::Raw raw[kCorrectGroups][kGroup];
  int n[kCorrectGroups];
#pragma unroll
  for (int g = 0; g < kCorrectGroups; ++g) {
    const int x0 = first + g * kBlockX * kGroup;
    n[g] = max(0, min(kGroup, f.width - x0));
    if (n[g] > 0) F::load(in_row, x0, n[g], f.vector, raw[g]);
  }
  wait_for_prior_grid();  // B, the stretch
  float lo = stretch.lo;
  float scale = stretch.scale;
  if (stretch.range) {
    lo = stretch.range->lo;
    scale = stretch.range->scale;
  }
  std::byte* out_row = f.out + static_cast<std::ptrdiff_t>(y) * f.out_stride;
#pragma unroll
  for (int g = 0; g < kCorrectGroups; ++g) {
    if (n[g] == 0) break;  // the groups after it lie past the width too
    const int x0 = first + g * kBlockX * kGroup;
    float lum[kGroup], value[kGroup], stretched[kGroup];
    values_of<F>(source, k, x0, y, n[g], raw[g], lum, value);
#pragma unroll
    for (int i = 0; i < kGroup; ++i) stretched[i] = (value[i] - lo) * scale;
    F::store(out_row, x0, n[g], f.vector, raw[g], lum, stretched, k);
  }
}

// ---- The percentile: histogram ------------------------------------------------------------

// Which bins a value counts in (-1: none). Integer formats: its sensor value.
struct SensorKeys {
  static constexpr int kSlots = 1;
  float max;
  __device__ void prepare(const BrightnessStretchRange*) {}
  __device__ int key(float v, int) const { return brightness_pixel::value_bin(v, max); }
};

// GRAY32F, first round: the high 16 bits of v's float bits (v >= 0, so they order as v).
struct HighBitsKeys {
  static constexpr int kSlots = 1;
  __device__ void prepare(const BrightnessStretchRange*) {}
  __device__ int key(float v, int) const { return static_cast<int>(__float_as_uint(v) >> 16); }
};

// GRAY32F, second round: the low 16 bits, into histogram `slot` (0: low, 1: high) when the high
// bits are the ones the first round chose for it.
struct LowBitsKeys {
  static constexpr int kSlots = 2;
  std::uint32_t prefix[2];
  __device__ void prepare(const BrightnessStretchRange* range) {
    prefix[0] = range->prefix[0];
    prefix[1] = range->prefix[1];
  }
  __device__ int key(float v, int slot) const {
    const std::uint32_t bits = __float_as_uint(v);
    if ((bits >> 16) != prefix[slot]) return -1;
    return slot * kFloatBins + static_cast<int>(bits & 0xffffu);
  }
};

// The selection of lo and hi from a histogram of sensor values, by a whole block of
// kSelectThreads (select_kernel's Sensor round; defined with it below).
__device__ void select_sensor(const unsigned int* histogram, int bins, unsigned int low_rank,
                              unsigned int high_rank, float max, BrightnessStretchRange* range);

// Where a histogram of sensor values selects lo and hi itself: the last of its blocks to
// finish does, which saves select_kernel's launch. `finished` counts the blocks done; 0
// before the frame (cleared with the histogram). No tail: finished null.
struct SelectTail {
  unsigned int* finished = nullptr;
  unsigned int low_rank = 0;
  unsigned int high_rank = 0;
};

// Counts the keys of every pixel. Shared: into a block histogram (bins <= kSharedBins) merged
// into `histogram` at the end, then with a tail the last block selects; else into
// `histogram` directly, one atomic per value a warp holds. The loop runs over whole warps
// (lanes past the frame count nothing), so every lane of a warp takes part in each warp-wide
// step.
template <class F, class S, class Keys, bool Shared>
__global__ void __launch_bounds__(kHistogramThreads)
    histogram_kernel(Frame f, S source, Correction k, Keys keys, BrightnessStretchRange* range,
                     unsigned int* histogram, int bins, SelectTail tail = {}) {
  __shared__ unsigned int block_counts[Shared ? kSharedBins : 1];
  wait_for_prior_grid();  // B, the cleared histogram
  allow_dependent_grid();
  if constexpr (Shared) {
    for (int i = threadIdx.x; i < bins; i += blockDim.x) block_counts[i] = 0;
    __syncthreads();
  }
  keys.prepare(range);
  [[maybe_unused]] const int lane = static_cast<int>(threadIdx.x % 32);
  // 32-bit group numbers (at most 2^14 groups a row, 2^16 rows). A group's row and column
  // are divided out once; each step then adds the step's rows and columns, carrying a row
  // (the step's columns are fewer than a row's), where a division a group cost some twenty
  // instructions.
  const unsigned int groups_per_row = (f.width + kGroup - 1) / kGroup;
  const unsigned int groups = groups_per_row * static_cast<unsigned int>(f.height);
  const unsigned int warp_groups = (groups + 31) / 32 * 32;
  const unsigned int step = gridDim.x * blockDim.x;
  const unsigned int step_rows = step / groups_per_row;
  const unsigned int step_columns = step - step_rows * groups_per_row;
  const unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int row = first / groups_per_row;
  unsigned int column = first - row * groups_per_row;
  for (unsigned int g = first; g < warp_groups; g += step) {
    int key[Keys::kSlots][kGroup];
    if (g < groups) {
      const int y = static_cast<int>(row);
      const int x0 = static_cast<int>(column) * kGroup;
      const int n = min(kGroup, f.width - x0);
      typename F::Raw raw[kGroup];
      float lum[kGroup], value[kGroup];
      group_values<F>(f, source, k, x0, y, n, raw, lum, value);
#pragma unroll
      for (int s = 0; s < Keys::kSlots; ++s) {
#pragma unroll
        for (int i = 0; i < kGroup; ++i) key[s][i] = i < n ? keys.key(value[i], s) : -1;
      }
    } else {
#pragma unroll
      for (int s = 0; s < Keys::kSlots; ++s) {
#pragma unroll
        for (int i = 0; i < kGroup; ++i) key[s][i] = -1;
      }
    }
    if constexpr (Shared) {
      // Neighbours of one value (a smooth sky) count once, as a run.
#pragma unroll
      for (int s = 0; s < Keys::kSlots; ++s) {
        int run_key = key[s][0];
        unsigned int run = 1;
#pragma unroll
        for (int i = 1; i < kGroup; ++i) {
          if (key[s][i] == run_key) {
            ++run;
            continue;
          }
          if (run_key >= 0) atomicAdd(&block_counts[run_key], run);
          run_key = key[s][i];
          run = 1;
        }
        if (run_key >= 0) atomicAdd(&block_counts[run_key], run);
      }
    } else {
#pragma unroll
      for (int s = 0; s < Keys::kSlots; ++s) {
#pragma unroll
        for (int i = 0; i < kGroup; ++i) {
          const int mine = key[s][i];
          const unsigned int peers = __match_any_sync(kFullWarp, mine);
          if (mine >= 0 && lane == __ffs(peers) - 1) atomicAdd(&histogram[mine], __popc(peers));
        }
      }
    }
    row += step_rows;
    column += step_columns;
    if (column >= groups_per_row) {
      column -= groups_per_row;
      ++row;
    }
  }
  if constexpr (Shared) {
    __syncthreads();
    for (int i = threadIdx.x; i < bins; i += blockDim.x) {
      if (block_counts[i]) atomicAdd(&histogram[i], block_counts[i]);
    }
    if (tail.finished) {
      // This block's counts reach L2 before its ticket; the block that draws the last ticket
      // then sees every block's (locate() reads through L2).
      __shared__ bool last;
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) last = atomicAdd(tail.finished, 1u) == gridDim.x - 1;
      __syncthreads();
      if (last) {
        __threadfence();
        select_sensor(histogram, bins, tail.low_rank, tail.high_rank, k.max, range);
      }
    }
  }
}

// ---- The percentile: selection -----------------------------------------------------------

// The smallest bin of `histogram` whose cumulative count reaches `rank` (1-based, at most the
// total), and the count below it. Called by the whole block (kSelectThreads): each warp sums
// a slice of the bins, warp 0 finds the slice that holds the rank and scans it.
__device__ void locate(const unsigned int* histogram, int bins, unsigned int rank, int& bin,
                       unsigned int& below) {
  __shared__ unsigned int slice_total[kSelectThreads / 32];
  __shared__ int found_bin;
  __shared__ unsigned int found_below;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  constexpr int kWarps = kSelectThreads / 32;
  const int per_slice = (bins + kWarps - 1) / kWarps;
  {
    const int begin = warp * per_slice;
    const int end = min(bins, begin + per_slice);
    unsigned int sum = 0;
    for (int i = begin + lane; i < end; i += 32) sum += __ldcg(histogram + i);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // Turing (sm_75) has no __reduce_add_sync: a butterfly of shuffles (integers: the same sum).
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(kFullWarp, sum, o);
#else
    sum = __reduce_add_sync(kFullWarp, sum);
#endif
    if (lane == 0) slice_total[warp] = sum;
  }
  __syncthreads();
  if (warp == 0) {
    // Inclusive prefix of the slices' totals (counts fit 32 bits: the frame has fewer pixels).
    const unsigned int total = slice_total[lane];
    unsigned int inclusive = total;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const unsigned int up = __shfl_up_sync(kFullWarp, inclusive, o);
      if (lane >= o) inclusive += up;
    }
    const unsigned int holds =
        __ballot_sync(kFullWarp, inclusive - total < rank && rank <= inclusive);
    int result = bins - 1;  // a rank beyond the total (cannot happen): the top bin
    unsigned int result_below = 0;
    if (holds) {
      const int slice = __ffs(holds) - 1;
      unsigned int running = __shfl_sync(kFullWarp, inclusive - total, slice);
      const int begin = slice * per_slice;
      const int end = min(bins, begin + per_slice);
      for (int i0 = begin; i0 < end; i0 += 32) {
        const int i = i0 + lane;
        const unsigned int count = i < end ? __ldcg(histogram + i) : 0u;
        unsigned int upto = count;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
          const unsigned int up = __shfl_up_sync(kFullWarp, upto, o);
          if (lane >= o) upto += up;
        }
        const unsigned int hit =
            __ballot_sync(kFullWarp, running + upto - count < rank && rank <= running + upto);
        if (hit) {
          const int l = __ffs(hit) - 1;
          result = i0 + l;
          result_below = running + __shfl_sync(kFullWarp, upto - count, l);
          break;
        }
        running += __shfl_sync(kFullWarp, upto, 31);
      }
    }
    if (lane == 0) {
      found_bin = result;
      found_below = result_below;
    }
  }
  __syncthreads();
  bin = found_bin;
  below = found_below;
}

enum class SelectRound { Sensor, HighBits, LowBits };

// lo and scale from the two values, as the reference: no stretch when high <= low.
__device__ void set_stretch(BrightnessStretchRange* range, float low, float high, float max) {
  range->low = low;
  range->high = high;
  if (high > low) {
    range->lo = low;
    range->scale = max / (high - low);
  } else {
    range->lo = 0.0f;
    range->scale = 1.0f;
  }
}

__device__ void select_sensor(const unsigned int* histogram, int bins, unsigned int low_rank,
                              unsigned int high_rank, float max, BrightnessStretchRange* range) {
  int low = 0;
  int high = 0;
  unsigned int below = 0;
  locate(histogram, bins, low_rank, low, below);
  locate(histogram, bins, high_rank, high, below);
  if (threadIdx.x == 0) set_stretch(range, static_cast<float>(low), static_cast<float>(high), max);
}

// One block. Sensor: lo and hi from the histogram of sensor values. HighBits: the high bits
// of each and their ranks among the values of those bits; LowBits: the values themselves
// (`histogram` holds the two rounds' histograms, low's then high's).
__global__ void __launch_bounds__(kSelectThreads)
    select_kernel(const unsigned int* histogram, int bins, SelectRound round, unsigned int low_rank,
                  unsigned int high_rank, float max, BrightnessStretchRange* range) {
  int bin[2];
  unsigned int below[2];
  unsigned int rank[2] = {low_rank, high_rank};
  for (int s = 0; s < 2; ++s) {
    const unsigned int* counts = histogram;
    if (round == SelectRound::LowBits) {
      counts += s * kFloatBins;
      rank[s] = range->residual[s];
    }
    locate(counts, bins, rank[s], bin[s], below[s]);
  }
  if (threadIdx.x != 0) return;
  switch (round) {
    case SelectRound::Sensor:
      set_stretch(range, static_cast<float>(bin[0]), static_cast<float>(bin[1]), max);
      break;
    case SelectRound::HighBits:
      for (int s = 0; s < 2; ++s) {
        range->prefix[s] = static_cast<std::uint32_t>(bin[s]);
        range->residual[s] = rank[s] - below[s];
      }
      break;
    case SelectRound::LowBits:
      set_stretch(range, __uint_as_float(range->prefix[0] << 16 | static_cast<unsigned>(bin[0])),
                  __uint_as_float(range->prefix[1] << 16 | static_cast<unsigned>(bin[1])), max);
      break;
  }
}

// ---- The scratch ---------------------------------------------------------------------------

// The stretch's range first and the histograms, whatever the mode (brightness_stretch_range()
// finds the range without the parameters); then mode local's planes and the Gaussian's
// scratch, or mode clahe's mapped plane, colour's 8-bit luma and CLAHE's scratch.
struct Layout {
  BrightnessStretchRange* range = nullptr;
  unsigned int* histogram = nullptr;
  Plane luma{};
  Plane blurred{};
  void* gauss = nullptr;
  std::size_t gauss_bytes = 0;
  // The small plane's (mode local from sigma 2 kMinSmallSigma), sized for the largest, that
  // of factor 2: the tables of both axes, the small plane's two halves (reduce_rows_kernel),
  // the small plane, it blurred, its rows interpolated to the frame's width, and launch_gauss's
  // scratch.
  TentAxis x_axis{};
  TentAxis y_axis{};
  Halves small_halves{};
  Plane small{};
  Plane small_blurred{};
  Plane upsampled{};  // the blurred small plane's rows at the frame's width
  void* small_gauss = nullptr;
  std::size_t small_gauss_bytes = 0;
  std::byte* mapped = nullptr;
  std::size_t mapped_pitch = 0;
  std::byte* luma_bytes = nullptr;
  std::size_t luma_bytes_pitch = 0;
  void* clahe = nullptr;
  std::size_t clahe_bytes = 0;
  std::size_t total = 0;
};

constexpr std::size_t kRangeBytes = (sizeof(BrightnessStretchRange) + kAlign - 1) / kAlign * kAlign;

bool is_colour(PixelFormat format) {
  return format_info(format).color_channels == 3;
}

// What CLAHE equalises for frames of `shape`: the frame, or colour's 8-bit luma.
FrameShape clahe_shape(const FrameShape& shape) {
  if (!is_colour(shape.format)) return shape;
  return {shape.width, shape.height, PixelFormat::Gray8, 8};
}

Layout layout_of(const void* base, const BrightnessParams& params,
                 const FrameShape& shape) noexcept {
  Layout l;
  const auto width = static_cast<std::size_t>(shape.width);
  const auto height = static_cast<std::size_t>(shape.height);
  const std::size_t histogram = aligned(kHistogramWords * sizeof(unsigned int));
  std::size_t at = kRangeBytes + histogram;
  auto* bytes = static_cast<std::byte*>(const_cast<void*>(base));
  const auto place = [&](std::size_t size) -> std::byte* {
    std::byte* where = bytes ? bytes + at : nullptr;
    at += aligned(size);
    return where;
  };
  if (params.mode == BrightnessMode::Clahe) {
    const FrameShape equalised = clahe_shape(shape);
    l.mapped_pitch = aligned(width * static_cast<std::size_t>(bytes_per_pixel(equalised.format)));
    l.mapped = place(l.mapped_pitch * height);
    if (is_colour(shape.format)) {
      l.luma_bytes_pitch = aligned(width);
      l.luma_bytes = place(l.luma_bytes_pitch * height);
    }
    l.clahe_bytes = clahe_scratch_bytes(params, equalised);
    l.clahe = place(l.clahe_bytes);
  } else {
    const std::size_t row_floats = (width + 31) / 32 * 32;
    const std::size_t plane = row_floats * sizeof(float) * height;
    l.luma = {reinterpret_cast<float*>(place(plane)), row_floats};
    l.blurred = {reinterpret_cast<float*>(place(plane)), row_floats};
    l.gauss_bytes =
        gauss_scratch_bytes(GaussPath::Auto, shape.width, shape.height, PixelFormat::Gray32F);
    l.gauss = place(l.gauss_bytes);
    const int small_width = LuminanceBlur::small_samples(shape.width, 2);
    const int small_height = LuminanceBlur::small_samples(shape.height, 2);
    const std::size_t small_row_floats = (static_cast<std::size_t>(small_width) + 31) / 32 * 32;
    const std::size_t small_plane =
        small_row_floats * sizeof(float) * static_cast<std::size_t>(small_height);
    const auto place_axis = [&](std::size_t pixels, int samples) {
      TentAxis a{};
      a.left = reinterpret_cast<int*>(place(pixels * sizeof(int)));
      a.fraction = reinterpret_cast<float*>(place(pixels * sizeof(float)));
      a.to_left = reinterpret_cast<float*>(place(pixels * sizeof(float)));
      a.to_right = reinterpret_cast<float*>(place(pixels * sizeof(float)));
      a.run_begin = reinterpret_cast<int*>(place((static_cast<std::size_t>(samples) + 1) * 4));
      return a;
    };
    l.x_axis = place_axis(width, small_width);
    l.y_axis = place_axis(height, small_height);
    l.small_halves = {reinterpret_cast<float2*>(place(2 * small_plane)), small_row_floats};
    l.small = {reinterpret_cast<float*>(place(small_plane)), small_row_floats};
    l.small_blurred = {reinterpret_cast<float*>(place(small_plane)), small_row_floats};
    l.upsampled = {reinterpret_cast<float*>(
                       place(row_floats * sizeof(float) * static_cast<std::size_t>(small_height))),
                   row_floats};
    l.small_gauss_bytes =
        gauss_scratch_bytes(GaussPath::Auto, small_width, small_height, PixelFormat::Gray32F);
    l.small_gauss = place(l.small_gauss_bytes);
  }
  l.total = at;
  if (bytes) {
    l.range = reinterpret_cast<BrightnessStretchRange*>(bytes);
    l.histogram = reinterpret_cast<unsigned int*>(bytes + kRangeBytes);
  }
  return l;
}

ImageView plane_view(const Plane& p, int width, int height) {
  return {reinterpret_cast<std::byte*>(p.data), width, height,
          static_cast<std::ptrdiff_t>(p.row_floats * sizeof(float)), PixelFormat::Gray32F};
}

bool multiple_of(std::uintptr_t value, std::uintptr_t unit) {
  return value % unit == 0;
}

// The frames as the kernels take them, or false when their alignment breaks the limitations.
bool frame_of(ConstImageView in, ImageView out, Frame& f) {
  const int bpp = bytes_per_pixel(in.format);
  // The word a pixel is read and written in: a sample, or the 4 bytes of a colour pixel.
  const auto word = static_cast<std::uintptr_t>(bpp);
  const auto group = static_cast<std::uintptr_t>(bpp * kGroup);
  const auto in_at = reinterpret_cast<std::uintptr_t>(in.data);
  const auto out_at = reinterpret_cast<std::uintptr_t>(out.data);
  const auto in_stride = static_cast<std::uintptr_t>(in.stride);
  const auto out_stride = static_cast<std::uintptr_t>(out.stride);
  if (!multiple_of(in_at, word) || !multiple_of(out_at, word) || !multiple_of(in_stride, word) ||
      !multiple_of(out_stride, word) || in.stride < static_cast<std::ptrdiff_t>(in.row_bytes()) ||
      out.stride < static_cast<std::ptrdiff_t>(out.row_bytes())) {
    return false;
  }
  f.in = in.data;
  f.out = out.data;
  f.in_stride = in.stride;
  f.out_stride = out.stride;
  f.width = in.width;
  f.height = in.height;
  f.vector = multiple_of(in_at, group) && multiple_of(out_at, group) &&
             multiple_of(in_stride, group) && multiple_of(out_stride, group);
  return true;
}

int histogram_blocks(long long groups) {
  const int sms = std::max(1, current_device_facts().multiprocessors);
  const long long wanted = (groups + kHistogramThreads - 1) / kHistogramThreads;
  return static_cast<int>(std::max(1LL, std::min<long long>(wanted, sms * kHistogramBlocksPerSm)));
}

// What the launch of one frame shares.
struct FrameLaunch {
  const BrightnessParams& params;
  const Frame& f;
  const Correction& k;
  const Layout& l;
  std::size_t pixels;
  dim3 grid;
  dim3 block;
  cudaStream_t stream;
  BrightnessTables* tables;  // the caller's record of the scratch's tent tables, or null
  bool dependent;            // the frame's kernels launched by launch_after()
};

// Steps 3-5 for frames of format F, C from `source`: the stretch (selected on the device for
// percentile), then the correction. Returns the status of what is not a kernel launch.
template <class F, class S>
cudaError_t stretch_and_correct(const FrameLaunch& a, const S& source) {
  const BrightnessParams& params = a.params;
  const Layout& l = a.l;
  Stretch stretch;
  if (params.stretch == BrightnessStretch::Fixed) {
    stretch.lo = static_cast<float>(params.stretch_min);
    stretch.scale = static_cast<float>(static_cast<double>(a.k.max) /
                                       (params.stretch_max - params.stretch_min));
  } else if (params.stretch == BrightnessStretch::Percentile) {
    const auto low_rank =
        static_cast<unsigned int>(brightness_percentile_rank(params.low_percentile, a.pixels));
    const auto high_rank =
        static_cast<unsigned int>(brightness_percentile_rank(params.high_percentile, a.pixels));
    const long long groups = static_cast<long long>((a.f.width + kGroup - 1) / kGroup) * a.f.height;
    const int blocks = histogram_blocks(groups);
    stretch.range = l.range;
    if constexpr (!F::kFloat) {
      const int bins = static_cast<int>(a.k.max) + 1;
      // The bins and, after them, the shared histogram's count of finished blocks.
      const cudaError_t cleared = cudaMemsetAsync(
          l.histogram, 0, static_cast<std::size_t>(bins + 1) * sizeof(unsigned int), a.stream);
      if (cleared != cudaSuccess) return cleared;
      const SensorKeys keys{a.k.max};
      bool shared = true;
      if constexpr (F::kMaxBins > kSharedBins) {
        if (bins > kSharedBins) {
          histogram_kernel<F, S, SensorKeys, false><<<blocks, kHistogramThreads, 0, a.stream>>>(
              a.f, source, a.k, keys, l.range, l.histogram, bins);
          select_kernel<<<1, kSelectThreads, 0, a.stream>>>(l.histogram, bins, SelectRound::Sensor,
                                                            low_rank, high_rank, a.k.max, l.range);
          shared = false;
        }
      }
      if (shared) {
        // Its last block selects lo and hi.
        const SelectTail tail{l.histogram + bins, low_rank, high_rank};
        const cudaError_t counted =
            launch_after(a.dependent, histogram_kernel<F, S, SensorKeys, true>, dim3(blocks),
                         dim3(kHistogramThreads), a.stream, a.f, source, a.k, keys, l.range,
                         l.histogram, bins, tail);
        if (counted != cudaSuccess) return counted;
      }
    } else {
      const cudaError_t cleared =
          cudaMemsetAsync(l.histogram, 0, kHistogramWords * sizeof(unsigned int), a.stream);
      if (cleared != cudaSuccess) return cleared;
      histogram_kernel<F, S, HighBitsKeys, false><<<blocks, kHistogramThreads, 0, a.stream>>>(
          a.f, source, a.k, HighBitsKeys{}, l.range, l.histogram, kFloatBins);
      select_kernel<<<1, kSelectThreads, 0, a.stream>>>(
          l.histogram, kFloatBins, SelectRound::HighBits, low_rank, high_rank, a.k.max, l.range);
      unsigned int* low_bits = l.histogram + kFloatBins;
      histogram_kernel<F, S, LowBitsKeys, false><<<blocks, kHistogramThreads, 0, a.stream>>>(
          a.f, source, a.k, LowBitsKeys{}, l.range, low_bits, kFloatBins);
      select_kernel<<<1, kSelectThreads, 0, a.stream>>>(low_bits, kFloatBins, SelectRound::LowBits,
                                                        low_rank, high_rank, a.k.max, l.range);
    }
  }
  const dim3 grid(
      (a.f.width + kBlockX * kGroup * kCorrectGroups - 1) / (kBlockX * kGroup * kCorrectGroups),
      a.grid.y);
  return launch_after(a.dependent, correct_kernel<F, S>, grid, a.block, a.stream, a.f, source, a.k,
                      stretch);
}

// Steps 1-2 of mode local for frames of format F, then `next(source)` with the source that
// reads B. Auto from sigma 2 LuminanceBlur::kMinSmallSigma: LuminanceBlur's small plane (the
// tables, the frame reduced across then down, the small plane blurred as the CPU blurs it,
// its rows interpolated across);
// else Y on a full plane, blurred by launch_gauss's `blur` path.
template <class F, class Next>
cudaError_t local_blur(const FrameLaunch& a, GaussPath blur, Next&& next) {
  const Layout& l = a.l;
  const int width = a.f.width;
  const int height = a.f.height;
  const double sigma = a.params.sigma;
  GaussParams gauss;
  gauss.border = BorderMode::Reflect101;
  const int factor = blur == GaussPath::Auto ? LuminanceBlur::downsample_factor(sigma) : 1;
  if (factor == 1) {
    luminance_kernel<F><<<a.grid, a.block, 0, a.stream>>>(a.f, l.luma, a.k.max);
    gauss.sigma_x = gauss.sigma_y = sigma;
    const cudaError_t status = launch_gauss(
        gauss, const_view(plane_view(l.luma, width, height)), plane_view(l.blurred, width, height),
        l.gauss, l.gauss_bytes, a.stream, blur == GaussPath::Auto ? gauss_exact_path(gauss) : blur);
    if (status != cudaSuccess) return status;
    return next(LocalSource{l.blurred});
  }
  const int small_width = LuminanceBlur::small_samples(width, factor);
  const int small_height = LuminanceBlur::small_samples(height, factor);
  TentAxis x = l.x_axis;
  x.pixels = width;
  x.samples = small_width;
  x.spacing = tent_axis::spacing(width, small_width);
  TentAxis y = l.y_axis;
  y.pixels = height;
  y.samples = small_height;
  y.spacing = tent_axis::spacing(height, small_height);
  // The tables depend on the sizes alone (the spacings follow from them): built when the
  // caller's record says the scratch holds other ones, or keeps none.
  const BrightnessTables built{l.x_axis.left, width, height, small_width, small_height};
  if (!a.tables || !(*a.tables == built)) {
    if (a.tables) *a.tables = {};
    constexpr int kTableThreads = 256;  // 8 pixels a block, a warp each
    constexpr int kTablePixels = kTableThreads / 32;
    tent_tables_kernel<<<(width + height + kTablePixels - 1) / kTablePixels, kTableThreads, 0,
                         a.stream>>>(x, y);
    if (a.tables && cudaPeekAtLastError() == cudaSuccess) *a.tables = built;
  }
  const int runs = reduce_runs(y.spacing);
  const dim3 reduce_grid((small_width + kSamplesPerWarp - 1) / kSamplesPerWarp,
                         (small_height + runs - 1) / runs);
  reduce_rows_kernel<F>
      <<<reduce_grid, a.block, 0, a.stream>>>(a.f, a.k.max, x, y, runs, l.small_halves);
  gauss.sigma_x = LuminanceBlur::small_sigma(sigma, x.spacing);
  gauss.sigma_y = LuminanceBlur::small_sigma(sigma, y.spacing);
  // The CPU's choice for the small plane (gauss_cpu_recursive(): the exact sums, the
  // recursion from kRecursiveFromSigma, where an axis has one sample, whose sigma is sigma
  // itself).
  const bool recursive = gauss_cpu_recursive(gauss);
  const int rx = gauss.effective_radius_x();
  const int ry = gauss.effective_radius_y();
  if (!recursive && rx <= kSmallBlurRadius && ry <= kSmallBlurRadius) {
    const dim3 tiles((small_width + kSmallStep - 1) / kSmallStep,
                     (small_height + kSmallTile - 1) / kSmallTile);
    const auto blur = [&](auto kernel) {
      return launch_after(a.dependent, kernel, tiles, dim3(kSmallThreads), a.stream, l.small_halves,
                          small_width, small_height, small_weights(gauss.sigma_x, rx),
                          small_weights(gauss.sigma_y, ry), x, l.upsampled);
    };
    const int bucket = small_bucket(rx, ry);
    const cudaError_t blurred = bucket == 16   ? blur(small_blur_kernel<16>)
                                : bucket == 24 ? blur(small_blur_kernel<24>)
                                               : blur(small_blur_kernel<kSmallBlurRadius>);
    if (blurred != cudaSuccess) return blurred;
    return next(SmallSource{l.upsampled, y.left, y.fraction, small_height});
  }
  const dim3 whole((small_width + kBlockX - 1) / kBlockX, (small_height + kBlockY - 1) / kBlockY);
  const cudaError_t added = launch_after(a.dependent, add_halves_kernel, whole, a.block, a.stream,
                                         l.small_halves, small_width, small_height, l.small);
  if (added != cudaSuccess) return added;
  const cudaError_t status = launch_gauss(
      gauss, const_view(plane_view(l.small, small_width, small_height)),
      plane_view(l.small_blurred, small_width, small_height), l.small_gauss, l.small_gauss_bytes,
      a.stream, recursive ? GaussPath::Recursive : GaussPath::Separable);
  if (status != cudaSuccess) return status;
  const dim3 up((width + kBlockX * kGroup - 1) / (kBlockX * kGroup),
                (small_height + kBlockY - 1) / kBlockY);
  upsample_rows_kernel<<<up, a.block, 0, a.stream>>>(l.small_blurred, x, small_height, l.upsampled);
  return next(SmallSource{l.upsampled, y.left, y.fraction, small_height});
}

// What launch_brightness and launch_brightness_blur check of the frames, the scratch and the
// parameters, and the launch they share; false where they break the limitations.
bool frame_launch_of(const BrightnessParams& params, const FrameShape& shape, ConstImageView in,
                     ImageView out, void* scratch, std::size_t scratch_bytes, Frame& f, Layout& l) {
  const int width = shape.width;
  const int height = shape.height;
  const std::size_t pixels = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  const bool is_float = format_info(shape.format).is_float;
  const bool clahe = params.mode == BrightnessMode::Clahe;
  if (!brightness_supports(shape.format) || (clahe && is_float) || width < 1 || height < 1 ||
      pixels > 0xffffffffu || in.width != width || in.height != height ||
      in.format != shape.format || out.width != width || out.height != height ||
      out.format != shape.format) {
    return false;
  }
  if (!frame_of(in, out, f)) return false;
  if (!scratch || scratch_bytes < brightness_scratch_bytes(params, shape)) return false;
  l = layout_of(scratch, params, shape);
  return true;
}

// Forgets the tables the caller's record names unless this launch leaves them in place: mode
// local on the same scratch and frame size lays its planes out as the launch that built them
// (sigma moves only the small plane's size, never where the tables lie); mode clahe, or
// another size, writes its planes over them.
void keep_tables(BrightnessTables* tables, const BrightnessParams& params, const FrameShape& shape,
                 const Layout& l) {
  if (!tables) return;
  if (params.mode != BrightnessMode::Local || tables->at != l.x_axis.left ||
      tables->width != shape.width || tables->height != shape.height) {
    *tables = {};
  }
}

// What both launchers prepare before their kernels: the frame and scratch checked and laid
// out, the correction's constants, the grid of the full-frame passes, the tables' record.
struct PreparedFrame {
  Frame f{};
  Layout l;
  Correction k;
  std::size_t pixels = 0;
  dim3 grid;
  dim3 block{kBlockX, kBlockY};
};

// false where the frames, the scratch or the parameters break the limitations.
bool prepare_frame(const BrightnessParams& params, const FrameShape& shape, ConstImageView in,
                   ImageView out, void* scratch, std::size_t scratch_bytes,
                   BrightnessTables* tables, PreparedFrame& p) {
  if (!frame_launch_of(params, shape, in, out, scratch, scratch_bytes, p.f, p.l)) return false;
  p.k = brightness_pixel::correction_of(params, shape);
  p.pixels = static_cast<std::size_t>(shape.width) * static_cast<std::size_t>(shape.height);
  p.grid = dim3((shape.width + kBlockX * kGroup - 1) / (kBlockX * kGroup),
                (shape.height + kBlockY - 1) / kBlockY);
  keep_tables(tables, params, shape, p.l);
  return true;
}

}  // namespace

std::size_t brightness_scratch_bytes(const BrightnessParams& params,
                                     const FrameShape& shape) noexcept {
  return layout_of(nullptr, params, shape).total;
}

const BrightnessStretchRange* brightness_stretch_range(const void* scratch) noexcept {
  return static_cast<const BrightnessStretchRange*>(scratch);
}

cudaError_t launch_brightness(const BrightnessParams& params, const FrameShape& shape,
                              ConstImageView in, ImageView out, void* scratch,
                              std::size_t scratch_bytes, cudaStream_t stream, GaussPath blur,
                              BrightnessTables* tables) {
  const int width = shape.width;
  const int height = shape.height;
  const bool clahe = params.mode == BrightnessMode::Clahe;
  PreparedFrame p;
  if (!prepare_frame(params, shape, in, out, scratch, scratch_bytes, tables, p)) {
    return cudaErrorInvalidValue;
  }
  const Frame& f = p.f;
  const Layout& l = p.l;
  const dim3 grid = p.grid, block = p.block;
  const FrameLaunch a{params, f,     p.k,    l,      p.pixels,
                      grid,   block, stream, tables, dependent_launch_supported()};

  cudaError_t status = cudaSuccess;
  with_format(shape.format, [&](auto io) {
    using F = decltype(io);
    if (!clahe) {
      // 1. Y, 2. B, then 3.-5.
      status = local_blur<F>(a, blur,
                             [&](const auto& source) { return stretch_and_correct<F>(a, source); });
      return;
    }
    if constexpr (!F::kFloat) {
      // 1. The plane CLAHE equalises: the frame itself (samples above the bit depth's maximum
      // count in the top bin, as the reference's clamp puts them), or colour's 8-bit luma.
      const FrameShape equalised = clahe_shape(shape);
      ConstImageView source = in;
      if constexpr (F::kColour) {
        luma_byte_kernel<F><<<grid, block, 0, stream>>>(f, l.luma_bytes, l.luma_bytes_pitch);
        source = {l.luma_bytes, width, height, static_cast<std::ptrdiff_t>(l.luma_bytes_pitch),
                  PixelFormat::Gray8};
      }
      // 2. The mapped plane, C its value over the plane's maximum.
      const ImageView mapped{l.mapped, width, height, static_cast<std::ptrdiff_t>(l.mapped_pitch),
                             equalised.format};
      status = launch_clahe(params, equalised.bit_depth, source, mapped,
                            ClaheScratch{l.clahe, l.clahe_bytes}, stream);
      if (status != cudaSuccess) return;
      const auto plane_max = static_cast<float>(brightness_sample_max(equalised));
      if constexpr (F::kMaxBins > 256) {
        status = stretch_and_correct<F>(
            a, ClaheSource<std::uint16_t>{l.mapped, l.mapped_pitch, plane_max});
      } else {
        status = stretch_and_correct<F>(
            a, ClaheSource<std::uint8_t>{l.mapped, l.mapped_pitch, plane_max});
      }
    }
  });
  if (status != cudaSuccess) return status;
  return cudaPeekAtLastError();
}

cudaError_t launch_brightness_blur(const BrightnessParams& params, const FrameShape& shape,
                                   ConstImageView in, ImageView blurred, void* scratch,
                                   std::size_t scratch_bytes, cudaStream_t stream, GaussPath blur,
                                   BrightnessTables* tables) {
  const int width = shape.width;
  const int height = shape.height;
  if (params.mode != BrightnessMode::Local || blurred.format != PixelFormat::Gray32F ||
      blurred.width != width || blurred.height != height ||
      blurred.stride < static_cast<std::ptrdiff_t>(blurred.row_bytes()) ||
      !multiple_of(reinterpret_cast<std::uintptr_t>(blurred.data), 4) ||
      !multiple_of(static_cast<std::uintptr_t>(blurred.stride), 4)) {
    return cudaErrorInvalidValue;
  }
  // The kernels of steps 1-2 read `in` only: the frame's checks, with `in` standing for the
  // output too.
  const ImageView unwritten{const_cast<std::byte*>(in.data), in.width, in.height, in.stride,
                            in.format};
  PreparedFrame p;
  if (!prepare_frame(params, shape, in, unwritten, scratch, scratch_bytes, tables, p)) {
    return cudaErrorInvalidValue;
  }
  const FrameLaunch a{params, p.f,     p.k,    p.l,    p.pixels,
                      p.grid, p.block, stream, tables, dependent_launch_supported()};
  cudaError_t status = cudaSuccess;
  with_format(shape.format, [&](auto io) {
    using F = decltype(io);
    status = local_blur<F>(a, blur, [&](const auto& source) {
      write_blur_kernel<<<p.grid, p.block, 0, stream>>>(source, blurred.data, blurred.stride, width,
                                                        height);
      return cudaSuccess;
    });
  });
  if (status != cudaSuccess) return status;
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
