// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/cell_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "app/quality/difference_export.hpp"
#include "app/quality/matching.hpp"
#include "app/quality/methods.hpp"
#include "app/quality/statistics.hpp"
#include "app/rng.hpp"
#include "pipeline/detect/matched_filter.hpp"
#include "pipeline/detect/peaks.hpp"
#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"

namespace starsift::quality {

namespace {

constexpr int kNullSpots = 32;  // quiet places per cell for the leakage's yardstick
constexpr double kLeakageRadiusFwhm = 2.0;
constexpr int kSigmaSubsample = 2;  // the SNR image's sigma from every 2nd row and column

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int nearest(double v) {
  return static_cast<int>(std::floor(v + 0.5));
}

struct Spot {
  double x = 0.0, y = 0.0;
};

// The largest |residual| / sigma within `radius` of (cx, cy); the disc must lie in the frame.
float peak_abs_ratio(const Plane& residual, const Plane& sigma, double cx, double cy,
                     double radius) {
  float best = 0.0f;
  const double r2 = radius * radius;
  for (int y = nearest(cy - radius); y <= nearest(cy + radius); ++y) {
    for (int x = nearest(cx - radius); x <= nearest(cx + radius); ++x) {
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) > r2) continue;
      best = std::max(best, std::fabs(residual.at(x, y)) / sigma.at(x, y));
    }
  }
  return best;
}

bool disc_is_quiet(const std::vector<unsigned char>& quiet, int width, double cx, double cy,
                   double radius) {
  const double r2 = radius * radius;
  for (int y = nearest(cy - radius); y <= nearest(cy + radius); ++y) {
    for (int x = nearest(cx - radius); x <= nearest(cx + radius); ++x) {
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) > r2) continue;
      if (!quiet[static_cast<std::size_t>(y) * width + x]) return false;
    }
  }
  return true;
}

// sum_q K(q) image(p + q) at one pixel p, zero outside the image.
double correlate_at(const Plane& image, const PsfKernel& k, int px, int py) {
  double sum = 0.0;
  for (int dy = -k.radius; dy <= k.radius; ++dy) {
    const int y = py + dy;
    if (y < 0 || y >= image.height()) continue;
    for (int dx = -k.radius; dx <= k.radius; ++dx) {
      const int x = px + dx;
      if (x < 0 || x >= image.width()) continue;
      sum += static_cast<double>(k.at(dx, dy)) * image.at(x, y);
    }
  }
  return sum;
}

// Every sample of the SNR image on a sub-grid of the interior, for its robust sigma.
void interior_samples(const Plane& image, const Interior& in, std::vector<float>& out) {
  out.clear();
  for (int y = in.y0; y < in.y1; y += kSigmaSubsample) {
    const float* row = image.row(y);
    for (int x = in.x0; x < in.x1; x += kSigmaSubsample) out.push_back(row[x]);
  }
}

// A seed for the MAD's dither of one method in one frame.
std::uint64_t frame_seed(const Cell& cell, int frame, std::size_t method) {
  return app::Rng::derive(cell.seed, static_cast<std::uint64_t>(frame), method);
}

// The robust sigma of residual / frame sigma over the quiet interior pixels. Residuals of
// integer frames sit on a grid of 1 or 1/2 ADU: dithered as in dithered_mad_sigma(), each by
// a uniform in ADU, whose variance 1 / (12 sigma^2) is taken off again on average.
double noise_ratio(const Plane& residual, const Plane& sigma,
                   const std::vector<unsigned char>& quiet, const Interior& in, std::uint64_t seed,
                   std::vector<float>& samples) {
  app::Rng dither(seed);
  samples.clear();
  double dither_variance = 0.0;
  for (int y = in.y0; y < in.y1; ++y) {
    for (int x = in.x0; x < in.x1; ++x) {
      if (!quiet[static_cast<std::size_t>(y) * residual.width() + x]) continue;
      const double s = sigma.at(x, y);
      samples.push_back(static_cast<float>((residual.at(x, y) + dither.uniform() - 0.5) / s));
      dither_variance += 1.0 / (12.0 * s * s);
    }
  }
  if (samples.empty()) return 0.0;
  const double spread = mad_sigma(samples);
  return std::sqrt(std::max(0.0, spread * spread - dither_variance / samples.size()));
}

