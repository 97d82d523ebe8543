// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's mask pass (DetectState::filter_and_threshold()): the background subtracted, the
// filter, the significance against the threshold, the mask, and the line channel's capped
// significance. Compiled without fused multiply-add (CMakeLists.txt), so every float operation
// rounds as the reference's does: the mask is the CPU's bit for bit.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cuda/common/format_traits.cuh"
#include "cuda/common/pixel_reader.hpp"
#include "cuda/common/rows_aligned.hpp"
#include "cuda/detect/detect_frame.cuh"

namespace starsift::cuda::detect_pass {

namespace {

// ---- Significance and mask ------------------------------------------------------------------

constexpr int kMaskW = 32, kMaskH = 32;  // the output tile of a mask block
constexpr int kMaskThreadsY = 8;         // its threads: 32 x 8, four rows each

// The mesh rows a mask block can touch. Its rows' tiles (mesh_locate(): the tile whose centre
// is at or above) differ by at most span / side + 2 (a row above its tile's centre takes the
// tile before), +1 for the blend's next row, +1 to count both ends.
constexpr int kMaskMeshRows =
    (kMaskH + 2 * DetectParams::kMaxFilterRadius - 1) / DetectParams::kMinMesh + 4;

// The filtered significance against the threshold, for a filter of any radius up to
// kMaxFilterRadius (the Gaussian; the strips below take radius 0 and 1). The block subtracts the
// background from its tile of the input and the halo into shared memory (0 outside the frame:
// background), then each thread sums the taps in the reference's order.
//
// The background and sigma blends are split as mesh_blend() computes them: each column's blend
// along x, (1 - wx) a + wx b, for each mesh row the block touches goes into shared memory once;
// a pixel then takes (1 - wy) A(j) + wy A(j + 1), the same operations in the same order, so the
// same bits, for 2 shared loads instead of 8 global ones.
__global__ void __launch_bounds__(kMaskW* kMaskThreadsY)
    mask_kernel(Frame f, const float* taps, int r, float norm, bool sigma_units, float threshold) {
  constexpr int kHalo = DetectParams::kMaxFilterRadius;
  constexpr int kSide = kMaskW + 2 * kHalo;
  __shared__ float tile[kSide * (kMaskH + 2 * kHalo)];
  __shared__ float mean_x[kMaskMeshRows * kSide];   // the mean blended along x, per mesh row
  __shared__ float sigma_x[kMaskMeshRows * kSide];  // the same for sigma
  const int sw = kMaskW + 2 * r, sh = kMaskH + 2 * r;
  const int bx = blockIdx.x * kMaskW, by = blockIdx.y * kMaskH;
  const int thread = threadIdx.y * kMaskW + threadIdx.x;
  constexpr int kThreads = kMaskW * kMaskThreadsY;
  // Mesh rows from the block's first row's to its last's next (row_tile grows with y).
  const int j_first = f.has_background ? f.row_tile[max(by - r, 0)] : 0;
  if (f.has_background) {
    const int j_last = min(f.row_tile[min(by - r + sh - 1, f.height - 1)] + 1, f.ay.count - 1);
    const int rows = j_last - j_first + 1;
    for (int k = thread; k < rows * sw; k += kThreads) {
      const int jj = k / sw, lx = k - jj * sw;
      const int x = min(max(bx - r + lx, 0), f.width - 1);
      const int i = f.col_tile[x], i1 = i + 1 < f.ax.count ? i + 1 : f.ax.count - 1;
      const float wx = f.col_weight[x], one = 1.0f;
      const int row = (j_first + jj) * f.ax.count;
      mean_x[k] = (one - wx) * f.tile_mean[row + i] + wx * f.tile_mean[row + i1];
      sigma_x[k] = (one - wx) * f.tile_sigma[row + i] + wx * f.tile_sigma[row + i1];
    }
    __syncthreads();
  }
  // (1 - wy) A(j) + wy A(j + 1) at local column lx of frame row y.
  auto blend_y = [&](const float* along_x, int lx, int y) {
    const int j = f.row_tile[y], j1 = j + 1 < f.ay.count ? j + 1 : f.ay.count - 1;
    const float wy = f.row_weight[y], one = 1.0f;
    return (one - wy) * along_x[(j - j_first) * sw + lx] + wy * along_x[(j1 - j_first) * sw + lx];
  };
  for (int k = thread; k < sw * sh; k += kThreads) {
    const int ly = k / sw, lx = k - ly * sw;
    const int x = bx - r + lx, y = by - r + ly;
    float v = 0.0f;
    if (x >= 0 && y >= 0 && x < f.width && y < f.height) {
      v = value_at(f, x, y);
      v = v - (f.has_background ? blend_y(mean_x, lx, y) : f.level);
    }
    tile[k] = v;
  }
  const float floor = f.has_background ? sigma_floor(f) : 0.0f;
  __syncthreads();
  const int x = bx + threadIdx.x;
  if (x >= f.width) return;
#pragma unroll
  for (int row = 0; row < kMaskH / kMaskThreadsY; ++row) {
    const int ly = threadIdx.y + row * kMaskThreadsY, y = by + ly;
    if (y >= f.height) return;
    // Taps outside the frame add tap * 0: the reference leaves them out, and x + 0 == x.
    float sum = 0.0f;
    const int side = 2 * r + 1;
    for (int dy = 0; dy < side; ++dy) {
      const float* line = tile + (ly + dy) * sw + threadIdx.x;
      for (int dx = 0; dx < side; ++dx) sum += taps[dy * side + dx] * line[dx];
    }
    float sigma = f.noise;
    if (f.has_background) sigma = floored(blend_y(sigma_x, threadIdx.x + r, y), floor);
    const float sig = sigma_units ? sum / (sigma * norm) : sum;
    f.mask[y * f.mask_pitch + x] = sig > threshold ? 1 : 0;
    if (sig > threshold) {
      const float residual = tile[(ly + r) * sw + threadIdx.x + r];
      f.z[y * f.z_pitch + x] = sigma_units ? residual / sigma : residual;
    }
    if (f.capped) f.capped[y * f.capped_pitch + x] = capped_significance(sig);
  }
}

// ---- The mask in strips: no filter, or a 3 x 3 one ------------------------------------------
//
// mask_kernel's mask and capped significance, bit for bit, for filters of radius 0 and 1 (the
// default 3 x 3 and none: what whiten -> detect runs), without shared memory. A lane takes
// 4 columns and walks strip_rows() rows down, its residuals in registers, reading a row's
// 4 samples with one load (SampleQuad) and converting them without conversion instructions;
// the columns either side of its 4 come from the neighbouring lanes by shuffles, so with a
// filter a warp's first and last lanes only compute residuals for the lanes between them.
// Every load of a lane's rows is issued before the first is used.
//
// The significance sum / (sigma norm) is compared with the threshold through the reciprocal
// unit's quotient (within 2 ulp) wherever that lies further than 2^-16 of the threshold from
// it, so that its side is the IEEE quotient's; nearer, and wherever the value itself is kept
// (the line channel's input), through the IEEE division, as the reference divides.

// Output rows a lane: 4 without a background, 8 with one, whose blend along x a lane keeps
// for two mesh rows at a time (4 rows gave more loads in flight and fewer registers without a
// background, and more registers with one).
template <bool kBackground>
constexpr int strip_rows() {
  return kBackground ? 8 : 4;
}
constexpr int kStripWarps = 4;  // warps of a block, one above the other

template <int Radius>
constexpr int strip_columns() {  // output columns of a warp
  return 4 * (32 - 2 * Radius);
}

// The IEEE quotient, out of line: inline at each of a strip's 32 pixels, its slow-path checks
// made the unrolled rows' code several times larger (instruction cache) for what is rarely run.
__device__ __noinline__ float ieee_quotient(float a, float b) {
  return a / b;
}

// The test sum / d > t of the sigma units (d > 0), t with the band around it within which a
// quotient from the reciprocal cannot tell the IEEE quotient's side: 2^-16 of t either way
// (the quotient is within 2 ulp), everything for a t near the float range's bottom. Where d is
// the same for the whole frame (no background: the noise times the filter's norm, the float
// product the reference divides by) its reciprocal comes rounded from the host; else
// __fdividef's, for d in its range 2^-126..2^126.
struct QuotientTest {
  float t, lo, hi;
  float d, inv;  // the frame's d and its rounded reciprocal; inv 0: d outside that range
  // __fdividef's range of divisors (2 ulp within it).
  STARSIFT_HD static bool divisor_in_range(float d) { return d >= 0x1p-126f && d <= 0x1p126f; }
  static QuotientTest of(float t, float d) {
    QuotientTest q{t, -HUGE_VALF, HUGE_VALF, d, 0.0f};
    if (t >= 0x1p-100f) {
      q.lo = t - t * 0x1p-16f;
      q.hi = t + t * 0x1p-16f;
    }
    if (divisor_in_range(d)) q.inv = static_cast<float>(1.0 / static_cast<double>(d));
    return q;
  }
  __device__ __forceinline__ bool decide(float q, float sum, float d) const {
    if (q > hi) return true;
    if (q < lo) return false;
    return ieee_quotient(sum, d) > t;  // near t, or NaN
  }
  // d the frame's.
  __device__ __forceinline__ bool above(float sum) const {
    if (inv == 0.0f) return ieee_quotient(sum, d) > t;
    return decide(sum * inv, sum, d);
  }
  // d the pixel's.
  __device__ __forceinline__ bool above(float sum, float pixel_d) const {
    if (!divisor_in_range(pixel_d)) return ieee_quotient(sum, pixel_d) > t;
    return decide(__fdividef(sum, pixel_d), sum, pixel_d);
  }
};

// A frame row's background or sigma at a lane's 4 columns, blended along x for the two mesh
// rows around the current one (mask_kernel's mean_x and sigma_x), refreshed when the row's mesh
// row changes: warp-uniform, since a warp's lanes share their rows.
struct StripMesh {
  int j = -1;
  float mean[2][4], sigma[2][4];
  __device__ void locate(const Frame& f, int x0, int y) {
    const int jy = f.row_tile[y];
    if (jy == j) return;
    j = jy;
    const int j1 = j + 1 < f.ay.count ? j + 1 : f.ay.count - 1;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int x = min(max(x0 + c, 0), f.width - 1);
      const int i = f.col_tile[x], i1 = i + 1 < f.ax.count ? i + 1 : f.ax.count - 1;
      const float wx = f.col_weight[x], one = 1.0f;
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int row = (k == 0 ? j : j1) * f.ax.count;
        mean[k][c] = (one - wx) * f.tile_mean[row + i] + wx * f.tile_mean[row + i1];
        sigma[k][c] = (one - wx) * f.tile_sigma[row + i] + wx * f.tile_sigma[row + i1];
      }
    }
  }
  // (1 - wy) A(j) + wy A(j + 1), as mask_kernel's blend_y.
  __device__ static float blend(const float (&a)[2][4], int c, float wy) {
    const float one = 1.0f;
    return (one - wy) * a[0][c] + wy * a[1][c];
  }
};

