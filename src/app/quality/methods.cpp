// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/methods.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "app/quality/baselines.hpp"
#include "pipeline/whiten/resample.hpp"
#include "pipeline/whiten/whiten_stage.hpp"

namespace starsift::quality {

namespace {

// Frames with the pixels of a bad-pixel map replaced by the median of their good neighbours
// (repair_bad_pixels()), as a system with a dark frame feeds them on; with an empty map, frames
// pass as they come.
class BadPixelRepair {
 public:
  BadPixelRepair(const std::vector<std::size_t>& bad_pixels, const FrameShape& shape)
      : bad_pixels_(bad_pixels) {
    if (bad_pixels_.empty()) return;
    bad_mask_.assign(static_cast<std::size_t>(shape.width) * shape.height, 0);
    for (const std::size_t p : bad_pixels_) bad_mask_[p] = 1;
    repaired_.resize(bad_mask_.size());
  }

  // `frame` repaired (a view of this object's copy), or `frame` itself with no map.
  ConstImageView apply(ConstImageView frame) {
    if (bad_pixels_.empty()) return frame;
    const int w = frame.width;
    for (int y = 0; y < frame.height; ++y) {
      std::memcpy(repaired_.data() + static_cast<std::size_t>(y) * w, frame.row(y),
                  frame.row_bytes());
    }
    repair_bad_pixels(repaired_, w, frame.height, bad_pixels_, bad_mask_);
    return {reinterpret_cast<const std::byte*>(repaired_.data()), w, frame.height,
            static_cast<std::ptrdiff_t>(w * sizeof(std::uint16_t)), PixelFormat::Gray16};
  }

  // The repaired frame of the last apply() as float ADU into `adu`, or `adu_as_came` with no
  // map.
  const Plane& adu(const Plane& adu_as_came, Plane& adu) const {
    if (bad_pixels_.empty()) return adu_as_came;
    for (std::size_t i = 0; i < repaired_.size(); ++i) adu.data()[i] = repaired_[i];
    return adu;
  }

 private:
  std::vector<std::size_t> bad_pixels_;
  std::vector<unsigned char> bad_mask_;
  std::vector<std::uint16_t> repaired_;
};

// Whitening through the shipped stage (make_whiten_stage(), on the configured backend), twice
// in step: one stage writes the residual rho (output: float), the other sigma_{t-1} (output:
// sigma), the noise each pixel had before this frame, as the filter's own snr output divides
// by it. Read after the frame, sigma would already hold this frame's residual, so a faint
// mover (below the outlier test) would raise the noise it is measured against. The two stages
// see the same frames with the same parameters but the output, which changes no state, so
// they hold the same history, noise and weights.
class WhitenMethod final : public ResidualMethod {
 public:
  WhitenMethod(MethodKind kind, int history, const FrameShape& shape, const BackendChoice& backend,
               const std::vector<std::size_t>& bad_pixels)
      : ResidualMethod(shape.width, shape.height),
        residual_stage_(make_whiten_stage(params_for(kind, history, WhitenOutput::Float), backend)),
        sigma_stage_(make_whiten_stage(params_for(kind, history, WhitenOutput::Sigma), backend)),
        sigma_(shape.width, shape.height),
        variance_(shape.width, shape.height),
        name_(method_name(kind)),
        repair_(
            kind == MethodKind::WhitenResampleRepaired ? bad_pixels : std::vector<std::size_t>{},
            shape) {
    residual_stage_->configure(shape);
    sigma_stage_->configure(shape);
  }

  std::string_view name() const override { return name_; }

  bool process(ConstImageView frame, const Plane&, ThreadPool&) override {
    frame = repair_.apply(frame);
    sigma_stage_->process(frame, sigma_.view());
    residual_stage_->process(frame, residual_.view());
    // The variance the matched filter weighs by: sigma_{t-1}^2 (the stage's noise map
    // rounded once more, by the square root and back).
    const float* sigma = sigma_.data();
    float* variance = variance_.data();
    for (std::size_t i = 0; i < variance_.size(); ++i) variance[i] = sigma[i] * sigma[i];
    return residual_stage_->last_stats().history_used >= 1;
  }

