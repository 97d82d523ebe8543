// SPDX-License-Identifier: LGPL-2.1-or-later
// The synthetic sky as a generator: determinism (seed, frame order, threads), formats and
// strides, bit depth and saturation, refused parameters, and the truth line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/sky/sky_truth.hpp"
#include "sky/sky_test_support.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

// A busy little sky: every component on, movers fast enough to be replaced within a few
// frames, and jitter plus drift.
SkyParams busy_sky() {
  SkyParams p;
  p.width = 173;  // odd sizes: no row of the pool's bands lines up with anything
  p.height = 131;
  p.seed = 42;
  p.star_density = 3000.0;
  p.hot_pixel_fraction = 1e-3;
  p.movers = 6;
  p.mover_speed_min = 5.0;
  p.mover_speed_max = 30.0;
  p.jitter = 0.4;
  p.drift_x = 0.3;
  p.drift_y = -0.2;
  return p;
}

void check_same_frame(const TestImage& a, const TestImage& b) {
  INFO("first difference: " << a.first_difference(b));
  CHECK(a.same_pixels(b));
}

}  // namespace

TEST_CASE("sky: the same seed gives the same frames, another seed other frames", "[sky]") {
  SkyGenerator first(busy_sky(), 2);
  SkyGenerator second(busy_sky(), 2);
  SkyParams other = busy_sky();
  other.seed = 43;
  SkyGenerator third(other, 2);
  SkyTruth t1, t2, t3;
  for (std::uint64_t k : {0u, 1u, 7u}) {
    INFO("frame " << k);
    const TestImage a = render_frame(first, k, PixelFormat::Gray16, t1);
    const TestImage b = render_frame(second, k, PixelFormat::Gray16, t2);
    const TestImage c = render_frame(third, k, PixelFormat::Gray16, t3);
    check_same_frame(a, b);
    CHECK_FALSE(a.same_pixels(c));
    CHECK(to_json_line(t1) == to_json_line(t2));
    CHECK(to_json_line(t1) != to_json_line(t3));
  }
}

TEST_CASE("sky: a frame does not depend on the frames rendered before it", "[sky]") {
  SkyGenerator alone(busy_sky(), 2);
  SkyTruth truth_alone;
  const TestImage five = render_frame(alone, 5, PixelFormat::Gray16, truth_alone);

  SkyGenerator in_order(busy_sky(), 2);
  SkyTruth truth;
  for (std::uint64_t k = 0; k < 5; ++k) render_frame(in_order, k, PixelFormat::Gray16, truth);
  check_same_frame(render_frame(in_order, 5, PixelFormat::Gray16, truth), five);
  CHECK(to_json_line(truth) == to_json_line(truth_alone));

  // Backwards, after movers were replaced and the walk went further.
  render_frame(in_order, 60, PixelFormat::Gray16, truth);
  check_same_frame(render_frame(in_order, 5, PixelFormat::Gray16, truth), five);
  CHECK(to_json_line(truth) == to_json_line(truth_alone));

  // Consecutive frames differ (noise at least).
  CHECK_FALSE(render_frame(in_order, 6, PixelFormat::Gray16, truth).same_pixels(five));
}

TEST_CASE("sky: frames do not depend on the number of threads", "[sky]") {
  SkyGenerator one(busy_sky(), 1);
  SkyGenerator three(busy_sky(), 3);
  SkyGenerator seven(busy_sky(), 7);
  SkyTruth truth;
  for (const PixelFormat format : {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F}) {
    INFO(to_string(format));
    const TestImage reference = render_frame(one, 3, format, truth);
    check_same_frame(render_frame(three, 3, format, truth), reference);
    check_same_frame(render_frame(seven, 3, format, truth), reference);
  }
}

TEST_CASE("sky: padded rows are written up to the row's end and no further", "[sky]") {
  SkyGenerator sky(busy_sky(), 2);
  SkyTruth truth;
  const TestImage packed = render_frame(sky, 2, PixelFormat::Gray16, truth);
  const TestImage padded = render_frame(sky, 2, PixelFormat::Gray16, truth, /*pad=*/10);
  check_same_frame(padded, packed);
  for (int y = 0; y < padded.height; ++y) {
    const std::byte* pad = padded.bytes.data() + y * padded.stride + padded.width * 2;
    REQUIRE(std::all_of(pad, pad + 10, [](std::byte b) { return b == std::byte{0xA5}; }));
  }
}