template <int Radius, PixelFormat F, bool kBackground>
__global__ void __launch_bounds__(32 * kStripWarps)
    strip_mask_kernel(Frame f, const float* taps, float norm, bool sigma_units,
                      QuotientTest threshold, bool vector) {
  static_assert(Radius == 0 || Radius == 1, "strips: no filter or a 3 x 3 one");
  constexpr int kSide = 2 * Radius + 1;
  constexpr int kStripRows = strip_rows<kBackground>();
  constexpr int kRead = kStripRows + 2 * Radius;  // rows a lane reads
  const int lane = static_cast<int>(threadIdx.x);
  const int x0 = static_cast<int>(blockIdx.x) * strip_columns<Radius>() + 4 * (lane - Radius);
  const int y0 = static_cast<int>(blockIdx.y * kStripWarps + threadIdx.y) * kStripRows;
  if (y0 >= f.height) return;  // the whole warp: its lanes share their rows
  const bool whole = vector && x0 >= 0 && x0 + 3 < f.width;
  float tap[kSide * kSide];
#pragma unroll
  for (int k = 0; k < kSide * kSide; ++k) tap[k] = Radius > 0 ? __ldg(taps + k) : 1.0f;

  // Rows y0 - Radius .. as words of 4 samples, every load issued before the first is used; 0
  // outside the frame.
  using Quad = SampleQuad<F>;
  typename Quad::Word raw[kRead];
  const int inside = min(max(f.width - x0, 0), 4);  // of the lane's 4 columns (x0 >= 0 or none)
#pragma unroll
  for (int i = 0; i < kRead; ++i) {
    const int y = y0 - Radius + i;
    const std::byte* row = f.in.data + static_cast<std::ptrdiff_t>(y) * f.in.stride;
    const bool in_rows = y >= 0 && y < f.height && x0 >= 0;
    raw[i] = whole && in_rows ? Quad::load(row, x0) : Quad::pack(row, x0, in_rows ? inside : 0);
  }
  StripMesh mesh;
  const float floor = kBackground ? sigma_floor(f) : 0.0f;
  // window[k]: row y + k - Radius's residuals at columns x0 - Radius .. x0 + 3 + Radius.
  float window[kSide][4 + 2 * Radius];
  const auto residuals = [&](int i, float(&out)[4 + 2 * Radius]) {
    const int y = y0 - Radius + i;
    const bool in_rows = y >= 0 && y < f.height;
    float wy = 0.0f;
    if (kBackground && in_rows) {
      mesh.locate(f, x0, y);
      wy = f.row_weight[y];
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      float v = Quad::sample(raw[i], c);
      if constexpr (F == PixelFormat::Gray32F) v = isfinite(v) ? v : 0.0f;
      const int x = x0 + c;
      if (in_rows && x >= 0 && x < f.width) {
        v = v - (kBackground ? StripMesh::blend(mesh.mean, c, wy) : f.level);
      } else {
        v = 0.0f;
      }
      out[c + Radius] = v;
    }
    if constexpr (Radius > 0) {
      out[0] = __shfl_up_sync(0xffffffffu, out[4], 1);
      out[5] = __shfl_down_sync(0xffffffffu, out[1], 1);
    }
  };
#pragma unroll
  for (int k = 0; k < kSide - 1; ++k) residuals(k, window[k + 1]);
  const bool writes = lane >= Radius && lane < 32 - Radius && x0 < f.width;
#pragma unroll
  for (int r = 0; r < kStripRows; ++r) {
    const int y = y0 + r;
    // Slide the window down a row (registers renamed by the unrolling).
#pragma unroll
    for (int k = 0; k + 1 < kSide; ++k) {
#pragma unroll
      for (int c = 0; c < 4 + 2 * Radius; ++c) window[k][c] = window[k + 1][c];
    }
    residuals(r + kSide - 1, window[kSide - 1]);
    if (y >= f.height) break;  // warp-uniform
    float wy = 0.0f;
    if (kBackground) {
      mesh.locate(f, x0, y);
      wy = f.row_weight[y];
    }
    std::uint32_t bits = 0;
    float sig[4];
    float sigmas[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      float sum;
      if (Radius == 0) {
        sum = window[0][c];
      } else {
        // Taps outside the frame add tap * 0: the reference leaves them out, and x + 0 == x.
        sum = 0.0f;
#pragma unroll
        for (int dy = 0; dy < kSide; ++dy) {
#pragma unroll
          for (int dx = 0; dx < kSide; ++dx) sum += tap[dy * kSide + dx] * window[dy][c + dx];
        }
      }
      const float sigma =
          kBackground ? floored(StripMesh::blend(mesh.sigma, c, wy), floor) : f.noise;
      sigmas[c] = sigma;
      bool above;
      if (!sigma_units) {
        sig[c] = sum;
        above = sum > threshold.t;
      } else if (f.capped) {
        sig[c] = ieee_quotient(sum, sigma * norm);
        above = sig[c] > threshold.t;
      } else {
        above = kBackground ? threshold.above(sum, sigma * norm) : threshold.above(sum);
      }
      if (above && x0 + c < f.width) bits |= 1u << (8 * c);
    }
    if (!writes) continue;
    *reinterpret_cast<std::uint32_t*>(f.mask + static_cast<std::size_t>(y) * f.mask_pitch + x0) =
        bits;
    if (bits != 0) {
      // The merged flag's z of the pixels set: the centre row's residuals over their noise.
      float* z = f.z + static_cast<std::size_t>(y) * f.z_pitch;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        if ((bits >> (8 * c) & 1u) == 0) continue;
        const float residual = window[Radius][c + Radius];
        z[x0 + c] = sigma_units ? ieee_quotient(residual, sigmas[c]) : residual;
      }
    }
    if (f.capped) {
      float* out = f.capped + static_cast<std::size_t>(y) * f.capped_pitch;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        if (x0 + c < f.width) out[x0 + c] = capped_significance(sig[c]);
      }
    }
  }
}

