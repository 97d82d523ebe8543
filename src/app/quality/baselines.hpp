// SPDX-License-Identifier: LGPL-2.1-or-later
// The simple background subtractions whitening is compared with. They are yardsticks, not
// product filters: written to be obviously right, not fast.
#pragma once

#include <vector>

#include "pipeline/plane.hpp"
#include "pipeline/thread_pool.hpp"
#include "pipeline/whiten/resample.hpp"

namespace starsift::quality {

// residual_t = F_t - F_{t-1}.
class FrameDifference {
 public:
  FrameDifference(int width, int height);
  // Writes the residual and returns true from the second frame on; then keeps `frame`.
  bool process(const Plane& frame, Plane& residual);

 private:
  Plane previous_;
  bool have_previous_ = false;
};

// residual_t = F_t - median(F_{t-1}, ..., F_{t-n}) per pixel (for even n the mean of the two
// middle values). Each pixel keeps its last n values sorted: a new frame replaces the oldest
// value and moves it to its place, n steps at most (a full sort per pixel and frame cost
// five times more).
class RunningMedian {
 public:
  RunningMedian(int frames, int width, int height);
  int frames() const noexcept { return static_cast<int>(ring_.size()); }
  // Writes the residual and returns true once n frames are stored; then stores `frame` over
  // the oldest.
  bool process(const Plane& frame, Plane& residual, ThreadPool& pool);
  // The same, writing the median itself (the background) instead of the residual.
  bool process_background(const Plane& frame, Plane& background, ThreadPool& pool);

 private:
  bool update(const Plane& frame, Plane& out, bool residual, ThreadPool& pool);

  std::vector<Plane> ring_;    // the last n frames, oldest at next_ once full
  std::vector<float> sorted_;  // per pixel, its stored values in order (n floats per pixel)
  int stored_ = 0;
  int next_ = 0;
};

// The residual noise of each baseline over the frame noise, for independent frames of equal
// Gaussian noise: sqrt(2) for the difference; sqrt(1 + Var(median of n unit normals)) for the
// running median, by a fixed-seed Monte Carlo of 50 000 medians (1.036 for n = 20; the
// large-n formula sqrt(1 + pi / 2n) gives 1.038).
double difference_noise_floor() noexcept;
double median_noise_floor(int frames);

// The variance gain of a shift's bicubic interpolation on independent noise: sum of the
// squared tap weights (1 for a whole-pixel shift, 0.64 for half a pixel on one axis, 0.41 on both).
double interpolation_variance_gain(const ShiftKernel& kernel) noexcept;

}  // namespace starsift::quality
