// SPDX-License-Identifier: LGPL-2.1-or-later
// The synthetic sky as a model of a real one: noise statistics, the sky gradient, hot pixels,
// PSF flux and peak, movers where and as bright as the truth says, and the field's shift.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/sky/sky_psf.hpp"
#include "sky/sky_test_support.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

constexpr double kFwhmPerSigma = 2.3548200450309493;

// A single mover on an empty sky, with no jitter unless asked.
SkyParams one_mover(double speed, double snr) {
  SkyParams p = flat_sky(160, 128);
  p.movers = 1;
  p.mover_speed_min = p.mover_speed_max = speed;
  p.mover_snr_min = p.mover_snr_max = snr;
  return p;
}

// The movers alone: everything minus everything but the movers, noise-free.
FloatFrame movers_only(SkyGenerator& sky, std::uint64_t k, SkyTruth& truth) {
  FloatFrame all = expected_frame(sky, k, kSkyAll, truth);
  SkyTruth ignored;
  const FloatFrame rest = expected_frame(sky, k, kSkyAll & ~kSkyMovers, ignored);
  for (std::size_t i = 0; i < all.e.size(); ++i) all.e[i] -= rest.e[i];
  return all;
}

bool well_inside(const MoverTruth& m, const SkyParams& p, double margin) {
  return m.x > margin && m.y > margin && m.x < p.width - 1 - margin && m.y < p.height - 1 - margin;
}

}  // namespace

TEST_CASE("sky noise: GRAY16 mean and variance are those of sky, read noise, gain and bias",
          "[sky]") {
  SkyParams p = flat_sky(256, 256);
  p.sky_level = 400.0;
  p.read_noise = 5.0;
  p.gain = 2.0;
  p.bias = 100.0;
  p.bit_depth = 16;
  SkyGenerator sky(p, 2);
  SkyTruth truth;
  for (std::uint64_t k : {0u, 9u}) {
    const Moments m = moments(render_frame(sky, k, PixelFormat::Gray16, truth));
    // mean = sky / gain + bias; variance = (sky + read^2) / gain^2 + 1/12 (ADU rounding).
    // With 65536 pixels the standard errors are 0.04 ADU and 0.6 %.
    CHECK(m.mean == Approx(p.sky_level / p.gain + p.bias).margin(0.2));
    CHECK(m.variance ==
          Approx((p.sky_level + p.read_noise * p.read_noise) / (p.gain * p.gain) + 1.0 / 12.0)
              .epsilon(0.03));
  }
}

TEST_CASE("sky noise: photon noise is Poisson at low, middle and high means", "[sky]") {
  // 3 e- takes the inversion path, 60 e- transformed rejection, 4000 e- the Gaussian
  // approximation. GRAY32F: electrons, no read noise, no rounding.
  for (const double level : {3.0, 60.0, 4000.0}) {
    INFO("sky " << level << " e-");
    SkyParams p = flat_sky(256, 256);
    p.sky_level = level;
    p.read_noise = 0.0;
    SkyGenerator sky(p, 2);
    SkyTruth truth;
    const TestImage frame = render_frame(sky, 1, PixelFormat::Gray32F, truth);
    const Moments m = moments(frame);
    CHECK(m.mean == Approx(level).margin(5.0 * std::sqrt(level / 65536.0)));
    CHECK(m.variance == Approx(level).epsilon(0.03));
    if (level < 1000.0) {
      // Exact Poisson: whole electrons, third central moment = mean (skewness 1/sqrt(mean)).
      double third = 0.0;
      bool whole = true;
      for (int y = 0; y < frame.height; ++y)
        for (int x = 0; x < frame.width; ++x) {
          const double v = sample(frame, x, y);
          whole = whole && v == std::floor(v) && v >= 0.0;
          third += std::pow(v - m.mean, 3.0);
        }
      CHECK(whole);
      CHECK(third / 65536.0 == Approx(level).epsilon(0.15));
    }
  }
}

