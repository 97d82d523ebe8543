// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, shift: resample: the frame x resampled onto the aligned grid (y, sample_shifted()
// with the shift's to_grid kernel) and the frame's invalid mask: a pixel is invalid where any of
// its 16 taps is unusable or the value is not finite.
//
// Schedule: the bicubic rule in register strips (whiten_strips.cuh), every input row's loads
// issued before the first is used. The tile pass this replaced (the 16-tap footprint and the
// row sums staged in shared memory) took 86 us at 4096^2 on an H200, against 67 for this one.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "cuda/whiten/whiten_strips.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

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
      state, plan, state.width % 4 == 0);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
