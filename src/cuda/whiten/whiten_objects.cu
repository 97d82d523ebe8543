// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, reject: objects (shift: resample), between the camera pass (whiten_pixel.cu) and
// the store (whiten_store.cu): the reference's reject_objects() (reference.cpp). The camera
// pass has written this frame's residuals rho (camera grid) and left sigma^2, the runs and the
// rejected flags as they were; then
// box: per camera pixel the sums of rho and of sigma_{t-1}^2 over its 3 x 3 box (the
//   neighbours inside the frame, added in the reference's order) and pixel_box_significant():
//   one byte per pixel. Reads rho and sigma^2 over the tile and a 1-pixel ring.
// decide: a pixel is on an object when a box in its 3 x 3 neighbourhood passed (the dilation
//   by one pixel), then update_pixel_noise() with `object`: sigma^2, the run, the rejected flag
//   the store pass reads, and the rejection count. Reads the box bytes over the tile and a
//   1-pixel ring, rho, sigma^2, the run, x and the despike bit of the pixel.
// Two passes, not one: the box sums read sigma_{t-1}^2 of the neighbours, so no pixel's sigma^2
// may change before every box sum that reads it is taken, and the neighbours of a tile's edge
// belong to other blocks (one pass updating sigma^2 in place would race with them).
// Bytes per pixel: 4 + 4 (+ the ring) + 1, then 1 + 4 + 4 + 4 + 1 + 1 (+ sigma^2 and run
// written where they change) + 1/8; with the camera pass's rho written, ~29 more than mask.
//
// Schedule: register strips (whiten_strips.cuh), a warp's first and last lanes only reading the
// columns around the others'. Box: a lane's rows of rho and sigma^2 as 16-byte words, each row's
// 6 columns (its 4 and one either side) once, the sums from the 3 rows in registers. Decide: the
// box bytes a word a row, the dilation by byte operations, then the lane's 4 pixels' x, rho,
// sigma^2, run and rejected flags a word each. The tile passes these replaced (tile and ring
// staged in shared memory) took 71 and 122 us at 4096^2 on an H200.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "cuda/whiten/whiten_strips.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kObjectColumns = strip_columns<1, 1>();

// Where a strip lane's 4 columns start, and its first output row.
struct StripPlace {
  int lane, x0, y0;
};
__device__ __forceinline__ StripPlace object_strip_place() {
  const int lane = static_cast<int>(threadIdx.x);
  return {lane, static_cast<int>(blockIdx.x) * kObjectColumns + 4 * (lane - 1),
          static_cast<int>(blockIdx.y * kStripWarps + threadIdx.y) * kStripRows};
}

// Row y's floats at columns x0 - 1 .. x0 + 4 of a lane (`quad` its own 4, 0 outside the frame):
// the columns either side from the neighbouring lanes.
__device__ __forceinline__ void spread_row(const float4& quad, float (&out)[6]) {
#pragma unroll
  for (int c = 0; c < 4; ++c) out[c + 1] = quad_at(quad, c);
  spread_neighbours(out);
}

// The box test of every pixel. Outside the frame rho and sigma^2 read as +0: adding +0 to a
// float sum leaves it as it is (but for the sign of a zero sum, which the test squares), so the
// sums equal the reference's over the neighbours inside the frame, in the same order.
__global__ void __launch_bounds__(32 * kStripWarps)
    object_box_kernel(WhitenDeviceState s, WhitenFramePlan plan, bool vector) {
  const StripPlace at = object_strip_place();
  const int w = s.width, h = s.height;
  if (at.y0 >= h) return;  // the whole warp
  constexpr int kRead = kStripRows + 2;
  float4 rho_raw[kRead], var_raw[kRead];
#pragma unroll
  for (int i = 0; i < kRead; ++i) {
    const int y = at.y0 - 1 + i;
    rho_raw[i] = var_raw[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (y >= 0 && y < h && at.x0 >= 0) {
      const std::size_t row = static_cast<std::size_t>(y) * w;
      rho_raw[i] = load_quad_or_zero(s.rho + row, at.x0, w, vector);
      var_raw[i] = load_quad_or_zero(s.var + row, at.x0, w, vector);
    }
  }
  float rho[3][6], var[3][6];  // rows y - 1 .. y + 1, columns x0 - 1 .. x0 + 4
  spread_row(rho_raw[0], rho[1]);
  spread_row(var_raw[0], var[1]);
  spread_row(rho_raw[1], rho[2]);
  spread_row(var_raw[1], var[2]);
  const bool writes = at.lane >= 1 && at.lane <= 30 && at.x0 < w;
#pragma unroll
  for (int r = 0; r < kStripRows; ++r) {
    slide_window(rho);
    slide_window(var);
    spread_row(rho_raw[r + 2], rho[2]);
    spread_row(var_raw[r + 2], var[2]);
    const int y = at.y0 + r;
    if (y >= h) break;  // warp-uniform
    if (!writes) continue;
    std::uint32_t word = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      // Box rows top to bottom, each left to right, as reject_objects().
      float rho_sum = 0.0f, var_sum = 0.0f;
#pragma unroll
      for (int dy = 0; dy < 3; ++dy) {
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) {
          rho_sum += rho[dy][c + dx];
          var_sum += var[dy][c + dx];
        }
      }
      if (pixel_box_significant(rho_sum, var_sum, plan.noise)) word |= 1u << (8 * c);
    }
    store_byte_quad(s.object_box + static_cast<std::size_t>(y) * w, at.x0, w, vector, word);
  }
}

