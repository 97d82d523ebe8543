// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's matched filter: its SNR is the analytic one for a known source, and
// it is calibrated (unit sigma) on white noise.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "app/quality/statistics.hpp"
#include "app/rng.hpp"
#include "pipeline/detect/matched_filter.hpp"
#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/sky/sky_psf.hpp"

using namespace starsift;
using namespace starsift::quality;

namespace {

constexpr double kPi = 3.141592653589793;
constexpr double kFwhmPerSigma = 2.3548200450309493;

// A point source of `flux` on the centre of pixel (cx, cy), rendered by the sky's own PSF code
// with a stamp wide enough to hold all of it.
Plane point_source(const sky::Psf& psf, int width, int height, int cx, int cy, double flux) {
  Plane p(width, height);
  const sky::Plane plane{p.data(), width, height};
  psf.add(plane, sky::RowBand{0, height}, cx, cy, flux, 20);
  return p;
}

}  // namespace

TEST_CASE("the PSF kernel is the sky's pixel-integrated PSF, and its sum of squares is analytic",
          "[detect]") {
  const double fwhm = 3.0;
  const sky::Psf psf(PsfKind::Gaussian, fwhm, 3.0);
  const PsfKernel k = make_psf_kernel(psf);
  CHECK(k.radius == 3);  // the rings down to 1 % of the peak at FWHM 3
  CHECK(k.peak == Approx(psf.peak_fraction()).epsilon(1e-6));
  CHECK(k.at(0, 0) == Approx(psf.peak_fraction()).epsilon(1e-6));
  // A Gaussian integrated over square pixels is, to a very good approximation, a Gaussian of
  // variance sigma^2 + 1/12 per axis, whose sum of squares is 1 / (4 pi (sigma^2 + 1/12)).
  const double sigma = fwhm / kFwhmPerSigma;
  CHECK(k.full_norm2 == Approx(1.0 / (4.0 * kPi * (sigma * sigma + 1.0 / 12.0))).epsilon(0.01));
  // Truncated at radius 3 (a 7 x 7 square), the stamp keeps all but 1.5e-4 of sum P^2.
  CHECK(k.norm2 / k.full_norm2 > 0.9998);
  CHECK(k.norm2 <= k.full_norm2);
}

TEST_CASE("a noise-free point source gives the analytic matched-filter SNR", "[detect]") {
  const sky::Psf psf(PsfKind::Gaussian, 3.0, 3.0);
  const PsfKernel k = make_psf_kernel(psf);
  ThreadPool pool(2);
  const int w = 64, h = 48, cx = 30, cy = 21;
  const double flux = 5000.0, sigma = 7.0;
  const Plane source = point_source(psf, w, h, cx, cy, flux);
  MatchedFilter filter(k, w, h);
  Plane snr(w, h);
  // The filter is the source's own profile, so at its pixel the sum is flux * sum K^2, and the
  // noise of the sum sigma sqrt(sum K^2): SNR = flux sqrt(sum K^2) / sigma.
  const double analytic = flux * std::sqrt(k.norm2) / sigma;

  SECTION("one sigma for the frame") {
    filter.snr_with_sigma(source, sigma, snr, pool);
    CHECK(snr.at(cx, cy) == Approx(analytic).epsilon(1e-5));
    CHECK(snr.at(cx, cy) == Approx(flux * std::sqrt(k.full_norm2) / sigma).epsilon(1e-4));
    // The peak is at the source, lower one pixel away.
    CHECK(snr.at(cx + 1, cy) < snr.at(cx, cy));
    CHECK(snr.at(cx, cy - 1) < snr.at(cx, cy));
  }
  SECTION("a variance map of that sigma gives the same") {
    const Plane variance(w, h, static_cast<float>(sigma * sigma));
    filter.snr_with_variance(source, variance, snr, pool);
    CHECK(snr.at(cx, cy) == Approx(analytic).epsilon(1e-5));
  }
  SECTION("a noisier pixel under the stamp lowers the SNR by the sum's own variance") {
    Plane variance(w, h, static_cast<float>(sigma * sigma));
    variance.at(cx + 1, cy) = static_cast<float>(10.0 * sigma * sigma);
    filter.snr_with_variance(source, variance, snr, pool);
    const double tap = k.at(1, 0);
    const double sum_variance = sigma * sigma * (k.norm2 + 9.0 * tap * tap);
    CHECK(snr.at(cx, cy) == Approx(flux * k.norm2 / std::sqrt(sum_variance)).epsilon(1e-5));
  }
  SECTION("no variance at all gives 0, not infinity") {
    const Plane variance(w, h, 0.0f);
    filter.snr_with_variance(source, variance, snr, pool);
    CHECK(snr.at(cx, cy) == 0.0f);
  }
}

TEST_CASE("the matched filter's SNR has unit sigma on white noise", "[detect]") {
  const sky::Psf psf(PsfKind::Gaussian, 3.0, 3.0);
  const PsfKernel k = make_psf_kernel(psf);
  ThreadPool pool(2);
  const int side = 256;
  const double sigma = 3.0;
  app::Rng rng(11);
  Plane noise(side, side);
  for (std::size_t i = 0; i < noise.size(); ++i) {
    noise.data()[i] = static_cast<float>(sigma * rng.normal());
  }
  MatchedFilter filter(k, side, side);
  Plane snr(side, side);
  filter.snr_with_sigma(noise, sigma, snr, pool);
  std::vector<float> inner;
  for (int y = k.radius; y < side - k.radius; ++y) {
    for (int x = k.radius; x < side - k.radius; ++x) inner.push_back(snr.at(x, y));
  }
  // 62 000 samples, correlated over ~20 px: the estimate is good to a couple of per cent.
  CHECK(mad_sigma(inner) == Approx(1.0).epsilon(0.03));
}