  const Plane* variance() const noexcept override { return &variance_; }
  double noise_floor() const override { return residual_stage_->last_stats().noise_floor; }
  bool shift_estimate(double& x, double& y) const override {
    if (residual_stage_->params().shift != WhitenShift::Resample) return false;
    const WhitenStats stats = residual_stage_->last_stats();
    x = stats.shift_x;
    y = stats.shift_y;
    return true;
  }

 private:
  static WhitenParams params_for(MethodKind kind, int history, WhitenOutput output) {
    WhitenParams p;  // the filter's defaults: gamma, noise 4N, despike, ...
    p.history = history;
    p.output = output;  // GRAY32F: the residual rho itself, or sigma_{t-1}
    if (kind == MethodKind::WhitenDefaults) return p;
    // The other methods pin what they measure, whatever the defaults become.
    p.fit = WhitenFit::Current;
    p.reject = WhitenReject::Mask;
    p.history_format = WhitenHistoryFormat::Float;
    p.shift = kind == MethodKind::WhitenNone ? WhitenShift::None : WhitenShift::Resample;
    if (kind == MethodKind::WhitenResampleObjects ||
        kind == MethodKind::WhitenResampleObjectsHalf) {
      p.reject = WhitenReject::Objects;
    }
    if (kind == MethodKind::WhitenResampleHalf || kind == MethodKind::WhitenResampleObjectsHalf) {
      p.history_format = WhitenHistoryFormat::Half;
    }
    return p;
  }

  std::unique_ptr<WhitenStage> residual_stage_;
  std::unique_ptr<WhitenStage> sigma_stage_;
  Plane sigma_;
  Plane variance_;
  std::string_view name_;
  BadPixelRepair repair_;  // whiten-resample-bpm's; the others' pass frames as they come
};

class DifferenceMethod final : public ResidualMethod {
 public:
  explicit DifferenceMethod(const FrameShape& shape)
      : ResidualMethod(shape.width, shape.height), diff_(shape.width, shape.height) {}
  std::string_view name() const override { return method_name(MethodKind::Difference); }
  bool process(ConstImageView, const Plane& frame_adu, ThreadPool&) override {
    return diff_.process(frame_adu, residual_);
  }
  double noise_floor() const override { return difference_noise_floor(); }

 private:
  FrameDifference diff_;
};

class MedianMethod final : public ResidualMethod {
 public:
  MedianMethod(int history, const FrameShape& shape)
      : ResidualMethod(shape.width, shape.height),
        median_(history, shape.width, shape.height),
        floor_(median_noise_floor(history)) {}
  std::string_view name() const override { return method_name(MethodKind::RunningMedian); }
  bool process(ConstImageView, const Plane& frame_adu, ThreadPool& pool) override {
    return median_.process(frame_adu, residual_, pool);
  }
  double noise_floor() const override { return floor_; }

 private:
  RunningMedian median_;
  double floor_;
};

// The shift the shipped whitening stage measures for each frame against the first frame's
// grid (its defaults: shift: resample, the same phase correlation, far-peak rules and
// re-referencing), so that a baseline is aligned exactly as whitening is.
class ShiftMeter {
 public:
  ShiftMeter(int history, const FrameShape& shape, const BackendChoice& backend)
      : stage_(make_whiten_stage(params_for(history), backend)),
        scratch_(shape.width, shape.height) {
    stage_->configure(shape);
  }
  // s_t: the frame's content sits at q + s_t where the first frame's had it at q.
  void measure(ConstImageView frame, double& x, double& y) {
    stage_->process(frame, scratch_.view());
    const WhitenStats stats = stage_->last_stats();
    x = stats.shift_x;
    y = stats.shift_y;
  }

