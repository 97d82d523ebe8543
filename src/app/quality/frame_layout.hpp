// SPDX-License-Identifier: LGPL-2.1-or-later
// What is where in one frame of the synthetic sky, from its truth: the stars at this frame's
// shift, the hot pixels, the movers, and how far each one's light (and its residual after a
// background subtraction that looks back `history` frames) can reach. From it: the quiet
// pixels the residual noise is measured on, and where a false alarm lies.
#pragma once

#include <deque>
#include <string_view>
#include <vector>

#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/sky/sky_generator.hpp"

namespace starsift::quality {

// Where a false alarm lies, nearest first in this order.
enum class Place : unsigned char {
  SaturatedStar,  // within reach (below) of a star whose peak pixel saturates
  Star,           // within reach of another star that puts >= 0.5 sigma on some pixel
  HotPixel,       // within 3 px (plus the field's recent motion) of a hot pixel
  Mover,          // near a mover's path this frame or the last, outside its hit zone
  Clear,          // none of these: noise
};
inline constexpr int kPlaces = 5;
std::string_view to_string(Place place) noexcept;

struct StarSpot {
  double x = 0.0;  // this frame's position (a copy one period away when it reaches in)
  double y = 0.0;
  double flux = 0.0;       // e-
  double peak_snr = 0.0;   // flux * PSF peak fraction / background sigma
  double reach = 0.0;      // px within which it puts >= 0.05 sigma on a pixel
  double halo = 0.0;       // px within which it puts >= 0.5 sigma on a pixel
  bool saturated = false;  // its peak pixel (with the sky) reaches the sensor's top ADU
};

class FrameLayout {
 public:
  // `kernel`: the sky's PSF (psf_kernel.hpp); `history`: how many frames back a method looks;
  // stars of nominal peak SNR >= `mask_snr` make the bright-star mask.
  FrameLayout(const SkyGenerator& sky, const PsfKernel& kernel, int history, double mask_snr);

  // Every frame in order, warm-up included: the frame's shift joins the recent ones.
  void advance(const SkyTruth& truth);
  // Lays out the frame last advanced: stars, quiet pixels.
  void lay_out(const SkyTruth& truth);

  // The largest move of the field between this frame and any of the last `history`, px: a
  // residual of a source can appear that far from where it is now.
  double motion() const noexcept { return motion_; }
  const std::vector<StarSpot>& stars() const noexcept { return stars_; }
  // 1 where no star, hot pixel or mover reaches (this frame or the history): pure noise.
  const std::vector<unsigned char>& quiet() const noexcept { return quiet_; }
  // 1 within the halo (plus the recent motion and 1 px) of a star of peak SNR >= mask_snr:
  // where a detector with a catalogue of bright stars would not look.
  const std::vector<unsigned char>& star_mask() const noexcept { return star_mask_; }
  // The background noise per pixel (sky and read noise), ADU.
  const Plane& noise_sigma() const noexcept { return noise_sigma_; }
  Place classify(double x, double y) const noexcept;
  // Distance from (x, y) to the nearest mover's path over this frame and the last (+inf
  // without movers).
  double mover_distance(double x, double y) const noexcept;

 private:
  static void paint_disc(std::vector<unsigned char>& mask, int width, int height, double cx,
                         double cy, double radius, unsigned char value);

  const SkyGenerator& sky_;
  int width_, height_, history_;
  double fwhm_;
  double peak_fraction_;
  double centre_sigma_e_;
  double mask_snr_;
  double saturation_e_;               // electrons at which a pixel reads the top ADU
  std::vector<double> reach_, halo_;  // per star of sky_.stars()
  std::deque<std::pair<double, double>> shifts_;
  double motion_ = 0.0;
  std::vector<StarSpot> stars_;
  std::vector<MoverTruth> movers_;
  std::vector<unsigned char> quiet_;
  std::vector<unsigned char> star_mask_;
  Plane noise_sigma_;
};

}  // namespace starsift::quality
