#include "app/quality/methods.hpp"

#include <algorithm>
#include <cstring>

#include "app/quality/baselines.hpp"
#include "pipeline/whiten/whiten_stage.hpp"

namespace starsift::quality {

namespace {

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
        name_(method_name(kind)) {
    residual_stage_->configure(shape);
    sigma_stage_->configure(shape);
    if (kind == MethodKind::WhitenResampleRepaired) {
      bad_pixels_ = bad_pixels;
      bad_mask_.assign(static_cast<std::size_t>(shape.width) * shape.height, 0);
      for (const std::size_t p : bad_pixels_) bad_mask_[p] = 1;
      repaired_.resize(bad_mask_.size());
    }
  }

  std::string_view name() const override { return name_; }

  bool process(ConstImageView frame, const Plane&, ThreadPool&) override {
    if (!bad_mask_.empty()) frame = repaired(frame);
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
  // A copy of `frame` with the bad pixels repaired.
  ConstImageView repaired(ConstImageView frame) {
    const int w = frame.width;
    for (int y = 0; y < frame.height; ++y) {
      std::memcpy(repaired_.data() + static_cast<std::size_t>(y) * w, frame.row(y),
                  frame.row_bytes());
    }
    repair_bad_pixels(repaired_, w, frame.height, bad_pixels_, bad_mask_);
    return {reinterpret_cast<const std::byte*>(repaired_.data()), w, frame.height,
            static_cast<std::ptrdiff_t>(w * sizeof(std::uint16_t)), PixelFormat::Gray16};
  }

  static WhitenParams params_for(MethodKind kind, int history, WhitenOutput output) {
    WhitenParams p;  // the filter's defaults: gamma, noise 2N, despike, ...
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
  std::vector<std::size_t> bad_pixels_;
  std::vector<unsigned char> bad_mask_;  // empty: frames go in as they come
  std::vector<std::uint16_t> repaired_;
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