 private:
  static WhitenParams params_for(int history) {
    WhitenParams p;
    p.history = history;
    p.shift = WhitenShift::Resample;
    p.output = WhitenOutput::Float;
    return p;
  }
  std::unique_ptr<WhitenStage> stage_;
  Plane scratch_;  // the stage's residual, unused
};

// residual_t = F_t - F_{t-1} moved onto frame t's pixels: P(q) = F_{t-1}(q + s_{t-1} - s_t),
// bicubic (the resample whitening uses). Only the previous frame is interpolated; the mover in
// frame t keeps its shape.
class AlignedDifferenceMethod final : public ResidualMethod {
 public:
  AlignedDifferenceMethod(int history, const FrameShape& shape, const BackendChoice& backend,
                          const std::vector<std::size_t>& bad_pixels)
      : ResidualMethod(shape.width, shape.height),
        repair_(bad_pixels, shape),
        repaired_adu_(shape.width, shape.height),
        meter_(history, shape, backend),
        previous_(shape.width, shape.height),
        moved_(shape.width, shape.height) {}
  std::string_view name() const override { return method_name(MethodKind::DifferenceAligned); }
  bool process(ConstImageView frame_as_came, const Plane& adu_as_came, ThreadPool& pool) override {
    const ConstImageView frame = repair_.apply(frame_as_came);
    const Plane& frame_adu = repair_.adu(adu_as_came, repaired_adu_);
    double sx = 0.0, sy = 0.0;
    meter_.measure(frame, sx, sy);
    const bool ready = have_previous_;
    if (ready) {
      const ShiftKernel k = make_shift_kernel(previous_x_ - sx, previous_y_ - sy);
      resample_shifted(std::as_const(previous_).view(), moved_.view(), k, pool);
      gain_ = interpolation_variance_gain(k);
      const float* f = frame_adu.data();
      const float* m = moved_.data();
      float* r = residual_.data();
      for (std::size_t i = 0; i < residual_.size(); ++i) r[i] = f[i] - m[i];
    }
    std::memcpy(previous_.data(), frame_adu.data(), frame_adu.size() * sizeof(float));
    previous_x_ = sx;
    previous_y_ = sy;
    have_previous_ = true;
    return ready;
  }
  // 1 for the frame, the interpolation's gain for the moved one.
  double noise_floor() const override { return std::sqrt(1.0 + gain_); }

 private:
  BadPixelRepair repair_;
  Plane repaired_adu_;
  ShiftMeter meter_;
  Plane previous_;
  Plane moved_;
  double previous_x_ = 0.0, previous_y_ = 0.0;
  double gain_ = 1.0;
  bool have_previous_ = false;
};

// The running median on the first frame's grid: each frame moved there once,
// G_t(q) = F_t(q + s_t); the median of G_{t-1} ... G_{t-n} moved back onto frame t's pixels,
// B(q) = M(q - s_t); residual_t = F_t - B.
class AlignedMedianMethod final : public ResidualMethod {
 public:
  AlignedMedianMethod(int history, const FrameShape& shape, const BackendChoice& backend,
                      const std::vector<std::size_t>& bad_pixels)
      : ResidualMethod(shape.width, shape.height),
        repair_(bad_pixels, shape),
        repaired_adu_(shape.width, shape.height),
        meter_(history, shape, backend),
        median_(history, shape.width, shape.height),
        on_grid_(shape.width, shape.height),
        background_grid_(shape.width, shape.height),
        background_(shape.width, shape.height),
        median_variance_(median_noise_floor(history) * median_noise_floor(history) - 1.0) {}
  std::string_view name() const override { return method_name(MethodKind::RunningMedianAligned); }
  bool process(ConstImageView frame_as_came, const Plane& adu_as_came, ThreadPool& pool) override {
    const ConstImageView frame = repair_.apply(frame_as_came);
    const Plane& frame_adu = repair_.adu(adu_as_came, repaired_adu_);
    double sx = 0.0, sy = 0.0;
    meter_.measure(frame, sx, sy);
    resample_shifted(frame_adu.view(), on_grid_.view(), make_shift_kernel(sx, sy), pool);
    if (!median_.process_background(on_grid_, background_grid_, pool)) return false;
    const ShiftKernel back = make_shift_kernel(-sx, -sy);
    resample_shifted(std::as_const(background_grid_).view(), background_.view(), back, pool);
    gain_ = interpolation_variance_gain(back);
    const float* f = frame_adu.data();
    const float* b = background_.data();
    float* r = residual_.data();
    for (std::size_t i = 0; i < residual_.size(); ++i) r[i] = f[i] - b[i];
    return true;
  }
  // Approximate: the median's variance scaled by the move back, the move onto the grid (which
  // smooths each stored frame before the median) ignored.
  double noise_floor() const override { return std::sqrt(1.0 + median_variance_ * gain_); }

