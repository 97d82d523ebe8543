// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian blur as a stage. On the CPU: the direct sums of GaussCpu (exact, the
// reference's bits) while the larger sigma is under GaussParams::kRecursiveFromSigma, Deriche's
// recursion (GaussIir, within 0.11 % of the peak) from there, where its cost, flat in sigma, is
// the smaller (the two cross near sigma 50: bench/results/gauss-cpu), unless an axis is blurred
// by less than kRecursiveMinSigma (gauss_cpu_recursive()). CUDA chooses its own way
// (src/cuda/gauss/gauss.cuh), small radii in one fused kernel.
#pragma once

#include <algorithm>
#include <memory>

#include "pipeline/backend.hpp"
#include "pipeline/gauss/gauss_cpu.hpp"
#include "pipeline/gauss/gauss_iir.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

class GaussStage : public FilterStage {
 public:
  std::string_view name() const override { return "gauss"; }
  bool supports(PixelFormat format) const override { return gauss_supports(format); }

  // Validates and stores new parameters; the next process() uses them.
  void set_params(const GaussParams& params) {
    params.validate();
    params_ = params;
  }
  const GaussParams& params() const noexcept { return params_; }
  // True when the next frame goes through the recursion rather than the direct sums.
  bool recursive() const noexcept { return gauss_cpu_recursive(params_); }

 protected:
  explicit GaussStage(const GaussParams& params) { set_params(params); }
  GaussParams params_;
};

// Builds the stage for a resolved backend choice (see resolve_backend()).
std::unique_ptr<GaussStage> make_gauss_stage(const GaussParams& params,
                                             const BackendChoice& choice);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<GaussStage> make_gauss_stage_cuda(const GaussParams& params, int device_id);
#endif

}  // namespace starsift