TEST_CASE("sky: the gradient spans sky_level * (1 -+ gradient / 2) along its angle", "[sky]") {
  SkyParams p = flat_sky(101, 51);
  p.sky_level = 1000.0;
  p.sky_gradient = 0.2;
  SkyTruth truth;
  {
    p.sky_gradient_angle = 0.0;  // left to right
    SkyGenerator sky(p, 1);
    const FloatFrame f = expected_frame(sky, 0, kSkyBackground, truth);
    CHECK(f.at(0, 10) == Approx(900.0).epsilon(1e-6));
    CHECK(f.at(50, 25) == Approx(1000.0).epsilon(1e-6));
    CHECK(f.at(100, 40) == Approx(1100.0).epsilon(1e-6));
    CHECK(f.at(100, 0) == Approx(f.at(100, 50)).epsilon(1e-6));
  }
  {
    p.sky_gradient_angle = 270.0;  // rising towards the top row
    SkyGenerator sky(p, 1);
    const FloatFrame f = expected_frame(sky, 0, kSkyBackground, truth);
    CHECK(f.at(30, 0) == Approx(1100.0).epsilon(1e-6));
    CHECK(f.at(30, 50) == Approx(900.0).epsilon(1e-6));
    CHECK(sky.sky_at(30.0, 0.0) == Approx(1100.0).epsilon(1e-9));
  }
}

TEST_CASE("sky: hot pixels sit at the same seeded places in every frame", "[sky]") {
  SkyParams p = flat_sky(128, 128);
  p.hot_pixel_fraction = 2e-3;
  p.hot_pixel_level = 3000.0;
  p.gain = 1.0;
  SkyGenerator sky(p, 2);
  const auto& hot = sky.hot_pixels();
  CHECK(hot.size() > 25);  // 33 drawn; a repeat counts once
  CHECK(hot.size() <= 33);
  SkyParams other = p;
  other.seed = 2;
  CHECK(SkyGenerator(other, 1).hot_pixels() != hot);

  SkyTruth truth;
  const FloatFrame expected = expected_frame(sky, 0, kSkyHotPixels, truth);
  double total = 0.0;
  for (float v : expected.e) total += v;
  CHECK(total == Approx(3000.0 * hot.size()));
  for (std::uint64_t k : {0u, 5u}) {
    const TestImage frame = render_frame(sky, k, PixelFormat::Gray16, truth);
    for (const std::size_t i : hot) {
      const int x = static_cast<int>(i % 128), y = static_cast<int>(i / 128);
      // sky + hot level with its photon noise: 3400 +- 58 e- (1 e-/ADU), plus the bias.
      CHECK(sample(frame, x, y) == Approx(3400.0 + 100.0).margin(6.0 * 58.3));
    }
  }
}

TEST_CASE("sky PSF: a star's pixels add up to its flux, its peak to flux * peak_fraction",
          "[sky]") {
  struct Case {
    PsfKind kind;
    double fwhm;
    double beta;
    double tolerance;  // relative, on the flux sum
  };
  const Case cases[] = {
      {PsfKind::Gaussian, 3.0, 3.0, 1e-5},
      {PsfKind::Gaussian, 0.8, 3.0, 1e-5},
      {PsfKind::Moffat, 3.0, 3.0, 1e-3},
      {PsfKind::Moffat, 5.0, 2.5, 2e-3},
  };
  for (const Case& c : cases) {
    INFO(to_string(c.kind) << " fwhm " << c.fwhm << " beta " << c.beta);
    // One star: the field is periodic, so even one near an edge keeps all its flux.
    SkyParams p = flat_sky(160, 160);
    p.psf = c.kind;
    p.fwhm = c.fwhm;
    p.moffat_beta = c.beta;
    p.star_density = 1e6 / (160.0 * 160.0);
    p.star_flux_min = p.star_flux_max = 1e5;
    SkyGenerator sky(p, 2);
    REQUIRE(sky.stars().size() == 1);
    SkyTruth truth;
    const FloatFrame f = expected_frame(sky, 0, kSkyStars, truth);
    double sum = 0.0;
    for (float v : f.e) sum += v;
    CHECK(sum == Approx(1e5).epsilon(c.tolerance));

    // Centred on a pixel, the peak pixel holds peak_fraction of the flux.
    const sky::Psf& psf = sky.psf();
    std::vector<float> plane(41 * 41, 0.0f);
    psf.add({plane.data(), 41, 41}, {0, 41}, 20.0, 20.0, 1e5, psf.stamp_radius(1e5));
    CHECK(plane[20 * 41 + 20] == Approx(1e5 * psf.peak_fraction()).epsilon(5e-3));
    CHECK(*std::max_element(plane.begin(), plane.end()) == plane[20 * 41 + 20]);
  }
  // The Gaussian's peak fraction in closed form.
  const sky::Psf gauss(PsfKind::Gaussian, 3.0, 3.0);
  const double edge = std::erf(0.5 / (3.0 / kFwhmPerSigma * std::sqrt(2.0)));
  CHECK(gauss.peak_fraction() == Approx(edge * edge).epsilon(1e-12));
}