// One cell's run: the sky, the methods and every buffer, made once; then frame by frame.
class CellRun {
 public:
  CellRun(const QualityConfig& config, const SceneSpec& scene, const Cell& cell,
          const PsfKernel& kernel, ThreadPool& pool)
      : config_(config),
        cell_(cell),
        kernel_(kernel),
        pool_(pool),
        params_(sky_params_for(config, scene, cell)),
        sky_(params_),
        w_(params_.width),
        h_(params_.height),
        filter_(kernel, w_, h_),
        layout_(sky_, kernel, config.history, config.bright_star_snr),
        interior_(Interior::of(w_, h_, config.border)),
        leak_radius_(kLeakageRadiusFwhm * params_.fwhm),
        frame_(static_cast<std::size_t>(w_) * h_),
        frame_view_{reinterpret_cast<std::byte*>(frame_.data()), w_, h_,
                    static_cast<std::ptrdiff_t>(w_ * sizeof(std::uint16_t)), PixelFormat::Gray16},
        adu_(w_, h_),
        snr_(w_, h_),
        snr_frame_sigma_(w_, h_),
        mover_e_(w_, h_) {
    if (config.border < kernel.radius + 1) {
      throw Error("quality: the border (" + std::to_string(config.border) +
                      " px) must be wider than the PSF kernel's radius (" +
                      std::to_string(kernel.radius) + " px)",
                  "--border " + std::to_string(kernel.radius + 1) + " or more");
    }
    const FrameShape shape{w_, h_, PixelFormat::Gray16, params_.bit_depth};
    for (const ChainKind kind : config.chains) {
      chains_.push_back(std::make_unique<ShippedChain>(config, kind, shape));
    }
    chain_seconds_.assign(chains_.size(), 0.0);
    for (const MethodKind kind : config.methods) {
      if (kind == MethodKind::DifferenceAligned) export_method_ = methods_.size();
      methods_.push_back(
          make_method(kind, config.history, shape, config.backend, sky_.hot_pixels()));
    }
    if (!config.export_dir.empty()) {
      export_ = std::make_unique<DifferenceExport>(config, scene, cell, w_, h_);
    }
    // Quiet spots for the leakage's yardstick, fixed for the cell.
    app::Rng spot_rng(app::Rng::derive(cell.seed, 0x73706f74));
    const double margin = config.border + leak_radius_ + 1.0;
    for (int i = 0; i < kNullSpots; ++i) {
      spots_.push_back({margin + spot_rng.uniform() * (w_ - 1 - 2 * margin),
                        margin + spot_rng.uniform() * (h_ - 1 - 2 * margin)});
    }
    result_.cell = cell;
    result_.methods.resize(methods_.size());
    result_.stars = static_cast<int>(sky_.stars().size());
    result_.hot_pixels = static_cast<int>(sky_.hot_pixels().size());
  }

  CellResult run(PictureFrame* picture) {
    const int frames = config_.warmup_frames + config_.scored_frames;
    for (int k = 0; k < frames; ++k) {
      sky_.render(static_cast<std::uint64_t>(k), frame_view_, truth_);
      for (std::size_t i = 0; i < frame_.size(); ++i) adu_.data()[i] = frame_[i];
      layout_.advance(truth_);
      const bool scored = k >= config_.warmup_frames;
      for (std::size_t c = 0; c < chains_.size(); ++c) {
        const auto chain_start = Clock::now();
        chains_[c]->whiten(const_view(frame_view_));
        if (scored) chain_seconds_[c] += seconds_since(chain_start);
      }
      for (std::size_t m = 0; m < methods_.size(); ++m) {
        const auto start = Clock::now();
        const bool ready = methods_[m]->process(const_view(frame_view_), adu_, pool_);
        if (!scored) continue;
        result_.methods[m].seconds += seconds_since(start);
        if (!ready) {
          throw Error("quality: " + std::string(methods_[m]->name()) +
                      " has no residual after the warm-up");
        }
      }
      if (!scored) continue;
      lay_out_frame(k);
      for (std::size_t c = 0; c < chains_.size(); ++c) {
        const auto detect_start = Clock::now();
        chains_[c]->detect(k, truth_.movers, streaks_, targets_, interior_, layout_);
        chain_seconds_[c] += seconds_since(detect_start);
      }
      for (std::size_t m = 0; m < methods_.size(); ++m) score_method(m, k);
      if (export_) export_->write_frame(k, methods_[export_method_]->residual(), truth_, layout_);
      if (picture != nullptr && k == config_.warmup_frames) keep_picture(k, *picture);
    }
    result_.area_mpix_frames =
        static_cast<double>(interior_.pixels()) * config_.scored_frames / 1.0e6;
    result_.distinct_movers = static_cast<int>(movers_seen_.size());
    result_.bright_stars = static_cast<int>(bright_seen_.size());
    result_.mean_motion = motion_sum_ / config_.scored_frames;
    std::vector<std::uint64_t> trial_movers;
    for (const MoverTrial& t : result_.trials) trial_movers.push_back(t.mover_id);
    for (std::size_t c = 0; c < chains_.size(); ++c) {
      result_.chains.push_back(chains_[c]->finish(trial_movers));
      result_.chains.back().seconds = chain_seconds_[c];
    }
    return std::move(result_);
  }