TEST_CASE("sky: GRAY16 keeps to its bit depth and saturates at 2^bits - 1", "[sky]") {
  for (const int bits : {8, 10, 12, 16}) {
    INFO("bit-depth " << bits);
    SkyParams p = flat_sky(96, 64);
    p.bit_depth = bits;
    p.star_density = 2000.0;
    p.star_flux_min = 1e6;  // every star saturates its core, even at 16 bits
    p.star_flux_max = 1e7;
    p.gain = 1.0;
    SkyGenerator sky(p, 2);
    SkyTruth truth;
    const TestImage frame = render_frame(sky, 0, PixelFormat::Gray16, truth);
    double top = 0.0;
    for (int y = 0; y < frame.height; ++y)
      for (int x = 0; x < frame.width; ++x) top = std::max(top, sample(frame, x, y));
    CHECK(top == (1 << bits) - 1);
  }
}

TEST_CASE("sky: GRAY8 saturates at 255 and clips at 0 without wrapping", "[sky]") {
  SkyParams p = flat_sky(96, 64);
  p.sky_level = 0.0;
  p.bias = 0.0;  // half the read noise falls below 0 ADU
  p.read_noise = 4.0;
  p.gain = 1.0;
  p.star_density = 2000.0;
  p.star_flux_min = 1e5;
  p.star_flux_max = 1e6;
  SkyGenerator sky(p, 2);
  SkyTruth truth;
  const TestImage frame = render_frame(sky, 0, PixelFormat::Gray8, truth);
  int zeros = 0, full = 0;
  for (int y = 0; y < frame.height; ++y)
    for (int x = 0; x < frame.width; ++x) {
      zeros += sample(frame, x, y) == 0.0;
      full += sample(frame, x, y) == 255.0;
    }
  // Roughly half the sky pixels are below 0 e-; a wrap would turn them into large values.
  CHECK(zeros > frame.width * frame.height / 4);
  CHECK(full > 0);
  CHECK(full < frame.width * frame.height / 4);
}

TEST_CASE("sky: GRAY32F holds electrons without gain or bias", "[sky]") {
  SkyParams p = flat_sky(128, 128);
  p.gain = 3.0;
  p.bias = 500.0;
  SkyGenerator sky(p, 2);
  SkyTruth truth;
  const Moments m = moments(render_frame(sky, 0, PixelFormat::Gray32F, truth));
  CHECK(m.mean == Approx(p.sky_level).margin(0.5));
}

TEST_CASE("sky: bad parameters are refused with the parameter, value and range", "[sky]") {
  struct Case {
    const char* what;
    void (*change)(SkyParams&);
    const char* expected;  // in the message
  };
  const Case cases[] = {
      {"width", [](SkyParams& p) { p.width = 0; }, "width 0 is out of range; allowed: 1..65536"},
      {"flux order",
       [](SkyParams& p) {
         p.star_flux_min = 5000.0;
         p.star_flux_max = 1000.0;
       },
       "star-flux-min 5000 exceeds star-flux-max 1000"},
      {"fwhm nan", [](SkyParams& p) { p.fwhm = std::nan(""); }, "fwhm is not a finite number"},
      {"fwhm", [](SkyParams& p) { p.fwhm = 0.1; }, "fwhm 0.1 is out of range; allowed: 0.5..20"},
      {"bit depth", [](SkyParams& p) { p.bit_depth = 17; }, "bit-depth 17 is out of range"},
      {"bias", [](SkyParams& p) { p.bias = 5000.0; },
       "bias 5000 ADU is not below the saturation of GRAY16_LE at bit-depth 12 (4095 ADU)"},
      {"snr order",
       [](SkyParams& p) {
         p.mover_snr_min = 9.0;
         p.mover_snr_max = 3.0;
       },
       "mover-snr-min 9 exceeds mover-snr-max 3"},
      {"speed order",
       [](SkyParams& p) {
         p.mover_speed_min = 2.0;
         p.mover_speed_max = 1.0;
       },
       "mover-speed-min 2 exceeds mover-speed-max 1"},
      {"direction", [](SkyParams& p) { p.mover_direction = 400.0; }, "mover-direction 400"},
      {"beta", [](SkyParams& p) { p.moffat_beta = 1.0; }, "moffat-beta 1 is out of range"},
      {"gain", [](SkyParams& p) { p.gain = 0.0; }, "gain 0 is out of range"},
      {"reversion", [](SkyParams& p) { p.jitter_reversion = 1.5; }, "jitter-reversion 1.5"},
      {"movers", [](SkyParams& p) { p.movers = -1; }, "movers -1 is out of range"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    SkyParams p;
    c.change(p);
    try {
      p.validate();
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(c.expected));
    }
    CHECK_THROWS_AS(SkyGenerator(p, 1), Error);
  }
  SkyParams defaults;
  CHECK_NOTHROW(defaults.validate());
  CHECK_NOTHROW(defaults.validate_for(PixelFormat::Gray8));  // bias 100 < 255
  defaults.bias = 300.0;
  CHECK_NOTHROW(defaults.validate_for(PixelFormat::Gray16));
  CHECK_THROWS_WITH(defaults.validate_for(PixelFormat::Gray8),
                    Catch::Contains("bias 300 ADU is not below the saturation of GRAY8"));
  CHECK_THROWS_WITH(defaults.validate_for(PixelFormat::Rgba),
                    Catch::Contains("the sky does not render RGBA"));
}