TEST_CASE("sky: star fluxes follow the power law between flux_min and flux_max", "[sky]") {
  SkyParams p = flat_sky(1024, 1024);
  p.star_density = 5000.0;
  p.star_flux_min = 100.0;
  p.star_flux_max = 1e6;
  p.star_flux_slope = 1.0;
  SkyGenerator sky(p, 1);
  const auto& stars = sky.stars();
  REQUIRE(stars.size() == static_cast<std::size_t>(std::llround(5000.0 * 1.048576)));
  // N(>F) ~ F^-1: a tenth of the stars above 10 * flux_min, a hundredth above 100 * flux_min
  // (less the truncation at flux_max, 1e-4 of them).
  const auto above = [&](double f) {
    return static_cast<double>(std::count_if(stars.begin(), stars.end(),
                                             [&](const StarTruth& s) { return s.flux > f; })) /
           stars.size();
  };
  CHECK(above(1000.0) == Approx(0.1).margin(0.01));
  CHECK(above(10000.0) == Approx(0.01).margin(0.003));
  for (const StarTruth& s : stars) {
    REQUIRE(s.flux >= 100.0);
    REQUIRE(s.flux <= 1e6);
    REQUIRE(s.x >= -0.5);
    REQUIRE(s.x < 1023.5);
  }
}

TEST_CASE("sky movers: each frame they advance by (vx, vy) plus the field's shift", "[sky]") {
  for (const bool moving_field : {false, true}) {
    INFO((moving_field ? "with" : "without") << " jitter and drift");
    SkyParams p = flat_sky(256, 256);
    p.movers = 5;
    p.mover_speed_min = 0.5;
    p.mover_speed_max = 3.0;
    if (moving_field) {
      p.jitter = 0.3;
      p.drift_x = 0.25;
      p.drift_y = -0.1;
    }
    SkyGenerator sky(p, 1);
    SkyTruth before, after;
    int checked = 0;
    for (std::uint64_t k = 0; k < 40; ++k) {
      sky.compute_truth(k, before);
      sky.compute_truth(k + 1, after);
      REQUIRE(after.movers.size() == 5);
      for (std::size_t i = 0; i < 5; ++i) {
        const MoverTruth& a = before.movers[i];
        const MoverTruth& b = after.movers[i];
        if (a.id != b.id) continue;  // replaced
        const double dx = b.x - a.x - (after.shift_x - before.shift_x);
        const double dy = b.y - a.y - (after.shift_y - before.shift_y);
        CHECK(dx == Approx(a.vx).margin(1e-9));
        CHECK(dy == Approx(a.vy).margin(1e-9));
        const double speed = std::hypot(a.vx, a.vy);
        CHECK(speed >= 0.5 - 1e-12);
        CHECK(speed <= 3.0 + 1e-12);
        ++checked;
      }
    }
    CHECK(checked > 150);
  }
}

