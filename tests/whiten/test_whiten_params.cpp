// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening parameters: defaults, names, and a message naming the key and the allowed range
// for every refusal.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "pipeline/error.hpp"
#include "pipeline/whiten/params.hpp"

using namespace starsift;
using Catch::Contains;

namespace {

// Sets one field of default parameters and expects validate() to refuse it with `key` and
// `allowed` in the message.
void require_refused(const std::function<void(WhitenParams&)>& set, const std::string& key,
                     const std::string& value, const std::string& allowed) {
  WhitenParams p;
  set(p);
  INFO(key << " = " << value);
  REQUIRE_THROWS_WITH(p.validate(), Contains("whiten " + key + " " + value + " is not allowed") &&
                                        Contains("allowed: " + allowed));
}

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("whiten defaults are valid and as documented", "[whiten][params]") {
  const WhitenParams p;
  REQUIRE_NOTHROW(p.validate());
  CHECK(p.history == 20);
  CHECK(p.gamma == 1e-4);
  // The measured best (docs/whitening.md, "Defaults"): aligned frames, faint blobs kept out of
  // the history, the fit on the frame itself (follows transparency) and a half-precision
  // history.
  CHECK(p.fit == WhitenFit::Current);
  CHECK(p.refit_interval == 1);
  CHECK(p.fit_subsample == WhitenParams::kAutoFitSubsample);
  CHECK(p.shift == WhitenShift::Resample);
  CHECK(p.shift_window == 512);
  CHECK(p.shift_max == 8.0);
  CHECK(p.shift_noise == 0.2);
  CHECK(p.reject == WhitenReject::Objects);
  CHECK(p.reject_sigma == 4.0);
  CHECK(p.reject_object_sigma == 4.0);
  CHECK(p.effective_noise_frames() == 80.0);
  CHECK(p.warmup == WhitenWarmup::Partial);
  CHECK(p.output == WhitenOutput::Significance);
  CHECK(!p.offset);
  CHECK(p.gain == WhitenParams::kAutoGain);
  CHECK(p.despike);
}

TEST_CASE("whiten offset, window and output shape follow the frame", "[whiten][params]") {
  WhitenParams p;
  CHECK(p.effective_offset({8, 8, PixelFormat::Gray8, 8}) == 128.0);
  CHECK(p.effective_offset({8, 8, PixelFormat::Gray16, 12}) == 2048.0);
  CHECK(p.effective_offset({8, 8, PixelFormat::Gray16, 16}) == 32768.0);
  CHECK(p.effective_offset({8, 8, PixelFormat::Gray32F, 32}) == 0.0);
  p.offset = 100.0;
  CHECK(p.effective_offset({8, 8, PixelFormat::Gray8, 8}) == 100.0);

  CHECK(p.effective_shift_window({1024, 768, PixelFormat::Gray16, 16}) == 512);
  CHECK(p.effective_shift_window({300, 200, PixelFormat::Gray16, 16}) == 128);
  CHECK(p.effective_shift_window({64, 64, PixelFormat::Gray16, 16}) == 64);

  const FrameShape in{64, 48, PixelFormat::Gray16, 12};
  p.offset.reset();
  // Significance: the input's format, its scale on the shape: +-32 sigma around mid-range.
  FrameShape significance = in;
  significance.significance = {2048.0, 64.0};
  CHECK(whiten_output_shape(p, in) == significance);
  CHECK(p.effective_gain(in) == 64.0);
  CHECK(p.effective_gain({8, 8, PixelFormat::Gray8, 8}) == 4.0);
  CHECK(p.effective_gain({8, 8, PixelFormat::Gray16, 16}) == 1024.0);
  CHECK(p.effective_gain({8, 8, PixelFormat::Gray32F, 32}) == 1.0);
  p.gain = -3.0;
  CHECK(p.effective_gain(in) == -3.0);
  p.gain = WhitenParams::kAutoGain;
  p.output = WhitenOutput::Residual;
  CHECK(whiten_output_shape(p, in) == in);
  CHECK(p.effective_gain(in) == 1.0);
  // A scale the input carried is not passed on by a residual.
  FrameShape scaled_in = in;
  scaled_in.significance = {10.0, 2.0};
  CHECK(whiten_output_shape(p, scaled_in) == in);
  for (WhitenOutput o : {WhitenOutput::Float, WhitenOutput::Sigma}) {
    p.output = o;
    CHECK(whiten_output_shape(p, in) == FrameShape{64, 48, PixelFormat::Gray32F, 32});
  }
  p.output = WhitenOutput::Snr;
  CHECK(whiten_output_shape(p, in) == FrameShape{64, 48, PixelFormat::Gray32F, 32, {0.0, 1.0}});
  CHECK(whiten_saturation({8, 8, PixelFormat::Gray8, 8}) == 255.0f);
  CHECK(whiten_saturation({8, 8, PixelFormat::Gray16, 12}) == 4095.0f);
  CHECK(std::isinf(whiten_saturation({8, 8, PixelFormat::Gray32F, 32})));
}

TEST_CASE("whiten choices parse and print by name", "[whiten][params]") {
  CHECK(parse_whiten_shift("resample") == WhitenShift::Resample);
  CHECK(parse_whiten_fit("past") == WhitenFit::Past);
  CHECK(parse_whiten_reject("none") == WhitenReject::None);
  CHECK(parse_whiten_reject("objects") == WhitenReject::Objects);
  CHECK(to_string(WhitenReject::Objects) == "objects");
  CHECK(whiten_reject_names() == "none, mask, objects");
  CHECK(parse_whiten_warmup("zeros") == WhitenWarmup::Zeros);
  CHECK(parse_whiten_output("snr") == WhitenOutput::Snr);
  CHECK(to_string(WhitenWarmup::Passthrough) == "passthrough");
  CHECK(to_string(WhitenOutput::Sigma) == "sigma");
  CHECK(parse_whiten_output("significance") == WhitenOutput::Significance);
  CHECK(whiten_output_names() == "residual, significance, float, snr, sigma");
  CHECK(whiten_warmup_names() == "passthrough, zeros, partial");
  REQUIRE_THROWS_WITH(parse_whiten_shift("align"),
                      Contains("unknown whiten shift 'align'") && Contains("none, resample"));
  REQUIRE_THROWS_WITH(parse_whiten_fit("future"), Contains("current, past"));
  REQUIRE_THROWS_WITH(parse_whiten_reject("clip"), Contains("none, mask, objects"));
  REQUIRE_THROWS_WITH(parse_whiten_warmup("wait"), Contains("passthrough, zeros, partial"));
  REQUIRE_THROWS_WITH(parse_whiten_output("png"),
                      Contains("residual, significance, float, snr, sigma"));
  CHECK(parse_whiten_history_format("half") == WhitenHistoryFormat::Half);
  CHECK(to_string(WhitenHistoryFormat::Float) == "float");
  REQUIRE_THROWS_WITH(
      parse_whiten_history_format("double"),
      Contains("unknown whiten history-format 'double'") && Contains("float, half"));
}

TEST_CASE("every bad whiten parameter names its key and the allowed range", "[whiten][params]") {
  for (int v : {-1, 0, 65, 1000}) {
    require_refused([&](WhitenParams& p) { p.history = v; }, "history", std::to_string(v), "1..64");
  }
  require_refused([](WhitenParams& p) { p.gamma = -1e-9; }, "gamma", "-1e-09",
                  "a finite number >= 0");
  require_refused([](WhitenParams& p) { p.gamma = kInf; }, "gamma", "inf", "a finite number >= 0");
  require_refused([](WhitenParams& p) { p.refit_interval = 0; }, "refit-interval", "0", "1..65536");
  require_refused([](WhitenParams& p) { p.fit_subsample = 65; }, "fit-subsample", "65", "0..64");
  for (int v : {0, 8, 100, 768, 8192}) {
    require_refused([&](WhitenParams& p) { p.shift_window = v; }, "shift-window", std::to_string(v),
                    "powers of two 16..4096");
  }
  require_refused([](WhitenParams& p) { p.shift_max = 0.0; }, "shift-max", "0",
                  "a finite number > 0 (pixels)");
  for (const double v : {-0.01, 1.5, kNan}) {
    require_refused([&](WhitenParams& p) { p.shift_noise = v; }, "shift-noise",
                    std::isnan(v) ? "nan" : (v < 0 ? "-0.01" : "1.5"), "0..1 (px; 0: off)");
  }
  require_refused([](WhitenParams& p) { p.reject_sigma = -2.0; }, "reject-sigma", "-2",
                  "a finite number > 0");
  require_refused([](WhitenParams& p) { p.reject_sigma = kNan; }, "reject-sigma", "nan",
                  "a finite number > 0");
  for (double v : {0.0, -3.0, kNan, kInf}) {
    std::ostringstream text;
    text << v;
    require_refused([&](WhitenParams& p) { p.reject_object_sigma = v; }, "reject-object-sigma",
                    text.str(), "a finite number > 0");
  }
  require_refused([](WhitenParams& p) { p.noise_frames = 0.5; }, "noise-frames", "0.5",
                  "0 (four times the history) or a finite number >= 1 (frames)");
  require_refused([](WhitenParams& p) { p.offset = kNan; }, "offset", "nan", "a finite number");
  require_refused([](WhitenParams& p) { p.gain = kNan; }, "gain", "nan",
                  "a finite number (0: automatic");

  WhitenParams edge;
  edge.history = 64;
  edge.gamma = 0.0;
  edge.shift_window = 16;
  edge.noise_frames = 1.0;
  edge.gain = -2.0;
  REQUIRE_NOTHROW(edge.validate());
}

TEST_CASE("whiten parameters are checked against the frame shape", "[whiten][params]") {
  WhitenParams p;
  REQUIRE_THROWS_WITH(
      p.validate_for({16, 16, PixelFormat::Rgba, 8}),
      Contains("whiten cannot process RGBA frames") && Contains("GRAY8, GRAY16_LE, GRAY32F"));
  p.offset = 300.0;
  REQUIRE_THROWS_WITH(p.validate_for({16, 16, PixelFormat::Gray8, 8}),
                      Contains("whiten offset 300 does not fit GRAY8") && Contains("0..255"));
  REQUIRE_THROWS_WITH(p.validate_for({16, 16, PixelFormat::Gray16, 8}), Contains("0..255"));
  REQUIRE_NOTHROW(p.validate_for({16, 16, PixelFormat::Gray16, 12}));
  REQUIRE_NOTHROW(p.validate_for({16, 16, PixelFormat::Gray32F, 32}));
  p.output = WhitenOutput::Snr;  // the offset is not used
  REQUIRE_NOTHROW(p.validate_for({16, 16, PixelFormat::Gray8, 8}));
  p = {};
  p.shift = WhitenShift::Resample;
  REQUIRE_THROWS_WITH(p.validate_for({15, 64, PixelFormat::Gray16, 16}),
                      Contains("too small to estimate a shift") && Contains("at least 16x16"));
  REQUIRE_NOTHROW(p.validate_for({16, 16, PixelFormat::Gray16, 16}));
  REQUIRE_THROWS_WITH(p.validate_for({0, 16, PixelFormat::Gray16, 16}), Contains("empty"));
  p = {};
  p.history_format = WhitenHistoryFormat::Half;
  // GRAY32F keeps a float history (its samples need not fit binary16's range): not an error.
  REQUIRE_NOTHROW(p.validate_for({16, 16, PixelFormat::Gray32F, 32}));
  CHECK(whiten_history_scale(p, {16, 16, PixelFormat::Gray32F, 32}) == 0.0f);
  REQUIRE_NOTHROW(p.validate_for({16, 16, PixelFormat::Gray8, 8}));
  CHECK(whiten_history_scale(p, {16, 16, PixelFormat::Gray16, 16}) == 0.5f);
  CHECK(whiten_history_scale(p, {16, 16, PixelFormat::Gray16, 12}) == 1.0f);
  p.history_format = WhitenHistoryFormat::Float;
  CHECK(whiten_history_scale(p, {16, 16, PixelFormat::Gray16, 16}) == 0.0f);
}

TEST_CASE("reject: objects with shift: none is refused for the CUDA stage, the rest is not",
          "[whiten][params]") {
  WhitenParams p;
  REQUIRE_NOTHROW(p.validate_for_cuda());  // the defaults: objects with resample
  p.shift = WhitenShift::None;
  p.reject = WhitenReject::Mask;
  REQUIRE_NOTHROW(p.validate_for_cuda());
  p.reject = WhitenReject::None;
  REQUIRE_NOTHROW(p.validate_for_cuda());
  p.reject_object_sigma = 2.0;  // read by reject: objects only
  REQUIRE_NOTHROW(p.validate_for_cuda());
  p.reject = WhitenReject::Objects;
  REQUIRE_NOTHROW(p.validate());  // the CPU reference takes it
  REQUIRE_THROWS_WITH(
      p.validate_for_cuda(),
      Contains("whiten reject objects with shift none is not implemented on the CUDA backend") &&
          Contains("neighbours' residuals") &&
          Contains("allowed: reject: objects with shift: resample, or reject: none or mask with "
                   "shift: none, on CUDA"));
  p.shift = WhitenShift::Resample;
  REQUIRE_NOTHROW(p.validate_for_cuda());
  p.reject = WhitenReject::Mask;
  REQUIRE_NOTHROW(p.validate_for_cuda());
}

TEST_CASE("reject-object-sigma applies from the next frame; reject starts a new history",
          "[whiten][params]") {
  WhitenParams from;
  from.reject = WhitenReject::Objects;
  WhitenParams to = from;
  to.reject_object_sigma = 2.5;
  CHECK(whiten_live_change(from, to));
  to.shift_noise = 0.05;  // judged per frame: keeps the history
  CHECK(whiten_live_change(from, to));
  to.reject = WhitenReject::Mask;
  CHECK_FALSE(whiten_live_change(from, to));
}

TEST_CASE("fit-subsample 0 fits about a thousand rows of a large frame", "[whiten][cpu]") {
  WhitenParams p;
  const auto rows_of = [&](int height) {
    return p.effective_fit_subsample(FrameShape{4096, height, PixelFormat::Gray16, 16});
  };
  REQUIRE(p.fit_subsample == WhitenParams::kAutoFitSubsample);
  CHECK(rows_of(480) == 1);
  CHECK(rows_of(2047) == 1);
  CHECK(rows_of(2048) == 2);
  CHECK(rows_of(4096) == 4);
  CHECK(rows_of(8192) == 8);
  CHECK(rows_of(1 << 20) == WhitenParams::kMaxFitSubsample);
  p.fit_subsample = 3;  // a value set is taken as it is
  CHECK(rows_of(4096) == 3);
  CHECK(rows_of(16) == 3);
}
