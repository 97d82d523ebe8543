// Whitening, fit: current: r_k = sum over the fit rows of y(p) h_k(p), the current (aligned)
// frame against the n history frames of the fit, in double; also sum y(p)^2, which with
// them is the new Gram row when the fit's frames are the kept ones (WhitenFramePlan::
// row_from_dots).
//
// Schedule: grid-stride over the plane, one pixel per thread per tile, a fixed grid
// (kWhitenPixelBlocks); each thread keeps its n running sums in registers (up to
// kWhitenRegisterLags; a larger history spills them to local memory), the block adds its
// threads' sums in a fixed tree and leaves one row of partials; the solve adds the rows in
// block order. No atomics: the same sums in the same order every run. Memory-bound: the
// target (4 B/px) and n history planes (4n B/px) are read once.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

template <int L>
__global__ void __launch_bounds__(kWhitenBlock)
    current_dots_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  const float* target = plan.resample ? s.y : s.x;
  const int n = plan.n;
  double acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = 0.0;
  double self = 0.0;
  for_each_tile(s.plane, [&](std::size_t p, bool inside) {
    if (!inside || !fit_pixel(s, plan, p)) return;
    const double t = fit_value(__ldg(target + p));
#pragma unroll
    for (int k = 0; k < L; ++k) {
      if (k < n) acc[k] += t * static_cast<double>(__ldg(plane_of(s, plan.fit_slots[k]) + p));
    }
    self += t * t;
  });
  double* out_row = s.dot_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  block_sum_store(acc, n, out_row);
  double one[1] = {self};
  block_sum_store(one, 1, out_row + n);
}

}  // namespace

cudaError_t launch_whiten_current_dots(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                       cudaStream_t stream) {
  if (plan.n <= kWhitenRegisterLags) {
    current_dots_kernel<kWhitenRegisterLags>
        <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  } else {
    current_dots_kernel<kWhitenMaxLags>
        <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