TEST_CASE("sky movers: one that leaves the frame is replaced by a new one", "[sky]") {
  SkyParams p = flat_sky(128, 96);
  p.movers = 4;
  p.mover_speed_min = 10.0;
  p.mover_speed_max = 25.0;
  SkyGenerator sky(p, 1);
  SkyTruth previous, truth;
  sky.compute_truth(0, previous);
  std::set<std::uint64_t> ids;
  for (const MoverTruth& m : previous.movers) ids.insert(m.id);
  int replaced = 0;
  for (std::uint64_t k = 1; k < 200; ++k) {
    sky.compute_truth(k, truth);
    REQUIRE(truth.movers.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      const MoverTruth& m = truth.movers[i];
      // Centres stay on the frame (no jitter here).
      CHECK(m.x >= -0.5);
      CHECK(m.x <= p.width - 0.5);
      CHECK(m.y >= -0.5);
      CHECK(m.y <= p.height - 0.5);
      if (m.id != previous.movers[i].id) {
        ++replaced;
        CHECK(ids.insert(m.id).second);  // never seen before
        CHECK(m.first_frame == k);
        // The one replaced was about to leave: one more step would take it out.
        const MoverTruth& gone = previous.movers[i];
        const double nx = gone.x + gone.vx, ny = gone.y + gone.vy;
        CHECK((nx < -0.5 || ny < -0.5 || nx > p.width - 0.5 || ny > p.height - 0.5));
      }
    }
    previous = truth;
  }
  CHECK(replaced > 20);
}

TEST_CASE("sky movers: a still mover never leaves, and its SNR is the nominal one", "[sky]") {
  SkyParams p = one_mover(0.0, 7.0);
  p.mover_snr_min = 5.0;
  p.mover_snr_max = 12.0;
  SkyGenerator sky(p, 1);
  SkyTruth first, truth;
  sky.compute_truth(0, first);
  sky.compute_truth(500, truth);
  CHECK(truth.movers[0].id == first.movers[0].id);
  const MoverTruth& m = truth.movers[0];
  CHECK(m.peak_snr >= 5.0);
  CHECK(m.peak_snr <= 12.0);
  const double sigma = std::sqrt(p.sky_level + p.read_noise * p.read_noise);
  CHECK(m.noise_sigma_e == Approx(sigma));
  CHECK(m.noise_sigma_adu == Approx(sigma / p.gain));
  // Nominal peak SNR = flux * peak fraction / sigma: the peak pixel of a source centred on a
  // pixel. Off-centre the real peak pixel is lower, never higher.
  CHECK(m.peak_snr == Approx(m.flux * sky.psf().peak_fraction() / sigma));
  SkyTruth ignored;
  const FloatFrame image = movers_only(sky, 500, ignored);
  const float peak = *std::max_element(image.e.begin(), image.e.end());
  CHECK(peak <= m.flux * sky.psf().peak_fraction() * (1.0 + 1e-5));
  CHECK(peak >= 0.5 * m.flux * sky.psf().peak_fraction());
}

TEST_CASE("sky movers: the image is centred where the truth says, with the truth's flux", "[sky]") {
  for (const double speed : {0.0, 0.7, 4.0, 12.0}) {
    INFO("speed " << speed);
    SkyParams p = one_mover(speed, 40.0);
    p.width = p.height = 256;
    p.jitter = 0.3;  // the mover moves with the field
    p.drift_x = 0.2;
    SkyGenerator sky(p, 2);
    int checked = 0;
    for (std::uint64_t k = 0; k < 60; k += 3) {
      SkyTruth truth;
      const FloatFrame image = movers_only(sky, k, truth);
      const MoverTruth& m = truth.movers[0];
      if (!well_inside(m, p, 12.0 + speed)) continue;
      const Centroid c =
          centroid(image.width, image.height, m.x, m.y, 10 + static_cast<int>(speed),
                   [&](int x, int y) { return static_cast<double>(image.at(x, y)); });
      CHECK(c.x == Approx(m.x).margin(0.05));
      CHECK(c.y == Approx(m.y).margin(0.05));
      CHECK(c.sum == Approx(m.flux).epsilon(1e-3));
      ++checked;
    }
    CHECK(checked >= 3);
  }
}

