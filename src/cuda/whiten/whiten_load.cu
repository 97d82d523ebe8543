// Whitening, step 1: the input as float (its spikes NaN with despike, and counted), its invalid
// mask, and (shift: resample) the frame resampled onto the aligned grid.
//
// Schedule: grid-stride over the plane in 256-pixel tiles, one pixel per thread, a fixed
// number of blocks (whiten_tuning.hpp); a warp covers one 32-pixel mask word and writes it
// from a vote. Memory-bound: load reads the input (1-4 B/px) and writes x (4 B/px) and the
// mask (1/8 B/px); align reads x through the 16 taps (cached: neighbouring threads share
// them) and writes y. The spike test reads the 3 x 3 box of the input (cached).
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/despike.hpp"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// The load pass is templated on the input format: the spike test reads nine samples a
// pixel, and a switch on the format per read made it instruction-bound.
template <PixelFormat F>
__global__ void __launch_bounds__(kWhitenBlock)
    load_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in) {
  const int w = s.width, h = s.height;
  // The spike test reads the input, never x (reference.cpp, load_input()).
  auto read = [&](int cx, int cy) {
    return row_sample<F>(in.data + static_cast<std::ptrdiff_t>(cy) * in.stride, cx);
  };
  for_each_tile(s.plane, [&](std::size_t p, bool inside) {
    bool bad = false;
    bool spike = false;
    if (inside) {
      const int y = static_cast<int>(static_cast<unsigned>(p) / static_cast<unsigned>(w));
      const int x = static_cast<int>(p - static_cast<std::size_t>(y) * w);
      float v = read(x, y);
      if (plan.despike) {
        const DespikedSample d = despike_sample(read, x, y, w, h);
        if (d.spike) {
          // A missing sample; with no history yet its neighbours' level (load_input()).
          v = plan.n == 0 ? d.value : __int_as_float(0x7fc00000);  // quiet NaN
          spike = true;
        }
      }
      s.x[p] = v;
      bad = unusable(v, plan.saturation);
    }
    if (plan.despike) {
      // Integers: the order of the warps' additions does not matter.
      const unsigned spikes = __ballot_sync(0xffffffffu, spike);
      if ((threadIdx.x & 31) == 0 && spikes != 0) {
        atomicAdd(s.despiked_count, static_cast<unsigned long long>(__popc(spikes)));
      }
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
  switch (in.format) {
    case PixelFormat::Gray8:
      load_kernel<PixelFormat::Gray8>
          <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in);
      break;
    case PixelFormat::Gray16:
      load_kernel<PixelFormat::Gray16>
          <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in);
      break;
    default:
      load_kernel<PixelFormat::Gray32F>
          <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in);
  }
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_align(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  align_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
