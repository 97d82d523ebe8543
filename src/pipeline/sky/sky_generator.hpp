// SPDX-License-Identifier: LGPL-2.1-or-later
// The synthetic sky: seeded star fields with known movers and the truth of every frame.
//
// A frame is the sum, in electrons, of the sky background (with its gradient), the stars
// (shifted by the field's drift and jitter), the movers (streaked along their motion during
// the exposure) and the hot pixels; then photon noise, read noise and conversion to ADU.
// docs/sky.md describes the model and its units.
//
// Frame k depends only on the parameters and k: not on the number of threads, nor on which
// frames were rendered before. All memory is taken in the constructor; rendering a frame
// allocates nothing (a SkyTruth passed in again keeps its capacity).
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/sky/sky_background.hpp"
#include "pipeline/sky/sky_movers.hpp"
#include "pipeline/sky/sky_params.hpp"
#include "pipeline/sky/sky_pointing.hpp"
#include "pipeline/sky/sky_psf.hpp"
#include "pipeline/sky/sky_truth.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// The parts of a frame, for render_expected(): a bit set.
enum SkyComponent : unsigned {
  kSkyBackground = 1u << 0,
  kSkyStars = 1u << 1,
  kSkyMovers = 1u << 2,
  kSkyHotPixels = 1u << 3,
  kSkyAll = kSkyBackground | kSkyStars | kSkyMovers | kSkyHotPixels,
};

class SkyGenerator {
 public:
  // Validates `params` (throws Error naming the parameter) and builds the star field, the
  // hot pixels and the movers' first positions. `threads` as for ThreadPool (0: one per
  // hardware thread); the frames do not depend on it.
  explicit SkyGenerator(const SkyParams& params, unsigned threads = 0);

  const SkyParams& params() const noexcept { return params_; }

  // Frame `frame_index` in `out` (GRAY8, GRAY16 or GRAY32F, the params' width and height,
  // any stride), with its truth. GRAY8/GRAY16 hold ADU = round(e / gain + bias) clipped to
  // 0..max_adu; GRAY32F holds the electrons themselves. Throws Error for another shape.
  void render(std::uint64_t frame_index, ImageView out, SkyTruth& truth);

  // What frame `frame_index` would hold without noise: the expected electrons per pixel of
  // the `components` chosen, in a GRAY32F `out`. The truth is the same as render()'s.
  void render_expected(std::uint64_t frame_index, ImageView out, SkyTruth& truth,
                       unsigned components = kSkyAll);

  // The truth of `frame_index` without rendering it.
  void compute_truth(std::uint64_t frame_index, SkyTruth& truth);

  // The star field as it is in frame 0.
  const std::vector<StarTruth>& stars() const noexcept { return stars_; }
  const sky::Psf& psf() const noexcept { return psf_; }
  // The sky background at (x, y) in e-/px (clamped to the frame; hot pixels not included).
  double sky_at(double x, double y) const noexcept { return background_.sky_at(x, y); }
  // The background noise at (x, y): sqrt(sky + read_noise^2), e-.
  double background_sigma(double x, double y) const noexcept;
  const std::vector<std::size_t>& hot_pixels() const noexcept { return background_.hot_pixels(); }

 private:
  // What one frame needs beyond the parameters; filled before the rows are rendered.
  struct MoverImage {
    double x = 0.0;  // mid-exposure centre on the frame
    double y = 0.0;
    double vx = 0.0;
    double vy = 0.0;
    double flux = 0.0;
    int steps = 1;   // point sources along the streak
    int radius = 0;  // stamp of each
  };
  enum class Output { Noisy, Expected };

  void draw_stars();
  void prepare(std::uint64_t frame_index, SkyTruth& truth);
  void check_view(ImageView out, bool expected) const;
  void render_rows(int begin, int end);
  void add_stars(sky::Plane plane, sky::RowBand band) const;
  void add_movers(sky::Plane plane, sky::RowBand band) const;
  void write_noisy_row(int y, const float* expected);

  SkyParams params_;
  sky::Psf psf_;
  sky::SkyBackground background_;
  sky::Pointing pointing_;
  sky::MoverTracks tracks_;
  std::vector<StarTruth> stars_;
  std::vector<int> star_radius_;  // stamp radius of each star
  std::vector<float> scene_;      // expected electrons of the frame being rendered
  std::vector<MoverImage> mover_images_;
  ThreadPool pool_;

  // The frame being rendered (set by prepare(), read by render_rows()).
  std::uint64_t frame_ = 0;
  sky::Shift shift_;
  ImageView out_;
  Output output_ = Output::Noisy;
  unsigned components_ = kSkyAll;
};

}  // namespace starsift