TEST_CASE("sky movers: a fast mover is a streak as long as its motion in one exposure", "[sky]") {
  const double speed = 12.0;
  SkyParams p = one_mover(speed, 40.0);
  p.mover_direction = 30.0;
  SkyGenerator sky(p, 1);
  SkyTruth truth;
  for (std::uint64_t k = 0; k < 20; ++k) {
    sky.compute_truth(k, truth);
    if (well_inside(truth.movers[0], p, 25.0)) break;
  }
  const MoverTruth& m = truth.movers[0];
  REQUIRE(well_inside(m, p, 25.0));
  const FloatFrame image = movers_only(sky, truth.frame, truth);
  const double ux = m.vx / speed, uy = m.vy / speed;
  double sum = 0.0, along = 0.0, across = 0.0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const double v = image.at(x, y), dx = x - m.x, dy = y - m.y;
      sum += v;
      along += v * (dx * ux + dy * uy) * (dx * ux + dy * uy);
      across += v * (-dx * uy + dy * ux) * (-dx * uy + dy * ux);
    }
  // Second moments: the PSF's sigma^2, a pixel's 1/12, and along the track the spread of
  // `steps` equally spaced points over the path, L^2 (n^2 - 1) / (12 n^2).
  const double sigma = p.fwhm / kFwhmPerSigma;
  const double n = std::ceil(speed / (0.25 * p.fwhm));
  CHECK(across / sum == Approx(sigma * sigma + 1.0 / 12.0).epsilon(0.01));
  CHECK(along / sum ==
        Approx(sigma * sigma + 1.0 / 12.0 + speed * speed * (n * n - 1) / (12 * n * n))
            .epsilon(0.01));
}

TEST_CASE("sky movers: in a noisy frame the brightest residual is at the truth position", "[sky]") {
  SkyParams p;
  p.width = 256;
  p.height = 256;
  p.seed = 7;
  p.movers = 6;
  p.mover_snr_min = 25.0;
  p.mover_snr_max = 40.0;
  p.mover_speed_min = 0.0;
  p.mover_speed_max = 1.0;
  p.hot_pixel_fraction = 0.0;  // a hot pixel's noise would outshine a mover
  SkyGenerator sky(p, 2);
  for (std::uint64_t k : {0u, 4u}) {
    SkyTruth truth, ignored;
    const TestImage noisy = render_frame(sky, k, PixelFormat::Gray32F, truth);
    const FloatFrame without = expected_frame(sky, k, kSkyAll & ~kSkyMovers, ignored);
    for (const MoverTruth& m : truth.movers) {
      if (!well_inside(m, p, 8.0)) continue;
      // The brightest residual within 8 px of the truth, in units of the local noise (so a
      // bright star's photon noise does not count more than the sky's).
      double best = -1e300;
      int bx = 0, by = 0;
      for (int y = static_cast<int>(m.y) - 8; y <= static_cast<int>(m.y) + 8; ++y)
        for (int x = static_cast<int>(m.x) - 8; x <= static_cast<int>(m.x) + 8; ++x) {
          const double e = without.at(x, y);
          const double z = (sample(noisy, x, y) - e) / std::sqrt(e + 25.0);
          if (z > best) best = z, bx = x, by = y;
        }
      INFO("mover " << m.id << " at " << m.x << "," << m.y << " snr " << m.peak_snr);
      CHECK(std::hypot(bx - m.x, by - m.y) <= 1.5);
      CHECK(best > 0.5 * m.peak_snr);
    }
  }
}

