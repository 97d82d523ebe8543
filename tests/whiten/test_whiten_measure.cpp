// SPDX-License-Identifier: LGPL-2.1-or-later
// Measurements behind whitening's defaults (docs/whitening.md, "Defaults"). Hidden: run with
//   starsift_tests "[whiten-measure]" -s
// They print tables and check nothing.
#include <catch2/catch.hpp>

#include <cstdio>

#include "pipeline/whiten/phase_correlation.hpp"
#include "whiten/whiten_sequence.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

constexpr int kSide = 128;
constexpr double kNoise = 10.0;

SkySequence sky(double transparency, double jitter) {
  SkySequence s;
  s.scene = make_star_scene(kSide, kSide, 80, 11, 30.0, 3000.0);
  s.noise = kNoise;
  s.transparency = transparency;
  s.jitter = jitter;
  s.seed = 5;
  return s;
}

struct Result {
  double rms = 0.0;    // residual rms / noise sigma, last frames, interior
  double floor = 0.0;  // mean sqrt(1 + sum a^2)
};

Result measure(const SkySequence& model, WhitenParams params, int frames = 60, int last = 20) {
  params.output = WhitenOutput::Float;
  const WhitenRun run =
      run_whiten(params, model.shape(), frames, [&](int t) { return model.frame(t); });
  Result r;
  for (int t = frames - last; t < frames; ++t) {
    const Moments m = moments(run.out[t], 10);
    r.rms += std::sqrt(m.std * m.std + m.mean * m.mean) / kNoise / last;
    r.floor += run.stats[t].noise_floor / last;
  }
  return r;
}

}  // namespace

TEST_CASE("measure: residual noise against gamma", "[.][whiten-measure]") {
  const double gammas[] = {0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
  struct Case {
    const char* name;
    SkySequence model;
    WhitenShift shift;
  };
  SkySequence dark_jitter = sky(0.0, 1.5);  // sky 50 ADU over the bias: noise matters more in R
  dark_jitter.scene.sky = 50.0;
  const Case cases[] = {{"static", sky(0.0, 0.0), WhitenShift::None},
                        {"transparency 3%", sky(0.03, 0.0), WhitenShift::None},
                        {"jitter 1.5px, shift none", sky(0.0, 1.5), WhitenShift::None},
                        {"jitter 1.5px, resample", sky(0.0, 1.5), WhitenShift::Resample},
                        {"sky 50, jitter 1.5px, resample", dark_jitter, WhitenShift::Resample}};
  for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
    for (const Case& c : cases) {
      std::printf("fit %s, %s (N=20): residual rms / sigma [floor]\n",
                  std::string(to_string(fit)).c_str(), c.name);
      for (double gamma : gammas) {
        WhitenParams p = classic_params();
        p.gamma = gamma;
        p.fit = fit;
        p.shift = c.shift;
        const Result r = measure(c.model, p);
        std::printf("  gamma %-6g  %.4f  [%.4f]\n", gamma, r.rms, r.floor);
      }
    }
  }
}

TEST_CASE("measure: shift estimation error on star fields", "[.][whiten-measure]") {
  for (int side : {64, 128, 256}) {
    const StarScene scene = make_star_scene(side, side, side * side / 270, 7, 50.0, 5000.0);
    PhaseCorrelator correlator(side);
    std::mt19937 rng(1);
    Plane ref = scene.render();
    add_noise(ref, kNoise, rng);
    correlator.set_reference(ref.view());
    double worst = 0.0, sum2 = 0.0;
    int count = 0;
    for (double d = -3.0; d <= 3.0; d += 0.13) {
      const double dx = d, dy = 0.3 - 0.61 * d;
      Plane f = scene.render(dx, dy);
      add_noise(f, kNoise, rng);
      const ShiftEstimate e = correlator.estimate(f.view());
      worst = std::max({worst, std::abs(e.dx - dx), std::abs(e.dy - dy)});
      sum2 += (e.dx - dx) * (e.dx - dx) + (e.dy - dy) * (e.dy - dy);
      count += 2;
    }
    std::printf("window %d: shift error max %.4f px, rms %.4f px\n", side, worst,
                std::sqrt(sum2 / count));
  }
}

