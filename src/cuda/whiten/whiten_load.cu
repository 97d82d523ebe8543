// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, step 1: the input as float (with despike, its spikes at their neighbours' level,
// flagged and counted), and with shift: none its invalid mask (with resample the align pass,
// whiten_align.cu, makes it).
//
// Schedule: register strips (whiten_strips.cuh). A lane takes 4 columns and kLoadRows rows,
// its rows of input read as words of 4 samples (all issued before the first is used) and
// converted once; its 3 x 3 neighbourhoods come from the row above, the row and the row below in
// registers, the columns either side from the neighbouring lanes, so a warp's first and last
// lanes only read. The spike test of a sample with 8 neighbours inside the frame (and finite,
// for GRAY32F) takes them from the registers (despike_inner(), min/max only); the frame's edges
// and float samples beside a non-finite one are tested after the strip, reading the frame
// (despike_sample(), one call site out of the unrolled rows). The pass is bound by the test's
// instructions (its bytes, 2 in and 4 out a GRAY16 pixel, would take ~25 us at 4096^2 on an
// H200). Measured there: the tile pass this replaced (the tile and its ring staged in shared
// memory, a division per cell) 108 us; this one 90 us; rows of 8 or 16 (rolled, loads 4 rows
// ahead) 98-104 us; a quick test on the 4 edge neighbours first, the full one for its
// candidates, 105 us (a few percent of noise samples pass it, and each is tested again alone).
#include <cuda_runtime.h>

#include "cuda/common/pixel_reader.hpp"
#include "cuda/common/rows_aligned.hpp"
#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "cuda/whiten/whiten_strips.cuh"
#include "pipeline/whiten/despike.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kLoadColumns = strip_columns<1, 1>();

// Output rows of a lane.
constexpr int kLoadRows = 4;

// despike_sample() of input pixel (x, y), reading the frame: the pixels the strip leaves for
// later (the frame's edges, float pixels with a non-finite sample around them). Out of line:
// one copy, rarely run.
template <PixelFormat F>
__device__ __noinline__ DespikedSample despike_in_frame(WhitenFrameView in, int x, int y, int w,
                                                        int h) {
  const auto read = [&](int cx, int cy) {
    return read_pixel<F>(in.data + static_cast<std::ptrdiff_t>(cy) * in.stride, cx);
  };
  return despike_sample(read, x, y, w, h);
}