 private:
  // What is where in scored frame k: the stars' mask, the movers' streaks, the trials.
  void lay_out_frame(int k) {
    layout_.lay_out(truth_);
    motion_sum_ += layout_.motion();
    long long masked = 0;
    for (int y = interior_.y0; y < interior_.y1; ++y) {
      for (int x = interior_.x0; x < interior_.x1; ++x) {
        masked += layout_.star_mask()[static_cast<std::size_t>(y) * w_ + x];
      }
    }
    result_.masked_mpix_frames += static_cast<double>(masked) / 1.0e6;
    sky_.render_expected(static_cast<std::uint64_t>(k), mover_e_.view(), mover_truth_, kSkyMovers);
    const double filter_norm = std::sqrt(kernel_.norm2);
    const double ideal_norm = std::sqrt(kernel_.full_norm2);
    streaks_.clear();
    targets_.clear();
    for (std::size_t i = 0; i < truth_.movers.size(); ++i) {
      const MoverTruth& mv = truth_.movers[i];
      streaks_.push_back(streak_of(mv));
      if (!interior_.contains(mv.x, mv.y)) continue;
      targets_.push_back(static_cast<int>(i));
      movers_seen_.insert(mv.id);
      MoverTrial t;
      t.mover_id = mv.id;
      t.frame = k;
      t.ideal_snr = static_cast<float>(mv.flux * ideal_norm / mv.noise_sigma_e);
      t.filter_snr =
          static_cast<float>(correlate_at(mover_e_, kernel_, nearest(mv.x), nearest(mv.y)) /
                             (mv.noise_sigma_e * filter_norm));
      result_.trials.push_back(t);
    }
  }

  // The value of `image` at the pixel nearest each trial's truth, appended to `out`.
  void at_targets(const Plane& image, std::vector<float>& out) const {
    for (const int i : targets_) {
      const MoverTruth& mv = truth_.movers[static_cast<std::size_t>(i)];
      out.push_back(image.at(nearest(mv.x), nearest(mv.y)));
    }
  }

  void score_method(std::size_t m, int k) {
    const auto start = Clock::now();
    ResidualMethod& method = *methods_[m];
    MethodSamples& out = result_.methods[m];
    const Plane& residual = method.residual();
    const std::uint64_t seed = frame_seed(cell_, k, m);
    if (const Plane* variance = method.variance()) {
      filter_.snr_with_variance(residual, *variance, snr_, pool_);
      // The same residual with one sigma for the frame, to tell what the variance map does.
      interior_samples(residual, interior_, samples_);
      filter_.snr_with_sigma(residual, dithered_mad_sigma(samples_, seed), snr_frame_sigma_, pool_);
      at_targets(snr_frame_sigma_, out.at_truth_frame_sigma);
      interior_samples(snr_frame_sigma_, interior_, samples_);
      out.snr_sigma_frame_sigma.push_back(static_cast<float>(mad_sigma(samples_)));
    } else {
      interior_samples(residual, interior_, samples_);
      filter_.snr_with_sigma(residual, dithered_mad_sigma(samples_, seed), snr_, pool_);
    }
    detect(out);
    result_.methods[m].seconds += seconds_since(start);

    interior_samples(snr_, interior_, samples_);
    out.snr_sigma.push_back(static_cast<float>(mad_sigma(samples_)));
    out.noise_ratio.push_back(static_cast<float>(
        noise_ratio(residual, layout_.noise_sigma(), layout_.quiet(), interior_, seed, samples_)));
    out.noise_floor.push_back(static_cast<float>(method.noise_floor()));
    double sx = 0.0, sy = 0.0;
    if (method.shift_estimate(sx, sy)) {
      // The truth's shift is against frame 0 too (the walk starts at 0, no drift here).
      out.shift_error.push_back(
          static_cast<float>(std::hypot(sx - truth_.shift_x, sy - truth_.shift_y)));
    }
    sample_leakage(residual, out);
  }

