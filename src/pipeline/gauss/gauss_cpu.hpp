// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU backend's Gaussian blur: the reference's sums, in the reference's order (so its
// results are the reference's, bit for bit), computed on rows converted to float and padded
// with the border once, in loops over contiguous samples that the compiler vectorises. Its
// cost grows with the radius (2 radius + 1 products per sample and axis); the path whose cost
// does not grow with sigma comes next.
#pragma once

#include <vector>

#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

class GaussCpu {
 public:
  // Blurs `in` into `out` as gauss_reference() does. Each thread's rows between the passes
  // and the weights are kept for the next call: a stream of frames allocates once.
  void run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool);

 private:
  GaussParams weights_for_;  // the parameters wx_ and wy_ were computed for
  std::vector<float> wx_, wy_;
};

}  // namespace starsift