// `vector_in`: the input's rows allow a word of 4 samples; `vector_x`: x's rows (w floats) a
// 16-byte store.
template <PixelFormat F>
__global__ void __launch_bounds__(32 * kStripWarps)
    load_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in, bool vector_in,
                bool vector_x) {
  static_assert(kLoadRows * 4 <= 32, "one bit a pixel of the lane's strip");
  const int lane = static_cast<int>(threadIdx.x);
  const int w = s.width, h = s.height;
  const int x0 = static_cast<int>(blockIdx.x) * kLoadColumns + 4 * (lane - 1);
  const int y0 = static_cast<int>(blockIdx.y * kStripWarps + threadIdx.y) * kLoadRows;
  if (y0 >= h) return;  // the whole warp: its lanes share their rows

  // Rows y0 - 1 .. y0 + kLoadRows as words of 4 samples; 0 outside the frame (never tested).
  using Quad = SampleQuad<F>;
  constexpr int kRead = kLoadRows + 2;
  typename Quad::Word raw[kRead];
  const bool whole = vector_in && x0 >= 0 && x0 + 3 < w;
  const int inside = min(max(w - x0, 0), 4);
#pragma unroll
  for (int i = 0; i < kRead; ++i) {
    const int y = y0 - 1 + i;
    const std::byte* row = in.data + static_cast<std::ptrdiff_t>(y) * in.stride;
    const bool in_rows = y >= 0 && y < h && x0 >= 0;
    raw[i] = whole && in_rows ? Quad::load(row, x0) : Quad::pack(row, x0, in_rows ? inside : 0);
  }
  // window[k][c]: row y - 1 + k at column x0 - 1 + c.
  float window[3][6];
  const auto convert = [&](int i, float(&out)[6]) {
#pragma unroll
    for (int c = 0; c < 4; ++c) out[c + 1] = Quad::sample(raw[i], c);
    spread_neighbours(out);
  };
  convert(0, window[1]);
  convert(1, window[2]);
  const bool writes = lane >= 1 && lane <= 30 && x0 < w;
  std::uint32_t later = 0;  // bit 4 r + c: pixel (x0 + c, y0 + r) is tested after the strip
  unsigned spikes_seen = 0;
#pragma unroll
  for (int r = 0; r < kLoadRows; ++r) {
    slide_window(window);
    convert(r + 2, window[2]);
    const int y = y0 + r;
    if (y >= h) break;  // warp-uniform
    if (!writes) continue;
    float v[4];
    unsigned spikes = 0, bad = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int x = x0 + c;
      v[c] = window[1][c + 1];
      if (x >= w) continue;
      if (plan.despike) {
        const float around[8] = {window[0][c],     window[0][c + 1], window[0][c + 2],
                                 window[1][c],     window[1][c + 2], window[2][c],
                                 window[2][c + 1], window[2][c + 2]};
        bool inner = x >= 1 && x + 1 < w && y >= 1 && y + 1 < h;
        if constexpr (F == PixelFormat::Gray32F) {
          // Only where all nine are finite (despike_sample() skips the rest).
          bool finite = finite_float(v[c]);
#pragma unroll
          for (int k = 0; k < 8; ++k) finite = finite && finite_float(around[k]);
          inner = inner && finite;
        }
        if (!inner) {
          later |= 1u << (4 * r + c);
          continue;
        }
        const DespikedSample d = despike_inner(v[c], around);
        v[c] = d.value;
        if (d.spike) spikes |= 1u << c;
      }
      if (unusable(v[c], plan.saturation)) bad |= 1u << c;
    }
    store_quad(s.x + static_cast<std::size_t>(y) * w, x0, w, vector_x, v);
    const std::size_t p0 = static_cast<std::size_t>(y) * w + x0;
    or_pixel_bits(s.spike_bits, p0, spikes);
    // shift: none: the camera grid is the aligned grid, and x's mask is the frame's.
    if (!plan.resample) or_pixel_bits(s.frame_bits, p0, bad);
    spikes_seen += static_cast<unsigned>(__popc(spikes));
  }
  // The pixels left for later, one at a time from the frame (after the strip's store of their
  // row, which this replaces): one call site, out of the unrolled strip, whose code stays small.
  while (later != 0) {
    const int bit = __ffs(static_cast<int>(later)) - 1;
    later &= later - 1;
    const int x = x0 + (bit & 3), y = y0 + (bit >> 2);
    const DespikedSample d = despike_in_frame<F>(in, x, y, w, h);
    const std::size_t p = static_cast<std::size_t>(y) * w + x;
    s.x[p] = d.value;
    if (d.spike) {
      or_pixel_bits(s.spike_bits, p, 1u);
      ++spikes_seen;
    }
    if (!plan.resample && unusable(d.value, plan.saturation)) or_pixel_bits(s.frame_bits, p, 1u);
  }
  // Integers: the order of the additions does not matter.
  if (spikes_seen != 0) {
    atomicAdd(s.despiked_count, static_cast<unsigned long long>(spikes_seen));
  }
}

}  // namespace

cudaError_t launch_whiten_load(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                               WhitenFrameView in, cudaStream_t stream) {
  // The invalid mask is ORed into by the load (none) or align (resample) pass, the spike mask
  // by the load pass.
  const std::size_t mask_bytes = static_cast<std::size_t>(state.words) * sizeof(std::uint32_t);
  STARSIFT_CUDA_TRY(cudaMemsetAsync(state.frame_bits, 0, mask_bytes, stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(state.spike_bits, 0, mask_bytes, stream));
  const bool vector_in =
      rows_aligned(in.data, in.stride, 4 * static_cast<std::size_t>(bytes_per_pixel(in.format)));
  const bool vector_x = planes_in_quads(state);
  const dim3 grid = strip_grid(state.width, state.height, kLoadColumns, kLoadRows);
  with_gray_format(in.format, [&](auto format) {
    load_kernel<decltype(format)::value>
        <<<grid, strip_block(), 0, stream>>>(state, plan, in, vector_in, vector_x);
  });
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
