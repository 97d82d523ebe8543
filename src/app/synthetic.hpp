// SPDX-License-Identifier: LGPL-2.1-or-later
// A synthetic star field with known truth: the clean sky and noisy frames of it, seeded and
// deterministic (the same seed gives the same pixels on every machine and thread count).
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::app {

// What the sky and the sensor look like. Units are ADU of a 16-bit sensor; coordinates are
// 0-based pixel centres, x the fast axis.
struct SkyParams {
  int width = 1024;
  int height = 1024;
  std::uint64_t seed = 1;

  // Background: sky_level at (0, 0), rising linearly by gradient_x across the width and
  // gradient_y down the height.
  double sky_level = 900.0;
  double gradient_x = 160.0;
  double gradient_y = 90.0;

  // Stars: Gaussian PSFs at uniform positions, peak amplitudes from a power law
  // N(> A) ~ A^-flux_slope above min_peak. star_count 0 means stars_per_megapixel * area.
  int star_count = 0;
  double stars_per_megapixel = 300.0;
  double min_peak = 60.0;
  double flux_slope = 1.1;
  double psf_sigma = 1.4;  // pixels (FWHM 3.3 px)

  // Sensor: Gaussian read noise plus photon noise (Gaussian approximation, variance
  // signal / gain), then impulses: salt-and-pepper pixels drawn anew each frame (set to 0
  // or full scale) and hot pixels at fixed positions (a high value in every frame).
  double read_noise = 12.0;   // ADU rms
  double gain = 1.5;          // e-/ADU
  double salt_pepper = 1e-3;  // fraction of pixels per frame
  double hot_pixels = 3e-4;   // fraction of pixels, same positions every frame
  double hot_min = 8000.0;    // hot pixel level range (ADU)
  double hot_max = 65535.0;

  int star_count_for_area() const;
};

// The sky without noise (float, ADU), the per-pixel noise sigma, and the hot-pixel map:
// everything that stays the same from frame to frame.
class SyntheticSky {
 public:
  explicit SyntheticSky(const SkyParams& params);

  const SkyParams& params() const noexcept { return params_; }
  int star_count() const noexcept { return star_count_; }

  // The clean sky rounded to GRAY16 (what a noiseless sensor would read).
  void render_clean(ImageView out) const;

  // Frame `index` of the sequence: clean sky + read and photon noise + impulses, GRAY16.
  // Rows are generated in parallel on `pool`; each row has its own random stream, so the
  // result does not depend on the number of threads.
  void render_noisy(int index, ImageView out, ThreadPool& pool) const;

  // Gaussian noise sigma of pixel (x, y) in ADU: the yardstick for "impulse" pixels.
  float noise_sigma(int x, int y) const {
    return sigma_[static_cast<std::size_t>(y) * params_.width + x];
  }

 private:
  SkyParams params_;
  int star_count_ = 0;
  std::vector<float> clean_;        // width * height, ADU
  std::vector<float> sigma_;        // width * height, ADU
  std::vector<std::uint16_t> hot_;  // width * height, 0 = not a hot pixel
};

}  // namespace starsift::app
