// Whitening, step 1: the input as float, its invalid mask, and (shift: resample) the frame
// resampled onto the aligned grid.
//
// Schedule: grid-stride over the plane in 256-pixel tiles, one pixel per thread, a fixed
// number of blocks (whiten_tuning.hpp); a warp covers one 32-pixel mask word and writes it
// from a vote. Memory-bound: load reads the input (1-4 B/px) and writes x (4 B/px) and the
// mask (1/8 B/px); align reads x through the 16 taps (cached: neighbouring threads share
// them) and writes y.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

__global__ void __launch_bounds__(kWhitenBlock)
    load_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in) {
  for_each_tile(s.plane, [&](std::size_t p, bool inside) {
    bool bad = false;
    if (inside) {
      const int y = static_cast<int>(static_cast<unsigned>(p) / static_cast<unsigned>(s.width));
      const int x = static_cast<int>(p - static_cast<std::size_t>(y) * s.width);
      const float v = read_sample(in, x, y);
      s.x[p] = v;
      bad = unusable(v, plan.saturation);
    }
    // shift: none: the camera grid is the aligned grid, and x's mask is the frame's.
    const unsigned votes = __ballot_sync(0xffffffffu, bad);
    if (!plan.resample && (threadIdx.x & 31) == 0 && (p >> 5) < static_cast<std::size_t>(s.words)) {
      s.frame_bits[p >> 5] = votes;
    }
  });
}

__global__ void __launch_bounds__(kWhitenBlock)
    align_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  const ShiftKernel k = s.shift->to_grid;
  const int w = s.width, h = s.height;
  const float* x = s.x;
  const float saturation = plan.saturation;
  auto read = [&](int ix, int iy) { return __ldg(x + static_cast<std::size_t>(iy) * w + ix); };
  auto bad_tap = [&](int ix, int iy) { return unusable(read(ix, iy), saturation); };
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    bool bad = false;
    if (inside) {
      const int qy = static_cast<int>(static_cast<unsigned>(q) / static_cast<unsigned>(w));
      const int qx = static_cast<int>(q - static_cast<std::size_t>(qy) * w);
      float v;
      if (taps_inside(k, qx, qy, w, h)) {
        bool bad_taps = false;
        v = sample_inside(k, x, qx, qy, w, saturation, &bad_taps);
        bad = bad_taps || !finite_float(v);
      } else {
        v = sample_shifted(k, qx, qy, w, h, read);
        bad = any_tap(k, qx, qy, w, h, bad_tap) || !finite_float(v);
      }
      s.y[q] = v;
    }
    const unsigned votes = __ballot_sync(0xffffffffu, bad);
    if ((threadIdx.x & 31) == 0 && (q >> 5) < static_cast<std::size_t>(s.words)) {
      s.frame_bits[q >> 5] = votes;
    }
  });
}

}  // namespace

cudaError_t launch_whiten_load(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                               WhitenFrameView in, cudaStream_t stream) {
  load_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in);
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_align(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  align_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