TEST_CASE("measure: star residual under jitter against PSF width", "[.][whiten-measure]") {
  for (double psf : {0.8, 1.2, 1.6, 2.4}) {
    SkySequence model = sky(0.0, 1.5);
    model.scene = make_star_scene(kSide, kSide, 40, 3, 1000.0, 1000.0);
    model.scene.psf_sigma = psf;
    WhitenParams p = classic_params();
    p.shift = WhitenShift::Resample;
    p.output = WhitenOutput::Float;
    const WhitenRun run = run_whiten(p, model.shape(), 40, [&](int t) { return model.frame(t); });
    // Star residual peak (noise included) relative to the star's peak, last 10 frames.
    double worst = 0.0, mean = 0.0;
    int count = 0;
    for (int t = 30; t < 40; ++t) {
      for (const Star& s : model.scene.stars) {
        if (s.x < 12 || s.y < 12 || s.x > kSide - 13 || s.y > kSide - 13) continue;
        const double r = peak_near(run.out[t], s.x, s.y, 4);
        worst = std::max(worst, r);
        mean += r;
        ++count;
      }
    }
    std::printf("psf sigma %.1f px, peak 1000, noise %.0f: star residual mean %.1f, max %.1f\n",
                psf, kNoise, mean / count, worst);
  }
}

TEST_CASE("measure: noise floor with resampling", "[.][whiten-measure]") {
  // Stars in the left third only (for the shift estimate); the noise is measured on the
  // star-free right half, where the interpolation smooths the prediction's noise.
  for (double jitter : {0.0, 0.5, 1.5}) {
    SkySequence model = sky(0.0, jitter);
    std::erase_if(model.scene.stars, [](const Star& s) { return s.x > 40.0; });
    WhitenParams p = classic_params();
    p.shift = WhitenShift::Resample;
    p.output = WhitenOutput::Float;
    const WhitenRun run = run_whiten(p, model.shape(), 60, [&](int t) { return model.frame(t); });
    double rms = 0.0, floor = 0.0;
    for (int t = 40; t < 60; ++t) {
      Plane right(kSide / 2 - 8, kSide - 16);
      for (int y = 0; y < right.height; ++y)
        for (int x = 0; x < right.width; ++x) right.at(x, y) = run.out[t].at(kSide / 2 + x, 8 + y);
      const Moments m = moments(right);
      rms += std::sqrt(m.std * m.std + m.mean * m.mean) / kNoise / 20;
      floor += run.stats[t].noise_floor / 20;
    }
    std::printf("jitter %.1f px, resample: residual rms / sigma %.4f, floor %.4f, ratio %.3f\n",
                jitter, rms, floor, rms / floor);
  }
}

TEST_CASE("measure: movers under fit current and fit past", "[.][whiten-measure]") {
  for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
    for (double amplitude : {5.0, 50.0}) {
      SkySequence model = sky(0.0, 0.0);
      model.scene.psf_sigma = 1.5;
      // Ten movers at once, 1.5 px per frame, through the whole sequence.
      for (int i = 0; i < 10; ++i)
        model.movers.push_back({0, 10.0, 8.0 + 11 * i, 1.5, 0.3, amplitude * kNoise});
      WhitenParams p = classic_params();
      p.fit = fit;
      p.output = WhitenOutput::Float;
      const WhitenRun run = run_whiten(p, model.shape(), 60, [&](int t) { return model.frame(t); });
      SkySequence alone = model;
      alone.scene.stars.clear();
      alone.scene.sky = 0.0;
      double kept = 0.0;
      int count = 0;
      for (int t = 30; t < 60; ++t) {
        const Plane truth = alone.clean(t);
        for (const Mover& m : model.movers) {
          if (m.x_at(t) > kSide - 4) continue;
          kept += peak_near(run.out[t], m.x_at(t), m.y_at(t), 1) /
                  peak_near(truth, m.x_at(t), m.y_at(t), 1);
          ++count;
        }
      }
      std::printf("fit %s, movers of %g sigma: residual peak / true peak %.3f\n",
                  std::string(to_string(fit)).c_str(), amplitude, kept / count);
    }
  }
}