 private:
  BadPixelRepair repair_;
  Plane repaired_adu_;
  ShiftMeter meter_;
  RunningMedian median_;
  Plane on_grid_;
  Plane background_grid_;
  Plane background_;
  double median_variance_;
  double gain_ = 1.0;
};

}  // namespace

std::string_view method_name(MethodKind kind) noexcept {
  switch (kind) {
    case MethodKind::WhitenNone:
      return "whiten-none";
    case MethodKind::WhitenResample:
      return "whiten-resample";
    case MethodKind::WhitenResampleRepaired:
      return "whiten-resample-bpm";
    case MethodKind::WhitenResampleObjects:
      return "whiten-resample-objects";
    case MethodKind::WhitenResampleHalf:
      return "whiten-resample-half";
    case MethodKind::WhitenResampleObjectsHalf:
      return "whiten-resample-objects-half";
    case MethodKind::WhitenDefaults:
      return "whiten-defaults";
    case MethodKind::Difference:
      return "difference";
    case MethodKind::RunningMedian:
      return "running-median";
    case MethodKind::DifferenceAligned:
      return "difference-aligned";
    case MethodKind::RunningMedianAligned:
      return "running-median-aligned";
  }
  return "?";
}

std::unique_ptr<ResidualMethod> make_method(MethodKind kind, int history, const FrameShape& shape,
                                            const BackendChoice& backend,
                                            const std::vector<std::size_t>& bad_pixels) {
  switch (kind) {
    case MethodKind::WhitenNone:
    case MethodKind::WhitenResample:
    case MethodKind::WhitenResampleRepaired:
    case MethodKind::WhitenResampleObjects:
    case MethodKind::WhitenResampleHalf:
    case MethodKind::WhitenResampleObjectsHalf:
    case MethodKind::WhitenDefaults:
      return std::make_unique<WhitenMethod>(kind, history, shape, backend, bad_pixels);
    case MethodKind::Difference:
      return std::make_unique<DifferenceMethod>(shape);
    case MethodKind::RunningMedian:
      return std::make_unique<MedianMethod>(history, shape);
    case MethodKind::DifferenceAligned:
      return std::make_unique<AlignedDifferenceMethod>(history, shape, backend, bad_pixels);
    case MethodKind::RunningMedianAligned:
      return std::make_unique<AlignedMedianMethod>(history, shape, backend, bad_pixels);
  }
  return nullptr;
}

void repair_bad_pixels(std::vector<std::uint16_t>& frame, int width, int height,
                       const std::vector<std::size_t>& bad_pixels,
                       const std::vector<unsigned char>& bad_mask) {
  std::uint16_t values[8];
  for (const std::size_t p : bad_pixels) {
    const int x = static_cast<int>(p % width);
    const int y = static_cast<int>(p / width);
    int n = 0;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int nx = x + dx, ny = y + dy;
        if ((dx == 0 && dy == 0) || nx < 0 || nx >= width || ny < 0 || ny >= height) continue;
        const std::size_t q = static_cast<std::size_t>(ny) * width + nx;
        if (!bad_mask[q]) values[n++] = frame[q];
      }
    }
    if (n == 0) continue;
    // The lower median: an integer sample, as the camera would have given.
    std::nth_element(values, values + (n - 1) / 2, values + n);
    frame[p] = values[(n - 1) / 2];
  }
}

}  // namespace starsift::quality
