// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, shift: resample: the frame x resampled onto the aligned grid (y, sample_shifted()
// with the shift's to_grid kernel) and the frame's invalid mask: a pixel is invalid where any of
// its 16 taps is unusable or the value is not finite.
//
// Schedule: register strips (whiten_strips.cuh), every input row's loads issued before the
// first is used. The tile pass this replaced (the 16-tap footprint and the
// row sums staged in shared memory) took 86 us at 4096^2 on an H200, against 67 for this one.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "cuda/whiten/whiten_strips.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// The bicubic rule in strips: output lane m of a warp takes the 4 columns q0 .. q0 + 3 (q0 the
// block's start + 4m). Their taps along an input row are columns q0 + ox - 1 .. q0 + ox + 5, which
// lie in the aligned quads that lanes m, m + 1 and m + 2 load (each lane the word at
// 4 (m + floor((ox - 1) / 4)) past the block's start), so a lane loads one word a row and takes
// 6 samples from the two lanes after it; a warp's last two lanes only load, 120 output columns a
// warp. The offset within the quads, (ox - 1) mod 4, is the same for the whole frame. Each input
// row's 4-tap sums at the lane's columns are made once and serve the 4 output rows that use
// them: the bicubic rule split in its two passes, the same products and sums in the same order
// as sample_shifted().
constexpr int kShiftColumns = strip_columns<0, 2>();
constexpr int kShiftRead = kStripRows + 3;  // input rows of a lane's output rows

// Where a lane's quad of an input row starts (`col`), and where its taps start in it (`e`).
struct StripShift {
  int col, e;
};
__device__ __forceinline__ StripShift strip_shift(int q0, int ox) {
  const int lead = ox - 1;
  const int quads = lead >= 0 ? lead / 4 : -((3 - lead) / 4);  // floor(lead / 4)
  return {q0 + 4 * quads, lead - 4 * quads};
}

// The shift kernel's weights and integer offsets, read once from device memory.
struct StripKernel {
  int ox, oy;
  float wx[4], wy[4];
  __device__ static StripKernel of(const ShiftKernel& k) {
    StripKernel s;
    s.ox = k.ox;
    s.oy = k.oy;
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      s.wx[t] = k.wx[t];
      s.wy[t] = k.wy[t];
    }
    return s;
  }
};

// The 7 tap columns of a lane's 4 outputs along one row (taps[j]: column q0 + ox - 1 + j) from
// the lane's quad and the next two lanes'; `bad` (if given): bit j, whether taps[j] is unusable.
// Every lane of the warp calls it.
__device__ __forceinline__ void strip_row_taps(const float4& quad, int e, float (&taps)[7],
                                               unsigned* bad = nullptr, float saturation = 0.0f) {
  float v[10];  // columns col .. col + 9
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = quad_at(quad, j);
#pragma unroll
  for (int j = 0; j < 4; ++j) v[4 + j] = __shfl_down_sync(0xffffffffu, v[j], 1);
#pragma unroll
  for (int j = 0; j < 2; ++j) v[8 + j] = __shfl_down_sync(0xffffffffu, v[j], 2);
#pragma unroll
  for (int j = 0; j < 7; ++j) {
    taps[j] = e == 0 ? v[j] : e == 1 ? v[j + 1] : e == 2 ? v[j + 2] : v[j + 3];
  }
  if (bad != nullptr) {
    unsigned own = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (unusable(v[j], saturation)) own |= 1u << j;
    }
    const unsigned all = own | __shfl_down_sync(0xffffffffu, own, 1) << 4 |
                         __shfl_down_sync(0xffffffffu, own, 2) << 8;
    *bad = (all >> e) & 0x7fu;
  }
}

// The row pass: sums[c] = sum over t of wx[t] * taps[c + t], t = 0..3 in order.
__device__ __forceinline__ void strip_row_sums(const float (&wx)[4], const float (&taps)[7],
                                               float (&sums)[4]) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    float row = 0.0f;
#pragma unroll
    for (int t = 0; t < 4; ++t) row += wx[t] * taps[c + t];
    sums[c] = row;
  }
}

// The column pass at column c of output row r: sum over t of wy[t] * sums[r + t][c], in order.
template <int Rows>
__device__ __forceinline__ float strip_column_sum(const float (&wy)[4],
                                                  const float (&sums)[Rows][4], int r, int c) {
  float v = 0.0f;
#pragma unroll
  for (int t = 0; t < 4; ++t) v += wy[t] * sums[r + t][c];
  return v;
}

// `vector`: the planes' rows (w floats) allow 16-byte loads and stores.
__global__ void __launch_bounds__(32 * kStripWarps)
    align_kernel(WhitenDeviceState s, WhitenFramePlan plan, bool vector) {
  const StripKernel k = StripKernel::of(s.shift->to_grid);
  const int lane = static_cast<int>(threadIdx.x);
  const int w = s.width, h = s.height;
  const int q0 = static_cast<int>(blockIdx.x) * kShiftColumns + 4 * lane;  // output columns
  const int y0 = static_cast<int>(blockIdx.y * kStripWarps + threadIdx.y) * kStripRows;
  if (y0 >= h) return;  // the whole warp: its lanes share their rows
  const StripShift at = strip_shift(q0, k.ox);
  float4 raw[kShiftRead];
#pragma unroll
  for (int i = 0; i < kShiftRead; ++i) {
    const int iy = clamp_index(y0 + k.oy - 1 + i, h);
    raw[i] = load_clamped_quad(s.x + static_cast<std::size_t>(iy) * w, at.col, w, vector);
  }
  // Each input row's sums, and whether any of their taps is unusable (bit 4 i + c).
  float sums[kShiftRead][4];
  unsigned long long sums_bad = 0;
#pragma unroll
  for (int i = 0; i < kShiftRead; ++i) {
    float taps[7];
    unsigned taps_bad;
    strip_row_taps(raw[i], at.e, taps, &taps_bad, plan.saturation);
    strip_row_sums(k.wx, taps, sums[i]);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (((taps_bad >> c) & 0xfu) != 0) sums_bad |= 1ull << (4 * i + c);
    }
  }
  if (lane >= 32 - 2 || q0 >= w) return;  // loading lanes; no shuffle follows
#pragma unroll
  for (int r = 0; r < kStripRows; ++r) {
    const int qy = y0 + r;
    if (qy >= h) break;
    float v[4];
    unsigned bad = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      v[c] = strip_column_sum(k.wy, sums, r, c);
      const auto rows_bad = (sums_bad >> (4 * r + c)) & 0x1111u;  // rows r .. r + 3
      if (q0 + c < w && (rows_bad != 0 || !finite_float(v[c]))) bad |= 1u << c;
    }
    store_quad(s.y + static_cast<std::size_t>(qy) * w, q0, w, vector, v);
    or_pixel_bits(s.frame_bits, static_cast<std::size_t>(qy) * w + q0, bad);
  }
}

}  // namespace

cudaError_t launch_whiten_align(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  align_kernel<<<strip_grid(state.width, state.height, kShiftColumns), strip_block(), 0, stream>>>(
      state, plan, planes_in_quads(state));
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