  // The peaks of snr_ sorted onto the trials (their best peak) and the false alarms.
  void detect(MethodSamples& out) {
    peaks_.clear();
    find_peaks(snr_, interior_, config_.peak_floor, peaks_);
    const std::size_t first_trial = out.best.size();
    out.best.resize(first_trial + targets_.size(), -std::numeric_limits<float>::infinity());
    out.best_unmasked.resize(out.best.size(), -std::numeric_limits<float>::infinity());
    at_targets(snr_, out.at_truth);
    for (const Peak& p : peaks_) {
      const bool masked = layout_.star_mask()[static_cast<std::size_t>(p.y) * w_ + p.x];
      const int i = match_point(streaks_, p.x, p.y, config_.hit_radius);
      if (i < 0) {
        out.false_alarms.push_back(p.snr);
        out.false_alarm_places.push_back(layout_.classify(p.x, p.y));
        out.false_alarm_masked.push_back(masked);
        continue;
      }
      const auto target = std::find(targets_.begin(), targets_.end(), i);
      if (target == targets_.end()) continue;  // a mover outside the interior: not scored
      const std::size_t t = first_trial + static_cast<std::size_t>(target - targets_.begin());
      out.best[t] = std::max(out.best[t], p.snr);
      if (!masked) out.best_unmasked[t] = std::max(out.best_unmasked[t], p.snr);
    }
  }

  void sample_leakage(const Plane& residual, MethodSamples& out) {
    const Plane& sigma = layout_.noise_sigma();
    for (const StarSpot& s : layout_.stars()) {
      if (s.peak_snr < config_.bright_star_snr) continue;
      if (!interior_.contains(s.x - leak_radius_, s.y - leak_radius_) ||
          !interior_.contains(s.x + leak_radius_, s.y + leak_radius_)) {
        continue;
      }
      // A mover passing the star would be counted as its leakage: leave that frame out.
      if (layout_.mover_distance(s.x, s.y) < leak_radius_ + 3.0 * params_.fwhm) continue;
      out.leakage.push_back(peak_abs_ratio(residual, sigma, s.x, s.y, leak_radius_));
      bright_seen_.insert({std::llround(s.x - truth_.shift_x), std::llround(s.y - truth_.shift_y)});
    }
    for (const Spot& s : spots_) {
      if (!disc_is_quiet(layout_.quiet(), w_, s.x, s.y, leak_radius_)) continue;
      out.leakage_null.push_back(peak_abs_ratio(residual, sigma, s.x, s.y, leak_radius_));
    }
  }

  void keep_picture(int k, PictureFrame& picture) const {
    picture.frame = k;
    picture.snr = cell_.snr;
    picture.speed = cell_.speed;
    picture.input = frame_;
    picture.residuals.clear();
    picture.names.clear();
    for (const auto& method : methods_) {
      picture.residuals.push_back(method->residual());
      picture.names.push_back(method->name());
    }
    picture.movers = truth_.movers;
    picture.sigma_adu = sky_.background_sigma(0.5 * (w_ - 1), 0.5 * (h_ - 1)) / params_.gain;
  }

  const QualityConfig& config_;
  const Cell cell_;
  const PsfKernel& kernel_;
  ThreadPool& pool_;
  const SkyParams params_;
  SkyGenerator sky_;
  const int w_, h_;
  std::vector<std::unique_ptr<ResidualMethod>> methods_;
  std::vector<std::unique_ptr<ShippedChain>> chains_;
  std::unique_ptr<DifferenceExport> export_;  // config.export_dir's, of methods_[export_method_]
  std::size_t export_method_ = 0;
  MatchedFilter filter_;
  FrameLayout layout_;
  const Interior interior_;
  const double leak_radius_;
  std::vector<Spot> spots_;

  std::vector<std::uint16_t> frame_;
  const ImageView frame_view_;
  Plane adu_, snr_, snr_frame_sigma_, mover_e_;
  SkyTruth truth_, mover_truth_;
  std::vector<Streak> streaks_;
  std::vector<int> targets_;  // indices into truth_.movers scored this frame
  std::vector<Peak> peaks_;
  std::vector<float> samples_;

  CellResult result_;
  std::set<std::uint64_t> movers_seen_;
  std::set<std::pair<long long, long long>> bright_seen_;
  double motion_sum_ = 0.0;
  std::vector<double> chain_seconds_;  // per chain, scored frames
};

}  // namespace

CellResult run_cell(const QualityConfig& config, const SceneSpec& scene, const Cell& cell,
                    const PsfKernel& kernel, ThreadPool& pool, PictureFrame* picture) {
  return CellRun(config, scene, cell, kernel, pool).run(picture);
}

}  // namespace starsift::quality
