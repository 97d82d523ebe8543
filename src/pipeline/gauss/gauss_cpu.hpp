// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU backend's Gaussian blur: the reference's sums, in the reference's order (so its
// results are the reference's, bit for bit), computed on rows converted to float and padded
// with the border once, a block of outputs held in vector registers across every tap
// (gauss_cpu.cpp says how). Its cost grows with the radius (2 radius + 1 products per sample
// and axis); the recursion (gauss_iir.hpp) is the path whose cost does not.
#pragma once

#include <string_view>
#include <vector>

#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// Which vectors GaussCpu computes with. Best: the widest this CPU has (on x86-64 AVX-512F,
// else AVX2, else the baseline); Avx2: AVX2 where the CPU has it, else the baseline;
// Baseline: the target's baseline (SSE2 on x86-64, NEON on aarch64) always. All give the
// same results, the reference's (tests compare each with it).
enum class GaussCpuIsa { Best, Avx2, Baseline };

// The instruction set `isa` resolves to on this CPU: "avx512f", "avx2" or "baseline".
std::string_view gauss_cpu_isa_name(GaussCpuIsa isa) noexcept;

class GaussCpu {
 public:
  // Blurs `in` into `out` as gauss_reference() does. Each thread's rows between the passes
  // and the weights are kept for the next call: a stream of frames allocates once.
  void run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool,
           GaussCpuIsa isa = GaussCpuIsa::Best);

 private:
  GaussParams weights_for_;  // the parameters wx_ and wy_ were computed for
  std::vector<float> wx_, wy_;
};

}  // namespace starsift