TEST_CASE("sky: a frame of the wrong shape or format is refused", "[sky]") {
  SkyGenerator sky(flat_sky(64, 32), 1);
  SkyTruth truth;
  TestImage wrong_size(63, 32, PixelFormat::Gray16);
  CHECK_THROWS_WITH(sky.render(0, wrong_size.view(), truth),
                    Catch::Contains("63x32 GRAY16_LE does not match the sky"));
  TestImage rgba(64, 32, PixelFormat::Rgba);
  CHECK_THROWS_AS(sky.render(0, rgba.view(), truth), Error);
  TestImage gray16(64, 32, PixelFormat::Gray16);
  CHECK_THROWS_WITH(sky.render_expected(0, gray16.view(), truth), Catch::Contains("in GRAY32F"));
}

TEST_CASE("sky: the truth line is one line of JSON with every field", "[sky]") {
  SkyParams p = busy_sky();
  p.movers = 2;
  SkyGenerator sky(p, 1);
  SkyTruth truth;
  sky.compute_truth(3, truth);
  REQUIRE(truth.movers.size() == 2);
  const std::string line = to_json_line(truth);
  INFO(line);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.rfind("{\"frame\":3,\"shift_x\":", 0) == 0);
  CHECK(line.back() == '}');
  for (const char* key :
       {"\"shift_y\":", "\"movers\":[{\"id\":", "\"first_frame\":", "\"x\":", "\"y\":", "\"vx\":",
        "\"vy\":", "\"flux\":", "\"peak_snr\":", "\"noise_sigma_e\":", "\"noise_sigma_adu\":"}) {
    CHECK(line.find(key) != std::string::npos);
  }
  CHECK(std::count(line.begin(), line.end(), '{') == 3);  // the frame and two movers
  CHECK(std::count(line.begin(), line.end(), '{') == std::count(line.begin(), line.end(), '}'));

  char expected_x[32];
  std::snprintf(expected_x, sizeof expected_x, "\"x\":%.6f", truth.movers[1].x);
  CHECK(line.find(expected_x) != std::string::npos);

  std::string appended = "previous\n";
  append_json_line(truth, appended);
  CHECK(appended == "previous\n" + line + "\n");

  SkyTruth empty;
  CHECK(to_json_line(empty) ==
        "{\"frame\":0,\"shift_x\":0.000000,\"shift_y\":0.000000,\"movers\":[]}");
}

TEST_CASE("sky: rendering again reuses the truth's memory", "[sky]") {
  SkyGenerator sky(busy_sky(), 2);
  SkyTruth truth;
  TestImage frame(busy_sky().width, busy_sky().height, PixelFormat::Gray16);
  sky.render(0, frame.view(), truth);
  const MoverTruth* movers = truth.movers.data();
  for (std::uint64_t k = 1; k < 20; ++k) sky.render(k, frame.view(), truth);
  CHECK(truth.movers.data() == movers);
  CHECK(truth.movers.size() == 6);
}
