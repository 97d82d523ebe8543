// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "app/rng.hpp"
#include "pipeline/error.hpp"

namespace starsift::quality {

namespace {

// The median of `v` (reordered): for an even count the mean of the two middle values.
float median_in_place(float* v, int n) {
  float* mid = v + n / 2;
  std::nth_element(v, mid, v + n);
  if (n % 2 == 1) return *mid;
  return 0.5f * (*mid + *std::max_element(v, mid));
}

}  // namespace

FrameDifference::FrameDifference(int width, int height) : previous_(width, height) {}

bool FrameDifference::process(const Plane& frame, Plane& residual) {
  const bool ready = have_previous_;
  if (ready) {
    const float* f = frame.data();
    const float* p = previous_.data();
    float* r = residual.data();
    for (std::size_t i = 0; i < frame.size(); ++i) r[i] = f[i] - p[i];
  }
  std::memcpy(previous_.data(), frame.data(), frame.size() * sizeof(float));
  have_previous_ = true;
  return ready;
}

RunningMedian::RunningMedian(int frames, int width, int height) {
  if (frames < 1 || frames > 256) throw Error("running median: frames must be 1..256");
  ring_.assign(static_cast<std::size_t>(frames), Plane(width, height));
  sorted_.assign(static_cast<std::size_t>(frames) * width * height, 0.0f);
}

bool RunningMedian::process(const Plane& frame, Plane& residual, ThreadPool& pool) {
  return update(frame, residual, true, pool);
}

bool RunningMedian::process_background(const Plane& frame, Plane& background, ThreadPool& pool) {
  return update(frame, background, false, pool);
}

bool RunningMedian::update(const Plane& frame, Plane& out, bool residual, ThreadPool& pool) {
  const int n = frames();
  const bool ready = stored_ == n;
  const int w = frame.width();
  const Plane& oldest = ring_[static_cast<std::size_t>(next_)];
  pool.parallel_for(frame.height(), [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const float* f = frame.row(y);
      const float* old = oldest.row(y);
      float* r = out.row(y);
      for (int x = 0; x < w; ++x) {
        float* v = sorted_.data() + (static_cast<std::size_t>(y) * w + x) * n;
        if (ready) {
          const float median = n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
          r[x] = residual ? f[x] - median : median;
        }
        // The new value takes the oldest one's place (or the next free one), then moves down
        // or up until the values are in order again.
        int i = stored_;
        if (ready) i = static_cast<int>(std::find(v, v + n, old[x]) - v);
        v[i] = f[x];
        const int count = ready ? n : stored_ + 1;
        while (i > 0 && v[i - 1] > v[i]) {
          std::swap(v[i - 1], v[i]);
          --i;
        }
        while (i + 1 < count && v[i + 1] < v[i]) {
          std::swap(v[i + 1], v[i]);
          ++i;
        }
      }
    }
  });
  Plane& slot = ring_[static_cast<std::size_t>(next_)];
  std::memcpy(slot.data(), frame.data(), frame.size() * sizeof(float));
  next_ = (next_ + 1) % n;
  stored_ = std::min(stored_ + 1, n);
  return ready;
}

double difference_noise_floor() noexcept {
  return std::sqrt(2.0);
}

double interpolation_variance_gain(const ShiftKernel& kernel) noexcept {
  double gx = 0.0, gy = 0.0;
  for (int i = 0; i < 4; ++i) {
    gx += static_cast<double>(kernel.wx[i]) * kernel.wx[i];
    gy += static_cast<double>(kernel.wy[i]) * kernel.wy[i];
  }
  return gx * gy;
}

double median_noise_floor(int frames) {
  constexpr int kTrials = 50000;
  app::Rng rng(0x6d656469616eull);
  std::vector<float> v(static_cast<std::size_t>(frames));
  double sum = 0.0, sum2 = 0.0;
  for (int t = 0; t < kTrials; ++t) {
    for (float& x : v) x = static_cast<float>(rng.normal());
    const double m = median_in_place(v.data(), frames);
    sum += m;
    sum2 += m * m;
  }
  const double mean = sum / kTrials;
  return std::sqrt(1.0 + (sum2 / kTrials - mean * mean));
}

}  // namespace starsift::quality
