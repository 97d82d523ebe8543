// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/sky/sky_noise.hpp"
#include "pipeline/sky/sky_random.hpp"

namespace starsift {

namespace {

// A streak is drawn as point sources at most this many FWHM apart, close enough that the
// sum is smooth along the track (the Gaussian's ripple at a quarter FWHM is below 1e-6).
constexpr double kStreakStepFwhm = 0.25;

// Wraps a coordinate onto the field's period [-0.5, side - 0.5).
double wrap(double v, int side) {
  return v - side * std::floor((v + 0.5) / side);
}

const SkyParams& validated(const SkyParams& params) {
  params.validate();
  return params;
}

}  // namespace

SkyGenerator::SkyGenerator(const SkyParams& params, unsigned threads)
    : params_(validated(params)),
      psf_(params_.psf, params_.fwhm, params_.moffat_beta),
      background_(params_),
      pointing_(params_),
      tracks_(params_, background_, psf_.peak_fraction()),
      scene_(static_cast<std::size_t>(params_.width) * static_cast<std::size_t>(params_.height)),
      mover_images_(static_cast<std::size_t>(params_.movers)),
      pool_(threads) {
  draw_stars();
}

// Uniform positions; fluxes from the power law N(>F) ~ F^-slope truncated to
// [flux_min, flux_max], by inverting its cumulative distribution.
void SkyGenerator::draw_stars() {
  const double megapixels = static_cast<double>(params_.width) * params_.height / 1.0e6;
  const auto count = static_cast<std::size_t>(std::llround(params_.star_density * megapixels));
  const double a = params_.star_flux_slope;
  const double low = std::pow(params_.star_flux_min, -a);
  const double high = std::pow(params_.star_flux_max, -a);
  sky::SkyRng rng = sky::SkyRng::stream(params_.seed, sky::Stream::Stars);
  stars_.reserve(count);
  star_radius_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    StarTruth star;
    star.x = rng.uniform() * params_.width - 0.5;
    star.y = rng.uniform() * params_.height - 0.5;
    star.flux = std::clamp(std::pow(low - rng.uniform() * (low - high), -1.0 / a),
                           params_.star_flux_min, params_.star_flux_max);
    stars_.push_back(star);
    star_radius_.push_back(psf_.stamp_radius(star.flux));
  }
}

double SkyGenerator::background_sigma(double x, double y) const noexcept {
  return std::sqrt(background_.sky_at(x, y) + params_.read_noise * params_.read_noise);
}

void SkyGenerator::compute_truth(std::uint64_t frame_index, SkyTruth& truth) {
  truth.frame = frame_index;
  shift_ = pointing_.shift(frame_index);
  truth.shift_x = shift_.x;
  truth.shift_y = shift_.y;
  truth.movers.resize(mover_images_.size());
  const double k = static_cast<double>(frame_index);
  for (int slot = 0; slot < tracks_.count(); ++slot) {
    const sky::MoverTrack& track = tracks_.at(slot, frame_index);
    // Born at (x0, y0) before jitter; since then its own motion and the field's drift; and
    // like everything on the sky, this frame's jitter (shift minus drift).
    const double age = static_cast<double>(frame_index - track.birth);
    MoverTruth& m = truth.movers[static_cast<std::size_t>(slot)];
    m.id = track.id;
    m.first_frame = track.birth;
    m.x = track.x0 + track.vx * age + (shift_.x - params_.drift_x * (k - age));
    m.y = track.y0 + track.vy * age + (shift_.y - params_.drift_y * (k - age));
    m.vx = track.vx;
    m.vy = track.vy;
    m.flux = track.flux;
    m.noise_sigma_e = background_sigma(m.x, m.y);
    m.noise_sigma_adu = m.noise_sigma_e / params_.gain;
    m.peak_snr = m.noise_sigma_e > 0.0 ? m.flux * psf_.peak_fraction() / m.noise_sigma_e : 0.0;

    MoverImage& image = mover_images_[static_cast<std::size_t>(slot)];
    image.x = m.x;
    image.y = m.y;
    image.vx = m.vx;
    image.vy = m.vy;
    image.flux = m.flux;
    const double length = std::hypot(m.vx, m.vy);
    image.steps =
        std::max(1, static_cast<int>(std::ceil(length / (kStreakStepFwhm * psf_.fwhm()))));
    image.radius = psf_.stamp_radius(m.flux);
  }
}

void SkyGenerator::check_view(ImageView out, bool expected) const {
  const bool format_ok = expected ? out.format == PixelFormat::Gray32F : sky_supports(out.format);
  if (!format_ok || out.width != params_.width || out.height != params_.height ||
      out.data == nullptr || out.stride < static_cast<std::ptrdiff_t>(out.row_bytes())) {
    throw Error("sky: output frame " + std::to_string(out.width) + "x" +
                    std::to_string(out.height) + " " + std::string(to_string(out.format)) +
                    " does not match the sky",
                std::to_string(params_.width) + "x" + std::to_string(params_.height) + " in " +
                    (expected ? "GRAY32F" : "GRAY8, GRAY16_LE or GRAY32F"));
  }
}