// update_pixel_noise() of a lane's 4 camera pixels from x0 on a row (`row`: the plane index of
// its column 0) given their residuals, sigma_{t-1}^2 (`var_q`, as loaded), which are usable
// (bit c) and on an object (byte c): sigma^2 and the runs written back where any of the 4
// changed (a word each), the rejected flags always (byte c: 1 rejected). Returns how many were
// rejected.
__device__ __forceinline__ unsigned update_noise_quad(const WhitenDeviceState& s,
                                                      const WhitenFramePlan& plan, std::size_t row,
                                                      int x0, bool vector, const float (&rho)[4],
                                                      const float4& var_q, unsigned usable,
                                                      std::uint32_t object) {
  const int w = s.width;
  const std::uint32_t runs = load_byte_quad<false>(s.run + row, x0, w, vector);
  float var[4];
  std::uint32_t new_runs = 0, rejected = 0;
  bool var_changed = false;
  unsigned count = 0;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    var[c] = quad_at(var_q, c);
    unsigned char run = static_cast<unsigned char>(runs >> (8 * c));
    if (x0 + c < w) {
      const float before = var[c];
      if (update_pixel_noise(rho[c], ((usable >> c) & 1u) != 0, plan.noise, var[c], run,
                             ((object >> (8 * c)) & 1u) != 0)) {
        rejected |= 1u << (8 * c);
        ++count;
      }
      var_changed = var_changed || !(var[c] == before);
    }
    new_runs |= static_cast<std::uint32_t>(run) << (8 * c);
  }
  if (var_changed) store_quad(s.var + row, x0, w, vector, var);
  if (new_runs != runs) store_byte_quad(s.run + row, x0, w, vector, new_runs);
  store_byte_quad(s.rejected + row, x0, w, vector, rejected);
  return count;
}

// Each byte of a box word as 0 or 1, then ORed with the bytes either side (the neighbouring
// columns, `before` and `after` from the lanes around): the dilation along x of 4 pixels.
__device__ __forceinline__ std::uint32_t dilate_row(std::uint32_t word) {
  std::uint32_t ones = word | word >> 4;  // bit 0 of each byte: whether any of its bits is set
  ones |= ones >> 2;
  ones |= ones >> 1;
  const std::uint32_t nonzero = ones & 0x01010101u;
  const std::uint32_t before = __shfl_up_sync(0xffffffffu, nonzero, 1) >> 24;
  const std::uint32_t after = (__shfl_down_sync(0xffffffffu, nonzero, 1) & 0xffu) << 24;
  return nonzero | nonzero << 8 | nonzero >> 8 | before | after;
}

// The dilation and each pixel's decision (update_pixel_noise() with `object`), as
// camera_pixel() makes it without objects: sigma^2 and the run written where they change, the
// rejected flag always, the rejections counted.
__global__ void __launch_bounds__(32 * kStripWarps)
    object_decide_kernel(WhitenDeviceState s, WhitenFramePlan plan, bool vector) {
  const StripPlace at = object_strip_place();
  const int w = s.width, h = s.height;
  if (at.y0 >= h) return;  // the whole warp
  constexpr int kRead = kStripRows + 2;
  std::uint32_t boxes[kRead];
#pragma unroll
  for (int i = 0; i < kRead; ++i) {
    const int y = at.y0 - 1 + i;
    boxes[i] =
        y >= 0 && y < h && at.x0 >= 0
            ? load_byte_quad(s.object_box + static_cast<std::size_t>(y) * w, at.x0, w, vector)
            : 0u;
  }
  std::uint32_t above = 0, here = dilate_row(boxes[0]), below = dilate_row(boxes[1]);
  const bool writes = at.lane >= 1 && at.lane <= 30 && at.x0 < w;
  unsigned rejections = 0;
#pragma unroll
  for (int r = 0; r < kStripRows; ++r) {
    above = here;
    here = below;
    below = dilate_row(boxes[r + 2]);
    const int y = at.y0 + r;
    if (y >= h) break;  // warp-uniform
    if (!writes) continue;
    const std::uint32_t object = above | here | below;  // byte c: 1 on an object
    const std::size_t row = static_cast<std::size_t>(y) * w;
    const float4 xq = load_quad_or_zero(s.x + row, at.x0, w, vector);
    const float4 rhoq = load_quad_or_zero(s.rho + row, at.x0, w, vector);
    const float4 var_q = load_quad_or_zero<false>(s.var + row, at.x0, w, vector);
    const unsigned despiked = mask_nibble(s.spike_bits, s.words, row + at.x0);
    float rho[4];
    unsigned usable = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      rho[c] = quad_at(rhoq, c);
      if (measured(quad_at(xq, c), ((despiked >> c) & 1u) != 0, plan.saturation)) {
        usable |= 1u << c;
      }
    }
    rejections += update_noise_quad(s, plan, row, at.x0, vector, rho, var_q, usable, object);
  }
  add_warp_count(s.rejected_count, rejections);
}

}  // namespace

cudaError_t launch_whiten_objects(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream) {
  if (state.rho == nullptr || state.object_box == nullptr) return cudaErrorInvalidValue;
  const dim3 grid = strip_grid(state.width, state.height, kObjectColumns);
  const bool vector = planes_in_quads(state);
  object_box_kernel<<<grid, strip_block(), 0, stream>>>(state, plan, vector);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  object_decide_kernel<<<grid, strip_block(), 0, stream>>>(state, plan, vector);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