TEST_CASE("sky: the truth's shift is the stars' displacement", "[sky]") {
  SkyParams p = flat_sky(200, 200);
  p.star_density = 1e6 / (200.0 * 200.0) * 4;  // four stars
  p.star_flux_min = p.star_flux_max = 3e5;
  p.jitter = 0.4;
  p.drift_x = 0.6;
  p.drift_y = -0.35;
  SkyGenerator sky(p, 2);
  REQUIRE(sky.stars().size() == 4);
  // The star nearest the centre, far from the wrap-around for the frames below.
  const StarTruth star = *std::min_element(
      sky.stars().begin(), sky.stars().end(), [](const StarTruth& a, const StarTruth& b) {
        return std::hypot(a.x - 100, a.y - 100) < std::hypot(b.x - 100, b.y - 100);
      });
  REQUIRE(std::hypot(star.x - 100, star.y - 100) < 70);

  const auto measure = [&](std::uint64_t k, SkyTruth& truth) {
    const TestImage frame = render_frame(sky, k, PixelFormat::Gray32F, truth);
    return centroid(
        frame.width, frame.height, star.x + truth.shift_x, star.y + truth.shift_y, 8,
        [&](int x, int y) { return sample(frame, x, y); }, p.sky_level);
  };
  SkyTruth truth0;
  const Centroid at0 = measure(0, truth0);
  CHECK(truth0.shift_x == 0.0);
  CHECK(truth0.shift_y == 0.0);
  for (std::uint64_t k : {1u, 2u, 5u, 11u, 20u}) {
    SkyTruth truth;
    const Centroid at = measure(k, truth);
    INFO("frame " << k << " shift " << truth.shift_x << "," << truth.shift_y);
    CHECK(at.x - at0.x == Approx(truth.shift_x).margin(0.05));
    CHECK(at.y - at0.y == Approx(truth.shift_y).margin(0.05));
  }
}

TEST_CASE("sky: the jitter walk stays bounded and drift adds up", "[sky]") {
  SkyParams p = flat_sky(64, 64);
  p.jitter = 0.2;
  p.jitter_reversion = 0.05;  // stationary sigma 0.2 / sqrt(1 - 0.95^2) = 0.64 px
  SkyGenerator sky(p, 1);
  SkyTruth truth;
  double largest = 0.0, sum2 = 0.0;
  double previous_x = 0.0;
  double step2 = 0.0;
  const int frames = 5000;
  for (int k = 0; k < frames; ++k) {
    sky.compute_truth(static_cast<std::uint64_t>(k), truth);
    largest = std::max({largest, std::fabs(truth.shift_x), std::fabs(truth.shift_y)});
    sum2 += truth.shift_x * truth.shift_x;
    if (k > 0) step2 += (truth.shift_x - previous_x) * (truth.shift_x - previous_x);
    previous_x = truth.shift_x;
  }
  const double stationary = 0.2 / std::sqrt(1.0 - 0.95 * 0.95);
  CHECK(std::sqrt(sum2 / frames) == Approx(stationary).epsilon(0.2));
  CHECK(largest < 6.0 * stationary);
  // Frame-to-frame steps: sqrt(jitter^2 + reversion^2 * stationary^2) ~ 0.2 px, sub-pixel.
  CHECK(std::sqrt(step2 / (frames - 1)) == Approx(0.2).epsilon(0.1));

  p.jitter = 0.0;
  p.drift_x = 0.75;
  p.drift_y = -2.0;
  SkyGenerator drifting(p, 1);
  drifting.compute_truth(1000, truth);
  CHECK(truth.shift_x == Approx(750.0));
  CHECK(truth.shift_y == Approx(-2000.0));
}

TEST_CASE("sky: a drifting field stays full of stars", "[sky]") {
  SkyParams p = flat_sky(128, 128);
  p.star_density = 2000.0;
  p.drift_x = 7.0;
  p.drift_y = 3.0;
  SkyGenerator sky(p, 1);
  double total_flux = 0.0;
  for (const StarTruth& s : sky.stars()) total_flux += s.flux;
  for (std::uint64_t k : {0u, 10u, 100u}) {
    SkyTruth truth;
    const FloatFrame f = expected_frame(sky, k, kSkyStars, truth);
    double sum = 0.0;
    for (float v : f.e) sum += v;
    INFO("frame " << k);
    CHECK(sum == Approx(total_flux).epsilon(1e-4));  // periodic: nothing is lost at the edges
  }
}