// The strips' kernel for the filter's radius (0 or 1), the frame's format and its background.
// Rows are read a word of 4 samples at a time where every row's address allows it.
void launch_strips(const Frame& f, int radius, const float* taps, float norm, bool sigma_units,
                   float threshold, cudaStream_t stream) {
  const bool vector = rows_aligned(f.in.data, f.in.stride,
                                   4 * static_cast<std::size_t>(bytes_per_pixel(f.in.format)));
  const auto launch = [&](auto radius_c, auto format_c, auto background_c) {
    constexpr int kRadius = decltype(radius_c)::value;
    constexpr bool kBackground = decltype(background_c)::value;
    constexpr int kBlockRows = strip_rows<kBackground>() * kStripWarps;
    const dim3 grid((f.width + strip_columns<kRadius>() - 1) / strip_columns<kRadius>(),
                    (f.height + kBlockRows - 1) / kBlockRows);
    strip_mask_kernel<kRadius, decltype(format_c)::value, kBackground>
        <<<grid, dim3(32, kStripWarps), 0, stream>>>(
            f, taps, norm, sigma_units, QuotientTest::of(threshold, f.noise * norm), vector);
  };
  const auto with_format = [&](auto radius_c, auto background_c) {
    with_gray_format(f.in.format, [&](auto format_c) { launch(radius_c, format_c, background_c); });
  };
  const auto with_background = [&](auto radius_c) {
    if (f.has_background) return with_format(radius_c, std::true_type{});
    return with_format(radius_c, std::false_type{});
  };
  if (radius == 0) {
    with_background(std::integral_constant<int, 0>{});
  } else {
    with_background(std::integral_constant<int, 1>{});
  }
}

}  // namespace

cudaError_t launch_mask(const Frame& f, int radius, const float* taps, float norm, bool sigma_units,
                        float threshold, cudaStream_t stream) {
  if (radius <= 1) {
    launch_strips(f, radius, taps, norm, sigma_units, threshold, stream);
  } else {
    const dim3 grid((f.width + kMaskW - 1) / kMaskW, (f.height + kMaskH - 1) / kMaskH);
    mask_kernel<<<grid, dim3(kMaskW, kMaskThreadsY), 0, stream>>>(f, taps, radius, norm,
                                                                  sigma_units, threshold);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda::detect_pass
