// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, step 1: the input as float (with despike, its spikes at their neighbours' level,
// flagged and counted), its invalid mask, and (shift: resample) the frame resampled onto the
// aligned grid.
//
// Schedule: 2-D tiles of kTileW x kTileH pixels, one block each (kTileW x 8 threads, each
// thread kTileH / 8 rows), the neighbourhood a tile needs staged once in shared memory. These
// passes move few bytes per pixel (load: 2 in, 4 out; align: 4 in, 4 out) and were bound by
// instructions, not memory, when each pixel read its 3 x 3 (16) samples itself and worked out
// its row by a division. Load: the tile and a 1-pixel margin of the input, then the spike test
// from shared memory (interior samples of integer frames through despike_inner(), min/max only).
// Align: the tile's 16-tap footprint of x (border rule: clamped coordinates, as
// sample_shifted()), then the bicubic rule split in its two passes (each row's 4-tap sum is
// shared by the 4 output rows that use it; the same arithmetic in the same order, so the same
// result). The frame's invalid mask is cleared before the pass and a warp ORs its tile row's
// bits into the (at most two) mask words it touches: rows need not start on a word.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/despike.hpp"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// The load pass is templated on the input format: a switch on the format per read made the
// spike test instruction-bound.
template <PixelFormat F>
__global__ void __launch_bounds__(kWhitenBlock)
    load_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in) {
  constexpr int kW = kTileW + 2, kH = kTileH + 2;
  __shared__ float raw[kH][kW];  // the input at (x0 - 1 + c, y0 - 1 + r)
  const int w = s.width, h = s.height;
  const int x0 = static_cast<int>(blockIdx.x) * kTileW, y0 = static_cast<int>(blockIdx.y) * kTileH;
  if (plan.despike) {
    // (By cells over the block, one division each (for_each_cell()): measured faster here than by
    // rows, 110 against 127 us at 4096^2 on an H100, unlike the align pass's taps.)
    for_each_cell(kH, kW, threadIdx.x, kWhitenBlock, [&](int r, int c) {
      const int gx = x0 - 1 + c, gy = y0 - 1 + r;
      raw[r][c] = gx >= 0 && gx < w && gy >= 0 && gy < h
                      ? read_pixel<F>(in.data + static_cast<std::ptrdiff_t>(gy) * in.stride, gx)
                      : 0.0f;  // outside the plane: never read
    });
    __syncthreads();
  }
  // The spike test reads the input, never x (reference.cpp, load_input()).
  auto read = [&](int cx, int cy) { return raw[cy - y0 + 1][cx - x0 + 1]; };
  for_each_thread_row(x0, y0, [&](int tile_r, int tile_c, int x, int y) {
    const bool inside = x < w && y < h;
    bool bad = false;
    bool spike = false;
    if (inside) {
      float v;
      if (plan.despike) {
        const int r = tile_r + 1, c = tile_c + 1;
        v = raw[r][c];
        DespikedSample d;
        if (F != PixelFormat::Gray32F && x >= 1 && x + 1 < w && y >= 1 && y + 1 < h) {
          const float around[8] = {raw[r - 1][c - 1], raw[r - 1][c],    raw[r - 1][c + 1],
                                   raw[r][c - 1],     raw[r][c + 1],    raw[r + 1][c - 1],
                                   raw[r + 1][c],     raw[r + 1][c + 1]};
          d = despike_inner(v, around);
        } else {
          d = despike_sample(read, x, y, w, h);
        }
        // A spike takes its neighbours' level and is flagged: no measurement there
        // (load_input()).
        v = d.value;
        spike = d.spike;
      } else {
        v = read_pixel<F>(in.data + static_cast<std::ptrdiff_t>(y) * in.stride, x);
      }
      s.x[static_cast<std::size_t>(y) * w + x] = v;
      bad = unusable(v, plan.saturation);
    }
    if (plan.despike) {
      // Integers: the order of the warps' additions does not matter.
      const unsigned spikes = __ballot_sync(0xffffffffu, spike);
      if ((threadIdx.x & 31) == 0 && spikes != 0) {
        atomicAdd(s.despiked_count, static_cast<unsigned long long>(__popc(spikes)));
      }
      if (y < h) or_mask_row(s.spike_bits, s.width, x0, y, spikes);
    }
    // shift: none: the camera grid is the aligned grid, and x's mask is the frame's.
    const unsigned votes = __ballot_sync(0xffffffffu, bad);
    if (!plan.resample && y < h) or_mask_row(s.frame_bits, s.width, x0, y, votes);
  });
}

__global__ void __launch_bounds__(kWhitenBlock)
    align_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  constexpr int kW = kTileW + 3, kH = kTileH + 3;  // the 4 x 4 taps of a kTileW x kTileH tile
  __shared__ float taps[kH][kW];
  __shared__ unsigned char taps_bad[kH][kW];
  __shared__ float rows[kH][kTileW];  // each tap row's horizontal sum, per output column
  __shared__ unsigned char rows_bad[kH][kTileW];
  const ShiftKernel k = s.shift->to_grid;
  const int w = s.width, h = s.height;
  const int x0 = static_cast<int>(blockIdx.x) * kTileW, y0 = static_cast<int>(blockIdx.y) * kTileH;
  const int left = x0 + k.ox - 1, top = y0 + k.oy - 1;
  for_each_row_cell<kTileW, kThreadRows, kH, kW>([&](int r, int c) {
    const float v = __ldg(s.x + static_cast<std::size_t>(clamp_index(top + r, h)) * w +
                          clamp_index(left + c, w));
    taps[r][c] = v;
    taps_bad[r][c] = unusable(v, plan.saturation);
  });
  __syncthreads();
  bicubic_rows<kH, kW, true>(k.wx, taps, taps_bad, rows, rows_bad);
  __syncthreads();
  for_each_thread_row(x0, y0, [&](int r, int c, int qx, int qy) {
    bool bad = false;
    if (qx < w && qy < h) {
      const float v = bicubic_column(k.wy, rows, r, c);
      bad = (rows_bad[r][c] | rows_bad[r + 1][c] | rows_bad[r + 2][c] | rows_bad[r + 3][c]) ||
            !finite_float(v);
      s.y[static_cast<std::size_t>(qy) * w + qx] = v;
    }
    const unsigned votes = __ballot_sync(0xffffffffu, bad);
    if (qy < h) or_mask_row(s.frame_bits, s.width, x0, qy, votes);
  });
}

}  // namespace

cudaError_t launch_whiten_load(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                               WhitenFrameView in, cudaStream_t stream) {
  // The invalid mask is ORed into by the load (none) or align (resample) pass, the spike mask
  // by the load pass.
  const std::size_t mask_bytes = static_cast<std::size_t>(state.words) * sizeof(std::uint32_t);
  STARSIFT_CUDA_TRY(cudaMemsetAsync(state.frame_bits, 0, mask_bytes, stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(state.spike_bits, 0, mask_bytes, stream));
  const dim3 grid = tile_grid(state);
  with_gray_format(in.format, [&](auto format) {
    load_kernel<decltype(format)::value><<<grid, kWhitenBlock, 0, stream>>>(state, plan, in);
  });
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_align(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  align_kernel<<<tile_grid(state), kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