void SkyGenerator::render(std::uint64_t frame_index, ImageView out, SkyTruth& truth) {
  check_view(out, false);
  compute_truth(frame_index, truth);
  frame_ = frame_index;
  out_ = out;
  output_ = Output::Noisy;
  components_ = kSkyAll;
  // Captures one pointer: std::function keeps it without allocating.
  pool_.parallel_for(params_.height, [this](int begin, int end) { render_rows(begin, end); });
}

void SkyGenerator::render_expected(std::uint64_t frame_index, ImageView out, SkyTruth& truth,
                                   unsigned components) {
  check_view(out, true);
  compute_truth(frame_index, truth);
  frame_ = frame_index;
  out_ = out;
  output_ = Output::Expected;
  components_ = components;
  pool_.parallel_for(params_.height, [this](int begin, int end) { render_rows(begin, end); });
}

// One band of rows, start to finish: expected electrons, then noise and conversion. Each
// pixel sums its sources in the same order whatever the band, so bands (threads) do not
// change a single bit.
void SkyGenerator::render_rows(int begin, int end) {
  const sky::Plane plane{scene_.data(), params_.width, params_.height};
  const sky::RowBand band{begin, end};
  for (int y = begin; y < end; ++y) {
    float* row = plane.row(y);
    std::fill(row, row + params_.width, 0.0f);
    if (components_ & kSkyBackground) background_.add_sky(y, row);
    if (components_ & kSkyHotPixels) background_.add_hot_pixels(y, row);
  }
  if (components_ & kSkyStars) add_stars(plane, band);
  if (components_ & kSkyMovers) add_movers(plane, band);
  for (int y = begin; y < end; ++y) {
    if (output_ == Output::Expected) {
      std::memcpy(out_.row(y), plane.row(y),
                  static_cast<std::size_t>(params_.width) * sizeof(float));
    } else {
      write_noisy_row(y, plane.row(y));
    }
  }
}

// The field is periodic with the frame's size, so drift never empties it: a star is drawn
// at its wrapped position and at the copies one period away that reach into the frame.
void SkyGenerator::add_stars(sky::Plane plane, sky::RowBand band) const {
  const int w = params_.width;
  const int h = params_.height;
  for (std::size_t i = 0; i < stars_.size(); ++i) {
    const StarTruth& star = stars_[i];
    const int radius = star_radius_[i];
    const double x = wrap(star.x + shift_.x, w);
    const double y = wrap(star.y + shift_.y, h);
    for (const int dy : {-h, 0, h}) {
      const double cy = y + dy;
      if (cy + radius < band.begin || cy - radius > band.end - 1) continue;
      for (const int dx : {-w, 0, w}) {
        const double cx = x + dx;
        if (cx + radius < 0 || cx - radius > w - 1) continue;
        psf_.add(plane, band, cx, cy, star.flux, radius);
      }
    }
  }
}

// A mover exposes its PSF all along its path from (x, y) - v/2 to (x, y) + v/2: equal point
// sources at the midpoints of `steps` equal pieces of the path.
void SkyGenerator::add_movers(sky::Plane plane, sky::RowBand band) const {
  for (const MoverImage& m : mover_images_) {
    const double reach = 0.5 * std::fabs(m.vy) + m.radius;
    if (m.y + reach < band.begin || m.y - reach > band.end - 1) continue;
    const double piece_flux = m.flux / m.steps;
    for (int i = 0; i < m.steps; ++i) {
      const double t = (i + 0.5) / m.steps - 0.5;
      psf_.add(plane, band, m.x + t * m.vx, m.y + t * m.vy, piece_flux, m.radius);
    }
  }
}

// Photon noise, read noise, then ADU. Each row draws from its own stream (seed, frame, row).
void SkyGenerator::write_noisy_row(int y, const float* expected) {
  sky::SkyRng rng = sky::SkyRng::stream(params_.seed, sky::Stream::NoiseRow, frame_,
                                        static_cast<std::uint64_t>(y));
  const double read_noise = params_.read_noise;
  const auto electrons = [&](int x) {
    double e = sky::poisson(expected[x], rng);
    if (read_noise > 0.0) e += read_noise * rng.normal();
    return e;
  };
  const int w = params_.width;
  if (out_.format == PixelFormat::Gray32F) {
    float* out = out_.row_as<float>(y);
    for (int x = 0; x < w; ++x) out[x] = static_cast<float>(electrons(x));
    return;
  }
  const double inverse_gain = 1.0 / params_.gain;
  const double bias = params_.bias;
  const double max_adu = params_.max_adu(out_.format);
  const auto adu = [&](int x) {
    return std::clamp(std::floor(electrons(x) * inverse_gain + bias + 0.5), 0.0, max_adu);
  };
  if (out_.format == PixelFormat::Gray8) {
    std::uint8_t* out = out_.row_as<std::uint8_t>(y);
    for (int x = 0; x < w; ++x) out[x] = static_cast<std::uint8_t>(adu(x));
  } else {
    std::uint16_t* out = out_.row_as<std::uint16_t>(y);
    for (int x = 0; x < w; ++x) out[x] = static_cast<std::uint16_t>(adu(x));
  }
}

}  // namespace starsift
